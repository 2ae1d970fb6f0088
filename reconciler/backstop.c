/*
 * backstop.c - the gang invariant's backstop, the adapter side: counts a
 * live gang job's members per role from the pod cache (bound, Succeeded,
 * admitted and waiting for kube-scheduler), reads from the pods when its
 * shortfall began, and carries out gang/backstop.h's verdict: nothing, look
 * again at the deadline, roll the gang back (delete every live PS, chief
 * and worker: the next pass recreates them gated and admission plans the
 * job again whole), or release a wave that never bound. A member stuck
 * Terminating on a node that is not Ready is deleted at once once the
 * verdict says so, or it would block its own recreation forever.
 */
#include "reconciler/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "gang/backstop.h"
#include "gang/protocol.h"
#include "gang/refusal.h"
#include "kube/api.h"
#include "kube/informer.h"
#include "kube/node.h"
#include "kube/object.h"
#include "kube/pod.h"
#include "kind/job_codec.h"
#include "kind/pod_codec.h"

void rec_backstop_forget(struct reconciler *r, const char *key)
{
	for (size_t i = 0; i < r->npartials; i++)
		if (!strcmp(r->partials[i].key, key)) {
			r->partials[i] = r->partials[--r->npartials];
			return;
		}
}

/* When this process first saw key short in this state (partial: some
 * members bound); now when it is new, or when the state changed. */
static long long first_seen(struct reconciler *r, const char *key, bool partial, long long now)
{
	for (size_t i = 0; i < r->npartials; i++) {
		struct partial_note *p = &r->partials[i];
		if (strcmp(p->key, key))
			continue;
		if (p->partial != partial) {
			p->partial = partial;
			p->since_ms = now;
		}
		return p->since_ms;
	}
	struct partial_note *n = realloc(r->partials, (r->npartials + 1) * sizeof(*n));
	if (!n)
		return now;
	r->partials = n;
	n = &r->partials[r->npartials++];
	snprintf(n->key, sizeof(n->key), "%s", key);
	n->since_ms = now;
	n->partial = partial;
	return now;
}

/* The minimum per role: every PS, the chief, min-instances workers. */
static void job_minimum(const struct job *job, struct drake_roles *min)
{
	*min = (struct drake_roles){0};
	if (job->rs[JOB_PS].present)
		min->n[DRAKE_ROLE_PS] = job->rs[JOB_PS].replicas;
	if (job->rs[JOB_CHIEF].present && job->rs[JOB_CHIEF].replicas > 0)
		min->n[DRAKE_ROLE_CHIEF] = 1;
	if (job->rs[JOB_WORKER].present)
		min->n[DRAKE_ROLE_WORKER] = job->min_instances;
}

static bool node_ready(const struct reconciler *r, const char *name)
{
	const struct kube_node *node =
	    name && r->nodes ? kube_nodes_get(kube_informer_cache(r->nodes), name) : NULL;
	const char *ready = node ? kube_node_condition(node, "Ready", NULL) : NULL;
	return ready && !strcmp(ready, "True");
}

static double later(double a, double b)
{
	return a > b ? a : b;
}

/* What the pods say, per role. lost_at[role] is the latest sign of a loss
 * among that role's unbound members (a replacement's creation, a member's
 * deletion); a slot with no pod at all has none, so the role's time is
 * unknown (-1). */
struct census {
	struct drake_backstop_in in;
	struct drake_roles have; /* bound plus Succeeded, per role */
	double bound_at;         /* the earliest binding among bound members */
	double lost_at[DRAKE_NROLES];
	int present[DRAKE_NROLES]; /* pods seen of the role, up to its minimum's slots */
	char refused_msg[JOB_REFUSAL_WHY_MAX]; /* kube-scheduler's, its preemption part cut */
};

/* kube-scheduler's report on an admitted member it could not place (its
 * PodScheduled condition False with reason Unschedulable): the member is
 * noted in c, first one outside the planner's model, else the first. */
