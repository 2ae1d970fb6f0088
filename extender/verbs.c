/*
 * verbs.c - filter, prioritize, preempt and bind.
 *
 * Until the gang planner is wired in, filter passes every candidate,
 * prioritize scores every node 0, preempt returns the victims it was given,
 * and bind posts the v1 Binding to the API server, answering with the API
 * server's own message when that fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "extender/call.h"
#include "kube/client.h"

static int decode_status(drake_err e)
{
	return e == DRAKE_ENOMEM ? 500 : 400;
}

void verb_filter(struct ext_call *call)
{
	struct ext_args args;
	char msg[512];
	drake_err e =
	    ext_args_decode(call->body, call->body_len, call_limits(call), &args, msg, sizeof(msg));
	if (e) {
		ext_args_release(&args);
		call_reply_error(call, decode_status(e), "%s", msg);
		return;
	}
	enum ext_verdict *verdicts = calloc(args.n_nodes ? args.n_nodes : 1, sizeof(*verdicts));
	if (!verdicts) {
		ext_args_release(&args);
		call_reply_error(call, 500, "out of memory");
		return;
	}
	struct ext_filter_result res = {.verdicts = verdicts};
	call_reply_json(call, 200, ext_filter_encode(&args, &res), false);
	free(verdicts);
	ext_args_release(&args);
}

void verb_prioritize(struct ext_call *call)
{
	struct ext_args args;
	char msg[512];
	drake_err e =
	    ext_args_decode(call->body, call->body_len, call_limits(call), &args, msg, sizeof(msg));
	if (e) {
		ext_args_release(&args);
		call_reply_error(call, decode_status(e), "%s", msg);
		return;
	}
	call_reply_json(call, 200, ext_prioritize_encode(&args, NULL), false);
	ext_args_release(&args);
}

void verb_preempt(struct ext_call *call)
{
	struct ext_preempt_args args;
	char msg[512];
	drake_err e = ext_preempt_decode(call->body, call->body_len, call_limits(call), &args, msg,
	                                 sizeof(msg));
	if (e) {
		ext_preempt_release(&args);
		call_reply_error(call, decode_status(e), "%s", msg);
		return;
	}
	call_reply_json(call, 200, ext_preempt_encode(&args, NULL), false);
	ext_preempt_release(&args);
}

/*
 * Bind. The state is shared by the call and the API request in flight: the
 * call may be answered early (shutdown), after which the API callback finds
 * call == NULL and only drops its reference.
 */
struct bind_state {
	struct ext_call *call;
	struct metrics *metrics;
	struct ext_bind_args args;
	int refs;
	bool checking_conflict;
};

static void bind_unref(struct bind_state *b)
{
	if (--b->refs > 0)
		return;
	ext_bind_release(&b->args);
	free(b);
}

static void bind_detach(void *arg)
{
	struct bind_state *b = arg;
	b->call = NULL;
	b->metrics->inflight_binds--;
	bind_unref(b);
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

static void bind_answer(struct bind_state *b, const char *error)
{
	struct ext_call *call = b->call;
	char q[600];
	if (error)
		log_warn("bind_failed", "pod=%s/%s node=%s error=%s", b->args.pod_ns,
		         b->args.pod_name, b->args.node, drake_log_quote(error, q, sizeof(q)));
	else
		log_info("bound", "pod=%s/%s node=%s", b->args.pod_ns, b->args.pod_name,
		         b->args.node);
	call_reply_json(call, 200, ext_error_encode(error ? error : ""), error != NULL);
}

static void on_pod_checked(const struct kube_response *r, void *arg);

static void on_bound(const struct kube_response *r, void *arg)
{
	struct bind_state *b = arg;
	if (!b->call) {
		bind_unref(b);
		return;
	}
	char err[512];
	if (r->status >= 200 && r->status < 300) {
		bind_answer(b, NULL);
	} else if (r->status == 409) {
		/* "already assigned": fine if to the node we were asked for, which
		 * happens when kube-scheduler retries a bind that did succeed. */
		char path[600];
		snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", b->args.pod_ns,
		         b->args.pod_name);
		b->refs++;
		if (kube_request(call_kube(b->call), "GET", path, NULL, NULL, 0, on_pod_checked,
		                 b) == DRAKE_OK) {
			bind_unref(b);
			return;
		}
		b->refs--;
		char *m = ext_status_message(r->body, r->body_len);
		snprintf(err, sizeof(err), "binding %s/%s to %s: %s (HTTP 409)", b->args.pod_ns,
		         b->args.pod_name, b->args.node, m ? m : "conflict");
		free(m);
		bind_answer(b, err);
	} else if (r->status == 0) {
		snprintf(err, sizeof(err), "binding %s/%s to %s: API server unreachable: %s",
		         b->args.pod_ns, b->args.pod_name, b->args.node,
		         r->error ? r->error : "no answer");
		bind_answer(b, err);
	} else {
		char *m = ext_status_message(r->body, r->body_len);
		snprintf(err, sizeof(err), "binding %s/%s to %s: %s (HTTP %ld)", b->args.pod_ns,
		         b->args.pod_name, b->args.node, m ? m : "API server error", r->status);
		free(m);
		bind_answer(b, err);
	}
	bind_unref(b);
}

static void on_pod_checked(const struct kube_response *r, void *arg)
{
	struct bind_state *b = arg;
	if (!b->call) {
		bind_unref(b);
		return;
	}
	char *node = r->status == 200 ? ext_pod_node_name(r->body, r->body_len) : NULL;
	if (node && strcmp(node, b->args.node) == 0) {
		bind_answer(b, NULL);
	} else {
		char err[512];
		snprintf(err, sizeof(err), "binding %s/%s to %s: pod is already bound to %s",
		         b->args.pod_ns, b->args.pod_name, b->args.node,
		         node && *node ? node : "another node");
		bind_answer(b, err);
	}
	free(node);
	bind_unref(b);
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
	if (e) {
		ext_bind_release(&b->args);
		free(b);
		call_reply_error(call, decode_status(e), "%s", msg);
		return;
	}
	if (!safe_name(b->args.pod_ns) || !safe_name(b->args.pod_name)) {
		ext_bind_release(&b->args);
		free(b);
		call_reply_error(call, 400, "PodName and PodNamespace must be Kubernetes names");
		return;
	}
	struct kube_client *kube = call_kube(call);
	if (!kube) {
		ext_bind_release(&b->args);
		free(b);
		call_reply_json(call, 200,
		                ext_error_encode("drake has no API-server credentials: start it "
		                                 "with --kubeconfig, or in a pod"),
		                true);
		return;
	}
	char *binding = ext_binding_object_encode(&b->args);
	char path[600];
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s/binding", b->args.pod_ns,
	         b->args.pod_name);
	b->call = call;
	b->metrics = call_metrics(call);
	b->refs = 2; /* the call's and the API request's */
	b->metrics->inflight_binds++;
	call->verb_state = b;
	call->verb_state_free = bind_detach;
	if (!binding || kube_request(kube, "POST", path, NULL, binding, strlen(binding), on_bound,
	                             b) != DRAKE_OK) {
		free(binding);
		b->refs--; /* no API request holds it */
		call_reply_json(call, 200,
		                ext_error_encode("cannot start the binding request to the API "
		                                 "server"),
		                true);
		return;
	}
	free(binding);
}
