/*
 * waves.c - the admission loop. Each round measures kube-scheduler's bind
 * rate for the pacing budget (gang/pace.h: no more gang pods waiting for
 * kube-scheduler than it binds in half the barrier timeout), runs
 * admit_round() over the caches with it, applies the waves that go (one
 * atomic ungate patch per pod, an Event, the plan on the job), tells
 * waiting jobs why once per reason, and follows the waves in flight until
 * kube-scheduler has bound them. A wave planned on room its round frees
 * is kept back until the pods the round deleted there are gone
 * (wave_room.h).
 *
 * A round builds the pass's world once (pass_world.h) and lends it to
 * admission, then to migration; its snapshot is kept afterwards, with the
 * round's own waves charged where they are planned, for the filter's
 * re-plan (views.c) until the next round replaces it.
 */
#include "reconciler/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "gang/backstop.h"
#include "gang/protocol.h"
#include "kube/api.h"
#include "kube/informer.h"
#include "kube/object.h"
#include "kube/pod.h"
#include "reconciler/pass_world.h"
#include "reconciler/scale.h"
#include "kind/job_codec.h"
#include "kind/pod_codec.h"

/*
 * Follows the admitted waves: *unbound gets how many of their pods still wait
 * for kube-scheduler, *binds how many it bound since the last scan. Waves
 * bound whole, gone, or stuck are dropped. True while a wave is still on its
 * way into the cache (the gated view: a snapshot now would miss its plan).
 */
static bool scan_waves(struct reconciler *r, long *binds, long *unbound)
{
	long long now = rec_now_ms(r);
	long long stuck_ms =
	    (long long)(r->opts.gang_bind_timeout_s * 1000) * DRAKE_BACKSTOP_STUCK_TIMEOUTS;
	bool settling = false;
	size_t kept = 0;
	*binds = *unbound = 0;
	for (size_t i = 0; i < r->npending; i++) {
		struct pending_wave *p = &r->pending[i];
		int bound = 0, waiting = 0;
		bool visible = true;
		for (int j = 0; j < p->w.n_pods; j++) {
			const struct kube_pod *pod =
			    kube_pods_get(kube_informer_cache(r->pods), p->w.ns, p->w.pods[j].name);
			if (!pod)
				continue; /* deleted: neither waits nor was bound by this wave */
			const char *node = pod->node_name;
			if (node && *node)
				bound++;
			else
				waiting++;
			if (!kube_pod_annotation(pod, DRAKE_ANNOTATION_PLANNED_NODE))
				visible = false;
		}
		if (bound > p->bound)
			*binds += bound - p->bound;
		p->bound = bound;
		long long age = now - p->sent_ms;
		if (!visible && age <= WAVE_SETTLE_MS)
			settling = true;
		else if (waiting == 0 || age > stuck_ms) {
			free(p->w.pods);
			continue;
		}
		*unbound += waiting;
		r->pending[kept++] = *p;
	}
	r->npending = kept;
	return settling;
}

static void apply_wave(struct reconciler *r, struct admit_wave *w)
{
	struct job job;
	rec_job_ref(r, &job, w->ns, w->job, w->uid);
	char msg[512];
	int nodes = 0;
	for (int i = 0; i < w->n_pods; i++)
		nodes += admit_wave_first_on_node(w, i);
	snprintf(msg, sizeof(msg), "admitted %d PS%s and %d workers as gang %s on %d node%s (%s%s)",
	         w->n_ps, w->n_chief ? ", the chief" : "", w->n_workers, w->gang, nodes,
	         nodes == 1 ? "" : "s", w->pods[0].node, nodes > 1 ? ", ..." : "");
	rec_event(r, &job, "Normal", "GangAdmitted", msg);
	if (w->n_pods == w->size) { /* a new wave, not a repair: record it on the job */
		const char **where = calloc((size_t)w->n_pods, sizeof(*where));
		for (int i = 0; where && i < w->n_pods; i++)
			where[i] = w->pods[i].node;
		char *plan = where ? job_plan_patch(w->gang, w->n_ps, w->n_chief, w->n_workers,
		                                    where, w->n_pods)
		                   : NULL;
		struct kube_resource res;
		rec_job_res(&job, NULL, &res);
		if (plan)
			rec_write(r, &job, OP_MERGE, &res, plan, NULL, "record plan");
		free(plan);
		free(where);
	}
	log_info("gang_admitted", "job=%s/%s gang=%s ps=%d chief=%d workers=%d nodes=%d", w->ns,
	         w->job, w->gang, w->n_ps, w->n_chief, w->n_workers, nodes);
	for (int i = 0; i < w->n_pods; i++) {
		const struct kube_pod *pod =
		    kube_pods_get(kube_informer_cache(r->pods), w->ns, w->pods[i].name);
		char *patch =
		    pod ? admit_ungate_patch(pod, w, w->pods[i].node, r->opts.gang_pin) : NULL;
		if (!patch)
			continue;
		struct kube_resource res;
		rec_pod_res(&job, w->pods[i].name, &res);
		rec_write(r, &job, OP_ADMIT, &res, patch, NULL, "admit pod");
		free(patch);
	}
}

