/*
 * round_codec.c - one decision round (gang/round.h) as a JSON line: its
 * inputs (snapshot, jobs, options, now) and its outputs (actions, per-job
 * statuses, next), for --decision-log. Indexes stay indexes: a pod's node
 * is an index into "nodes", an action's job an index into "jobs".
 *
 * Not written: the snapshot's open vGPUs (KubeShare shares) and measured
 * node usage (the round does not read it); a replay refuses a round with
 * shares. The decoder is round_codec_decode.c.
 */
#include "reconciler/round_codec.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>

static json_t *res_json(const struct drake_res *r, const struct drake_res_names *names)
{
	json_t *o = json_pack("{s:I,s:I,s:I}", "cpuMilli", (json_int_t)r->cpu_milli, "memBytes",
	                      (json_int_t)r->mem_bytes, "gpu", (json_int_t)r->gpu);
	for (int i = 0; o && i < names->n; i++)
		if (r->ext[i])
			json_object_set_new(o, names->name[i], json_integer((json_int_t)r->ext[i]));
	return o;
}

/* Set members only: a number when finite, null otherwise (INFINITY). */
static json_t *num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *str(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *mask_json(const unsigned char *ok, size_t n)
{
	if (!ok)
		return json_null();
	json_t *a = json_array();
	for (size_t i = 0; a && i < n; i++)
		if (ok[i])
			json_array_append_new(a, json_integer((json_int_t)i));
	return a;
}

static json_t *req_json(const struct drake_gang_req *q, const struct drake_cluster *c)
{
	json_t *o = json_pack("{s:i,s:i,s:i,s:i,s:I}", "ps", q->n_ps, "chief", q->n_chief,
	                      "minWorkers", q->min_workers, "wantWorkers", q->want_workers,
	                      "vgpuSeed", (json_int_t)q->vgpu_seed);
	if (!o)
		return NULL;
	json_object_set_new(o, "psReq", res_json(&q->ps, &c->names));
	json_object_set_new(o, "workerReq", res_json(&q->worker, &c->names));
	json_object_set_new(o, "chiefReq", res_json(&q->chief, &c->names));
	json_object_set_new(
	    o, "shareMilli",
	    json_pack("[i,i,i]", q->ps_share.milli, q->worker_share.milli, q->chief_share.milli));
	json_object_set_new(o, "psNodes", mask_json(q->ps_ok, c->n));
	json_object_set_new(o, "workerNodes", mask_json(q->worker_ok, c->n));
	json_object_set_new(o, "chiefNodes", mask_json(q->chief_ok, c->n));
	return o;
}

static json_t *members_json(const struct drake_round_member *m, int n)
{
	static const char *const states[] = {"missing", "waiting", "placed"};
	json_t *a = json_array();
	for (int i = 0; a && i < n; i++)
		json_array_append_new(
		    a, json_pack("{s:s,s:i,s:b,s:b,s:b,s:f,s:f,s:o,s:i,s:o,s:o}", "state",
		                 states[m[i].state], "node", m[i].node, "bound", m[i].bound,
		                 "finished", m[i].finished, "leaving", m[i].leaving, "leavingBy",
		                 m[i].leaving_by, "ended", m[i].ended, "gang", str(m[i].gang),
		                 "gangSize", m[i].gang_size, "name", str(m[i].name), "refused",
		                 str(m[i].refused)));
	return a;
}

/* A 2D-LAS state (gang/tiresias.h); written only once the rule has seen
 * the job, so lines of the other policies keep their old shape. */
static void las_json(json_t *o, const struct drake_las_state *st)
{
	if (o && st->seen)
		json_object_set_new(o, "las",
		                    json_pack("{s:i,s:f,s:f,s:f,s:f,s:f}", "queue", st->queue,
		                              "entered", st->entered, "lastCheck", st->last_check,
		                              "executed", st->executed, "totalExecuted",
		                              st->total_executed, "pendingSinceRun",
		                              st->pending_since_run));
}

static const char *policy_str(enum drake_round_policy p)
{
	return p == DRAKE_POLICY_DRAGON     ? "dragon"
	       : p == DRAKE_POLICY_TIRESIAS ? "tiresias"
	                                    : "drake";
}

static json_t *job_json(const struct drake_round_job *j, const struct drake_cluster *c)
{
	json_t *o = json_pack("{s:s,s:s,s:f,s:i,s:o,s:f,s:f,s:b,s:o}", "name", j->name, "uid",
	                      j->uid, "created", j->created, "maxWorkers", j->max_workers, "req",
	                      req_json(&j->req, c), "admitted", j->admitted, "progress",
	                      j->progress, "slow", j->slow, "changed", num(j->changed));
	if (!o)
		return NULL;
	json_object_set_new(o, "service", json_real(j->service));
	if (j->cost.shrink > 0 || j->cost.grow > 0) /* its kind's; a line without: the global */
		json_object_set_new(
		    o, "cost",
		    json_pack("{s:f,s:f}", "shrink", j->cost.shrink, "grow", j->cost.grow));
	las_json(o, &j->las);
	if (j->obs && j->n_obs > 0) {
		json_t *ob = json_array();
		for (int i = 0; ob && i < j->n_obs; i++)
			json_array_append_new(
			    ob, json_pack("{s:i,s:i,s:f}", "workers", j->obs[i].workers, "nodes",
			                  j->obs[i].nodes, "rate", j->obs[i].rate));
		json_object_set_new(o, "obs", ob);
	}
	json_object_set_new(o, "ps", members_json(j->ps, j->req.n_ps));
	json_object_set_new(o, "chief", members_json(j->chief, j->req.n_chief));
	json_object_set_new(o, "workers", members_json(j->workers, j->max_workers));
	if (j->rec.present) {
		json_t *m = json_array(), *p = json_array();
		for (int i = 0; m && i < j->max_workers; i++)
			if (j->rec.member[i])
				json_array_append_new(m, json_integer(i));
		for (int i = 0; p && i < j->rec.n_place; i++)
			json_array_append_new(p,
			                      json_pack("{s:i,s:s}", "index", j->rec.place[i].index,
			                                "node", j->rec.place[i].node));
		json_object_set_new(o, "record",
		                    json_pack("{s:o,s:o,s:i,s:f,s:o,s:o}", "gang", str(j->rec.gang),
		                              "member", m, "n", j->rec.n, "at", j->rec.at, "gaveTo",
		                              str(j->rec.gave_to), "place", p));
	}
	if (j->move.active)
		json_object_set_new(o, "move",
		                    json_pack("{s:s,s:i,s:o}", "role",
		                              drake_role_name(j->move.role), "index", j->move.index,
		                              "to", str(j->move.to)));
	if (j->refusal.tries > 0)
		json_object_set_new(o, "refusal",
		                    json_pack("{s:i,s:f,s:f,s:o,s:o}", "tries", j->refusal.tries,
		                              "at", j->refusal.at_s, "until", j->refusal.until_s,
		                              "pod", str(j->refused_pod), "why",
		                              str(j->refused_why)));
	return o;
}

static json_t *action_json(const struct drake_round_action *a, int max_workers)
{
	json_t *o = json_pack("{s:s,s:s,s:i,s:s}", "kind", drake_round_kind_name(a->kind), "reason",
	                      drake_round_reason_name(a->reason), "job", a->job, "why", a->why);
	if (!o)
		return NULL;
	if (a->gang[0])
		json_object_set_new(o, "gang",
		                    json_pack("{s:s,s:i}", "id", a->gang, "size", a->size));
	json_t *pods = json_array();
	for (int i = 0; pods && i < a->n_pods; i++)
		json_array_append_new(pods, json_pack("{s:s,s:i,s:i,s:s}", "role",
		                                      drake_role_name(a->pods[i].role), "index",
		                                      a->pods[i].index, "node", a->pods[i].node,
		                                      "gpuid", a->pods[i].gpuid));
	json_object_set_new(o, "pods", pods);
	if (a->member) {
		json_t *m = json_array();
		for (int i = 0; m && i < max_workers; i++)
			if (a->member[i])
				json_array_append_new(m, json_integer(i));
		json_object_set_new(o, "member", m);
	}
	if (a->for_job >= 0)
		json_object_set_new(o, "forJob", json_integer(a->for_job));
	if (a->kind == DRAKE_ROUND_GROW)
		json_object_set_new(o, "gain", json_real(a->gain));
	if (a->kind == DRAKE_ROUND_HOLD) {
		json_object_set_new(o, "status", json_string(drake_admit_status_name(a->status)));
		json_object_set_new(o, "quiet", json_boolean(a->quiet));
	}
	return o;
}

char *round_log_line(const struct drake_cluster *c, const struct drake_round_job *jobs, size_t n,
                     double now, const struct drake_round_opts *o, const struct drake_round *r)
{
	static const char *const classes[] = {"incomplete", "new", "repair", "running"};
	json_t *nodes = json_array(), *js = json_array(), *acts = json_array(), *st = json_array();
	for (size_t i = 0; nodes && i < c->n; i++) {
		const struct drake_node *d = &c->nodes[i];
		json_array_append_new(
		    nodes, json_pack("{s:s,s:o,s:o,s:b,s:b,s:I}", "name", d->name, "alloc",
		                     res_json(&d->alloc, &c->names), "used",
		                     res_json(&d->used, &c->names), "schedulable", d->schedulable,
		                     "tainted", d->tainted, "gpuMem", (json_int_t)d->gpu_mem));
	}
	for (size_t i = 0; js && i < n; i++)
		json_array_append_new(js, job_json(&jobs[i], c));
	for (size_t i = 0; acts && i < r->n; i++)
		json_array_append_new(acts,
		                      action_json(&r->act[i], jobs[r->act[i].job].max_workers));
	for (size_t i = 0; st && i < r->n_jobs; i++) {
		const struct drake_round_status *s = &r->jobs[i];
		json_array_append_new(
		    st, json_pack("{s:s,s:i,s:b,s:b,s:f,s:b,s:b,s:s}", "class", classes[s->cls],
		                  "members", s->members, "scalable", s->scalable, "running",
		                  s->running, "lastScaled", s->last_scaled, "gaveToWaiting",
		                  s->gave_to_waiting, "record", s->record, "gang", s->gang));
		las_json(json_array_get(st, i), &s->las);
	}
	const struct drake_scale_opts *so = &o->scale;
	json_t *opts = json_pack(
	    "{s:s,s:f,s:b,s:f,s:f,s:i,s:s,s:b,s:{s:f,s:f,s:f,s:i},s:f,s:f,s:I,s:I}", "policy",
	    policy_str(o->policy), "dragonLastAction", o->dragon_last_action, "backfill",
	    so->backfill, "starveAfter", so->starve_after, "idleAfter", so->idle_after,
	    "shrinkTries", so->shrink_tries, "victimOrder",
	    drake_victim_order_name(so->shrink.order), "lonelyFirst", so->shrink.lonely_first,
	    "speed", "scalingLoss", so->speed.scaling_loss, "localityPenalty",
	    so->speed.locality_penalty, "rescalePause", so->speed.rescale_pause, "nodeGpus",
	    so->speed.node_gpus, "endingHold", so->ending_hold, "keepWindow", so->keep_window,
	    "paceBudget", (json_int_t)o->pace_budget, "paceUnbound", (json_int_t)o->pace_unbound);
	if (opts) {
		json_object_set_new(opts, "queueOrder",
		                    json_string(drake_queue_order_name(so->queue)));
		json_object_set_new(opts, "ageAfter", json_real(so->age_after));
		json_object_set_new(opts, "serviceThreshold", json_real(so->service_threshold));
		json_object_set_new(opts, "startNarrow", json_boolean(so->start_narrow));
	}
	if (opts && so->history.n) {
		json_t *h = json_array();
		for (size_t i = 0; h && i < so->history.n; i++)
			json_array_append_new(h, json_real(so->history.service[i]));
		json_object_set_new(opts, "history", h);
	}
	if (opts && o->policy == DRAKE_POLICY_TIRESIAS) {
		json_t *t = json_array();
		for (int q = 0; t && q + 1 < o->las.n_queues; q++)
			json_array_append_new(t, json_real(o->las.threshold[q]));
		json_object_set_new(opts, "las",
		                    json_pack("{s:o,s:f,s:f,s:f}", "thresholds", t, "promoteKnob",
		                              o->las.promote_knob, "interval", o->las_interval,
		                              "decided", o->las_decided));
	}
	json_t *names = json_array();
	for (int i = 0; names && i < c->names.n; i++)
		json_array_append_new(names, json_string(c->names.name[i]));
	json_t *line = json_pack("{s:f,s:{s:o,s:o,s:o,s:o},s:{s:o,s:o,s:o,s:I,s:f}}", "now", now,
	                         "in", "resources", names, "nodes", nodes, "jobs", js, "opts", opts,
	                         "out", "actions", acts, "jobs", st, "next", num(r->next), "held",
	                         (json_int_t)r->held, "dragonLastAction", r->dragon_last_action);
	if (line && o->policy == DRAKE_POLICY_TIRESIAS)
		json_object_set_new(json_object_get(line, "out"), "lasDecided",
		                    json_real(r->las_decided));
	char *s = line ? json_dumps(line, JSON_COMPACT) : NULL;
	json_decref(line);
	return s;
}
