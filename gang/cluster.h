/*
 * cluster.h - a snapshot of the cluster as the planner sees it: every node
 * with its allocatable resources, what is already used on it (bound pods,
 * drake's or not, plus reservations), and whether pods may land there
 * (tainted or cordoned nodes are kept but never chosen).
 *
 * Nodes are kept sorted by name once drake_cluster_sort() has run, so every
 * walk over them is in a fixed order and node indexes are stable until the
 * next add. The snapshot owns its node array; drake_cluster_release() frees
 * it. drake_cluster_clone() allocates a copy the caller releases.
 *
 * GPUs are counted whole in alloc and used. A KubeShare vGPU (gang/vgpu.h)
 * takes one whole GPU from used for as long as it is open, and its shares
 * are kept in the node's vgpus table.
 */
#ifndef DRAKE_GANG_CLUSTER_H
#define DRAKE_GANG_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"
#include "gang/resource.h"
#include "gang/vgpu.h"

#define DRAKE_NODE_NAME_MAX     254
#define DRAKE_CLUSTER_MAX_NODES 100000

/* What a node measurably uses: CPU and memory working set over a recent
 * window (the metrics API's NodeMetrics), when the adapter holds a fresh
 * sample; known false otherwise. Only the migration rule reads it
 * (migrate/migrate.h, "Load"): the planner places by requests, as the
 * scheduler charges them. GPUs have no measure here: they are exclusive. */
struct drake_usage {
	int64_t cpu_milli, mem_bytes;
	bool known;
};

struct drake_node {
	char name[DRAKE_NODE_NAME_MAX];
	struct drake_res alloc;
	struct drake_res used;
	struct drake_usage usage; /* measured; all 0 when not known */
	bool schedulable;
	/* Not schedulable only because of a NoSchedule or NoExecute taint: the
	 * planner opens it to a replica whose node mask (drake_gang_req) lets
	 * it in, i.e. whose tolerations match; nothing else uses it. */
	bool tainted;
	int64_t gpu_mem;          /* bytes per GPU (kubeshare/gpu_info); 0 unknown */
	struct drake_vgpus vgpus; /* open vGPUs, each counted as one GPU in used */
};

struct drake_cluster {
	struct drake_node *nodes;
	size_t n, cap;
	struct drake_res_names names;
	struct drake_res alloc_total; /* over schedulable nodes */
	struct drake_res used_total;  /* over schedulable nodes */
	bool sorted;
};

void drake_cluster_init(struct drake_cluster *c);
void drake_cluster_release(struct drake_cluster *c);

/* Appends a node (unsorted until drake_cluster_sort). Names longer than
 * DRAKE_NODE_NAME_MAX-1 and more than DRAKE_CLUSTER_MAX_NODES nodes are
 * DRAKE_ELIMIT. */
drake_err drake_cluster_add_node(struct drake_cluster *c, const char *name,
                                 const struct drake_res *alloc, bool schedulable, char *msg,
                                 size_t len) DRAKE_MUST_CHECK;

/* Sorts nodes by name; a duplicate name is DRAKE_EINVAL naming it. */
drake_err drake_cluster_sort(struct drake_cluster *c, char *msg, size_t len) DRAKE_MUST_CHECK;

/* Index of the node called name, or -1 (needs a sorted snapshot). */
int drake_cluster_find(const struct drake_cluster *c, const char *name);

/* What is left on node i: alloc - used, never below zero. */
void drake_cluster_free(const struct drake_cluster *c, size_t i, struct drake_res *out);

/* Free resources summed over schedulable nodes, each node's free clamped
 * at zero first, so an overcommitted node takes nothing from the others:
 * an upper bound on what a plan can use. */
void drake_cluster_free_sum(const struct drake_cluster *c, struct drake_res *out);

/* Charges (count > 0) or refunds (count < 0) count copies of req on node i. */
void drake_cluster_charge(struct drake_cluster *c, size_t i, const struct drake_res *req,
                          int64_t count);

/*
 * One replica asking share s joins (sign > 0) or leaves (sign < 0) the vGPU
 * called id on node i. Joining an id the node does not have opens it, which
 * takes one whole GPU; the last replica leaving closes it and gives the GPU
 * back. A share the table cannot track (the table is full, or the id is too
 * long) still costs its whole GPU, so the snapshot never undercounts.
 */
void drake_cluster_charge_vgpu(struct drake_cluster *c, size_t i, const char *id,
                               const struct drake_share *s, int sign);

/* Marks node i (un)schedulable, keeping the totals right. */
void drake_cluster_set_schedulable(struct drake_cluster *c, size_t i, bool schedulable);

/* dst becomes an independent copy of src (dst must be released or fresh). */
drake_err drake_cluster_clone(struct drake_cluster *dst,
                              const struct drake_cluster *src) DRAKE_MUST_CHECK;

#endif
