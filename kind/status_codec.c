/*
 * status_codec.c - reads a job's status and builds the merge patch for its
 * status subresource from a verdict (a codec file: jansson lives here).
 * Conditions follow Kubeflow: Created first; the current state's condition
 * is True and last (kubectl's State column reads the last one); a state left
 * behind is kept with status False. A patch is built only when something a
 * user can see changed, so an idle job causes no writes.
 *
 * Ownership: patches are malloc'd JSON the caller frees.
 */
#include "kind/pod_codec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

static void rfc3339(long t, char buf[32])
{
	time_t tt = (time_t)t;
	struct tm tm;
	gmtime_r(&tt, &tm);
	strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static long parse_time(const char *s)
{
	if (!s)
		return -1;
	struct tm tm;
	memset(&tm, 0, sizeof(tm));
	const char *end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!end)
		return -1;
	return (long)timegm(&tm);
}

static json_t *condition(json_t *conds, const char *type)
{
	size_t i;
	json_t *c;
	json_array_foreach (conds, i, c) {
		const char *t = json_string_value(json_object_get(c, "type"));
		if (t && !strcmp(t, type))
			return c;
	}
	return NULL;
}

static bool is_true(json_t *c)
{
	const char *s = json_string_value(json_object_get(c, "status"));
	return s && !strcmp(s, "True");
}

void job_status_read(const struct json_t *job_obj, long now, bool *final, long *since_start,
                     long *since_done)
{
	json_t *st = json_object_get(job_obj, "status");
	json_t *conds = json_object_get(st, "conditions");
	*final = is_true(condition(conds, "Succeeded")) || is_true(condition(conds, "Failed"));
	long s = parse_time(json_string_value(json_object_get(st, "startTime")));
	long d = parse_time(json_string_value(json_object_get(st, "completionTime")));
	*since_start = s < 0 ? -1 : now - s;
	*since_done = d < 0 ? -1 : now - d;
}

int job_restart_count(const struct json_t *job_obj)
{
	const char *v = json_string_value(
	    json_object_get(json_object_get(json_object_get(job_obj, "metadata"), "annotations"),
	                    JOB_ANNOTATION_RESTARTS));
	if (!v || strspn(v, "0123456789") != strlen(v) || strlen(v) > 7)
		return 0;
	return atoi(v);
}

static json_t *new_condition(const char *type, bool status, const char *reason, const char *message,
                             const char *now)
{
	return json_pack("{s:s,s:s,s:s,s:s,s:s,s:s}", "type", type, "status",
	                 status ? "True" : "False", "reason", reason, "message", message,
	                 "lastUpdateTime", now, "lastTransitionTime", now);
}

/* Sets type to True as the last condition; other state conditions that were
 * True become False. Returns the new array (a fresh copy). */
static json_t *conditions_with(json_t *old, const char *type, const char *reason,
                               const char *message, const char *now)
{
	static const char *const STATES[] = {"Running", "Restarting", "Succeeded", "Failed",
	                                     "Suspended"};
	json_t *out = json_array();
	size_t i;
	json_t *c;
	json_array_foreach (old, i, c) {
		const char *t = json_string_value(json_object_get(c, "type"));
		if (!t || !strcmp(t, type))
			continue;
		json_t *copy = json_deep_copy(c);
		for (size_t k = 0; k < sizeof(STATES) / sizeof(STATES[0]); k++) {
			if (!strcmp(t, STATES[k]) && is_true(c)) {
				json_object_set_new(copy, "status", json_string("False"));
				json_object_set_new(copy, "lastUpdateTime", json_string(now));
				json_object_set_new(copy, "lastTransitionTime", json_string(now));
			}
		}
		json_array_append_new(out, copy);
	}
	json_array_append_new(out, new_condition(type, true, reason, message, now));
	return out;
}

/* conds with condition type last and True while on (with message), or
 * without it when off; conds is consumed, the result returned. */
