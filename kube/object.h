/*
 * object.h - read-only accessors for API objects held as jansson values, so
 * the informers and their users can look at metadata without including
 * jansson themselves, and builders for the small request bodies the client
 * sends (delete options, bindings, events).
 *
 * Ownership: returned strings point into the object and live as long as the
 * caller's reference to it; builders return malloc'd strings the caller frees.
 */
#ifndef DRAKE_KUBE_OBJECT_H
#define DRAKE_KUBE_OBJECT_H

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"

struct json_t;

/* Longest object name the API allows (DNS subdomain). */
#define KUBE_NAME_MAX 253

struct kube_meta {
	const char *ns; /* "" for cluster-scoped objects */
	const char *name;
	const char *uid;        /* "" when absent */
	const char *rv;         /* "" when absent */
	const char *owner_uid;  /* the controller owner's uid, or NULL */
	const char *owner_kind; /* its kind, or NULL */
	const char *node_name;  /* spec.nodeName (pods), or NULL */
	bool deleting;          /* metadata.deletionTimestamp is set */
};

struct json_t *kube_obj_ref(struct json_t *o);
void kube_obj_unref(struct json_t *o);

/* Fills m from o's metadata; EINVAL when name is missing. */
drake_err kube_obj_meta(const struct json_t *o, struct kube_meta *m) DRAKE_MUST_CHECK;
/* metadata.labels[key], or NULL. */
const char *kube_obj_label(const struct json_t *o, const char *key);
/* metadata.annotations[key], or NULL. */
const char *kube_obj_annotation(const struct json_t *o, const char *key);
/* Length of the array at a dotted path ("spec.schedulingGates"), 0 when
 * absent or not an array. */
size_t kube_obj_array_len(const struct json_t *o, const char *path);
/* A string at a dotted path ("status.phase"), or NULL. */
const char *kube_obj_str(const struct json_t *o, const char *path);

/* Unix seconds of an RFC 3339 UTC time ("2026-01-02T03:04:05.5Z"), fraction
 * kept; 0 when ts is NULL or not of that form. */
double kube_time(const char *ts);
/* An RFC 3339 time ("2026-01-01T00:00:00Z", fractions allowed) at a dotted
 * path, in seconds since the epoch; 0 when absent or malformed. */
double kube_obj_time(const struct json_t *o, const char *path);
/* status.conditions[type]: its status ("True", "False", "Unknown") or NULL
 * when absent, and its lastTransitionTime in *since (0 when absent; since
 * may be NULL). */
const char *kube_obj_condition(const struct json_t *o, const char *type, double *since);

/* The "message" of an API Status body (what a failed write says), copied into
 * buf; "" when the body is not a Status. Never fails. */
const char *kube_status_message(const char *body, size_t len, char *buf, size_t buflen);

/* True when s is a DNS-1123 subdomain (what object names must be). */
bool kube_name_valid(const char *s);

/* {"kind":"DeleteOptions",...} with optional uid / resourceVersion
 * preconditions and propagation policy ("Background", "Foreground", "Orphan"). */
char *kube_delete_options_body(const char *uid, const char *rv, const char *propagation);
/* The same with gracePeriodSeconds 0: the object goes at once, without
 * waiting for a kubelet to confirm (a pod on a node that is gone). */
char *kube_delete_now_body(const char *uid);
/* A v1 Binding of pod to node. */
char *kube_binding_body(const char *pod, const char *node);
/* A core/v1 Event about an object. type is "Normal" or "Warning". */
char *kube_event_body(const char *ns, const char *api_version, const char *kind, const char *name,
                      const char *uid, const char *type, const char *reason, const char *message,
                      const char *component, const char *now_rfc3339);

#endif
