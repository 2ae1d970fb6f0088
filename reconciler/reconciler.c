/*
 * reconciler.c - the TFJob controller's loop. Informer callbacks only mark a
 * job's key dirty; a zero-delay event drains the dirty set and syncs each job
 * from the caches: finished jobs get cleanPodPolicy and TTL; live jobs get
 * any missing service and (gated) pod, failed pods recreated per restart
 * policy, the planned pods ungated, and a status patch when the verdict
 * changed. Every write is idempotent (fixed names, preconditions, test ops),
 * and a job with writes in flight is skipped and retried a second later, so
 * a pass never races its own earlier writes.
 *
 * Ownership: each write carries a small context on r->writes; freeing the
 * reconciler detaches them, and their late callbacks free only themselves.
 */
#include "reconciler/reconciler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <event2/event_struct.h>

#include "common/log.h"
#include "kube/api.h"
#include "kube/client.h"
#include "kube/informer.h"
#include "kube/object.h"
#include "gang/pace.h"
#include "gang/protocol.h"
#include "reconciler/admit.h"
#include "reconciler/pod_codec.h"
#include "reconciler/status.h"
#include "reconciler/tfjob.h"

#define KEY_MAX (64 + 254 + 2)

struct keyset {
	char (*keys)[KEY_MAX];
	size_t n, cap;
};

struct write_ctx {
	struct reconciler *r; /* NULL once the reconciler is gone */
	struct write_ctx *prev, *next;
	char key[KEY_MAX];
	char what[96];
};

/* Per job: writes in flight, and a backoff after failed ones so a job whose
 * writes keep failing (RBAC, quota, admission) is not retried every second. */
struct inflight {
	char key[KEY_MAX];
	int n;
	int failures;       /* consecutive passes with a failed write */
	bool failed;        /* a write of the current pass failed */
	long long retry_ms; /* no pass before this (monotonic ms) */
};

/* A wave whose patches were sent. Admission holds further rounds until the
 * cache shows every pod of it planned (so the next snapshot charges it), or
 * until the wave is old enough to have failed. Pacing then follows it until
 * kube-scheduler has bound it: its unbound pods count against the budget and
 * its binds measure kube-scheduler's rate. A wave still unbound after
 * STUCK_TIMEOUTS barrier timeouts stops counting: the backstop
 * (check_partial_gang) releases it. */
#define WAVE_SETTLE_MS 30000
#define PACE_FLOOR     64 /* pods; the budget before any rate is measured */
struct pending_wave {
	struct admit_wave w;
	long long sent_ms;
	int bound; /* members seen bound at the last scan */
};

/* A job seen with part of its gang bound and fewer than its minimum, since
 * when (monotonic ms): rolled back once that lasts PARTIAL_TIMEOUTS barrier
 * timeouts, or STUCK_TIMEOUTS when nothing of it is bound yet. In memory
 * only: a restart starts the clock again. */
#define PARTIAL_TIMEOUTS 2
#define STUCK_TIMEOUTS   4
struct partial_note {
	char key[KEY_MAX];
	long long since_ms;
};

/* The last reason each waiting job was given, so an Event is posted only
 * when it changes. */
struct wait_note {
	char key[KEY_MAX];
	char why[DRAKE_WHY_MAX];
	int status;
	bool seen; /* still waiting in the latest round */
};

struct reconciler {
	struct event_base *base;
	struct kube_client *client;
	struct reconciler_options opts;
	char *domain, *gang_resource;
	struct kube_informer *jobs, *pods, *services, *nodes;
	struct pending_wave *pending;
	size_t npending;
	struct drake_pace pace;
	struct wait_note *waits;
	size_t nwaits;
	struct partial_note *partials;
	size_t npartials;
	bool admit_dirty;
	struct keyset now, later;
	struct inflight *inflight;
	size_t ninflight, capinflight;
	struct write_ctx *writes;
	struct event drain, tick;
	long last_resync;
	long long last_requeue_ms;
	bool was_synced, events_ready;
};

static long long now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static drake_err keyset_add(struct keyset *s, const char *key)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->keys[i], key))
			return DRAKE_OK;
	if (s->n >= RECONCILER_QUEUE_MAX || strlen(key) >= KEY_MAX)
		return DRAKE_ELIMIT;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		void *k = realloc(s->keys, cap * KEY_MAX);
		if (!k)
			return DRAKE_ENOMEM;
		s->keys = k;
		s->cap = cap;
	}
	memcpy(s->keys[s->n++], key, strlen(key) + 1);
	return DRAKE_OK;
}

static struct inflight *inflight_of(struct reconciler *r, const char *key, bool create)
{
	for (size_t i = 0; i < r->ninflight; i++)
		if (!strcmp(r->inflight[i].key, key))
			return &r->inflight[i];
	if (!create)
		return NULL;
	if (r->ninflight == r->capinflight) {
		size_t cap = r->capinflight ? r->capinflight * 2 : 32;
		struct inflight *p = realloc(r->inflight, cap * sizeof(*p));
		if (!p)
			return NULL;
		r->inflight = p;
		r->capinflight = cap;
	}
	struct inflight *f = &r->inflight[r->ninflight++];
	snprintf(f->key, sizeof(f->key), "%s", key);
	f->n = 0;
	f->failures = 0;
	f->failed = false;
	f->retry_ms = 0;
	return f;
}

