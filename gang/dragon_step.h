/*
 * dragon_step.h - one run of DRAGON's SchedulingAlgorithm, as DRAGON's
 * controller runs it on every reconcile (NTHU-LSALAB/DRAGON @70d901b,
 * scheduling.go), over drake's snapshot, in the shape of drake's own
 * decision step (gang/scale.h), so the simulator and the controller can run
 * either by the same code.
 *
 *   Phase 1: when the head of the queue has waited starve_after or longer,
 *            ScaleDown for its minimum workers (its PS not counted); the
 *            action timer restarts even when ScaleDown fails.
 *   Phase 2: only when there was no starving head or ScaleDown succeeded:
 *            admit the first job in FIFO order whose PS and minimum
 *            workers fit by ScheduleJob, asking for all its workers, on
 *            the resources as they were before this run's ScaleDown; at
 *            most one admission per run.
 *   Phase 3: when idle_after has passed since the last action, ScaleUp
 *            over the running jobs in running order. (A run that acted in
 *            phase 1 or 2 restarted the timer, so with idle_after > 0
 *            phase 3 always sees the cluster as given.)
 *
 * The placement and scaling primitives are gang/dragon.h's; node order is
 * the caller's (DRAGON walks a Go map: a shuffled order for the original,
 * name order for a reproducible one).
 *
 * Pure: the snapshot is not modified, now is passed in, the action timer is
 * the caller's state.
 */
#ifndef DRAKE_GANG_DRAGON_STEP_H
#define DRAKE_GANG_DRAGON_STEP_H

#include <stddef.h>

#include "common/err.h"
#include "gang/admission.h"
#include "gang/cluster.h"
#include "gang/elastic.h"
#include "gang/scale.h"

struct drake_dragon_opts {
	double starve_after; /* seconds the head waits before ScaleDown (DRAGON: 30) */
	double idle_after;   /* seconds without an action before ScaleUp (DRAGON: 60) */
	/* This run only: pods a change removed are still leaving their nodes;
	 * a starving head waits for them (no ScaleDown, no admission, the
	 * action timer untouched). */
	bool scale_down_waits;
};

/* DRAGON's action timer: when a run last acted (or tried ScaleDown). */
struct drake_dragon_state {
	double last_action;
};

/*
 * One run at now over the snapshot c, the node order order[0..n_order),
 * the waiting jobs w[0..nw) in FIFO order and the running jobs r[0..nr) in
 * running order; those ending (a member has Succeeded: DRAGON's job has
 * left its running list) neither give nor grow. out->act: SHRINK actions
 * (job, slot, node, for_job 0: the head) from ScaleDown; at most one ADMIT,
 * whose entry is STARTED with its plan (the caller releases plans with
 * drake_admission_release); GROW actions (job, node) from ScaleUp. Entries
 * not admitted are left NOT_TRIED, or WAITING with why when phase 2 tried
 * them. st->last_action is updated. out->next is the first time a run
 * would decide otherwise with no event between: when the head starts to
 * starve, or when the action timer lets ScaleUp run (with running jobs not
 * ending); INFINITY when neither lies ahead (a starving head is tried at
 * every run, and DRAGON runs on events and at its informer's resync: the
 * caller's business). Fails only on DRAKE_ENOMEM.
 */
drake_err drake_dragon_step(const struct drake_cluster *c, const int *order, size_t n_order,
                            struct drake_admission_entry *w, size_t nw,
                            const struct drake_running_job *r, size_t nr, double now,
                            const struct drake_dragon_opts *o, struct drake_dragon_state *st,
                            struct drake_step *out) DRAKE_MUST_CHECK;

#endif
