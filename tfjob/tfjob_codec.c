/*
 * tfjob_codec.c - decodes a TFJob (Kubeflow v1 or DRAGON layout) into
 * struct tfjob, validating what the reconciler relies on, and the replica
 * naming rules. Validation failures become the job's Failed condition, so
 * every message names the field.
 *
 * Ownership: see tfjob.h (templates are borrowed from the decoded object).
 */
#include "tfjob/tfjob.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "gang/protocol.h"
#include "kube/object.h"

static const char *const LOWER[TF_NTYPES] = {"chief", "ps", "worker", "evaluator"};
static const char *const NAMES[TF_NTYPES] = {"Chief", "PS", "Worker", "Evaluator"};

const char *tf_rtype_lower(enum tf_rtype t)
{
	return t < TF_NTYPES ? LOWER[t] : "?";
}

const char *tf_rtype_name(enum tf_rtype t)
{
	return t < TF_NTYPES ? NAMES[t] : "?";
}

int tf_role_of(enum tf_rtype t)
{
	return drake_role_of_replica_type(tf_rtype_name(t));
}

enum tf_rtype tf_rtype_of_role(int r)
{
	const char *name = drake_replica_type_of_role((enum drake_role)r);
	for (int t = 0; name && t < TF_NTYPES; t++)
		if (!strcmp(NAMES[t], name))
			return (enum tf_rtype)t;
	return TF_WORKER;
}

int tf_replica_slots(const struct tfjob *job, enum tf_rtype t)
{
	if (!job->rs[t].present)
		return 0;
	return t == TF_WORKER ? job->max_instances : job->rs[t].replicas;
}

bool tf_replica_starts(const struct tfjob *job, enum tf_rtype t, int index)
{
	return t != TF_WORKER || index < job->rs[TF_WORKER].replicas;
}

bool tf_is_master_role(const struct tfjob *job, enum tf_rtype t, int index)
{
	if (job->rs[TF_CHIEF].present)
		return t == TF_CHIEF && index == 0;
	return t == TF_WORKER && index == 0;
}

drake_err tf_replica_name(const struct tfjob *job, enum tf_rtype t, int index, char *buf,
                          size_t len)
{
	if (t >= TF_NTYPES || index < 0 || index >= TF_MAX_REPLICAS)
		return DRAKE_EINVAL;
	int n = snprintf(buf, len, "%s-%s-%d", job->name, LOWER[t], index);
	if (n < 0 || (size_t)n >= len || n > TF_SERVICE_NAME_MAX)
		return DRAKE_ELIMIT;
	return DRAKE_OK;
}

static bool parse_type(const char *key, enum tf_rtype *t)
{
	if (!strcasecmp(key, "master")) { /* legacy alias of Chief */
		*t = TF_CHIEF;
		return true;
	}
	for (int i = 0; i < TF_NTYPES; i++) {
		if (!strcasecmp(key, NAMES[i])) {
			*t = (enum tf_rtype)i;
			return true;
		}
	}
	return false;
}

static drake_err get_int(json_t *v, const char *what, long lo, long hi, long *out, char *msg,
                         size_t msglen)
{
	if (!v || json_is_null(v))
		return DRAKE_OK;
	if (!json_is_integer(v))
		return drake_errorf(DRAKE_EINVAL, msg, msglen, "%s must be an integer", what);
	json_int_t x = json_integer_value(v);
	if (x < lo || x > hi)
		return drake_errorf(DRAKE_EINVAL, msg, msglen,
		                    "%s must be between %ld and %ld, not %lld", what, lo, hi,
		                    (long long)x);
	*out = (long)x;
	return DRAKE_OK;
}

/* Finds the tensorflow container and its tfjob-port. */
static drake_err check_template(json_t *tmpl, const char *type, int *port, char *msg, size_t msglen)
{
	json_t *containers = json_object_get(json_object_get(tmpl, "spec"), "containers");
	if (!json_is_array(containers) || json_array_size(containers) == 0)
		return drake_errorf(DRAKE_EINVAL, msg, msglen,
		                    "tfReplicaSpecs.%s.template.spec.containers is missing", type);
	size_t i;
	json_t *c;
	json_array_foreach (containers, i, c) {
		const char *name = json_string_value(json_object_get(c, "name"));
		if (!name || strcmp(name, TF_CONTAINER) != 0)
			continue;
		*port = TF_DEFAULT_PORT;
		size_t j;
		json_t *p;
		json_array_foreach (json_object_get(c, "ports"), j, p) {
			const char *pn = json_string_value(json_object_get(p, "name"));
			json_t *cp = json_object_get(p, "containerPort");
			if (pn && !strcmp(pn, TF_PORT_NAME)) {
				if (!json_is_integer(cp) || json_integer_value(cp) < 1 ||
				    json_integer_value(cp) > 65535)
					return drake_errorf(
					    DRAKE_EINVAL, msg, msglen,
					    "tfReplicaSpecs.%s: tfjob-port is not a port number",
					    type);
				*port = (int)json_integer_value(cp);
			}
		}
		return DRAKE_OK;
	}
	return drake_errorf(DRAKE_EINVAL, msg, msglen,
	                    "tfReplicaSpecs.%s: no container named \"tensorflow\"", type);
}

