/*
 * admit_codec.c - the JSON side of admission: pod and node objects into
 * gang/'s cluster snapshot (requests counted by requests_codec.c), KubeShare
 * shares, and the patch that ungates a planned pod.
 *
 * Pods and nodes come from the caches' records (kube/pod.h, kube/node.h);
 * jobs and their templates are still JSON, and a template's resource
 * lists are decoded into the records' form so both are counted by the one
 * rule of requests.h.
 *
 * The snapshot is built in three walks. First the names table is filled
 * with the extended resources the jobs' gang templates ask for, the
 * oldest job's first, as far as it holds them (without a job cache, the
 * pods that use a node stand in). Then every node is read, looking names
 * up: a resource nobody asks for is skipped unread, so a real node with
 * pods, ephemeral-storage, hugepages-*, rdma/... and MIG profiles is read
 * like any other. Then each live pod is charged to the node it uses.
 *
 * `pods` (the node's pod-count limit) is not modelled: a gang is a few
 * pods on nodes that allow ~110, and a vector dimension every pod fills
 * would skew best fit toward crowded nodes. kube-scheduler still enforces
 * it; a plan it refuses for that is re-planned at filter time.
 */
#include "reconciler/admit.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gang/protocol.h"
#include "kube/cache.h"
#include "kube/node.h"
#include "kube/object.h"
#include "kube/pod.h"
#include "kube/strpool.h"
#include "reconciler/pass_world.h"
#include "reconciler/requests.h"
#include "kind/pod_codec.h"
#include "kind/registry.h"
#include "kind/job.h"

drake_err admit_spec_requests(const struct kube_res_spec *spec, const struct drake_res_names *names,
                              struct drake_res *out, char *msg, size_t msglen)
{
	drake_err e = requests_check_tracked(spec, names, msg, msglen);
	return e ? e : requests_of_spec(spec, names, out, msg, msglen);
}

drake_err admit_template_requests(const struct json_t *tmpl, const struct drake_res_names *names,
                                  struct drake_res *out, char *msg, size_t msglen)
{
	struct kube_strpool pool;
	kube_strpool_init(&pool);
	struct kube_res_spec *spec;
	drake_err e =
	    kube_res_spec_decode(json_object_get(tmpl, "spec"), &pool, &spec, msg, msglen);
	if (!e)
		e = admit_spec_requests(spec, names, out, msg, msglen);
	kube_res_spec_free(spec, &pool);
	kube_strpool_release(&pool);
	return e;
}

/* An annotation of obj (a pod or a template) in *val, NULL when absent;
 * EINVAL when it is not a string. */
static drake_err annotation(const json_t *obj, const char *key, const char **val, char *msg,
                            size_t msglen)
{
	const json_t *v =
	    json_object_get(json_object_get(json_object_get(obj, "metadata"), "annotations"), key);
	*val = json_string_value(v);
	if (v && !*val && !json_is_null(v))
		return drake_errorf(DRAKE_EINVAL, msg, msglen,
		                    "annotation %s must be a string (quote it)", key);
	return DRAKE_OK;
}

/* KubeShare's three annotations of obj as a share. */
static drake_err share_of(const json_t *obj, struct drake_share *out, char *msg, size_t msglen)
{
	const char *req, *lim, *mem;
	drake_err e;
	if ((e = annotation(obj, DRAKE_KUBESHARE_GPU_REQUEST, &req, msg, msglen)) ||
	    (e = annotation(obj, DRAKE_KUBESHARE_GPU_LIMIT, &lim, msg, msglen)) ||
	    (e = annotation(obj, DRAKE_KUBESHARE_GPU_MEM, &mem, msg, msglen)))
		return e;
	return drake_share_parse(req, lim, mem, out, msg, msglen);
}

drake_err admit_template_share(const struct json_t *tmpl, struct drake_share *out, char *msg,
                               size_t msglen)
{
	return share_of(tmpl, out, msg, msglen);
}

/* The same as annotation() from a pod record, which keeps a non-string
 * value as present with a NULL value (and drops a null one). */