static json_t *last_while(json_t *conds, const char *type, const char *reason, bool on,
                          const char *message, const char *ts)
{
	json_t *cur = condition(conds, type);
	if (on) {
		const char *om = json_string_value(json_object_get(cur, "message"));
		if (!cur || !is_true(cur) || !om || strcmp(om, message) != 0 ||
		    json_array_get(conds, json_array_size(conds) - 1) != cur) {
			json_t *next = conditions_with(conds, type, reason, message, ts);
			json_decref(conds);
			return next;
		}
	} else if (cur) {
		size_t i;
		json_t *c;
		json_array_foreach (conds, i, c)
			if (c == cur) {
				json_array_remove(conds, i);
				break;
			}
	}
	return conds;
}

static json_t *replica_statuses(const struct job *job, const struct job_verdict *v)
{
	json_t *rs = json_object();
	for (int t = 0; t < JOB_NTYPES; t++) {
		if (!job->rs[t].present)
			continue;
		char sel[512];
		snprintf(sel, sizeof(sel), "%s=%s,%s=%s,%s=%s", JOB_LABEL_OPERATOR,
		         job->kind->operator_name, JOB_LABEL_JOB, job->name, JOB_LABEL_TYPE,
		         job_type_lower(job, (enum job_rtype)t));
		json_object_set_new(rs, job_type_name(job, (enum job_rtype)t),
		                    json_pack("{s:i,s:i,s:i,s:s}", "active", v->rs[t].active,
		                              "succeeded", v->rs[t].succeeded, "failed",
		                              v->rs[t].failed, "selector", sel));
	}
	return rs;
}

static char *dump_patch(json_t *status)
{
	json_t *p = json_pack("{s:o}", "status", status);
	char *s = p ? json_dumps(p, JSON_COMPACT) : NULL;
	json_decref(p);
	return s;
}

char *job_status_patch(const struct json_t *job_obj, const struct job *job,
                       const struct job_verdict *v, long now)
{
	char ts[32];
	rfc3339(now, ts);
	json_t *old = json_object_get(job_obj, "status");
	json_t *old_conds = json_object_get(old, "conditions");
	json_t *conds = json_deep_copy(json_is_array(old_conds) ? old_conds : NULL);
	if (!conds)
		conds = json_array();
	if (!condition(conds, "Created")) {
		char m[400];
		char why[64];
		snprintf(m, sizeof(m), "%s %s/%s is created.", job->kind->kind, job->ns, job->name);
		snprintf(why, sizeof(why), "%sCreated", job->kind->kind);
		json_array_insert_new(conds, 0, new_condition("Created", true, why, m, ts));
	}
	/* Unschedulable (kube-scheduler refused the job's wave) and Preempted
	 * (drake stopped it for jobs ahead of it) are last while True, so
	 * kubectl's State column shows them, and removed once they no longer
	 * hold (a False one last would still show). */
	conds = last_while(conds, "Unschedulable", "GangUnschedulable", v->unschedulable,
	                   v->unschedulable_msg, ts);
	conds = last_while(conds, "Preempted", "GangPreempted", v->preempted, v->preempted_msg, ts);
	const char *type = job_state_name(v->state);
	json_t *cur = condition(conds, type);
	size_t n = json_array_size(conds);
	const char *reason = json_string_value(json_object_get(cur, "reason"));
	bool already = cur && is_true(cur) && json_array_get(conds, n - 1) == cur && reason &&
	               !strcmp(reason, v->reason);
	if (v->state != JOB_STATE_CREATED && !already) {
		json_t *next = conditions_with(conds, type, v->reason, v->message, ts);
		json_decref(conds);
		conds = next;
	}
	/* resumed (Kubeflow): Suspended turns False and the clock starts again */
	json_t *susp = condition(conds, "Suspended");
	bool resumed = v->state != JOB_STATE_SUSPENDED && susp && is_true(susp);
	if (resumed) {
		char m[400];
		char why[64];
		snprintf(m, sizeof(m), "%s %s/%s is resumed.", job->kind->kind, job->ns, job->name);
		snprintf(why, sizeof(why), "%sResumed", job->kind->kind);
		json_object_set_new(susp, "status", json_string("False"));
		json_object_set_new(susp, "reason", json_string(why));
		json_object_set_new(susp, "message", json_string(m));
		json_object_set_new(susp, "lastUpdateTime", json_string(ts));
		json_object_set_new(susp, "lastTransitionTime", json_string(ts));
	}
	json_t *st = json_object();
	json_object_set_new(st, "conditions", conds);
	json_object_set_new(st, "replicaStatuses", replica_statuses(job, v));
	json_t *start = resumed ? NULL : json_object_get(old, "startTime");
	json_object_set_new(st, "startTime", start ? json_incref(start) : json_string(ts));
	json_t *done = json_object_get(old, "completionTime");
	if (done)
		json_object_set(st, "completionTime", done);
	else if (job_state_final(v->state))
		json_object_set_new(st, "completionTime", json_string(ts));
	bool same = old && json_equal(json_object_get(old, "conditions"), conds) &&
	            json_equal(json_object_get(old, "replicaStatuses"),
	                       json_object_get(st, "replicaStatuses")) &&
	            start && (done || !job_state_final(v->state));
	if (same) {
		json_decref(st);
		return NULL;
	}
	return dump_patch(st);
}

