/*
 * admit.c - one admission round over every drake-managed TFJob (see
 * admit.h). The policy itself is gang/'s (drake_admit, drake_plan_gang);
 * this file gathers its inputs from the caches and turns decisions into
 * waves of pods to ungate.
 *
 * A job's gang is its PS, its chief (the Chief or legacy Master replica:
 * the job's coordinator, without which it cannot make progress) and its
 * initial workers. Evaluators are not part of it: they are outside TF's
 * training cluster and the reconciler starts them at once.
 *
 * A round first repairs running jobs: a PS, chief or initial worker
 * recreated after a failure waits behind its gate like any new pod, and is
 * planned on its own (a wave of just the replacements) before any new job,
 * so a running gang gets its member back ahead of the queue. Then new jobs
 * are admitted in FIFO order with backfill.
 */
#include "reconciler/admit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gang/protocol.h"
#include "gang/vgpu.h"
#include "kube/cache.h"
#include "kube/object.h"
#include "reconciler/tfjob.h"

/* A job's pods as admission sees them. */
enum pod_state { POD_MISSING, POD_WAITING, POD_PLACED };

/* What a round knows about one job. */
struct candidate {
	struct tfjob job;
	char key[320];               /* "ns/name": FIFO tie-break and messages */
	int *ps_idx, *c_idx, *w_idx; /* the waiting PS, chief and worker indexes */
	int n_ps_idx, n_c_idx, n_w_idx;
	bool repair;    /* some of its pods are placed already */
	char gang[128]; /* with repair: the wave its placed pods belong to */
	int gang_size;
	struct drake_admission_entry entry;
};

struct collect_ctx {
	const struct kube_cache *pods;
	struct drake_cluster *c;
	struct candidate *cand;
	size_t n, cap;
	struct admit_waiting *invalid;
	size_t n_invalid;
	drake_err err;
};

static enum pod_state pod_state(const struct kube_cache *pods, const struct tfjob *job,
                                enum tf_rtype t, int i)
{
	char name[254];
	if (tf_replica_name(job, t, i, name, sizeof(name)) != DRAKE_OK)
		return POD_MISSING;
	struct json_t *pod = kube_cache_get(pods, job->ns, name);
	struct kube_meta m;
	if (!pod || kube_obj_meta(pod, &m) != DRAKE_OK || m.deleting ||
	    strcmp(m.owner_uid ? m.owner_uid : "", job->uid) != 0)
		return POD_MISSING;
	const char *phase = kube_obj_str(pod, "status.phase");
	bool unscheduled = (!m.node_name || !*m.node_name) && (!phase || !strcmp(phase, "Pending"));
	return unscheduled && !kube_obj_annotation(pod, DRAKE_ANNOTATION_PLANNED_NODE) ? POD_WAITING
	                                                                               : POD_PLACED;
}

/* The type and index of member i of a gang of n_ps PS, n_chief chiefs and
 * workers, in wave order: PS first, then the chief, then the workers. */
static enum tf_rtype member(int i, int n_ps, int n_chief, int *index)
{
	if (i < n_ps) {
		*index = i;
		return TF_PS;
	}
	if (i < n_ps + n_chief) {
		*index = i - n_ps;
		return TF_CHIEF;
	}
	*index = i - n_ps - n_chief;
	return TF_WORKER;
}

/* The wave a job's placed pods belong to (gang id and size), if any. */
static void current_wave(const struct kube_cache *pods, const struct tfjob *job,
                         const struct drake_gang_req *req, char *gang, size_t len, int *size)
{
	for (int i = 0; i < req->n_ps + req->n_chief + req->want_workers; i++) {
		char name[254];
		int k;
		enum tf_rtype t = member(i, req->n_ps, req->n_chief, &k);
		if (tf_replica_name(job, t, k, name, sizeof(name)) != DRAKE_OK)
			continue;
		struct json_t *pod = kube_cache_get(pods, job->ns, name);
		const char *g = pod ? kube_obj_annotation(pod, DRAKE_ANNOTATION_GANG) : NULL;
		const char *sz = pod ? kube_obj_annotation(pod, DRAKE_ANNOTATION_GANG_SIZE) : NULL;
		if (g && sz && atoi(sz) > 0 && strlen(g) < len) {
			snprintf(gang, len, "%s", g);
			*size = atoi(sz);
			return;
		}
	}
}

