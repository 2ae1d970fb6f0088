/*
 * cache.c - chained hash tables over one set of entries: each entry sits in
 * the key table and, when it has them, in the owner and node tables. The
 * tables share a bucket count and grow together.
 *
 * Ownership: entries own what their codec stored; their key, owner, node
 * and resourceVersion strings point into it. Callbacks must not modify the
 * cache they walk.
 */
#include "kube/cache.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/object.h"

struct kube_cache_entry {
	const char *ns, *name, *owner, *node, *rv; /* borrowed from obj */
	void *obj;
	unsigned gen;
	struct kube_cache_entry *next_key, *next_owner, *next_node;
};

/* ---- the jansson codec ---- */

static drake_err json_decode(struct json_t *obj, struct kube_strpool *pool, void **out, char *msg,
                             size_t msglen)
{
	*out = kube_obj_ref(obj);
	return DRAKE_OK;
}

static void json_free(void *stored, struct kube_strpool *pool)
{
	kube_obj_unref(stored);
}

static drake_err json_meta(const void *stored, struct kube_meta *m)
{
	return kube_obj_meta(stored, m);
}

const struct kube_cache_codec kube_json_codec = {"json", json_decode, json_free, json_meta};

/* ---- tables ---- */

static uint64_t hash_more(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static size_t hash(const char *s, size_t n)
{
	return (size_t)(hash_more(1469598103934665603ULL, s) % n);
}

/* The hash of "ns/name", without building it. */
static size_t hash_key(const char *ns, const char *name, size_t n)
{
	uint64_t h = hash_more(1469598103934665603ULL, ns);
	h = (h ^ (unsigned char)'/') * 1099511628211ULL;
	return (size_t)(hash_more(h, name) % n);
}

void kube_cache_init_codec(struct kube_cache *c, const struct kube_cache_codec *codec)
{
	memset(c, 0, sizeof(*c));
	c->max = KUBE_CACHE_MAX_OBJECTS;
	c->codec = codec ? codec : &kube_json_codec;
	kube_strpool_init(&c->pool);
}

void kube_cache_init(struct kube_cache *c)
{
	kube_cache_init_codec(c, &kube_json_codec);
}

void kube_cache_drop(struct kube_cache *c, void *stored)
{
	if (stored)
		c->codec->free(stored, &c->pool);
}

void kube_cache_release(struct kube_cache *c)
{
	if (!c || !c->codec)
		return;
	for (size_t b = 0; b < c->nbuckets; b++) {
		struct kube_cache_entry *e = c->by_key[b];
		while (e) {
			struct kube_cache_entry *next = e->next_key;
			kube_cache_drop(c, e->obj);
			free(e);
			e = next;
		}
	}
	free(c->by_key);
	free(c->by_owner);
	free(c->by_node);
	kube_strpool_release(&c->pool);
	size_t max = c->max;
	const struct kube_cache_codec *codec = c->codec;
	memset(c, 0, sizeof(*c));
	c->max = max;
	c->codec = codec;
}

static void link_entry(struct kube_cache *c, struct kube_cache_entry *e)
{
	size_t b = hash_key(e->ns, e->name, c->nbuckets);
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
	unlink_from(&c->by_key[hash_key(e->ns, e->name, c->nbuckets)], e,
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

static struct kube_cache_entry *find(const struct kube_cache *c, const char *ns, const char *name)
{
	if (!c->nbuckets)
		return NULL;
	ns = ns ? ns : "";
	for (struct kube_cache_entry *e = c->by_key[hash_key(ns, name, c->nbuckets)]; e;
	     e = e->next_key)
		if (!strcmp(e->name, name) && !strcmp(e->ns, ns))
			return e;
	return NULL;
}

/* Points e's strings into what it stores. */
static drake_err entry_meta(const struct kube_cache *c, struct kube_cache_entry *e)
{
	struct kube_meta m;
	if (c->codec->meta(e->obj, &m) != DRAKE_OK)
		return DRAKE_EINVAL;
	e->ns = m.ns;
	e->name = m.name;
	e->owner = m.owner_uid;
	e->node = m.node_name;
	e->rv = m.rv;
	return DRAKE_OK;
}

drake_err kube_cache_decode(struct kube_cache *c, struct json_t *obj, void **out, char *msg,
                            size_t msglen)
{
	*out = NULL;
	return c->codec->decode(obj, &c->pool, out, msg, msglen);
}

drake_err kube_cache_put(struct kube_cache *c, struct json_t *obj, unsigned gen, void **stored,
                         void **old, bool *changed)
{
	*old = NULL;
	*changed = true;
	if (stored)
		*stored = NULL;
	struct kube_meta m;
	if (kube_obj_meta(obj, &m) != DRAKE_OK)
		return DRAKE_EINVAL;
	if (strlen(m.ns) > KUBE_NAME_MAX || strlen(m.name) > KUBE_NAME_MAX)
		return DRAKE_ELIMIT;
	struct kube_cache_entry *prev = find(c, m.ns, m.name);
	if (prev && *m.rv && !strcmp(prev->rv, m.rv)) {
		/* the same version: what is stored is what obj would decode to */
		prev->gen = gen;
		*changed = false;
		if (stored)
			*stored = prev->obj;
		return DRAKE_OK;
	}
	if (!prev && c->count >= c->max)
		return DRAKE_ELIMIT;
	struct kube_cache_entry *e = calloc(1, sizeof(*e));
	if (!e)
		return DRAKE_ENOMEM;
	char msg[160];
	drake_err err = c->codec->decode(obj, &c->pool, &e->obj, msg, sizeof(msg));
	if (err == DRAKE_OK && entry_meta(c, e) != DRAKE_OK)
		err = DRAKE_EINVAL;
	if (err == DRAKE_OK && !prev && c->count + 1 > c->nbuckets && grow(c) != DRAKE_OK)
		err = DRAKE_ENOMEM;
	if (err != DRAKE_OK) {
		kube_cache_drop(c, e->obj);
		free(e);
		return err;
	}
	if (prev) {
		unlink_entry(c, prev);
		*old = prev->obj;
		free(prev);
		c->count--;
	}
	e->gen = gen;
	link_entry(c, e);
	c->count++;
	if (stored)
		*stored = e->obj;
	return DRAKE_OK;
}

void *kube_cache_remove(struct kube_cache *c, const char *ns, const char *name)
{
	struct kube_cache_entry *e = find(c, ns, name);
	if (!e)
		return NULL;
	unlink_entry(c, e);
	void *o = e->obj;
	free(e);
	c->count--;
	return o;
}

void *kube_cache_lookup(const struct kube_cache *c, const char *ns, const char *name)
{
	struct kube_cache_entry *e = find(c, ns, name);
	return e ? e->obj : NULL;
}

size_t kube_cache_count(const struct kube_cache *c)
{
	return c->count;
}

void kube_cache_walk(const struct kube_cache *c, kube_stored_cb cb, void *arg)
{
	for (size_t b = 0; b < c->nbuckets; b++)
		for (struct kube_cache_entry *e = c->by_key[b]; e; e = e->next_key)
			if (!cb(e->obj, arg))
				return;
}

void kube_cache_walk_owner(const struct kube_cache *c, const char *uid, kube_stored_cb cb,
                           void *arg)
{
	if (!c->nbuckets || !uid)
		return;
	for (struct kube_cache_entry *e = c->by_owner[hash(uid, c->nbuckets)]; e; e = e->next_owner)
		if (!strcmp(e->owner, uid) && !cb(e->obj, arg))
			return;
}

void kube_cache_walk_node(const struct kube_cache *c, const char *node, kube_stored_cb cb,
                          void *arg)
{
	if (!c->nbuckets || !node)
		return;
	for (struct kube_cache_entry *e = c->by_node[hash(node, c->nbuckets)]; e; e = e->next_node)
		if (!strcmp(e->node, node) && !cb(e->obj, arg))
			return;
}

/* ---- jansson caches ---- */

struct json_visit {
	kube_visit_cb cb;
	void *arg;
};

static bool visit_json(void *stored, void *arg)
{
	const struct json_visit *v = arg;
	return v->cb(stored, v->arg);
}

static bool is_json(const struct kube_cache *c)
{
	return c->codec == &kube_json_codec;
}

struct json_t *kube_cache_get(const struct kube_cache *c, const char *ns, const char *name)
{
	return is_json(c) ? kube_cache_lookup(c, ns, name) : NULL;
}

void kube_cache_foreach(const struct kube_cache *c, kube_visit_cb cb, void *arg)
{
	struct json_visit v = {cb, arg};
	if (is_json(c))
		kube_cache_walk(c, visit_json, &v);
}

void kube_cache_by_owner(const struct kube_cache *c, const char *uid, kube_visit_cb cb, void *arg)
{
	struct json_visit v = {cb, arg};
	if (is_json(c))
		kube_cache_walk_owner(c, uid, visit_json, &v);
}

void kube_cache_by_node(const struct kube_cache *c, const char *node, kube_visit_cb cb, void *arg)
{
	struct json_visit v = {cb, arg};
	if (is_json(c))
		kube_cache_walk_node(c, node, visit_json, &v);
}

void kube_cache_sweep(struct kube_cache *c, unsigned gen, kube_stored_cb cb, void *arg)
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
				kube_cache_drop(c, e->obj);
				free(e);
			}
			e = next;
		}
	}
}
