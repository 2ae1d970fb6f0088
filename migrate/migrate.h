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
 * whatever it ran). A dimension the node has none of is left out.
 *
 * Overload. Over the schedulable nodes, with mean M and population standard
 * deviation S of their loads (S^2 = sum (L_i - M)^2 / N: the fork wrote
 * `sum = dx*dx`, keeping one node's deviation), node i is overloaded when
 *
 *     L_i - M > k * S            (k = 1.0; strictly, so equal loads never are)
 *
 * Each overloaded node, most loaded first (ties by node order), sheds at
 * most ONE worker (never a PS or chief: they move only on explicit
 * request). For each worker on it that the safety rules allow, its target
 * is the least-loaded schedulable node (ties by node order) that is not the
 * source, has the free capacity for its requests, and whose load after the
 * move is at most the source's load after the move (so the move lowers the
 * higher of the two and never turns the target into a new hot spot, and a
 * move back could never qualify: no ping-pong). Of those moves, the one
 * that leaves the smallest spread S wins, ties by pod name (then by its
 * index in r); a move must lower S or none is made. Decisions of one call
 * are made one after another on a working copy of the snapshot, so each
 * sees the capacity and loads the earlier ones left; the overloaded nodes
 * themselves are judged once, on the snapshot as given.
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
#include "gang/roles.h"

#define MIG_WHY_MAX 200

enum mig_reason { MIG_OVERLOAD, MIG_EXPLICIT };

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
};

struct mig_opts {
	double k;        /* standard deviations above the mean that overload a node */
	double cooldown; /* seconds */
	int cap;         /* moves per replica */
	double tail;     /* fraction of a job's steps at its end with no moves */
};

struct mig_decision {
	int replica; /* index into r */
	int from, to;
	enum mig_reason reason;
	char why[MIG_WHY_MAX];
};

/* Spread of the loads over the schedulable nodes. */
struct mig_spread {
	size_t n; /* schedulable nodes */
	double mean, std;
};

/* 1.0, 30 s, 3, 0.05. */
void mig_defaults(struct mig_opts *o);

/* EINVAL with why when o is out of range: k >= 0, cooldown >= 0, cap >= 0,
 * tail in [0, 1] (for flag parsing; mig_decide takes o as given). */
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
 * The overload decisions at time now, at most one per overloaded node, in
 * the order made. *out is malloc'd (caller frees), may be NULL with *n 0.
 * Replicas with a node out of range are ignored. o NULL means the
 * defaults. Fails only on DRAKE_ENOMEM.
 */
drake_err mig_decide(const struct drake_cluster *c, const struct mig_replica *r, size_t nr,
                     double now, const struct mig_opts *o, struct mig_decision **out,
                     size_t *n) DRAKE_MUST_CHECK;

/*
 * An explicit request to move r[i] (any role), optionally away from node
 * `away` (-1: from wherever it is) and onto node `onto` (-1: the
 * least-loaded schedulable node, other than its own, that has room for it;
 * ties by node order). The safety rules above apply, except that a PS or
 * chief may move. No balance condition: the caller asked for this move.
 * DRAKE_EINVAL for i, away or onto out of range; DRAKE_ESTATE with why when
 * refused, e.g. "the only node that fits it is its own node kwok-node-1",
 * "moved 3 times already (cap 3)", "in the last 5% of its steps (at 97%)",
 * "cooling down: moved 12 s ago (cool-down 30 s)", "kwok-node-2 has no room
 * for it: needs 8 GPUs, 4 free", "its job would have 0 of the 1 workers it
 * needs while it moves". On DRAKE_OK, *out is the decision. o NULL means
 * the defaults.
 */
drake_err mig_explicit(const struct drake_cluster *c, const struct mig_replica *r, size_t nr,
                       size_t i, int away, int onto, double now, const struct mig_opts *o,
                       struct mig_decision *out, char *why, size_t len) DRAKE_MUST_CHECK;

#endif