static drake_err pod_annotation(const struct kube_pod *pod, const char *key, const char **val,
                                char *msg, size_t msglen)
{
	*val = NULL;
	for (size_t i = 0; i < pod->n_annotations; i++) {
		if (strcmp(pod->annotations[i].key, key) != 0)
			continue;
		*val = pod->annotations[i].value;
		if (!*val)
			return drake_errorf(DRAKE_EINVAL, msg, msglen,
			                    "annotation %s must be a string (quote it)", key);
	}
	return DRAKE_OK;
}

static drake_err pod_share(const struct kube_pod *pod, struct drake_share *out, char *msg,
                           size_t msglen)
{
	const char *req, *lim, *mem;
	drake_err e;
	if ((e = pod_annotation(pod, DRAKE_KUBESHARE_GPU_REQUEST, &req, msg, msglen)) ||
	    (e = pod_annotation(pod, DRAKE_KUBESHARE_GPU_LIMIT, &lim, msg, msglen)) ||
	    (e = pod_annotation(pod, DRAKE_KUBESHARE_GPU_MEM, &mem, msg, msglen)))
		return e;
	return drake_share_parse(req, lim, mem, out, msg, msglen);
}

/* ---- the snapshot ---- */

/* Most distinct extended resource names a snapshot weighs for its table. */
#define WANTED_NAMES_MAX 1024

/* A name some request uses, and when it was first asked for: the
 * creation time of the oldest job (or pod) that asks. */
struct wanted {
	const char *name; /* borrowed from the pod cache, or held in pool */
	double since;
};

struct wants {
	struct wanted *v;
	size_t n, cap;
	double since;              /* of the object being walked */
	struct kube_strpool *pool; /* templates' names, held until the walk ends */
	bool nomem;
};

static void want_name(struct wants *w, const char *k)
{
	size_t i = 0;
	while (i < w->n && strcmp(w->v[i].name, k))
		i++;
	if (i < w->n) {
		if (w->since < w->v[i].since)
			w->v[i].since = w->since;
		return;
	}
	if (w->n == WANTED_NAMES_MAX)
		return; /* never tracked, so refused wherever it is requested */
	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 16;
		struct wanted *p = realloc(w->v, cap * sizeof(*p));
		if (!p) {
			w->nomem = true;
			return;
		}
		w->v = p;
		w->cap = cap;
	}
	if (w->pool) {
		int oom = 0;
		k = kube_strpool_get(w->pool, k, &oom); /* outlives the template's spec */
		if (oom) {
			w->nomem = true;
			return;
		}
	}
	w->v[w->n++] = (struct wanted){k, w->since};
}

static void want_list(const struct kube_qty *list, size_t n, void *arg)
{
	for (size_t i = 0; i < n; i++)
		if (requests_ext_name(list[i].name))
			want_name(arg, list[i].name);
}

/* The names a job's gang (PS, chief, workers) asks for. A job asking
 * for more than the table holds can never be placed, so it takes no slot
 * from the others. */
static void want_job(const struct pass_job *j, struct wants *w)
{
	const struct job *job = &j->job;
	if (job->suspend)
		return;
	struct wants one = {0};
	const enum job_rtype gang[] = {JOB_PS, JOB_CHIEF, JOB_WORKER};
	struct kube_res_spec *specs[3] = {NULL, NULL, NULL};
	char msg[DRAKE_WHY_MAX];
	for (size_t t = 0; t < sizeof(gang) / sizeof(gang[0]); t++) {
		if (!job->rs[gang[t]].present)
			continue;
		/* A template the record cannot hold asks for nothing it can
		 * plan: admission refuses it when it counts its requests. */
		if (kube_res_spec_decode(json_object_get(job->rs[gang[t]].tmpl, "spec"), w->pool,
		                         &specs[t], msg, sizeof(msg)) == DRAKE_OK)
			requests_foreach_list(specs[t], want_list, &one);
	}
	w->since = j->created;
	for (size_t i = 0; one.n <= DRAKE_RES_MAX_EXT && i < one.n; i++)
		want_name(w, one.v[i].name);
	w->nomem |= one.nomem;
	free(one.v);
	for (size_t t = 0; t < 3; t++)
		kube_res_spec_free(specs[t], w->pool);
}

