/*
 * learn.c - typical task shapes from the last pods seen (learn.h): a ring
 * of the window's pods, a hash set of their keys (linear probing, deletion
 * by backward shift, so no tombstones pile up), and the shape counts.
 */
#include "place/learn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t place_learn_key(const char *key)
{
	uint64_t h = UINT64_C(14695981039346656037);
	for (const unsigned char *p = (const unsigned char *)key; p && *p; p++) {
		h ^= *p;
		h *= UINT64_C(1099511628211);
	}
	return h;
}

/* 0 marks an empty cell of the set, so a hash of 0 is kept as 1. */
static uint64_t stored(uint64_t key)
{
	return key ? key : 1;
}

static size_t home(const struct place_learner *l, uint64_t k)
{
	return (size_t)(k ^ (k >> 29)) & (l->set_cap - 1);
}

static bool set_has(const struct place_learner *l, uint64_t k)
{
	for (size_t i = home(l, k);; i = (i + 1) & (l->set_cap - 1)) {
		if (!l->set[i])
			return false;
		if (l->set[i] == k)
			return true;
	}
}

static void set_add(struct place_learner *l, uint64_t k)
{
	size_t i = home(l, k);
	while (l->set[i])
		i = (i + 1) & (l->set_cap - 1);
	l->set[i] = k;
}

static void set_del(struct place_learner *l, uint64_t k)
{
	size_t mask = l->set_cap - 1, i = home(l, k);
	while (l->set[i] && l->set[i] != k)
		i = (i + 1) & mask;
	if (!l->set[i])
		return;
	/* backward shift: pull later entries of the cluster into the hole
	 * unless their home lies cyclically in (hole, their cell] */
	for (size_t j = (i + 1) & mask; l->set[j]; j = (j + 1) & mask) {
		size_t h = home(l, l->set[j]);
		bool stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);
		if (stays)
			continue;
		l->set[i] = l->set[j];
		i = j;
	}
	l->set[i] = 0;
}

drake_err place_learner_init(struct place_learner *l, size_t window, char *msg, size_t mlen)
{
	memset(l, 0, sizeof(*l));
	if (window < 1 || window > PLACE_LEARN_WINDOW_MAX) {
		snprintf(msg, mlen, "the learner's window must be 1..%d pods, not %zu",
		         PLACE_LEARN_WINDOW_MAX, window);
		return DRAKE_EINVAL;
	}
	size_t cap = 2;
	while (cap < 2 * window)
		cap *= 2;
	l->ring = calloc(window, sizeof(*l->ring));
	l->set = calloc(cap, sizeof(*l->set));
	if (!l->ring || !l->set) {
		place_learner_release(l);
		snprintf(msg, mlen, "out of memory for a window of %zu pods", window);
		return DRAKE_ENOMEM;
	}
	l->window = window;
	l->set_cap = cap;
	place_dist_init(&l->dist);
	return DRAKE_OK;
}

void place_learner_release(struct place_learner *l)
{
	if (!l)
		return;
	free(l->ring);
	free(l->set);
	place_dist_release(&l->dist);
	memset(l, 0, sizeof(*l));
}

drake_err place_learner_observe(struct place_learner *l, const char *key,
                                const struct place_task *t, bool *counted)
{
	*counted = false;
	bool named = key && *key;
	uint64_t k = named ? stored(place_learn_key(key)) : 0;
	if (named && set_has(l, k))
		return DRAKE_OK;
	/* count the new pod first: if that fails, nothing has changed */
	drake_err e = place_dist_observe(&l->dist, t, 1);
	if (e)
		return e;
	if (l->n == l->window) { /* the oldest leaves */
		struct place_learn_slot *old = &l->ring[l->head];
		if (place_dist_observe(&l->dist, &old->t, -1) != DRAKE_OK)
			return DRAKE_ENOMEM; /* a take-back never allocates */
		if (old->key)
			set_del(l, old->key);
		l->head = (l->head + 1) % l->window;
		l->n--;
	}
	l->ring[(l->head + l->n) % l->window] = (struct place_learn_slot){k, *t};
	l->n++;
	if (named)
		set_add(l, k);
	*counted = true;
	return DRAKE_OK;
}

const struct place_typical *place_learner_typical(struct place_learner *l)
{
	if (!l->have_typical || l->built != l->dist.changes) {
		place_typical_build(&l->dist, PLACE_COVERAGE_PCT, &l->typical);
		l->built = l->dist.changes;
		l->have_typical = true;
	}
	return &l->typical;
}
