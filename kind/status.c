/*
 * status.c - job_judge(): Kubeflow's status rules as a pure function, so the
 * controller's decisions can be tested without a cluster. Order of
 * precedence: success first (a finished chief or worker 0 ends the job even
 * if another replica failed afterwards), then permanent failure, deadline,
 * backoff limit, restarting, running.
 *
 * Ownership: writes only into the caller's verdict and the pods' recreate flags.
 */
#include "kind/status.h"

#include <stdio.h>
#include <string.h>

static const char *const STATES[] = {"Created",   "Running", "Restarting",
                                     "Succeeded", "Failed",  "Suspended"};

const char *job_state_name(enum job_state s)
{
	return s <= JOB_STATE_SUSPENDED ? STATES[s] : "?";
}

bool job_state_final(enum job_state s)
{
	return s == JOB_STATE_SUCCEEDED || s == JOB_STATE_FAILED;
}

/* reason: Kubeflow's "<Kind><reason>" with kinded, else reason alone. */
static void set(struct job_verdict *v, const struct job *job, enum job_state s, bool kinded,
                const char *reason)
{
	v->state = s;
	snprintf(v->reason, sizeof(v->reason), "%s%s", kinded ? job->kind->kind : "", reason);
}

/* A failed pod: retried (recreated) or a permanent failure? */
static bool retryable(const struct job *job, const struct job_pod_obs *p)
{
	switch (job->rs[p->type].restart) {
	case JOB_RESTART_ON_FAILURE:
	case JOB_RESTART_ALWAYS: return true;
	case JOB_RESTART_EXIT_CODE: return p->exit_code >= 128 && p->exit_code <= 255;
	case JOB_RESTART_NEVER: return false;
	}
	return false;
}

static bool succeeded(const struct job *job, const struct job_pod_obs *pods, size_t n)
{
	if (job->rs[JOB_CHIEF].present) {
		for (size_t i = 0; i < n; i++)
			if (pods[i].type == JOB_CHIEF && pods[i].index == 0 &&
			    pods[i].phase == JOB_POD_SUCCEEDED)
				return true;
		return false;
	}
	int want = job->success == JOB_SUCCESS_ALL_WORKERS ? job->rs[JOB_WORKER].replicas : 1;
	int done = 0;
	for (size_t i = 0; i < n; i++)
		if (pods[i].type == JOB_WORKER && pods[i].phase == JOB_POD_SUCCEEDED &&
		    (pods[i].index < want || job->success == JOB_SUCCESS_ANY_WORKER))
			done++;
	return want > 0 && done >= want;
}

void job_judge(const struct job *job, struct job_pod_obs *pods, size_t n, int prior_restarts,
               long elapsed_s, struct job_verdict *v)
{
	memset(v, 0, sizeof(*v));
	v->state = JOB_STATE_CREATED;
	v->restarts = prior_restarts;
	int permanent = 0, retry = 0;
	enum job_rtype failed_type = JOB_WORKER;
	bool running = false;
	for (size_t i = 0; i < n; i++) {
		struct job_pod_obs *p = &pods[i];
		p->recreate = false;
		v->restarts += p->restarts;
		switch (p->phase) {
		case JOB_POD_RUNNING:
			v->rs[p->type].active++;
			if (job->rs[JOB_CHIEF].present ? p->type == JOB_CHIEF
			                               : p->type == JOB_WORKER)
				running = true;
			break;
		case JOB_POD_SUCCEEDED: v->rs[p->type].succeeded++; break;
		case JOB_POD_FAILED:
			v->rs[p->type].failed++;
			if (p->deleting)
				break; /* already on its way back */
			if (retryable(job, p)) {
				p->recreate = true;
				retry++;
			} else {
				permanent++;
			}
			failed_type = p->type;
			break;
		default: break;
		}
	}
	char *m = v->message;
	size_t ml = sizeof(v->message);
	if (succeeded(job, pods, n)) {
		set(v, job, JOB_STATE_SUCCEEDED, true, "Succeeded");
		/* Kubeflow's rule: a finished job has no active replicas; those
		 * still running when it succeeded count as succeeded (they are
		 * cleaned up or left alone per cleanPodPolicy, and no later
		 * status is written), so kubectl's Workers column never shows
		 * workers of a job that is over. */
		for (int t = 0; t < JOB_NTYPES; t++) {
			v->rs[t].succeeded += v->rs[t].active;
			v->rs[t].active = 0;
		}
		snprintf(m, ml, "%s %s/%s successfully completed.", job->kind->kind, job->ns,
		         job->name);
		for (size_t i = 0; i < n; i++)
			pods[i].recreate = false;
		return;
	}
	if (permanent > 0) {
		set(v, job, JOB_STATE_FAILED, true, "Failed");
		snprintf(m, ml, "%s %s/%s has failed because %d %s replica(s) failed.",
		         job->kind->kind, job->ns, job->name, permanent,
		         job_type_name(job, failed_type));
	} else if (job->deadline_s >= 0 && elapsed_s >= 0 && elapsed_s > job->deadline_s) {
		set(v, job, JOB_STATE_FAILED, false, "DeadlineExceeded");
		snprintf(m, ml,
		         "%s %s/%s has failed because it was active longer than "
		         "activeDeadlineSeconds (%ld s).",
		         job->kind->kind, job->ns, job->name, job->deadline_s);
	} else if (job->backoff_limit >= 0 && v->restarts + retry > job->backoff_limit) {
		set(v, job, JOB_STATE_FAILED, false, "BackoffLimitExceeded");
		snprintf(m, ml,
		         "%s %s/%s has failed because it has reached the specified backoff "
		         "limit (%d).",
		         job->kind->kind, job->ns, job->name, job->backoff_limit);
	} else if (retry > 0) {
		set(v, job, JOB_STATE_RESTARTING, true, "Restarting");
		snprintf(m, ml, "%s %s/%s is restarting because %d %s replica(s) failed.",
		         job->kind->kind, job->ns, job->name, retry,
		         job_type_name(job, failed_type));
		return;
	} else if (running) {
		set(v, job, JOB_STATE_RUNNING, true, "Running");
		snprintf(m, ml, "%s %s/%s is running.", job->kind->kind, job->ns, job->name);
		return;
	} else {
		set(v, job, JOB_STATE_CREATED, true, "Created");
		snprintf(m, ml, "%s %s/%s is created.", job->kind->kind, job->ns, job->name);
		v->preempted = job->preempted[0] != 0;
		if (v->preempted)
			snprintf(v->preempted_msg, sizeof(v->preempted_msg),
			         "%s %s/%s waits to run again: %s", job->kind->kind, job->ns,
			         job->name, job->preempted);
		const struct job_refusal *f = &job->refusal;
		v->unschedulable = f->tries > 0;
		if (v->unschedulable &&
		    snprintf(v->unschedulable_msg, sizeof(v->unschedulable_msg),
		             "kube-scheduler cannot place %s: %s (refused %d time%s in a row)",
		             f->pod, f->why, f->tries,
		             f->tries == 1 ? "" : "s") >= (int)sizeof(v->unschedulable_msg))
			memcpy(v->unschedulable_msg + sizeof(v->unschedulable_msg) - 4, "...", 4);
		return;
	}
	for (size_t i = 0; i < n; i++) /* a failed job recreates nothing */
		pods[i].recreate = false;
}
