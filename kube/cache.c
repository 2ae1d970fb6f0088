/*
 * cache.c - chained hash tables over one set of entries: each entry sits in
 * the key table and, when it has them, in the owner and node tables. The
 * tables share a bucket count and grow together.
 *
 * Ownership: entries own copies of their key, owner and node strings and one
 * reference to the object. Callbacks must not modify the cache they walk.
 */
#include "kube/cache.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/object.h"

struct kube_cache_entry {
	char *key, *owner, *node, *rv;
	struct json_t *obj;
	unsigned gen;
	struct kube_cache_entry *next_key, *next_owner, *next_node;
};

static size_t hash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return (size_t)(h % n);
}

void kube_cache_init(struct kube_cache *c)
{
	memset(c, 0, sizeof(*c));
	c->max = KUBE_CACHE_MAX_OBJECTS;
}

static void entry_free(struct kube_cache_entry *e)
{
	free(e->key);
	free(e->owner);
	free(e->node);
	free(e->rv);
	free(e);
}

void kube_cache_release(struct kube_cache *c)
{
	if (!c)
		return;
	for (size_t b = 0; b < c->nbuckets; b++) {
		struct kube_cache_entry *e = c->by_key[b];
		while (e) {
			struct kube_cache_entry *next = e->next_key;
			kube_obj_unref(e->obj);
			entry_free(e);
			e = next;
		}
	}
	free(c->by_key);
	free(c->by_owner);
	free(c->by_node);
	size_t max = c->max;
	memset(c, 0, sizeof(*c));
	c->max = max;
}

static void link_entry(struct kube_cache *c, struct kube_cache_entry *e)
{
	size_t b = hash(e->key, c->nbuckets);
	e->next_key = c->by_key[b];
	c->by_key[b] = e;
	if (e->owner) {
		b = hash(e->owner, c->nbuckets);
		e->next_owner = c->by_owner[b];
		c->by_owner[b] = e;
	}
	if (e->node) {
		b = hash(e->node, c->nbuckets);
		e->next_node = c->by_node[b];
		c->by_node[b] = e;
	}
}

/* Unlinks e from the list starting at *head threaded through field off. */
static void unlink_from(struct kube_cache_entry **head, struct kube_cache_entry *e, size_t off)
{
	for (struct kube_cache_entry **pp = head; *pp;
	     pp = (struct kube_cache_entry **)((char *)*pp + off)) {
		if (*pp == e) {
			*pp = *(struct kube_cache_entry **)((char *)e + off);
			return;
		}
	}
}

static void unlink_entry(struct kube_cache *c, struct kube_cache_entry *e)
{
	unlink_from(&c->by_key[hash(e->key, c->nbuckets)], e,
	            offsetof(struct kube_cache_entry, next_key));
	if (e->owner)
		unlink_from(&c->by_owner[hash(e->owner, c->nbuckets)], e,
		            offsetof(struct kube_cache_entry, next_owner));
	if (e->node)
		unlink_from(&c->by_node[hash(e->node, c->nbuckets)], e,
		            offsetof(struct kube_cache_entry, next_node));
}

static drake_err grow(struct kube_cache *c)
{
	size_t n = c->nbuckets ? c->nbuckets * 2 : 64;
	struct kube_cache_entry **k = calloc(n, sizeof(*k)), **o = calloc(n, sizeof(*o)),
	                        **d = calloc(n, sizeof(*d));
	if (!k || !o || !d) {
		free(k);
		free(o);
		free(d);
		return DRAKE_ENOMEM;
	}
	struct kube_cache_entry *all = NULL;
	for (size_t b = 0; b < c->nbuckets; b++) {
		struct kube_cache_entry *e = c->by_key[b];
		while (e) {
			struct kube_cache_entry *next = e->next_key;
			e->next_key = all;
			all = e;
			e = next;
		}
	}
	free(c->by_key);
	free(c->by_owner);
	free(c->by_node);
	c->by_key = k;
	c->by_owner = o;
	c->by_node = d;
	c->nbuckets = n;
	while (all) {
		struct kube_cache_entry *next = all->next_key;
		all->next_owner = all->next_node = NULL;
		link_entry(c, all);
		all = next;
	}
	return DRAKE_OK;
}

static struct kube_cache_entry *find(const struct kube_cache *c, const char *key)
{
	if (!c->nbuckets)
		return NULL;
	for (struct kube_cache_entry *e = c->by_key[hash(key, c->nbuckets)]; e; e = e->next_key)
		if (!strcmp(e->key, key))
			return e;
	return NULL;
}

