/*
 * api.h - the writes drake makes to the API server, as thin helpers over
 * kube_request(): create, delete with preconditions, merge and JSON patch,
 * the status subresource, pod Bindings and Events. Paths are built here from
 * validated names, so callers never splice user strings into URLs.
 *
 * Ownership: bodies are copied by the client; callbacks follow kube_request()
 * (exactly once, response borrowed). A 409 is reported as is: the caller
 * re-reads fresh state (its informer) and decides again.
 */
#ifndef DRAKE_KUBE_API_H
#define DRAKE_KUBE_API_H

#include <stddef.h>

#include "common/err.h"
#include "kube/client.h"

/* Longest path these helpers build. */
#define KUBE_API_PATH_MAX 1024

/* Resource addresses: group "" is the core group (/api/v1). */
struct kube_resource {
	const char *group;       /* "", "kubeflow.org" */
	const char *version;     /* "v1" */
	const char *plural;      /* "pods", "tfjobs" */
	const char *ns;          /* namespace, or NULL for cluster-scoped */
	const char *name;        /* object name, or NULL for the collection */
	const char *subresource; /* "status", "binding", or NULL */
};

/* Writes the URL path of r into buf; EINVAL for invalid names. */
drake_err kube_resource_path(const struct kube_resource *r, char *buf, size_t len) DRAKE_MUST_CHECK;

drake_err kube_create(struct kube_client *c, const struct kube_resource *r, const char *json,
                      kube_response_cb cb, void *arg) DRAKE_MUST_CHECK;
/* uid / rv preconditions may be NULL; propagation is Background. */
drake_err kube_delete(struct kube_client *c, const struct kube_resource *r, const char *uid,
                      const char *rv, kube_response_cb cb, void *arg) DRAKE_MUST_CHECK;
/* DELETE with gracePeriodSeconds 0 and a uid precondition. */
drake_err kube_delete_now(struct kube_client *c, const struct kube_resource *r, const char *uid,
                          kube_response_cb cb, void *arg) DRAKE_MUST_CHECK;
drake_err kube_merge_patch(struct kube_client *c, const struct kube_resource *r, const char *json,
                           kube_response_cb cb, void *arg) DRAKE_MUST_CHECK;
drake_err kube_json_patch(struct kube_client *c, const struct kube_resource *r, const char *json,
                          kube_response_cb cb, void *arg) DRAKE_MUST_CHECK;
/* kube_json_patch queued ahead of the client's waiting requests
 * (kube_request_first). */
drake_err kube_json_patch_first(struct kube_client *c, const struct kube_resource *r,
                                const char *json, kube_response_cb cb, void *arg) DRAKE_MUST_CHECK;
/* Binds a pod to a node (POST .../pods/<pod>/binding). */
drake_err kube_bind(struct kube_client *c, const char *ns, const char *pod, const char *node,
                    kube_response_cb cb, void *arg) DRAKE_MUST_CHECK;
/* Records an Event on an object; type "Normal" or "Warning". Fire and forget
 * when cb is NULL. */
drake_err kube_record_event(struct kube_client *c, const char *ns, const char *api_version,
                            const char *kind, const char *name, const char *uid, const char *type,
                            const char *reason, const char *message, kube_response_cb cb,
                            void *arg) DRAKE_MUST_CHECK;

#endif