static void enqueue(struct reconciler *r, struct keyset *s, const char *ns, const char *name)
{
	char key[KEY_MAX];
	if (snprintf(key, sizeof(key), "%s/%s", ns, name) >= (int)sizeof(key))
		return;
	if (keyset_add(s, key) != DRAKE_OK)
		log_warn("reconciler_queue_full", "key=%s", key);
	if (s == &r->now)
		event_active(&r->drain, 0, 0);
}

/* ---- informer handlers: mark the owning job dirty ---- */

static void job_changed(struct json_t *obj, void *arg)
{
	struct kube_meta m;
	if (kube_obj_meta(obj, &m) == DRAKE_OK)
		enqueue(arg, &((struct reconciler *)arg)->now, m.ns, m.name);
}

static void owned_changed(struct json_t *obj, void *arg)
{
	struct kube_meta m;
	const char *job = kube_obj_label(obj, TF_LABEL_JOB);
	if (job && kube_obj_meta(obj, &m) == DRAKE_OK && m.owner_kind &&
	    !strcmp(m.owner_kind, "TFJob"))
		enqueue(arg, &((struct reconciler *)arg)->now, m.ns, job);
}

static void job_updated(struct json_t *o, struct json_t *n, void *arg)
{
	job_changed(n, arg);
}

static void node_changed(struct json_t *obj, void *arg)
{
	((struct reconciler *)arg)->admit_dirty = true;
}

static void node_updated(struct json_t *o, struct json_t *n, void *arg)
{
	((struct reconciler *)arg)->admit_dirty = true;
}
static void owned_updated(struct json_t *o, struct json_t *n, void *arg)
{
	owned_changed(n, arg);
}

/* ---- writes ---- */

static void on_write_done(const struct kube_response *resp, void *arg)
{
	struct write_ctx *w = arg;
	struct reconciler *r = w->r;
	if (r) {
		if (w->prev)
			w->prev->next = w->next;
		else
			r->writes = w->next;
		if (w->next)
			w->next->prev = w->prev;
		struct inflight *f = inflight_of(r, w->key, false);
		bool ok = resp->status >= 200 && resp->status < 300;
		if (f && f->n > 0)
			f->n--;
		if (f && !ok && resp->status != 409 && resp->status != 404)
			f->failed = true;
		if (f && f->n == 0) { /* the pass's last write: settle the backoff */
			f->failures = f->failed ? (f->failures < 6 ? f->failures + 1 : 6) : 0;
			f->retry_ms = f->failures ? now_ms() + (1000LL << f->failures) : 0;
			f->failed = false;
		}
		/* 409 on create means it exists; 404 on delete means it is gone; 409/422 on
		 * a patch means a stale view: all settle on the next pass */
		if (!ok && resp->status != 409 && resp->status != 404) {
			char why[200], q[256];
			if (resp->status)
				kube_status_message(resp->body, resp->body_len, why, sizeof(why));
			else
				snprintf(why, sizeof(why), "%s", resp->error ? resp->error : "-");
			log_warn("reconciler_write_failed", "job=%s what=%s status=%ld error=%s",
			         w->key, w->what, resp->status, drake_log_quote(why, q, sizeof(q)));
		}
		char ns[64] = "", name[254] = "";
		sscanf(w->key, "%63[^/]/%253s", ns, name);
		enqueue(r, &r->later, ns, name);
	}
	free(w);
}

static struct write_ctx *write_ctx(struct reconciler *r, const struct tfjob *job, const char *what)
{
	struct write_ctx *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->r = r;
	snprintf(w->key, sizeof(w->key), "%s/%s", job->ns, job->name);
	snprintf(w->what, sizeof(w->what), "%s", what);
	w->next = r->writes;
	if (r->writes)
		r->writes->prev = w;
	r->writes = w;
	struct inflight *f = inflight_of(r, w->key, true);
	if (f)
		f->n++;
	return w;
}

/* Undoes write_ctx() when the request never started. */
static void write_failed(struct reconciler *r, struct write_ctx *w, drake_err e)
{
	log_warn("reconciler_write_failed", "job=%s what=%s err=%s", w->key, w->what,
	         drake_strerror(e));
	struct kube_response resp = {.status = 0, .body = "", .error = drake_strerror(e)};
	on_write_done(&resp, w);
}

enum op { OP_CREATE, OP_DELETE, OP_MERGE, OP_JSONPATCH };

static void write(struct reconciler *r, const struct tfjob *job, enum op op,
                  const struct kube_resource *res, const char *body, const char *uid,
                  const char *what)
{
	struct write_ctx *w = write_ctx(r, job, what);
	if (!w)
		return;
	drake_err e = DRAKE_EINVAL;
	switch (op) {
	case OP_CREATE: e = body ? kube_create(r->client, res, body, on_write_done, w) : e; break;
	case OP_DELETE: e = kube_delete(r->client, res, uid, NULL, on_write_done, w); break;
	case OP_MERGE:
		e = body ? kube_merge_patch(r->client, res, body, on_write_done, w) : e;
		break;
	case OP_JSONPATCH:
		e = body ? kube_json_patch(r->client, res, body, on_write_done, w) : e;
		break;
	}
	if (e != DRAKE_OK)
		write_failed(r, w, e);
}

static void event(struct reconciler *r, const struct tfjob *job, const char *type,
                  const char *reason, const char *message)
{
	log_info("tfjob_event", "job=%s/%s type=%s reason=%s", job->ns, job->name, type, reason);
	drake_err e = kube_record_event(r->client, job->ns, "kubeflow.org/v1", "TFJob", job->name,
	                                job->uid, type, reason, message, NULL, NULL);
	if (e != DRAKE_OK)
		log_warn("event_post_failed", "job=%s/%s err=%s", job->ns, job->name,
		         drake_strerror(e));
}

