/*
 * migrator.h - migrate/'s round (migrate/step.h) in the simulator's
 * migration seam (struct sim_migrator): after each placement decision the
 * sim's world goes in, as the controller (reconciler/migrations.c
 * rec_migrate_pass) builds its own, and the move that comes out is made.
 * The world:
 *
 *  - replicas: every running job's PS and workers (their per-slot move
 *    counts and times, the job's fraction of steps from its latest
 *    progress sample for the tail rule, -1 without curves, the gang
 *    minimum, its start as its admission, its progress class);
 *  - waiting: every waiting job, FIFO;
 *  - moving: a move is in flight. In the sim a move is instantaneous
 *    apart from its job's rescale pause, and it counts as in flight for
 *    that pause (the controller: until the replacement pod is bound); the
 *    migrator asks to be woken when it ends;
 *  - scaling: the placement policy scaled a running job since the
 *    previous round (the controller: a scale record has not settled); the
 *    migrator asks to look again one controller tick (1 s) later;
 *  - the sim's speed model, the one the scaling step runs.
 *
 * A move is sim_move_worker(): the worker's slot keeps its count and time
 * (moves[], moved_at[] in struct sim_job) for the cap and cool-down. A slot
 * removed by a shrink takes its count with it; a worker added later starts
 * at 0 (the controller counts per worker index, so a re-added index would
 * keep its count: a difference only after shrink-and-grow).
 *
 * The state is the caller's, one per run: sim_migrator_init() before
 * sim_run(); nothing is allocated beyond one round.
 */
#ifndef DRAKE_SIM_MIGRATOR_H
#define DRAKE_SIM_MIGRATOR_H

#include <stddef.h>

#include "migrate/migrate.h"
#include "sim/sim.h"

#define SIM_MIG_TICK 1.0 /* seconds: the controller's tick */

struct sim_mig_state {
	struct mig_opts opts;
	size_t scaled_seen; /* sim_scale_count() at the previous call */
	double busy_until;  /* a move is in flight until then */
	size_t moves;
	size_t skipped_scaled, skipped_busy; /* decisions with no look, and why */
};

/* Fills m to run migrate/'s policy with o (NULL: its defaults) on st. */
void sim_migrator_init(struct sim_migrator *m, struct sim_mig_state *st, const struct mig_opts *o);

#endif