static drake_err job_request(struct drake_cluster *c, const struct tfjob *job,
                             struct drake_gang_req *req, char *msg, size_t msglen)
{
	memset(req, 0, sizeof(*req));
	const struct tf_replica_spec *ps = &job->rs[TF_PS], *w = &job->rs[TF_WORKER];
	const struct tf_replica_spec *chief = &job->rs[TF_CHIEF]; /* Chief or Master */
	req->n_ps = ps->present ? ps->replicas : 0;
	req->n_chief = chief->present && chief->replicas > 0 ? 1 : 0;
	req->min_workers = job->min_instances;
	int want = w->present ? w->replicas : 0;
	if (want < job->min_instances)
		want = job->min_instances;
	if (want > job->max_instances)
		want = job->max_instances;
	req->want_workers = want;
	/* New vGPUs are named after the job, so its plans name them alike. */
	req->vgpu_seed = drake_vgpu_seed(job->uid);
	drake_err e = DRAKE_OK;
	if (req->n_ps)
		e = admit_template_requests(ps->tmpl, &c->names, &req->ps, msg, msglen);
	if (!e && req->n_ps)
		e = admit_template_share(ps->tmpl, &req->ps_share, msg, msglen);
	if (!e && want)
		e = admit_template_requests(w->tmpl, &c->names, &req->worker, msg, msglen);
	if (!e && want)
		e = admit_template_share(w->tmpl, &req->worker_share, msg, msglen);
	if (!e && req->n_chief)
		e = admit_template_requests(chief->tmpl, &c->names, &req->chief, msg, msglen);
	if (!e && req->n_chief)
		e = admit_template_share(chief->tmpl, &req->chief_share, msg, msglen);
	return e;
}

static void note(struct admit_waiting *w, const struct tfjob *job, enum drake_admit_status st,
                 const char *why)
{
	snprintf(w->ns, sizeof(w->ns), "%s", job->ns);
	snprintf(w->job, sizeof(w->job), "%s", job->name);
	w->status = st;
	snprintf(w->why, sizeof(w->why), "%s", why);
}

/* Indexes of type t in [0, n) that wait; false when one is missing. */
static bool waiting_indexes(const struct kube_cache *pods, const struct tfjob *job, enum tf_rtype t,
                            int n, int **out, int *count)
{
	*out = calloc((size_t)(n ? n : 1), sizeof(int));
	*count = 0;
	if (!*out)
		return false;
	for (int i = 0; i < n; i++) {
		enum pod_state s = pod_state(pods, job, t, i);
		if (s == POD_MISSING)
			return false; /* being created or replaced: next round */
		if (s == POD_WAITING)
			(*out)[(*count)++] = i;
	}
	return true;
}

static bool collect(struct json_t *obj, void *arg)
{
	struct collect_ctx *x = arg;
	if (x->n == x->cap) {
		size_t cap = x->cap ? x->cap * 2 : 16;
		struct candidate *c = realloc(x->cand, cap * sizeof(*c));
		struct admit_waiting *inv = realloc(x->invalid, cap * sizeof(*inv));
		if (c)
			x->cand = c;
		if (inv)
			x->invalid = inv;
		if (!c || !inv) {
			x->err = DRAKE_ENOMEM;
			return false;
		}
		x->cap = cap;
	}
	struct candidate *cd = &x->cand[x->n];
	memset(cd, 0, sizeof(*cd));
	bool managed;
	char msg[DRAKE_WHY_MAX];
	if (tfjob_decode(obj, &cd->job, &managed, msg, sizeof(msg)) != DRAKE_OK || !managed ||
	    cd->job.suspend)
		return true; /* the reconciler reports invalid jobs itself */
	struct drake_admission_entry *e = &cd->entry;
	if (job_request(x->c, &cd->job, &e->req, msg, sizeof(msg)) != DRAKE_OK) {
		note(&x->invalid[x->n_invalid++], &cd->job, DRAKE_ADMIT_INVALID, msg);
		return true;
	}
	bool complete =
	    waiting_indexes(x->pods, &cd->job, TF_PS, e->req.n_ps, &cd->ps_idx, &cd->n_ps_idx) &&
	    waiting_indexes(x->pods, &cd->job, TF_CHIEF, e->req.n_chief, &cd->c_idx,
	                    &cd->n_c_idx) &&
	    waiting_indexes(x->pods, &cd->job, TF_WORKER, e->req.want_workers, &cd->w_idx,
	                    &cd->n_w_idx);
	int waiting = cd->n_ps_idx + cd->n_c_idx + cd->n_w_idx;
	if (!complete || waiting == 0) {
		free(cd->ps_idx);
		free(cd->c_idx);
		free(cd->w_idx);
		return true; /* pods still being created, or nothing to place */
	}
	/* Every PS, chief and initial worker waiting: a new job. Some of
	 * them: a running job whose lost members came back. */
	cd->repair = waiting < e->req.n_ps + e->req.n_chief + e->req.want_workers;
	if (cd->repair)
		current_wave(x->pods, &cd->job, &e->req, cd->gang, sizeof(cd->gang),
		             &cd->gang_size);
	snprintf(cd->key, sizeof(cd->key), "%s/%s", cd->job.ns, cd->job.name);
	e->name = cd->key;
	e->created = admit_created(obj);
	x->n++;
	return true;
}

