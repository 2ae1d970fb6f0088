/*
 * migration_codec.c - the drake.dev/migrations annotation (see migration.h).
 */
#include "reconciler/migration.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/object.h"
#include "kind/pod_codec.h"

#define MIGRATIONS_MAX_BYTES 16384

void job_replica_key(enum job_rtype t, int index, char *buf, size_t len)
{
	snprintf(buf, len, "%s-%d", job_rtype_lower(t), index);
}

/* "worker-1" back into a replica of job; false when it names none. */
static bool parse_replica(const char *key, const struct job *job, enum job_rtype *t, int *index)
{
	for (int k = 0; k < JOB_NTYPES; k++) {
		const char *name = job_rtype_lower((enum job_rtype)k);
		size_t n = strlen(name);
		if (strncmp(key, name, n) != 0 || key[n] != '-' || !key[n + 1])
			continue;
		char *end;
		long i = strtol(key + n + 1, &end, 10);
		if (*end || i < 0 || i >= job_replica_slots(job, (enum job_rtype)k))
			return false;
		*t = (enum job_rtype)k;
		*index = (int)i;
		return true;
	}
	return false;
}

static bool time_of(const json_t *v, double *out)
{
	if (!json_is_number(v) || !isfinite(json_number_value(v)) || json_number_value(v) < 0)
		return false;
	*out = json_number_value(v);
	return true;
}

static bool copy_str(const json_t *v, char *buf, size_t len, bool required)
{
	if (!v)
		return !required;
	if (!json_is_string(v) || json_string_length(v) >= len ||
	    (required && json_string_length(v) == 0))
		return false;
	snprintf(buf, len, "%s", json_string_value(v));
	return true;
}

static const char *decode_moving(const json_t *mv, const struct job *job, struct job_move *m)
{
	if (!json_is_object(mv))
		return "\"moving\" is not an object";
	const char *rep = json_string_value(json_object_get(mv, "replica"));
	if (!rep || !parse_replica(rep, job, &m->type, &m->index))
		return "\"moving.replica\" names no replica of the job";
	if (!copy_str(json_object_get(mv, "from"), m->from, sizeof(m->from), true) ||
	    !copy_str(json_object_get(mv, "to"), m->to, sizeof(m->to), false) ||
	    !copy_str(json_object_get(mv, "uid"), m->uid, sizeof(m->uid), true) ||
	    !copy_str(json_object_get(mv, "reason"), m->reason, sizeof(m->reason), false) ||
	    !copy_str(json_object_get(mv, "by"), m->by, sizeof(m->by), false))
		return "\"moving\" has a missing or malformed field";
	if (!time_of(json_object_get(mv, "at"), &m->at))
		return "\"moving.at\" is not a time in seconds";
	m->active = true;
	return NULL;
}

drake_err job_migrations_decode(const json_t *obj, const struct job *job,
                                struct job_migrations *out, char *why, size_t whylen)
{
	memset(out, 0, sizeof(*out));
	const char *v = kube_obj_annotation(obj, JOB_ANNOTATION_MIGRATIONS);
	if (!v)
		return DRAKE_OK;
	const char *err = NULL;
	json_t *root = NULL;
	if (strlen(v) > MIGRATIONS_MAX_BYTES)
		err = "too long";
	else
		root = json_loads(v, JSON_REJECT_DUPLICATES, NULL); /* json_is_object: a macro */
	if (!err && !json_is_object(root))
		err = "not a JSON object";
	json_t *counts = root ? json_object_get(root, "counts") : NULL;
	if (!err && counts && !json_is_object(counts))
		err = "\"counts\" is not an object";
	const char *key;
	json_t *c;
	if (!err && counts)
		json_object_foreach (counts, key, c) {
			struct job_move_count *mc = &out->counts[out->n_counts];
			json_t *n = json_object_get(c, "n");
			if (out->n_counts == JOB_MIGRATION_COUNTS_MAX) {
				err = "more replicas counted than drake keeps";
				break;
			}
			if (!parse_replica(key, job, &mc->type, &mc->index) ||
			    !json_is_integer(n) || json_integer_value(n) < 0 ||
			    json_integer_value(n) > 1000000 ||
			    !time_of(json_object_get(c, "last"), &mc->last)) {
				err = "a count names no replica of the job or is malformed";
				break;
			}
			mc->n = (int)json_integer_value(n);
			out->n_counts++;
		}
	json_t *mv = root ? json_object_get(root, "moving") : NULL;
	if (!err && mv && !json_is_null(mv))
		err = decode_moving(mv, job, &out->moving);
	json_decref(root);
	if (err) {
		memset(out, 0, sizeof(*out));
		return drake_errorf(DRAKE_EINVAL, why, whylen, "annotation %s: %s",
		                    JOB_ANNOTATION_MIGRATIONS, err);
	}
	return DRAKE_OK;
}

