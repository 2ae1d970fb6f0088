/*
 * cache.h - the informers' object store: objects by "namespace/name", with
 * secondary indexes by controller-owner UID and by node name. Not thread
 * safe (drake has one loop). Iteration order is the table's, not sorted:
 * callers that need a fixed order sort what they collect.
 *
 * What a cache stores for an object is its codec's choice: the jansson
 * tree itself (kube_json_codec, the default: TFJobs, services), or a
 * compact record decoded from it (kube/pod.h, kube/node.h), whose strings
 * are interned in the cache's string pool. An object whose
 * resourceVersion did not change is not decoded again: a relist of an
 * unchanged world only marks what it saw.
 *
 * Ownership: the cache owns what it stores and frees it on removal or
 * kube_cache_release(); lookups and walks borrow. A stored form handed
 * out by kube_cache_put() (old), kube_cache_remove() or kube_cache_decode()
 * is the caller's, given back with kube_cache_drop().
 */
#ifndef DRAKE_KUBE_CACHE_H
#define DRAKE_KUBE_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"
#include "kube/strpool.h"

struct json_t;
struct kube_meta;

/* Most objects one cache holds (a bound on memory for a hostile server). */
#define KUBE_CACHE_MAX_OBJECTS 1000000

struct kube_cache_entry;

/* How a cache turns an API object into what it stores. meta's strings must
 * live as long as the stored form. */
struct kube_cache_codec {
	const char *kind; /* "json", "pod", "node" */
	drake_err (*decode)(struct json_t *obj, struct kube_strpool *pool, void **out, char *msg,
	                    size_t msglen);
	void (*free)(void *stored, struct kube_strpool *pool);
	drake_err (*meta)(const void *stored, struct kube_meta *m);
};

/* Stores the object itself (one reference). */
extern const struct kube_cache_codec kube_json_codec;

struct kube_cache {
	struct kube_cache_entry **by_key, **by_owner, **by_node;
	size_t nbuckets, count;
	size_t max; /* most objects held; kube_cache_init() sets KUBE_CACHE_MAX_OBJECTS */
	const struct kube_cache_codec *codec;
	struct kube_strpool pool;
};

typedef bool (*kube_visit_cb)(struct json_t *obj, void *arg); /* false stops the walk */
typedef bool (*kube_stored_cb)(void *stored, void *arg);      /* the same, any codec */

/* A cache of jansson objects. */
void kube_cache_init(struct kube_cache *c);
/* A cache storing what codec decodes. */
void kube_cache_init_codec(struct kube_cache *c, const struct kube_cache_codec *codec);
void kube_cache_release(struct kube_cache *c);

/* Stores obj under its metadata. When an entry of the same name has the
 * same non-empty resourceVersion, it is kept as it is (*changed false,
 * *old NULL) and only marked with gen; otherwise obj is decoded and stored
 * (*changed true), *old receiving the replaced stored form or NULL.
 * *stored (may be NULL) receives what the cache now holds. gen marks
 * entries seen by a relist. */
drake_err kube_cache_put(struct kube_cache *c, struct json_t *obj, unsigned gen, void **stored,
                         void **old, bool *changed) DRAKE_MUST_CHECK;
/* Removes ns/name; returns the removed stored form (the caller's) or NULL. */
void *kube_cache_remove(struct kube_cache *c, const char *ns, const char *name);
/* The stored form obj would have, not stored (a delete event's final copy). */
drake_err kube_cache_decode(struct kube_cache *c, struct json_t *obj, void **out, char *msg,
                            size_t msglen) DRAKE_MUST_CHECK;
/* Frees a stored form the caller was given; NULL is ignored. */
void kube_cache_drop(struct kube_cache *c, void *stored);
size_t kube_cache_count(const struct kube_cache *c);

/* Any codec: the stored form of ns/name or NULL, and walks over all, one
 * owner uid's or one node's entries. */
void *kube_cache_lookup(const struct kube_cache *c, const char *ns, const char *name);
void kube_cache_walk(const struct kube_cache *c, kube_stored_cb cb, void *arg);
void kube_cache_walk_owner(const struct kube_cache *c, const char *uid, kube_stored_cb cb,
                           void *arg);
void kube_cache_walk_node(const struct kube_cache *c, const char *node, kube_stored_cb cb,
                          void *arg);

/* A jansson cache's objects (NULL and no visits for another codec's). */
struct json_t *kube_cache_get(const struct kube_cache *c, const char *ns, const char *name);
void kube_cache_foreach(const struct kube_cache *c, kube_visit_cb cb, void *arg);
void kube_cache_by_owner(const struct kube_cache *c, const char *uid, kube_visit_cb cb, void *arg);
void kube_cache_by_node(const struct kube_cache *c, const char *node, kube_visit_cb cb, void *arg);

/* Removes every entry whose gen differs, calling cb(stored) on each before
 * it is freed (the informer turns these into deletes). */
void kube_cache_sweep(struct kube_cache *c, unsigned gen, kube_stored_cb cb, void *arg);

#endif
