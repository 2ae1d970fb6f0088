/*
 * pod_codec.c - builds replica pods and services from a job's templates
 * and reads owned pods back (a codec file: jansson lives here). The
 * template is deep-copied, never modified in place, since it is borrowed
 * from the informer's cache.
 *
 * Ownership: builders return malloc'd JSON text; readers borrow.
 */
#include "kind/pod_codec.h"

#include "gang/protocol.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "kube/pod.h"

static json_t *labels(const struct job *job, enum job_rtype t, int index)
{
	char idx[16];
	snprintf(idx, sizeof(idx), "%d", index);
	return json_pack("{s:s,s:s,s:s,s:s}", JOB_LABEL_OPERATOR, job->kind->operator_name,
	                 JOB_LABEL_JOB, job->name, JOB_LABEL_TYPE, job_type_lower(job, t),
	                 JOB_LABEL_INDEX, idx);
}

static json_t *owner_refs(const struct job *job)
{
	char api[128];
	snprintf(api, sizeof(api), "%s/%s", job->kind->group, job->kind->version);
	return json_pack("[{s:s,s:s,s:s,s:s,s:b,s:b}]", "apiVersion", api, "kind", job->kind->kind,
	                 "name", job->name, "uid", job->uid, "controller", 1, "blockOwnerDeletion",
	                 1);
}

static json_t *object_or_new(json_t *parent, const char *key)
{
	json_t *v = json_object_get(parent, key);
	if (json_is_object(v))
		return v;
	v = json_object();
	json_object_set_new(parent, key, v);
	return v;
}

static json_t *array_or_new(json_t *parent, const char *key)
{
	json_t *v = json_object_get(parent, key);
	if (json_is_array(v))
		return v;
	v = json_array();
	json_object_set_new(parent, key, v);
	return v;
}

/* Appends item (a reference taken) to arr, a list of objects keyed by
 * "name" (env, volumes, volumeMounts), replacing a user's entries of the
 * same name. */
static void set_named(json_t *arr, json_t *item)
{
	const char *name = json_string_value(json_object_get(item, "name"));
	for (size_t i = json_array_size(arr); i > 0 && name; i--) {
		const char *n =
		    json_string_value(json_object_get(json_array_get(arr, i - 1), "name"));
		if (n && !strcmp(n, name))
			json_array_remove(arr, i - 1);
	}
	json_array_append_new(arr, item);
}

/* Sets name=value in env, replacing a user's entries of that name. */
static void set_env(json_t *env, const char *name, const char *value)
{
	set_named(env, json_pack("{s:s,s:s}", "name", name, "value", value));
}

/* The projected token a replica reports progress with: bound to its pod,
 * for drake's audience only, so drake never holds a token the API server
 * would take. Its volume goes into spec, its mount and path into c. */
static void progress_token(json_t *spec, json_t *c, const char *audience)
{
	set_named(array_or_new(spec, "volumes"),
	          json_pack("{s:s,s:{s:[{s:{s:s,s:i,s:s}}]}}", "name", JOB_PROGRESS_TOKEN_VOLUME,
	                    "projected", "sources", "serviceAccountToken", "audience", audience,
	                    "expirationSeconds", 3600, "path", "token"));
	set_named(array_or_new(c, "volumeMounts"),
	          json_pack("{s:s,s:s,s:b}", "name", JOB_PROGRESS_TOKEN_VOLUME, "mountPath",
	                    JOB_PROGRESS_TOKEN_DIR, "readOnly", 1));
	set_env(array_or_new(c, "env"), "DRAKE_PROGRESS_TOKEN_FILE",
	        JOB_PROGRESS_TOKEN_DIR "/token");
}

/* Adds the kind's port (tfjob-port), its environment (TF_CONFIG),
 * DRAKE_PROGRESS_URL and DRAKE_PROGRESS_CA_PEM to the kind's container. */
static int fix_container(json_t *c, const struct job *job, enum job_rtype t, int index,
                         const struct job_pod_opts *o)
{
	const char *gang_resource = o->gang_resource && *o->gang_resource ? o->gang_resource : NULL;
	if (o->progress_url && *o->progress_url) {
		set_env(array_or_new(c, "env"), "DRAKE_PROGRESS_URL", o->progress_url);
		if (o->progress_ca_pem && *o->progress_ca_pem)
			set_env(array_or_new(c, "env"), "DRAKE_PROGRESS_CA_PEM",
			        o->progress_ca_pem);
	}
	if (gang_resource) { /* extended resources need requests == limits */
		json_t *res = object_or_new(c, "resources");
		json_object_set_new(object_or_new(res, "requests"), gang_resource,
		                    json_string("1"));
		json_object_set_new(object_or_new(res, "limits"), gang_resource, json_string("1"));
	}
	json_t *ports = array_or_new(c, "ports");
	bool has_port = false;
	size_t i;
	json_t *p;
	json_array_foreach (ports, i, p) {
		const char *pn = json_string_value(json_object_get(p, "name"));
		has_port |= pn && !strcmp(pn, job->kind->port_name);
	}
	if (!has_port)
		json_array_append_new(ports, json_pack("{s:s,s:i}", "name", job->kind->port_name,
		                                       "containerPort", job->rs[t].port));
	return job->kind->env(job, t, index, o->domain, array_or_new(c, "env"), set_env);
}