/* True for a pod admission ungated: drake's gate is gone and a job of a
 * kind drake knows controls it. A planned-node annotation on any other pod
 * (forged, or on a pod still gated) is no reservation and must not make a
 * node look full. */
static bool admitted_member(const struct kube_pod *pod)
{
	return job_kind_named(job_kinds, job_nkinds, pod->owner_kind) &&
	       job_gang_gate_index(pod) < 0;
}

/* The node a live pod uses, or NULL: where it is bound; else, for an
 * admitted member, its planned node; else the node kube-scheduler
 * nominated it for (it preempted there and waits for its victims to go,
 * so that room is claimed). */
static const char *charged_node(const struct kube_pod *pod)
{
	if (kube_pod_phase_done(pod->phase))
		return NULL;
	const char *node = pod->node_name;
	if (node && *node)
		return node;
	node = kube_pod_annotation(pod, DRAKE_ANNOTATION_PLANNED_NODE);
	if (node && *node && admitted_member(pod))
		return node;
	node = pod->nominated_node;
	return node && *node ? node : NULL;
}

/* Without a job cache (re-planning one member) the pods that use a node
 * are all that says which names matter. */
static bool want_pod(const struct kube_pod *pod, void *arg)
{
	struct wants *w = arg;
	if (!charged_node(pod))
		return true;
	w->since = admit_time(pod->created);
	requests_foreach_list(&pod->res, want_list, w);
	return !w->nomem;
}

static int by_since(const void *a, const void *b)
{
	const struct wanted *x = a, *y = b;
	if (x->since != y->since)
		return x->since < y->since ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Interns the names requests use, oldest request first, as far as the
 * table holds them. */
static drake_err intern_wanted(const struct pass_job *jobs, size_t njobs, bool by_jobs,
                               const struct kube_cache *pods, struct drake_res_names *names)
{
	struct kube_strpool pool;
	kube_strpool_init(&pool);
	struct wants w = {.pool = by_jobs ? &pool : NULL};
	for (size_t i = 0; by_jobs && i < njobs && !w.nomem; i++)
		want_job(&jobs[i], &w);
	if (!by_jobs)
		kube_pods_foreach(pods, want_pod, &w);
	if (!w.nomem && w.n > 1)
		qsort(w.v, w.n, sizeof(w.v[0]), by_since);
	for (size_t i = 0; !w.nomem && i < w.n && names->n < DRAKE_RES_MAX_EXT; i++)
		(void)drake_res_name_index(names, w.v[i].name, true); /* -1: name too long */
	free(w.v);
	kube_strpool_release(&pool);
	return w.nomem ? DRAKE_ENOMEM : DRAKE_OK;
}

static bool node_schedulable(const struct kube_node *node)
{
	return !node->unschedulable && !node->no_schedule;
}

struct snap_ctx {
	struct drake_cluster *c;
	struct admit_skipped_list *skipped;
	char *msg;
	size_t msglen;
	drake_err err;
};

static void skip_node(struct admit_skipped_list *l, const char *node, const char *fmt, ...)
    DRAKE_PRINTF(3, 4);

/* Lists a node left out of the snapshot, with why; past the list's limit
 * (or out of memory) it is only counted. */
static void skip_node(struct admit_skipped_list *l, const char *node, const char *fmt, ...)
{
	if (!l)
		return;
	if (l->n == l->cap && l->cap < ADMIT_SKIPPED_MAX) {
		size_t cap = l->cap ? l->cap * 2 : 8;
		cap = cap < ADMIT_SKIPPED_MAX ? cap : ADMIT_SKIPPED_MAX;
		struct admit_skipped *p = realloc(l->v, cap * sizeof(*p));
		if (p) {
			l->v = p;
			l->cap = cap;
		}
	}
	if (l->n == l->cap) {
		l->unlisted++;
		return;
	}
	struct admit_skipped *s = &l->v[l->n++];
	snprintf(s->node, sizeof(s->node), "%.253s", node);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->why, sizeof(s->why), fmt, ap);
	va_end(ap);
}

