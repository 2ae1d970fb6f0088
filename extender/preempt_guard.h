/*
 * preempt_guard.h - the preempt verb's check (internal to extender/): may
 * kube-scheduler evict these victims from a node?
 *
 * For every running TFJob gang a victim belongs to, the guard gathers from
 * the pod cache the job's live members per role (bound to a node, not being
 * deleted, not finished, and the member they claim to be), which of them
 * are victims, and the job's minimum, and asks the rule in gang/preempt.h:
 * never a live PS or chief, workers never below their minimum (a job
 * admitted by an older drake: its head count). A node whose victims any job
 * cannot lose is refused as a whole; the preempt verb drops it from the
 * answer.
 *
 * Ownership: borrows everything, keeps nothing.
 */
#ifndef DRAKE_EXTENDER_PREEMPT_GUARD_H
#define DRAKE_EXTENDER_PREEMPT_GUARD_H

#include <stdbool.h>
#include <stddef.h>

struct kube_cache;

/* True when the victims (UIDs) on node may all be evicted; false with why
 * naming the job and what it would lose. Without a pod cache (pods NULL)
 * drake knows no gang, and allows. */
bool preempt_guard_allows(const struct kube_cache *pods, const char *node, char *const *uids,
                          size_t n_uids, char *why, size_t whylen);

#endif
