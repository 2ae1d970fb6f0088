/*
 * env_codec.c - the environment of a PyTorchJob's replicas, as Kubeflow's
 * training operator sets it (docs/pytorchjob.md lists each variable), so a
 * manifest written for the operator runs unchanged. The job's spec was
 * validated by pytorchjob_decode; this only reads it.
 *
 * Ownership: writes into the caller's env array through set_env.
 */
#include "pytorchjob/pytorchjob.h"

#include <stdio.h>
#include <string.h>

#include <jansson.h>

typedef void (*set_env_fn)(json_t *, const char *, const char *);

static void set_int(json_t *env, set_env_fn set, const char *name, long v)
{
	char b[32];
	snprintf(b, sizeof(b), "%ld", v);
	set(env, name, b);
}

/* "k1=v1,k2=v2" of rdzvConf into buf (validated short enough). */
static void join_conf(const json_t *conf, char *buf, size_t len)
{
	size_t used = 0, i;
	json_t *kv;
	buf[0] = '\0';
	json_array_foreach (conf, i, kv) {
		const char *k = json_string_value(json_object_get(kv, "key"));
		const char *v = json_string_value(json_object_get(kv, "value"));
		int n = snprintf(buf + used, len - used, "%s%s=%s", used ? "," : "", k ? k : "",
		                 v ? v : "");
		if (n < 0 || used + (size_t)n >= len)
			return;
		used += (size_t)n;
	}
}

static void elastic_env(const struct job *job, const json_t *ep, json_t *env, set_env_fn set)
{
	char host[PT_RDZV_STR_MAX + 1], ep_s[PT_RDZV_STR_MAX + 16];
	const char *rh = json_string_value(json_object_get(ep, "rdzvHost"));
	if (rh)
		snprintf(host, sizeof(host), "%s", rh);
	else if (job_replica_name(job, JOB_WORKER, 0, host, sizeof(host)) != DRAKE_OK)
		host[0] = '\0';
	json_t *port = json_object_get(ep, "rdzvPort");
	snprintf(ep_s, sizeof(ep_s), "%s:%d", host,
	         json_is_integer(port) ? (int)json_integer_value(port) : job->rs[JOB_WORKER].port);
	set(env, "PET_RDZV_ENDPOINT", ep_s);
	const char *backend = json_string_value(json_object_get(ep, "rdzvBackend"));
	set(env, "PET_RDZV_BACKEND", backend ? backend : "c10d");
	char nn[32];
	if (json_is_integer(json_object_get(ep, "minReplicas")))
		snprintf(nn, sizeof(nn), "%d:%d", job->min_instances, job->max_instances);
	else
		snprintf(nn, sizeof(nn), "%d", job->rs[JOB_WORKER].replicas);
	set(env, "PET_NNODES", nn);
	json_t *mr = json_object_get(ep, "maxRestarts");
	if (json_is_integer(mr))
		set_int(env, set, "PET_MAX_RESTARTS", (long)json_integer_value(mr));
	const char *id = json_string_value(json_object_get(ep, "rdzvId"));
	if (id)
		set(env, "PET_RDZV_ID", id);
	json_t *conf = json_object_get(ep, "rdzvConf");
	if (json_array_size(conf) > 0) {
		char c[PT_RDZV_CONF_MAX + 1];
		join_conf(conf, c, sizeof(c));
		set(env, "PET_RDZV_CONF", c);
	}
	if (json_is_true(json_object_get(ep, "standalone")))
		set(env, "PET_STANDALONE", "");
}

int pytorch_env_set(const struct job *job, enum job_rtype t, int index, const char *domain,
                    struct json_t *env, set_env_fn set)
{
	if (!job || !env || !set || (t != JOB_CHIEF && t != JOB_WORKER))
		return -1;
	const json_t *spec = job->spec;
	const json_t *ep = json_object_get(spec, "elasticPolicy");
	bool elastic = json_is_object(ep);
	set(env, "PYTHONUNBUFFERED", "0");
	long total = (job->rs[JOB_CHIEF].present ? job->rs[JOB_CHIEF].replicas : 0) +
	             (job->rs[JOB_WORKER].present ? job->rs[JOB_WORKER].replicas : 0);
	if (job->rs[JOB_CHIEF].present) {
		char addr[JOB_SERVICE_NAME_MAX + 1];
		if (job_replica_name(job, JOB_CHIEF, 0, addr, sizeof(addr)) != DRAKE_OK)
			return -1;
		int port = job->rs[JOB_CHIEF].port;
		long rank = t == JOB_WORKER ? index + 1 : index;
		set_int(env, set, "MASTER_PORT", port);
		set(env, "MASTER_ADDR", addr);
		set_int(env, set, "PET_MASTER_PORT", port);
		set(env, "PET_MASTER_ADDR", addr);
		set_int(env, set, "WORLD_SIZE", total);
		set_int(env, set, "RANK", rank);
		set_int(env, set, "PET_NODE_RANK", rank);
		if (!elastic)
			set_int(env, set, "PET_NNODES", total);
	}
	const char *nproc = json_string_value(json_object_get(spec, "nprocPerNode"));
	json_t *legacy = json_object_get(ep, "nProcPerNode");
	if (nproc)
		set(env, "PET_NPROC_PER_NODE", nproc);
	else if (json_is_integer(legacy))
		set_int(env, set, "PET_NPROC_PER_NODE", (long)json_integer_value(legacy));
	if (elastic)
		elastic_env(job, ep, env, set);
	return 0;
}