/* ---- one pass over one job ---- */

struct owned {
	struct json_t *obj[RECONCILER_MAX_PODS];
	struct tf_pod_obs obs[RECONCILER_MAX_PODS];
	size_t n;
	bool truncated;
};

static bool collect_pod(struct json_t *pod, void *arg)
{
	struct owned *o = arg;
	if (o->n == RECONCILER_MAX_PODS) {
		o->truncated = true;
		return false;
	}
	if (tf_pod_observe(pod, &o->obs[o->n])) {
		o->obj[o->n] = pod;
		o->n++;
	}
	return true;
}

static struct json_t *find(const struct owned *o, enum tf_rtype t, int index)
{
	for (size_t i = 0; i < o->n; i++)
		if (o->obs[i].type == t && o->obs[i].index == index)
			return o->obj[i];
	return NULL;
}

struct svc_seen {
	unsigned char have[TF_NTYPES][TF_MAX_REPLICAS];
};

static bool collect_svc(struct json_t *svc, void *arg)
{
	struct svc_seen *s = arg;
	enum tf_rtype t;
	int i;
	if (tf_replica_of(svc, &t, &i))
		s->have[t][i] = 1;
	return true;
}

static void pod_res(const struct tfjob *job, const char *name, struct kube_resource *res)
{
	*res =
	    (struct kube_resource){.version = "v1", .plural = "pods", .ns = job->ns, .name = name};
}

static void job_res(const struct tfjob *job, const char *sub, struct kube_resource *res)
{
	*res = (struct kube_resource){.group = "kubeflow.org",
	                              .version = "v1",
	                              .plural = "tfjobs",
	                              .ns = job->ns,
	                              .name = job->name,
	                              .subresource = sub};
}

static void finish_job(struct reconciler *r, const struct tfjob *job, struct owned *o,
                       long since_done)
{
	for (size_t i = 0; i < o->n; i++) {
		struct tf_pod_obs *p = &o->obs[i];
		bool live = p->phase == TF_POD_RUNNING || p->phase == TF_POD_PENDING ||
		            p->phase == TF_POD_UNKNOWN;
		if (p->deleting || job->clean == TF_CLEAN_NONE ||
		    (job->clean == TF_CLEAN_RUNNING && !live))
			continue;
		struct kube_meta m;
		if (kube_obj_meta(o->obj[i], &m) != DRAKE_OK)
			continue;
		struct kube_resource res;
		pod_res(job, m.name, &res);
		write(r, job, OP_DELETE, &res, NULL, m.uid, "cleanup pod");
	}
	if (job->ttl_s < 0)
		return;
	if (since_done >= job->ttl_s) {
		struct kube_resource res;
		job_res(job, NULL, &res);
		event(r, job, "Normal", "TTLExpired", "ttlSecondsAfterFinished passed; deleting");
		write(r, job, OP_DELETE, &res, NULL, job->uid, "ttl delete");
	} else {
		enqueue(r, &r->later, job->ns, job->name); /* look again in a second */
	}
}

static void create_missing(struct reconciler *r, const struct tfjob *job, const struct owned *o,
                           const struct svc_seen *svcs, int *created)
{
	for (int t = 0; t < TF_NTYPES; t++) {
		int slots = tf_replica_slots(job, (enum tf_rtype)t);
		for (int i = 0; i < slots; i++) {
			char name[TF_SERVICE_NAME_MAX + 1], msg[160];
			if (tf_replica_name(job, (enum tf_rtype)t, i, name, sizeof(name)) !=
			    DRAKE_OK)
				continue;
			if (!svcs->have[t][i]) {
				struct kube_resource res = {
				    .version = "v1", .plural = "services", .ns = job->ns};
				char *body = tf_service_json(job, (enum tf_rtype)t, i);
				write(r, job, OP_CREATE, &res, body, NULL, "create service");
				free(body);
			}
			if (!find(o, (enum tf_rtype)t, i)) {
				struct kube_resource res = {
				    .version = "v1", .plural = "pods", .ns = job->ns};
				char *body = tf_pod_json(job, (enum tf_rtype)t, i, r->domain,
				                         r->gang_resource, msg, sizeof(msg));
				if (!body)
					log_warn("reconciler_pod_build", "job=%s/%s err=%s",
					         job->ns, job->name, msg);
				write(r, job, OP_CREATE, &res, body, NULL, "create pod");
				free(body);
				(*created)++;
			}
		}
	}
}

/* Patches status when the verdict changed it, with an Event on a new state. */
static void write_status(struct reconciler *r, const struct tfjob *job, struct json_t *obj,
                         const struct tf_verdict *v, long now)
{
	const char *was = tf_status_current(obj);
	char *patch = tf_status_patch(obj, job, v, now);
	if (patch) {
		struct kube_resource res;
		job_res(job, "status", &res);
		write(r, job, OP_MERGE, &res, patch, NULL, "status");
		free(patch);
		const char *state = tf_state_name(v->state);
		if (v->state != TF_STATE_CREATED && (!was || strcmp(was, state) != 0))
			event(r, job,
			      v->state == TF_STATE_FAILED || v->state == TF_STATE_RESTARTING
			          ? "Warning"
			          : "Normal",
			      v->reason, v->message);
	}
}