char *job_status_invalid_patch(const struct json_t *job_obj, const struct job_kind *kind,
                               const char *message, long now)
{
	char ts[32];
	rfc3339(now, ts);
	json_t *old = json_object_get(job_obj, "status");
	json_t *old_conds = json_object_get(old, "conditions");
	json_t *f = condition(old_conds, "Failed");
	const char *om = json_string_value(json_object_get(f, "message"));
	if (f && is_true(f) && om && !strcmp(om, message))
		return NULL;
	char why[64];
	snprintf(why, sizeof(why), "%sFailedValidation", kind->kind);
	json_t *conds = conditions_with(old_conds, "Failed", why, message, ts);
	json_t *st = json_pack("{s:o,s:s}", "conditions", conds, "completionTime", ts);
	return st ? dump_patch(st) : NULL;
}

const char *job_status_current(const struct json_t *job_obj)
{
	json_t *conds = json_object_get(json_object_get(job_obj, "status"), "conditions");
	for (size_t i = json_array_size(conds); i > 0; i--) {
		json_t *c = json_array_get(conds, i - 1);
		if (is_true(c))
			return json_string_value(json_object_get(c, "type"));
	}
	return NULL;
}

char *job_annotation_patch(const char *key, const char *value)
{
	json_t *p =
	    value ? json_pack("{s:{s:{s:s}}}", "metadata", "annotations", key, value) : NULL;
	char *s = p ? json_dumps(p, JSON_COMPACT) : NULL;
	json_decref(p);
	return s;
}

char *job_restarts_patch(int n)
{
	char v[16];
	snprintf(v, sizeof(v), "%d", n);
	return job_annotation_patch(JOB_ANNOTATION_RESTARTS, v);
}

char *job_plan_patch(const char *gang, int n_ps, int n_chief, int n_workers,
                     const char *const *nodes, int n_pods)
{
	json_t *per_node = json_object();
	for (int i = 0; per_node && i < n_pods; i++) {
		json_t *c = json_object_get(per_node, nodes[i]);
		json_object_set_new(per_node, nodes[i],
		                    json_integer(c ? json_integer_value(c) + 1 : 1));
	}
	json_t *plan = per_node ? json_pack("{s:s,s:i,s:i,s:o}", "gang", gang, "ps", n_ps,
	                                    "workers", n_workers, "nodes", per_node)
	                        : NULL;
	if (plan && n_chief > 0)
		json_object_set_new(plan, "chief", json_integer(n_chief));
	char *value = plan ? json_dumps(plan, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(plan);
	char *s = job_annotation_patch(JOB_ANNOTATION_PLAN, value);
	free(value);
	return s;
}
