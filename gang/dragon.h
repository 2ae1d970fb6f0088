/*
 * dragon.h - DRAGON's placement and scaling rules, ported faithfully from
 * NTHU-LSALAB/DRAGON @70d901b (scheduling.go: ScheduleJob, ScaleDown,
 * ScaleUp), so `drake sim --policy dragon` measures the original
 * and drake's improvements are argued against it.
 *
 * Faithful means: first fit over the nodes in the order given (DRAGON walks
 * a Go map, so callers pass a shuffled order for the random original or
 * name order for a reproducible one); the cross-node fallback that never
 * revisits a node; scale-down for the starving job's min workers only (its
 * PS is not counted), oldest running job first, workers off the PS's node
 * first, fit-tested before each removal; scale-up greedy in running order.
 * One departure, to avoid the original's crash: scale-up never takes a job
 * above max workers (the original recomputes the room per node from the old
 * plan, can overshoot, and then indexes past the service list).
 *
 * Pure. Plans and op arrays returned belong to the caller.
 */
#ifndef DRAKE_GANG_DRAGON_H
#define DRAKE_GANG_DRAGON_H

#include <stddef.h>

#include "common/err.h"
#include "gang/cluster.h"
#include "gang/elastic.h"
#include "gang/planner.h"

/*
 * ScheduleJob([PS x n_ps, Worker x want_workers]) over nodes in `order`
 * (n_order node indexes). Places what it can; DRAKE_OK when all PS and at
 * least min workers are placed, else DRAKE_ESTATE with the partial counts
 * in out (out's arrays are always allocated on OK/ESTATE and must be
 * released).
 */
drake_err drake_dragon_schedule(const struct drake_cluster *c, const int *order, size_t n_order,
                                const struct drake_gang_req *req,
                                struct drake_plan *out) DRAKE_MUST_CHECK;

/*
 * ScaleDown(hp = min_workers x worker request, no PS). jobs are in running
 * order (admission order). DRAKE_OK with the removals (maybe none, when it
 * already fits), or DRAKE_ESTATE and nothing.
 */
drake_err drake_dragon_scale_down(const struct drake_cluster *c, const int *order, size_t n_order,
                                  const struct drake_running_job *jobs, size_t n,
                                  const struct drake_res *worker, int min_workers,
                                  struct drake_scale_op **ops, size_t *n_ops) DRAKE_MUST_CHECK;

/* ScaleUp over running jobs in running order; ops may come back empty. */
drake_err drake_dragon_scale_up(const struct drake_cluster *c, const int *order, size_t n_order,
                                const struct drake_running_job *jobs, size_t n,
                                struct drake_scale_op **ops, size_t *n_ops) DRAKE_MUST_CHECK;

#endif
