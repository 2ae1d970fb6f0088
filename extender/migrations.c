/*
 * migrations.c - POST /v1/migrations asks the controller to move one replica
 * of a TFJob (away from a node, onto a node, or where the policy picks);
 * GET /v1/migrations lists what the controller has been asked and done.
 *
 * A migration request is a person's or a tool's, never a pod's: the caller
 * is named by a bearer token (TokenReview, never cached: these are rare and
 * a revoked token must stop working at once), and a SubjectAccessReview
 * asks whether that user may create <kind>/migrations (group kubeflow.org:
 * tfjobs, pytorchjobs, the kind of the job the pod is a replica of) in the
 * pod's namespace. A client certificate is not enough: drake's client
 * CA signs kube-scheduler's, which names no user. The listing follows
 * GET /v1/jobs: under mTLS, a verified client certificate (server.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "extender/access.h"
#include "extender/call.h"

static void on_authorised(struct access_req *r)
{
	const struct api_migration_body *b = &r->body.migration;
	struct ext_migration_req m = {0};
	snprintf(m.ns, sizeof(m.ns), "%s", b->ns);
	snprintf(m.pod, sizeof(m.pod), "%s", b->pod);
	snprintf(m.away, sizeof(m.away), "%s", b->away);
	snprintf(m.onto, sizeof(m.onto), "%s", b->onto);
	m.pause_job = b->pause_job;
	snprintf(m.user, sizeof(m.user), "%s", r->who.user);
	void *arg;
	const struct ext_controller *ctl = call_controller(r->call, &arg);
	char id[256] = "", why[512] = "", q[600];
	drake_err e = ctl->migrate(arg, &m, id, sizeof(id), why, sizeof(why));
	switch (e) {
	case DRAKE_OK:
		log_info("migration_requested", "pod=%s/%s away=%s onto=%s user=%s id=%s", m.ns,
		         m.pod, m.away[0] ? m.away : "-", m.onto[0] ? m.onto : "-",
		         drake_log_quote(m.user, q, sizeof(q)), id);
		access_accept(r->call, API_MIGRATION, api_id_encode(id));
		break;
	case DRAKE_ESTATE:
		access_refuse(r->call, API_MIGRATION, 409, API_REFUSED_BY_POLICY, 0,
		              "migration of %s/%s refused: %s", m.ns, m.pod,
		              why[0] ? why : "the policy gave no reason");
		break;
	case DRAKE_EINVAL:
		access_refuse(r->call, API_MIGRATION, 404, API_UNKNOWN_REPLICA, 0, "%s",
		              why[0] ? why : "no such replica of a job drake manages");
		break;
	default:
		access_refuse(r->call, API_MIGRATION, 500, API_ERROR, 0,
		              "requesting the migration: %s", why[0] ? why : drake_strerror(e));
	}
}

static void on_authenticated(struct access_req *r)
{
	/* the replica's own kind; a pod drake manages no job of is asked
	 * about as a TFJob's, and the controller then says it has no such
	 * replica (404) only to a caller allowed that much */
	void *arg;
	const struct ext_controller *ctl = call_controller(r->call, &arg);
	const char *res = ctl->resource_of
	                      ? ctl->resource_of(arg, r->body.migration.ns, r->body.migration.pod)
	                      : NULL;
	const struct api_access a = {.verb = "create",
	                             .group = "kubeflow.org",
	                             .resource = res ? res : "tfjobs",
	                             .subresource = "migrations",
	                             .ns = r->body.migration.ns};
	access_authorize(r, &a, on_authorised);
}

void verb_migrations_post(struct ext_call *call)
{
	void *arg;
	if (!call_controller(call, &arg)->migrate) {
		access_refuse(call, API_MIGRATION, 503, API_UNAVAILABLE, 0,
		              "migrations need drake's TFJob controller (drake serve --reconcile), "
		              "and none has registered for them");
		return;
	}
	struct access_req *r = access_req_new(call, API_MIGRATION);
	if (!r) {
		access_refuse(call, API_MIGRATION, 500, API_ERROR, 0, "out of memory");
		return;
	}
	char msg[512];
	drake_err e =
	    api_migration_decode(call->body, call->body_len, &r->body.migration, msg, sizeof(msg));
	if (e) {
		access_refuse(call, API_MIGRATION, e == DRAKE_ELIMIT ? 413 : 400, API_BAD_REQUEST,
		              0, "%s", msg);
		return;
	}
	const char *token;
	if (access_bearer(call, &token) != BEARER_TOKEN) {
		access_refuse(
		    call, API_MIGRATION, 401, API_UNAUTHENTICATED, 0,
		    "a bearer token naming a Kubernetes user is required (Authorization: "
		    "Bearer <token>, e.g. from kubectl create token); a client certificate "
		    "names no user");
		return;
	}
	access_authenticate(r, token, ACCESS_USER_TOKEN, on_authenticated);
}

void verb_migrations_get(struct ext_call *call)
{
	void *arg;
	const struct ext_controller *ctl = call_controller(call, &arg);
	if (!ctl->migrations_json) {
		call_reply_error(
		    call, 503,
		    "migrations need drake's TFJob controller (drake serve --reconcile), "
		    "and none has registered for them");
		return;
	}
	call_reply_json(call, 200, ctl->migrations_json(arg), false);
}