static void suspend_job(struct reconciler *r, const struct tfjob *job, struct json_t *obj,
                        struct owned *o, const struct svc_seen *svcs, long now)
{
	for (size_t i = 0; i < o->n; i++) {
		struct kube_meta m;
		if (o->obs[i].deleting || kube_obj_meta(o->obj[i], &m) != DRAKE_OK)
			continue;
		struct kube_resource res;
		pod_res(job, m.name, &res);
		write(r, job, OP_DELETE, &res, NULL, m.uid, "suspend pod");
	}
	for (int t = 0; t < TF_NTYPES; t++) {
		for (int i = 0; i < TF_MAX_REPLICAS; i++) {
			char name[TF_SERVICE_NAME_MAX + 1];
			if (!svcs->have[t][i] || tf_replica_name(job, (enum tf_rtype)t, i, name,
			                                         sizeof(name)) != DRAKE_OK)
				continue;
			struct kube_resource res = {
			    .version = "v1", .plural = "services", .ns = job->ns, .name = name};
			write(r, job, OP_DELETE, &res, NULL, NULL, "suspend service");
		}
	}
	struct tf_verdict v = {.state = TF_STATE_SUSPENDED};
	snprintf(v.reason, sizeof(v.reason), "TFJobSuspended");
	snprintf(v.message, sizeof(v.message), "TFJob %s/%s is suspended.", job->ns, job->name);
	write_status(r, job, obj, &v, now);
}

/* A pod of the job's gang that is still alive: PS, chief or worker (an
 * evaluator is not planned with them), not finished, not being deleted. */
static bool live_member(const struct tf_pod_obs *p)
{
	return (p->type == TF_PS || p->type == TF_CHIEF || p->type == TF_WORKER) && !p->deleting &&
	       p->phase != TF_POD_SUCCEEDED && p->phase != TF_POD_FAILED;
}

/* Forgets key's partial-gang clock. */
static void partial_forget(struct reconciler *r, const char *key)
{
	for (size_t i = 0; i < r->npartials; i++)
		if (!strcmp(r->partials[i].key, key)) {
			r->partials[i] = r->partials[--r->npartials];
			return;
		}
}

/* When key was first seen partial; now when it is new (or no memory). */
static long long partial_since(struct reconciler *r, const char *key, long long now)
{
	for (size_t i = 0; i < r->npartials; i++)
		if (!strcmp(r->partials[i].key, key))
			return r->partials[i].since_ms;
	struct partial_note *n = realloc(r->partials, (r->npartials + 1) * sizeof(*n));
	if (!n)
		return now;
	r->partials = n;
	n = &r->partials[r->npartials++];
	snprintf(n->key, sizeof(n->key), "%s", key);
	n->since_ms = now;
	return now;
}

/*
 * The gang invariant's backstop. The bind barrier never binds part of a
 * wave, but a drake killed while posting a wave's Bindings, or a member
 * recreated after a failure that cannot be placed again, leaves a job with
 * part of its gang bound and fewer than its minimum (the gang-min
 * annotation: PS + chief + min-instances) while the rest wait. Once that has lasted
 * PARTIAL_TIMEOUTS barrier timeouts, every live PS, chief and worker pod of
 * the job is deleted: the next pass recreates them gated and admission plans the
 * job again, whole. A wave with nothing bound whose planned pods have waited
 * STUCK_TIMEOUTS barrier timeouts (its node was cordoned, or a pod drake's
 * snapshot missed took the room) is released the same way: a scheduling
 * gate cannot be put back, so the pods are recreated behind it.
 */
static void check_partial_gang(struct reconciler *r, const struct tfjob *job, const struct owned *o,
                               const char *key)
{
	int bound = 0, waiting = 0, planned = 0;
	long min = 0;
	for (size_t i = 0; i < o->n; i++) {
		const struct tf_pod_obs *p = &o->obs[i];
		if (!live_member(p))
			continue;
		const char *node = kube_obj_str(o->obj[i], "spec.nodeName");
		if (node && *node)
			bound++;
		else
			waiting++;
		if (!(node && *node) && !p->gated &&
		    kube_obj_annotation(o->obj[i], DRAKE_ANNOTATION_PLANNED_NODE))
			planned++; /* admitted, not yet bound */
		const char *m = kube_obj_annotation(o->obj[i], DRAKE_ANNOTATION_GANG_MIN);
		long v = m ? strtol(m, NULL, 10) : 0;
		if (v > min && v <= DRAKE_GANG_SIZE_MAX)
			min = v;
	}
	bool partial = bound > 0 && bound < min && waiting > 0;
	bool stuck = bound == 0 && planned > 0;
	if (!partial && !stuck) {
		partial_forget(r, key);
		return;
	}
	long long now = now_ms(), since = partial_since(r, key, now);
	long long deadline = (long long)(r->opts.gang_bind_timeout_s * 1000) *
	                     (partial ? PARTIAL_TIMEOUTS : STUCK_TIMEOUTS);
	if (now - since < deadline) {
		enqueue(r, &r->later, job->ns, job->name); /* look again in a second */
		return;
	}
	char msg[256];
	if (partial)
		snprintf(msg, sizeof(msg),
		         "%d members bound and %d waiting for %llds, fewer than the gang's minimum "
		         "of %ld: deleting its gang's pods so that it is admitted again whole",
		         bound, waiting, (now - since) / 1000, min);
	else
		snprintf(
		    msg, sizeof(msg),
		    "none of the %d admitted pods was bound in %llds: the plan no longer fits; "
		    "deleting them so that the job is planned again",
		    planned, (now - since) / 1000);
	event(r, job, "Warning", partial ? "GangRolledBack" : "GangReleased", msg);
	log_warn(partial ? "gang_rolled_back" : "gang_released",
	         "job=%s bound=%d waiting=%d planned=%d min=%ld", key, bound, waiting, planned,
	         min);
	for (size_t i = 0; i < o->n; i++) {
		const struct tf_pod_obs *p = &o->obs[i];
		struct kube_meta pm;
		if (!live_member(p) || kube_obj_meta(o->obj[i], &pm) != DRAKE_OK)
			continue;
		struct kube_resource res;
		pod_res(job, pm.name, &res);
		write(r, job, OP_DELETE, &res, NULL, pm.uid, "roll back partial gang");
	}
	partial_forget(r, key);
}

