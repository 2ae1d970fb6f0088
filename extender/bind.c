/*
 * bind.c - the bind verb: decode, find out whether the pod belongs to a gang
 * wave, and either post its Binding at once or hand it to the gang barrier
 * (barrier.h), for which this file does the I/O: posting Bindings,
 * answering, deleting a rolled-back member. Answers kube-scheduler with
 * {"Error": ""} or the API server's own message.
 *
 * A bind state is shared by the request (the call) and whatever is in
 * flight for it (the API request, a gang barrier); each holds a reference.
 * When the call is answered early (shutdown), the state is detached (call
 * == NULL) and the others only drop their references.
 */
#include "extender/bind.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "extender/barrier.h"
#include "extender/call.h"
#include "extender/member.h"
#include "kube/api.h"
#include "kube/client.h"
#include "kube/informer.h"
#include "kube/object.h"
#include "kube/pod.h"

struct bind_state {
	struct ext_call *call; /* NULL once the call has been answered */
	struct metrics *metrics;
	struct kube_client *kube;
	struct ext_bind_args args;
	int refs;
};

struct bind_service {
	struct barrier_reg *barriers;
};

static void bind_ref(struct bind_state *b)
{
	b->refs++;
}

static void bind_unref(struct bind_state *b)
{
	if (--b->refs > 0)
		return;
	ext_bind_release(&b->args);
	free(b);
}

/* verb_state_free of a bind call: the call is being answered. */
static void bind_detach(void *arg)
{
	struct bind_state *b = arg;
	b->call = NULL;
	b->metrics->inflight_binds--;
	bind_unref(b);
}

/* Answers the call (when still attached) with error, or success for NULL. */
static void bind_answer(struct bind_state *b, const char *error)
{
	struct ext_call *call = b->call;
	if (!call)
		return;
	char q[600];
	if (error)
		log_warn("bind_failed", "pod=%s/%s node=%s error=%s", b->args.pod_ns,
		         b->args.pod_name, b->args.node, drake_log_quote(error, q, sizeof(q)));
	else
		log_info("bound", "pod=%s/%s node=%s", b->args.pod_ns, b->args.pod_name,
		         b->args.node);
	call_reply_json(call, 200, ext_error_encode(error ? error : ""), error != NULL);
}

/* One Binding POST in flight (and the GET that may follow a 409). */
struct post {
	struct bind_state *b;
	barrier_posted_fn done;
	void *arg;
};

static void post_finish(struct post *p, const char *error)
{
	p->done(p->b, error, p->arg);
	bind_unref(p->b);
	free(p);
}

static void on_pod_checked(const struct kube_response *r, void *arg)
{
	struct post *p = arg;
	struct ext_bind_args *a = &p->b->args;
	char *node = r->status == 200 ? ext_pod_node_name(r->body, r->body_len) : NULL;
	if (node && strcmp(node, a->node) == 0) {
		post_finish(p, NULL);
	} else {
		char err[512];
		snprintf(err, sizeof(err), "binding %s/%s to %s: pod is already bound to %s",
		         a->pod_ns, a->pod_name, a->node, node && *node ? node : "another node");
		post_finish(p, err);
	}
	free(node);
}

static void on_bound(const struct kube_response *r, void *arg)
{
	struct post *p = arg;
	struct ext_bind_args *a = &p->b->args;
	char err[512];
	if (r->status >= 200 && r->status < 300) {
		post_finish(p, NULL);
		return;
	}
	if (r->status == 409) {
		/* "already assigned": fine if to the node we were asked for, which
		 * happens when kube-scheduler retries a bind that did succeed. */
		char path[600];
		snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", a->pod_ns,
		         a->pod_name);
		if (kube_request(p->b->kube, "GET", path, NULL, NULL, 0, on_pod_checked, p) ==
		    DRAKE_OK)
			return;
	}
	if (r->status == 0) {
		snprintf(err, sizeof(err), "binding %s/%s to %s: API server unreachable: %s",
		         a->pod_ns, a->pod_name, a->node, r->error ? r->error : "no answer");
	} else {
		char *m = ext_status_message(r->body, r->body_len);
		snprintf(err, sizeof(err), "binding %s/%s to %s: %s (HTTP %ld)", a->pod_ns,
		         a->pod_name, a->node, m ? m : "API server error", r->status);
		free(m);
	}
	post_finish(p, err);
}

/* Posts the Binding (treating a 409 "already bound to this node" as
 * success). done runs exactly once; b stays referenced until then. */