/* A scheduler the template names is the user's choice and stays (as
 * Kubeflow's training-operator keeps it over its gang scheduler); only a
 * template that names none (absent, null, "") gets drake's. */
static void set_scheduler(json_t *spec, const char *scheduler_name)
{
	if (!scheduler_name || !*scheduler_name)
		return;
	const char *own = json_string_value(json_object_get(spec, "schedulerName"));
	if (own && *own)
		return;
	json_object_set_new(spec, "schedulerName", json_string(scheduler_name));
}

char *job_pod_json(const struct job *job, enum job_rtype t, int index, const struct job_pod_opts *o,
                   char *msg, size_t msglen)
{
	char name[JOB_SERVICE_NAME_MAX + 1];
	if (job_replica_name(job, t, index, name, sizeof(name)) != DRAKE_OK || !job->rs[t].tmpl) {
		drake_errorf(DRAKE_EINVAL, msg, msglen, "no valid name or template for %s %d",
		             job_type_name(job, t), index);
		return NULL;
	}
	json_t *tmpl = json_deep_copy((json_t *)job->rs[t].tmpl);
	json_t *pod = json_object();
	json_t *tmeta = json_object_get(tmpl, "metadata");
	json_t *meta = json_object();
	json_t *lab = json_is_object(json_object_get(tmeta, "labels"))
	                  ? json_incref(json_object_get(tmeta, "labels"))
	                  : json_object();
	json_t *ours = labels(job, t, index);
	json_object_update(lab, ours); /* Kubeflow's labels win over the template's */
	json_decref(ours);
	if (job_is_master_role(job, t, index))
		json_object_set_new(lab, JOB_LABEL_ROLE, json_string("master"));
	json_object_set_new(meta, "name", json_string(name));
	json_object_set_new(meta, "namespace", json_string(job->ns));
	json_object_set_new(meta, "labels", lab);
	json_t *ann = json_object_get(tmeta, "annotations");
	if (json_is_object(ann)) {
		const char *key;
		json_t *v;
		void *tmp;
		json_object_foreach_safe(ann, tmp, key, v)
		{
			if (drake_annotation_reserved(key))
				json_object_del(
				    ann, key); /* drake's to write (see job_template_reserved) */
		}
		json_object_set(meta, "annotations", ann);
	}
	json_object_set_new(meta, "ownerReferences", owner_refs(job));
	json_object_set_new(pod, "apiVersion", json_string("v1"));
	json_object_set_new(pod, "kind", json_string("Pod"));
	json_object_set_new(pod, "metadata", meta);
	json_t *spec = object_or_new(tmpl, "spec");
	json_object_set(pod, "spec", spec);
	enum job_restart r = job->rs[t].restart;
	json_object_set_new(spec, "restartPolicy",
	                    json_string(r == JOB_RESTART_ALWAYS       ? "Always"
	                                : r == JOB_RESTART_ON_FAILURE ? "OnFailure"
	                                                              : "Never"));
	json_array_append_new(array_or_new(spec, "schedulingGates"),
	                      json_pack("{s:s}", "name", JOB_GANG_GATE));
	set_scheduler(spec, o->scheduler_name);
	/* Kubeflow's schedulingPolicy.priorityClass, unless the template names
	 * its own class (the replica's choice, as with schedulerName). */
	const char *prio = json_string_value(json_object_get(spec, "priorityClassName"));
	if (job->priority_class[0] && (!prio || !*prio))
		json_object_set_new(spec, "priorityClassName", json_string(job->priority_class));
	size_t i;
	json_t *c;
	int rc = 0;
	json_array_foreach (json_object_get(spec, "containers"), i, c) {
		const char *cn = json_string_value(json_object_get(c, "name"));
		if (cn && !strcmp(cn, job->kind->container)) {
			rc |= fix_container(c, job, t, index, o);
			if (o->progress_url && *o->progress_url && o->progress_audience &&
			    *o->progress_audience)
				progress_token(spec, c, o->progress_audience);
		}
	}
	char *out = rc == 0 ? json_dumps(pod, JSON_COMPACT) : NULL;
	if (!out)
		drake_errorf(DRAKE_ENOMEM, msg, msglen, "cannot encode pod %s", name);
	json_decref(pod);
	json_decref(tmpl);
	return out;
}