/* A wave of the candidate's waiting pods, placed by plan. */
static drake_err make_wave(const struct drake_cluster *c, const struct candidate *cd,
                           const struct drake_plan *plan, int min, long now_s, struct admit_wave *w)
{
	memset(w, 0, sizeof(*w));
	snprintf(w->ns, sizeof(w->ns), "%s", cd->job.ns);
	snprintf(w->job, sizeof(w->job), "%s", cd->job.name);
	snprintf(w->uid, sizeof(w->uid), "%s", cd->job.uid);
	w->n_ps = plan->n_ps;
	w->n_chief = plan->n_chief;
	w->n_workers = plan->n_workers;
	int n = w->n_ps + w->n_chief + w->n_workers;
	w->min = min;
	/* A repair joins the wave its job's placed pods belong to, so the
	 * barrier counts them (bound, or still held because this very pod's
	 * ungating was lost) and completes that wave; only a job with no wave
	 * on record gets a new one. */
	if (cd->repair && cd->gang[0]) {
		snprintf(w->gang, sizeof(w->gang), "%s", cd->gang);
		w->size = cd->gang_size;
	} else {
		snprintf(w->gang, sizeof(w->gang), "%s.%ld", cd->job.uid, now_s);
		w->size = n;
	}
	w->n_pods = n;
	w->pods = calloc((size_t)(n ? n : 1), sizeof(*w->pods));
	if (!w->pods)
		return DRAKE_ENOMEM;
	const struct drake_gang_req *req = &cd->entry.req;
	for (int i = 0; i < n; i++) {
		int k;
		enum tf_rtype t = member(i, w->n_ps, w->n_chief, &k);
		int idx, node;
		const struct drake_vgpu_pick *pick;
		const struct drake_share *share;
		if (t == TF_PS) {
			idx = cd->ps_idx[k];
			node = plan->ps_node[k];
			pick = plan->ps_vgpu ? &plan->ps_vgpu[k] : NULL;
			share = &req->ps_share;
		} else if (t == TF_CHIEF) {
			idx = cd->c_idx[k];
			node = plan->chief_node;
			pick = plan->chief_vgpu.id[0] ? &plan->chief_vgpu : NULL;
			share = &req->chief_share;
		} else {
			idx = cd->w_idx[k];
			node = plan->worker_node[k];
			pick = plan->worker_vgpu ? &plan->worker_vgpu[k] : NULL;
			share = &req->worker_share;
		}
		if (tf_replica_name(&cd->job, t, idx, w->pods[i].name, sizeof(w->pods[i].name)) !=
		    DRAKE_OK)
			return DRAKE_EINVAL;
		snprintf(w->pods[i].node, sizeof(w->pods[i].node), "%s", c->nodes[node].name);
		if (pick) {
			w->pods[i].share = *share;
			snprintf(w->pods[i].gpuid, sizeof(w->pods[i].gpuid), "%s", pick->id);
		}
	}
	return DRAKE_OK;
}

/* The gang-min annotation: the pods a job cannot run without. */
static int gang_min(const struct drake_gang_req *req)
{
	return req->n_ps + req->n_chief + req->min_workers;
}

static int by_fifo(const void *a, const void *b)
{
	const struct candidate *x = a, *y = b;
	if (x->entry.created != y->entry.created)
		return x->entry.created < y->entry.created ? -1 : 1;
	return strcmp(x->key, y->key);
}