int job_migrations_count(const struct job_migrations *m, enum job_rtype t, int index, double *last)
{
	for (int i = 0; i < m->n_counts; i++)
		if (m->counts[i].type == t && m->counts[i].index == index) {
			if (last)
				*last = m->counts[i].last;
			return m->counts[i].n;
		}
	if (last)
		*last = -1;
	return 0;
}

drake_err job_migrations_bump(struct job_migrations *m, enum job_rtype t, int index, double at)
{
	for (int i = 0; i < m->n_counts; i++)
		if (m->counts[i].type == t && m->counts[i].index == index) {
			m->counts[i].n++;
			m->counts[i].last = at;
			return DRAKE_OK;
		}
	if (m->n_counts == JOB_MIGRATION_COUNTS_MAX)
		return DRAKE_ELIMIT;
	m->counts[m->n_counts++] = (struct job_move_count){t, index, 1, at};
	return DRAKE_OK;
}

char *job_migrations_value(const struct job_migrations *m)
{
	json_t *root = json_object(), *counts = json_object();
	bool ok = root && counts;
	for (int i = 0; ok && i < m->n_counts; i++) {
		char k[32];
		job_replica_key(m->counts[i].type, m->counts[i].index, k, sizeof(k));
		ok = !json_object_set_new(counts, k,
		                          json_pack("{s:i,s:I}", "n", m->counts[i].n, "last",
		                                    (json_int_t)m->counts[i].last));
	}
	ok = ok && !json_object_set(root, "counts", counts);
	if (ok && m->moving.active) {
		char k[32];
		const struct job_move *mv = &m->moving;
		job_replica_key(mv->type, mv->index, k, sizeof(k));
		ok = !json_object_set_new(root, "moving",
		                          json_pack("{s:s,s:s,s:s,s:s,s:I,s:s,s:s}", "replica", k,
		                                    "from", mv->from, "to", mv->to, "uid", mv->uid,
		                                    "at", (json_int_t)mv->at, "reason", mv->reason,
		                                    "by", mv->by));
	} else if (ok) {
		ok = !json_object_set_new(root, "moving", json_null());
	}
	char *value = ok ? json_dumps(root, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(counts);
	json_decref(root);
	return value;
}

char *job_migrations_patch(const char *value)
{
	return job_annotation_patch(JOB_ANNOTATION_MIGRATIONS, value);
}

char *job_moves_json(const struct job_move_note *v, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < n; i++)
		json_array_append_new(a, json_pack("{s:I,s:s,s:s,s:s,s:s,s:s,s:s}", "at",
		                                   (json_int_t)v[i].at, "job", v[i].job, "replica",
		                                   v[i].replica, "from", v[i].from, "to", v[i].to,
		                                   "by", v[i].by, "what", v[i].what));
	json_t *root = a ? json_pack("{s:o}", "migrations", a) : NULL;
	char *out = root ? json_dumps(root, JSON_COMPACT) : NULL;
	json_decref(root);
	return out;
}
