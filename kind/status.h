/*
 * status.h - the pure verdict on a TFJob: from its spec and what its pods
 * are doing, which state it is in (Created, Running, Restarting, Succeeded,
 * Failed) and why, the replica counts for status.replicaStatuses, and which
 * failed pods must be deleted so they come back (restart policies, exit
 * codes, backoffLimit, activeDeadlineSeconds, successPolicy).
 *
 * Ownership: no allocation; the caller owns both arrays and the verdict.
 */
#ifndef DRAKE_KIND_STATUS_H
#define DRAKE_KIND_STATUS_H

#include <stdbool.h>
#include <stddef.h>

#include "kind/job.h"

enum job_phase {
	JOB_POD_PENDING,
	JOB_POD_RUNNING,
	JOB_POD_SUCCEEDED,
	JOB_POD_FAILED,
	JOB_POD_UNKNOWN
};

struct job_pod_obs {
	enum job_rtype type;
	int index;
	enum job_phase phase;
	int exit_code; /* the tensorflow container's exit code once terminated, else -1 */
	int restarts;  /* container restarts so far */
	bool gated;    /* still carries drake's scheduling gate */
	bool deleting;
	bool recreate; /* out: delete this failed pod so the next pass recreates it */
};

enum job_state {
	JOB_STATE_CREATED,
	JOB_STATE_RUNNING,
	JOB_STATE_RESTARTING,
	JOB_STATE_SUCCEEDED,
	JOB_STATE_FAILED,
	JOB_STATE_SUSPENDED, /* runPolicy.suspend: no pods; set by the caller, not job_judge() */
};

struct job_verdict {
	enum job_state state;
	char reason[64];
	char message[512];
	struct {
		int active, succeeded, failed;
	} rs[JOB_NTYPES];
	int restarts; /* prior recreations + container restarts */
	/* Created, and kube-scheduler refused the job's last wave (its
	 * refusal record): the TFJob's Unschedulable condition says so. */
	bool unschedulable;
	char unschedulable_msg[800];
	/* Created, and drake preempted the job (its JOB_ANNOTATION_PREEMPTED):
	 * the Preempted condition says so, and Running turns False. */
	bool preempted;
	char preempted_msg[1024];
};

const char *job_state_name(enum job_state s);
/* True for Succeeded and Failed. */
bool job_state_final(enum job_state s);

/* prior_restarts: pods already recreated after failures (kept on the job).
 * elapsed_s: seconds since status.startTime, or -1 when not started. */
void job_judge(const struct job *job, struct job_pod_obs *pods, size_t n, int prior_restarts,
               long elapsed_s, struct job_verdict *v);

#endif