void rec_waves_forget(struct reconciler *r, const char *ns, const char *name)
{
	size_t kept = 0;
	for (size_t i = 0; i < r->npending; i++) {
		struct pending_wave *p = &r->pending[i];
		if (!strcmp(p->w.ns, ns) && !strcmp(p->w.job, name)) {
			free(p->w.pods);
			continue;
		}
		r->pending[kept++] = *p;
	}
	r->npending = kept;
	kept = 0;
	for (size_t i = 0; i < r->ndeferred; i++) {
		struct deferred_wave *d = &r->deferred[i];
		if (!strcmp(d->w.ns, ns) && !strcmp(d->w.job, name)) {
			free(d->w.pods);
			free(d->waits);
			continue;
		}
		r->deferred[kept++] = *d;
	}
	r->ndeferred = kept;
}

/* Sends wave w (apply_wave) and follows it in r->pending, which then owns
 * its pods. */
static void send_wave(struct reconciler *r, struct admit_wave *w)
{
	apply_wave(r, w);
	struct pending_wave *p = realloc(r->pending, (r->npending + 1) * sizeof(*p));
	if (!p)
		return; /* sent, not followed: the caller frees its pods */
	r->pending = p;
	r->pending[r->npending++] = (struct pending_wave){.w = *w, .sent_ms = rec_now_ms(r)};
	w->pods = NULL;
}

/* Keeps wave w back until waits[0..n) are gone (wave_room.h); takes w's
 * pods and waits. False (nothing taken) when out of memory. */
static bool defer_wave(struct reconciler *r, struct admit_wave *w, struct room_pod *waits, size_t n)
{
	struct deferred_wave *d = realloc(r->deferred, (r->ndeferred + 1) * sizeof(*d));
	if (!d)
		return false;
	r->deferred = d;
	r->deferred[r->ndeferred++] =
	    (struct deferred_wave){.w = *w, .waits = waits, .nwaits = n, .since_ms = rec_now_ms(r)};
	w->pods = NULL;
	log_debug("wave_waits_for_room", "job=%s/%s gang=%s pods=%zu first=%s node=%s", w->ns,
	          w->job, w->gang, n, waits[0].name, waits[0].node);
	return true;
}

/* Sends the waves kept back whose room is free, or that waited
 * WAVE_ROOM_WAIT_MS. True when one was sent or one still waits: the round
 * waits too (a snapshot now would not show the wave's plan). */
static bool run_deferred(struct reconciler *r)
{
	if (!r->ndeferred)
		return false;
	long long now = rec_now_ms(r);
	const struct kube_cache *pods = kube_informer_cache(r->pods);
	size_t kept = 0;
	for (size_t i = 0; i < r->ndeferred; i++) {
		struct deferred_wave *d = &r->deferred[i];
		bool free_now = wave_room_free(pods, d->waits, d->nwaits);
		if (!free_now && now - d->since_ms <= WAVE_ROOM_WAIT_MS) {
			r->deferred[kept++] = *d;
			continue;
		}
		if (!free_now)
			log_warn(
			    "wave_room_timeout",
			    "job=%s/%s gang=%s waited_ms=%lld: ungated while a pod it waits for "
			    "(%s) is still on %s",
			    d->w.ns, d->w.job, d->w.gang, now - d->since_ms, d->waits[0].name,
			    d->waits[0].node);
		send_wave(r, &d->w);
		free(d->w.pods);
		free(d->waits);
	}
	r->ndeferred = kept;
	return true;
}

/* True while a scale record just written is not in the cache yet. */
static bool scale_settling(struct reconciler *r)
{
	long long now = rec_now_ms(r);
	size_t kept = 0;
	for (size_t i = 0; i < r->nscaling; i++) {
		struct pending_scale *p = &r->scaling[i];
		struct json_t *obj = rec_job_get(r, p->ns, p->job, NULL);
		const char *v = obj ? kube_obj_annotation(obj, p->annotation) : NULL;
		if (!obj || (v && !strcmp(v, p->value)) || now - p->sent_ms > WAVE_SETTLE_MS) {
			free(p->value);
			continue;
		}
		r->scaling[kept++] = *p;
	}
	r->nscaling = kept;
	return kept > 0;
}

