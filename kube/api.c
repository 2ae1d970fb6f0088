/*
 * api.c - path building and the write helpers declared in api.h.
 *
 * Ownership: every body built here is freed before returning (the client
 * keeps its own copy).
 */
#include "kube/api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "kube/object.h"

static bool segment_ok(const char *s)
{
	/* plurals, versions and groups are lowercase DNS-ish too */
	return kube_name_valid(s);
}

drake_err kube_resource_path(const struct kube_resource *r, char *buf, size_t len)
{
	if (!r || !r->version || !segment_ok(r->version) || !r->plural || !segment_ok(r->plural))
		return DRAKE_EINVAL;
	if (r->group && *r->group && !segment_ok(r->group))
		return DRAKE_EINVAL;
	if ((r->ns && !kube_name_valid(r->ns)) || (r->name && !kube_name_valid(r->name)) ||
	    (r->subresource && (!segment_ok(r->subresource) || !r->name)))
		return DRAKE_EINVAL;
	int n;
	if (r->group && *r->group)
		n = snprintf(buf, len, "/apis/%s/%s", r->group, r->version);
	else
		n = snprintf(buf, len, "/api/%s", r->version);
	if (n >= 0 && (size_t)n < len && r->ns)
		n += snprintf(buf + n, len - (size_t)n, "/namespaces/%s", r->ns);
	if (n >= 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, "/%s", r->plural);
	if (n >= 0 && (size_t)n < len && r->name)
		n += snprintf(buf + n, len - (size_t)n, "/%s", r->name);
	if (n >= 0 && (size_t)n < len && r->subresource)
		n += snprintf(buf + n, len - (size_t)n, "/%s", r->subresource);
	if (n < 0 || (size_t)n >= len)
		return DRAKE_ELIMIT;
	return DRAKE_OK;
}

/* first: queued ahead of the client's waiting requests (kube_request_first). */
static drake_err send_to(struct kube_client *c, bool first, const char *method,
                         const struct kube_resource *r, const char *ctype, const char *body,
                         kube_response_cb cb, void *arg)
{
	char path[KUBE_API_PATH_MAX];
	drake_err e = kube_resource_path(r, path, sizeof(path));
	if (e != DRAKE_OK)
		return e;
	size_t len = body ? strlen(body) : 0;
	return first ? kube_request_first(c, method, path, ctype, body, len, cb, arg)
	             : kube_request(c, method, path, ctype, body, len, cb, arg);
}

static drake_err send(struct kube_client *c, const char *method, const struct kube_resource *r,
                      const char *ctype, const char *body, kube_response_cb cb, void *arg)
{
	return send_to(c, false, method, r, ctype, body, cb, arg);
}

drake_err kube_create(struct kube_client *c, const struct kube_resource *r, const char *json,
                      kube_response_cb cb, void *arg)
{
	if (!json)
		return DRAKE_EINVAL;
	return send(c, "POST", r, NULL, json, cb, arg);
}

drake_err kube_delete(struct kube_client *c, const struct kube_resource *r, const char *uid,
                      const char *rv, kube_response_cb cb, void *arg)
{
	char *body = kube_delete_options_body(uid, rv, "Background");
	if (!body)
		return DRAKE_ENOMEM;
	drake_err e = send(c, "DELETE", r, NULL, body, cb, arg);
	free(body);
	return e;
}

drake_err kube_delete_now(struct kube_client *c, const struct kube_resource *r, const char *uid,
                          kube_response_cb cb, void *arg)
{
	char *body = kube_delete_now_body(uid);
	if (!body)
		return DRAKE_ENOMEM;
	drake_err e = send(c, "DELETE", r, NULL, body, cb, arg);
	free(body);
	return e;
}

drake_err kube_merge_patch(struct kube_client *c, const struct kube_resource *r, const char *json,
                           kube_response_cb cb, void *arg)
{
	if (!json)
		return DRAKE_EINVAL;
	return send(c, "PATCH", r, "application/merge-patch+json", json, cb, arg);
}

drake_err kube_json_patch(struct kube_client *c, const struct kube_resource *r, const char *json,
                          kube_response_cb cb, void *arg)
{
	if (!json)
		return DRAKE_EINVAL;
	return send(c, "PATCH", r, "application/json-patch+json", json, cb, arg);
}

drake_err kube_json_patch_first(struct kube_client *c, const struct kube_resource *r,
                                const char *json, kube_response_cb cb, void *arg)
{
	if (!json)
		return DRAKE_EINVAL;
	return send_to(c, true, "PATCH", r, "application/json-patch+json", json, cb, arg);
}

drake_err kube_bind(struct kube_client *c, const char *ns, const char *pod, const char *node,
                    kube_response_cb cb, void *arg)
{
	if (!kube_name_valid(node))
		return DRAKE_EINVAL;
	struct kube_resource r = {
	    .version = "v1", .plural = "pods", .ns = ns, .name = pod, .subresource = "binding"};
	char *body = kube_binding_body(pod, node);
	if (!body)
		return DRAKE_ENOMEM;
	drake_err e = send(c, "POST", &r, NULL, body, cb, arg);
	free(body);
	return e;
}

static void on_event_posted(const struct kube_response *resp, void *arg)
{
	if (resp->status < 200 || resp->status >= 300)
		log_warn("event_post_failed", "status=%ld error=%s", resp->status,
		         resp->error ? resp->error : "-");
}

drake_err kube_record_event(struct kube_client *c, const char *ns, const char *api_version,
                            const char *kind, const char *name, const char *uid, const char *type,
                            const char *reason, const char *message, kube_response_cb cb, void *arg)
{
	char now[32];
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(now, sizeof(now), "%Y-%m-%dT%H:%M:%SZ", &tm);
	char *body =
	    kube_event_body(ns, api_version, kind, name, uid, type, reason, message, "drake", now);
	if (!body)
		return DRAKE_ENOMEM;
	struct kube_resource r = {.version = "v1", .plural = "events", .ns = ns};
	drake_err e = send(c, "POST", &r, NULL, body, cb ? cb : on_event_posted, arg);
	free(body);
	return e;
}
