/*
 * record_codec.c - API pods and nodes into the caches' compact records
 * (see pod.h and node.h), with jansson. A record is one allocation: the
 * struct, then its arrays, then the strings only it has (name, uid,
 * resourceVersion); every other string is interned in the cache's pool.
 * The object is walked twice with the same code: once to size the block,
 * once to fill it.
 *
 * Ownership: see pod.h.
 */
#include "kube/node.h"
#include "kube/pod.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "kube/model_codec.h"
#include "kube/strpool.h"

bool kube_pod_label_kept(const char *key)
{
	return !strncmp(key, KUBE_POD_LABEL_PREFIX, strlen(KUBE_POD_LABEL_PREFIX));
}

bool kube_pod_annotation_kept(const char *key)
{
	return !strncmp(key, KUBE_POD_ANNOTATION_PREFIX, strlen(KUBE_POD_ANNOTATION_PREFIX)) ||
	       !strncmp(key, KUBE_POD_ANNOTATION_PREFIX_ALT,
	                strlen(KUBE_POD_ANNOTATION_PREFIX_ALT));
}

static const char *str_of(const json_t *v)
{
	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* One walk over an object: counting (fill false) or filling the arrays of
 * a block sized by the counting walk. */
struct walk {
	struct kube_strpool *pool;
	bool fill;
	int oom;
	bool too_big; /* a list past KUBE_RECORD_LIST_MAX */
	size_t n_labels, n_ann, n_gates, n_cond, n_stat, n_c, n_q, n_taint, tail;
	struct kube_kv *labels, *ann;
	struct kube_taint *taints;
	const char **gates;
	struct kube_condition *cond;
	struct kube_container_status *stat;
	struct kube_container_res *c;
	struct kube_qty *q;
	char *tailp;
};

static const char *intern(struct walk *w, const char *s)
{
	return w->fill ? kube_strpool_get(w->pool, s, &w->oom) : NULL;
}

/* A copy in the block's tail (strings no other record shares). */
static const char *own(struct walk *w, const char *s)
{
	size_t n = strlen(s) + 1;
	if (!w->fill) {
		w->tail += n;
		return NULL;
	}
	char *d = w->tailp;
	memcpy(d, s, n);
	w->tailp += n;
	return d;
}

/* A resource list's quantities, as requests.h reads them. */
static uint16_t qty_list(struct walk *w, const json_t *list, const struct kube_qty **first)
{
	size_t start = w->n_q;
	if (first)
		*first = w->fill ? w->q + start : NULL;
	if (json_object_size(list) > KUBE_RECORD_LIST_MAX) {
		w->too_big = true;
		return 0;
	}
	const char *k;
	json_t *v;
	json_object_foreach ((json_t *)list, k, v) {
		if (w->fill) {
			char num[40];
			const char *q = NULL;
			if (json_is_string(v))
				q = json_string_value(v);
			else if (json_is_integer(v))
				q = (snprintf(num, sizeof(num), "%lld",
				              (long long)json_integer_value(v)),
				     num);
			else if (json_is_real(v))
				q = (snprintf(num, sizeof(num), "%.15g", json_real_value(v)), num);
			w->q[w->n_q].name = intern(w, k);
			w->q[w->n_q].value = intern(w, q);
		}
		w->n_q++;
	}
	return (uint16_t)(w->n_q - start);
}

static void containers(struct walk *w, const json_t *spec, const char *key, uint8_t kind)
{
	size_t i;
	json_t *c;
	json_array_foreach (json_object_get(spec, key), i, c) {
		const json_t *res = json_object_get(c, "resources");
		struct kube_container_res *cr = w->fill ? &w->c[w->n_c] : NULL;
		const struct kube_qty *req, *lim;
		uint16_t n_req = qty_list(w, json_object_get(res, "requests"), &req);
		uint16_t n_lim = qty_list(w, json_object_get(res, "limits"), &lim);
		if (cr) {
			const char *p = str_of(json_object_get(c, "restartPolicy"));
			*cr = (struct kube_container_res){
			    req,   lim,  n_req,
			    n_lim, kind, kind == KUBE_INIT_CONTAINER && p && !strcmp(p, "Always")};
		}
		w->n_c++;
	}
}

static void res_spec(struct walk *w, const json_t *spec, struct kube_res_spec *out)
{
	size_t c0 = w->n_c;
	containers(w, spec, "containers", KUBE_APP_CONTAINER);
	containers(w, spec, "initContainers", KUBE_INIT_CONTAINER);
	const struct kube_qty *ov;
	uint16_t n_ov = qty_list(w, json_object_get(spec, "overhead"), &ov);
	if (out) {
		out->c = w->c + c0;
		out->n_c = (uint16_t)(w->n_c - c0);
		out->overhead = ov;
		out->n_overhead = n_ov;
	}
}

static void kvs(struct walk *w, const json_t *obj, bool (*kept)(const char *), struct kube_kv *to,
                size_t *n)
{
	const char *k;
	json_t *v;
	json_object_foreach ((json_t *)obj, k, v) {
		if (!kept(k) || json_is_null(v))
			continue;
		if (w->fill)
			to[*n] = (struct kube_kv){intern(w, k), intern(w, str_of(v))};
		(*n)++;
	}
}

static void conditions(struct walk *w, const json_t *status)
{
	size_t i;
	json_t *v;
	json_array_foreach (json_object_get(status, "conditions"), i, v) {
		const char *type = str_of(json_object_get(v, "type"));
		if (!type)
			continue; /* never the condition a reader asks for */
		if (w->fill)
			w->cond[w->n_cond] = (struct kube_condition){
			    intern(w, type), intern(w, str_of(json_object_get(v, "status"))),
			    intern(w, str_of(json_object_get(v, "reason"))),
			    intern(w, str_of(json_object_get(v, "message"))),
			    kube_time(str_of(json_object_get(v, "lastTransitionTime")))};
		w->n_cond++;
	}
}

/* spec.affinity is a required node affinity on metadata.name alone, every
 * term of it, and nothing else constrains the pod's node. */
static bool name_pinned(const json_t *spec)
{
	const json_t *aff = json_object_get(spec, "affinity");
	const json_t *na = json_object_get(aff, "nodeAffinity");
	const json_t *req = json_object_get(na, "requiredDuringSchedulingIgnoredDuringExecution");
	const json_t *terms = json_object_get(req, "nodeSelectorTerms");
	if (json_object_size(aff) != 1 || json_object_size(na) != 1 ||
	    json_object_size(json_object_get(spec, "nodeSelector")) > 0 ||
	    json_array_size(json_object_get(spec, "topologySpreadConstraints")) > 0 ||
	    json_array_size(terms) == 0)
		return false;
	size_t i, j;
	const json_t *t, *f;
	json_array_foreach (terms, i, t) {
		const json_t *fields = json_object_get(t, "matchFields");
		if (json_object_size(t) != 1 || json_array_size(fields) == 0)
			return false;
		json_array_foreach (fields, j, f) {
			const char *key = str_of(json_object_get(f, "key"));
			if (!key || strcmp(key, "metadata.name") != 0)
				return false;
		}
	}
	return true;
}

/* The walk over a pod; p is NULL when counting. */
static void pod_walk(struct walk *w, const json_t *obj, struct kube_pod *p)
{
	const json_t *meta = json_object_get(obj, "metadata");
	const json_t *spec = json_object_get(obj, "spec");
	const json_t *status = json_object_get(obj, "status");
	const char *ns = str_of(json_object_get(meta, "namespace"));
	const char *uid = str_of(json_object_get(meta, "uid"));
	const char *rv = str_of(json_object_get(meta, "resourceVersion"));
	const char *name = own(w, str_of(json_object_get(meta, "name")));
	uid = own(w, uid ? uid : "");
	rv = own(w, rv ? rv : "");
	if (p) {
		p->name = name;
		p->uid = uid;
		p->rv = rv;
		p->ns = intern(w, ns ? ns : "");
		size_t i;
		json_t *ref;
		json_array_foreach (json_object_get(meta, "ownerReferences"), i, ref) {
			if (json_is_true(json_object_get(ref, "controller"))) {
				p->owner_uid = intern(w, str_of(json_object_get(ref, "uid")));
				p->owner_kind = intern(w, str_of(json_object_get(ref, "kind")));
				break;
			}
		}
		p->created = intern(w, str_of(json_object_get(meta, "creationTimestamp")));
		p->deleting = json_object_get(meta, "deletionTimestamp") != NULL;
		p->deleted = intern(w, str_of(json_object_get(meta, "deletionTimestamp")));
		p->has_annotations = json_is_object(json_object_get(meta, "annotations"));
		p->node_constrained =
		    json_object_size(json_object_get(spec, "nodeSelector")) > 0 ||
		    json_object_get(spec, "affinity") != NULL ||
		    json_array_size(json_object_get(spec, "topologySpreadConstraints")) > 0;
		p->name_pinned = name_pinned(spec);
		char models[KUBE_GPU_MODELS_MAX];
		p->gpu_product =
		    kube_gpu_models(spec, models, sizeof(models)) ? intern(w, models) : NULL;
		p->node_name = intern(w, str_of(json_object_get(spec, "nodeName")));
		p->nominated_node = intern(w, str_of(json_object_get(status, "nominatedNodeName")));
		p->phase = intern(w, str_of(json_object_get(status, "phase")));
		p->labels = w->labels;
		p->annotations = w->ann;
		p->gates = w->gates;
		p->conditions = w->cond;
		p->statuses = w->stat;
	}
	kvs(w, json_object_get(meta, "labels"), kube_pod_label_kept, w->labels, &w->n_labels);
	kvs(w, json_object_get(meta, "annotations"), kube_pod_annotation_kept, w->ann, &w->n_ann);
	size_t i;
	json_t *v;
	json_array_foreach (json_object_get(spec, "schedulingGates"), i, v) {
		if (w->fill)
			w->gates[w->n_gates] = intern(w, str_of(json_object_get(v, "name")));
		w->n_gates++;
	}
	conditions(w, status);
	json_array_foreach (json_object_get(status, "containerStatuses"), i, v) {
		if (w->fill) {
			const json_t *rc = json_object_get(v, "restartCount");
			const json_t *code = json_object_get(
			    json_object_get(json_object_get(v, "state"), "terminated"), "exitCode");
			w->stat[w->n_stat] = (struct kube_container_status){
			    intern(w, str_of(json_object_get(v, "name"))),
			    json_is_integer(rc) ? (int64_t)json_integer_value(rc) : -1,
			    json_is_integer(code) ? (int64_t)json_integer_value(code) : 0,
			    json_is_integer(code)};
		}
		w->n_stat++;
	}
	res_spec(w, spec, p ? &p->res : NULL);
}

static bool over_limits(const struct walk *w)
{
	const size_t n[] = {w->n_labels, w->n_ann, w->n_gates, w->n_cond,
	                    w->n_stat,   w->n_c,   w->n_taint};
	for (size_t i = 0; i < sizeof(n) / sizeof(n[0]); i++)
		if (n[i] > KUBE_RECORD_LIST_MAX)
			return true;
	return w->too_big || w->n_q > UINT16_MAX;
}

/* Lays out the arrays of a block after a header of size head; returns the
 * block's size. */
static size_t layout(struct walk *w, char *base, size_t head)
{
	size_t off = head;
#define PLACE(ptr, n)                                                                              \
	do {                                                                                       \
		off = (off + sizeof(void *) - 1) & ~(sizeof(void *) - 1);                          \
		if (base)                                                                          \
			(ptr) = (void *)(base + off);                                              \
		off += (n) * sizeof(*(ptr));                                                       \
	} while (0)
	PLACE(w->labels, w->n_labels);
	PLACE(w->ann, w->n_ann);
	PLACE(w->gates, w->n_gates);
	PLACE(w->cond, w->n_cond);
	PLACE(w->stat, w->n_stat);
	PLACE(w->c, w->n_c);
	PLACE(w->q, w->n_q);
	PLACE(w->taints, w->n_taint);
#undef PLACE
	if (base)
		w->tailp = base + off;
	return off + w->tail;
}

/* Ready for the filling walk over a block laid out for the counted one. */
static void start_fill(struct walk *w, char *base, size_t head)
{
	layout(w, base, head);
	w->fill = true;
	w->n_labels = w->n_ann = w->n_gates = w->n_cond = w->n_stat = w->n_c = w->n_q = 0;
	w->n_taint = 0;
	w->tail = 0;
}

typedef void (*record_walk)(struct walk *w, const json_t *obj, void *rec);

/* Both passes of a record of head bytes: walk counts what obj holds (rec
 * NULL), then fills one block laid out for it. NULL with *err and msg when
 * obj has no name, a list over KUBE_RECORD_LIST_MAX, or no memory; the
 * caller then sets the record's counts and checks w->oom. */
static void *two_passes(struct walk *w, const json_t *obj, const char *kind, size_t head,
                        record_walk walk, drake_err *err, char *msg, size_t msglen)
{
	const char *name = str_of(json_object_get(json_object_get(obj, "metadata"), "name"));
	if (!name || !*name) {
		*err = drake_errorf(DRAKE_EINVAL, msg, msglen, "%s has no metadata.name", kind);
		return NULL;
	}
	walk(w, obj, NULL);
	if (over_limits(w)) {
		*err = drake_errorf(DRAKE_ELIMIT, msg, msglen, "%s %s has more than %d of a list",
		                    kind, name, KUBE_RECORD_LIST_MAX);
		return NULL;
	}
	char *rec = calloc(1, layout(w, NULL, head));
	if (!rec) {
		*err = drake_errorf(DRAKE_ENOMEM, msg, msglen, "out of memory");
		return NULL;
	}
	start_fill(w, rec, head);
	walk(w, obj, rec);
	return rec;
}

static void walk_pod(struct walk *w, const json_t *obj, void *rec)
{
	pod_walk(w, obj, rec);
}

drake_err kube_pod_decode(const struct json_t *obj, struct kube_strpool *pool,
                          struct kube_pod **out, char *msg, size_t msglen)
{
	*out = NULL;
	struct walk w = {.pool = pool};
	drake_err err = DRAKE_OK;
	struct kube_pod *p =
	    two_passes(&w, obj, "pod", sizeof(struct kube_pod), walk_pod, &err, msg, msglen);
	if (!p)
		return err;
	p->n_labels = (uint16_t)w.n_labels;
	p->n_annotations = (uint16_t)w.n_ann;
	p->n_gates = (uint16_t)w.n_gates;
	p->n_conditions = (uint16_t)w.n_cond;
	p->n_statuses = (uint16_t)w.n_stat;
	if (w.oom) {
		kube_pod_free(p, pool);
		return drake_errorf(DRAKE_ENOMEM, msg, msglen, "out of memory");
	}
	*out = p;
	return DRAKE_OK;
}

static void res_spec_put(const struct kube_res_spec *s, struct kube_strpool *pool)
{
	for (size_t i = 0; i < s->n_c; i++) {
		const struct kube_container_res *c = &s->c[i];
		for (size_t k = 0; k < c->n_req; k++) {
			kube_strpool_put(pool, c->req[k].name);
			kube_strpool_put(pool, c->req[k].value);
		}
		for (size_t k = 0; k < c->n_lim; k++) {
			kube_strpool_put(pool, c->lim[k].name);
			kube_strpool_put(pool, c->lim[k].value);
		}
	}
	for (size_t k = 0; k < s->n_overhead; k++) {
		kube_strpool_put(pool, s->overhead[k].name);
		kube_strpool_put(pool, s->overhead[k].value);
	}
}

void kube_pod_free(struct kube_pod *p, struct kube_strpool *pool)
{
	if (!p)
		return;
	const char *const one[] = {p->ns,        p->owner_uid,      p->owner_kind,
	                           p->node_name, p->nominated_node, p->phase,
	                           p->created,   p->deleted,        p->gpu_product};
	for (size_t i = 0; i < sizeof(one) / sizeof(one[0]); i++)
		kube_strpool_put(pool, one[i]);
	for (size_t i = 0; i < p->n_labels; i++) {
		kube_strpool_put(pool, p->labels[i].key);
		kube_strpool_put(pool, p->labels[i].value);
	}
	for (size_t i = 0; i < p->n_annotations; i++) {
		kube_strpool_put(pool, p->annotations[i].key);
		kube_strpool_put(pool, p->annotations[i].value);
	}
	for (size_t i = 0; i < p->n_gates; i++)
		kube_strpool_put(pool, p->gates[i]);
	for (size_t i = 0; i < p->n_conditions; i++) {
		kube_strpool_put(pool, p->conditions[i].type);
		kube_strpool_put(pool, p->conditions[i].status);
		kube_strpool_put(pool, p->conditions[i].reason);
		kube_strpool_put(pool, p->conditions[i].message);
	}
	for (size_t i = 0; i < p->n_statuses; i++)
		kube_strpool_put(pool, p->statuses[i].name);
	res_spec_put(&p->res, pool);
	free(p);
}

drake_err kube_res_spec_decode(const struct json_t *spec, struct kube_strpool *pool,
                               struct kube_res_spec **out, char *msg, size_t msglen)
{
	*out = NULL;
	struct walk w = {.pool = pool};
	res_spec(&w, spec, NULL);
	if (over_limits(&w))
		return drake_errorf(DRAKE_ELIMIT, msg, msglen,
		                    "pod spec has more than %d of a list", KUBE_RECORD_LIST_MAX);
	size_t size = layout(&w, NULL, sizeof(struct kube_res_spec));
	struct kube_res_spec *s = calloc(1, size);
	if (!s)
		return drake_errorf(DRAKE_ENOMEM, msg, msglen, "out of memory");
	start_fill(&w, (char *)s, sizeof(*s));
	res_spec(&w, spec, s);
	if (w.oom) {
		kube_res_spec_free(s, pool);
		return drake_errorf(DRAKE_ENOMEM, msg, msglen, "out of memory");
	}
	*out = s;
	return DRAKE_OK;
}

void kube_res_spec_free(struct kube_res_spec *s, struct kube_strpool *pool)
{
	if (!s)
		return;
	res_spec_put(s, pool);
	free(s);
}

/* ---- nodes ---- */

static bool no_schedule(const json_t *spec)
{
	size_t i;
	json_t *t;
	json_array_foreach (json_object_get(spec, "taints"), i, t) {
		const char *effect = str_of(json_object_get(t, "effect"));
		if (effect && (!strcmp(effect, "NoSchedule") || !strcmp(effect, "NoExecute")))
			return true;
	}
	return false;
}

static bool every_key(const char *key)
{
	return true;
}

/* The walk over a node; n is NULL when counting. */
static void node_walk(struct walk *w, const json_t *obj, struct kube_node *n)
{
	const json_t *meta = json_object_get(obj, "metadata");
	const json_t *spec = json_object_get(obj, "spec");
	const json_t *status = json_object_get(obj, "status");
	const char *ns = str_of(json_object_get(meta, "namespace"));
	const char *uid = str_of(json_object_get(meta, "uid"));
	const char *rv = str_of(json_object_get(meta, "resourceVersion"));
	const char *name = own(w, str_of(json_object_get(meta, "name")));
	uid = own(w, uid ? uid : "");
	rv = own(w, rv ? rv : "");
	if (n) {
		n->name = name;
		n->uid = uid;
		n->rv = rv;
		n->ns = intern(w, ns ? ns : "");
		n->unschedulable = json_is_true(json_object_get(spec, "unschedulable"));
		n->no_schedule = no_schedule(spec);
		n->annotations = w->ann;
		n->conditions = w->cond;
		n->labels = w->labels;
		n->taints = w->taints;
	}
	kvs(w, json_object_get(meta, "annotations"), kube_pod_annotation_kept, w->ann, &w->n_ann);
	kvs(w, json_object_get(meta, "labels"), every_key, w->labels, &w->n_labels);
	size_t i;
	json_t *t;
	json_array_foreach (json_object_get(spec, "taints"), i, t) {
		if (w->fill)
			w->taints[w->n_taint] =
			    (struct kube_taint){intern(w, str_of(json_object_get(t, "key"))),
			                        intern(w, str_of(json_object_get(t, "value"))),
			                        intern(w, str_of(json_object_get(t, "effect")))};
		w->n_taint++;
	}
	conditions(w, status);
	const struct kube_qty *alloc;
	uint16_t n_alloc = qty_list(w, json_object_get(status, "allocatable"), &alloc);
	if (n) {
		n->alloc = alloc;
		n->n_alloc = n_alloc;
	}
}

static void walk_node(struct walk *w, const json_t *obj, void *rec)
{
	node_walk(w, obj, rec);
}

drake_err kube_node_decode(const struct json_t *obj, struct kube_strpool *pool,
                           struct kube_node **out, char *msg, size_t msglen)
{
	*out = NULL;
	struct walk w = {.pool = pool};
	drake_err err = DRAKE_OK;
	struct kube_node *n =
	    two_passes(&w, obj, "node", sizeof(struct kube_node), walk_node, &err, msg, msglen);
	if (!n)
		return err;
	n->n_annotations = (uint16_t)w.n_ann;
	n->n_conditions = (uint16_t)w.n_cond;
	n->n_labels = (uint16_t)w.n_labels;
	n->n_taints = (uint16_t)w.n_taint;
	if (w.oom) {
		kube_node_free(n, pool);
		return drake_errorf(DRAKE_ENOMEM, msg, msglen, "out of memory");
	}
	*out = n;
	return DRAKE_OK;
}

void kube_node_free(struct kube_node *n, struct kube_strpool *pool)
{
	if (!n)
		return;
	kube_strpool_put(pool, n->ns);
	for (size_t i = 0; i < n->n_annotations; i++) {
		kube_strpool_put(pool, n->annotations[i].key);
		kube_strpool_put(pool, n->annotations[i].value);
	}
	for (size_t i = 0; i < n->n_conditions; i++) {
		kube_strpool_put(pool, n->conditions[i].type);
		kube_strpool_put(pool, n->conditions[i].status);
		kube_strpool_put(pool, n->conditions[i].reason);
		kube_strpool_put(pool, n->conditions[i].message);
	}
	for (size_t i = 0; i < n->n_alloc; i++) {
		kube_strpool_put(pool, n->alloc[i].name);
		kube_strpool_put(pool, n->alloc[i].value);
	}
	for (size_t i = 0; i < n->n_labels; i++) {
		kube_strpool_put(pool, n->labels[i].key);
		kube_strpool_put(pool, n->labels[i].value);
	}
	for (size_t i = 0; i < n->n_taints; i++) {
		kube_strpool_put(pool, n->taints[i].key);
		kube_strpool_put(pool, n->taints[i].value);
		kube_strpool_put(pool, n->taints[i].effect);
	}
	free(n);
}

/* Interned strings of one pool compare by pointer. */
static bool same_kvs(const struct kube_kv *a, size_t na, const struct kube_kv *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (a[i].key != b[i].key || a[i].value != b[i].value)
			return false;
	return true;
}

bool kube_node_placement_changed(const struct kube_node *a, const struct kube_node *b)
{
	if (!a || !b)
		return a != b;
	if (a->unschedulable != b->unschedulable || a->n_taints != b->n_taints ||
	    a->n_alloc != b->n_alloc || !same_kvs(a->labels, a->n_labels, b->labels, b->n_labels))
		return true;
	for (size_t i = 0; i < a->n_taints; i++)
		if (a->taints[i].key != b->taints[i].key ||
		    a->taints[i].value != b->taints[i].value ||
		    a->taints[i].effect != b->taints[i].effect)
			return true;
	for (size_t i = 0; i < a->n_alloc; i++)
		if (a->alloc[i].name != b->alloc[i].name || a->alloc[i].value != b->alloc[i].value)
			return true;
	return false;
}