static drake_err add_wave(struct admit_result *out, size_t cap, const struct drake_cluster *c,
                          const struct candidate *cd, const struct drake_plan *plan, int min,
                          long now_s)
{
	if (out->n_waves == cap)
		return DRAKE_ENOMEM;
	drake_err e = make_wave(c, cd, plan, min, now_s, &out->waves[out->n_waves]);
	out->n_waves++; /* counted even on failure, so release frees its pods */
	return e;
}

/* Repairs first: the replacements of each running job, planned alone. */
static drake_err repair(struct drake_cluster *c, struct collect_ctx *x, struct admit_result *out,
                        long now_s)
{
	for (size_t i = 0; i < x->n; i++) {
		struct candidate *cd = &x->cand[i];
		if (!cd->repair)
			continue;
		struct drake_gang_req req = cd->entry.req;
		req.n_ps = cd->n_ps_idx;
		req.n_chief = cd->n_c_idx;
		req.min_workers = req.want_workers = cd->n_w_idx;
		struct drake_plan plan;
		char why[DRAKE_WHY_MAX];
		drake_err e = drake_plan_gang(c, &req, &plan, why, sizeof(why));
		if (e == DRAKE_ENOMEM)
			return e;
		if (e) {
			note(&out->waiting[out->n_waiting++], &cd->job,
			     e == DRAKE_ELIMIT ? DRAKE_ADMIT_NEVER : DRAKE_ADMIT_WAITING, why);
			continue;
		}
		drake_plan_charge(c, &req, &plan, 1);
		e = add_wave(out, x->n, c, cd, &plan, gang_min(&cd->entry.req), now_s);
		drake_plan_release(&plan);
		if (e)
			return e;
	}
	return DRAKE_OK;
}

static drake_err admit_new(struct drake_cluster *c, struct collect_ctx *x,
                           const struct admit_options *opts, struct admit_result *out)
{
	size_t n = 0;
	struct drake_admission_entry *e = calloc(x->n ? x->n : 1, sizeof(*e));
	struct candidate **of = calloc(x->n ? x->n : 1, sizeof(*of));
	drake_err err = e && of ? DRAKE_OK : DRAKE_ENOMEM;
	for (size_t i = 0; !err && i < x->n; i++) /* x->cand is in FIFO order already */
		if (!x->cand[i].repair) {
			e[n] = x->cand[i].entry;
			of[n++] = &x->cand[i];
		}
	struct drake_admission_opts ao = {.backfill = opts->backfill};
	size_t started = 0;
	if (!err)
		err = drake_admit(c, e, n, &ao, &started);
	for (size_t i = 0; !err && i < n; i++) {
		if (e[i].status == DRAKE_ADMIT_STARTED)
			err = add_wave(out, x->n, c, of[i], &e[i].plan, gang_min(&e[i].req),
			               opts->now_s);
		else if (e[i].status != DRAKE_ADMIT_NOT_TRIED || e[i].why[0])
			note(&out->waiting[out->n_waiting++], &of[i]->job, e[i].status, e[i].why);
		else
			note(&out->waiting[out->n_waiting++], &of[i]->job, e[i].status,
			     "behind a job that waits (strict FIFO)");
	}
	if (e)
		drake_admission_release(e, n);
	free(e);
	free(of);
	return err;
}

drake_err admit_round(const struct kube_cache *tfjobs, const struct kube_cache *pods,
                      const struct kube_cache *nodes, const struct admit_options *opts,
                      struct admit_result *out, char *msg, size_t msglen)
{
	memset(out, 0, sizeof(*out));
	struct drake_cluster c;
	drake_cluster_init(&c);
	drake_err e = admit_snapshot(nodes, pods, tfjobs, &c, &out->skipped, msg, msglen);
	struct collect_ctx x = {.pods = pods, .c = &c};
	if (!e) {
		kube_cache_foreach(tfjobs, collect, &x);
		e = x.err;
	}
	if (!e) {
		qsort(x.cand, x.n, sizeof(*x.cand), by_fifo);
		for (size_t i = 0; i < x.n; i++)
			x.cand[i].entry.name = x.cand[i].key; /* qsort moved the keys */
		out->waves = calloc(x.n ? x.n : 1, sizeof(*out->waves));
		out->waiting = calloc(x.n + x.n_invalid + 1, sizeof(*out->waiting));
		if (!out->waves || !out->waiting)
			e = DRAKE_ENOMEM;
	}
	if (!e)
		e = repair(&c, &x, out, opts->now_s);
	if (!e)
		e = admit_new(&c, &x, opts, out);
	for (size_t i = 0; !e && i < x.n_invalid; i++)
		out->waiting[out->n_waiting++] = x.invalid[i];
	for (size_t i = 0; i < x.n; i++) {
		free(x.cand[i].ps_idx);
		free(x.cand[i].c_idx);
		free(x.cand[i].w_idx);
	}
	free(x.cand);
	free(x.invalid);
	drake_cluster_release(&c);
	if (e) {
		if (e == DRAKE_ENOMEM)
			drake_errorf(e, msg, msglen, "out of memory in admission");
		admit_result_release(out);
	}
	return e;
}

