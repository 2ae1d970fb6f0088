/*
 * admit.c - one admission round over every drake-managed job (see
 * admit.h). Every decision is gang/round.h's: this file builds the
 * round's inputs from the pass's world (pass_world.h: the snapshot and the
 * jobs decoded once, shared with migration) and each job's pods
 * (admit_inputs.c), calls drake_round(), and turns the actions it returns
 * into waves of pods to ungate, scale records to write and notes of what
 * waits.
 *
 * A job's gang is its PS, its chief (the Chief or legacy Master replica:
 * the job's coordinator, without which it cannot make progress) and its
 * workers. Evaluators are not part of it: they are outside TF's training
 * cluster and the reconciler starts them at once.
 */
#include "reconciler/admit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gang/protocol.h"
#include "gang/round.h"
#include "gang/scale.h"
#include "gang/vgpu.h"
#include "kube/cache.h"
#include "kube/object.h"
#include "kube/pod.h"
#include "reconciler/admit_inputs.h"
#include "reconciler/decision_log.h"
#include "reconciler/pass_world.h"
#include "reconciler/round_codec.h"

/* A wave from a REPAIR or ADMIT action. */
static drake_err make_wave(const struct drake_cluster *c, const struct candidate *cd,
                           const struct drake_round_action *a, struct admit_wave *w)
{
	memset(w, 0, sizeof(*w));
	snprintf(w->ns, sizeof(w->ns), "%s", cd->job.ns);
	snprintf(w->job, sizeof(w->job), "%s", cd->job.name);
	snprintf(w->uid, sizeof(w->uid), "%s", cd->job.uid);
	snprintf(w->gang, sizeof(w->gang), "%s", a->gang);
	w->size = a->size;
	w->n_pods = a->n_pods;
	w->min_roles = a->min;
	w->min = drake_roles_total(&a->min);
	w->pods = calloc((size_t)a->n_pods + 1, sizeof(*w->pods));
	if (!w->pods)
		return DRAKE_ENOMEM;
	for (int i = 0; i < a->n_pods; i++) {
		const struct drake_round_pod *p = &a->pods[i];
		struct admit_pod *o = &w->pods[i];
		w->n_ps += p->role == DRAKE_ROLE_PS;
		w->n_chief += p->role == DRAKE_ROLE_CHIEF;
		w->n_workers += p->role == DRAKE_ROLE_WORKER;
		o->role = p->role;
		o->share = p->share;
		snprintf(o->gpuid, sizeof(o->gpuid), "%s", p->gpuid);
		snprintf(o->node, sizeof(o->node), "%s", c->nodes[p->node].name);
		if (job_replica_name(&cd->job, job_rtype_of_role(p->role), p->index, o->name,
		                     sizeof(o->name)) != DRAKE_OK)
			return DRAKE_EINVAL;
	}
	return DRAKE_OK;
}

/* A SHRINK, GROW or RELEASE action as the pods to delete and the
 * drake.dev/scale record to write first (none for RELEASE). */