static void note_refusal(const struct kube_pod *pod, struct census *c)
{
	const struct kube_condition *cond = kube_pod_condition_of(pod, "PodScheduled");
	if (!cond || !cond->status || strcmp(cond->status, "False") != 0 || !cond->reason ||
	    strcmp(cond->reason, "Unschedulable") != 0)
		return;
	bool outside =
	    drake_refusal_classify(cond->message, pod->name_pinned) == DRAKE_REFUSAL_OUTSIDE;
	if (outside)
		c->in.refused++;
	if (c->in.refused_pod && !(outside && c->in.refused == 1))
		return;
	c->in.refused_pod = pod->name;
	const char *m = cond->message ? cond->message : "";
	snprintf(c->refused_msg, sizeof(c->refused_msg), "%.*s", drake_refusal_summary_len(m), m);
	c->in.refused_msg = c->refused_msg;
}

static void count(const struct reconciler *r, const struct job *job, const struct owned *o,
                  struct census *c)
{
	memset(c, 0, sizeof(*c));
	job_minimum(job, &c->in.min);
	c->in.timeout_s = r->opts.gang_bind_timeout_s;
	if (job->schedule_timeout_s > 0)
		c->in.stuck_s = (double)job->schedule_timeout_s;
	for (size_t i = 0; i < o->n; i++) {
		const struct job_pod_obs *p = &o->obs[i];
		int role = job_role_of(p->type);
		if (role < 0)
			continue;
		if (p->type != JOB_WORKER || p->index < c->in.min.n[role])
			c->present[role]++;
		const struct kube_pod *pod = o->obj[i];
		const char *node = pod->node_name;
		bool bound = node && *node;
		if (p->deleting) {
			double gone = kube_time(pod->deleted);
			c->lost_at[role] = later(c->lost_at[role], gone);
			if (bound && !node_ready(r, node) &&
			    (!c->in.stuck_terminating_s || gone < c->in.stuck_terminating_s))
				c->in.stuck_terminating_s = gone;
			continue;
		}
		if (p->phase == JOB_POD_SUCCEEDED) {
			c->in.done.n[role]++;
			continue;
		}
		if (p->phase == JOB_POD_FAILED)
			continue; /* recreated per its restart policy, or the job fails */
		if (bound) {
			c->in.bound.n[role]++;
			double at;
			kube_pod_condition(pod, "PodScheduled", &at);
			if (at > 0 && (c->bound_at == 0 || at < c->bound_at))
				c->bound_at = at;
			continue;
		}
		if (!p->gated && kube_pod_annotation(pod, DRAKE_ANNOTATION_PLANNED_NODE)) {
			c->in.admitted.n[role]++;
			note_refusal(pod, c);
		}
		c->lost_at[role] = later(c->lost_at[role], kube_time(pod->created));
	}
	/* The shortfall began when the gang ran and a short role lost its
	 * member: the later of the two. Unknown when a short role's member
	 * has no pod yet (being recreated) or the bindings carry no time. */
	c->have = c->in.bound;
	double lost = 0;
	for (int role = 0; role < DRAKE_NROLES; role++) {
		c->have.n[role] += c->in.done.n[role];
		if (c->have.n[role] >= c->in.min.n[role])
			continue;
		if (c->present[role] < c->in.min.n[role] || c->lost_at[role] <= 0) {
			lost = -1;
			break;
		}
		lost = later(lost, c->lost_at[role]);
	}
	c->in.since_s = lost > 0 && c->bound_at > 0 ? later(lost, c->bound_at) : 0;
}

static void delete_members(struct reconciler *r, const struct job *job, const struct owned *o,
                           const char *what)
{
	for (size_t i = 0; i < o->n; i++) {
		const struct job_pod_obs *p = &o->obs[i];
		struct kube_meta pm;
		if (job_role_of(p->type) < 0 || p->deleting || p->phase == JOB_POD_SUCCEEDED ||
		    p->phase == JOB_POD_FAILED)
			continue;
		kube_pod_meta(o->obj[i], &pm);
		struct kube_resource res;
		rec_pod_res(job, pm.name, &res);
		rec_write(r, job, OP_DELETE, &res, NULL, pm.uid, what);
	}
}