void admit_result_release(struct admit_result *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_waves; i++)
		free(r->waves[i].pods);
	free(r->waves);
	free(r->waiting);
	admit_skipped_release(&r->skipped);
	memset(r, 0, sizeof(*r));
}

/* ---- re-planning one member (filter) ---- */

struct near_ctx {
	const char *self;
	const char *const *cand;
	size_t n;
	int *members; /* per candidate: pods of the job bound or planned there */
};

static bool count_near(struct json_t *pod, void *arg)
{
	struct near_ctx *x = arg;
	const char *name = kube_obj_str(pod, "metadata.name");
	if (name && !strcmp(name, x->self))
		return true;
	const char *node = kube_obj_str(pod, "spec.nodeName");
	if (!node || !*node)
		node = kube_obj_annotation(pod, DRAKE_ANNOTATION_PLANNED_NODE);
	for (size_t i = 0; node && i < x->n; i++)
		if (!strcmp(x->cand[i], node))
			x->members[i]++;
	return true;
}

drake_err admit_replan(const struct kube_cache *nodes, const struct kube_cache *pods,
                       const char *ns, const char *name, const char *const *candidates, size_t n,
                       char *node, size_t nodelen, char *why, size_t whylen)
{
	struct json_t *pod = kube_cache_get(pods, ns, name);
	struct kube_meta m;
	if (!pod || kube_obj_meta(pod, &m) != DRAKE_OK)
		return drake_errorf(DRAKE_EINVAL, why, whylen, "pod %s/%s is not in the cache", ns,
		                    name);
	if (kube_obj_annotation(pod, DRAKE_KUBESHARE_GPU_REQUEST))
		return drake_errorf(DRAKE_ESTATE, why, whylen,
		                    "a KubeShare share is not re-planned onto another node");
	struct drake_cluster c;
	drake_cluster_init(&c);
	struct drake_res req;
	int *members = calloc(n ? n : 1, sizeof(*members));
	drake_err e =
	    members ? admit_snapshot(nodes, pods, NULL, &c, NULL, why, whylen) : DRAKE_ENOMEM;
	if (!e)
		e = admit_pod_requests(pod, &c.names, &req, why, whylen);
	if (!e && m.owner_uid) {
		struct near_ctx x = {name, candidates, n, members};
		kube_cache_by_owner(pods, m.owner_uid, count_near, &x);
	}
	int best = -1;
	double best_left = 0;
	for (size_t i = 0; !e && i < n; i++) {
		int k = drake_cluster_find(&c, candidates[i]);
		struct drake_res free_, left;
		if (k < 0 || !c.nodes[k].schedulable)
			continue;
		drake_cluster_free(&c, (size_t)k, &free_);
		if (!drake_res_fits(&req, &free_))
			continue;
		left = free_;
		drake_res_sub(&left, &req);
		double l = drake_res_leftover(&left, &c.nodes[k].alloc);
		if (best < 0 || members[i] > members[best] ||
		    (members[i] == members[best] &&
		     (l < best_left ||
		      (l == best_left && strcmp(candidates[i], candidates[best]) < 0)))) {
			best = (int)i;
			best_left = l;
		}
	}
	if (!e && best < 0)
		e = drake_errorf(DRAKE_ESTATE, why, whylen,
		                 "none of the %zu candidate nodes has room for it beside the other "
		                 "gangs' reservations",
		                 n);
	if (!e)
		snprintf(node, nodelen, "%s", candidates[best]);
	free(members);
	drake_cluster_release(&c);
	return e;
}