static drake_err make_scale(const struct drake_cluster *c, const struct candidate *cd,
                            const struct drake_round_status *st, const struct drake_round_job *jobs,
                            const struct drake_round_action *a, double now, struct admit_scale *sc)
{
	memset(sc, 0, sizeof(*sc));
	snprintf(sc->ns, sizeof(sc->ns), "%s", cd->job.ns);
	snprintf(sc->job, sizeof(sc->job), "%s", cd->job.name);
	snprintf(sc->uid, sizeof(sc->uid), "%s", cd->job.uid);
	snprintf(sc->why, sizeof(sc->why), "%s", a->why);
	sc->grow = a->kind == DRAKE_ROUND_GROW;
	sc->n = a->n_pods;
	if (!sc->grow && !(sc->pods = calloc((size_t)a->n_pods + 1, sizeof(*sc->pods))))
		return DRAKE_ENOMEM;
	for (int i = 0; !sc->grow && i < a->n_pods; i++)
		if (job_replica_name(&cd->job, job_rtype_of_role(a->pods[i].role), a->pods[i].index,
		                     sc->pods[i], sizeof(sc->pods[i])))
			return DRAKE_EINVAL;
	if (a->kind == DRAKE_ROUND_RELEASE)
		return DRAKE_OK;
	if (a->kind == DRAKE_ROUND_PREEMPT) {
		sc->preempt = true;
		sc->service = jobs[a->job].service;
		return DRAKE_OK;
	}
	struct job_scale rec = {.present = true, .at = now, .n = a->members_after};
	memcpy(rec.member, a->member, (size_t)cd->job.max_instances);
	snprintf(rec.gang, sizeof(rec.gang), "%s", st->gang);
	if (a->for_job >= 0)
		snprintf(rec.for_key, sizeof(rec.for_key), "%s", jobs[a->for_job].name);
	if (sc->grow && !(rec.place = calloc((size_t)a->n_pods, sizeof(*rec.place))))
		return DRAKE_ENOMEM;
	for (int i = 0; sc->grow && i < a->n_pods; i++) {
		rec.place[i].index = a->pods[i].index;
		snprintf(rec.place[i].node, sizeof(rec.place[i].node), "%s",
		         c->nodes[a->pods[i].node].name);
		rec.n_place++;
	}
	sc->value = job_scale_value(&rec);
	sc->patch = sc->value ? job_scale_patch(sc->value) : NULL;
	job_scale_release(&rec);
	return sc->patch ? DRAKE_OK : DRAKE_ENOMEM;
}

/* The round's actions and statuses into out. */
static drake_err apply(const struct drake_cluster *c, const struct collect_ctx *x,
                       const struct drake_round *r, double now, struct admit_result *out)
{
	size_t n = r->n + x->n_invalid + x->n + 1;
	out->waves = calloc(n, sizeof(*out->waves));
	out->waiting = calloc(n, sizeof(*out->waiting));
	out->scales = calloc(n, sizeof(*out->scales));
	out->ignored = calloc(n, sizeof(*out->ignored));
	out->running = calloc(n, sizeof(*out->running));
	if (!out->waves || !out->waiting || !out->scales || !out->ignored || !out->running)
		return DRAKE_ENOMEM;
	for (size_t i = 0; i < x->n; i++) {
		const struct candidate *cd = &x->cand[i];
		const struct drake_round_status *st = &r->jobs[i];
		if (x->opts->keep_las && x->in[i].uid)
			x->opts->keep_las(x->opts->progress_arg, x->in[i].uid, &st->las);
		if (cd->scale_why[0] && st->cls != DRAKE_CLASS_INCOMPLETE)
			admit_note(&out->ignored[out->n_ignored++], &cd->job, DRAKE_ADMIT_INVALID,
			           cd->scale_why);
		if (!st->running)
			continue;
		struct admit_running *j = &out->running[out->n_running++];
		snprintf(j->key, sizeof(j->key), "%s", cd->key);
		j->workers = st->members;
		j->min = cd->job.min_instances;
		j->max = cd->job.max_instances;
		j->last_scaled = st->last_scaled;
		if (st->record)
			snprintf(j->gave_to, sizeof(j->gave_to), "%s", cd->scale.for_key);
		j->slow = x->in[i].slow;
		snprintf(j->uid, sizeof(j->uid), "%s", cd->job.uid);
		j->kind = cd->job.kind->kind;
	}
	drake_err e = DRAKE_OK;
	for (size_t i = 0; !e && i < r->n; i++) {
		const struct drake_round_action *a = &r->act[i];
		const struct candidate *cd = &x->cand[a->job];
		switch (a->kind) {
		case DRAKE_ROUND_REPAIR:
		case DRAKE_ROUND_ADMIT:
			e = make_wave(c, cd, a, &out->waves[out->n_waves]);
			out->n_waves++; /* counted even on failure, so release frees its pods */
			break;
		case DRAKE_ROUND_HOLD: {
			struct admit_waiting *w = &out->waiting[out->n_waiting++];
			admit_note(w, &cd->job, a->status, a->why);
			w->quiet = a->quiet;
			break;
		}
		case DRAKE_ROUND_SHRINK:
		case DRAKE_ROUND_GROW:
		case DRAKE_ROUND_RELEASE:
		case DRAKE_ROUND_PREEMPT:
			e = make_scale(c, cd, &r->jobs[a->job], x->in, a, now,
			               &out->scales[out->n_scales]);
			out->n_scales++;         /* counted even on failure, so release frees it */
			if (e == DRAKE_EINVAL) { /* a name too long: skip it */
				out->n_scales--;
				free(out->scales[out->n_scales].pods);
				free(out->scales[out->n_scales].value);
				free(out->scales[out->n_scales].patch);
				e = DRAKE_OK;
			}
			break;
		}
	}
	for (size_t i = 0; !e && i < x->n_invalid; i++)
		out->waiting[out->n_waiting++] = x->invalid[i];
	out->next = r->next;
	out->n_held = r->held;
	out->dragon_last_action = r->dragon_last_action;
	out->las_decided = r->las_decided;
	return e;
}

