/*
 * learn.h - the workload's typical task shapes, learnt from the pods a
 * long-running scheduler is asked to place (the extender's prioritize
 * verb), for the fragmentation measure (place/frag.h).
 *
 * The learner remembers the last `window` distinct pods it was shown, by
 * key (the pod's UID): a pod seen again (kube-scheduler retries a pod
 * that did not fit) is not counted twice while it is in the window, and
 * the oldest pod leaves the counts when a new one arrives in a full
 * window. So the shapes follow the workload as it changes, their number
 * and the memory they take are bounded, and the same sequence of pods
 * gives the same typical set: no clock, no randomness, no I/O.
 *
 * Keys are compared by a 64-bit FNV-1a hash of the string: two UIDs that
 * collide (about one chance in 2^64 per pair) count as one pod.
 *
 * Ownership: a learner owns its arrays and its struct place_dist;
 * place_learner_release frees them (safe on a zeroed or released learner).
 */
#ifndef DRAKE_PLACE_LEARN_H
#define DRAKE_PLACE_LEARN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "place/dist.h"
#include "place/place.h"

#define PLACE_LEARN_WINDOW     4096    /* pods remembered by default */
#define PLACE_LEARN_WINDOW_MAX 1048576 /* the most a window may hold */

struct place_learn_slot {
	uint64_t key;
	struct place_task t;
};

struct place_learner {
	size_t window;                 /* pods remembered */
	size_t head, n;                /* ring: the oldest at head, n in use */
	struct place_learn_slot *ring; /* window entries */
	uint64_t *set;                 /* open addressing, keys + 1 (0: empty) */
	size_t set_cap;                /* power of two, at least 2 x window */
	struct place_dist dist;        /* counts of the shapes in the ring */
	struct place_typical typical;  /* built from dist */
	uint64_t built;                /* dist.changes the typical set was built at */
	bool have_typical;
};

/* An empty learner remembering window pods (1..PLACE_LEARN_WINDOW_MAX);
 * DRAKE_EINVAL for a window out of range, DRAKE_ENOMEM, both filling msg
 * and leaving l released. */
drake_err place_learner_init(struct place_learner *l, size_t window, char *msg,
                             size_t mlen) DRAKE_MUST_CHECK;
void place_learner_release(struct place_learner *l);

/* 64-bit FNV-1a of key (the learner's key of a pod). */
uint64_t place_learn_key(const char *key);

/* Counts pod key with shape t, unless it is already in the window (then
 * *counted is false and nothing changes). A pod with an empty key takes
 * a place in the window but is never found there again: it is counted
 * each time. t must pass place_task_check. Out of
 * memory (the shape table) is DRAKE_ENOMEM with the window unchanged. */
drake_err place_learner_observe(struct place_learner *l, const char *key,
                                const struct place_task *t, bool *counted) DRAKE_MUST_CHECK;

/* The typical shapes of the pods in the window (PLACE_COVERAGE_PCT),
 * rebuilt only when the counts have moved since the last call. */
const struct place_typical *place_learner_typical(struct place_learner *l);

/* Pods in the window. */
static inline size_t place_learner_count(const struct place_learner *l)
{
	return l->n;
}

#endif