static drake_err decode_replicas(json_t *specs, struct tfjob *job, char *msg, size_t msglen)
{
	if (!json_is_object(specs) || json_object_size(specs) == 0)
		return drake_errorf(DRAKE_EINVAL, msg, msglen, "spec.tfReplicaSpecs is missing");
	const char *key;
	json_t *rs;
	json_object_foreach (specs, key, rs) {
		enum tf_rtype t;
		if (!parse_type(key, &t))
			return drake_errorf(DRAKE_EINVAL, msg, msglen,
			                    "tfReplicaSpecs: unknown replica type %.40s", key);
		struct tf_replica_spec *r = &job->rs[t];
		if (r->present)
			return drake_errorf(DRAKE_EINVAL, msg, msglen,
			                    "tfReplicaSpecs: replica type %s given twice",
			                    NAMES[t]);
		if (!json_is_object(rs))
			return drake_errorf(DRAKE_EINVAL, msg, msglen,
			                    "tfReplicaSpecs.%s is not an object", NAMES[t]);
		r->present = true;
		long n = 1;
		char what[64];
		snprintf(what, sizeof(what), "tfReplicaSpecs.%s.replicas", NAMES[t]);
		drake_err e = get_int(json_object_get(rs, "replicas"), what, 0,
		                      (t == TF_CHIEF || t == TF_EVALUATOR) ? 1 : TF_MAX_REPLICAS,
		                      &n, msg, msglen);
		if (e != DRAKE_OK)
			return e;
		r->replicas = (int)n;
		const char *rp = json_string_value(json_object_get(rs, "restartPolicy"));
		if (!rp || !strcmp(rp, "Never") || !*rp)
			r->restart = TF_RESTART_NEVER;
		else if (!strcmp(rp, "OnFailure"))
			r->restart = TF_RESTART_ON_FAILURE;
		else if (!strcmp(rp, "Always"))
			r->restart = TF_RESTART_ALWAYS;
		else if (!strcmp(rp, "ExitCode"))
			r->restart = TF_RESTART_EXIT_CODE;
		else
			return drake_errorf(DRAKE_EINVAL, msg, msglen,
			                    "tfReplicaSpecs.%s.restartPolicy %.20s is not Always, "
			                    "OnFailure, Never or ExitCode",
			                    NAMES[t], rp);
		json_t *tmpl = json_object_get(rs, "template");
		e = check_template(tmpl, NAMES[t], &r->port, msg, msglen);
		if (e != DRAKE_OK)
			return e;
		r->tmpl = tmpl;
	}
	if (!job->rs[TF_WORKER].present && !job->rs[TF_CHIEF].present)
		return drake_errorf(DRAKE_EINVAL, msg, msglen,
		                    "tfReplicaSpecs needs a Worker or a Chief replica");
	return DRAKE_OK;
}

/* runPolicy.X in the Kubeflow layout, spec.X in DRAGON's. */
static json_t *policy(json_t *spec, const char *key)
{
	json_t *rp = json_object_get(spec, "runPolicy");
	json_t *v = json_object_get(rp, key);
	return v ? v : json_object_get(spec, key);
}

static drake_err decode_policies(json_t *spec, struct tfjob *job, char *msg, size_t msglen)
{
	job->dragon_layout = json_object_get(spec, "runPolicy") == NULL;
	const char *cp = json_string_value(policy(spec, "cleanPodPolicy"));
	/* Kubeflow's TFJob defaults to None, DRAGON's to Running */
	job->clean = job->dragon_layout ? TF_CLEAN_RUNNING : TF_CLEAN_NONE;
	if (cp && !strcmp(cp, "All"))
		job->clean = TF_CLEAN_ALL;
	else if (cp && !strcmp(cp, "Running"))
		job->clean = TF_CLEAN_RUNNING;
	else if (cp && !strcmp(cp, "None"))
		job->clean = TF_CLEAN_NONE;
	else if (cp)
		return drake_errorf(DRAKE_EINVAL, msg, msglen,
		                    "cleanPodPolicy %.20s is not All, Running or None", cp);
	long v = -1;
	drake_err e = get_int(policy(spec, "ttlSecondsAfterFinished"), "ttlSecondsAfterFinished", 0,
	                      365L * 86400, &v, msg, msglen);
	job->ttl_s = v;
	v = -1;
	if (e == DRAKE_OK)
		e = get_int(policy(spec, "activeDeadlineSeconds"), "activeDeadlineSeconds", 1,
		            365L * 86400, &v, msg, msglen);
	job->deadline_s = v;
	v = -1;
	if (e == DRAKE_OK)
		e = get_int(policy(spec, "backoffLimit"), "backoffLimit", 0, 1000000, &v, msg,
		            msglen);
	job->backoff_limit = (int)v;
	if (e != DRAKE_OK)
		return e;
	job->suspend = json_is_true(policy(spec, "suspend"));
	job->dynamic_worker = json_is_true(json_object_get(spec, "enableDynamicWorker"));
	const char *sp = json_string_value(json_object_get(spec, "successPolicy"));
	if (sp && *sp && strcmp(sp, "AllWorkers") != 0)
		return drake_errorf(DRAKE_EINVAL, msg, msglen,
		                    "successPolicy %.20s is not \"\" or AllWorkers", sp);
	job->all_workers = sp && !strcmp(sp, "AllWorkers");
	return DRAKE_OK;
}

