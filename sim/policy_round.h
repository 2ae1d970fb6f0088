/*
 * policy_round.h - the simulator's side of gang/round.h, shared by the
 * policies that decide through drake_round(): drake (policy_drake.c) and
 * DRAGON's rules (policy_dragon.c), as `drake serve --policy drake|dragon`
 * does, and the oracle bound (policy_oracle.c), which only the simulator
 * can run. Nothing here decides.
 *
 * The round's inputs are what the controller would read from its caches,
 * in the simulator's terms: a waiting job's members all wait behind their
 * gates; a running job's PS and workers are bound where the sim put them,
 * each worker at its own index (sim_job.worker_index: a shrink leaves a
 * gap, as the controller's deleted pod does), the rest of its max workers
 * wait gated, and its drake.dev/scale record lists its member indexes, the
 * time of its latest change of size and the job it last gave workers to.
 * Progress comes from the learning curves when they are on. Pacing is off:
 * the sim has no kube-scheduler queue to pace. The round's actions are
 * applied through the sim's: removals first (an admission's plan assumes
 * them), then admissions, then growth, which takes the lowest gated index
 * as the round's GROW names it.
 *
 * Ownership: sim_round_once() frees everything it allocates.
 */
#ifndef DRAKE_SIM_POLICY_ROUND_H
#define DRAKE_SIM_POLICY_ROUND_H

#include "gang/round.h"
#include "sim/sim.h"

/* Seconds of work sim job id has left at the size its spec asks for (<= 0
 * unknown): what only the oracle knows (policy_oracle.c). */
typedef double (*sim_remaining_fn)(struct sim *s, int id);

/* One round on the sim's state with o, applied, each job's remaining_hint
 * from remaining (NULL: unknown, as on a cluster). *next: when the round
 * would decide differently (INFINITY: never); *dragon_last_action:
 * DRAGON's action timer after it (o's when the policy is drake's). Either
 * may be NULL. */
drake_err sim_round_once(struct sim *s, const struct drake_round_opts *o,
                         sim_remaining_fn remaining, double *next,
                         double *dragon_last_action) DRAKE_MUST_CHECK;

/* drake's decision (policy_drake.c): one round with the scale options
 * scale (its speed model the config's), the remaining work from remaining
 * (NULL: unknown), and a wake-up at the round's next time and at each
 * Pollux job's next report. */
drake_err sim_drake_decide(struct sim *s, const struct drake_scale_opts *scale,
                           sim_remaining_fn remaining) DRAKE_MUST_CHECK;

#endif