/* Deletes at once the members stuck Terminating on a node that is not Ready. */
static void force_delete_stuck(struct reconciler *r, const struct job *job, const struct owned *o)
{
	for (size_t i = 0; i < o->n; i++) {
		struct kube_meta pm;
		kube_pod_meta(o->obj[i], &pm);
		if (job_role_of(o->obs[i].type) < 0 || !o->obs[i].deleting || !pm.node_name ||
		    !*pm.node_name || node_ready(r, pm.node_name))
			continue;
		char msg[400];
		snprintf(msg, sizeof(msg),
		         "pod %s has been terminating on node %s, which is not Ready, for longer "
		         "than the gang can wait: deleting it at once so that it can be recreated",
		         pm.name, pm.node_name);
		rec_event(r, job, "Warning", "GangMemberForceDeleted", msg);
		log_warn("gang_member_force_deleted", "job=%s/%s pod=%s node=%s", job->ns,
		         job->name, pm.name, pm.node_name);
		rec_force_delete(r, job, pm.name, pm.uid, "force delete stuck member");
	}
}

/* Writes job's refusal record (NULL: removes it) and holds admission
 * until the cache shows it, so no round admits the job again meanwhile. */
static void write_refusal(struct reconciler *r, const struct job *job,
                          const struct job_refusal *rec)
{
	char *value = rec ? job_refusal_value(rec) : NULL;
	char *patch = NULL;
	if (rec && value)
		patch = job_annotation_patch(JOB_ANNOTATION_UNSCHEDULABLE, value);
	else if (!rec)
		patch = strdup("{\"metadata\":{\"annotations\":{\"" JOB_ANNOTATION_UNSCHEDULABLE
		               "\":null}}}");
	struct pending_scale *p =
	    value && patch ? realloc(r->scaling, (r->nscaling + 1) * sizeof(*p)) : NULL;
	if (p) {
		r->scaling = p;
		p = &r->scaling[r->nscaling++];
		memset(p, 0, sizeof(*p));
		snprintf(p->ns, sizeof(p->ns), "%s", job->ns);
		snprintf(p->job, sizeof(p->job), "%s", job->name);
		p->annotation = JOB_ANNOTATION_UNSCHEDULABLE;
		p->value = value;
		p->sent_ms = rec_now_ms(r);
		value = NULL;
	}
	if (patch) {
		struct kube_resource res;
		rec_job_res(job, NULL, &res);
		rec_write(r, job, OP_MERGE, &res, patch, NULL,
		          rec ? "record refusal" : "clear refusal");
	}
	free(patch);
	free(value);
}

/* Some pod of o created at or after at (s) is bound and not leaving. */
static bool bound_since(const struct owned *o, double at)
{
	for (size_t i = 0; i < o->n; i++) {
		const struct kube_pod *pod = o->obj[i];
		if (!o->obs[i].deleting && pod->node_name && *pod->node_name &&
		    kube_time(pod->created) >= at)
			return true;
	}
	return false;
}

/* Removes the job's preemption note: its gang is bound whole again. */
static void clear_preempted(struct reconciler *r, const struct job *job)
{
	struct kube_resource res;
	rec_job_res(job, NULL, &res);
	rec_write(r, job, OP_MERGE, &res,
	          "{\"metadata\":{\"annotations\":{\"" JOB_ANNOTATION_PREEMPTED "\":null}}}", NULL,
	          "clear preemption");
}