/* runPolicy.schedulingPolicy (Kubeflow's gang settings). queue and
 * minResources are read by Volcano and scheduler-plugins only: drake's
 * queue is FIFO over every TFJob and its planner computes what a gang
 * needs, so both are ignored (README, "Kubeflow's gang fields"). */
static drake_err decode_scheduling(json_t *spec, struct tfjob *job, char *msg, size_t msglen)
{
	job->min_available = -1;
	job->schedule_timeout_s = -1;
	json_t *sp = json_object_get(json_object_get(spec, "runPolicy"), "schedulingPolicy");
	if (!sp || json_is_null(sp))
		return DRAKE_OK;
	if (!json_is_object(sp))
		return drake_errorf(DRAKE_EINVAL, msg, msglen,
		                    "runPolicy.schedulingPolicy must be an object");
	long v = -1;
	drake_err e =
	    get_int(json_object_get(sp, "minAvailable"), "runPolicy.schedulingPolicy.minAvailable",
	            0, 3 * TF_MAX_REPLICAS, &v, msg, msglen);
	job->min_available = (int)v;
	v = -1;
	if (!e)
		e = get_int(json_object_get(sp, "scheduleTimeoutSeconds"),
		            "runPolicy.schedulingPolicy.scheduleTimeoutSeconds", 1, 365L * 86400,
		            &v, msg, msglen);
	job->schedule_timeout_s = v;
	if (e)
		return e;
	json_t *pc = json_object_get(sp, "priorityClass");
	if (pc && !json_is_null(pc)) {
		const char *s = json_string_value(pc);
		if (!s || (*s && (strlen(s) >= sizeof(job->priority_class) || !kube_name_valid(s))))
			return drake_errorf(
			    DRAKE_EINVAL, msg, msglen,
			    "runPolicy.schedulingPolicy.priorityClass must be the name "
			    "of a PriorityClass");
		snprintf(job->priority_class, sizeof(job->priority_class), "%s", s);
	}
	return DRAKE_OK;
}

/* minAvailable counts the gang's pods: every PS and the chief, which a job
 * cannot run without, plus the workers it needs. An evaluator is no part of
 * the gang (it starts at once), so a minAvailable that counts it (Kubeflow's
 * default is every replica) is read without it. */
