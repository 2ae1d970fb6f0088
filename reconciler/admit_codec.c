/*
 * admit_codec.c - the JSON side of admission: pod and node objects into
 * gang/'s resource vectors, KubeShare shares and cluster snapshot, and the
 * patch that ungates a planned pod.
 */
#include "reconciler/admit.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gang/protocol.h"
#include "kube/cache.h"
#include "kube/object.h"
#include "reconciler/tfjob.h"

/* Adds one resource list ({"cpu": "500m", ...}) into r. */
static drake_err add_list(const json_t *list, struct drake_res_names *names, struct drake_res *r,
                          unsigned *has, char *msg, size_t msglen)
{
	if (!json_is_object(list))
		return DRAKE_OK;
	const char *k;
	json_t *v;
	json_object_foreach ((json_t *)list, k, v) {
		/* A quantity is an int-or-string: YAML's `nvidia.com/gpu: 1`
		 * arrives as a number. */
		char num[40];
		const char *q = NULL;
		if (json_is_string(v))
			q = json_string_value(v);
		else if (json_is_integer(v))
			q = (snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(v)),
			     num);
		else if (json_is_real(v))
			q = (snprintf(num, sizeof(num), "%.15g", json_real_value(v)), num);
		if (!q)
			return drake_errorf(DRAKE_EINVAL, msg, msglen,
			                    "resource %s: quantity must be a string or a number",
			                    k);
		/* drake's own marker resource (gang-only mode) is never on a
		 * node: it only routes pods to drake, so it is not capacity. */
		if (!strncmp(k, DRAKE_ANNOTATION_PREFIX, strlen(DRAKE_ANNOTATION_PREFIX)))
			continue;
		/* Only resources the planner models matter; an unknown extended
		 * resource that does not fit the table is ignored, not an error. */
		struct drake_res one = {0};
		unsigned one_has = 0;
		drake_err e = drake_res_set(&one, &one_has, names, k, q, msg, msglen);
		if (e == DRAKE_ELIMIT && strchr(k, '/'))
			continue;
		if (e)
			return e;
		drake_res_add(r, &one);
		*has |= one_has;
	}
	return DRAKE_OK;
}

static drake_err container_requests(const json_t *c, struct drake_res_names *names,
                                    struct drake_res *out, char *msg, size_t msglen)
{
	const json_t *res = json_object_get(c, "resources");
	struct drake_res req = {0}, lim = {0};
	unsigned req_has = 0, lim_has = 0;
	drake_err e =
	    add_list(json_object_get(res, "requests"), names, &req, &req_has, msg, msglen);
	if (!e)
		e = add_list(json_object_get(res, "limits"), names, &lim, &lim_has, msg, msglen);
	if (e)
		return e;
	drake_res_default_requests(&req, &req_has, &lim, lim_has);
	*out = req;
	return DRAKE_OK;
}

static void res_max(struct drake_res *a, const struct drake_res *b)
{
	a->cpu_milli = a->cpu_milli > b->cpu_milli ? a->cpu_milli : b->cpu_milli;
	a->mem_bytes = a->mem_bytes > b->mem_bytes ? a->mem_bytes : b->mem_bytes;
	a->gpu = a->gpu > b->gpu ? a->gpu : b->gpu;
	for (int i = 0; i < DRAKE_RES_MAX_EXT; i++)
		a->ext[i] = a->ext[i] > b->ext[i] ? a->ext[i] : b->ext[i];
}

drake_err admit_spec_requests(const struct json_t *spec, struct drake_res_names *names,
                              struct drake_res *out, char *msg, size_t msglen)
{
	struct drake_res sum = {0}, init = {0};
	size_t i;
	json_t *c;
	json_array_foreach (json_object_get(spec, "containers"), i, c) {
		struct drake_res one;
		drake_err e = container_requests(c, names, &one, msg, msglen);
		if (e)
			return e;
		drake_res_add(&sum, &one);
	}
	json_array_foreach (json_object_get(spec, "initContainers"), i, c) {
		struct drake_res one;
		drake_err e = container_requests(c, names, &one, msg, msglen);
		if (e)
			return e;
		res_max(&init, &one);
	}
	res_max(&sum, &init);
	*out = sum;
	return DRAKE_OK;
}