static void make_key(char *buf, size_t len, const char *ns, const char *name)
{
	snprintf(buf, len, "%s/%s", ns ? ns : "", name);
}

static char *dup_or_null(const char *s, bool *oom)
{
	if (!s)
		return NULL;
	char *d = strdup(s);
	if (!d)
		*oom = true;
	return d;
}

drake_err kube_cache_put(struct kube_cache *c, struct json_t *obj, unsigned gen,
                         struct json_t **old, bool *changed)
{
	*old = NULL;
	*changed = true;
	struct kube_meta m;
	if (kube_obj_meta(obj, &m) != DRAKE_OK)
		return DRAKE_EINVAL;
	char key[2 * KUBE_NAME_MAX + 4];
	if (strlen(m.ns) > KUBE_NAME_MAX || strlen(m.name) > KUBE_NAME_MAX)
		return DRAKE_ELIMIT;
	make_key(key, sizeof(key), m.ns, m.name);
	bool oom = false;
	struct kube_cache_entry *e = calloc(1, sizeof(*e));
	if (!e)
		return DRAKE_ENOMEM;
	e->key = dup_or_null(key, &oom);
	e->owner = dup_or_null(m.owner_uid, &oom);
	e->node = dup_or_null(m.node_name, &oom);
	e->rv = dup_or_null(m.rv, &oom);
	if (oom) {
		entry_free(e);
		return DRAKE_ENOMEM;
	}
	struct kube_cache_entry *prev = find(c, key);
	if (!prev && c->count >= c->max) {
		entry_free(e);
		return DRAKE_ELIMIT;
	}
	if (!prev && c->count + 1 > c->nbuckets && grow(c) != DRAKE_OK) {
		entry_free(e);
		return DRAKE_ENOMEM;
	}
	if (prev) {
		*changed = strcmp(prev->rv, e->rv) != 0 || !*e->rv;
		unlink_entry(c, prev);
		*old = prev->obj;
		entry_free(prev);
		c->count--;
	}
	e->obj = kube_obj_ref(obj);
	e->gen = gen;
	link_entry(c, e);
	c->count++;
	return DRAKE_OK;
}

struct json_t *kube_cache_remove(struct kube_cache *c, const char *ns, const char *name)
{
	char key[2 * KUBE_NAME_MAX + 4];
	make_key(key, sizeof(key), ns, name);
	struct kube_cache_entry *e = find(c, key);
	if (!e)
		return NULL;
	unlink_entry(c, e);
	struct json_t *o = e->obj;
	entry_free(e);
	c->count--;
	return o;
}

struct json_t *kube_cache_get(const struct kube_cache *c, const char *ns, const char *name)
{
	char key[2 * KUBE_NAME_MAX + 4];
	make_key(key, sizeof(key), ns, name);
	struct kube_cache_entry *e = find(c, key);
	return e ? e->obj : NULL;
}

size_t kube_cache_count(const struct kube_cache *c)
{
	return c->count;
}

void kube_cache_foreach(const struct kube_cache *c, kube_visit_cb cb, void *arg)
{
	for (size_t b = 0; b < c->nbuckets; b++)
		for (struct kube_cache_entry *e = c->by_key[b]; e; e = e->next_key)
			if (!cb(e->obj, arg))
				return;
}

void kube_cache_by_owner(const struct kube_cache *c, const char *uid, kube_visit_cb cb, void *arg)
{
	if (!c->nbuckets || !uid)
		return;
	for (struct kube_cache_entry *e = c->by_owner[hash(uid, c->nbuckets)]; e; e = e->next_owner)
		if (!strcmp(e->owner, uid) && !cb(e->obj, arg))
			return;
}

void kube_cache_by_node(const struct kube_cache *c, const char *node, kube_visit_cb cb, void *arg)
{
	if (!c->nbuckets || !node)
		return;
	for (struct kube_cache_entry *e = c->by_node[hash(node, c->nbuckets)]; e; e = e->next_node)
		if (!strcmp(e->node, node) && !cb(e->obj, arg))
			return;
}

void kube_cache_sweep(struct kube_cache *c, unsigned gen, kube_visit_cb cb, void *arg)
{
	for (size_t b = 0; b < c->nbuckets; b++) {
		struct kube_cache_entry *e = c->by_key[b];
		while (e) {
			struct kube_cache_entry *next = e->next_key;
			if (e->gen != gen) {
				unlink_entry(c, e);
				c->count--;
				if (cb)
					cb(e->obj, arg);
				kube_obj_unref(e->obj);
				entry_free(e);
			}
			e = next;
		}
	}
}