static drake_err min_from_available(const struct tfjob *job, long *lo, char *msg, size_t msglen)
{
	long ps = job->rs[TF_PS].present ? job->rs[TF_PS].replicas : 0;
	long chief = job->rs[TF_CHIEF].present && job->rs[TF_CHIEF].replicas > 0 ? 1 : 0;
	long workers = job->rs[TF_WORKER].present ? job->rs[TF_WORKER].replicas : 0;
	long eval = job->rs[TF_EVALUATOR].present ? job->rs[TF_EVALUATOR].replicas : 0;
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

static drake_err decode_instances(json_t *spec, struct tfjob *job, char *msg, size_t msglen)
{
	long workers = job->rs[TF_WORKER].present ? job->rs[TF_WORKER].replicas : 0;
	long lo = workers, hi = workers;
	drake_err e = DRAKE_OK;
	json_t *mi = json_object_get(spec, "min-instances");
	if (job->min_available >= 0 && (!mi || json_is_null(mi)))
		e = min_from_available(job, &lo, msg, msglen);
	if (!e)
		e = get_int(mi, "spec.min-instances", 0, TF_MAX_REPLICAS, &lo, msg, msglen);
	if (e == DRAKE_OK)
		e = get_int(json_object_get(spec, "max-instances"), "spec.max-instances", 0,
		            TF_MAX_REPLICAS, &hi, msg, msglen);
	if (e != DRAKE_OK)
		return e;
	if (job->min_available >= 0 && mi && !json_is_null(mi)) {
		long ps = job->rs[TF_PS].present ? job->rs[TF_PS].replicas : 0;
		long chief = job->rs[TF_CHIEF].present && job->rs[TF_CHIEF].replicas > 0 ? 1 : 0;
		long eval = job->rs[TF_EVALUATOR].present ? job->rs[TF_EVALUATOR].replicas : 0;
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
	if (!job->rs[TF_WORKER].present && hi > 0)
		return drake_errorf(DRAKE_EINVAL, msg, msglen,
		                    "spec.max-instances is set but there is no Worker replica");
	job->min_instances = (int)lo;
	job->max_instances = (int)hi;
	return DRAKE_OK;
}

static drake_err copy_meta(const char *what, const char *s, char *dst, size_t len, char *msg,
                           size_t msglen)
{
	if (!s || !*s || strlen(s) >= len)
		return drake_errorf(DRAKE_EINVAL, msg, msglen, "metadata.%s is missing or too long",
		                    what);
	memcpy(dst, s, strlen(s) + 1);
	return DRAKE_OK;
}

drake_err tfjob_decode(const struct json_t *obj, struct tfjob *job, bool *managed, char *msg,
                       size_t msglen)
{
	memset(job, 0, sizeof(*job));
	*managed = true;
	json_t *o = (json_t *)obj;
	json_t *meta = json_object_get(o, "metadata");
	const char *name = json_string_value(json_object_get(meta, "name"));
	drake_err e = copy_meta("namespace", json_string_value(json_object_get(meta, "namespace")),
	                        job->ns, sizeof(job->ns), msg, msglen);
	if (e == DRAKE_OK)
		e = copy_meta("uid", json_string_value(json_object_get(meta, "uid")), job->uid,
		              sizeof(job->uid), msg, msglen);
	if (e != DRAKE_OK)
		return e;
	json_t *spec = json_object_get(o, "spec");
	const char *mb =
	    json_string_value(json_object_get(json_object_get(spec, "runPolicy"), "managedBy"));
	if (mb && *mb && strcmp(mb, TF_MANAGED_BY_DRAKE) != 0) {
		*managed = false;
		return DRAKE_OK;
	}
	/* pods are "<job>-evaluator-999" and services must be DNS-1035 labels */
	if (!name || strlen(name) > TF_JOB_NAME_MAX || !kube_name_valid(name) ||
	    strchr(name, '.') || name[0] < 'a' || name[0] > 'z')
		return drake_errorf(
		    DRAKE_EINVAL, msg, msglen,
		    "metadata.name must be a DNS-1035 label of at most %d characters "
		    "(it prefixes every replica's service name)",
		    TF_JOB_NAME_MAX);
	memcpy(job->name, name, strlen(name) + 1);
	if (!json_is_object(spec))
		return drake_errorf(DRAKE_EINVAL, msg, msglen, "spec is missing");
	if ((e = decode_replicas(json_object_get(spec, "tfReplicaSpecs"), job, msg, msglen)))
		return e;
	if ((e = decode_policies(spec, job, msg, msglen)))
		return e;
	if ((e = decode_scheduling(spec, job, msg, msglen)))
		return e;
	tf_refusal_decode(json_string_value(json_object_get(json_object_get(meta, "annotations"),
	                                                    TF_ANNOTATION_UNSCHEDULABLE)),
	                  &job->refusal);
	return decode_instances(spec, job, msg, msglen);
}

char *tf_refusal_value(const struct tf_refusal *r)
{
	json_t *o = json_pack("{s:i,s:I,s:I,s:s,s:s}", "tries", r->tries, "at", (json_int_t)r->at_s,
	                      "until", (json_int_t)r->until_s, "pod", r->pod, "why", r->why);
	char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	return s;
}

bool tf_refusal_decode(const char *value, struct tf_refusal *r)
{
	memset(r, 0, sizeof(*r));
	json_t *o = value ? json_loads(value, 0, NULL) : NULL;
	json_t *tries = json_object_get(o, "tries"), *at = json_object_get(o, "at"),
	       *until = json_object_get(o, "until");
	const char *pod = json_string_value(json_object_get(o, "pod"));
	const char *why = json_string_value(json_object_get(o, "why"));
	bool ok = json_is_integer(tries) && json_integer_value(tries) > 0 &&
	          json_integer_value(tries) < 1000000 && json_is_number(at) &&
	          json_is_number(until) && pod && why;
	if (ok) {
		r->tries = (int)json_integer_value(tries);
		r->at_s = json_number_value(at);
		r->until_s = json_number_value(until);
		snprintf(r->pod, sizeof(r->pod), "%s", pod);
		snprintf(r->why, sizeof(r->why), "%s", why);
	}
	json_decref(o);
	return ok;
}
