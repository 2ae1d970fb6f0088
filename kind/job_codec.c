/*
 * job_codec.c - the replica naming rules of every kind and the parts of
 * Kubeflow's job API the kinds share, decoded into struct job (a codec
 * file: jansson lives here). Validation failures become the job's Failed
 * condition, so every message names the field.
 *
 * Ownership: see job.h (templates are borrowed from the decoded object).
 */
#include "kind/job_codec.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>
#include <math.h>

#include "gang/roles.h"
#include "kube/object.h"

static const char *const LOWER[JOB_NTYPES] = {"chief", "ps", "worker", "evaluator"};
static const char *const NAMES[JOB_NTYPES] = {"Chief", "PS", "Worker", "Evaluator"};

const char *job_rtype_lower(enum job_rtype t)
{
	return t < JOB_NTYPES ? LOWER[t] : "?";
}

const char *job_rtype_name(enum job_rtype t)
{
	return t < JOB_NTYPES ? NAMES[t] : "?";
}

const char *job_type_name(const struct job *job, enum job_rtype t)
{
	if (t < JOB_NTYPES && job->kind && job->kind->type_name[t])
		return job->kind->type_name[t];
	return job_rtype_name(t);
}

const char *job_type_lower(const struct job *job, enum job_rtype t)
{
	if (t < JOB_NTYPES && job->kind && job->kind->type_lower[t])
		return job->kind->type_lower[t];
	return job_rtype_lower(t);
}

int job_role_of_type_name(const char *t)
{
	if (!t)
		return -1;
	if (!strcasecmp(t, "ps"))
		return DRAKE_ROLE_PS;
	if (!strcasecmp(t, "worker"))
		return DRAKE_ROLE_WORKER;
	if (!strcasecmp(t, "chief") || !strcasecmp(t, "master"))
		return DRAKE_ROLE_CHIEF;
	return -1;
}

const char *job_type_name_of_role(int r)
{
	switch (r) {
	case DRAKE_ROLE_PS: return "PS";
	case DRAKE_ROLE_CHIEF: return "Chief";
	case DRAKE_ROLE_WORKER: return "Worker";
	default: return NULL;
	}
}

int job_role_of(enum job_rtype t)
{
	return job_role_of_type_name(job_rtype_name(t));
}

enum job_rtype job_rtype_of_role(int r)
{
	const char *name = job_type_name_of_role(r);
	for (int t = 0; name && t < JOB_NTYPES; t++)
		if (!strcmp(NAMES[t], name))
			return (enum job_rtype)t;
	return JOB_WORKER;
}

int job_replica_slots(const struct job *job, enum job_rtype t)
{
	if (!job->rs[t].present)
		return 0;
	return t == JOB_WORKER ? job->max_instances : job->rs[t].replicas;
}

bool job_replica_starts(const struct job *job, enum job_rtype t, int index)
{
	return t != JOB_WORKER || index < job->rs[JOB_WORKER].replicas;
}

bool job_is_master_role(const struct job *job, enum job_rtype t, int index)
{
	if (job->rs[JOB_CHIEF].present)
		return t == JOB_CHIEF && index == 0;
	return t == JOB_WORKER && index == 0;
}

drake_err job_replica_name(const struct job *job, enum job_rtype t, int index, char *buf,
                           size_t len)
{
	if (t >= JOB_NTYPES || index < 0 || index >= JOB_MAX_REPLICAS)
		return DRAKE_EINVAL;
	int n = snprintf(buf, len, "%s-%s-%d", job->name, job_type_lower(job, t), index);
	if (n < 0 || (size_t)n >= len || n > JOB_SERVICE_NAME_MAX)
		return DRAKE_ELIMIT;
	return DRAKE_OK;
}

drake_err job_decode(const struct job_kind *kind, const struct json_t *obj, struct job *job,
                     bool *managed, char *msg, size_t msglen)
{
	return kind->decode(obj, job, managed, msg, msglen);
}

const struct job_kind *job_kind_named(const struct job_kind *const *kinds, size_t n,
                                      const char *name)
{
	for (size_t i = 0; name && i < n; i++)
		if (!strcmp(kinds[i]->kind, name))
			return kinds[i];
	return NULL;
}