/* A node the snapshot cannot read is left out and listed in skipped;
 * resources nobody requests are never read, so they cannot keep it out. */
static bool add_node(const struct kube_node *node, void *arg)
{
	struct snap_ctx *s = arg;
	const char *name = node->name;
	struct drake_res alloc = {0};
	unsigned has = 0;
	char why[200];
	if (requests_list(node->alloc, node->n_alloc, &s->c->names, &alloc, &has, why,
	                  sizeof(why)) != DRAKE_OK) {
		skip_node(s->skipped, name, "status.allocatable %s", why);
		return true;
	}
	drake_err e =
	    drake_cluster_add_node(s->c, name, &alloc, node_schedulable(node), why, sizeof(why));
	if (!e) /* open to the replicas that tolerate its taints (planner.h) */
		s->c->nodes[s->c->n - 1].tainted = !node->unschedulable && node->no_schedule;
	if (e == DRAKE_ENOMEM) {
		s->err = drake_errorf(e, s->msg, s->msglen, "%s", why);
		return false;
	}
	if (e) {
		skip_node(s->skipped, name, "%s", why);
		return true;
	}
	/* Without a readable kubeshare/gpu_info the GPUs' memory is unknown
	 * (0): such a node takes only shares that ask for no GPU memory. */
	const char *info = kube_node_annotation(node, DRAKE_KUBESHARE_GPU_INFO);
	int64_t gpu_mem = 0;
	if (info && drake_gpu_info_parse(info, &gpu_mem, why, sizeof(why)) == DRAKE_OK)
		s->c->nodes[s->c->n - 1].gpu_mem = gpu_mem; /* the node just added */
	return true;
}

/* Sorts the nodes; two nodes of one name (only a cache keyed on a bogus
 * namespace could hold them) are both left out: drake cannot tell which
 * is real. */
static drake_err sort_nodes(struct snap_ctx *s)
{
	struct drake_cluster *c = s->c;
	if (drake_cluster_sort(c, NULL, 0) == DRAKE_OK)
		return DRAKE_OK;
	size_t kept = 0; /* drake_cluster_sort sorted them before it refused */
	for (size_t i = 0, j; i < c->n; i = j) {
		for (j = i + 1; j < c->n && !strcmp(c->nodes[j].name, c->nodes[i].name); j++)
			;
		if (j - i == 1) {
			c->nodes[kept++] = c->nodes[i];
			continue;
		}
		skip_node(s->skipped, c->nodes[i].name, "%zu nodes have this name", j - i);
		for (size_t k = i; k < j; k++)
			if (c->nodes[k].schedulable)
				drake_res_sub(&c->alloc_total, &c->nodes[k].alloc);
	}
	c->n = kept;
	return drake_cluster_sort(c, s->msg, s->msglen);
}

/* A pod on a vGPU (kubeshare/GPUID) holds its share of it; the first pod
 * seen on an id opens that vGPU, which takes a whole GPU of the node. */
static void charge_share(struct drake_cluster *c, size_t i, const struct kube_pod *pod)
{
	const char *id = kube_pod_annotation(pod, DRAKE_KUBESHARE_GPUID);
	if (!id || !*id || !kube_pod_annotation(pod, DRAKE_KUBESHARE_GPU_REQUEST))
		return;
	struct drake_share share;
	char why[200];
	/* A share drake cannot read is taken to fill its vGPU: never
	 * undercount what a running pod may use. */
	if (pod_share(pod, &share, why, sizeof(why)) != DRAKE_OK)
		share = (struct drake_share){DRAKE_GPU_MILLI, DRAKE_GPU_MILLI, c->nodes[i].gpu_mem};
	drake_cluster_charge_vgpu(c, i, id, &share, 1);
}

/* A pod's untracked resources are not charged: no plan asks for them. */
static bool charge_pod(const struct kube_pod *pod, void *arg)
{
	struct snap_ctx *s = arg;
	const char *node = charged_node(pod);
	int i = node ? drake_cluster_find(s->c, node) : -1;
	if (i < 0)
		return true;
	struct drake_res req;
	char why[200];
	if (requests_of_spec(&pod->res, &s->c->names, &req, why, sizeof(why)) == DRAKE_OK)
		drake_cluster_charge(s->c, (size_t)i, &req, 1);
	charge_share(s->c, (size_t)i, pod);
	return true;
}

