/*
 * place_view.c - pods and nodes of the controller's caches as place/'s
 * tasks and nodes (place_view.h), for the extender's prioritize verb.
 */
#include "reconciler/place_view.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gang/protocol.h"
#include "gang/resource.h"
#include "gang/vgpu.h"
#include "kube/cache.h"
#include "kube/node.h"
#include "kube/pod.h"
#include "reconciler/requests.h"

#define MIB (INT64_C(1) << 20)

static bool finished(const struct kube_pod *pod)
{
	return kube_pod_phase_done(pod->phase);
}

static int64_t clamp(int64_t v, int64_t hi)
{
	return v < 0 ? 0 : v > hi ? hi : v;
}

/* The share of one GPU pod asks for (milli, 1..1000), 0 for none or one
 * drake cannot read (its requests alone then say what it takes). */
static int32_t share_of(const struct kube_pod *pod)
{
	const char *req = kube_pod_annotation(pod, DRAKE_KUBESHARE_GPU_REQUEST);
	if (!req)
		return 0;
	struct drake_share s;
	char why[160];
	if (drake_share_parse(req, kube_pod_annotation(pod, DRAKE_KUBESHARE_GPU_LIMIT),
	                      kube_pod_annotation(pod, DRAKE_KUBESHARE_GPU_MEM), &s, why,
	                      sizeof(why)) != DRAKE_OK)
		return 0;
	return s.milli;
}

drake_err place_view_task(const struct kube_pod *pod, struct place_models *models,
                          struct place_task *t, char *why, size_t whylen)
{
	static const struct drake_res_names none = {0};
	struct drake_res r;
	char msg[200];
	if (requests_of_spec(&pod->res, &none, &r, msg, sizeof(msg)) != DRAKE_OK) {
		snprintf(why, whylen, "pod %s/%s: %s", pod->ns, pod->name, msg);
		return DRAKE_EINVAL;
	}
	*t = (struct place_task){.cpu_milli = clamp(r.cpu_milli, PLACE_MAX_CPU_MILLI),
	                         .mem_mib = clamp((r.mem_bytes + MIB - 1) / MIB, PLACE_MAX_MEM_MIB),
	                         .models = PLACE_ANY_MODEL};
	int32_t share = share_of(pod);
	if (r.gpu > PLACE_MAX_GPUS) {
		snprintf(why, whylen, "pod %s/%s asks for %lld GPUs; placement models at most %d",
		         pod->ns, pod->name, (long long)r.gpu, PLACE_MAX_GPUS);
		return DRAKE_EINVAL;
	}
	if (r.gpu > 0) {
		t->num_gpu = (int32_t)r.gpu;
		t->gpu_milli = PLACE_GPU_MILLI;
	} else if (share > 0) {
		t->num_gpu = 1;
		t->gpu_milli = share;
	}
	if (t->num_gpu && models && pod->gpu_product && *pod->gpu_product &&
	    place_models_mask(models, pod->gpu_product, &t->models, msg, sizeof(msg)) != DRAKE_OK) {
		snprintf(why, whylen, "pod %s/%s: %s", pod->ns, pod->name, msg);
		return DRAKE_EINVAL;
	}
	if (place_task_check(t, msg, sizeof(msg)) != DRAKE_OK) {
		snprintf(why, whylen, "pod %s/%s: %s", pod->ns, pod->name, msg);
		return DRAKE_EINVAL;
	}
	return DRAKE_OK;
}

/* Charging the pods of one node: the vGPU ids seen so far and the GPU
 * each was opened on. */
struct charge {
	struct place_node *n;
	int n_ids;
	const char *id[PLACE_MAX_GPUS];
	int gpu[PLACE_MAX_GPUS];
};

static int first_free_gpu(const struct place_node *n)
{
	for (int g = 0; g < n->n_gpu; g++)
		if (n->gpu_left[g] == PLACE_GPU_MILLI)
			return g;
	return -1;
}

/* The GPU vGPU id lives on, opening it on a free GPU the first time. */
static int vgpu(struct charge *c, const char *id)
{
	for (int i = 0; i < c->n_ids; i++)
		if (!strcmp(c->id[i], id))
			return c->gpu[i];
	int g = first_free_gpu(c->n);
	if (g >= 0 && c->n_ids < PLACE_MAX_GPUS) {
		c->id[c->n_ids] = id;
		c->gpu[c->n_ids++] = g;
	}
	return g;
}

static bool charge_pod(const struct kube_pod *pod, void *arg)
{
	struct charge *c = arg;
	struct place_task t;
	char why[200];
	if (finished(pod) || place_view_task(pod, NULL, &t, why, sizeof(why)) != DRAKE_OK)
		return true;
	int gpus[PLACE_MAX_GPUS], k = 0;
	const char *id = kube_pod_annotation(pod, DRAKE_KUBESHARE_GPUID);
	if (t.num_gpu == 1 && t.gpu_milli < PLACE_GPU_MILLI) {
		int g = id && *id ? vgpu(c, id) : -1;
		if (g < 0) /* a share with no vGPU named yet: its CPU and memory only */
			t.num_gpu = 0;
		else
			gpus[k++] = g;
	} else {
		for (int g = 0; g < c->n->n_gpu && k < t.num_gpu; g++)
			if (c->n->gpu_left[g] == PLACE_GPU_MILLI)
				gpus[k++] = g;
		t.num_gpu = k; /* more than the node has free: what is left */
	}
	place_charge(c->n, &t, gpus, 1);
	return true;
}

