/*
 * tfconfig_json.c - builds TF_CONFIG (a codec file: it encodes with jansson).
 * Key order follows the replica type order chief, ps, worker, evaluator,
 * which jansson preserves, so the same job always yields the same bytes.
 *
 * Ownership: returns malloc'd strings; nothing is kept.
 */
#include "tfjob/tfconfig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

drake_err tf_endpoint(const struct job *job, enum job_rtype t, int index, const char *domain,
                      char *buf, size_t len)
{
	char name[JOB_SERVICE_NAME_MAX + 1];
	drake_err e = job_replica_name(job, t, index, name, sizeof(name));
	if (e != DRAKE_OK)
		return e;
	if (domain && strlen(domain) > TF_CLUSTER_DOMAIN_MAX)
		return DRAKE_ELIMIT;
	int n = snprintf(buf, len, "%s.%s.svc%s%s:%d", name, job->ns, domain && *domain ? "." : "",
	                 domain && *domain ? domain : "", job->rs[t].port);
	return n < 0 || (size_t)n >= len ? DRAKE_ELIMIT : DRAKE_OK;
}

bool tf_config_wanted(const struct job *job)
{
	int total = 0;
	for (int t = 0; t < JOB_NTYPES; t++)
		total += job_replica_slots(job, (enum job_rtype)t);
	return total != 1;
}

static json_t *endpoints(const struct job *job, enum job_rtype t, const char *domain,
                         bool sparse_index, int only)
{
	json_t *v = sparse_index ? json_object() : json_array();
	int n = job_replica_slots(job, t);
	for (int i = 0; v && i < n; i++) {
		if (only >= 0 && i != only)
			continue;
		char ep[JOB_SERVICE_NAME_MAX + 64 + TF_CLUSTER_DOMAIN_MAX + 16];
		if (tf_endpoint(job, t, i, domain, ep, sizeof(ep)) != DRAKE_OK) {
			json_decref(v);
			return NULL;
		}
		char key[16];
		snprintf(key, sizeof(key), "%d", i);
		int rc = sparse_index ? json_object_set_new(v, key, json_string(ep))
		                      : json_array_append_new(v, json_string(ep));
		if (rc != 0) {
			json_decref(v);
			return NULL;
		}
	}
	return v;
}

char *tf_config_json(const struct job *job, enum job_rtype t, int index, const char *domain)
{
	if (t >= JOB_NTYPES || index < 0 || index >= job_replica_slots(job, t))
		return NULL;
	json_t *cluster = json_object();
	for (int i = 0; cluster && i < JOB_NTYPES; i++) {
		enum job_rtype rt = (enum job_rtype)i;
		if (job_replica_slots(job, rt) == 0)
			continue;
		json_t *v;
		if (!job->dynamic_worker)
			v = endpoints(job, rt, domain, false, -1);
		else if (rt == JOB_PS)
			v = endpoints(job, rt, domain, false, -1);
		else if (rt == JOB_WORKER && t == JOB_WORKER)
			v = endpoints(job, rt, domain, true, index); /* a worker sees only itself */
		else
			continue; /* the sparse form lists only ps and the task's own worker */
		if (!v || json_object_set_new(cluster, job_rtype_lower(rt), v) != 0) {
			json_decref(cluster);
			return NULL;
		}
	}
	json_t *root = json_pack("{s:o,s:{s:s,s:i},s:s}", "cluster", cluster, "task", "type",
	                         job_rtype_lower(t), "index", index, "environment", "cloud");
	if (!root)
		return NULL;
	char *s = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	return s;
}

int tf_env_set(const struct job *job, enum job_rtype t, int index, const char *domain,
               struct json_t *env, void (*set_env)(struct json_t *, const char *, const char *))
{
	if (!tf_config_wanted(job))
		return 0;
	char *cfg = tf_config_json(job, t, index, domain);
	if (!cfg)
		return -1;
	set_env(env, "TF_CONFIG", cfg);
	free(cfg);
	return 0;
}