drake_err admit_pod_requests(const struct kube_pod *pod, const struct drake_res_names *names,
                             struct drake_res *out, char *msg, size_t msglen)
{
	return admit_spec_requests(&pod->res, names, out, msg, msglen);
}

static int by_node(const void *a, const void *b)
{
	return strcmp(((const struct admit_skipped *)a)->node,
	              ((const struct admit_skipped *)b)->node);
}

static drake_err snapshot(const struct kube_cache *nodes, const struct kube_cache *pods,
                          const struct pass_job *jobs, size_t njobs, bool by_jobs,
                          struct drake_cluster *c, struct admit_skipped_list *skipped, char *msg,
                          size_t msglen)
{
	struct snap_ctx s = {c, skipped, msg, msglen, DRAKE_OK};
	if (intern_wanted(jobs, njobs, by_jobs, pods, &c->names) != DRAKE_OK)
		return drake_errorf(DRAKE_ENOMEM, msg, msglen, "out of memory reading requests");
	kube_nodes_foreach(nodes, add_node, &s);
	if (s.err)
		return s.err;
	drake_err e = sort_nodes(&s);
	if (e)
		return e;
	kube_pods_foreach(pods, charge_pod, &s);
	if (skipped && skipped->n > 1)
		qsort(skipped->v, skipped->n, sizeof(skipped->v[0]), by_node);
	return DRAKE_OK;
}

drake_err admit_snapshot_jobs(const struct kube_cache *nodes, const struct kube_cache *pods,
                              const struct pass_job *jobs, size_t njobs, struct drake_cluster *c,
                              struct admit_skipped_list *skipped, char *msg, size_t msglen)
{
	return snapshot(nodes, pods, jobs, njobs, true, c, skipped, msg, msglen);
}

drake_err admit_snapshot(const struct kube_cache *nodes, const struct kube_cache *pods,
                         const struct job_caches *caches, struct drake_cluster *c,
                         struct admit_skipped_list *skipped, char *msg, size_t msglen)
{
	if (!caches)
		return snapshot(nodes, pods, NULL, 0, false, c, skipped, msg, msglen);
	struct pass_job *jobs;
	size_t n;
	drake_err e = pass_jobs_decode(caches, &jobs, &n);
	if (e)
		e = drake_errorf(e, msg, msglen, "out of memory decoding jobs");
	else
		e = snapshot(nodes, pods, jobs, n, true, c, skipped, msg, msglen);
	pass_jobs_release(jobs, n);
	return e;
}

struct names_ctx {
	const struct drake_res_names *names;
	bool all;
};

static void known_list(const struct kube_qty *list, size_t n, void *arg)
{
	struct names_ctx *x = arg;
	for (size_t i = 0; i < n; i++) {
		if (!requests_ext_name(list[i].name))
			continue;
		bool found = false;
		for (int k = 0; k < x->names->n && !found; k++)
			found = !strcmp(x->names->name[k], list[i].name);
		x->all &= found;
	}
}

bool admit_pod_names_known(const struct kube_pod *pod, const struct drake_res_names *names)
{
	struct names_ctx x = {names, true};
	requests_foreach_list(&pod->res, known_list, &x);
	return x.all;
}

void admit_skipped_release(struct admit_skipped_list *l)
{
	if (!l)
		return;
	free(l->v);
	memset(l, 0, sizeof(*l));
}

double admit_time(const char *ts)
{
	struct tm tm = {0};
	if (!ts || !strptime(ts, "%Y-%m-%dT%H:%M:%SZ", &tm))
		return 0;
	return (double)timegm(&tm);
}

double admit_created(const struct json_t *obj)
{
	return admit_time(kube_obj_str(obj, "metadata.creationTimestamp"));
}