drake_err place_view_node(const struct kube_node *node, const struct kube_cache *pods,
                          struct place_models *models, struct place_node *n, char *why,
                          size_t whylen)
{
	static const struct drake_res_names none = {0};
	struct drake_res a = {0};
	unsigned has = 0;
	char msg[200];
	if (requests_list(node->alloc, node->n_alloc, &none, &a, &has, msg, sizeof(msg)) !=
	    DRAKE_OK) {
		snprintf(why, whylen, "node %s: status.allocatable %s", node->name, msg);
		return DRAKE_EINVAL;
	}
	int model = -1;
	for (size_t i = 0; i < node->n_labels; i++)
		if (!strcmp(node->labels[i].key, PLACE_VIEW_MODEL_LABEL) && node->labels[i].value)
			model = place_model_index(models, node->labels[i].value, true);
	int gpus = (int)clamp(a.gpu, PLACE_MAX_GPUS);
	place_node_init(n, clamp(a.cpu_milli, PLACE_MAX_CPU_MILLI),
	                clamp(a.mem_bytes / MIB, PLACE_MAX_MEM_MIB), gpus, model);
	struct charge c = {.n = n};
	kube_pods_by_node(pods, node->name, charge_pod, &c);
	return DRAKE_OK;
}

struct place_view_memo_entry {
	char *name; /* NULL: empty cell */
	bool valid;
	struct place_node n;
};

#define MEMO_MAX 200000 /* node names remembered; past it the memo starts over */

static size_t memo_hash(const char *s)
{
	uint64_t h = UINT64_C(14695981039346656037);
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
	return (size_t)(h ^ (h >> 32));
}

static struct place_view_memo_entry *memo_find(const struct place_view_memo *m, const char *name)
{
	if (!m->cap)
		return NULL;
	for (size_t i = memo_hash(name) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->e[i].name)
			return NULL;
		if (!strcmp(m->e[i].name, name))
			return &m->e[i];
	}
}

void place_view_memo_clear(struct place_view_memo *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->e[i].name);
	free(m->e);
	*m = (struct place_view_memo){0};
}

void place_view_memo_release(struct place_view_memo *m)
{
	if (m)
		place_view_memo_clear(m);
}

void place_view_memo_forget(struct place_view_memo *m, const char *node)
{
	struct place_view_memo_entry *e = m && node ? memo_find(m, node) : NULL;
	if (e)
		e->valid = false;
}

/* Doubles the table (entries kept). False when out of memory. */
static bool memo_grow(struct place_view_memo *m)
{
	size_t cap = m->cap ? m->cap * 2 : 1024;
	struct place_view_memo_entry *e = calloc(cap, sizeof(*e));
	if (!e)
		return false;
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->e[i].name)
			continue;
		size_t j = memo_hash(m->e[i].name) & (cap - 1);
		while (e[j].name)
			j = (j + 1) & (cap - 1);
		e[j] = m->e[i];
	}
	free(m->e);
	m->e = e;
	m->cap = cap;
	return true;
}

static void memo_put(struct place_view_memo *m, const char *name, const struct place_node *n)
{
	struct place_view_memo_entry *e = memo_find(m, name);
	if (!e) {
		if (m->n >= MEMO_MAX)
			place_view_memo_clear(m);
		if ((m->n + 1) * 2 > m->cap && !memo_grow(m))
			return;
		size_t i = memo_hash(name) & (m->cap - 1);
		while (m->e[i].name)
			i = (i + 1) & (m->cap - 1);
		if (!(m->e[i].name = strdup(name)))
			return;
		m->n++;
		e = &m->e[i];
	}
	e->n = *n;
	e->valid = true;
}

drake_err place_view_build_memo(const struct kube_cache *nodes, const struct kube_cache *pods,
                                struct place_view_memo *memo, const char *ns, const char *name,
                                const char *const *candidates, size_t n,
                                struct place_models *models, struct place_task *task,
                                struct place_node *out, bool *known, char *why, size_t whylen)
{
	const struct kube_pod *pod = kube_pods_get(pods, ns, name);
	if (!pod) {
		snprintf(why, whylen, "pod %s/%s is not in drake's pod cache", ns, name);
		return DRAKE_EINVAL;
	}
	drake_err e = place_view_task(pod, models, task, why, whylen);
	if (e)
		return e;
	for (size_t i = 0; i < n; i++) {
		const struct place_view_memo_entry *me =
		    memo ? memo_find(memo, candidates[i]) : NULL;
		if (me && me->valid) {
			out[i] = me->n;
			known[i] = true;
			continue;
		}
		const struct kube_node *node = kube_nodes_get(nodes, candidates[i]);
		char skip[200];
		known[i] = node && place_view_node(node, pods, models, &out[i], skip,
		                                   sizeof(skip)) == DRAKE_OK;
		if (known[i] && memo)
			memo_put(memo, candidates[i], &out[i]);
	}
	return DRAKE_OK;
}

drake_err place_view_build(const struct kube_cache *nodes, const struct kube_cache *pods,
                           const char *ns, const char *name, const char *const *candidates,
                           size_t n, struct place_models *models, struct place_task *task,
                           struct place_node *out, bool *known, char *why, size_t whylen)
{
	return place_view_build_memo(nodes, pods, NULL, ns, name, candidates, n, models, task, out,
	                             known, why, whylen);
}
