/*
 * pytorchjob_codec.c - the PyTorchJob kind (struct job_kind, kind/job.h):
 * decodes a PyTorchJob into struct job with kind/'s shared decoders, plus
 * what only a PyTorchJob has: elasticPolicy (the gang's minimum and
 * maximum, torchrun's rendezvous) and nprocPerNode. Every message names
 * the field; it becomes the job's Failed condition.
 *
 * Ownership: see pytorchjob.h (spec and templates are borrowed).
 */
#include "pytorchjob/pytorchjob.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "kind/job_codec.h"

const struct job_kind pytorchjob_kind = {
    .kind = "PyTorchJob",
    .group = "kubeflow.org",
    .version = "v1",
    .plural = "pytorchjobs",
    .operator_name = PT_OPERATOR_NAME,
    .managed_by = PT_MANAGED_BY_DRAKE,
    .container = PT_CONTAINER,
    .port_name = PT_PORT_NAME,
    .default_port = PT_DEFAULT_PORT,
    .default_restart = JOB_RESTART_ON_FAILURE,
    /* elastic torchrun 1.13: every worker restarts on any change */
    .resize_shrink_s = 18.1,
    .resize_grow_s = 6.5,
    .type_name = {"Master", NULL, "Worker", NULL},
    .type_lower = {"master", NULL, "worker", NULL},
    .decode = pytorchjob_decode,
    .env = pytorch_env_set,
};

static drake_err bad(char *msg, size_t msglen, const char *what)
{
	return drake_errorf(DRAKE_EINVAL, msg, msglen, "%s", what);
}

/* An optional string of at most max bytes. */
static drake_err opt_string(const json_t *ep, const char *key, size_t max, char *msg, size_t msglen)
{
	json_t *v = json_object_get(ep, key);
	if (!v || json_is_null(v))
		return DRAKE_OK;
	const char *s = json_string_value(v);
	if (!s || !*s || strlen(s) > max)
		return drake_errorf(DRAKE_EINVAL, msg, msglen,
		                    "elasticPolicy.%s must be a string of 1 to %zu characters", key,
		                    max);
	return DRAKE_OK;
}

/* rdzvConf: [{key, value}, ...], joined "k=v,..." within PT_RDZV_CONF_MAX. */
static drake_err check_conf(const json_t *conf, char *msg, size_t msglen)
{
	if (!conf || json_is_null(conf))
		return DRAKE_OK;
	if (!json_is_array(conf))
		return bad(msg, msglen, "elasticPolicy.rdzvConf must be a list of {key, value}");
	size_t total = 0, i;
	json_t *kv;
	json_array_foreach (conf, i, kv) {
		const char *k = json_string_value(json_object_get(kv, "key"));
		json_t *vv = json_object_get(kv, "value");
		const char *v = vv ? json_string_value(vv) : "";
		if (!k || !*k || !v || strpbrk(k, "=,") || strchr(v, ','))
			return drake_errorf(
			    DRAKE_EINVAL, msg, msglen,
			    "elasticPolicy.rdzvConf[%zu] must have a key (no '=' or "
			    "',') and a string value (no ',')",
			    i);
		total += strlen(k) + strlen(v) + 2;
	}
	if (total > PT_RDZV_CONF_MAX)
		return drake_errorf(DRAKE_EINVAL, msg, msglen,
		                    "elasticPolicy.rdzvConf is longer than %d characters",
		                    PT_RDZV_CONF_MAX);
	return DRAKE_OK;
}

