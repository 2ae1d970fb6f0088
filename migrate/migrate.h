/*
 * migrate.h - which replica moves where: node overload (one replica shed
 * per overloaded node) and explicit requests, under the safety rules every
 * migration keeps.
 *
 * Kubernetes has no live migration: a move deletes the replica's pod and
 * recreates it, with the same name, index and service, on another node.
 * The member is missing while it moves, so the gang rules count it out.
 *
 * Load. A node's load is the mean, over CPU, memory and (when the node has
 * any) GPUs, of requests used / allocatable, from the snapshot: requests,
 * as the scheduler charges them, not limits (the container-migration fork
 * summed limits, so a node of over-committed limits looked overloaded
 * whatever it ran). A dimension the node has none of is left out. When the
 * node's usage is measured (drake_node.usage: the metrics API), CPU and
 * memory count max(requests, measured): what is reserved cannot be given
 * to anyone else however idle it is, and what pods burst beyond their
 * requests is pressure the requests hide. GPUs count requests (they are
 * exclusive). Within one call, a replica moved in or out changes the
 * measure by its requests, as it changes the requests.
 *
 * Overload. Over the schedulable nodes, with mean M and population standard
 * deviation S of their loads (S^2 = sum (L_i - M)^2 / N: the fork wrote
 * `sum = dx*dx`, keeping one node's deviation), node i is overloaded when
 *
 *     L_i - M > k * S            (k = 1.0; strictly, so equal loads never are)
 *
 * and it is contended: it holds replicas of two jobs or more, or pods drake
 * does not move beside one job's. A node full of one job's replicas is
 * drake's packing, not a problem: requests never exceed allocatable, so a
 * full node runs each pod at its requested share; what a hot node can cost
 * is contention between jobs.
 *
 * Locality. A move is worth what the scaling step's speed model says
 * (gang/speed.h, the same model and parameters as gang/scale.h): the
 * moved replica's job J, with w workers of g GPUs over n nodes (PS, chief
 * and workers counted), over n' nodes after the move, saves
 *
 *     gain = E_J * (1 - T(w, n) / T(w, n')) - rescale_pause
 *
 * E_J its expected remaining time (drake_speed_remaining: from its
 * progress, else its age since `admitted`). The pause is the restart (the
 * job stalls while its replica is recreated). The model has no term for
 * contention (GPUs are exclusive; nothing slows a pod beside another), so
 * relieving a hot node is worth nothing in it, and a move that spreads a
 * job (n' > n) costs its locality penalty: such a move is never made.
 *
 * Each overloaded node, most loaded first (ties by node order), sheds at
 * most ONE worker (never a PS or chief: they move only on explicit
 * request): of the workers on it that the safety rules allow and of the
 * schedulable nodes other than the source with the free capacity for
 * them, the move of the largest gain, when that gain is > 0 (so only a
 * move that brings its job onto fewer nodes: a lonely worker onto its
 * PS's node or a node holding more of its job). Ties by the larger cut in
 * nodes, then the less loaded target, then pod name (then index in r),
 * then node order. A move never raises its job's node count, and each
 * lowers one, so no move is ever undone by another (no ping-pong).
 *
 * Better placement (SpeCon: slow-growing jobs yield to fast-growing ones).
 * Given the jobs waiting for admission in FIFO order, the first of them
 * (at most MIG_WAIT_LOOK looked at) that does not fit now (gang/planner.h
 * on the snapshot) is the one to make room for. A worker of a slow job
 * (mig_class_slow of its class: slowing or converged) that spans two nodes or
 * more may move onto another node its job already uses (so the slow job
 * never spreads: it loses its pause, no locality) when with the move that
 * waiting job fits. Of those moves, the one that leaves the waiting job's
 * plan on the fewest nodes wins, ties by the slow job's larger gain, then
 * pod name, then node order. At most one such move per call, made before
 * the overload moves.
 *
 * Decisions of one call are made one after another on a working copy of
 * the snapshot, so each sees the capacity, loads and placement the earlier
 * ones left; the overloaded nodes themselves are judged once, on the
 * snapshot as given.
 *
 * Safety, for every decision (mig_decide and mig_explicit alike):
 *   - cap: a replica that has moved `cap` times (3) moves no more. The count
 *     is the caller's, persisted on the TFJob; nothing here resets it, and
 *     no other input (a plan change, last_migrated) lifts it;
 *   - cool-down: none within `cooldown` (30 s) of its last move
 *     (last_migrated < 0: never moved);
 *   - tail: none once its job's progress is at or beyond 1 - tail (95%);
 *     progress < 0 (unknown) does not block;
 *   - gang minimum: a worker moves only if its role keeps its minimum while
 *     it is missing, role_live - 1 - (members of the same job and role
 *     already moving in this call) >= role_min;
 *   - target: never the source, never a node without room for its requests,
 *     never an unschedulable node.
 * A PS or chief moves only on explicit request, and then whatever its
 * role's minimum: the job runs without it while it moves (training stalls
 * until it is back), which the decision's why says; if the recreated
 * member does not come back, the gang backstop (gang/backstop.h) repairs
 * or rolls the job back within its bound.
 *
 * Pure and deterministic: the snapshot and r are not modified; now is
 * passed in.
 */
#ifndef DRAKE_MIGRATE_MIGRATE_H
#define DRAKE_MIGRATE_MIGRATE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"
#include "gang/cluster.h"
#include "gang/planner.h"
#include "gang/roles.h"
#include "gang/speed.h"
#include "migrate/progress.h"

