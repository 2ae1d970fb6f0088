/*
 * wave_room.h - a wave admitted into room the same round frees waits for
 * that room before its pods are ungated.
 *
 * A round may give a starving job the workers it takes from running jobs
 * (a SHRINK, a PREEMPT, a stray RELEASE) and admit it onto their nodes at
 * once. kube-scheduler charges a deleted pod to its node until the pod is
 * gone, so a pod ungated before that fails NodeResourcesFit on its pinned
 * node and backs off (1 s, then 2 s ...), long after the room is free. The
 * waves.c loop keeps such a wave back, its pods gated, until every pod the
 * round deleted on the wave's nodes is gone, or WAVE_ROOM_WAIT_MS has
 * passed (a pod stuck terminating: the wave then goes as before and
 * kube-scheduler's backoff and drake's backstop take it from there).
 * Policy is untouched: the round decided the wave; this is when its
 * patches are sent.
 */
#ifndef DRAKE_RECONCILER_WAVE_ROOM_H
#define DRAKE_RECONCILER_WAVE_ROOM_H

#include <stdbool.h>
#include <stddef.h>

#include "kube/object.h"
#include "reconciler/admit.h"

struct kube_cache;

/* The longest a wave waits for the pods its round deleted (ms). */
#define WAVE_ROOM_WAIT_MS 5000

/* A pod a round deleted, as the cache had it when the delete was sent. */
struct room_pod {
	char ns[64], name[KUBE_NAME_MAX + 1], uid[64], node[KUBE_NAME_MAX + 1];
};

struct room_list {
	struct room_pod *v;
	size_t n, cap;
};

/* Appends the bound pod p (its namespace, name, uid and node); a pod on no
 * node holds no room and is not added. False only when out of memory. */
bool room_list_add(struct room_list *l, const struct kube_pod *p);
void room_list_release(struct room_list *l);

/* The pods of left on a node w plans a pod on, copied into *out (malloc'd,
 * NULL when none): how many. -1 when out of memory. */
long wave_room_waits(const struct admit_wave *w, const struct room_list *left,
                     struct room_pod **out);

/* True once none of waits[0..n) holds its node as kube-scheduler counts it:
 * gone from the cache, replaced by another pod of its name (another uid),
 * not bound there, or finished (Succeeded or Failed). */
bool wave_room_free(const struct kube_cache *pods, const struct room_pod *waits, size_t n);

#endif
