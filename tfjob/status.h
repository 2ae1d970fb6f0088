/*
 * status.h - the pure verdict on a TFJob: from its spec and what its pods
 * are doing, which state it is in (Created, Running, Restarting, Succeeded,
 * Failed) and why, the replica counts for status.replicaStatuses, and which
 * failed pods must be deleted so they come back (restart policies, exit
 * codes, backoffLimit, activeDeadlineSeconds, successPolicy).
 *
 * Ownership: no allocation; the caller owns both arrays and the verdict.
 */
#ifndef DRAKE_TFJOB_STATUS_H
#define DRAKE_TFJOB_STATUS_H

#include <stdbool.h>
#include <stddef.h>

#include "tfjob/tfjob.h"

enum tf_phase { TF_POD_PENDING, TF_POD_RUNNING, TF_POD_SUCCEEDED, TF_POD_FAILED, TF_POD_UNKNOWN };

struct tf_pod_obs {
	enum tf_rtype type;
	int index;
	enum tf_phase phase;
	int exit_code; /* the tensorflow container's exit code once terminated, else -1 */
	int restarts;  /* container restarts so far */
	bool gated;    /* still carries drake's scheduling gate */
	bool deleting;
	bool recreate; /* out: delete this failed pod so the next pass recreates it */
};

enum tf_state {
	TF_STATE_CREATED,
	TF_STATE_RUNNING,
	TF_STATE_RESTARTING,
	TF_STATE_SUCCEEDED,
	TF_STATE_FAILED,
	TF_STATE_SUSPENDED, /* runPolicy.suspend: no pods; set by the caller, not tf_judge() */
};

struct tf_verdict {
	enum tf_state state;
	char reason[64];
	char message[512];
	struct {
		int active, succeeded, failed;
	} rs[TF_NTYPES];
	int restarts; /* prior recreations + container restarts */
	/* Created, and kube-scheduler refused the job's last wave (its
	 * refusal record): the TFJob's Unschedulable condition says so. */
	bool unschedulable;
	char unschedulable_msg[800];
};

const char *tf_state_name(enum tf_state s);
/* True for Succeeded and Failed. */
bool tf_state_final(enum tf_state s);

/* prior_restarts: pods already recreated after failures (kept on the job).
 * elapsed_s: seconds since status.startTime, or -1 when not started. */
void tf_judge(const struct tfjob *job, struct tf_pod_obs *pods, size_t n, int prior_restarts,
              long elapsed_s, struct tf_verdict *v);

#endif