static void bind_post(struct bind_state *b, barrier_posted_fn done, void *arg)
{
	struct post *p = calloc(1, sizeof(*p));
	char *body = p ? ext_binding_object_encode(&b->args) : NULL;
	char path[600];
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s/binding", b->args.pod_ns,
	         b->args.pod_name);
	if (!body || kube_request(b->kube, "POST", path, NULL, body, strlen(body), on_bound, p) !=
	                 DRAKE_OK) {
		free(body);
		free(p);
		done(b, "cannot start the binding request to the API server", arg);
		return;
	}
	free(body);
	bind_ref(b);
	p->b = b;
	p->done = done;
	p->arg = arg;
}

static void on_plain_bound(void *req, const char *error, void *arg)
{
	bind_answer(req, error);
}

/* ---- what the barrier does to a held request ---- */

static void on_rolled_back(const struct kube_response *r, void *arg)
{
	char *pod = arg;
	if (r->status >= 200 && r->status < 300)
		log_warn("gang_rolled_back", "pod=%s", pod);
	else if (r->status != 404)
		log_error("gang_rollback_failed", "pod=%s status=%ld", pod, r->status);
	free(pod);
}

/* Deletes a member bound by a wave that did not bind whole, with its UID
 * as precondition so a recreated pod of the same name is never hit. */
static void op_undo(void *req)
{
	struct bind_state *b = req;
	struct ext_bind_args *a = &b->args;
	struct kube_resource res = {"", "v1", "pods", a->pod_ns, a->pod_name, NULL};
	char *tag = NULL;
	if (asprintf(&tag, "%s/%s", a->pod_ns, a->pod_name) < 0)
		tag = NULL;
	if (!tag || kube_delete(b->kube, &res, a->pod_uid[0] ? a->pod_uid : NULL, NULL,
	                        on_rolled_back, tag) != DRAKE_OK) {
		log_error("gang_rollback_failed", "pod=%s/%s reason=%s", a->pod_ns, a->pod_name,
		          "cannot start the delete");
		free(tag);
	}
}

static void op_post(void *req, barrier_posted_fn done, void *arg)
{
	bind_post(req, done, arg);
}

static void op_answer(void *req, const char *error)
{
	bind_answer(req, error);
}

static bool op_held(const void *req)
{
	return ((const struct bind_state *)req)->call != NULL;
}

static void op_hold(void *req)
{
	bind_ref(req);
}

static void op_drop(void *req)
{
	bind_unref(req);
}

static const struct barrier_ops ops = {
    .post = op_post,
    .answer = op_answer,
    .held = op_held,
    .hold = op_hold,
    .drop = op_drop,
    .undo = op_undo,
};

struct bind_service *bind_service_new(struct event_base *base, double gang_timeout_s)
{
	struct bind_service *s = calloc(1, sizeof(*s));
	if (s && !(s->barriers = barrier_reg_new(base, gang_timeout_s, &ops))) {
		free(s);
		s = NULL;
	}
	return s;
}

void bind_service_free(struct bind_service *s)
{
	if (!s)
		return;
	barrier_reg_free(s->barriers);
	free(s);
}

void bind_service_metrics(const struct bind_service *s, struct metrics *m)
{
	struct barrier_stats st;
	barrier_stats(s->barriers, &st);
	m->gang_binds_waiting = (int64_t)st.waiting;
	m->gang_members_bound = st.members_bound;
	m->gang_waves_timed_out = st.waves_timed_out;
	m->gang_waves_rolled_back = st.waves_rolled_back;
	m->gang_joins_refused = st.joins_refused;
}

/* Kubernetes object names reach a URL path; refuse anything that could
 * change the path (names are DNS subdomains, so this loses nothing). */
static bool safe_name(const char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '-' || *s == '.' || *s == '_'))
			return false;
	return true;
}

/* Routes a bind once the pod's plan is known. */
static void route(struct bind_state *b, const struct ext_member *m)
{
	if (!m->planned_node) {
		bind_post(b, on_plain_bound, NULL);
		return;
	}
	if (strcmp(m->planned_node, b->args.node) != 0)
		log_warn("bind_off_plan", "pod=%s/%s node=%s planned=%s gang=%s", b->args.pod_ns,
		         b->args.pod_name, b->args.node, m->planned_node, m->gang);
	struct kube_informer *pods = call_pods(b->call);
	if (pods && !kube_informer_synced(pods)) {
		/* The barrier counts members bound before from this cache: a
		 * stale one could complete a wave that is not whole. */
		char err[512];
		snprintf(
		    err, sizeof(err),
		    "job %s/%s: gang %s: not bound while drake's pod cache is not synced (%s); "
		    "kube-scheduler will retry",
		    m->ns, m->job, m->gang, kube_informer_unsynced_why(pods));
		log_info("gang_bind_deferred", "pod=%s/%s gang=%s", b->args.pod_ns,
		         b->args.pod_name, m->gang);
		bind_answer(b, err);
		return;
	}
	barrier_join(call_binds(b->call)->barriers, pods ? kube_informer_cache(pods) : NULL, m, b);
}