/* Writes a job's new membership, then (a scale-down) deletes the workers it
 * gave away, each only if it is still the pod that was chosen. The pods'
 * replacements come back gated and, not being members, stay so. */
static void apply_scale(struct reconciler *r, struct admit_scale *sc, struct room_list *left)
{
	if (sc->patch && !sc->value)
		return;
	if (sc->patch) {
		struct pending_scale *p = realloc(r->scaling, (r->nscaling + 1) * sizeof(*p));
		if (!p)
			return; /* nothing written: the next round decides again */
		r->scaling = p;
		p = &r->scaling[r->nscaling++];
		memset(p, 0, sizeof(*p));
		snprintf(p->ns, sizeof(p->ns), "%s", sc->ns);
		snprintf(p->job, sizeof(p->job), "%s", sc->job);
		p->annotation = JOB_ANNOTATION_SCALE;
		p->value = sc->value;
		sc->value = NULL;
		p->sent_ms = rec_now_ms(r);
	}
	struct job job;
	rec_job_ref(r, &job, sc->ns, sc->job, sc->uid);
	struct kube_resource res;
	rec_job_res(&job, NULL, &res);
	if (sc->patch)
		rec_write(r, &job, OP_MERGE, &res, sc->patch, NULL, "record scale");
	char *v = sc->preempt ? job_preempted_value(rec_now_s(r), sc->service, sc->why) : NULL;
	char *mark = v ? job_annotation_patch(JOB_ANNOTATION_PREEMPTED, v) : NULL;
	if (mark) /* the job's status says so until its gang is bound again */
		rec_write(r, &job, OP_MERGE, &res, mark, NULL, "record preemption");
	free(mark);
	free(v);
	for (int i = 0; !sc->grow && i < sc->n; i++) {
		const struct kube_pod *pod =
		    kube_pods_get(kube_informer_cache(r->pods), sc->ns, sc->pods[i]);
		if (!pod || pod->deleting)
			continue;
		struct kube_meta m;
		kube_pod_meta(pod, &m);
		rec_pod_res(&job, sc->pods[i], &res);
		rec_write(r, &job, OP_DELETE, &res, NULL, m.uid,
		          sc->preempt ? "preempt" : "scale down");
		if (!room_list_add(left, pod))
			log_warn("wave_room_untracked", "job=%s/%s pod=%s: out of memory", sc->ns,
			         sc->job, sc->pods[i]);
	}
	if (sc->preempt) {
		rec_event(r, &job, "Normal", "Preempted", sc->why);
		log_info("job_preempted", "job=%s/%s pods=%d why=\"%s\"", sc->ns, sc->job, sc->n,
		         sc->why);
		return;
	}
	if (!sc->patch) {
		log_warn("scale_strays_deleted", "job=%s/%s workers=%d first=%s", sc->ns, sc->job,
		         sc->n, sc->n ? sc->pods[0] : "");
		return;
	}
	rec_event(r, &job, "Normal", sc->grow ? "ScaledUp" : "ScaledDown", sc->why);
	log_info(sc->grow ? "job_scaled_up" : "job_scaled_down", "job=%s/%s workers=%d why=\"%s\"",
	         sc->ns, sc->job, sc->n, sc->why);
}

static struct wait_note *wait_note(struct reconciler *r, const char *key)
{
	for (size_t i = 0; i < r->nwaits; i++)
		if (!strcmp(r->waits[i].key, key))
			return &r->waits[i];
	struct wait_note *n = realloc(r->waits, (r->nwaits + 1) * sizeof(*n));
	if (!n)
		return NULL;
	r->waits = n;
	n = &r->waits[r->nwaits++];
	memset(n, 0, sizeof(*n));
	snprintf(n->key, sizeof(n->key), "%s", key);
	return n;
}

/* Posts an Event on job ns/name once per (status, why) the note keyed key
 * has not said yet. */
static void note_once(struct reconciler *r, const char *key, const struct admit_waiting *wt,
                      const char *type, const char *reason, const char *msg)
{
	struct wait_note *n = wait_note(r, key);
	if (!n)
		return;
	n->seen = true;
	if (n->status == (int)wt->status && !strcmp(n->why, wt->why))
		return;
	n->status = (int)wt->status;
	snprintf(n->why, sizeof(n->why), "%s", wt->why);
	if (wt->quiet)
		return;
	struct json_t *obj = rec_job_get(r, wt->ns, wt->job, NULL);
	struct kube_meta m;
	if (!obj || kube_obj_meta(obj, &m) != DRAKE_OK)
		return;
	struct job job;
	rec_job_ref(r, &job, wt->ns, wt->job, m.uid);
	rec_event(r, &job, type, reason, msg);
}

