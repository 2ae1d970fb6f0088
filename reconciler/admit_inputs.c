/*
 * admit_inputs.c - the round's inputs (admit_inputs.h): each job the
 * pass decoded (pass_world.h), its replicas' pods read into members (state,
 * node, wave, kube-scheduler's refusal), its drake.dev/scale record, the
 * move a migration has in flight, its refusal backoff and progress.
 */
#include "reconciler/admit_inputs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gang/protocol.h"
#include "gang/vgpu.h"
#include "kind/registry.h"
#include "kube/cache.h"
#include "kube/object.h"
#include "kube/pod.h"
#include "reconciler/pass_world.h"

static bool finished(const struct kube_pod *pod)
{
	return kube_pod_phase_done(pod->phase);
}

/* What the round needs of replica (t, i): its pod's state, node, wave, and
 * kube-scheduler's refusal. Strings are borrowed from the pod cache. */
static void read_member(const struct collect_ctx *x, const struct job *job, enum job_rtype t, int i,
                        struct drake_round_member *m)
{
	*m = (struct drake_round_member){.state = DRAKE_MEMBER_MISSING, .node = -1};
	char name[KUBE_NAME_MAX + 1];
	const struct kube_pod *pod = job_replica_name(job, t, i, name, sizeof(name)) == DRAKE_OK
	                                 ? kube_pods_get(x->pods, job->ns, name)
	                                 : NULL;
	if (!pod)
		return;
	struct kube_meta meta;
	kube_pod_meta(pod, &meta);
	const char *planned = kube_pod_annotation(pod, DRAKE_ANNOTATION_PLANNED_NODE);
	const char *g = kube_pod_annotation(pod, DRAKE_ANNOTATION_GANG);
	const char *sz = kube_pod_annotation(pod, DRAKE_ANNOTATION_GANG_SIZE);
	m->name = pod->name;
	m->bound = pod->node_name && *pod->node_name;
	m->finished = finished(pod);
	double since = 0;
	if (pod->phase && !strcmp(pod->phase, "Succeeded") &&
	    kube_pod_condition(pod, "Ready", &since) && since > 0)
		m->ended = since; /* the kubelet (and kwok) turn Ready False as it ends */
	if (g && sz) {
		m->gang = g;
		m->gang_size = atoi(sz);
	}
	const char *node = m->bound ? pod->node_name : planned;
	if (node && !m->finished)
		m->node = drake_cluster_find(x->c, node);
	const struct kube_condition *c = kube_pod_condition_of(pod, "PodScheduled");
	if (!m->bound && c && c->reason && !strcmp(c->reason, "Unschedulable"))
		m->refused = c->message;
	if (strcmp(meta.owner_uid ? meta.owner_uid : "", job->uid) != 0)
		return;
	if (meta.deleting) {
		m->leaving = m->node >= 0; /* kube-scheduler charges it until it is gone */
		m->leaving_by = admit_time(pod->deleted);
		return;
	}
	bool unscheduled = !m->bound && (!pod->phase || !strcmp(pod->phase, "Pending"));
	m->state = unscheduled && !planned ? DRAKE_MEMBER_WAITING : DRAKE_MEMBER_PLACED;
}

static drake_err job_request(const struct drake_cluster *c, const struct job *job,
                             struct drake_gang_req *req, char *msg, size_t msglen)
{
	memset(req, 0, sizeof(*req));
	const struct job_replica_spec *ps = &job->rs[JOB_PS], *w = &job->rs[JOB_WORKER];
	const struct job_replica_spec *chief = &job->rs[JOB_CHIEF]; /* Chief or Master */
	req->n_ps = ps->present ? ps->replicas : 0;
	req->n_chief = chief->present && chief->replicas > 0 ? 1 : 0;
	req->min_workers = job->min_instances;
	req->want_workers = w->present ? w->replicas : 0; /* the round clamps it */
	/* New vGPUs are named after the job, so its plans name them alike. */
	req->vgpu_seed = drake_vgpu_seed(job->uid);
	drake_err e = DRAKE_OK;
	if (req->n_ps)
		e = admit_template_requests(ps->tmpl, &c->names, &req->ps, msg, msglen);
	if (!e && req->n_ps)
		e = admit_template_share(ps->tmpl, &req->ps_share, msg, msglen);
	if (!e && w->present)
		e = admit_template_requests(w->tmpl, &c->names, &req->worker, msg, msglen);
	if (!e && w->present)
		e = admit_template_share(w->tmpl, &req->worker_share, msg, msglen);
	if (!e && req->n_chief)
		e = admit_template_requests(chief->tmpl, &c->names, &req->chief, msg, msglen);
	if (!e && req->n_chief)
		e = admit_template_share(chief->tmpl, &req->chief_share, msg, msglen);
	return e;
}

