/*
 * node.c - reading node records, and the node cache (see node.h).
 */
#include "kube/node.h"

#include <assert.h>
#include <string.h>

#include "kube/cache.h"

const char *kube_node_annotation(const struct kube_node *n, const char *key)
{
	assert(kube_pod_annotation_kept(key));
	for (size_t i = 0; i < n->n_annotations; i++)
		if (!strcmp(n->annotations[i].key, key))
			return n->annotations[i].value;
	return NULL;
}

const char *kube_node_condition(const struct kube_node *n, const char *type, double *since)
{
	if (since)
		*since = 0;
	for (size_t i = 0; i < n->n_conditions; i++) {
		if (strcmp(n->conditions[i].type, type) != 0)
			continue;
		if (since)
			*since = n->conditions[i].since;
		return n->conditions[i].status;
	}
	return NULL;
}

static drake_err node_decode(struct json_t *obj, struct kube_strpool *pool, void **out, char *msg,
                             size_t msglen)
{
	struct kube_node *n;
	drake_err e = kube_node_decode(obj, pool, &n, msg, msglen);
	*out = n;
	return e;
}

static void node_free(void *stored, struct kube_strpool *pool)
{
	kube_node_free(stored, pool);
}

static drake_err node_meta(const void *stored, struct kube_meta *m)
{
	const struct kube_node *n = stored;
	*m = (struct kube_meta){.ns = n->ns, .name = n->name, .uid = n->uid, .rv = n->rv};
	return DRAKE_OK;
}

static const struct kube_cache_codec node_codec = {"node", node_decode, node_free, node_meta};

void kube_node_cache_init(struct kube_cache *c)
{
	kube_cache_init_codec(c, &node_codec);
}

const struct kube_cache_codec *kube_node_codec(void)
{
	return &node_codec;
}

struct node_visit {
	kube_node_visit_cb cb;
	void *arg;
};

static bool visit(void *stored, void *arg)
{
	const struct node_visit *v = arg;
	return v->cb(stored, v->arg);
}

const struct kube_node *kube_nodes_get(const struct kube_cache *c, const char *name)
{
	return c && c->codec == &node_codec ? kube_cache_lookup(c, "", name) : NULL;
}

void kube_nodes_foreach(const struct kube_cache *c, kube_node_visit_cb cb, void *arg)
{
	struct node_visit v = {cb, arg};
	if (c && c->codec == &node_codec)
		kube_cache_walk(c, visit, &v);
}
