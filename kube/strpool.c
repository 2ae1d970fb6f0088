/*
 * strpool.c - a chained hash table of counted strings (see strpool.h). The
 * string is stored after its header, so a pooled pointer finds its entry
 * without a lookup when its reference is put back.
 */
#include "kube/strpool.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct kube_strpool_entry {
	struct kube_strpool_entry *next;
	uint32_t hash, refs;
	char s[];
};

static uint32_t hash_of(const char *s, size_t len)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

void kube_strpool_init(struct kube_strpool *p)
{
	memset(p, 0, sizeof(*p));
}

void kube_strpool_release(struct kube_strpool *p)
{
	if (!p)
		return;
	for (size_t b = 0; b < p->nbuckets; b++) {
		struct kube_strpool_entry *e = p->buckets[b];
		while (e) {
			struct kube_strpool_entry *next = e->next;
			free(e);
			e = next;
		}
	}
	free(p->buckets);
	memset(p, 0, sizeof(*p));
}

static void grow(struct kube_strpool *p)
{
	size_t n = p->nbuckets ? p->nbuckets * 2 : 256;
	struct kube_strpool_entry **b = calloc(n, sizeof(*b));
	if (!b)
		return; /* longer chains, still correct */
	for (size_t i = 0; i < p->nbuckets; i++) {
		struct kube_strpool_entry *e = p->buckets[i];
		while (e) {
			struct kube_strpool_entry *next = e->next;
			e->next = b[e->hash & (n - 1)];
			b[e->hash & (n - 1)] = e;
			e = next;
		}
	}
	free(p->buckets);
	p->buckets = b;
	p->nbuckets = n;
}

const char *kube_strpool_get(struct kube_strpool *p, const char *s, int *oom)
{
	if (!s)
		return NULL;
	size_t len = strlen(s);
	uint32_t h = hash_of(s, len);
	if (p->count >= p->nbuckets)
		grow(p);
	if (!p->nbuckets) {
		*oom = 1;
		return NULL;
	}
	struct kube_strpool_entry **head = &p->buckets[h & (p->nbuckets - 1)];
	for (struct kube_strpool_entry *e = *head; e; e = e->next) {
		if (e->hash == h && !strcmp(e->s, s) && e->refs < UINT32_MAX) {
			e->refs++;
			return e->s;
		}
	}
	struct kube_strpool_entry *e = malloc(sizeof(*e) + len + 1);
	if (!e) {
		*oom = 1;
		return NULL;
	}
	e->hash = h;
	e->refs = 1;
	memcpy(e->s, s, len + 1);
	e->next = *head;
	*head = e;
	p->count++;
	return e->s;
}

void kube_strpool_put(struct kube_strpool *p, const char *s)
{
	if (!s)
		return;
	struct kube_strpool_entry *e =
	    (struct kube_strpool_entry *)(void *)(s - offsetof(struct kube_strpool_entry, s));
	if (--e->refs > 0)
		return;
	for (struct kube_strpool_entry **pp = &p->buckets[e->hash & (p->nbuckets - 1)]; *pp;
	     pp = &(*pp)->next) {
		if (*pp == e) {
			*pp = e->next;
			break;
		}
	}
	p->count--;
	free(e);
}

size_t kube_strpool_count(const struct kube_strpool *p)
{
	return p->count;
}
