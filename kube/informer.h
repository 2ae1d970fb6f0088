/*
 * informer.h - list+watch caches of one API collection (nodes, pods,
 * services, TFJobs...): lists in pages, then watches from the list's
 * resourceVersion with bookmarks; a broken watch, a 410 Gone or any event it
 * cannot trust triggers a fresh relist (after backoff when nothing came), which
 * turns differences into add/update/delete callbacks.
 *
 * Handlers and lookups see what the cache stores (cache.h): the jansson
 * object itself, or the record its codec decodes (a struct kube_pod with
 * kube_pod_codec(), ...). A delete event reports the event's final copy,
 * decoded the same way.
 *
 * Ownership: the informer owns its cache; what handlers and lookups get is
 * borrowed for the duration of the call (or until the next event for
 * lookups). The client and base must outlive the informer. Handlers must
 * not free the informer.
 */
#ifndef DRAKE_KUBE_INFORMER_H
#define DRAKE_KUBE_INFORMER_H

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"
#include "kube/cache.h"

struct event_base;
struct kube_client;
struct json_t;

struct kube_informer_handlers {
	void (*on_add)(void *obj, void *arg);
	void (*on_update)(void *old_obj, void *new_obj, void *arg);
	void (*on_delete)(void *obj, void *arg);
	void *arg;
};

struct kube_informer_options {
	const char *name;    /* for logs: "pods" */
	const char *path;    /* collection: "/api/v1/pods", "/apis/kubeflow.org/v1/tfjobs" */
	int page_size;       /* list limit per page; 0 = 500 */
	int watch_timeout_s; /* server-side watch timeout; 0 = 300 */
	long backoff_min_ms; /* 0 = 500 */
	long backoff_max_ms; /* 0 = 30000 */
	size_t max_event;    /* largest watch event; 0 = KUBE_WATCH_EVENT_MAX */
	const struct kube_cache_codec *codec; /* what the cache stores; NULL = jansson */
};

struct kube_informer;

struct kube_informer *kube_informer_new(struct event_base *base, struct kube_client *client,
                                        const struct kube_informer_options *opts,
                                        const struct kube_informer_handlers *handlers, char *msg,
                                        size_t msglen);
/* Starts the first list. */
drake_err kube_informer_start(struct kube_informer *inf) DRAKE_MUST_CHECK;
void kube_informer_free(struct kube_informer *inf);

/* True once a full list has been applied and no watch has broken since: false
 * before the first list, and from a 410 Gone, an undecodable event or a failed
 * watch or list until the relist that follows completes. */
bool kube_informer_synced(const struct kube_informer *inf);
/* Why the informer is not synced ("watch failed (Connection refused),
 * relisting"); NULL when it is. The string is the informer's. */
const char *kube_informer_unsynced_why(const struct kube_informer *inf);
/* True when every informer in the array has synced (what /readyz reports). */
bool kube_informers_synced(struct kube_informer *const *infs, size_t n);
const char *kube_informer_name(const struct kube_informer *inf);
/* The resourceVersion the next watch starts from. */
const char *kube_informer_resource_version(const struct kube_informer *inf);
/* How many lists (first and re-) completed; tests and metrics read it. */
unsigned kube_informer_list_count(const struct kube_informer *inf);

const struct kube_cache *kube_informer_cache(const struct kube_informer *inf);
/* The stored form of ns/name (see above), or NULL. */
void *kube_informer_get(const struct kube_informer *inf, const char *ns, const char *name);

#endif
