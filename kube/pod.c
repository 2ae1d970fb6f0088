/*
 * pod.c - reading pod records, and the pod cache: a kube_cache whose codec
 * stores records (see pod.h).
 */
#include "kube/pod.h"

#include <assert.h>
#include <string.h>

#include "kube/cache.h"

void kube_pod_meta(const struct kube_pod *p, struct kube_meta *m)
{
	*m = (struct kube_meta){
	    .ns = p->ns,
	    .name = p->name,
	    .uid = p->uid,
	    .rv = p->rv,
	    .owner_uid = p->owner_uid,
	    .owner_kind = p->owner_kind,
	    .node_name = p->node_name && *p->node_name ? p->node_name : NULL,
	    .deleting = p->deleting,
	};
}

static const char *kv_find(const struct kube_kv *kv, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(kv[i].key, key))
			return kv[i].value;
	return NULL;
}

const char *kube_pod_label(const struct kube_pod *p, const char *key)
{
	assert(kube_pod_label_kept(key));
	return kv_find(p->labels, p->n_labels, key);
}

bool kube_pod_phase_done(const char *phase)
{
	return phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"));
}

const char *kube_pod_annotation(const struct kube_pod *p, const char *key)
{
	assert(kube_pod_annotation_kept(key));
	return kv_find(p->annotations, p->n_annotations, key);
}

const char *kube_pod_condition(const struct kube_pod *p, const char *type, double *since)
{
	if (since)
		*since = 0;
	for (size_t i = 0; i < p->n_conditions; i++) {
		if (strcmp(p->conditions[i].type, type) != 0)
			continue;
		if (since)
			*since = p->conditions[i].since;
		return p->conditions[i].status;
	}
	return NULL;
}

const struct kube_condition *kube_pod_condition_of(const struct kube_pod *p, const char *type)
{
	for (size_t i = 0; i < p->n_conditions; i++)
		if (!strcmp(p->conditions[i].type, type))
			return &p->conditions[i];
	return NULL;
}

int kube_pod_gate_index(const struct kube_pod *p, const char *name)
{
	for (size_t i = 0; i < p->n_gates; i++)
		if (p->gates[i] && !strcmp(p->gates[i], name))
			return (int)i;
	return -1;
}

/* ---- the cache ---- */

static drake_err pod_decode(struct json_t *obj, struct kube_strpool *pool, void **out, char *msg,
                            size_t msglen)
{
	struct kube_pod *p;
	drake_err e = kube_pod_decode(obj, pool, &p, msg, msglen);
	*out = p;
	return e;
}

static void pod_free(void *stored, struct kube_strpool *pool)
{
	kube_pod_free(stored, pool);
}

static drake_err pod_meta(const void *stored, struct kube_meta *m)
{
	kube_pod_meta(stored, m);
	return DRAKE_OK;
}

static const struct kube_cache_codec pod_codec = {"pod", pod_decode, pod_free, pod_meta};

void kube_pod_cache_init(struct kube_cache *c)
{
	kube_cache_init_codec(c, &pod_codec);
}

const struct kube_cache_codec *kube_pod_codec(void)
{
	return &pod_codec;
}

static bool is_pods(const struct kube_cache *c)
{
	return c && c->codec == &pod_codec;
}

struct pod_visit {
	kube_pod_visit_cb cb;
	void *arg;
};

static bool visit(void *stored, void *arg)
{
	const struct pod_visit *v = arg;
	return v->cb(stored, v->arg);
}

const struct kube_pod *kube_pods_get(const struct kube_cache *c, const char *ns, const char *name)
{
	return is_pods(c) ? kube_cache_lookup(c, ns, name) : NULL;
}

void kube_pods_foreach(const struct kube_cache *c, kube_pod_visit_cb cb, void *arg)
{
	struct pod_visit v = {cb, arg};
	if (is_pods(c))
		kube_cache_walk(c, visit, &v);
}

void kube_pods_by_owner(const struct kube_cache *c, const char *uid, kube_pod_visit_cb cb,
                        void *arg)
{
	struct pod_visit v = {cb, arg};
	if (is_pods(c))
		kube_cache_walk_owner(c, uid, visit, &v);
}

void kube_pods_by_node(const struct kube_cache *c, const char *node, kube_pod_visit_cb cb,
                       void *arg)
{
	struct pod_visit v = {cb, arg};
	if (is_pods(c))
		kube_cache_walk_node(c, node, visit, &v);
}