/* A wave refused outside the planner's model: the job backs off. */
static void refused(struct reconciler *r, const struct job *job, const struct census *c,
                    const struct drake_backstop_out *out)
{
	struct drake_backoff_opts bo = {r->opts.backoff_min_s, r->opts.backoff_max_s};
	struct drake_refusal_record prev = {job->refusal.tries, job->refusal.at_s,
	                                    job->refusal.until_s};
	struct drake_refusal_record next = drake_refusal_next(&prev, &bo, rec_now_s(r));
	struct job_refusal rec = {.tries = next.tries, .at_s = next.at_s, .until_s = next.until_s};
	snprintf(rec.pod, sizeof(rec.pod), "%s", c->in.refused_pod ? c->in.refused_pod : "");
	snprintf(rec.why, sizeof(rec.why), "%s", c->refused_msg);
	write_refusal(r, job, &rec);
	char msg[DRAKE_BACKSTOP_WHY_MAX + 128];
	if (snprintf(msg, sizeof(msg),
	             "%s; tried again in %.0fs, or sooner when a node or a "
	             "PersistentVolumeClaim in %s changes",
	             out->why, next.until_s - next.at_s, job->ns) >= (int)sizeof(msg))
		memcpy(msg + sizeof(msg) - 4, "...", 4);
	rec_event(r, job, "Warning", "GangUnschedulable", msg);
	log_warn("gang_refused", "job=%s/%s pod=%s tries=%d backoff_s=%.0f why=\"%s\"", job->ns,
	         job->name, rec.pod, rec.tries, next.until_s - next.at_s, rec.why);
}

void rec_backstop(struct reconciler *r, const struct job *job, const struct owned *o,
                  const char *key)
{
	struct census c;
	count(r, job, o, &c);
	long long now = rec_now_ms(r);
	/* A whole gang is forgotten before its clock is started, and its
	 * refusals with it. */
	if (drake_roles_short(&c.have, &c.in.min) < 0 && !c.in.stuck_terminating_s) {
		if (job->refusal.tries > 0 && drake_roles_total(&c.in.bound) > 0)
			write_refusal(r, job, NULL);
		if (job->preempted[0] && bound_since(o, job->preempted_at))
			clear_preempted(r, job);
		rec_backstop_forget(r, key);
		return;
	}
	bool partial = drake_roles_total(&c.in.bound) > 0;
	c.in.first_seen_s = (double)first_seen(r, key, partial, now) / 1000;
	struct drake_backstop_out out;
	drake_backstop_judge(&c.in, (double)now / 1000, &out);
	if (out.force_delete)
		force_delete_stuck(r, job, o);
	switch (out.verdict) {
	case DRAKE_BACKSTOP_OK:
		if (!c.in.stuck_terminating_s)
			rec_backstop_forget(r, key);
		else
			rec_enqueue(r, &r->later, job->ns, job->name);
		return;
	case DRAKE_BACKSTOP_WAIT:
	case DRAKE_BACKSTOP_REPAIR:
		rec_enqueue(r, &r->later, job->ns, job->name); /* look again in a second */
		return;
	case DRAKE_BACKSTOP_ROLL_BACK:
	case DRAKE_BACKSTOP_RELEASE:
	case DRAKE_BACKSTOP_REFUSED: break;
	}
	bool rollback = out.verdict == DRAKE_BACKSTOP_ROLL_BACK;
	if (out.verdict == DRAKE_BACKSTOP_REFUSED) {
		refused(r, job, &c, &out);
		delete_members(r, job, o, "release refused wave");
		rec_waves_forget(r, job->ns, job->name);
		rec_backstop_forget(r, key);
		return;
	}
	rec_event(r, job, "Warning", rollback ? "GangRolledBack" : "GangReleased", out.why);
	char have_s[64], min_s[64];
	log_warn(rollback ? "gang_rolled_back" : "gang_released",
	         "job=%s have=%s min=%s why=\"%s\"", key,
	         drake_roles_format(&c.have, have_s, sizeof(have_s)),
	         drake_roles_format(&c.in.min, min_s, sizeof(min_s)), out.why);
	delete_members(r, job, o, rollback ? "roll back partial gang" : "release stuck wave");
	rec_waves_forget(r, job->ns, job->name);
	rec_backstop_forget(r, key);
}
