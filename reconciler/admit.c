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

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gang/protocol.h"
#include "gang/refusal.h"
#include "gang/replan.h"
#include "gang/scale.h"
#include "gang/vgpu.h"
#include "kube/cache.h"
#include "kube/object.h"
#include "kube/pod.h"
#include "reconciler/migration.h"
#include "reconciler/scale.h"
#include "reconciler/tfjob.h"

/* A job's pods as admission sees them. */
enum pod_state { POD_MISSING, POD_WAITING, POD_PLACED };

/* What a round knows about one job. */
struct candidate {
	struct tfjob job;
	char key[320];               /* "ns/name": FIFO tie-break and messages */
	int *ps_idx, *c_idx, *w_idx; /* the waiting PS, chief and worker indexes */
	int n_ps_idx, n_c_idx, n_w_idx;
	bool repair;    /* some of its pods are placed already, some wait */
	bool steady;    /* every member placed: a running job scaling may change */
	char gang[128]; /* with repair: the wave its placed pods belong to */
	int gang_size;
	unsigned char member[TF_MAX_REPLICAS]; /* its worker indexes that are members */
	int n_members;
	struct tf_scale scale; /* drake.dev/scale when present and valid */
	struct tf_move move;   /* drake.dev/migrations' move in flight, if any */
	int strays[8];         /* placed workers the record does not list */
	int n_strays;
	char scale_why[DRAKE_WHY_MAX];
	struct drake_admission_entry entry;
	unsigned char *mask[3];      /* the PS', workers' and chief's node masks (planner.h) */
	int n_bound;                 /* with steady: its members bound to a node */
	char unbound[DRAKE_WHY_MAX]; /* with steady and none bound: what they wait for */
};

struct collect_ctx {
	const struct admit_options *opts;
	const struct kube_cache *pods, *nodes;
	struct drake_cluster *c;
	struct candidate *cand;
	size_t n, cap;
	struct admit_waiting *invalid;
	size_t n_invalid;
	double next; /* the earliest end of a backoff (wall s), INFINITY: none */
	drake_err err;
};