static drake_err decode_elastic(const json_t *ep, struct job *job, char *msg, size_t msglen)
{
	if (!json_is_object(ep))
		return bad(msg, msglen, "elasticPolicy must be an object");
	if (!job->rs[JOB_WORKER].present)
		return bad(msg, msglen, "elasticPolicy needs a Worker replica spec to resize");
	long workers = job->rs[JOB_WORKER].replicas, lo = -1, hi = -1, v = -1;
	drake_err e = job_get_int(json_object_get(ep, "minReplicas"), "elasticPolicy.minReplicas",
	                          1, JOB_MAX_REPLICAS, &lo, msg, msglen);
	if (!e)
		e = job_get_int(json_object_get(ep, "maxReplicas"), "elasticPolicy.maxReplicas", 1,
		                JOB_MAX_REPLICAS, &hi, msg, msglen);
	if (!e)
		e = job_get_int(json_object_get(ep, "rdzvPort"), "elasticPolicy.rdzvPort", 1, 65535,
		                &v, msg, msglen);
	if (!e)
		e = job_get_int(json_object_get(ep, "maxRestarts"), "elasticPolicy.maxRestarts", 0,
		                1000000, &v, msg, msglen);
	if (!e)
		e = job_get_int(json_object_get(ep, "nProcPerNode"), "elasticPolicy.nProcPerNode",
		                1, 1024, &v, msg, msglen);
	if (e)
		return e;
	if ((lo < 0) != (hi < 0)) /* the operator's PET_NNODES would have neither */
		return bad(msg, msglen,
		           "elasticPolicy needs both minReplicas and maxReplicas, or neither");
	if (lo < 0)
		lo = hi = workers;
	if (lo > hi)
		return drake_errorf(DRAKE_EINVAL, msg, msglen,
		                    "elasticPolicy.minReplicas (%ld) is above maxReplicas (%ld)",
		                    lo, hi);
	if (workers < lo || workers > hi)
		return drake_errorf(DRAKE_EINVAL, msg, msglen,
		                    "pytorchReplicaSpecs.Worker.replicas (%ld) is outside "
		                    "[minReplicas %ld, maxReplicas %ld]",
		                    workers, lo, hi);
	const char *backend = json_string_value(json_object_get(ep, "rdzvBackend"));
	json_t *bv = json_object_get(ep, "rdzvBackend");
	if (bv && !json_is_null(bv) &&
	    (!backend ||
	     (strcmp(backend, "c10d") && strcmp(backend, "etcd") && strcmp(backend, "etcd-v2"))))
		return bad(msg, msglen, "elasticPolicy.rdzvBackend must be c10d, etcd or etcd-v2");
	if ((e = opt_string(ep, "rdzvHost", PT_RDZV_STR_MAX, msg, msglen)) ||
	    (e = opt_string(ep, "rdzvId", PT_RDZV_STR_MAX, msg, msglen)) ||
	    (e = check_conf(json_object_get(ep, "rdzvConf"), msg, msglen)))
		return e;
	json_t *sa = json_object_get(ep, "standalone");
	if (sa && !json_is_null(sa) && !json_is_boolean(sa))
		return bad(msg, msglen, "elasticPolicy.standalone must be true or false");
	json_t *metrics = json_object_get(ep, "metrics");
	if (metrics && !json_is_null(metrics) && !json_is_array(metrics))
		return bad(msg, msglen, "elasticPolicy.metrics must be a list");
	if (json_array_size(metrics) > 0)
		snprintf(job->notice, sizeof(job->notice),
		         "elasticPolicy.metrics asks for a HorizontalPodAutoscaler: drake creates "
		         "none, it resizes the job itself between minReplicas %ld and maxReplicas "
		         "%ld",
		         lo, hi);
	job->min_instances = (int)lo;
	job->max_instances = (int)hi;
	/* torchrun's elastic agents: the job is done when one finishes */
	job->success = JOB_SUCCESS_ANY_WORKER;
	return DRAKE_OK;
}

/* Without elasticPolicy every replica is needed, unless
 * schedulingPolicy.minAvailable (in pods, the Master counted) asks for
 * fewer workers. */
static drake_err decode_fixed(struct job *job, char *msg, size_t msglen)
{
	long workers = job->rs[JOB_WORKER].present ? job->rs[JOB_WORKER].replicas : 0;
	long master = job->rs[JOB_CHIEF].present && job->rs[JOB_CHIEF].replicas > 0 ? 1 : 0;
	long lo = workers;
	if (job->min_available >= 0) {
		if (job->min_available < master || job->min_available > master + workers)
			return drake_errorf(DRAKE_EINVAL, msg, msglen,
			                    "runPolicy.schedulingPolicy.minAvailable (%d) must be "
			                    "between %ld (the Master) and the job's %ld replicas",
			                    job->min_available, master, master + workers);
		lo = job->min_available - master;
	}
	job->min_instances = (int)lo;
	job->max_instances = (int)workers;
	job->success = JOB_SUCCESS_ALL_WORKERS;
	return DRAKE_OK;
}

/* spec.nprocPerNode: auto, cpu, gpu or a count. */
static drake_err check_nproc(const json_t *spec, char *msg, size_t msglen)
{
	json_t *v = json_object_get(spec, "nprocPerNode");
	if (!v || json_is_null(v))
		return DRAKE_OK;
	const char *s = json_string_value(v);
	char *end = NULL;
	long n = s ? strtol(s, &end, 10) : 0;
	if (s && (!strcmp(s, "auto") || !strcmp(s, "cpu") || !strcmp(s, "gpu") ||
	          (end != s && !*end && n >= 1 && n <= 1024)))
		return DRAKE_OK;
	return bad(msg, msglen, "spec.nprocPerNode must be auto, cpu, gpu or a count of 1 to 1024");
}

drake_err pytorchjob_decode(const struct json_t *obj, struct job *job, bool *managed, char *msg,
                            size_t msglen)
{
	drake_err e = job_decode_meta(obj, &pytorchjob_kind, job, managed, msg, msglen);
	if (e != DRAKE_OK || !*managed)
		return e;
	json_t *spec = json_object_get(obj, "spec");
	if ((e = job_decode_replicas(spec, "pytorchReplicaSpecs", job, msg, msglen)) ||
	    (e = job_decode_run_policy(spec, false, JOB_CLEAN_NONE, job, msg, msglen)) ||
	    (e = job_decode_scheduling(spec, job, msg, msglen)) ||
	    (e = check_nproc(spec, msg, msglen)))
		return e;
	json_t *ep = json_object_get(spec, "elasticPolicy");
	if (ep && !json_is_null(ep))
		return decode_elastic(ep, job, msg, msglen);
	return decode_fixed(job, msg, msglen);
}
