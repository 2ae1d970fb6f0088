/*
 * protocol.h - how admission tells the extender what it decided: the
 * annotations it writes on every pod of a gang when it ungates them. The
 * plan travels with the pod, so kube-scheduler hands it to the extender in
 * every filter and prioritize request, and it survives any restart.
 *
 *   drake.dev/planned-node  node the planner reserved for this pod
 *   drake.dev/gang          id of the admission wave: "<job uid>.<wave>";
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
 * drake.dev/ key (and kubeshare/GPUID) from a job's pod templates, so a
 * pod carries them only once admission has written them.
 *
 * A pod without drake.dev/planned-node is not drake's to place (a plain pod,
 * or a training pod of another controller): the extender passes it through.
 * drake's own unadmitted pods never reach kube-scheduler: they are created
 * with a scheduling gate that only admission removes.
 */
#ifndef DRAKE_GANG_PROTOCOL_H
#define DRAKE_GANG_PROTOCOL_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "common/err.h"

#define DRAKE_ANNOTATION_PREFIX       "drake.dev/"
#define DRAKE_ANNOTATION_PLANNED_NODE "drake.dev/planned-node"
#define DRAKE_ANNOTATION_GANG         "drake.dev/gang"
#define DRAKE_ANNOTATION_GANG_SIZE    "drake.dev/gang-size"
#define DRAKE_ANNOTATION_GANG_MIN     "drake.dev/gang-min"
#define DRAKE_ANNOTATION_GANG_ROLES   "drake.dev/gang-min-roles"
#define DRAKE_ANNOTATION_ROLE         "drake.dev/role"
#define DRAKE_LABEL_JOB_NAME          "training.kubeflow.org/job-name"

/* True for an annotation only drake may write on a pod: every drake.dev/
 * key and the vGPU a KubeShare share was placed on. A job's template
 * carrying one would forge a plan (a gated pod counted as placed). */
static inline bool drake_annotation_reserved(const char *key)
{
	return !strncmp(key, DRAKE_ANNOTATION_PREFIX, sizeof(DRAKE_ANNOTATION_PREFIX) - 1) ||
	       !strcmp(key, "kubeshare/GPUID");
}

/* Largest gang a wave may carry (a bound on the barrier's memory). */
#define DRAKE_GANG_SIZE_MAX 4096

/*
 * The gang id, drake.dev/gang: "<uid>.<wave>", the job's uid and its
 * admission wave, the second (since the epoch) admission made it; the
 * pods of one wave bind together or not at all, and a wave's time is its
 * members' admission time. A uid is 1 to DRAKE_GANG_UID_MAX bytes with no
 * '.' (Kubernetes uids are 36-byte UUIDs); a wave is a decimal from 0 to
 * LLONG_MAX, digits only (no sign, no space).
 */
#define DRAKE_GANG_UID_MAX 63 /* the uid buffers drake keeps hold 64 bytes */
#define DRAKE_GANG_ID_MAX  (DRAKE_GANG_UID_MAX + 1 + 19 + 1) /* with its NUL */

struct drake_gang_id {
	char uid[DRAKE_GANG_UID_MAX + 1];
	long long wave;
};

/* "<uid>.<wave>" into buf (len bytes). EINVAL for an empty uid, one longer
 * than DRAKE_GANG_UID_MAX or with a '.', or a negative wave; ELIMIT when
 * buf is too small (DRAKE_GANG_ID_MAX always is enough). On an error buf
 * holds "" (when len > 0). */
drake_err drake_gang_id_format(const char *uid, long long wave, char *buf,
                               size_t len) DRAKE_MUST_CHECK;

/* The uid and wave of id. EINVAL with why (naming id) when id is NULL, has
 * no '.', an empty or too long uid, or a wave that is empty, not all
 * digits, or beyond LLONG_MAX. */
drake_err drake_gang_id_parse(const char *id, struct drake_gang_id *out, char *why,
                              size_t len) DRAKE_MUST_CHECK;
#endif