void admit_note(struct admit_waiting *w, const struct job *job, enum drake_admit_status st,
                const char *why)
{
	snprintf(w->ns, sizeof(w->ns), "%s", job->ns);
	snprintf(w->job, sizeof(w->job), "%s", job->name);
	w->status = st;
	snprintf(w->why, sizeof(w->why), "%s", why);
}

static void release_candidate(struct candidate *cd)
{
	for (int k = 0; k < 3; k++)
		free(cd->mask[k]);
	free(cd->place);
	free(cd->members);
	job_scale_release(&cd->scale);
	memset(cd, 0, sizeof(*cd));
}

/* The node mask of each role whose template has node rules (a node
 * selector, a required node affinity, tolerations); the others plan on
 * every schedulable node. */
static drake_err node_masks(struct collect_ctx *x, struct candidate *cd, struct drake_gang_req *req,
                            char *msg, size_t msglen)
{
	const enum job_rtype types[3] = {JOB_PS, JOB_WORKER, JOB_CHIEF};
	const unsigned char **ok[3] = {&req->ps_ok, &req->worker_ok, &req->chief_ok};
	for (int k = 0; k < 3; k++) {
		const struct job_replica_spec *rs = &cd->job.rs[types[k]];
		if (!rs->present || !rs->tmpl || !x->nodes)
			continue;
		struct admit_node_rules rules;
		char why[DRAKE_WHY_MAX - 64];
		drake_err e = admit_template_node_rules(rs->tmpl, &rules, why, sizeof(why));
		if (e) {
			drake_errorf(e, msg, msglen, "tfReplicaSpecs.%s: %s",
			             job_rtype_name(types[k]), why);
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

/* Seconds since the epoch a gang id "<uid>.<seconds>" was made, or 0. */
static double gang_time(const char *gang)
{
	struct drake_gang_id id;
	return drake_gang_id_parse(gang, &id, NULL, 0) == DRAKE_OK ? (double)id.wave : 0;
}

/* Reads what the round needs of one job into cd: its members, record and
 * move (strings borrowed from the caches or held in cd). */
static drake_err read_job(struct collect_ctx *x, const struct pass_job *pj, struct candidate *cd)
{
	const struct job *job = &cd->job;
	int n_ps = cd->req.n_ps, n_chief = cd->req.n_chief, max = job->max_instances;
	cd->members = calloc((size_t)(n_ps + n_chief + max + 1), sizeof(*cd->members));
	if (!cd->members)
		return DRAKE_ENOMEM;
	for (int i = 0; i < n_ps + n_chief + max; i++)
		read_member(x, job,
		            i < n_ps             ? JOB_PS
		            : i < n_ps + n_chief ? JOB_CHIEF
		                                 : JOB_WORKER,
		            i < n_ps             ? i
		            : i < n_ps + n_chief ? i - n_ps
		                                 : i - n_ps - n_chief,
		            &cd->members[i]);
	if (job_scale_decode(pj->obj, job, &cd->scale, cd->scale_why, sizeof(cd->scale_why)) !=
	    DRAKE_EINVAL)
		cd->scale_why[0] = '\0';
	cd->place = calloc((size_t)cd->scale.n_place + 1, sizeof(*cd->place));
	if (!cd->place)
		return DRAKE_ENOMEM;
	const struct job_migrations *mg = pass_job_migrations(pj);
	if (mg)
		cd->move = mg->moving;
	return DRAKE_OK;
}

/* The round's input for cd (once every candidate has its final address). */
static void round_job(const struct admit_options *o, struct candidate *cd,
                      struct drake_round_job *in)
{
	const struct job *job = &cd->job;
	*in = (struct drake_round_job){.name = cd->key,
	                               .uid = job->uid,
	                               .created = cd->created,
	                               .req = cd->req,
	                               .max_workers = job->max_instances,
	                               .ps = cd->members,
	                               .chief = cd->members + cd->req.n_ps,
	                               .workers = cd->members + cd->req.n_ps + cd->req.n_chief,
	                               .progress = -1}; /* unknown until replicas report it */
	const struct job_scale *s = &cd->scale;
	for (int i = 0; i < s->n_place; i++)
		cd->place[i] = (struct drake_round_place){s->place[i].index, s->place[i].node};
	if (s->present)
		in->rec = (struct drake_round_record){.present = true,
		                                      .gang = s->gang,
		                                      .member = s->member,
		                                      .n = s->n,
		                                      .at = s->at,
		                                      .gave_to = s->for_key[0] ? s->for_key : NULL,
		                                      .place = cd->place,
		                                      .n_place = s->n_place};
	const struct job_move *m = &cd->move;
	in->move = (struct drake_round_move){
	    .active =
	        m->active && (m->type == JOB_PS || m->type == JOB_CHIEF || m->type == JOB_WORKER),
	    .role = (enum drake_role)job_role_of(m->type),
	    .index = m->index,
	    .to = m->to};
	/* its wave's time: the first member, PS, chief, workers, that names one */
	int n = cd->req.n_ps + cd->req.n_chief + job->max_instances;
	for (int i = 0; i < n && in->admitted <= 0; i++)
		if (cd->members[i].gang && cd->members[i].gang_size > 0)
			in->admitted = gang_time(cd->members[i].gang);
	if (o->progress)
		in->slow = o->progress(o->progress_arg, job, &in->progress);
	in->service = job->preempted_service; /* what it had run, should drake have restarted */
	struct job_resize_cost rc = job_resize_cost_of(o->resize_costs, job->kind);
	in->cost = (struct drake_change_cost){rc.shrink_s, rc.grow_s};
	if (o->observe)
		o->observe(o->progress_arg, cd->key, in);
	const struct job_refusal *f = &job->refusal;
	in->refusal = (struct drake_refusal_record){f->tries, f->at_s, f->until_s};
	in->refused_pod = f->pod;
	in->refused_why = f->why;
	if (f->tries > 0 && o->changed)
		in->changed = o->changed(o->changed_arg, job->ns);
}

static bool collect(const struct pass_job *pj, struct collect_ctx *x)
{
	if (x->n + x->n_invalid == x->cap) { /* either list may take this job */
		size_t cap = x->cap ? x->cap * 2 : 16;
		struct candidate *c = realloc(x->cand, cap * sizeof(*c));
		struct admit_waiting *inv = c ? realloc(x->invalid, cap * sizeof(*inv)) : NULL;
		if (c)
			x->cand = c;
		if (inv)
			x->invalid = inv;
		if (!inv) {
			x->err = DRAKE_ENOMEM;
			return false;
		}
		x->cap = cap;
	}
	struct candidate *cd = &x->cand[x->n];
	memset(cd, 0, sizeof(*cd));
	char msg[DRAKE_WHY_MAX];
	if (pj->job.suspend)
		return true;
	cd->job = pj->job;
	drake_err err = job_request(x->c, &cd->job, &cd->req, msg, sizeof(msg));
	if (!err)
		err = node_masks(x, cd, &cd->req, msg, sizeof(msg));
	if (err && err != DRAKE_ENOMEM) {
		admit_note(&x->invalid[x->n_invalid++], &cd->job, DRAKE_ADMIT_INVALID, msg);
		release_candidate(cd);
		return true;
	}
	snprintf(cd->key, sizeof(cd->key), "%s/%s", cd->job.ns, cd->job.name);
	cd->created = pj->created;
	if (!err)
		err = read_job(x, pj, cd);
	if (err) {
		release_candidate(cd);
		x->err = err;
		return false;
	}
	x->n++;
	return true;
}

drake_err admit_inputs_collect(const struct pass_world *w, struct collect_ctx *x)
{
	for (size_t i = 0; i < w->n; i++)
		if (!collect(&w->jobs[i], x))
			break;
	if (!x->err && !(x->in = calloc(x->n + 1, sizeof(*x->in))))
		x->err = DRAKE_ENOMEM;
	for (size_t i = 0; !x->err && i < x->n; i++)
		round_job(x->opts, &x->cand[i], &x->in[i]);
	return x->err;
}

void admit_inputs_release(struct collect_ctx *x)
{
	for (size_t i = 0; i < x->n; i++)
		release_candidate(&x->cand[i]);
	free(x->cand);
	free(x->in);
	free(x->invalid);
}
