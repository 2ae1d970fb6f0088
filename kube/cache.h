/*
 * cache.h - the informers' object store: objects by "namespace/name", with
 * secondary indexes by controller-owner UID and by node name. Not thread
 * safe (drake has one loop). Iteration order is the table's, not sorted:
 * callers that need a fixed order sort what they collect.
 *
 * Ownership: the cache holds one reference to each stored object and drops
 * it on removal or kube_cache_release(); lookups borrow.
 */
#ifndef DRAKE_KUBE_CACHE_H
#define DRAKE_KUBE_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"

struct json_t;

/* Most objects one cache holds (a bound on memory for a hostile server). */
#define KUBE_CACHE_MAX_OBJECTS 1000000

struct kube_cache_entry;

struct kube_cache {
	struct kube_cache_entry **by_key, **by_owner, **by_node;
	size_t nbuckets, count;
	size_t max; /* most objects held; kube_cache_init() sets KUBE_CACHE_MAX_OBJECTS */
};

typedef bool (*kube_visit_cb)(struct json_t *obj, void *arg); /* false stops the walk */

void kube_cache_init(struct kube_cache *c);
void kube_cache_release(struct kube_cache *c);

/* Stores obj (taking a reference) under its metadata; *old receives the
 * replaced object (the caller owns that reference) or NULL. *changed is
 * false when the stored object had the same resourceVersion. gen marks
 * entries seen by a relist. */
drake_err kube_cache_put(struct kube_cache *c, struct json_t *obj, unsigned gen,
                         struct json_t **old, bool *changed) DRAKE_MUST_CHECK;
/* Removes ns/name; returns the removed object (caller owns it) or NULL. */
struct json_t *kube_cache_remove(struct kube_cache *c, const char *ns, const char *name);
struct json_t *kube_cache_get(const struct kube_cache *c, const char *ns, const char *name);
size_t kube_cache_count(const struct kube_cache *c);

void kube_cache_foreach(const struct kube_cache *c, kube_visit_cb cb, void *arg);
void kube_cache_by_owner(const struct kube_cache *c, const char *uid, kube_visit_cb cb, void *arg);
void kube_cache_by_node(const struct kube_cache *c, const char *node, kube_visit_cb cb, void *arg);
/* Removes every entry whose gen differs, calling cb(obj) on each before its
 * reference is dropped (the informer turns these into deletes). */
void kube_cache_sweep(struct kube_cache *c, unsigned gen, kube_visit_cb cb, void *arg);

#endif