drake_err admit_template_requests(const struct json_t *tmpl, struct drake_res_names *names,
                                  struct drake_res *out, char *msg, size_t msglen)
{
	return admit_spec_requests(json_object_get(tmpl, "spec"), names, out, msg, msglen);
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

static bool node_schedulable(const json_t *node)
{
	const json_t *spec = json_object_get(node, "spec");
	if (json_is_true(json_object_get(spec, "unschedulable")))
		return false;
	size_t i;
	json_t *t;
	json_array_foreach (json_object_get(spec, "taints"), i, t) {
		const char *effect = json_string_value(json_object_get(t, "effect"));
		if (effect && (!strcmp(effect, "NoSchedule") || !strcmp(effect, "NoExecute")))
			return false;
	}
	return true;
}

struct snap_ctx {
	struct drake_cluster *c;
	char *msg;
	size_t msglen;
	drake_err err;
};

static bool add_node(json_t *node, void *arg)
{
	struct snap_ctx *s = arg;
	const char *name = kube_obj_str(node, "metadata.name");
	if (!name)
		return true;
	struct drake_res alloc = {0};
	unsigned has = 0;
	const json_t *list = json_object_get(json_object_get(node, "status"), "allocatable");
	char why[200];
	if (add_list(list, &s->c->names, &alloc, &has, why, sizeof(why)) != DRAKE_OK)
		return true; /* a node whose allocatable drake cannot read is left out */
	s->err =
	    drake_cluster_add_node(s->c, name, &alloc, node_schedulable(node), s->msg, s->msglen);
	/* Without a readable kubeshare/gpu_info the GPUs' memory is unknown
	 * (0): such a node takes only shares that ask for no GPU memory. */
	const char *info = kube_obj_annotation(node, DRAKE_KUBESHARE_GPU_INFO);
	int64_t gpu_mem = 0;
	if (!s->err && info && drake_gpu_info_parse(info, &gpu_mem, why, sizeof(why)) == DRAKE_OK)
		s->c->nodes[s->c->n - 1].gpu_mem = gpu_mem; /* the node just added */
	return s->err == DRAKE_OK;
}

/* A pod on a vGPU (kubeshare/GPUID) holds its share of it; the first pod
 * seen on an id opens that vGPU, which takes a whole GPU of the node. */
static void charge_share(struct drake_cluster *c, size_t i, const json_t *pod)
{
	const char *id = kube_obj_annotation(pod, DRAKE_KUBESHARE_GPUID);
	if (!id || !*id || !kube_obj_annotation(pod, DRAKE_KUBESHARE_GPU_REQUEST))
		return;
	struct drake_share share;
	char why[200];
	/* A share drake cannot read is taken to fill its vGPU: never
	 * undercount what a running pod may use. */
	if (share_of(pod, &share, why, sizeof(why)) != DRAKE_OK)
		share = (struct drake_share){DRAKE_GPU_MILLI, DRAKE_GPU_MILLI, c->nodes[i].gpu_mem};
	drake_cluster_charge_vgpu(c, i, id, &share, 1);
}

static bool charge_pod(json_t *pod, void *arg)
{
	struct snap_ctx *s = arg;
	const char *phase = kube_obj_str(pod, "status.phase");
	if (phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed")))
		return true;
	const char *node = kube_obj_str(pod, "spec.nodeName");
	if (!node || !*node)
		node = kube_obj_annotation(pod, DRAKE_ANNOTATION_PLANNED_NODE);
	int i = node ? drake_cluster_find(s->c, node) : -1;
	if (i < 0)
		return true;
	struct drake_res req;
	char why[200];
	if (admit_pod_requests(pod, &s->c->names, &req, why, sizeof(why)) == DRAKE_OK)
		drake_cluster_charge(s->c, (size_t)i, &req, 1);
	charge_share(s->c, (size_t)i, pod);
	return true;
}

drake_err admit_pod_requests(const struct json_t *pod, struct drake_res_names *names,
                             struct drake_res *out, char *msg, size_t msglen)
{
	return admit_spec_requests(json_object_get(pod, "spec"), names, out, msg, msglen);
}

drake_err admit_snapshot(const struct kube_cache *nodes, const struct kube_cache *pods,
                         struct drake_cluster *c, char *msg, size_t msglen)
{
	struct snap_ctx s = {c, msg, msglen, DRAKE_OK};
	kube_cache_foreach(nodes, add_node, &s);
	if (s.err)
		return s.err;
	drake_err e = drake_cluster_sort(c, msg, msglen);
	if (e)
		return e;
	kube_cache_foreach(pods, charge_pod, &s);
	return DRAKE_OK;
}

double admit_created(const struct json_t *obj)
{
	const char *ts = kube_obj_str(obj, "metadata.creationTimestamp");
	struct tm tm = {0};
	if (!ts || !strptime(ts, "%Y-%m-%dT%H:%M:%SZ", &tm))
		return 0;
	return (double)timegm(&tm);
}

/* For a pod of w with a GPU share, its vGPU and the share's annotations
 * (those the pod, copied from its template, does not carry yet) into plan. */
static void add_share(json_t *plan, const json_t *pod, const struct admit_wave *w)
{
	const char *name = kube_obj_str(pod, "metadata.name");
	const struct admit_pod *p = NULL;
	for (int i = 0; name && i < w->n_pods && !p; i++)
		if (!strcmp(w->pods[i].name, name))
			p = &w->pods[i];
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
		if (!kube_obj_annotation(pod, kept[i].key))
			json_object_set_new(plan, kept[i].key, json_string(kept[i].value));
}

char *admit_ungate_patch(const struct json_t *pod, const struct admit_wave *w, const char *node)
{
	const json_t *gates = json_object_get(json_object_get(pod, "spec"), "schedulingGates");
	int k = -1;
	size_t i;
	json_t *g;
	json_array_foreach (gates, i, g) {
		const char *name = json_string_value(json_object_get(g, "name"));
		if (name && !strcmp(name, TF_GANG_GATE))
			k = (int)i;
	}
	if (k < 0)
		return NULL;
	char gate[64], gate_name[80], size[16], min[16];
	snprintf(gate, sizeof(gate), "/spec/schedulingGates/%d", k);
	snprintf(gate_name, sizeof(gate_name), "%s/name", gate);
	snprintf(size, sizeof(size), "%d", w->size);
	snprintf(min, sizeof(min), "%d", w->min);
	json_t *ops = json_array();
	json_array_append_new(ops, json_pack("{s:s,s:s,s:s}", "op", "test", "path", gate_name,
	                                     "value", TF_GANG_GATE));
	/* The plan goes on before the gate comes off, in one atomic patch, so
	 * kube-scheduler never sees the pod without its plan. */
	const json_t *ann = json_object_get(json_object_get(pod, "metadata"), "annotations");
	json_t *plan = json_pack("{s:s,s:s,s:s,s:s}", DRAKE_ANNOTATION_PLANNED_NODE, node,
	                         DRAKE_ANNOTATION_GANG, w->gang, DRAKE_ANNOTATION_GANG_SIZE, size,
	                         DRAKE_ANNOTATION_GANG_MIN, min);
	add_share(plan, pod, w);
	if (!json_is_object(ann)) {
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
	json_array_append_new(ops, json_pack("{s:s,s:s}", "op", "remove", "path", gate));
	char *out = json_dumps(ops, JSON_COMPACT);
	json_decref(ops);
	return out;
}

char *admit_waiting_json(const struct admit_note *notes, size_t n)
{
	json_t *jobs = json_array();
	for (size_t i = 0; jobs && i < n; i++)
		json_array_append_new(jobs,
		                      json_pack("{s:s,s:s,s:s}", "job", notes[i].key, "status",
		                                notes[i].status, "waitsFor", notes[i].why));
	json_t *root = jobs ? json_pack("{s:o}", "jobs", jobs) : NULL;
	char *out = root ? json_dumps(root, JSON_COMPACT) : NULL;
	json_decref(root);
	return out;
}