int job_template_reserved(const struct job *job, char *keys, size_t len)
{
	int n = 0;
	size_t used = 0;
	if (len)
		keys[0] = '\0';
	for (int t = 0; t < JOB_NTYPES; t++) {
		const json_t *ann = json_object_get(
		    json_object_get((const json_t *)job->rs[t].tmpl, "metadata"), "annotations");
		const char *key;
		json_t *v;
		json_object_foreach ((json_t *)ann, key, v) {
			if (!drake_annotation_reserved(key))
				continue;
			n++;
			int w =
			    snprintf(keys + used, len > used ? len - used : 0, "%s%s %s",
			             used ? ", " : "", job_type_name(job, (enum job_rtype)t), key);
			if (w > 0 && used + (size_t)w < len)
				used += (size_t)w;
		}
	}
	return n;
}

char *job_service_json(const struct job *job, enum job_rtype t, int index)
{
	char name[JOB_SERVICE_NAME_MAX + 1];
	if (job_replica_name(job, t, index, name, sizeof(name)) != DRAKE_OK)
		return NULL;
	json_t *svc =
	    json_pack("{s:s,s:s,s:{s:s,s:s,s:o,s:o},s:{s:s,s:o,s:[{s:s,s:i,s:i}]}}", "apiVersion",
	              "v1", "kind", "Service", "metadata", "name", name, "namespace", job->ns,
	              "labels", labels(job, t, index), "ownerReferences", owner_refs(job), "spec",
	              "clusterIP", "None", "selector", labels(job, t, index), "ports", "name",
	              job->kind->port_name, "port", job->rs[t].port, "targetPort", job->rs[t].port);
	if (!svc)
		return NULL;
	char *out = json_dumps(svc, JSON_COMPACT);
	json_decref(svc);
	return out;
}

static bool replica_parse(const char *ts, const char *is, enum job_rtype *t, int *index)
{
	if (!ts || !is || !*is || strspn(is, "0123456789") != strlen(is) || strlen(is) > 4)
		return false;
	for (int i = 0; i < JOB_NTYPES; i++) {
		if (!strcmp(ts, job_rtype_lower((enum job_rtype)i)) ||
		    (i == JOB_CHIEF && !strcmp(ts, "master"))) {
			*t = (enum job_rtype)i;
			*index = atoi(is);
			return *index < JOB_MAX_REPLICAS;
		}
	}
	return false;
}

bool job_replica_of(const struct json_t *obj, enum job_rtype *t, int *index)
{
	json_t *lab = json_object_get(json_object_get(obj, "metadata"), "labels");
	return replica_parse(json_string_value(json_object_get(lab, JOB_LABEL_TYPE)),
	                     json_string_value(json_object_get(lab, JOB_LABEL_INDEX)), t, index);
}

bool job_pod_replica_of(const struct kube_pod *pod, enum job_rtype *t, int *index)
{
	return replica_parse(kube_pod_label(pod, JOB_LABEL_TYPE),
	                     kube_pod_label(pod, JOB_LABEL_INDEX), t, index);
}

int job_gang_gate_index(const struct kube_pod *pod)
{
	return kube_pod_gate_index(pod, JOB_GANG_GATE);
}

bool job_pod_observe(const struct kube_pod *pod, const char *container, struct job_pod_obs *obs)
{
	memset(obs, 0, sizeof(*obs));
	if (!job_pod_replica_of(pod, &obs->type, &obs->index))
		return false;
	const char *phase = pod->phase;
	obs->phase = !phase                        ? JOB_POD_PENDING
	             : !strcmp(phase, "Running")   ? JOB_POD_RUNNING
	             : !strcmp(phase, "Succeeded") ? JOB_POD_SUCCEEDED
	             : !strcmp(phase, "Failed")    ? JOB_POD_FAILED
	             : !strcmp(phase, "Pending")   ? JOB_POD_PENDING
	                                           : JOB_POD_UNKNOWN;
	obs->exit_code = -1;
	for (size_t i = 0; i < pod->n_statuses; i++) {
		const struct kube_container_status *cs = &pod->statuses[i];
		if (cs->restarts > 0 && cs->restarts < 1000000)
			obs->restarts += (int)cs->restarts;
		if (cs->name && container && !strcmp(cs->name, container) && cs->terminated)
			obs->exit_code = (int)(cs->exit_code & 0xffff);
	}
	obs->gated = job_gang_gate_index(pod) >= 0;
	obs->deleting = pod->deleting;
	return true;
}

char *job_pod_ungate_patch(const struct kube_pod *pod)
{
	int k = job_gang_gate_index(pod);
	if (k < 0)
		return NULL;
	char path[64];
	snprintf(path, sizeof(path), "/spec/schedulingGates/%d", k);
	char name_path[80];
	snprintf(name_path, sizeof(name_path), "%s/name", path);
	json_t *p = json_pack("[{s:s,s:s,s:s},{s:s,s:s}]", "op", "test", "path", name_path, "value",
	                      JOB_GANG_GATE, "op", "remove", "path", path);
	char *out = p ? json_dumps(p, JSON_COMPACT) : NULL;
	json_decref(p);
	return out;
}