drake_err admit_round_world(const struct pass_world *w, const struct kube_cache *pods,
                            const struct kube_cache *nodes, const struct admit_options *opts,
                            struct admit_result *out, char *msg, size_t msglen)
{
	memset(out, 0, sizeof(*out));
	out->next = INFINITY;
	const struct drake_cluster *c = &w->c;
	drake_err e = DRAKE_OK;
	if (w->skipped.n) { /* the caller keeps the list past the world */
		out->skipped.v = malloc(w->skipped.n * sizeof(*out->skipped.v));
		if (!out->skipped.v)
			e = DRAKE_ENOMEM;
		else
			memcpy(out->skipped.v, w->skipped.v,
			       w->skipped.n * sizeof(*out->skipped.v));
		out->skipped.n = out->skipped.cap = out->skipped.v ? w->skipped.n : 0;
	}
	out->skipped.unlisted = w->skipped.unlisted;
	struct collect_ctx x = {.opts = opts, .pods = pods, .nodes = nodes, .c = c};
	if (!e)
		e = admit_inputs_collect(w, &x);
	struct drake_round_opts ro = {.policy = (enum drake_round_policy)opts->policy,
	                              .dragon_last_action = opts->dragon_last_action,
	                              .las_interval =
	                                  opts->las_interval > 0 ? opts->las_interval : 60,
	                              .las_decided = opts->las_decided,
	                              .pace_budget = opts->pace_budget,
	                              .pace_unbound = opts->pace_unbound};
	if (opts->scale)
		ro.scale = *opts->scale;
	else
		drake_scale_defaults(&ro.scale);
	ro.scale.backfill = opts->backfill;
	ro.scale.history = opts->history;
	if (opts->las)
		ro.las = *opts->las;
	else
		drake_las_defaults(&ro.las);
	struct drake_round r = {0};
	if (!e)
		e = drake_round(c, x.in, x.n, opts->now_s, &ro, &r);
	if (!e && opts->log) {
		char *line = round_log_line(c, x.in, x.n, opts->now_s, &ro, &r);
		decision_log_write(opts->log, line);
		free(line);
	}
	if (!e)
		e = apply(c, &x, &r, opts->now_s, out);
	drake_round_release(&r);
	admit_inputs_release(&x);
	if (e) {
		if (e == DRAKE_ENOMEM)
			drake_errorf(e, msg, msglen, "out of memory in admission");
		admit_result_release(out);
	}
	return e;
}

drake_err admit_round(const struct job_caches *jobs, const struct kube_cache *pods,
                      const struct kube_cache *nodes, const struct admit_options *opts,
                      struct admit_result *out, char *msg, size_t msglen)
{
	struct pass_world w;
	drake_err e = pass_world_build(&w, nodes, pods, jobs, msg, msglen);
	if (e) {
		memset(out, 0, sizeof(*out));
		out->next = INFINITY;
	} else {
		e = admit_round_world(&w, pods, nodes, opts, out, msg, msglen);
	}
	pass_world_release(&w);
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