static void sync_job(struct reconciler *r, const char *ns, const char *name)
{
	struct json_t *obj = kube_informer_get(r->jobs, ns, name);
	struct kube_meta m;
	char key[KEY_MAX];
	snprintf(key, sizeof(key), "%s/%s", ns, name);
	if (!obj || kube_obj_meta(obj, &m) != DRAKE_OK || m.deleting) {
		partial_forget(r, key);
		return;
	}
	struct inflight *f = inflight_of(r, key, false);
	if (f && f->n > 0)
		return; /* the write callbacks requeue it */
	if (f && f->retry_ms > now_ms()) {
		enqueue(r, &r->later, ns, name); /* backing off after failed writes */
		return;
	}
	struct tfjob job;
	bool managed;
	char msg[256];
	long now = (long)time(NULL);
	if (tfjob_decode(obj, &job, &managed, msg, sizeof(msg)) != DRAKE_OK) {
		char *patch = tf_status_invalid_patch(obj, msg, now);
		if (patch && m.uid[0] && strlen(ns) < sizeof(job.ns) &&
		    strlen(name) < sizeof(job.name)) {
			memset(&job, 0, sizeof(job));
			snprintf(job.ns, sizeof(job.ns), "%s", ns);
			snprintf(job.name, sizeof(job.name), "%s", name);
			snprintf(job.uid, sizeof(job.uid), "%s", m.uid);
			struct kube_resource res;
			job_res(&job, "status", &res);
			event(r, &job, "Warning", "TFJobFailedValidation", msg);
			write(r, &job, OP_MERGE, &res, patch, NULL, "invalid status");
		} else if (patch) {
			log_warn("tfjob_invalid", "job=%s err=%s", key, msg);
		}
		free(patch);
		return;
	}
	if (!managed)
		return; /* runPolicy.managedBy names another controller */
	bool final;
	long since_start, since_done;
	tf_status_read(obj, now, &final, &since_start, &since_done);
	static struct owned o; /* large; one pass at a time on one thread */
	o.n = 0;
	o.truncated = false;
	kube_cache_by_owner(kube_informer_cache(r->pods), job.uid, collect_pod, &o);
	if (o.truncated) { /* acting on part of the pods would recreate the rest */
		log_warn("reconciler_too_many_pods", "job=%s limit=%d action=skip", key,
		         RECONCILER_MAX_PODS);
		return;
	}
	if (final) {
		finish_job(r, &job, &o, since_done);
		return;
	}
	static struct svc_seen svcs;
	memset(&svcs, 0, sizeof(svcs));
	kube_cache_by_owner(kube_informer_cache(r->services), job.uid, collect_svc, &svcs);
	if (job.suspend) {
		suspend_job(r, &job, obj, &o, &svcs, now);
		return;
	}
	int created = 0;
	create_missing(r, &job, &o, &svcs, &created);
	struct tf_verdict v;
	int prior = tf_restart_count(obj);
	tf_judge(&job, o.obs, o.n, prior, since_start, &v);
	int recreated = 0;
	for (size_t i = 0; i < o.n; i++) {
		struct kube_meta pm;
		if (kube_obj_meta(o.obj[i], &pm) != DRAKE_OK)
			continue;
		struct kube_resource res;
		pod_res(&job, pm.name, &res);
		if (o.obs[i].recreate) {
			write(r, &job, OP_DELETE, &res, NULL, pm.uid, "recreate failed pod");
			recreated++;
		} else if (o.obs[i].gated && !o.obs[i].deleting && !tf_state_final(v.state) &&
		           tf_replica_starts(&job, o.obs[i].type, o.obs[i].index) &&
		           !(r->opts.gang && o.obs[i].type != TF_EVALUATOR)) {
			/* With gang admission, PS, chief and workers wait for a
			 * plan (admit_pass): they train together, so they start
			 * together. An evaluator is no part of the training
			 * cluster (TensorFlow leaves it out, though TF_CONFIG
			 * lists it as Kubeflow's does): it only reads the
			 * checkpoints, training never waits for it, and it
			 * starts at once. */
			char *patch = tf_pod_ungate_patch(o.obj[i]);
			write(r, &job, OP_JSONPATCH, &res, patch, NULL, "ungate pod");
			free(patch);
		}
	}
	if (r->opts.gang && !recreated && !created && !tf_state_final(v.state))
		check_partial_gang(r, &job, &o, key);
	if (recreated) {
		char *patch = tf_restarts_patch(prior + recreated);
		struct kube_resource res;
		job_res(&job, NULL, &res);
		write(r, &job, OP_MERGE, &res, patch, NULL, "count restarts");
		free(patch);
	}
	write_status(r, &job, obj, &v, now);
	if (created)
		log_info("tfjob_created_pods", "job=%s pods=%d", key, created);
	if (job.deadline_s >= 0)
		enqueue(r, &r->later, ns, name); /* the deadline is checked every second */
}

