/*
 * pack.h - which waiting jobs fill the free GPUs best: the bounded
 * subset-sum behind drake's default queue order (gang/scale.h,
 * DRAKE_QUEUE_PACK). It needs no run times: only the GPUs each job asks
 * for and the GPUs free.
 *
 * Of the first DRAKE_PACK_WINDOW jobs in the queue's order (the rest are
 * never chosen), the chosen set is the one whose GPUs sum to the most at
 * or below the room; among sets of that sum, the one with most jobs
 * (narrower jobs, so more of them start now); among those, the one whose
 * first job not in both comes earliest in the queue's order (FIFO). A job
 * asking no GPUs is always chosen. When every job of the window fits, all
 * are chosen.
 *
 * Why the step starts the chosen set first: a queue of rigid gangs that
 * starts in waves (gang53: every job 30 s, one 8-GPU pod per node) keeps
 * its shortest makespan only when each wave fills the cluster. FIFO fills
 * a wave with whatever comes next and leaves the narrow jobs to wait
 * behind wide ones; narrowest first leaves the widest job to a wave of
 * its own at the end, half-empty waves before it. The fullest set with
 * most jobs starts many narrow jobs in each wave and keeps every wave
 * full while a set that fills it exists, so the widest job runs alone
 * only when nothing is left to run beside it. The choice is greedy, one
 * wave at a time: on another trace an early wave may take jobs a later
 * one needed to fill, and that wave is then not full. On gang53, whose
 * 53 jobs all fit the window, every wave fills (gang/pack_test.c); with a
 * window of 20 the last waves would not (300 s instead of 270 s).
 *
 * Cost: O(n x min(room, sum of the window's GPUs)) time and
 * O(min(room, sum)) memory. Pure, deterministic, no I/O.
 */
#ifndef DRAKE_GANG_PACK_H
#define DRAKE_GANG_PACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

#define DRAKE_PACK_WINDOW 64

/*
 * gpus[0..n): the GPUs each job asks for, in the queue's order (negative
 * counts as 0). Sets chosen[0..n) (the caller's) to the set described
 * above; jobs past DRAKE_PACK_WINDOW get false. Fails only on DRAKE_ENOMEM
 * (chosen[] then all false).
 */
drake_err drake_pack_choose(const int64_t *gpus, size_t n, int64_t room,
                            bool *chosen) DRAKE_MUST_CHECK;

#endif
