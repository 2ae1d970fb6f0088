/*
 * progress.c - POST /v1/progress: a replica of a TFJob says how far its
 * training has got (step, a metric, optionally the total steps), for the
 * controller's scaling and migration policies.
 *
 * Path of a report: the body is decoded strictly (api_codec.h); the caller
 * is named by its pod's projected service-account token, reviewed by the
 * API server (access.h; cached for a minute), or, with a client certificate
 * signed by drake's client CA, by the body's namespace and pod; a token may
 * report only for its own pod. Then the pod's rate limit (1 a second, burst
 * 5), then the controller's progress operation (controller.h). Every
 * refusal is answered before it runs, so a refused report changes nothing.
 */
#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "extender/access.h"
#include "extender/call.h"

/* The report, from whoever r names, to the controller. */
static void deliver(struct ext_call *call, const struct api_progress_body *b, const char *ns,
                    const char *pod, const char *pod_uid, double t)
{
	int retry;
	if (!access_progress_allowed(call_access(call), ns, pod, &retry)) {
		access_refuse(
		    call, API_PROGRESS, 429, API_RATE_LIMITED, retry,
		    "pod %s/%s reports too often: at most %g a second after a burst of %g", ns, pod,
		    ACCESS_PROGRESS_RATE, ACCESS_PROGRESS_BURST);
		return;
	}
	struct ext_progress p = {.step = b->step,
	                         .value = b->value,
	                         .loss = b->loss,
	                         .total_steps = b->total_steps,
	                         .t = t};
	snprintf(p.ns, sizeof(p.ns), "%s", ns);
	snprintf(p.pod, sizeof(p.pod), "%s", pod);
	snprintf(p.pod_uid, sizeof(p.pod_uid), "%s", pod_uid);
	void *arg;
	const struct ext_controller *ctl = call_controller(call, &arg);
	char why[512] = "";
	drake_err e = ctl->progress(arg, &p, why, sizeof(why));
	if (e == DRAKE_EINVAL) {
		access_refuse(call, API_PROGRESS, 403, API_UNKNOWN_REPLICA, 0, "%s",
		              why[0] ? why : "the pod is not a replica of a job drake manages");
	} else if (e) {
		access_refuse(call, API_PROGRESS, 500, API_ERROR, 0, "recording progress: %s",
		              why[0] ? why : drake_strerror(e));
	} else {
		log_debug("progress", "pod=%s/%s step=%lld value=%g metric=%s", ns, pod,
		          (long long)b->step, b->value, b->loss ? "loss" : "accuracy");
		access_accept(call, API_PROGRESS, strdup("{\"accepted\":true}"));
	}
}

static void on_token_checked(struct access_req *r)
{
	const struct api_progress_body *b = &r->body.progress;
	if (!r->who.bound) {
		access_refuse(
		    r->call, API_PROGRESS, 403, API_FORBIDDEN, 0,
		    "the token of \"%s\" is not bound to a pod: report with the pod's own "
		    "projected service-account token",
		    r->who.user);
		return;
	}
	if (b->pod[0] && (strcmp(b->ns, r->who.ns) != 0 || strcmp(b->pod, r->who.pod) != 0)) {
		access_refuse(r->call, API_PROGRESS, 403, API_FORBIDDEN, 0,
		              "the token is pod %s/%s's, which may report only for itself, not for "
		              "%s/%s",
		              r->who.ns, r->who.pod, b->ns, b->pod);
		return;
	}
	deliver(r->call, b, r->who.ns, r->who.pod, r->who.pod_uid, r->t);
}

void verb_progress(struct ext_call *call)
{
	void *arg;
	if (!call_controller(call, &arg)->progress) {
		access_refuse(
		    call, API_PROGRESS, 503, API_UNAVAILABLE, 0,
		    "progress reports need drake's TFJob controller (drake serve --reconcile), "
		    "and none has registered for them");
		return;
	}
	struct access_req *r = access_req_new(call, API_PROGRESS);
	if (!r) {
		access_refuse(call, API_PROGRESS, 500, API_ERROR, 0, "out of memory");
		return;
	}
	char msg[512];
	drake_err e =
	    api_progress_decode(call->body, call->body_len, &r->body.progress, msg, sizeof(msg));
	if (e) {
		access_refuse(call, API_PROGRESS, e == DRAKE_ELIMIT ? 413 : 400, API_BAD_REQUEST, 0,
		              "%s", msg);
		return;
	}
	const char *token;
	switch (access_bearer(call, &token)) {
	case BEARER_TOKEN:
		access_authenticate(r, token, ACCESS_POD_TOKEN, on_token_checked);
		return;
	case BEARER_MALFORMED:
		access_refuse(call, API_PROGRESS, 401, API_UNAUTHENTICATED, 0,
		              "Authorization: expected \"Bearer <token>\" with the pod's "
		              "service-account token (at most %d bytes)",
		              ACCESS_MAX_TOKEN);
		return;
	case BEARER_NONE: break;
	}
	if (!call_client_verified(call)) {
		access_refuse(call, API_PROGRESS, 401, API_UNAUTHENTICATED, 0,
		              "a bearer token is required: the reporting pod's projected "
		              "service-account token (or a client certificate signed by drake's "
		              "client CA, with namespace and pod in the body)");
		return;
	}
	/* A certificate names an agent, not a pod: the body must say which. */
	const struct api_progress_body *b = &r->body.progress;
	if (!b->pod[0]) {
		access_refuse(call, API_PROGRESS, 400, API_BAD_REQUEST, 0,
		              "namespace and pod: required with a client certificate, which does "
		              "not name a pod (a bearer token does)");
		return;
	}
	deliver(call, b, b->ns, b->pod, "", r->t);
}
