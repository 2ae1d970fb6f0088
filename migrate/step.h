/*
 * step.h - one migration round: the world as the controller
 * (reconciler/migrations.c) or the simulator (sim/migrator.c) sees it, and
 * the move, at most one, that the rules allow now. The adapters build the
 * world and carry out the move; every rule of when to move is here.
 *
 * Rules, in this order; the first that holds ends the round:
 *
 *   1. nothing while a scale settles (world.scaling): the controller
 *      writes a scale (or migration) record and acts on it only once its
 *      cache shows it, so a move decided meanwhile would be decided on a
 *      cluster about to change; held MIG_HELD_SCALING;
 *   2. one move at a time in the cluster (world.moving: one is in
 *      flight): a move deletes a pod and waits for its replacement to be
 *      bound elsewhere, and the next is decided on the cluster as that
 *      one left it; held MIG_HELD_MOVING;
 *   3. quiet: no node is overloaded (mig_overloaded with opts k, on the
 *      snapshot as given) and there is nothing to make room for (no
 *      waiting job, the better-placement rule off, or no worker of a slow
 *      job: mig_class_slow of its class, migrate/progress.h); held
 *      MIG_HELD_QUIET without running the policy (whose answer it would
 *      be anyway: its overload moves need an overloaded node, its
 *      better-placement move a slow worker and a waiting job);
 *   4. otherwise migrate.h's policy (mig_decide_all), the waiting jobs
 *      given in FIFO order and looked at only as rule 3 says; the first
 *      decision it makes is the move (placement before overload), and
 *      the rest wait for the next round, decided on the cluster as this
 *      move leaves it; held MIG_HELD_NONE when it finds none.
 *
 * Pure and deterministic: nothing in the world is modified; now is passed
 * in. Errors: DRAKE_ENOMEM only (the policy's working copy).
 */
#ifndef DRAKE_MIGRATE_STEP_H
#define DRAKE_MIGRATE_STEP_H

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"
#include "gang/cluster.h"
#include "migrate/migrate.h"

/* Why a round made no move. */
enum mig_held {
	MIG_MOVED,        /* it did: out->move */
	MIG_HELD_SCALING, /* rule 1 */
	MIG_HELD_MOVING,  /* rule 2 */
	MIG_HELD_QUIET,   /* rule 3 */
	MIG_HELD_NONE,    /* rule 4: the policy found no move worth making */
};

/* Everything a round reads; the arrays are the caller's. */
struct mig_world {
	const struct drake_cluster *c; /* the snapshot */
	const struct mig_replica *r;   /* every bound, live replica of a running job */
	size_t nr;
	const struct mig_waiting *wait; /* jobs waiting for admission, oldest first */
	size_t nwait;
	bool moving;  /* a move is in flight */
	bool scaling; /* a scale (or migration) record has not settled yet */
};

struct mig_step_out {
	enum mig_held held;
	struct mig_decision move; /* when held == MIG_MOVED: replica indexes w->r */
};

/* "moved", "scaling", "moving", "quiet", "none". */
const char *mig_held_name(enum mig_held h);

/* One round at time now; o NULL means mig_defaults. */
drake_err mig_step(const struct mig_world *w, double now, const struct mig_opts *o,
                   struct mig_step_out *out) DRAKE_MUST_CHECK;

#endif