/* ---- admission (issue 4) ---- */

/*
 * Follows the admitted waves: *unbound gets how many of their pods still wait
 * for kube-scheduler, *binds how many it bound since the last scan. Waves
 * bound whole, gone, or stuck are dropped. True while a wave is still on its
 * way into the cache (the gated view: a snapshot now would miss its plan).
 */
static bool scan_waves(struct reconciler *r, long *binds, long *unbound)
{
	long long now = now_ms();
	long long stuck_ms = (long long)(r->opts.gang_bind_timeout_s * 1000) * STUCK_TIMEOUTS;
	bool settling = false;
	size_t kept = 0;
	*binds = *unbound = 0;
	for (size_t i = 0; i < r->npending; i++) {
		struct pending_wave *p = &r->pending[i];
		int bound = 0, waiting = 0;
		bool visible = true;
		for (int j = 0; j < p->w.n_pods; j++) {
			struct json_t *pod = kube_informer_get(r->pods, p->w.ns, p->w.pods[j].name);
			if (!pod)
				continue; /* deleted: neither waits nor was bound by this wave */
			const char *node = kube_obj_str(pod, "spec.nodeName");
			if (node && *node)
				bound++;
			else
				waiting++;
			if (!kube_obj_annotation(pod, DRAKE_ANNOTATION_PLANNED_NODE))
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
	struct tfjob job;
	memset(&job, 0, sizeof(job));
	snprintf(job.ns, sizeof(job.ns), "%s", w->ns);
	snprintf(job.name, sizeof(job.name), "%s", w->job);
	snprintf(job.uid, sizeof(job.uid), "%s", w->uid);
	char msg[512];
	int nodes = 0;
	for (int i = 0; i < w->n_pods; i++) {
		bool seen = false;
		for (int j = 0; j < i; j++)
			seen |= !strcmp(w->pods[j].node, w->pods[i].node);
		nodes += !seen;
	}
	snprintf(msg, sizeof(msg), "admitted %d PS%s and %d workers as gang %s on %d node%s (%s%s)",
	         w->n_ps, w->n_chief ? ", the chief" : "", w->n_workers, w->gang, nodes,
	         nodes == 1 ? "" : "s", w->pods[0].node, nodes > 1 ? ", ..." : "");
	event(r, &job, "Normal", "GangAdmitted", msg);
	if (w->n_pods == w->size) { /* a new wave, not a repair: record it on the TFJob */
		const char **where = calloc((size_t)w->n_pods, sizeof(*where));
		for (int i = 0; where && i < w->n_pods; i++)
			where[i] = w->pods[i].node;
		char *plan = where ? tf_plan_patch(w->gang, w->n_ps, w->n_chief, w->n_workers,
		                                   where, w->n_pods)
		                   : NULL;
		struct kube_resource res;
		job_res(&job, NULL, &res);
		if (plan)
			write(r, &job, OP_MERGE, &res, plan, NULL, "record plan");
		free(plan);
		free(where);
	}
	log_info("gang_admitted", "job=%s/%s gang=%s ps=%d chief=%d workers=%d nodes=%d", w->ns,
	         w->job, w->gang, w->n_ps, w->n_chief, w->n_workers, nodes);
	for (int i = 0; i < w->n_pods; i++) {
		struct json_t *pod = kube_informer_get(r->pods, w->ns, w->pods[i].name);
		char *patch = pod ? admit_ungate_patch(pod, w, w->pods[i].node) : NULL;
		if (!patch)
			continue;
		struct kube_resource res;
		pod_res(&job, w->pods[i].name, &res);
		write(r, &job, OP_JSONPATCH, &res, patch, NULL, "admit pod");
		free(patch);
	}
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

static void note_waiting(struct reconciler *r, const struct admit_waiting *wt)
{
	char key[KEY_MAX];
	snprintf(key, sizeof(key), "%s/%s", wt->ns, wt->job);
	struct wait_note *n = wait_note(r, key);
	if (!n)
		return;
	n->seen = true;
	if (n->status == (int)wt->status && !strcmp(n->why, wt->why))
		return;
	n->status = (int)wt->status;
	snprintf(n->why, sizeof(n->why), "%s", wt->why);
	struct json_t *obj = kube_informer_get(r->jobs, wt->ns, wt->job);
	struct kube_meta m;
	if (!obj || kube_obj_meta(obj, &m) != DRAKE_OK)
		return;
	struct tfjob job;
	memset(&job, 0, sizeof(job));
	snprintf(job.ns, sizeof(job.ns), "%s", wt->ns);
	snprintf(job.name, sizeof(job.name), "%s", wt->job);
	snprintf(job.uid, sizeof(job.uid), "%s", m.uid);
	char msg[DRAKE_WHY_MAX + 64];
	snprintf(msg, sizeof(msg), "gang %s: %s", drake_admit_status_name(wt->status), wt->why);
	event(r, &job, "Normal", "GangWaiting", msg);
}

/* What a job held back by pacing is told (stable, so it is posted once). */
#define PACED_WHY "paced: starts once kube-scheduler has bound the gangs admitted before it"

static void admit_pass(struct reconciler *r)
{
	if (!r->opts.gang || !kube_informer_synced(r->nodes))
		return;
	long binds, unbound;
	bool settling = scan_waves(r, &binds, &unbound);
	drake_pace_observe(&r->pace, (double)now_ms() / 1000, binds, unbound);
	if (settling)
		return;
	r->admit_dirty = false;
	struct admit_options ao = {.backfill = !r->opts.strict_fifo, .now_s = (long)time(NULL)};
	struct admit_result res;
	char msg[256];
	drake_err e = admit_round(kube_informer_cache(r->jobs), kube_informer_cache(r->pods),
	                          kube_informer_cache(r->nodes), &ao, &res, msg, sizeof(msg));
	if (e) {
		log_error("admission_failed", "err=%s msg=\"%s\"", drake_strerror(e), msg);
		return;
	}
	/* Pacing, in FIFO order: repairs (members rejoining a running gang)
	 * always go; a new wave goes while the budget has room for it; once one
	 * is held, every new wave behind it is too. */
	long budget = drake_pace_budget(&r->pace, r->opts.gang_bind_timeout_s / 2, PACE_FLOOR,
	                                r->opts.gang_max_unbound);
	long admitted = unbound;
	size_t held = 0;
	bool *go = calloc(res.n_waves ? res.n_waves : 1, sizeof(*go));
	if (!go) {
		admit_result_release(&res);
		r->admit_dirty = true;
		return;
	}
	for (size_t i = 0; i < res.n_waves; i++) {
		const struct admit_wave *w = &res.waves[i];
		go[i] = w->n_pods < w->size ||
		        (!held && drake_pace_admits(budget, admitted, w->n_pods));
		if (go[i])
			admitted += w->n_pods;
		else
			held++;
	}
	for (size_t i = 0; i < r->nwaits; i++)
		r->waits[i].seen = false;
	for (size_t i = 0; i < res.n_waiting; i++)
		note_waiting(r, &res.waiting[i]);
	for (size_t i = 0; i < res.n_waves; i++) {
		if (go[i])
			continue;
		struct admit_waiting wt = {.status = DRAKE_ADMIT_WAITING};
		snprintf(wt.ns, sizeof(wt.ns), "%s", res.waves[i].ns);
		snprintf(wt.job, sizeof(wt.job), "%s", res.waves[i].job);
		snprintf(wt.why, sizeof(wt.why), "%s", PACED_WHY);
		note_waiting(r, &wt);
	}
	size_t kept = 0; /* forget jobs that no longer wait */
	for (size_t i = 0; i < r->nwaits; i++)
		if (r->waits[i].seen)
			r->waits[kept++] = r->waits[i];
	r->nwaits = kept;
	if (held)
		log_debug("gang_paced", "held=%zu unbound=%ld budget=%ld rate=%.1f", held, admitted,
		          budget, r->pace.rate);
	for (size_t i = 0; i < res.n_waves; i++) {
		if (!go[i])
			continue;
		apply_wave(r, &res.waves[i]);
		struct pending_wave *p = realloc(r->pending, (r->npending + 1) * sizeof(*p));
		if (!p)
			continue;
		r->pending = p;
		r->pending[r->npending] =
		    (struct pending_wave){.w = res.waves[i], .sent_ms = now_ms()};
		r->npending++;
		res.waves[i].pods = NULL; /* now owned by the pending list */
	}
	free(go);
	admit_result_release(&res);
}

bool reconciler_replan(const struct reconciler *r, const char *ns, const char *pod,
                       const char *const *candidates, size_t n, char *node, size_t nodelen,
                       char *why, size_t whylen)
{
	if (!r || !r->nodes || !kube_informer_synced(r->nodes) || !kube_informer_synced(r->pods)) {
		snprintf(why, whylen, "the controller's caches are not synced");
		return false;
	}
	return admit_replan(kube_informer_cache(r->nodes), kube_informer_cache(r->pods), ns, pod,
	                    candidates, n, node, nodelen, why, whylen) == DRAKE_OK;
}

char *reconciler_jobs_json(const struct reconciler *r)
{
	size_t n = r ? r->nwaits : 0;
	struct admit_note *notes = calloc(n ? n : 1, sizeof(*notes));
	if (!notes)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		notes[i].key = r->waits[i].key;
		notes[i].status =
		    drake_admit_status_name((enum drake_admit_status)r->waits[i].status);
		notes[i].why = r->waits[i].why;
	}
	char *out = admit_waiting_json(notes, n);
	free(notes);
	return out;
}

/* ---- queue processing ---- */

static bool enqueue_job(struct json_t *obj, void *arg)
{
	job_changed(obj, arg);
	return true;
}

static void on_drain(evutil_socket_t fd, short what, void *arg)
{
	struct reconciler *r = arg;
	if (!reconciler_synced(r))
		return; /* a pass on a partial cache would create duplicates */
	if (!r->was_synced) {
		r->was_synced = true;
		log_info("reconciler_synced", "jobs=%zu",
		         kube_cache_count(kube_informer_cache(r->jobs)));
		kube_cache_foreach(kube_informer_cache(r->jobs), enqueue_job, r);
	}
	struct keyset batch = r->now;
	memset(&r->now, 0, sizeof(r->now));
	for (size_t i = 0; i < batch.n; i++) {
		char ns[64] = "", name[254] = "";
		if (sscanf(batch.keys[i], "%63[^/]/%253s", ns, name) == 2)
			sync_job(r, ns, name);
	}
	free(batch.keys);
	if (batch.n)
		r->admit_dirty = true;
	if (r->admit_dirty)
		admit_pass(r);
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	struct reconciler *r = arg;
	if (now_ms() - r->last_requeue_ms >= r->opts.requeue_ms) {
		r->last_requeue_ms = now_ms();
		for (size_t i = 0; i < r->later.n; i++)
			if (keyset_add(&r->now, r->later.keys[i]) != DRAKE_OK)
				break;
		r->later.n = 0;
	}
	size_t kept = 0; /* forget jobs with nothing in flight, so the table stays small */
	for (size_t i = 0; i < r->ninflight; i++)
		if (r->inflight[i].n > 0 || r->inflight[i].failures > 0)
			r->inflight[kept++] = r->inflight[i];
	r->ninflight = kept;
	long now = (long)time(NULL);
	if (now - r->last_resync >= r->opts.resync_s) {
		r->last_resync = now;
		kube_cache_foreach(kube_informer_cache(r->jobs), enqueue_job, r);
	}
	if (r->now.n || !r->was_synced || (r->admit_dirty || r->npending))
		event_active(&r->drain, 0, 0);
}

/* ---- lifecycle ---- */

struct reconciler *reconciler_new(struct event_base *base, struct kube_client *client,
                                  const struct reconciler_options *opts, char *msg, size_t msglen)
{
	struct reconciler *r = calloc(1, sizeof(*r));
	if (!r || !base || !client) {
		free(r);
		drake_errorf(r ? DRAKE_EINVAL : DRAKE_ENOMEM, msg, msglen,
		             "reconciler needs an event base and a client");
		return NULL;
	}
	r->base = base;
	r->client = client;
	if (opts)
		r->opts = *opts;
	if (r->opts.resync_s <= 0)
		r->opts.resync_s = 30;
	if (r->opts.requeue_ms <= 0)
		r->opts.requeue_ms = 1000;
	if (r->opts.gang_bind_timeout_s <= 0)
		r->opts.gang_bind_timeout_s = 15;
	drake_pace_init(&r->pace);
	r->last_requeue_ms = now_ms();
	if (opts && opts->cluster_domain && *opts->cluster_domain)
		r->domain = strdup(opts->cluster_domain);
	r->opts.cluster_domain = r->domain;
	if (opts && opts->gang_resource && *opts->gang_resource)
		r->gang_resource = strdup(opts->gang_resource);
	r->opts.gang_resource = r->gang_resource;
	r->last_resync = (long)time(NULL);
	struct kube_informer_handlers jh = {job_changed, job_updated, job_changed, r};
	struct kube_informer_handlers oh = {owned_changed, owned_updated, owned_changed, r};
	struct kube_informer_options jo = {.name = "tfjobs",
	                                   .path = "/apis/kubeflow.org/v1/tfjobs"};
	struct kube_informer_options po = {.name = "pods", .path = "/api/v1/pods"};
	struct kube_informer_options so = {.name = "services", .path = "/api/v1/services"};
	r->jobs = kube_informer_new(base, client, &jo, &jh, msg, msglen);
	r->pods = kube_informer_new(base, client, &po, &oh, msg, msglen);
	r->services = kube_informer_new(base, client, &so, &oh, msg, msglen);
	if (r->opts.gang) {
		struct kube_informer_handlers nh = {node_changed, node_updated, node_changed, r};
		struct kube_informer_options no = {.name = "nodes", .path = "/api/v1/nodes"};
		r->nodes = kube_informer_new(base, client, &no, &nh, msg, msglen);
	}
	if (!r->jobs || !r->pods || !r->services || (r->opts.gang && !r->nodes)) {
		reconciler_free(r);
		return NULL;
	}
	event_assign(&r->drain, base, -1, 0, on_drain, r);
	event_assign(&r->tick, base, -1, EV_PERSIST, on_tick, r);
	r->events_ready = true;
	return r;
}

drake_err reconciler_start(struct reconciler *r)
{
	if (!r)
		return DRAKE_EINVAL;
	drake_err e = kube_informer_start(r->jobs);
	if (e == DRAKE_OK)
		e = kube_informer_start(r->pods);
	if (e == DRAKE_OK)
		e = kube_informer_start(r->services);
	if (e == DRAKE_OK && r->nodes)
		e = kube_informer_start(r->nodes);
	if (e != DRAKE_OK)
		return e;
	long tick = r->opts.requeue_ms < 1000 ? r->opts.requeue_ms : 1000;
	struct timeval sec = {tick / 1000, (tick % 1000) * 1000};
	event_add(&r->tick, &sec);
	return DRAKE_OK;
}

void reconciler_free(struct reconciler *r)
{
	if (!r)
		return;
	for (struct write_ctx *w = r->writes; w; w = w->next)
		w->r = NULL;
	if (r->events_ready) {
		event_del(&r->drain);
		event_del(&r->tick);
	}
	kube_informer_free(r->jobs);
	kube_informer_free(r->pods);
	kube_informer_free(r->services);
	kube_informer_free(r->nodes);
	for (size_t i = 0; i < r->npending; i++)
		free(r->pending[i].w.pods);
	free(r->pending);
	free(r->partials);
	free(r->waits);
	free(r->now.keys);
	free(r->later.keys);
	free(r->inflight);
	free(r->domain);
	free(r->gang_resource);
	free(r);
}

bool reconciler_synced(const struct reconciler *r)
{
	return r && kube_informer_synced(r->jobs) && kube_informer_synced(r->pods) &&
	       kube_informer_synced(r->services) && (!r->nodes || kube_informer_synced(r->nodes));
}

struct kube_informer *reconciler_pods(const struct reconciler *r)
{
	return r ? r->pods : NULL;
}
