/*
 * admit.c - one admission round over every drake-managed TFJob (see
 * admit.h). The policy itself is gang/'s (drake_admit, drake_plan_gang);
 * this file gathers its inputs from the caches and turns started jobs into
 * waves of pods to ungate.
 */
#include "reconciler/admit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/cache.h"
#include "kube/object.h"
#include "reconciler/tfjob.h"

/* What a round knows about one job it may admit. */
struct candidate {
	struct tfjob job;
	char key[320]; /* "ns/name": FIFO tie-break and messages */
};

struct collect_ctx {
	const struct kube_cache *pods;
	struct drake_cluster *c;
	struct candidate *cand;
	struct drake_admission_entry *entries;
	size_t n, cap;
	drake_err err;
};

/* A pod of the job exists, has not started, and still waits for its plan. */
static bool pod_waiting(const struct kube_cache *pods, const struct tfjob *job, enum tf_rtype t,
                        int i)
{
	char name[254];
	if (tf_replica_name(job, t, i, name, sizeof(name)) != DRAKE_OK)
		return false;
	struct json_t *pod = kube_cache_get(pods, job->ns, name);
	struct kube_meta m;
	if (!pod || kube_obj_meta(pod, &m) != DRAKE_OK || m.deleting ||
	    strcmp(m.owner_uid ? m.owner_uid : "", job->uid) != 0)
		return false;
	const char *phase = kube_obj_str(pod, "status.phase");
	return (!m.node_name || !*m.node_name) && (!phase || !strcmp(phase, "Pending")) &&
	       !kube_obj_annotation(pod, "drake.dev/planned-node");
}

static drake_err job_request(struct drake_cluster *c, const struct tfjob *job,
                             struct drake_gang_req *req, char *msg, size_t msglen)
{
	memset(req, 0, sizeof(*req));
	const struct tf_replica_spec *ps = &job->rs[TF_PS], *w = &job->rs[TF_WORKER];
	req->n_ps = ps->present ? ps->replicas : 0;
	req->min_workers = job->min_instances;
	int want = w->present ? w->replicas : 0;
	if (want < job->min_instances)
		want = job->min_instances;
	if (want > job->max_instances)
		want = job->max_instances;
	req->want_workers = want;
	drake_err e = DRAKE_OK;
	if (req->n_ps)
		e = admit_template_requests(ps->tmpl, &c->names, &req->ps, msg, msglen);
	if (!e && want)
		e = admit_template_requests(w->tmpl, &c->names, &req->worker, msg, msglen);
	return e;
}

static bool collect(struct json_t *obj, void *arg)
{
	struct collect_ctx *x = arg;
	if (x->n == x->cap) {
		size_t cap = x->cap ? x->cap * 2 : 16;
		struct candidate *c = realloc(x->cand, cap * sizeof(*c));
		if (c)
			x->cand = c;
		struct drake_admission_entry *e = c ? realloc(x->entries, cap * sizeof(*e)) : NULL;
		if (!c || !e) {
			x->err = DRAKE_ENOMEM;
			return false;
		}
		x->entries = e;
		x->cap = cap;
	}
	struct candidate *cd = &x->cand[x->n];
	bool managed;
	char msg[256];
	if (tfjob_decode(obj, &cd->job, &managed, msg, sizeof(msg)) != DRAKE_OK || !managed ||
	    cd->job.suspend)
		return true;
	struct drake_admission_entry *e = &x->entries[x->n];
	memset(e, 0, sizeof(*e));
	if (job_request(x->c, &cd->job, &e->req, msg, sizeof(msg)) != DRAKE_OK)
		return true; /* the reconciler reports invalid specs itself */
	/* Waiting means: every PS and every initial worker exists and waits
	 * for its plan (a job with any of them planned or running has been
	 * admitted already). */
	for (int i = 0; i < e->req.n_ps; i++)
		if (!pod_waiting(x->pods, &cd->job, TF_PS, i))
			return true;
	for (int i = 0; i < e->req.want_workers; i++)
		if (!pod_waiting(x->pods, &cd->job, TF_WORKER, i))
			return true;
	snprintf(cd->key, sizeof(cd->key), "%s/%s", cd->job.ns, cd->job.name);
	e->name = cd->key;
	e->created = admit_created(obj);
	x->n++;
	return true;
}

