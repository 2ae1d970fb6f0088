/*
 * protocol.h - how admission tells the extender what it decided: the
 * annotations it writes on every pod of a gang when it ungates them. The
 * plan travels with the pod, so kube-scheduler hands it to the extender in
 * every filter and prioritize request, and it survives any restart.
 *
 *   drake.dev/planned-node  node the planner reserved for this pod
 *   drake.dev/gang          id of the admission wave: "<tfjob uid>.<wave>";
 *                           pods of one wave bind together or not at all
 *   drake.dev/gang-size     pods in the wave (the bind barrier waits for all)
 *   drake.dev/gang-min      PS + chief + min-instances workers (a head count,
 *                           for people; the checks read gang-min-roles)
 *   drake.dev/gang-min-roles  the minimum per role, "ps=1,chief=1,worker=2"
 *                           (gang/roles.h): the barrier releases a wave only
 *                           when each role's minimum is there, and preemption
 *                           never takes a live PS or chief, nor workers below
 *                           their minimum
 *   drake.dev/role          this member's role: "ps", "chief" or "worker"
 *
 * These annotations are drake's to write: the controller strips every
 * drake.dev/ key (and kubeshare/GPUID) from a TFJob's pod templates, so a
 * pod carries them only once admission has written them.
 *
 * A pod without drake.dev/planned-node is not drake's to place (a plain pod,
 * or a TFJob pod of another controller): the extender passes it through.
 * drake's own unadmitted pods never reach kube-scheduler: they are created
 * with a scheduling gate that only admission removes.
 */
#ifndef DRAKE_GANG_PROTOCOL_H
#define DRAKE_GANG_PROTOCOL_H

#include <stdbool.h>
#include <string.h>

#define DRAKE_ANNOTATION_PREFIX       "drake.dev/"
#define DRAKE_ANNOTATION_PLANNED_NODE "drake.dev/planned-node"
#define DRAKE_ANNOTATION_GANG         "drake.dev/gang"
#define DRAKE_ANNOTATION_GANG_SIZE    "drake.dev/gang-size"
#define DRAKE_ANNOTATION_GANG_MIN     "drake.dev/gang-min"
#define DRAKE_ANNOTATION_GANG_ROLES   "drake.dev/gang-min-roles"
#define DRAKE_ANNOTATION_ROLE         "drake.dev/role"
#define DRAKE_LABEL_JOB_NAME          "training.kubeflow.org/job-name"

/* True for an annotation only drake may write on a pod: every drake.dev/
 * key and the vGPU a KubeShare share was placed on. A TFJob's template
 * carrying one would forge a plan (a gated pod counted as placed). */
static inline bool drake_annotation_reserved(const char *key)
{
	return !strncmp(key, DRAKE_ANNOTATION_PREFIX, sizeof(DRAKE_ANNOTATION_PREFIX) - 1) ||
	       !strcmp(key, "kubeshare/GPUID");
}

/* Largest gang a wave may carry (a bound on the barrier's memory). */
#define DRAKE_GANG_SIZE_MAX 4096

#endif
