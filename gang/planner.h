/*
 * planner.h - where a gang goes: one placement for a job's parameter
 * servers and workers, or a reason why it has to wait.
 *
 * drake's rule: pack the whole job onto one node
 * when some node can take it, choosing the node that leaves the least
 * stranded capacity (best fit); otherwise put the PS on the node that can
 * hold the most of the job and fill outward over as few nodes as possible,
 * finishing on the tightest node that takes the rest. Every tie breaks by
 * node name. The planner places up to want_workers and reports how many it
 * placed, so admission can start a job anywhere between min and desired.
 *
 * A chief (the kind's coordinating replica) coordinates the job, so it
 * goes beside the PS: the one-node pass packs it with everything else,
 * and otherwise the PS node is chosen for the most members (chief and
 * workers) it takes, and the chief is placed there before any worker.
 * When it does not fit there it goes to the node it fits best (least
 * stranded capacity), still before the workers spill. It counts in nodes spanned, and a chief that
 * fits nowhere makes the whole job wait.
 *
 * A role may be kept to some nodes (its node selector, required node
 * affinity and tolerations: the request's masks); a job some role of
 * which may use no node at all waits with that reason.
 *
 * Replicas may share GPUs (KubeShare, gang/vgpu.h): how many fit on a node
 * is then found by packing their shares first fit onto the node's open
 * vGPUs and new ones, and the plan names each replica's vGPU.
 *
 * Room for the queue: when the request names the shapes the queue needs
 * (keep), a node's room counts by the GPUs those shapes can use in it: per
 * shape asking for GPUs, how many copies fit its free room times their
 * GPUs, summed over shapes. The one-node pass prefers, among the nodes
 * that take the whole job, the one that loses the fewest such GPUs, and
 * the fill outward, among the nodes it would take anyway, likewise. Then a
 * second placement is tried: worker by worker onto the node that loses the
 * fewest (a node the job already uses first, then the tightest), the PS
 * beside its workers. It places every worker that fits anywhere, so at
 * least as many as the first; it wins when it leaves the queue more usable
 * GPUs and spans no more nodes (a job's locality is not traded for the
 * queue's room). It is not tried for a job whose replicas share GPUs.
 *
 * Pure: reads the snapshot, never changes it. Scratch memory is freed
 * before returning; the plan's arrays belong to the caller, who frees them
 * with drake_plan_release().
 */
#ifndef DRAKE_GANG_PLANNER_H
#define DRAKE_GANG_PLANNER_H

#include "common/err.h"
#include "gang/cluster.h"
#include "gang/resource.h"
#include "gang/vgpu.h"

#define DRAKE_GANG_MAX_REPLICAS 4096
#define DRAKE_GANG_MAX_KEEP     64 /* queue shapes a request may name */

/* One job's shape: n_ps parameter servers, an optional chief (the
 * kind's coordinating replica: n_chief 0 or 1) and between min_workers and
 * want_workers identical workers. The chief is part of the minimum: a job
 * starts with its PS, its chief and at least min_workers, or waits. A
 * replica asks for whole GPUs in its vector or for a share of one GPU,
 * never both. */
struct drake_gang_req {
	int n_ps;
	struct drake_res ps;
	struct drake_res worker;
	int min_workers;
	int want_workers;
	int n_chief;
	struct drake_res chief;
	struct drake_share ps_share;     /* milli 0: the PS share no GPU */
	struct drake_share worker_share; /* milli 0: the workers share no GPU */
	struct drake_share chief_share;  /* milli 0: the chief shares no GPU */
	uint64_t vgpu_seed;              /* new vGPU ids derive from it (drake_vgpu_seed) */
	/* Which nodes each role may use, by snapshot index (c->n entries,
	 * nonzero: allowed): its node selector, required node affinity and
	 * tolerations, as gang/nodefit.h matches them. NULL: every schedulable
	 * node. A node marked tainted is open to a role only through its mask.
	 * Borrowed; they must match the snapshot planned on. */
	const unsigned char *ps_ok, *worker_ok, *chief_ok;
	/* What the queue needs (see "Room for the queue" above): the replica
	 * shapes of the jobs waiting or lately arrived, each listed once.
	 * NULL or n_keep 0: no preference. Borrowed. */
	const struct drake_res *keep;
	int n_keep;
};

/* A placement: node indexes into the snapshot. The chief, when the job has
 * one (n_chief 1), is on chief_node, beside the first PS whenever it fits
 * there; without a chief, worker_node[0] (worker 0, the job's coordinator)
 * is placed beside the first PS whenever it fits there. For a replica type
 * with a share, ps_vgpu / worker_vgpu name each replica's vGPU on its node
 * (they are NULL otherwise) and chief_vgpu the chief's (its id is empty
 * otherwise). A zeroed plan has no chief. */
struct drake_plan {
	int n_ps;
	int n_workers;
	int *ps_node;
	int *worker_node;
	int n_chief;
	int chief_node; /* meaningful only when n_chief is 1 */
	int nodes_spanned;
	struct drake_vgpu_pick *ps_vgpu;
	struct drake_vgpu_pick *worker_vgpu;
	struct drake_vgpu_pick chief_vgpu;
};

void drake_plan_release(struct drake_plan *p);

/* Distinct nodes among the PS and worker nodes given. */
int drake_plan_count_nodes(const int *ps_node, int n_ps, const int *worker_node, int n_workers);

/* What a job needs at least, summed over nodes: its PS, its chief and
 * min_workers workers (GPU shares not counted). */
void drake_gang_min_need(const struct drake_gang_req *req, struct drake_res *out);

/*
 * Plans req on c. Returns:
 *   DRAKE_OK       out holds the plan, min_workers <= n_workers <= want_workers;
 *   DRAKE_ESTATE   it does not fit now; why says what it waits for;
 *   DRAKE_ELIMIT   it cannot fit even on the empty cluster; why says why;
 *   DRAKE_EINVAL   the request itself is malformed (why says how);
 *   DRAKE_ENOMEM.
 * out is untouched unless DRAKE_OK.
 */
drake_err drake_plan_gang(const struct drake_cluster *c, const struct drake_gang_req *req,
                          struct drake_plan *out, char *why, size_t len) DRAKE_MUST_CHECK;

/* Checks a request's shape (counts within limits, at most one chief,
 * min <= want, shares within one GPU and not beside whole GPUs). */
drake_err drake_gang_req_check(const struct drake_gang_req *req, char *why,
                               size_t len) DRAKE_MUST_CHECK;

#endif