static drake_err make_wave(const struct drake_cluster *c, const struct candidate *cd,
                           const struct drake_admission_entry *e, long now_s, struct admit_wave *w)
{
	memset(w, 0, sizeof(*w));
	snprintf(w->ns, sizeof(w->ns), "%s", cd->job.ns);
	snprintf(w->job, sizeof(w->job), "%s", cd->job.name);
	snprintf(w->uid, sizeof(w->uid), "%s", cd->job.uid);
	snprintf(w->gang, sizeof(w->gang), "%s.%ld", cd->job.uid, now_s);
	w->n_ps = e->plan.n_ps;
	w->n_workers = e->plan.n_workers;
	w->size = w->n_ps + w->n_workers;
	w->min = w->n_ps + e->req.min_workers;
	w->pods = calloc((size_t)(w->size ? w->size : 1), sizeof(*w->pods));
	if (!w->pods)
		return DRAKE_ENOMEM;
	for (int i = 0; i < w->size; i++) {
		bool ps = i < w->n_ps;
		int idx = ps ? i : i - w->n_ps;
		int node = ps ? e->plan.ps_node[idx] : e->plan.worker_node[idx];
		if (tf_replica_name(&cd->job, ps ? TF_PS : TF_WORKER, idx, w->pods[i].name,
		                    sizeof(w->pods[i].name)) != DRAKE_OK)
			return DRAKE_EINVAL;
		snprintf(w->pods[i].node, sizeof(w->pods[i].node), "%s", c->nodes[node].name);
	}
	return DRAKE_OK;
}

drake_err admit_round(const struct kube_cache *tfjobs, const struct kube_cache *pods,
                      const struct kube_cache *nodes, const struct admit_options *opts,
                      struct admit_result *out, char *msg, size_t msglen)
{
	memset(out, 0, sizeof(*out));
	struct drake_cluster c;
	drake_cluster_init(&c);
	drake_err e = admit_snapshot(nodes, pods, &c, msg, msglen);
	struct collect_ctx x = {.pods = pods, .c = &c};
	if (!e) {
		kube_cache_foreach(tfjobs, collect, &x);
		e = x.err;
	}
	if (!e && x.n) {
		/* FIFO order without moving entries away from their candidates:
		 * sort an index, then admit through a reordered copy. */
		struct drake_admission_entry *ordered = malloc(x.n * sizeof(*ordered));
		size_t *from = malloc(x.n * sizeof(*from));
		if (!ordered || !from) {
			free(ordered);
			free(from);
			e = DRAKE_ENOMEM;
		} else {
			memcpy(ordered, x.entries, x.n * sizeof(*ordered));
			drake_admission_sort(ordered, x.n);
			for (size_t i = 0; i < x.n; i++)
				for (size_t j = 0; j < x.n; j++)
					if (ordered[i].name == x.entries[j].name)
						from[i] = j;
			struct drake_admission_opts ao = {.backfill = opts->backfill};
			size_t started = 0;
			e = drake_admit(&c, ordered, x.n, &ao, &started);
			out->waves = calloc(started ? started : 1, sizeof(*out->waves));
			out->waiting = calloc(x.n, sizeof(*out->waiting));
			if (!e && (!out->waves || !out->waiting))
				e = DRAKE_ENOMEM;
			for (size_t i = 0; !e && i < x.n; i++) {
				const struct candidate *cd = &x.cand[from[i]];
				if (ordered[i].status == DRAKE_ADMIT_STARTED) {
					e = make_wave(&c, cd, &ordered[i], opts->now_s,
					              &out->waves[out->n_waves]);
					out->n_waves++;
					continue;
				}
				struct admit_waiting *wt = &out->waiting[out->n_waiting++];
				snprintf(wt->ns, sizeof(wt->ns), "%s", cd->job.ns);
				snprintf(wt->job, sizeof(wt->job), "%s", cd->job.name);
				wt->status = ordered[i].status;
				snprintf(wt->why, sizeof(wt->why), "%s", ordered[i].why);
			}
			drake_admission_release(ordered, x.n);
			free(ordered);
			free(from);
		}
	}
	free(x.cand);
	free(x.entries);
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
	memset(r, 0, sizeof(*r));
}