/* A spec key's type: the kind's names in any case, and "Master" for a
 * chief the kind calls otherwise (TFJob's legacy alias). */
static bool parse_type(const struct job_kind *k, const char *key, enum job_rtype *t)
{
	for (int i = 0; i < JOB_NTYPES; i++) {
		if (k->type_name[i] && !strcasecmp(key, k->type_name[i])) {
			*t = (enum job_rtype)i;
			return true;
		}
	}
	if (k->type_name[JOB_CHIEF] && !strcasecmp(key, "master")) {
		*t = JOB_CHIEF;
		return true;
	}
	return false;
}

drake_err job_get_int(const json_t *v, const char *what, long lo, long hi, long *out, char *msg,
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

/* Finds the kind's container and its port. */
static drake_err check_template(const struct job_kind *k, json_t *tmpl, const char *key,
                                const char *type, int *port, char *msg, size_t msglen)
{
	json_t *containers = json_object_get(json_object_get(tmpl, "spec"), "containers");
	if (!json_is_array(containers) || json_array_size(containers) == 0)
		return drake_errorf(DRAKE_EINVAL, msg, msglen,
		                    "%s.%s.template.spec.containers is missing", key, type);
	size_t i;
	json_t *c;
	json_array_foreach (containers, i, c) {
		const char *name = json_string_value(json_object_get(c, "name"));
		if (!name || strcmp(name, k->container) != 0)
			continue;
		*port = k->default_port;
		size_t j;
		json_t *p;
		json_array_foreach (json_object_get(c, "ports"), j, p) {
			const char *pn = json_string_value(json_object_get(p, "name"));
			json_t *cp = json_object_get(p, "containerPort");
			if (pn && !strcmp(pn, k->port_name)) {
				if (!json_is_integer(cp) || json_integer_value(cp) < 1 ||
				    json_integer_value(cp) > 65535)
					return drake_errorf(DRAKE_EINVAL, msg, msglen,
					                    "%s.%s: %s is not a port number", key,
					                    type, k->port_name);
				*port = (int)json_integer_value(cp);
			}
		}
		return DRAKE_OK;
	}
	return drake_errorf(DRAKE_EINVAL, msg, msglen, "%s.%s: no container named \"%s\"", key,
	                    type, k->container);
}

static drake_err restart_policy(const char *rp, enum job_restart dflt, enum job_restart *out)
{
	if (!rp || !*rp)
		*out = dflt;
	else if (!strcmp(rp, "Never"))
		*out = JOB_RESTART_NEVER;
	else if (!strcmp(rp, "OnFailure"))
		*out = JOB_RESTART_ON_FAILURE;
	else if (!strcmp(rp, "Always"))
		*out = JOB_RESTART_ALWAYS;
	else if (!strcmp(rp, "ExitCode"))
		*out = JOB_RESTART_EXIT_CODE;
	else
		return DRAKE_EINVAL;
	return DRAKE_OK;
}

drake_err job_decode_replicas(const json_t *specs_, const char *key, struct job *job, char *msg,
                              size_t msglen)
{
	json_t *specs = json_object_get(specs_, key);
	const struct job_kind *k = job->kind;
	if (!json_is_object(specs) || json_object_size(specs) == 0)
		return drake_errorf(DRAKE_EINVAL, msg, msglen, "spec.%s is missing", key);
	const char *type;
	json_t *rs;
	json_object_foreach (specs, type, rs) {
		enum job_rtype t;
		if (!parse_type(k, type, &t))
			return drake_errorf(DRAKE_EINVAL, msg, msglen,
			                    "%s: unknown replica type %.40s", key, type);
		const char *tn = job_type_name(job, t);
		struct job_replica_spec *r = &job->rs[t];
		if (r->present)
			return drake_errorf(DRAKE_EINVAL, msg, msglen,
			                    "%s: replica type %s given twice", key, tn);
		if (!json_is_object(rs))
			return drake_errorf(DRAKE_EINVAL, msg, msglen, "%s.%s is not an object",
			                    key, tn);
		r->present = true;
		long n = 1;
		char what[64];
		snprintf(what, sizeof(what), "%s.%s.replicas", key, tn);
		drake_err e = job_get_int(
		    json_object_get(rs, "replicas"), what, 0,
		    (t == JOB_CHIEF || t == JOB_EVALUATOR) ? 1 : JOB_MAX_REPLICAS, &n, msg, msglen);
		if (e != DRAKE_OK)
			return e;
		r->replicas = (int)n;
		const char *rp = json_string_value(json_object_get(rs, "restartPolicy"));
		if (restart_policy(rp, k->default_restart, &r->restart) != DRAKE_OK)
			return drake_errorf(DRAKE_EINVAL, msg, msglen,
			                    "%s.%s.restartPolicy %.20s is not Always, "
			                    "OnFailure, Never or ExitCode",
			                    key, tn, rp);
		json_t *tmpl = json_object_get(rs, "template");
		e = check_template(k, tmpl, key, tn, &r->port, msg, msglen);
		if (e != DRAKE_OK)
			return e;
		r->tmpl = tmpl;
	}
	if (!job->rs[JOB_WORKER].present && !job->rs[JOB_CHIEF].present)
		return drake_errorf(DRAKE_EINVAL, msg, msglen, "%s needs a %s or a %s replica", key,
		                    job_type_name(job, JOB_WORKER), job_type_name(job, JOB_CHIEF));
	return DRAKE_OK;
}

/* runPolicy.X, or spec.X with top_level (DRAGON's layout). */
static json_t *policy(const json_t *spec, bool top_level, const char *key)
{
	json_t *v = json_object_get(json_object_get(spec, "runPolicy"), key);
	return v || !top_level ? v : json_object_get(spec, key);
}

drake_err job_decode_run_policy(const json_t *spec, bool top_level, enum job_clean clean,
                                struct job *job, char *msg, size_t msglen)
{
	const char *cp = json_string_value(policy(spec, top_level, "cleanPodPolicy"));
	job->clean = clean;
	if (cp && !strcmp(cp, "All"))
		job->clean = JOB_CLEAN_ALL;
	else if (cp && !strcmp(cp, "Running"))
		job->clean = JOB_CLEAN_RUNNING;
	else if (cp && !strcmp(cp, "None"))
		job->clean = JOB_CLEAN_NONE;
	else if (cp)
		return drake_errorf(DRAKE_EINVAL, msg, msglen,
		                    "cleanPodPolicy %.20s is not All, Running or None", cp);
	long v = -1;
	drake_err e = job_get_int(policy(spec, top_level, "ttlSecondsAfterFinished"),
	                          "ttlSecondsAfterFinished", 0, 365L * 86400, &v, msg, msglen);
	job->ttl_s = v;
	v = -1;
	if (e == DRAKE_OK)
		e = job_get_int(policy(spec, top_level, "activeDeadlineSeconds"),
		                "activeDeadlineSeconds", 1, 365L * 86400, &v, msg, msglen);
	job->deadline_s = v;
	v = -1;
	if (e == DRAKE_OK)
		e = job_get_int(policy(spec, top_level, "backoffLimit"), "backoffLimit", 0, 1000000,
		                &v, msg, msglen);
	job->backoff_limit = (int)v;
	if (e != DRAKE_OK)
		return e;
	job->suspend = json_is_true(policy(spec, top_level, "suspend"));
	return DRAKE_OK;
}

drake_err job_decode_scheduling(const json_t *spec, struct job *job, char *msg, size_t msglen)
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
	drake_err e = job_get_int(json_object_get(sp, "minAvailable"),
	                          "runPolicy.schedulingPolicy.minAvailable", 0,
	                          3 * JOB_MAX_REPLICAS, &v, msg, msglen);
	job->min_available = (int)v;
	v = -1;
	if (!e)
		e = job_get_int(json_object_get(sp, "scheduleTimeoutSeconds"),
		                "runPolicy.schedulingPolicy.scheduleTimeoutSeconds", 1,
		                365L * 86400, &v, msg, msglen);
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

static drake_err copy_meta(const char *what, const char *s, char *dst, size_t len, char *msg,
                           size_t msglen)
{
	if (!s || !*s || strlen(s) >= len)
		return drake_errorf(DRAKE_EINVAL, msg, msglen, "metadata.%s is missing or too long",
		                    what);
	memcpy(dst, s, strlen(s) + 1);
	return DRAKE_OK;
}

drake_err job_decode_meta(const json_t *obj, const struct job_kind *kind, struct job *job,
                          bool *managed, char *msg, size_t msglen)
{
	memset(job, 0, sizeof(*job));
	job->kind = kind;
	*managed = true;
	json_t *meta = json_object_get(obj, "metadata");
	const char *name = json_string_value(json_object_get(meta, "name"));
	drake_err e = copy_meta("namespace", json_string_value(json_object_get(meta, "namespace")),
	                        job->ns, sizeof(job->ns), msg, msglen);
	if (e == DRAKE_OK)
		e = copy_meta("uid", json_string_value(json_object_get(meta, "uid")), job->uid,
		              sizeof(job->uid), msg, msglen);
	if (e != DRAKE_OK)
		return e;
	json_t *spec = json_object_get(obj, "spec");
	const char *mb =
	    json_string_value(json_object_get(json_object_get(spec, "runPolicy"), "managedBy"));
	if (mb && *mb && strcmp(mb, kind->managed_by) != 0) {
		*managed = false;
		return DRAKE_OK;
	}
	/* pods are "<job>-evaluator-999" and services must be DNS-1035 labels */
	if (!name || strlen(name) > JOB_NAME_MAX || !kube_name_valid(name) || strchr(name, '.') ||
	    name[0] < 'a' || name[0] > 'z')
		return drake_errorf(
		    DRAKE_EINVAL, msg, msglen,
		    "metadata.name must be a DNS-1035 label of at most %d characters "
		    "(it prefixes every replica's service name)",
		    JOB_NAME_MAX);
	memcpy(job->name, name, strlen(name) + 1);
	if (!json_is_object(spec))
		return drake_errorf(DRAKE_EINVAL, msg, msglen, "spec is missing");
	job->spec = spec;
	json_t *ann = json_object_get(meta, "annotations");
	job_refusal_decode(json_string_value(json_object_get(ann, JOB_ANNOTATION_UNSCHEDULABLE)),
	                   &job->refusal);
	job_preempted_decode(json_string_value(json_object_get(ann, JOB_ANNOTATION_PREEMPTED)),
	                     job);
	return DRAKE_OK;
}

char *job_preempted_value(double at, double service, const char *why)
{
	json_t *o = json_pack("{s:I,s:f,s:s}", "at", (json_int_t)at, "service",
	                      isfinite(service) && service > 0 ? service : 0.0, "why", why);
	char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	return s;
}

bool job_preempted_decode(const char *value, struct job *job)
{
	job->preempted[0] = 0;
	job->preempted_at = job->preempted_service = 0;
	json_t *o = value ? json_loads(value, 0, NULL) : NULL;
	json_t *at = json_object_get(o, "at"), *service = json_object_get(o, "service");
	const char *why = json_string_value(json_object_get(o, "why"));
	bool ok = json_is_number(at) && json_number_value(at) > 0 && why && *why;
	if (ok) {
		job->preempted_at = json_number_value(at);
		double s = json_is_number(service) ? json_number_value(service) : 0;
		job->preempted_service = isfinite(s) && s > 0 ? s : 0;
		snprintf(job->preempted, sizeof(job->preempted), "%s", why);
	}
	json_decref(o);
	return ok;
}

char *job_refusal_value(const struct job_refusal *r)
{
	/* at and until keep the second's fraction: a node or claim change
	 * earlier in the same second than the refusal must not count as one
	 * after it (drake_refusal_may_retry compares them) */
	json_t *o = json_pack("{s:i,s:f,s:f,s:s,s:s}", "tries", r->tries, "at", r->at_s, "until",
	                      r->until_s, "pod", r->pod, "why", r->why);
	char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	return s;
}

bool job_refusal_decode(const char *value, struct job_refusal *r)
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
