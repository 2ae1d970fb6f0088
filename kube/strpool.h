/*
 * strpool.h - interned, reference-counted strings for the compact caches.
 * 50,000 pods repeat a few thousand distinct strings (namespaces, node
 * names, owner uids, label values, quantities, timestamps): each is held
 * once and counted, so a record costs a pointer per string, not a copy.
 * Not thread safe (drake has one loop).
 *
 * Ownership: the pool owns every string it hands out. Each
 * kube_strpool_get() takes one reference, released by kube_strpool_put();
 * a string is freed with its last reference. kube_strpool_release() frees
 * the table; every reference must have been put back by then.
 */
#ifndef DRAKE_KUBE_STRPOOL_H
#define DRAKE_KUBE_STRPOOL_H

#include <stddef.h>

struct kube_strpool_entry;

struct kube_strpool {
	struct kube_strpool_entry **buckets;
	size_t nbuckets, count;
};

void kube_strpool_init(struct kube_strpool *p);
void kube_strpool_release(struct kube_strpool *p);

/* The pooled copy of s (one more reference), NULL when s is NULL or on
 * allocation failure (*oom set then). */
const char *kube_strpool_get(struct kube_strpool *p, const char *s, int *oom);
/* Drops a reference taken by kube_strpool_get(); NULL is ignored. */
void kube_strpool_put(struct kube_strpool *p, const char *s);
/* Distinct strings held (tests and the memory accounting read it). */
size_t kube_strpool_count(const struct kube_strpool *p);

#endif