static void note_waiting(struct reconciler *r, const struct admit_waiting *wt)
{
	char key[KEY_MAX], msg[DRAKE_WHY_MAX + 64];
	snprintf(key, sizeof(key), "%s/%s", wt->ns, wt->job);
	snprintf(msg, sizeof(msg), "gang %s: %s", drake_admit_status_name(wt->status), wt->why);
	note_once(r, key, wt, "Normal", "GangWaiting", msg);
}

/* A drake.dev/scale annotation that does not fit its job is ignored (the
 * job keeps the members of the wave that admitted it): said once per
 * reason, as a Warning. */
static void note_ignored(struct reconciler *r, const struct admit_waiting *wt)
{
	char key[KEY_MAX];
	snprintf(key, sizeof(key), "scale:%.63s/%.240s", wt->ns, wt->job);
	note_once(r, key, wt, "Warning", "ScaleRecordIgnored", wt->why);
}

static bool was_skipped(const struct admit_skipped_list *l, const struct admit_skipped *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].node, s->node) && !strcmp(l->v[i].why, s->why))
			return true;
	return false;
}

/* Keeps the round's left-out nodes for GET /v1/jobs, logging each node
 * once per reason (and once when it is back). */
static void note_skipped(struct reconciler *r, struct admit_skipped_list *now)
{
	for (size_t i = 0; i < now->n; i++)
		if (!was_skipped(&r->skipped, &now->v[i]))
			log_warn("node_left_out", "node=%s why=\"%s\"", now->v[i].node,
			         now->v[i].why);
	for (size_t i = 0; i < r->skipped.n; i++) {
		bool still = false;
		for (size_t j = 0; j < now->n && !still; j++)
			still = !strcmp(now->v[j].node, r->skipped.v[i].node);
		if (!still)
			log_info("node_back", "node=%s", r->skipped.v[i].node);
	}
	if (now->unlisted && !r->skipped.unlisted)
		log_warn("node_left_out", "unlisted=%zu", now->unlisted);
	admit_skipped_release(&r->skipped);
	r->skipped = *now;
	memset(now, 0, sizeof(*now));
}

static bool slow_of(void *arg, const struct job *job, double *frac)
{
	return rec_job_slow(arg, job, frac);
}

static void observe_of(void *arg, const char *key, struct drake_round_job *in)
{
	struct reconciler *r = arg;
	rec_observe(r, key, in, rec_now_s(r));
}

static void keep_las_of(void *arg, const char *uid, const struct drake_las_state *st)
{
	rec_observed_keep_las(arg, uid, st);
}

static double changed_of(void *arg, const char *ns)
{
	return rec_changed_s(arg, ns);
}

drake_err rec_pass_world(struct reconciler *r, struct pass_world *w, char *msg, size_t msglen)
{
	struct job_caches jc;
	rec_job_caches(r, &jc);
	drake_err e = pass_world_build(w, kube_informer_cache(r->nodes),
	                               kube_informer_cache(r->pods), &jc, msg, msglen);
	if (!e)
		rec_usage_apply(r, &w->c);
	w->built_s = rec_now_s(r);
	return e;
}

/* Charges a wave just admitted to the kept snapshot where it is planned,
 * as the next snapshot will once the cache shows its plan: a re-plan in
 * between takes none of its room. */
static void charge_wave(struct reconciler *r, struct pass_world *w, const struct admit_wave *wv)
{
	for (int i = 0; i < wv->n_pods; i++) {
		const struct admit_pod *p = &wv->pods[i];
		const struct kube_pod *pod =
		    kube_pods_get(kube_informer_cache(r->pods), wv->ns, p->name);
		int node = drake_cluster_find(&w->c, p->node);
		struct drake_res req;
		char why[DRAKE_WHY_MAX];
		if (!pod || node < 0 ||
		    admit_pod_requests(pod, &w->c.names, &req, why, sizeof(why)) != DRAKE_OK)
			continue;
		drake_cluster_charge(&w->c, (size_t)node, &req, 1);
		if (p->share.milli > 0 && p->gpuid[0])
			drake_cluster_charge_vgpu(&w->c, (size_t)node, p->gpuid, &p->share, 1);
	}
}