/* pod's entry in w, or NULL. */
static const struct admit_pod *wave_pod(const struct admit_wave *w, const struct kube_pod *pod)
{
	const char *name = pod->name;
	for (int i = 0; name && i < w->n_pods; i++)
		if (!strcmp(w->pods[i].name, name))
			return &w->pods[i];
	return NULL;
}

/* For a pod of w with a GPU share, its vGPU and the share's annotations
 * (those the pod, copied from its template, does not carry yet) into plan. */
static void add_share(json_t *plan, const struct kube_pod *pod, const struct admit_wave *w)
{
	const struct admit_pod *p = wave_pod(w, pod);
	if (!p || p->share.milli <= 0 || !p->gpuid[0])
		return;
	char req[16], lim[16], mem[24];
	drake_milli_format(p->share.milli, req, sizeof(req));
	drake_milli_format(p->share.limit_milli, lim, sizeof(lim));
	snprintf(mem, sizeof(mem), "%lld", (long long)p->share.mem_bytes);
	json_object_set_new(plan, DRAKE_KUBESHARE_GPUID, json_string(p->gpuid));
	const struct {
		const char *key, *value;
	} kept[] = {{DRAKE_KUBESHARE_GPU_REQUEST, req},
	            {DRAKE_KUBESHARE_GPU_LIMIT, lim},
	            {DRAKE_KUBESHARE_GPU_MEM, mem}};
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		if (!kube_pod_annotation(pod, kept[i].key))
			json_object_set_new(plan, kept[i].key, json_string(kept[i].value));
}

bool admit_wave_first_on_node(const struct admit_wave *w, int i)
{
	for (int j = 0; j < i; j++)
		if (!strcmp(w->pods[j].node, w->pods[i].node))
			return false;
	return true;
}

/* One term per node, node first, then the wave's other nodes: the API
 * server allows a single value for a metadata.name field requirement, and
 * terms are ORed, so kube-scheduler's NodeAffinity PreFilter takes their
 * union:
 * {"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{
 *  "nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name",
 *  "operator":"In","values":[n]}]}, ...]}}} */
static json_t *pin_term(const char *node)
{
	return json_pack("{s:[{s:s,s:s,s:[s]}]}", "matchFields", "key", "metadata.name", "operator",
	                 "In", "values", node);
}

static json_t *pin_affinity(const struct admit_wave *w, const char *node)
{
	json_t *terms = json_array();
	json_array_append_new(terms, pin_term(node));
	for (int i = 0; i < w->n_pods; i++)
		if (strcmp(w->pods[i].node, node) && admit_wave_first_on_node(w, i))
			json_array_append_new(terms, pin_term(w->pods[i].node));
	return json_pack("{s:{s:{s:o}}}", "nodeAffinity",
	                 "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms",
	                 terms);
}