#define MIG_WHY_MAX   200
#define MIG_WAIT_LOOK 4 /* waiting jobs the better-placement rule looks at */

enum mig_reason { MIG_OVERLOAD, MIG_EXPLICIT, MIG_PLACEMENT };

struct mig_replica {
	const char *job; /* "ns/name" */
	const char *pod;
	enum drake_role role; /* gang/roles.h */
	int node;             /* index into the snapshot; < 0 not on a node (never moved) */
	struct drake_res req; /* its requests */
	int migrations;       /* moves so far (persisted by the caller; nothing else resets it) */
	double last_migrated; /* seconds; < 0 never */
	double progress;      /* its job's mig_progress_fraction, < 0 unknown */
	int role_live, role_min; /* live members of its role in its job, and the role's minimum */
	double admitted;         /* its job's admission time, seconds */
	enum mig_class cls;      /* its job's progress class (migrate/progress.h) */
};

/* A job waiting for admission, as the planner sees it. */
struct mig_waiting {
	const char *job; /* "ns/name" */
	const struct drake_gang_req *req;
};

struct mig_opts {
	double k;        /* standard deviations above the mean that overload a node */
	double cooldown; /* seconds */
	int cap;         /* moves per replica */
	double tail;     /* fraction of a job's steps at its end with no moves */
	/* The scaling step's speed model (node_gpus is taken from the snapshot):
	 * the adapters pass the one their scale options hold. */
	struct drake_speed speed;
	bool better_placement; /* the better-placement rule is on */
};

struct mig_decision {
	int replica; /* index into r */
	int from, to;
	enum mig_reason reason;
	double gain; /* the moved job's modelled gain, seconds (0 for explicit moves) */
	char why[MIG_WHY_MAX];
};

/* Spread of the loads over the schedulable nodes. */
struct mig_spread {
	size_t n; /* schedulable nodes */
	double mean, std;
};

/* 1.0, 30 s, 3, 0.05, drake_speed_defaults(), better placement on. */
void mig_defaults(struct mig_opts *o);

/* EINVAL with why when o is out of range: k >= 0, cooldown >= 0, cap >= 0,
 * tail in [0, 1], the speed model's penalty and pause >= 0 (for flag
 * parsing; mig_decide takes o as given). */
drake_err mig_opts_check(const struct mig_opts *o, char *why, size_t len) DRAKE_MUST_CHECK;

/* A node's load in [0, ...), as above; 0 for an index out of range. */
double mig_node_load(const struct drake_cluster *c, size_t node);

/* Mean and population standard deviation of the schedulable nodes' loads
 * (all 0 without any). */
void mig_spread(const struct drake_cluster *c, struct mig_spread *s);

/* Node i is schedulable and its load exceeds s->mean by more than k * s->std. */
bool mig_overloaded(const struct drake_cluster *c, size_t node, const struct mig_spread *s,
                    double k);

/*
 * The decisions at time now, in the order made: at most one better-
 * placement move for the waiting jobs wait[0..nwait) (FIFO order; none
 * without), then at most one overload move per overloaded node. *out is
 * malloc'd (caller frees), may be NULL with *n 0. Replicas with a node out
 * of range are ignored. o NULL means the defaults. Fails only on
 * DRAKE_ENOMEM.
 */
drake_err mig_decide_all(const struct drake_cluster *c, const struct mig_replica *r, size_t nr,
                         const struct mig_waiting *wait, size_t nwait, double now,
                         const struct mig_opts *o, struct mig_decision **out,
                         size_t *n) DRAKE_MUST_CHECK;

/* mig_decide_all without waiting jobs: the overload moves alone. */
drake_err mig_decide(const struct drake_cluster *c, const struct mig_replica *r, size_t nr,
                     double now, const struct mig_opts *o, struct mig_decision **out,
                     size_t *n) DRAKE_MUST_CHECK;

/*
 * An explicit request to move r[i] (any role), optionally away from node
 * `away` (-1: from wherever it is) and onto node `onto` (-1: the
 * least-loaded schedulable node, other than its own, that has room for it;
 * ties by node order). The safety rules above apply, except that a PS or
 * chief may move, and only when pause_job says the request accepts that
 * its job stops training while it moves (a request that names a PS by
 * mistake is refused). No balance condition: the caller asked for this
 * move.
 * DRAKE_EINVAL for i, away or onto out of range; DRAKE_ESTATE with why when
 * refused, e.g. "the only node that fits it is its own node kwok-node-1",
 * "moved 3 times already (cap 3)", "in the last 5% of its steps (at 97%)",
 * "cooling down: moved 12 s ago (cool-down 30 s)", "kwok-node-2 has no room
 * for it: needs 8 GPUs, 4 free", "its job would have 0 of the 1 workers it
 * needs while it moves", "a-ps-0 is the ps of ns/a: its job stops training
 * while it moves, so only a request that says so moves it". On DRAKE_OK,
 * *out is the decision. o NULL means the defaults.
 */
drake_err mig_explicit(const struct drake_cluster *c, const struct mig_replica *r, size_t nr,
                       size_t i, int away, int onto, bool pause_job, double now,
                       const struct mig_opts *o, struct mig_decision *out, char *why,
                       size_t len) DRAKE_MUST_CHECK;

#endif