/* Keeps w's snapshot for the re-plan in place of the last round's. */
static void keep_world(struct reconciler *r, struct pass_world *w)
{
	pass_world_drop_jobs(w); /* they borrow the job cache */
	w->gen = ++r->rounds;
	pass_world_release(r->world);
	free(r->world);
	r->world = w;
}

void rec_admit_pass(struct reconciler *r)
{
	if (!r->opts.gang || !kube_informer_synced(r->nodes))
		return;
	long binds, unbound;
	bool settling = scan_waves(r, &binds, &unbound);
	drake_pace_observe(&r->pace, rec_now_s(r), binds, unbound);
	if (run_deferred(r) || settling || scale_settling(r))
		return;
	r->admit_dirty = false;
	/* Pacing: the round holds a new wave past the budget and every new
	 * wave behind it (gang/round.h); repairs always go. */
	long budget = drake_pace_budget(&r->pace, r->opts.gang_bind_timeout_s / 2, PACE_FLOOR,
	                                r->opts.gang_max_unbound);
	struct admit_options ao = {.backfill = !r->opts.strict_fifo,
	                           .now_s = rec_now_s(r),
	                           .scale = r->opts.scale,
	                           .history = rec_history(r),
	                           .resize_costs = r->opts.resize_costs,
	                           .progress = slow_of,
	                           .progress_arg = r,
	                           .observe = observe_of,
	                           .keep_las = keep_las_of,
	                           .changed = changed_of,
	                           .changed_arg = r,
	                           .pace_budget = budget,
	                           .pace_unbound = unbound,
	                           .log = r->dlog,
	                           .policy = r->opts.policy,
	                           .dragon_last_action = r->dragon_last_action,
	                           .las = r->opts.las,
	                           .las_interval = r->opts.las_interval,
	                           .las_decided = r->las_decided};
	struct admit_result res;
	char msg[256];
	r->observe_pass++;
	struct pass_world *w = calloc(1, sizeof(*w));
	drake_err e = w ? rec_pass_world(r, w, msg, sizeof(msg))
	                : drake_errorf(DRAKE_ENOMEM, msg, sizeof(msg), "out of memory");
	if (!e)
		e = admit_round_world(w, kube_informer_cache(r->pods),
		                      kube_informer_cache(r->nodes), &ao, &res, msg, sizeof(msg));
	if (e) {
		log_error("admission_failed", "err=%s msg=\"%s\"", drake_strerror(e), msg);
		pass_world_release(w);
		free(w);
		return;
	}
	r->dragon_last_action = res.dragon_last_action;
	r->las_decided = res.las_decided;
	rec_observed_gc(r);
	note_skipped(r, &res.skipped);
	free(r->running);
	r->running = res.running;
	r->nrunning = res.n_running;
	res.running = NULL;
	res.n_running = 0;
	r->admit_at = res.next;
	rec_arm_timer(r);
	struct room_list left = {0}; /* the pods this round deletes */
	for (size_t i = 0; i < res.n_scales; i++)
		apply_scale(r, &res.scales[i], &left);
	for (size_t i = 0; i < r->nwaits; i++)
		r->waits[i].seen = false;
	for (size_t i = 0; i < res.n_waiting; i++)
		note_waiting(r, &res.waiting[i]);
	for (size_t i = 0; i < res.n_ignored; i++)
		note_ignored(r, &res.ignored[i]);
	size_t kept = 0; /* forget jobs that no longer wait */
	for (size_t i = 0; i < r->nwaits; i++)
		if (r->waits[i].seen)
			r->waits[kept++] = r->waits[i];
	r->nwaits = kept;
	if (res.n_held)
		log_debug("gang_paced", "held=%zu unbound=%ld budget=%ld rate=%.1f", res.n_held,
		          unbound, budget, r->pace.rate);
	/* this round's go after the waves before, or wait for their room */
	size_t new_waves = r->npending, new_deferred = r->ndeferred;
	for (size_t i = 0; i < res.n_waves; i++) {
		struct room_pod *waits;
		long n = wave_room_waits(&res.waves[i], &left, &waits);
		if (n > 0 && defer_wave(r, &res.waves[i], waits, (size_t)n))
			continue;
		free(waits);
		send_wave(r, &res.waves[i]);
	}
	room_list_release(&left);
	admit_result_release(&res);
	rec_migrate_pass(r, w); /* the snapshot admission read, as before its waves */
	for (size_t i = new_waves; i < r->npending; i++)
		charge_wave(r, w, &r->pending[i].w);
	for (size_t i = new_deferred; i < r->ndeferred; i++)
		charge_wave(r, w, &r->deferred[i].w);
	keep_world(r, w);
}
