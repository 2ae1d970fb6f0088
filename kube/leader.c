/*
 * leader.c - the Lease elector (see leader.h): a timer, a GET, and a create
 * or an update guarded by the resourceVersion that GET returned, so two
 * candidates writing at once cannot both succeed (the loser gets 409).
 */
#include "kube/leader.h"

#include <event2/event.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "kube/client.h"
#include "kube/lease_codec.h"
#include "kube/object.h"

enum call_kind { CALL_READ, CALL_WRITE, CALL_RELEASE };

/* One request in flight. Outlives the elector if it is freed first: the
 * client still calls back once, and the callback then only frees this. */
struct lease_call {
	struct leader *l;
	enum call_kind kind;
	enum leader_act act;
};

struct leader {
	struct event_base *base;
	struct kube_client *kube;
	char *ns, *name, *identity;
	double lease_duration, renew_deadline, retry_period;
	struct leader_callbacks cb;
	struct event *tick;
	struct event *released; /* runs release_done from the loop */
	struct lease_call *inflight;
	struct lease_seen seen;
	char rv[LEASE_RV_MAX];
	char collection[512], path[1024];
	bool leading, stopped;
	double last_ok; /* monotonic time of the last successful write */
	void (*release_done)(void *);
	void *release_arg;
};

static double clock_of(clockid_t id)
{
	struct timespec t;
	clock_gettime(id, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double mono(void)
{
	return clock_of(CLOCK_MONOTONIC);
}

static void arm(struct leader *l, double seconds)
{
	struct timeval tv = {.tv_sec = (time_t)seconds,
	                     .tv_usec = (suseconds_t)((seconds - floor(seconds)) * 1e6)};
	event_add(l->tick, &tv);
}

/* Gives up leadership for good: nothing more is sent or decided. */
static void lose(struct leader *l, const char *why)
{
	bool was = l->leading;
	l->leading = false;
	l->stopped = true;
	event_del(l->tick);
	log_error("leader_lost", "lease=%s/%s identity=%s why=\"%s\"", l->ns, l->name, l->identity,
	          why);
	if (was && l->cb.lost)
		l->cb.lost(l->cb.arg, why);
}

static drake_err lease_send(struct leader *l, enum call_kind kind, enum leader_act act,
                            const char *method, const char *path, const char *body);

/* What the API server said about the Lease: remembered, and observed_at
 * moved when the record changed. */
static bool note_lease(struct leader *l, const struct kube_response *r)
{
	struct lease_record rec;
	char rv[LEASE_RV_MAX], why[256];
	if (lease_decode(r->body, r->body_len, &rec, rv, sizeof(rv), why, sizeof(why)) !=
	    DRAKE_OK) {
		log_warn("leader_bad_lease", "lease=%s/%s error=\"%s\"", l->ns, l->name, why);
		return false;
	}
	if (!l->seen.exists || leader_record_changed(&l->seen.rec, &rec)) {
		if (strcmp(rec.holder, l->seen.rec.holder) && strcmp(rec.holder, l->identity))
			log_info("leader_observed", "lease=%s/%s holder=%s", l->ns, l->name,
			         rec.holder[0] ? rec.holder : "none");
		l->seen.observed_at = mono();
	}
	l->seen.exists = true;
	l->seen.rec = rec;
	snprintf(l->rv, sizeof(l->rv), "%s", rv);
	return true;
}

static void decide(struct leader *l)
{
	struct lease_record w;
	enum leader_act act = leader_decide(&l->seen, l->identity, mono(), clock_of(CLOCK_REALTIME),
	                                    (int)l->lease_duration, &w);
	if (act == LEADER_WAIT) {
		if (l->leading) {
			char why[LEASE_HOLDER_MAX + 64];
			snprintf(why, sizeof(why), "the lease is held by %s", l->seen.rec.holder);
			lose(l, why);
		}
		return;
	}
	char *body = lease_encode(l->ns, l->name, act == LEADER_CREATE ? NULL : l->rv, &w);
	if (!body) {
		log_error("leader_write_failed", "lease=%s/%s error=out_of_memory", l->ns, l->name);
		return;
	}
	drake_err e = act == LEADER_CREATE
	                  ? lease_send(l, CALL_WRITE, act, "POST", l->collection, body)
	                  : lease_send(l, CALL_WRITE, act, "PUT", l->path, body);
	free(body);
	if (e)
		log_error("leader_write_failed", "lease=%s/%s act=%s error=%s", l->ns, l->name,
		          leader_act_name(act), drake_strerror(e));
}

static void on_read(struct leader *l, const struct kube_response *r)
{
	if (r->status == 404) {
		l->seen.exists = false;
		memset(&l->seen.rec, 0, sizeof(l->seen.rec));
		decide(l);
	} else if (r->status == 200) {
		if (note_lease(l, r))
			decide(l);
	} else {
		char msg[256];
		log_warn("leader_read_failed", "lease=%s/%s status=%ld error=\"%s\"", l->ns,
		         l->name, r->status,
		         r->status ? kube_status_message(r->body, r->body_len, msg, sizeof(msg))
		                   : r->error);
	}
}

static void on_written(struct leader *l, enum leader_act act, const struct kube_response *r)
{
	if (r->status == 200 || r->status == 201) {
		if (!note_lease(l, r))
			return;
		l->last_ok = mono();
		if (!l->leading) {
			l->leading = true;
			log_info("leader_acquired", "lease=%s/%s identity=%s act=%s transitions=%d",
			         l->ns, l->name, l->identity, leader_act_name(act),
			         l->seen.rec.transitions);
			if (l->cb.started)
				l->cb.started(l->cb.arg);
		}
		return;
	}
	/* 409: another candidate wrote first; the next read shows whom. */
	char msg[256];
	log_info("leader_write_refused", "lease=%s/%s act=%s status=%ld error=\"%s\"", l->ns,
	         l->name, leader_act_name(act), r->status,
	         r->status ? kube_status_message(r->body, r->body_len, msg, sizeof(msg))
	                   : r->error);
}

static void on_released(evutil_socket_t fd, short what, void *arg)
{
	struct leader *l = arg;
	void (*done)(void *) = l->release_done;
	l->release_done = NULL;
	if (done)
		done(l->release_arg);
}

static void on_response(const struct kube_response *r, void *arg)
{
	struct lease_call *c = arg;
	struct leader *l = c->l;
	enum call_kind kind = c->kind;
	enum leader_act act = c->act;
	free(c);
	if (!l)
		return; /* the elector was freed or released meanwhile */
	l->inflight = NULL;
	switch (kind) {
	case CALL_READ:
		if (!l->stopped)
			on_read(l, r);
		break;
	case CALL_WRITE:
		if (!l->stopped)
			on_written(l, act, r);
		break;
	case CALL_RELEASE:
		log_info("leader_released", "lease=%s/%s identity=%s status=%ld", l->ns, l->name,
		         l->identity, r->status);
		event_active(l->released, 0, 0);
		break;
	}
}

static drake_err lease_send(struct leader *l, enum call_kind kind, enum leader_act act,
                            const char *method, const char *path, const char *body)
{
	struct lease_call *c = calloc(1, sizeof(*c));
	if (!c)
		return DRAKE_ENOMEM;
	*c = (struct lease_call){.l = l, .kind = kind, .act = act};
	drake_err e = kube_request(l->kube, method, path, NULL, body, body ? strlen(body) : 0,
	                           on_response, c);
	if (e) {
		free(c);
		return e;
	}
	l->inflight = c;
	return DRAKE_OK;
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	struct leader *l = arg;
	if (l->stopped)
		return;
	if (l->leading && leader_overdue(l->last_ok, mono(), l->renew_deadline)) {
		char why[128];
		snprintf(why, sizeof(why),
		         "no renewal succeeded for %.0f s (renew deadline %.0f s)",
		         mono() - l->last_ok, l->renew_deadline);
		lose(l, why);
		return;
	}
	arm(l, l->retry_period);
	if (l->inflight)
		return; /* the last try has not been answered: no pile-up */
	drake_err e = lease_send(l, CALL_READ, LEADER_WAIT, "GET", l->path, NULL);
	if (e)
		log_error("leader_read_failed", "lease=%s/%s error=%s", l->ns, l->name,
		          drake_strerror(e));
}

struct leader *leader_new(struct event_base *base, struct kube_client *kube,
                          const struct leader_options *o, const struct leader_callbacks *cb,
                          char *msg, size_t msglen)
{
	if (!kube) {
		drake_errorf(DRAKE_EINVAL, msg, msglen, "leader election needs an API server");
		return NULL;
	}
	if (!o->ns || !kube_name_valid(o->ns) || !o->name || !kube_name_valid(o->name)) {
		drake_errorf(DRAKE_EINVAL, msg, msglen,
		             "the lease's namespace and name must be DNS-1123 names");
		return NULL;
	}
	if (!o->identity || !*o->identity || strlen(o->identity) >= LEASE_HOLDER_MAX) {
		drake_errorf(DRAKE_EINVAL, msg, msglen, "the leader identity must be 1 to %d bytes",
		             LEASE_HOLDER_MAX - 1);
		return NULL;
	}
	if (!(o->lease_duration >= 1) || o->lease_duration != floor(o->lease_duration) ||
	    o->lease_duration > 3600) {
		drake_errorf(DRAKE_EINVAL, msg, msglen,
		             "the lease duration must be whole seconds, 1s to 1h");
		return NULL;
	}
	if (!(o->renew_deadline > 0 && o->renew_deadline < o->lease_duration) ||
	    !(o->retry_period > 0 && o->retry_period < o->renew_deadline)) {
		drake_errorf(DRAKE_EINVAL, msg, msglen,
		             "need 0 < retry period (%gs) < renew deadline (%gs) < lease duration "
		             "(%gs)",
		             o->retry_period, o->renew_deadline, o->lease_duration);
		return NULL;
	}
	struct leader *l = calloc(1, sizeof(*l));
	if (!l) {
		drake_errorf(DRAKE_ENOMEM, msg, msglen, "out of memory");
		return NULL;
	}
	l->base = base;
	l->kube = kube;
	l->lease_duration = o->lease_duration;
	l->renew_deadline = o->renew_deadline;
	l->retry_period = o->retry_period;
	if (cb)
		l->cb = *cb;
	l->ns = strdup(o->ns);
	l->name = strdup(o->name);
	l->identity = strdup(o->identity);
	l->tick = event_new(base, -1, 0, on_tick, l);
	l->released = event_new(base, -1, 0, on_released, l);
	if (!l->ns || !l->name || !l->identity || !l->tick || !l->released) {
		leader_free(l);
		drake_errorf(DRAKE_ENOMEM, msg, msglen, "out of memory");
		return NULL;
	}
	snprintf(l->collection, sizeof(l->collection),
	         "/apis/coordination.k8s.io/v1/namespaces/%s/leases", l->ns);
	snprintf(l->path, sizeof(l->path), "%s/%s", l->collection, l->name);
	return l;
}

drake_err leader_start(struct leader *l)
{
	if (l->stopped)
		return DRAKE_ESTATE;
	log_info("leader_candidate", "lease=%s/%s identity=%s lease_s=%.0f renew_s=%g retry_s=%g",
	         l->ns, l->name, l->identity, l->lease_duration, l->renew_deadline,
	         l->retry_period);
	event_active(l->tick, 0, 0);
	return DRAKE_OK;
}

bool leader_leading(const struct leader *l)
{
	return l && l->leading;
}

const char *leader_holder(const struct leader *l)
{
	return l && l->seen.exists ? l->seen.rec.holder : "";
}

void leader_release(struct leader *l, void (*done)(void *), void *arg)
{
	l->release_done = done;
	l->release_arg = arg;
	bool held = l->leading;
	l->leading = false;
	l->stopped = true;
	event_del(l->tick);
	if (l->inflight) {
		l->inflight->l = NULL; /* its answer no longer matters */
		l->inflight = NULL;
	}
	if (held) {
		struct lease_record w;
		leader_release_record(&l->seen.rec, clock_of(CLOCK_REALTIME), &w);
		char *body = lease_encode(l->ns, l->name, l->rv, &w);
		drake_err e = body ? lease_send(l, CALL_RELEASE, LEADER_WAIT, "PUT", l->path, body)
		                   : DRAKE_ENOMEM;
		free(body);
		if (e == DRAKE_OK)
			return;
		log_error("leader_release_failed", "lease=%s/%s error=%s", l->ns, l->name,
		          drake_strerror(e));
	}
	event_active(l->released, 0, 0);
}

void leader_free(struct leader *l)
{
	if (!l)
		return;
	if (l->inflight)
		l->inflight->l = NULL;
	if (l->tick)
		event_free(l->tick);
	if (l->released)
		event_free(l->released);
	free(l->ns);
	free(l->name);
	free(l->identity);
	free(l);
}