static enum pod_state pod_state(const struct kube_cache *pods, const struct tfjob *job,
                                enum tf_rtype t, int i)
{
	char name[254];
	if (tf_replica_name(job, t, i, name, sizeof(name)) != DRAKE_OK)
		return POD_MISSING;
	const struct kube_pod *pod = kube_pods_get(pods, job->ns, name);
	struct kube_meta m;
	if (!pod)
		return POD_MISSING;
	kube_pod_meta(pod, &m);
	if (m.deleting || strcmp(m.owner_uid ? m.owner_uid : "", job->uid) != 0)
		return POD_MISSING;
	const char *phase = pod->phase;
	bool unscheduled = (!m.node_name || !*m.node_name) && (!phase || !strcmp(phase, "Pending"));
	return unscheduled && !kube_pod_annotation(pod, DRAKE_ANNOTATION_PLANNED_NODE) ? POD_WAITING
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
		const struct kube_pod *pod = kube_pods_get(pods, job->ns, name);
		const char *g = pod ? kube_pod_annotation(pod, DRAKE_ANNOTATION_GANG) : NULL;
		const char *sz = pod ? kube_pod_annotation(pod, DRAKE_ANNOTATION_GANG_SIZE) : NULL;
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

/* Indexes of type t in [0, n) (workers: the members among them) that wait;
 * false when one is missing. */
static bool waiting_indexes(const struct kube_cache *pods, const struct tfjob *job, enum tf_rtype t,
                            int n, const unsigned char *member, int **out, int *count)
{
	*out = calloc((size_t)(n ? n : 1), sizeof(int));
	*count = 0;
	if (!*out)
		return false;
	for (int i = 0; i < n; i++) {
		if (member && !member[i])
			continue;
		enum pod_state s = pod_state(pods, job, t, i);
		if (s == POD_MISSING)
			return false; /* being created or replaced: next round */
		if (s == POD_WAITING)
			(*out)[(*count)++] = i;
	}
	return true;
}

/* Worker i is placed and neither Succeeded nor Failed. */
static bool placed_live(const struct kube_cache *pods, const struct tfjob *job, int i)
{
	char name[254];
	if (tf_replica_name(job, TF_WORKER, i, name, sizeof(name)) != DRAKE_OK)
		return false;
	const struct kube_pod *pod = kube_pods_get(pods, job->ns, name);
	const char *phase = pod ? pod->phase : NULL;
	return !phase || (strcmp(phase, "Succeeded") && strcmp(phase, "Failed"));
}

/* Workers the wave that admitted the job holds: its gang size less its PS
 * and chief, read from any placed member; -1 when none is placed. */
static int admitted_workers(const struct kube_cache *pods, const struct tfjob *job,
                            const struct drake_gang_req *req, char *gang, size_t gang_len)
{
	for (int t = 0; t < TF_NTYPES; t++) {
		if (t != TF_PS && t != TF_CHIEF && t != TF_WORKER)
			continue;
		int n = t == TF_WORKER  ? job->max_instances
		        : t == TF_CHIEF ? req->n_chief
		                        : req->n_ps;
		for (int i = 0; i < n; i++) {
			if (pod_state(pods, job, (enum tf_rtype)t, i) != POD_PLACED)
				continue;
			char name[254];
			if (tf_replica_name(job, (enum tf_rtype)t, i, name, sizeof(name)) !=
			    DRAKE_OK)
				continue;
			const struct kube_pod *pod = kube_pods_get(pods, job->ns, name);
			const char *sz = kube_pod_annotation(pod, DRAKE_ANNOTATION_GANG_SIZE);
			const char *g = kube_pod_annotation(pod, DRAKE_ANNOTATION_GANG);
			if (!sz || !g)
				continue;
			snprintf(gang, gang_len, "%s", g);
			return atoi(sz) - req->n_ps - req->n_chief;
		}
	}
	return -1;
}

/* The job's member workers: drake.dev/scale when it is there and valid,
 * else the admitting wave's workers, else (a new job) its initial ones. */
static void members(struct collect_ctx *x, const struct json_t *obj, struct candidate *cd)
{
	const struct tfjob *job = &cd->job;
	const struct drake_gang_req *req = &cd->entry.req;
	char gang[128] = "";
	int n = admitted_workers(x->pods, job, req, gang, sizeof(gang));
	drake_err e = tf_scale_decode(obj, job, &cd->scale, cd->scale_why, sizeof(cd->scale_why));
	if (e == DRAKE_OK && cd->scale.present && gang[0] && !strcmp(cd->scale.gang, gang)) {
		memcpy(cd->member, cd->scale.member, sizeof(cd->member));
		cd->n_members = cd->scale.n;
		return;
	}
	if (e != DRAKE_EINVAL)
		cd->scale_why[0] = '\0';
	/* none, or the record of an earlier wave: the job was admitted again */
	tf_scale_release(&cd->scale);
	memset(&cd->scale, 0, sizeof(cd->scale));
	if (n < 0)
		n = req->want_workers;
	if (n < job->min_instances)
		n = job->min_instances;
	if (n > job->max_instances)
		n = job->max_instances;
	memset(cd->member, 0, sizeof(cd->member));
	for (int i = 0; i < n && i < TF_MAX_REPLICAS; i++)
		cd->member[i] = 1;
	cd->n_members = n;
}

/* A job kube-scheduler refused that is still within its backoff, with
 * nothing it may wait for changed since: noted as waiting, with why. */
static bool backing_off(struct collect_ctx *x, const struct candidate *cd)
{
	const struct tf_refusal *f = &cd->job.refusal;
	if (f->tries <= 0)
		return false;
	struct drake_refusal_record rec = {f->tries, f->at_s, f->until_s};
	double now = x->opts ? (double)x->opts->now_s : 0;
	double changed =
	    x->opts && x->opts->changed ? x->opts->changed(x->opts->changed_arg, cd->job.ns) : 0;
	if (drake_refusal_may_retry(&rec, now, changed))
		return false;
	if (f->until_s < x->next)
		x->next = f->until_s;
	char why[DRAKE_WHY_MAX];
	int n = snprintf(why, sizeof(why),
	                 "kube-scheduler cannot place %s: %s (refused %d time%s in a row; tried "
	                 "again in %.0fs, or sooner when a node or a PersistentVolumeClaim in %s "
	                 "changes)",
	                 f->pod, f->why, f->tries, f->tries == 1 ? "" : "s", f->until_s - now,
	                 cd->job.ns);
	if (n >= (int)sizeof(why)) /* cut: kube-scheduler's message was long */
		memcpy(why + sizeof(why) - 4, "...", 4);
	struct admit_waiting *w = &x->invalid[x->n_invalid++];
	note(w, &cd->job, DRAKE_ADMIT_WAITING, why);
	w->quiet = true;
	return true;
}

/* How many of a steady job's members are bound to a node. With none,
 * cd->unbound says what they wait for, with kube-scheduler's own words
 * when it refused one. */
static int bound_members(const struct kube_cache *pods, struct candidate *cd)
{
	const struct drake_gang_req *req = &cd->entry.req;
	int bound = 0, admitted = 0;
	const char *said = NULL, *who = NULL;
	for (int t = 0; t < TF_NTYPES; t++) {
		if (t != TF_PS && t != TF_CHIEF && t != TF_WORKER)
			continue;
		int n = t == TF_WORKER  ? cd->job.max_instances
		        : t == TF_CHIEF ? req->n_chief
		                        : req->n_ps;
		for (int i = 0; i < n; i++) {
			char name[254];
			if ((t == TF_WORKER && (i >= TF_MAX_REPLICAS || !cd->member[i])) ||
			    tf_replica_name(&cd->job, (enum tf_rtype)t, i, name, sizeof(name)) !=
			        DRAKE_OK)
				continue;
			const struct kube_pod *pod = kube_pods_get(pods, cd->job.ns, name);
			if (!pod)
				continue;
			if (pod->node_name && *pod->node_name) {
				bound++;
				continue;
			}
			admitted++;
			const struct kube_condition *c = kube_pod_condition_of(pod, "PodScheduled");
			if (!said && c && c->reason && !strcmp(c->reason, "Unschedulable") &&
			    c->message) {
				said = c->message;
				who = pod->name;
			}
		}
	}
	if (bound == 0 && said)
		snprintf(cd->unbound, sizeof(cd->unbound),
		         "admitted as gang %s; kube-scheduler has not placed %s: %.*s", cd->gang,
		         who, drake_refusal_summary_len(said), said);
	else if (bound == 0)
		snprintf(cd->unbound, sizeof(cd->unbound),
		         "admitted as gang %s; its %d members wait for kube-scheduler to bind them",
		         cd->gang, admitted);
	return bound;
}

static void free_masks(struct candidate *cd)
{
	for (int k = 0; k < 3; k++) {
		free(cd->mask[k]);
		cd->mask[k] = NULL;
	}
	cd->entry.req.ps_ok = cd->entry.req.worker_ok = cd->entry.req.chief_ok = NULL;
}

/* The node mask of each role whose template has node rules (a node
 * selector, a required node affinity, tolerations); the others plan on
 * every schedulable node. */
static drake_err node_masks(struct collect_ctx *x, struct candidate *cd, char *msg, size_t msglen)
{
	const enum tf_rtype types[3] = {TF_PS, TF_WORKER, TF_CHIEF};
	const unsigned char **ok[3] = {&cd->entry.req.ps_ok, &cd->entry.req.worker_ok,
	                               &cd->entry.req.chief_ok};
	for (int k = 0; k < 3; k++) {
		const struct tf_replica_spec *rs = &cd->job.rs[types[k]];
		if (!rs->present || !rs->tmpl || !x->nodes)
			continue;
		struct admit_node_rules rules;
		char why[DRAKE_WHY_MAX - 64];
		drake_err e = admit_template_node_rules(rs->tmpl, &rules, why, sizeof(why));
		if (e) {
			drake_errorf(e, msg, msglen, "tfReplicaSpecs.%s: %s",
			             tf_rtype_name(types[k]), why);
			return e;
		}
		if (rules.any) {
			cd->mask[k] = malloc(x->c->n + 1);
			e = cd->mask[k] ? admit_node_mask(&rules, x->c, x->nodes, cd->mask[k])
			                : DRAKE_ENOMEM;
			*ok[k] = cd->mask[k];
		}
		admit_node_rules_release(&rules);
		if (e)
			return drake_errorf(e, msg, msglen, "out of memory");
	}
	return DRAKE_OK;
}

static bool collect(struct json_t *obj, void *arg)
{
	struct collect_ctx *x = arg;
	if (x->n + x->n_invalid == x->cap) { /* either list may take this job */
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
	drake_err err = job_request(x->c, &cd->job, &e->req, msg, sizeof(msg));
	if (!err)
		err = node_masks(x, cd, msg, sizeof(msg));
	if (err == DRAKE_ENOMEM) {
		free_masks(cd);
		x->err = err;
		return false;
	}
	if (err) {
		free_masks(cd);
		note(&x->invalid[x->n_invalid++], &cd->job, DRAKE_ADMIT_INVALID, msg);
		return true;
	}
	members(x, obj, cd);
	struct tf_migrations mg;
	char mwhy[DRAKE_WHY_MAX];
	if (tf_migrations_decode(obj, &cd->job, &mg, mwhy, sizeof(mwhy)) == DRAKE_OK)
		cd->move = mg.moving;
	bool complete = waiting_indexes(x->pods, &cd->job, TF_PS, e->req.n_ps, NULL, &cd->ps_idx,
	                                &cd->n_ps_idx) &&
	                waiting_indexes(x->pods, &cd->job, TF_CHIEF, e->req.n_chief, NULL,
	                                &cd->c_idx, &cd->n_c_idx) &&
	                waiting_indexes(x->pods, &cd->job, TF_WORKER, cd->job.max_instances,
	                                cd->member, &cd->w_idx, &cd->n_w_idx);
	int waiting = cd->n_ps_idx + cd->n_c_idx + cd->n_w_idx;
	int total = e->req.n_ps + e->req.n_chief + cd->n_members;
	if (!complete) {
		free(cd->ps_idx);
		free(cd->c_idx);
		free(cd->w_idx);
		free_masks(cd);
		tf_scale_release(&cd->scale);
		return true; /* pods still being created or replaced: next round */
	}
	/* Every PS, chief and member worker waiting: a new job. Some of them:
	 * a running job whose lost members came back, or that grew. None: a
	 * running job, which scaling may change. */
	cd->repair = waiting > 0 && waiting < total;
	cd->steady = waiting == 0;
	for (int i = 0; cd->scale.present && i < cd->job.max_instances && cd->n_strays < 8; i++)
		if (!cd->member[i] && pod_state(x->pods, &cd->job, TF_WORKER, i) == POD_PLACED &&
		    placed_live(x->pods, &cd->job, i))
			cd->strays[cd->n_strays++] = i;
	if (!cd->repair && !cd->steady && backing_off(x, cd)) {
		free(cd->ps_idx);
		free(cd->c_idx);
		free(cd->w_idx);
		free_masks(cd);
		tf_scale_release(&cd->scale);
		return true;
	}
	if (cd->repair || cd->steady)
		current_wave(x->pods, &cd->job, &e->req, cd->gang, sizeof(cd->gang),
		             &cd->gang_size);
	if (cd->steady)
		cd->n_bound = bound_members(x->pods, cd);
	snprintf(cd->key, sizeof(cd->key), "%s/%s", cd->job.ns, cd->job.name);
	e->name = cd->key;
	e->created = admit_created(obj);
	x->n++;
	return true;
}

/* A wave of the candidate's waiting pods, placed by plan. */
static drake_err make_wave(const struct drake_cluster *c, const struct candidate *cd,
                           const struct drake_plan *plan, const struct drake_roles *min, long now_s,
                           struct admit_wave *w)
{
	memset(w, 0, sizeof(*w));
	snprintf(w->ns, sizeof(w->ns), "%s", cd->job.ns);
	snprintf(w->job, sizeof(w->job), "%s", cd->job.name);
	snprintf(w->uid, sizeof(w->uid), "%s", cd->job.uid);
	w->n_ps = plan->n_ps;
	w->n_chief = plan->n_chief;
	w->n_workers = plan->n_workers;
	int n = w->n_ps + w->n_chief + w->n_workers;
	w->min_roles = *min;
	w->min = drake_roles_total(min);
	/* A repair joins the wave its job's placed pods belong to, so the
	 * barrier counts them (bound, or still held because this very pod's
	 * ungating was lost) and completes that wave; only a job with no wave
	 * on record gets a new one. */
	if (cd->repair && cd->gang[0]) {
		snprintf(w->gang, sizeof(w->gang), "%s", cd->gang);
		/* Every member now, scaling included: the barrier releases once
		 * those bound before and these are all there. */
		w->size = cd->entry.req.n_ps + cd->entry.req.n_chief + cd->n_members;
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
		w->pods[i].role = t == TF_PS      ? DRAKE_ROLE_PS
		                  : t == TF_CHIEF ? DRAKE_ROLE_CHIEF
		                                  : DRAKE_ROLE_WORKER;
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

/* The pods a job cannot run without, per role: every PS, the chief,
 * min-instances workers. */
static struct drake_roles gang_min(const struct drake_gang_req *req)
{
	struct drake_roles r = {0};
	r.n[DRAKE_ROLE_PS] = req->n_ps;
	r.n[DRAKE_ROLE_CHIEF] = req->n_chief;
	r.n[DRAKE_ROLE_WORKER] = req->min_workers;
	return r;
}

static int by_fifo(const void *a, const void *b)
{
	const struct candidate *x = a, *y = b;
	if (x->entry.created != y->entry.created)
		return x->entry.created < y->entry.created ? -1 : 1;
	return strcmp(x->key, y->key);
}

static drake_err add_wave(struct admit_result *out, size_t cap, const struct drake_cluster *c,
                          const struct candidate *cd, const struct drake_plan *plan,
                          const struct drake_roles *min, long now_s)
{
	if (out->n_waves == cap)
		return DRAKE_ENOMEM;
	drake_err e = make_wave(c, cd, plan, min, now_s, &out->waves[out->n_waves]);
	out->n_waves++; /* counted even on failure, so release frees its pods */
	return e;
}

/* The node recorded for a waiting member: where a migration in flight
 * moves it, or (a worker) where the scale-up that added it chose. */
static const char *hinted_node(const struct candidate *cd, enum tf_rtype t, int index)
{
	if (cd->move.active && cd->move.type == t && cd->move.index == index && cd->move.to[0])
		return cd->move.to;
	return t == TF_WORKER ? tf_scale_place(&cd->scale, index) : NULL;
}

/* One waiting member onto its hinted node if it has room there (charged
 * to c as it goes; -1 when not). */
static int hinted(struct drake_cluster *c, const struct candidate *cd, enum tf_rtype t, int index,
                  const struct drake_res *req)
{
	const char *name = hinted_node(cd, t, index);
	int node = name ? drake_cluster_find(c, name) : -1;
	struct drake_res f;
	if (node >= 0)
		drake_cluster_free(c, (size_t)node, &f);
	if (node < 0 || !c->nodes[node].schedulable || !drake_res_fits(req, &f))
		return -1;
	drake_cluster_charge(c, (size_t)node, req, 1);
	return node;
}

/* Members that wait with a node recorded for each (a scale-up's place, a
 * migration's target) go there while those nodes still have room.
 * ESTATE when any waiting member has no such node or room (the planner
 * then decides), or when a member shares a GPU (its vGPU is the planner's). */
static drake_err planned_hints(struct drake_cluster *c, const struct candidate *cd,
                               const struct drake_gang_req *req, struct drake_plan *plan)
{
	*plan = (struct drake_plan){0};
	if ((!cd->scale.n_place && !cd->move.active) || req->worker_share.milli ||
	    req->ps_share.milli || req->chief_share.milli)
		return DRAKE_ESTATE;
	plan->ps_node = malloc((size_t)(req->n_ps + 1) * sizeof(int));
	plan->worker_node = malloc((size_t)(req->want_workers + 1) * sizeof(int));
	if (!plan->ps_node || !plan->worker_node) {
		drake_plan_release(plan);
		return DRAKE_ENOMEM;
	}
	bool ok = true;
	for (int k = 0; ok && k < req->n_ps; k++)
		ok = (plan->ps_node[plan->n_ps++] =
		          hinted(c, cd, TF_PS, cd->ps_idx[k], &req->ps)) >= 0;
	if (ok && req->n_chief) {
		plan->n_chief = 1;
		ok = (plan->chief_node = hinted(c, cd, TF_CHIEF, cd->c_idx[0], &req->chief)) >= 0;
	}
	for (int k = 0; ok && k < req->want_workers; k++)
		ok = (plan->worker_node[plan->n_workers++] =
		          hinted(c, cd, TF_WORKER, cd->w_idx[k], &req->worker)) >= 0;
	/* give back what was charged: the caller charges the plan */
	for (int k = 0; k < plan->n_ps; k++)
		if (plan->ps_node[k] >= 0)
			drake_cluster_charge(c, (size_t)plan->ps_node[k], &req->ps, -1);
	if (plan->n_chief && plan->chief_node >= 0)
		drake_cluster_charge(c, (size_t)plan->chief_node, &req->chief, -1);
	for (int k = 0; k < plan->n_workers; k++)
		if (plan->worker_node[k] >= 0)
			drake_cluster_charge(c, (size_t)plan->worker_node[k], &req->worker, -1);
	if (!ok) {
		drake_plan_release(plan);
		return DRAKE_ESTATE;
	}
	plan->nodes_spanned =
	    drake_plan_count_nodes(plan->ps_node, plan->n_ps, plan->worker_node, plan->n_workers);
	return DRAKE_OK;
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
		drake_err e = planned_hints(c, cd, &req, &plan);
		if (e == DRAKE_ESTATE)
			e = drake_plan_gang(c, &req, &plan, why, sizeof(why));
		if (e == DRAKE_ENOMEM)
			return e;
		if (e) {
			note(&out->waiting[out->n_waiting++], &cd->job,
			     e == DRAKE_ELIMIT ? DRAKE_ADMIT_NEVER : DRAKE_ADMIT_WAITING, why);
			continue;
		}
		drake_plan_charge(c, &req, &plan, 1);
		struct drake_roles min = gang_min(&cd->entry.req);
		e = add_wave(out, x->n, c, cd, &plan, &min, now_s);
		drake_plan_release(&plan);
		if (e)
			return e;
	}
	return DRAKE_OK;
}

/* ---- the decision step ---- */

/* The node a placed pod is bound to or planned on, as a snapshot index. */
static int placed_node(const struct kube_cache *pods, const struct drake_cluster *c,
                       const struct tfjob *job, enum tf_rtype t, int i)
{
	char name[254];
	if (tf_replica_name(job, t, i, name, sizeof(name)) != DRAKE_OK)
		return -1;
	const struct kube_pod *pod = kube_pods_get(pods, job->ns, name);
	const char *phase = pod ? pod->phase : NULL;
	if (!pod || (phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"))))
		return -1; /* finishing: not a job to scale */
	const char *node = pod->node_name;
	if (!node || !*node)
		node = kube_pod_annotation(pod, DRAKE_ANNOTATION_PLANNED_NODE);
	return node ? drake_cluster_find(c, node) : -1;
}

/* Seconds since the epoch a gang id "<uid>.<seconds>" was made, or 0. */
static double gang_time(const char *gang)
{
	const char *dot = strrchr(gang, '.');
	return dot ? strtod(dot + 1, NULL) : 0;
}

/* A steady running job as gang/ sees it. ps[] and wn[] (node per slot),
 * wi[] (worker index per slot) are the caller's, sized for the job. False
 * when some member's node cannot be told or it is finishing. */
static bool running_view(const struct kube_cache *pods, const struct drake_cluster *c,
                         const struct candidate *cd, const struct admit_options *opts,
                         struct drake_running_job *v, int *ps, int *wn, int *wi)
{
	const struct tfjob *job = &cd->job;
	const struct drake_gang_req *req = &cd->entry.req;
	*v = (struct drake_running_job){0};
	for (int i = 0; i < req->n_ps; i++)
		if ((ps[i] = placed_node(pods, c, job, TF_PS, i)) < 0)
			return false;
	if (req->n_chief && placed_node(pods, c, job, TF_CHIEF, 0) < 0)
		return false;
	int n = 0;
	for (int i = 0; i < job->max_instances && i < TF_MAX_REPLICAS; i++) {
		if (!cd->member[i])
			continue;
		if ((wn[n] = placed_node(pods, c, job, TF_WORKER, i)) < 0)
			return false;
		wi[n++] = i;
	}
	if (n == 0 || wi[0] != 0)
		return false; /* worker 0 is slot 0, never given away */
	v->name = cd->key;
	v->admitted = gang_time(cd->gang);
	if (v->admitted <= 0)
		v->admitted = cd->entry.created;
	v->progress = -1; /* unknown until replicas report it */
	if (opts->progress)
		v->slow = opts->progress(opts->progress_arg, job, &v->progress);
	v->min_workers = job->min_instances;
	v->max_workers = job->max_instances;
	v->ps = req->ps;
	v->worker = req->worker;
	v->n_ps = req->n_ps;
	v->ps_node = ps;
	v->n_workers = n;
	v->worker_node = wn;
	v->last_scaled = cd->scale.present && cd->scale.at > 0 ? cd->scale.at : v->admitted;
	return true;
}

/* The views of every steady job; *of maps each to its candidate. */
struct views {
	struct drake_running_job *v;
	struct candidate **of;
	int **wi; /* per view: worker index of each slot */
	int *buf;
	size_t n;
};

static void views_release(struct views *vs)
{
	free(vs->v);
	free(vs->of);
	free(vs->wi);
	free(vs->buf);
}

static drake_err build_views(const struct kube_cache *pods, const struct drake_cluster *c,
                             struct collect_ctx *x, const struct admit_options *opts,
                             struct views *vs)
{
	memset(vs, 0, sizeof(*vs));
	size_t slots = 0, n = 0;
	for (size_t i = 0; i < x->n; i++)
		if (x->cand[i].steady) {
			n++;
			slots +=
			    (size_t)x->cand[i].entry.req.n_ps + 2 * (size_t)x->cand[i].n_members;
		}
	vs->v = calloc(n + 1, sizeof(*vs->v));
	vs->of = calloc(n + 1, sizeof(*vs->of));
	vs->wi = calloc(n + 1, sizeof(*vs->wi));
	vs->buf = malloc((slots + 1) * sizeof(int));
	if (!vs->v || !vs->of || !vs->wi || !vs->buf)
		return DRAKE_ENOMEM;
	int *p = vs->buf;
	for (size_t i = 0; i < x->n; i++) {
		struct candidate *cd = &x->cand[i];
		if (!cd->steady)
			continue;
		int *ps = p, *wn = ps + cd->entry.req.n_ps, *wi = wn + cd->n_members;
		p = wi + cd->n_members;
		if (!running_view(pods, c, cd, opts, &vs->v[vs->n], ps, wn, wi))
			continue;
		vs->of[vs->n] = cd;
		vs->wi[vs->n] = wi;
		vs->n++;
	}
	return DRAKE_OK;
}

static void set_patch(struct admit_scale *sc, const struct candidate *cd, struct tf_scale *rec)
{
	snprintf(rec->gang, sizeof(rec->gang), "%s", cd->gang);
	snprintf(sc->ns, sizeof(sc->ns), "%s", cd->job.ns);
	snprintf(sc->job, sizeof(sc->job), "%s", cd->job.name);
	snprintf(sc->uid, sizeof(sc->uid), "%s", cd->job.uid);
	sc->value = tf_scale_value(rec);
	sc->patch = sc->value ? tf_scale_patch(sc->value) : NULL;
}

/* The scale-down of view k: the actions a[0..n) (all SHRINK of it). */
static drake_err shrink_record(const struct views *vs, size_t k, const struct drake_action *a,
                               size_t n, struct drake_admission_entry *w, double now,
                               struct admit_scale *sc)
{
	const struct candidate *cd = vs->of[k];
	struct tf_scale rec = {.present = true, .at = now};
	memcpy(rec.member, cd->member, sizeof(rec.member));
	rec.n = cd->n_members;
	sc->pods = calloc(n, sizeof(*sc->pods));
	if (!sc->pods)
		return DRAKE_ENOMEM;
	int idx[TF_MAX_REPLICAS];
	for (size_t i = 0; i < n; i++) {
		idx[i] = vs->wi[k][a[i].slot];
		rec.member[idx[i]] = 0;
		rec.n--;
	}
	for (size_t i = 1; i < n; i++) /* highest index first */
		for (size_t j = i; j > 0 && idx[j] > idx[j - 1]; j--) {
			int t = idx[j];
			idx[j] = idx[j - 1];
			idx[j - 1] = t;
		}
	for (size_t i = 0; i < n; i++)
		if (tf_replica_name(&cd->job, TF_WORKER, idx[i], sc->pods[i], sizeof(sc->pods[i])))
			return DRAKE_EINVAL;
	const struct drake_admission_entry *to = &w[a[n - 1].for_job];
	snprintf(rec.for_key, sizeof(rec.for_key), "%s", to->name);
	sc->n = (int)n;
	snprintf(sc->why, sizeof(sc->why),
	         "gave %zu worker%s to %s, waiting %.0f s (%d -> %d workers)", n, n == 1 ? "" : "s",
	         to->name, now - to->created, cd->n_members, rec.n);
	set_patch(sc, cd, &rec);
	return sc->patch ? DRAKE_OK : DRAKE_ENOMEM;
}

/* The scale-up of view k: the actions a[0..n) (all GROW of it). Each takes
 * the lowest gated worker that is not a member. */
static drake_err grow_record(const struct kube_cache *pods, const struct drake_cluster *c,
                             const struct views *vs, size_t k, const struct drake_action *a,
                             size_t n, double now, struct admit_scale *sc)
{
	const struct candidate *cd = vs->of[k];
	struct tf_scale rec = {.present = true, .at = now};
	memcpy(rec.member, cd->member, sizeof(rec.member));
	rec.n = cd->n_members;
	rec.place = calloc(n, sizeof(*rec.place));
	if (!rec.place)
		return DRAKE_ENOMEM;
	int next = 0;
	char where[120] = "";
	size_t wl = 0;
	for (size_t i = 0; i < n; i++) {
		while (
		    next < cd->job.max_instances &&
		    (rec.member[next] || pod_state(pods, &cd->job, TF_WORKER, next) != POD_WAITING))
			next++;
		if (next >= cd->job.max_instances)
			break;
		rec.member[next] = 1;
		rec.n++;
		rec.place[rec.n_place].index = next;
		snprintf(rec.place[rec.n_place].node, sizeof(rec.place[0].node), "%s",
		         c->nodes[a[i].node].name);
		if (!strstr(where, c->nodes[a[i].node].name) && wl < sizeof(where) - 1)
			wl += (size_t)snprintf(where + wl, sizeof(where) - wl, "%s%s",
			                       wl ? ", " : "", c->nodes[a[i].node].name);
		rec.n_place++;
	}
	if (rec.n_place == 0) {
		tf_scale_release(&rec);
		return DRAKE_ESTATE; /* no gated worker left to add */
	}
	sc->grow = true;
	sc->n = rec.n_place;
	snprintf(sc->why, sizeof(sc->why),
	         "+%d worker%s on %s, modelled speed +%.0f%% (%d -> %d workers)", rec.n_place,
	         rec.n_place == 1 ? "" : "s", where, a[0].gain * 100, cd->n_members, rec.n);
	set_patch(sc, cd, &rec);
	tf_scale_release(&rec);
	return sc->patch ? DRAKE_OK : DRAKE_ENOMEM;
}

static drake_err scale_records(const struct kube_cache *pods, const struct drake_cluster *c,
                               const struct views *vs, const struct drake_step *st,
                               struct drake_admission_entry *w, double now,
                               struct admit_result *out)
{
	out->scales = calloc(vs->n + 1, sizeof(*out->scales));
	struct drake_action *mine = malloc((st->n + 1) * sizeof(*mine));
	drake_err e = out->scales && mine ? DRAKE_OK : DRAKE_ENOMEM;
	/* Per job, every action of a kind at once (a job may give workers to
	 * two starving jobs in one step; it never both gives and grows). */
	for (size_t k = 0; !e && k < vs->n; k++) {
		for (int kind = DRAKE_ACT_SHRINK; !e && kind <= DRAKE_ACT_GROW; kind++) {
			size_t n = 0;
			for (size_t i = 0; i < st->n; i++)
				if ((int)st->act[i].kind == kind && st->act[i].job == (int)k)
					mine[n++] = st->act[i];
			if (n == 0)
				continue;
			struct admit_scale *sc = &out->scales[out->n_scales];
			e = kind == DRAKE_ACT_SHRINK
			        ? shrink_record(vs, k, mine, n, w, now, sc)
			        : grow_record(pods, c, vs, k, mine, n, now, sc);
			if (e != DRAKE_ESTATE)
				out->n_scales++; /* counted even on failure, so release frees it */
			if (e == DRAKE_ESTATE || e == DRAKE_EINVAL)
				e = DRAKE_OK; /* nothing to add, or a name too long: skip it */
			break;
		}
	}
	free(mine);
	return e;
}

/* Workers still running that their job's record no longer lists. */
static drake_err stray_records(const struct collect_ctx *x, struct admit_result *out)
{
	size_t n = 0;
	for (size_t i = 0; i < x->n; i++)
		n += x->cand[i].n_strays > 0;
	if (n == 0)
		return DRAKE_OK;
	struct admit_scale *p = realloc(out->scales, (out->n_scales + n) * sizeof(*p));
	if (!p)
		return DRAKE_ENOMEM;
	out->scales = p;
	for (size_t i = 0; i < x->n; i++) {
		const struct candidate *cd = &x->cand[i];
		if (!cd->n_strays)
			continue;
		struct admit_scale *sc = &out->scales[out->n_scales++];
		memset(sc, 0, sizeof(*sc));
		snprintf(sc->ns, sizeof(sc->ns), "%s", cd->job.ns);
		snprintf(sc->job, sizeof(sc->job), "%s", cd->job.name);
		snprintf(sc->uid, sizeof(sc->uid), "%s", cd->job.uid);
		if (!(sc->pods = calloc((size_t)cd->n_strays, sizeof(*sc->pods))))
			return DRAKE_ENOMEM;
		for (int k = cd->n_strays; k-- > 0;) /* highest index first */
			if (tf_replica_name(&cd->job, TF_WORKER, cd->strays[k], sc->pods[sc->n],
			                    sizeof(sc->pods[0])) == DRAKE_OK)
				sc->n++;
	}
	return DRAKE_OK;
}

/* New jobs and steady running ones go through gang/'s decision step. */
static drake_err admit_step(const struct kube_cache *pods, struct drake_cluster *c,
                            struct collect_ctx *x, const struct admit_options *opts,
                            struct admit_result *out)
{
	struct drake_scale_opts so;
	if (opts->scale)
		so = *opts->scale;
	else
		drake_scale_defaults(&so);
	so.backfill = opts->backfill;
	double now = (double)opts->now_s;
	size_t n = 0;
	struct drake_admission_entry *e = calloc(x->n ? x->n : 1, sizeof(*e));
	struct candidate **of = calloc(x->n ? x->n : 1, sizeof(*of));
	struct views vs;
	drake_err err = e && of ? build_views(pods, c, x, opts, &vs) : DRAKE_ENOMEM;
	for (size_t i = 0; !err && i < x->n; i++) /* x->cand is in FIFO order already */
		if (!x->cand[i].repair && !x->cand[i].steady) {
			e[n] = x->cand[i].entry;
			of[n++] = &x->cand[i];
		}
	for (size_t k = 0; !err && k < vs.n; k++)
		for (size_t i = 0; i < n && vs.of[k]->scale.for_key[0]; i++)
			if (!strcmp(e[i].name, vs.of[k]->scale.for_key))
				vs.v[k].gave_to_waiting = true;
	struct drake_step st = {0};
	if (!err)
		err = drake_scale_step(c, e, n, vs.v, vs.n, now, &so, &st);
	if (!err && !(out->running = calloc(vs.n + 1, sizeof(*out->running))))
		err = DRAKE_ENOMEM;
	for (size_t k = 0; !err && k < vs.n; k++) {
		if (vs.of[k]->n_bound == 0) { /* admitted, nothing bound: it waits */
			struct admit_waiting *w = &out->waiting[out->n_waiting++];
			note(w, &vs.of[k]->job, DRAKE_ADMIT_WAITING, vs.of[k]->unbound);
			w->quiet = true;
			continue;
		}
		struct admit_running *j = &out->running[out->n_running++];
		snprintf(j->key, sizeof(j->key), "%s", vs.of[k]->key);
		j->workers = vs.v[k].n_workers;
		j->min = vs.v[k].min_workers;
		j->max = vs.v[k].max_workers;
		j->last_scaled = vs.v[k].last_scaled;
		snprintf(j->gave_to, sizeof(j->gave_to), "%s", vs.of[k]->scale.for_key);
		j->slow = vs.v[k].slow;
		snprintf(j->uid, sizeof(j->uid), "%s", vs.of[k]->job.uid);
	}
	for (size_t i = 0; !err && i < n; i++) {
		if (e[i].status == DRAKE_ADMIT_STARTED) {
			struct drake_roles min = gang_min(&e[i].req);
			err = add_wave(out, x->n, c, of[i], &e[i].plan, &min, opts->now_s);
		} else if (e[i].status != DRAKE_ADMIT_NOT_TRIED || e[i].why[0])
			note(&out->waiting[out->n_waiting++], &of[i]->job, e[i].status, e[i].why);
		else
			note(&out->waiting[out->n_waiting++], &of[i]->job, e[i].status,
			     "behind a job that waits (strict FIFO)");
	}
	if (!err)
		err = scale_records(pods, c, &vs, &st, e, now, out);
	if (!err)
		err = stray_records(x, out);
	if (!err)
		out->next = st.next;
	drake_step_release(&st);
	if (e)
		drake_admission_release(e, n);
	if (e && of)
		views_release(&vs);
	free(e);
	free(of);
	return err;
}

drake_err admit_round(const struct kube_cache *tfjobs, const struct kube_cache *pods,
                      const struct kube_cache *nodes, const struct admit_options *opts,
                      struct admit_result *out, char *msg, size_t msglen)
{
	memset(out, 0, sizeof(*out));
	out->next = INFINITY;
	struct drake_cluster c;
	drake_cluster_init(&c);
	drake_err e = admit_snapshot(nodes, pods, tfjobs, &c, &out->skipped, msg, msglen);
	struct collect_ctx x = {
	    .opts = opts, .pods = pods, .nodes = nodes, .c = &c, .next = INFINITY};
	if (!e) {
		kube_cache_foreach(tfjobs, collect, &x);
		e = x.err;
	}
	if (!e) {
		if (x.n) /* qsort(NULL, 0) is undefined */
			qsort(x.cand, x.n, sizeof(*x.cand), by_fifo);
		for (size_t i = 0; i < x.n; i++)
			x.cand[i].entry.name = x.cand[i].key; /* qsort moved the keys */
		out->waves = calloc(x.n ? x.n : 1, sizeof(*out->waves));
		out->waiting = calloc(x.n + x.n_invalid + 1, sizeof(*out->waiting));
		out->ignored = calloc(x.n + 1, sizeof(*out->ignored));
		if (!out->waves || !out->waiting || !out->ignored)
			e = DRAKE_ENOMEM;
	}
	for (size_t i = 0; !e && i < x.n; i++)
		if (x.cand[i].scale_why[0])
			note(&out->ignored[out->n_ignored++], &x.cand[i].job, DRAKE_ADMIT_INVALID,
			     x.cand[i].scale_why);
	if (!e)
		e = repair(&c, &x, out, opts->now_s);
	if (!e)
		e = admit_step(pods, &c, &x, opts, out);
	if (!e && x.next < out->next)
		out->next = x.next;
	for (size_t i = 0; !e && i < x.n_invalid; i++)
		out->waiting[out->n_waiting++] = x.invalid[i];
	for (size_t i = 0; i < x.n; i++) {
		free(x.cand[i].ps_idx);
		free(x.cand[i].c_idx);
		free(x.cand[i].w_idx);
		free_masks(&x.cand[i]);
		tf_scale_release(&x.cand[i].scale);
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
	for (size_t i = 0; i < r->n_scales; i++) {
		free(r->scales[i].pods);
		free(r->scales[i].value);
		free(r->scales[i].patch);
	}
	free(r->scales);
	free(r->ignored);
	free(r->running);
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

static bool count_near(const struct kube_pod *pod, void *arg)
{
	struct near_ctx *x = arg;
	if (!strcmp(pod->name, x->self))
		return true;
	const char *node = pod->node_name;
	if (!node || !*node)
		node = kube_pod_annotation(pod, DRAKE_ANNOTATION_PLANNED_NODE);
	for (size_t i = 0; node && i < x->n; i++)
		if (!strcmp(x->cand[i], node))
			x->members[i]++;
	return true;
}

drake_err admit_replan(const struct kube_cache *nodes, const struct kube_cache *pods,
                       const char *ns, const char *name, const char *const *candidates, size_t n,
                       char *node, size_t nodelen, char *why, size_t whylen)
{
	const struct kube_pod *pod = kube_pods_get(pods, ns, name);
	if (!pod)
		return drake_errorf(DRAKE_EINVAL, why, whylen, "pod %s/%s is not in the cache", ns,
		                    name);
	struct kube_meta m;
	kube_pod_meta(pod, &m);
	if (kube_pod_annotation(pod, DRAKE_KUBESHARE_GPU_REQUEST))
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
		kube_pods_by_owner(pods, m.owner_uid, count_near, &x);
	}
	int best = e ? -1 : drake_replan_pick(&c, &req, candidates, members, n);
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