/* The pod was not in the cache: its plan comes from the API server. */
static void on_pod_fetched(const struct kube_response *r, void *arg)
{
	struct bind_state *b = arg;
	if (!b->call) {
		bind_unref(b);
		return;
	}
	char err[512];
	if (r->status != 200) {
		char *m = r->status ? ext_status_message(r->body, r->body_len) : NULL;
		snprintf(err, sizeof(err), "binding %s/%s: reading the pod: %s (HTTP %ld)",
		         b->args.pod_ns, b->args.pod_name,
		         m          ? m
		         : r->error ? r->error
		                    : "no answer",
		         r->status);
		free(m);
		bind_answer(b, err);
		bind_unref(b);
		return;
	}
	struct ext_pod pod;
	char *node = NULL;
	struct ext_member m;
	drake_err e = ext_pod_object_decode(r->body, r->body_len, call_limits(b->call), &pod, &node,
	                                    err, sizeof(err));
	if (!e && b->args.pod_uid[0] && strcmp(pod.uid, b->args.pod_uid) != 0) {
		snprintf(err, sizeof(err), "binding %s/%s: the pod was replaced (uid %s, not %s)",
		         b->args.pod_ns, b->args.pod_name, pod.uid, b->args.pod_uid);
		e = DRAKE_ECONFLICT;
	}
	if (!e)
		e = ext_member_of(&pod, &m, err, sizeof(err));
	if (e)
		bind_answer(b, err);
	else
		route(b, &m);
	ext_pod_release(&pod);
	free(node);
	bind_unref(b);
}

static drake_err member_from_cache(struct kube_informer *pods, const struct ext_bind_args *a,
                                   struct ext_member *m, bool *found, char *why, size_t whylen)
{
	*found = false;
	const struct kube_pod *obj =
	    pods ? kube_pods_get(kube_informer_cache(pods), a->pod_ns, a->pod_name) : NULL;
	/* Absent, replaced, or still gated: kube-scheduler cannot bind a gated
	 * pod, so a gated copy is older than what it saw, and the plan that
	 * came with the ungating may be missing from it. Ask the API server.
	 * (Admission writes the plan and removes the gate in one patch, so an
	 * ungated copy always carries the plan if there is one.) */
	if (!obj || (a->pod_uid[0] && strcmp(obj->uid, a->pod_uid) != 0) || obj->n_gates > 0)
		return DRAKE_OK;
	*found = true;
	return ext_member_of_pod(obj, m, why, whylen);
}

void verb_bind(struct ext_call *call)
{
	struct bind_state *b = calloc(1, sizeof(*b));
	if (!b) {
		call_reply_error(call, 500, "out of memory");
		return;
	}
	char msg[512];
	drake_err e = ext_bind_decode(call->body, call->body_len, call_limits(call), &b->args, msg,
	                              sizeof(msg));
	if (!e && (!safe_name(b->args.pod_ns) || !safe_name(b->args.pod_name))) {
		snprintf(msg, sizeof(msg), "PodName and PodNamespace must be Kubernetes names");
		e = DRAKE_EINVAL;
	}
	if (e) {
		ext_bind_release(&b->args);
		free(b);
		call_reply_error(call, e == DRAKE_ENOMEM ? 500 : 400, "%s", msg);
		return;
	}
	b->kube = call_kube(call);
	if (!b->kube) {
		ext_bind_release(&b->args);
		free(b);
		call_reply_json(call, 200,
		                ext_error_encode("drake has no API-server credentials: start it "
		                                 "with --kubeconfig, or in a pod"),
		                true);
		return;
	}
	b->call = call;
	b->metrics = call_metrics(call);
	b->refs = 1; /* the call's, dropped by bind_detach when it is answered */
	b->metrics->inflight_binds++;
	call->verb_state = b;
	call->verb_state_free = bind_detach;

	struct ext_member m;
	bool found;
	e = member_from_cache(call_pods(call), &b->args, &m, &found, msg, sizeof(msg));
	if (e) {
		bind_answer(b, msg);
		return;
	}
	if (found) {
		route(b, &m);
		return;
	}
	/* Not in the cache (none, or it lags): the plan comes from the API
	 * server, so a gang member is never bound outside its barrier. */
	char path[600];
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", b->args.pod_ns,
	         b->args.pod_name);
	bind_ref(b);
	if (kube_request(b->kube, "GET", path, NULL, NULL, 0, on_pod_fetched, b) != DRAKE_OK) {
		bind_unref(b);
		bind_answer(b, "cannot start reading the pod from the API server");
	}
}
