/*
 * tfjob_codec.c - the TFJob kind (struct job_kind, kind/job.h): decodes a
 * TFJob (Kubeflow v1 or DRAGON layout) into struct job with kind/'s shared
 * decoders, plus what only a TFJob has: DRAGON's min-instances /
 * max-instances, successPolicy and enableDynamicWorker.
 *
 * Ownership: see kind/job.h (templates are borrowed from the decoded object).
 */
#include "tfjob/tfjob.h"

#include <string.h>

#include <jansson.h>

#include "kind/job_codec.h"
#include "tfjob/tfconfig.h"

const struct job_kind tfjob_kind = {
    .kind = "TFJob",
    .group = "kubeflow.org",
    .version = "v1",
    .plural = "tfjobs",
    .operator_name = TF_OPERATOR_NAME,
    .managed_by = TF_MANAGED_BY_DRAKE,
    .container = TF_CONTAINER,
    .port_name = TF_PORT_NAME,
    .default_port = TF_DEFAULT_PORT,
    .default_restart = JOB_RESTART_NEVER,
    /* drake-train: the PS and the other workers train on */
    .resize_shrink_s = 1.9,
    .resize_grow_s = 2.3,
    .type_name = {"Chief", "PS", "Worker", "Evaluator"},
    .type_lower = {"chief", "ps", "worker", "evaluator"},
    .decode = tfjob_decode,
    .env = tf_env_set,
};

/* minAvailable counts the gang's pods: every PS and the chief, which a job
 * cannot run without, plus the workers it needs. An evaluator is no part of
 * the gang (it starts at once), so a minAvailable that counts it (Kubeflow's
 * default is every replica) is read without it. */
static drake_err min_from_available(const struct job *job, long *lo, char *msg, size_t msglen)
{
	long ps = job->rs[JOB_PS].present ? job->rs[JOB_PS].replicas : 0;
	long chief = job->rs[JOB_CHIEF].present && job->rs[JOB_CHIEF].replicas > 0 ? 1 : 0;
	long workers = job->rs[JOB_WORKER].present ? job->rs[JOB_WORKER].replicas : 0;
	long eval = job->rs[JOB_EVALUATOR].present ? job->rs[JOB_EVALUATOR].replicas : 0;
	long ma = job->min_available;
	if (ma < ps + chief)
		return drake_errorf(DRAKE_EINVAL, msg, msglen,
		                    "runPolicy.schedulingPolicy.minAvailable (%ld) is below the "
		                    "%ld PS%s the job cannot run without",
		                    ma, ps + chief, chief ? " and the chief" : "");
	if (ma > ps + chief + workers + eval)
		return drake_errorf(DRAKE_EINVAL, msg, msglen,
		                    "runPolicy.schedulingPolicy.minAvailable (%ld) is above the "
		                    "job's %ld replicas",
		                    ma, ps + chief + workers + eval);
	*lo = ma - ps - chief;
	if (*lo > workers)
		*lo = workers;
	return DRAKE_OK;
}

static drake_err decode_instances(json_t *spec, struct job *job, char *msg, size_t msglen)
{
	long workers = job->rs[JOB_WORKER].present ? job->rs[JOB_WORKER].replicas : 0;
	long lo = workers, hi = workers;
	drake_err e = DRAKE_OK;
	json_t *mi = json_object_get(spec, "min-instances");
	if (job->min_available >= 0 && (!mi || json_is_null(mi)))
		e = min_from_available(job, &lo, msg, msglen);
	if (!e)
		e = job_get_int(mi, "spec.min-instances", 0, JOB_MAX_REPLICAS, &lo, msg, msglen);
	if (e == DRAKE_OK)
		e = job_get_int(json_object_get(spec, "max-instances"), "spec.max-instances", 0,
		                JOB_MAX_REPLICAS, &hi, msg, msglen);
	if (e != DRAKE_OK)
		return e;
	if (job->min_available >= 0 && mi && !json_is_null(mi)) {
		long ps = job->rs[JOB_PS].present ? job->rs[JOB_PS].replicas : 0;
		long chief = job->rs[JOB_CHIEF].present && job->rs[JOB_CHIEF].replicas > 0 ? 1 : 0;
		long eval = job->rs[JOB_EVALUATOR].present ? job->rs[JOB_EVALUATOR].replicas : 0;
		long gang = ps + chief + lo;
		if (job->min_available != gang && job->min_available != gang + eval)
			return drake_errorf(
			    DRAKE_EINVAL, msg, msglen,
			    "runPolicy.schedulingPolicy.minAvailable (%d) contradicts "
			    "spec.min-instances (%ld): with %ld PS%s the gang's "
			    "minimum is %ld pods",
			    job->min_available, lo, ps, chief ? " and the chief" : "", gang);
	}
	bool both =
	    json_object_get(spec, "min-instances") && json_object_get(spec, "max-instances");
	if (both && lo > hi)
		return drake_errorf(DRAKE_EINVAL, msg, msglen,
		                    "spec.min-instances (%ld) is above spec.max-instances (%ld)",
		                    lo, hi);
	if (workers < lo || workers > hi)
		return drake_errorf(DRAKE_EINVAL, msg, msglen,
		                    "tfReplicaSpecs.Worker.replicas (%ld) is outside "
		                    "[min-instances %ld, max-instances %ld]",
		                    workers, lo, hi);
	if (!job->rs[JOB_WORKER].present && hi > 0)
		return drake_errorf(DRAKE_EINVAL, msg, msglen,
		                    "spec.max-instances is set but there is no Worker replica");
	job->min_instances = (int)lo;
	job->max_instances = (int)hi;
	return DRAKE_OK;
}

drake_err tfjob_decode(const struct json_t *obj, struct job *job, bool *managed, char *msg,
                       size_t msglen)
{
	drake_err e = job_decode_meta(obj, &tfjob_kind, job, managed, msg, msglen);
	if (e != DRAKE_OK || !*managed)
		return e;
	json_t *spec = json_object_get(obj, "spec");
	if ((e = job_decode_replicas(spec, "tfReplicaSpecs", job, msg, msglen)))
		return e;
	job->dragon_layout = json_object_get(spec, "runPolicy") == NULL;
	/* Kubeflow's TFJob defaults to None, DRAGON's to Running */
	if ((e = job_decode_run_policy(spec, true,
	                               job->dragon_layout ? JOB_CLEAN_RUNNING : JOB_CLEAN_NONE, job,
	                               msg, msglen)))
		return e;
	job->dynamic_worker = json_is_true(json_object_get(spec, "enableDynamicWorker"));
	const char *sp = json_string_value(json_object_get(spec, "successPolicy"));
	if (sp && *sp && strcmp(sp, "AllWorkers") != 0)
		return drake_errorf(DRAKE_EINVAL, msg, msglen,
		                    "successPolicy %.20s is not \"\" or AllWorkers", sp);
	job->success =
	    sp && !strcmp(sp, "AllWorkers") ? JOB_SUCCESS_ALL_WORKERS : JOB_SUCCESS_WORKER0;
	if ((e = job_decode_scheduling(spec, job, msg, msglen)))
		return e;
	return decode_instances(spec, job, msg, msglen);
}