char *admit_ungate_patch(const struct kube_pod *pod, const struct admit_wave *w, const char *node,
                         bool pin)
{
	int k = job_gang_gate_index(pod);
	if (k < 0)
		return NULL;
	char gate[64], gate_name[80], size[16], min[16];
	snprintf(gate, sizeof(gate), "/spec/schedulingGates/%d", k);
	snprintf(gate_name, sizeof(gate_name), "%s/name", gate);
	snprintf(size, sizeof(size), "%d", w->size);
	snprintf(min, sizeof(min), "%d", w->min);
	json_t *ops = json_array();
	json_array_append_new(ops, json_pack("{s:s,s:s,s:s}", "op", "test", "path", gate_name,
	                                     "value", JOB_GANG_GATE));
	/* The plan goes on before the gate comes off, in one atomic patch, so
	 * kube-scheduler never sees the pod without its plan. */
	char roles[64];
	const struct admit_pod *me = wave_pod(w, pod);
	json_t *plan = json_pack("{s:s,s:s,s:s,s:s,s:s}", DRAKE_ANNOTATION_PLANNED_NODE, node,
	                         DRAKE_ANNOTATION_GANG, w->gang, DRAKE_ANNOTATION_GANG_SIZE, size,
	                         DRAKE_ANNOTATION_GANG_MIN, min, DRAKE_ANNOTATION_GANG_ROLES,
	                         drake_roles_format(&w->min_roles, roles, sizeof(roles)));
	if (me)
		json_object_set_new(plan, DRAKE_ANNOTATION_ROLE,
		                    json_string(drake_role_name(me->role)));
	add_share(plan, pod, w);
	if (!pod->has_annotations) {
		json_array_append_new(ops, json_pack("{s:s,s:s,s:O}", "op", "add", "path",
		                                     "/metadata/annotations", "value", plan));
	} else {
		const char *key;
		json_t *v;
		json_object_foreach (plan, key, v) {
			/* JSON pointer: "/" in a key is written "~1". */
			char path[128] = "/metadata/annotations/";
			size_t o = strlen(path);
			for (const char *p = key; *p && o + 3 < sizeof(path); p++) {
				if (*p == '/') {
					path[o++] = '~';
					path[o++] = '1';
				} else {
					path[o++] = *p;
				}
			}
			path[o] = '\0';
			json_array_append_new(
			    ops, json_pack("{s:s,s:s,s:O}", "op", "add", "path", path, "value", v));
		}
	}
	json_decref(plan);
	if (pin && !pod->node_constrained) {
		/* "test" null passes only while the pod has no affinity, so one
		 * set by someone else since the cache saw the pod fails the patch
		 * instead of being replaced */
		json_array_append_new(ops, json_pack("{s:s,s:s,s:n}", "op", "test", "path",
		                                     "/spec/affinity", "value"));
		json_array_append_new(ops,
		                      json_pack("{s:s,s:s,s:o}", "op", "add", "path",
		                                "/spec/affinity", "value", pin_affinity(w, node)));
	}
	json_array_append_new(ops, json_pack("{s:s,s:s}", "op", "remove", "path", gate));
	char *out = json_dumps(ops, JSON_COMPACT);
	json_decref(ops);
	return out;
}

char *admit_waiting_json(const struct admit_note *notes, size_t n,
                         const struct admit_skipped_list *skipped,
                         const struct admit_running *running, size_t n_running)
{
	json_t *jobs = json_array();
	for (size_t i = 0; jobs && i < n; i++) {
		json_t *o = json_pack("{s:s,s:s,s:s}", "job", notes[i].key, "status",
		                      notes[i].status, "waitsFor", notes[i].why);
		if (o && notes[i].kind)
			json_object_set_new(o, "kind", json_string(notes[i].kind));
		json_array_append_new(jobs, o);
	}
	json_t *root = jobs ? json_pack("{s:o}", "jobs", jobs) : NULL;
	if (root && skipped && (skipped->n || skipped->unlisted)) {
		json_t *left = json_array();
		for (size_t i = 0; left && i < skipped->n; i++)
			json_array_append_new(left,
			                      json_pack("{s:s,s:s}", "node", skipped->v[i].node,
			                                "why", skipped->v[i].why));
		json_object_set_new(root, "nodesLeftOut", left);
		if (skipped->unlisted)
			json_object_set_new(root, "nodesNotListed",
			                    json_integer((json_int_t)skipped->unlisted));
	}
	json_t *run = root && n_running ? json_array() : NULL;
	for (size_t i = 0; run && i < n_running; i++) {
		const struct admit_running *j = &running[i];
		json_t *o =
		    json_pack("{s:s,s:i,s:i,s:i,s:I}", "job", j->key, "workers", j->workers, "min",
		              j->min, "max", j->max, "lastScaled", (json_int_t)j->last_scaled);
		if (o && j->kind)
			json_object_set_new(o, "kind", json_string(j->kind));
		if (o && j->gave_to[0])
			json_object_set_new(o, "gaveTo", json_string(j->gave_to));
		if (o && j->slow)
			json_object_set_new(o, "slow", json_true());
		if (o && j->progress)
			json_object_set_new(o, "progress",
			                    json_pack("{s:s,s:I,s:f}", "class", j->progress, "step",
			                              (json_int_t)j->step, "value", j->value));
		json_array_append_new(run, o);
	}
	if (run)
		json_object_set_new(root, "running", run);
	char *out = root ? json_dumps(root, JSON_COMPACT) : NULL;
	json_decref(root);
	return out;
}
