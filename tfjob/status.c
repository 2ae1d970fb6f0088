/*
 * status.c - tf_judge(): Kubeflow's status rules as a pure function, so the
 * controller's decisions can be tested without a cluster. Order of
 * precedence: success first (a finished chief or worker 0 ends the job even
 * if another replica failed afterwards), then permanent failure, deadline,
 * backoff limit, restarting, running.
 *
 * Ownership: writes only into the caller's verdict and the pods' recreate flags.
 */
#include "tfjob/status.h"

#include <stdio.h>
#include <string.h>

static const char *const STATES[] = {"Created",   "Running", "Restarting",
                                     "Succeeded", "Failed",  "Suspended"};

const char *tf_state_name(enum tf_state s)
{
	return s <= TF_STATE_SUSPENDED ? STATES[s] : "?";
}

bool tf_state_final(enum tf_state s)
{
	return s == TF_STATE_SUCCEEDED || s == TF_STATE_FAILED;
}

static void set(struct tf_verdict *v, enum tf_state s, const char *reason)
{
	v->state = s;
	snprintf(v->reason, sizeof(v->reason), "%s", reason);
}

/* A failed pod: retried (recreated) or a permanent failure? */
static bool retryable(const struct tfjob *job, const struct tf_pod_obs *p)
{
	switch (job->rs[p->type].restart) {
	case TF_RESTART_ON_FAILURE:
	case TF_RESTART_ALWAYS: return true;
	case TF_RESTART_EXIT_CODE: return p->exit_code >= 128 && p->exit_code <= 255;
	case TF_RESTART_NEVER: return false;
	}
	return false;
}

static bool succeeded(const struct tfjob *job, const struct tf_pod_obs *pods, size_t n)
{
	if (job->rs[TF_CHIEF].present) {
		for (size_t i = 0; i < n; i++)
			if (pods[i].type == TF_CHIEF && pods[i].index == 0 &&
			    pods[i].phase == TF_POD_SUCCEEDED)
				return true;
		return false;
	}
	int want = job->all_workers ? job->rs[TF_WORKER].replicas : 1, done = 0;
	for (size_t i = 0; i < n; i++)
		if (pods[i].type == TF_WORKER && pods[i].phase == TF_POD_SUCCEEDED &&
		    pods[i].index < want)
			done++;
	return want > 0 && done >= want;
}

void tf_judge(const struct tfjob *job, struct tf_pod_obs *pods, size_t n, int prior_restarts,
              long elapsed_s, struct tf_verdict *v)
{
	memset(v, 0, sizeof(*v));
	v->state = TF_STATE_CREATED;
	v->restarts = prior_restarts;
	int permanent = 0, retry = 0;
	enum tf_rtype failed_type = TF_WORKER;
	bool running = false;
	for (size_t i = 0; i < n; i++) {
		struct tf_pod_obs *p = &pods[i];
		p->recreate = false;
		v->restarts += p->restarts;
		switch (p->phase) {
		case TF_POD_RUNNING:
			v->rs[p->type].active++;
			if (job->rs[TF_CHIEF].present ? p->type == TF_CHIEF : p->type == TF_WORKER)
				running = true;
			break;
		case TF_POD_SUCCEEDED: v->rs[p->type].succeeded++; break;
		case TF_POD_FAILED:
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
		set(v, TF_STATE_SUCCEEDED, "TFJobSucceeded");
		/* Kubeflow's rule: a finished job has no active replicas; those
		 * still running when it succeeded count as succeeded (they are
		 * cleaned up or left alone per cleanPodPolicy, and no later
		 * status is written), so kubectl's Workers column never shows
		 * workers of a job that is over. */
		for (int t = 0; t < TF_NTYPES; t++) {
			v->rs[t].succeeded += v->rs[t].active;
			v->rs[t].active = 0;
		}
		snprintf(m, ml, "TFJob %s/%s successfully completed.", job->ns, job->name);
		for (size_t i = 0; i < n; i++)
			pods[i].recreate = false;
		return;
	}
	if (permanent > 0) {
		set(v, TF_STATE_FAILED, "TFJobFailed");
		snprintf(m, ml, "TFJob %s/%s has failed because %d %s replica(s) failed.", job->ns,
		         job->name, permanent, tf_rtype_name(failed_type));
	} else if (job->deadline_s >= 0 && elapsed_s >= 0 && elapsed_s > job->deadline_s) {
		set(v, TF_STATE_FAILED, "DeadlineExceeded");
		snprintf(m, ml,
		         "TFJob %s/%s has failed because it was active longer than "
		         "activeDeadlineSeconds (%ld s).",
		         job->ns, job->name, job->deadline_s);
	} else if (job->backoff_limit >= 0 && v->restarts + retry > job->backoff_limit) {
		set(v, TF_STATE_FAILED, "BackoffLimitExceeded");
		snprintf(m, ml,
		         "TFJob %s/%s has failed because it has reached the specified backoff "
		         "limit (%d).",
		         job->ns, job->name, job->backoff_limit);
	} else if (retry > 0) {
		set(v, TF_STATE_RESTARTING, "TFJobRestarting");
		snprintf(m, ml, "TFJob %s/%s is restarting because %d %s replica(s) failed.",
		         job->ns, job->name, retry, tf_rtype_name(failed_type));
		return;
	} else if (running) {
		set(v, TF_STATE_RUNNING, "TFJobRunning");
		snprintf(m, ml, "TFJob %s/%s is running.", job->ns, job->name);
		return;
	} else {
		set(v, TF_STATE_CREATED, "TFJobCreated");
		snprintf(m, ml, "TFJob %s/%s is created.", job->ns, job->name);
		const struct tf_refusal *f = &job->refusal;
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
