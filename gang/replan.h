/*
 * replan.h - where one admitted gang member goes when kube-scheduler no
 * longer offers its planned node (cordoned, tainted, a node selector or
 * affinity the planner does not read).
 *
 * Among the candidate nodes kube-scheduler still finds feasible, the member
 * goes to a schedulable one with room for it in the snapshot, where every
 * other pod is charged where it is bound or planned, so it never takes
 * another gang's reservation. Locality first: the node that holds most of
 * its job; then the tightest fit (least capacity stranded); then the first
 * name, so the choice is deterministic.
 *
 * Pure: the caller builds the snapshot and counts the job's members.
 */
#ifndef DRAKE_GANG_REPLAN_H
#define DRAKE_GANG_REPLAN_H

#include <stddef.h>

#include "gang/cluster.h"

/* The index into candidates[0..n) the member of requests req goes to, or
 * -1 when none has room. members[i] counts the pods of its job bound or
 * planned on candidates[i]. */
int drake_replan_pick(const struct drake_cluster *c, const struct drake_res *req,
                      const char *const *candidates, const int *members, size_t n);

#endif
