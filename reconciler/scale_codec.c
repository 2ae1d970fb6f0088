/*
 * scale_codec.c - the drake.dev/scale annotation (see scale.h).
 */
#include "reconciler/scale.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/object.h"
#include "kind/pod_codec.h"

#define SCALE_MAX_BYTES 65536

void job_scale_release(struct job_scale *s)
{
	if (!s)
		return;
	free(s->place);
	s->place = NULL;
	s->n_place = 0;
}

static drake_err bad(struct job_scale *out, char *why, size_t len, const char *what)
{
	job_scale_release(out);
	memset(out, 0, sizeof(*out));
	return drake_errorf(DRAKE_EINVAL, why, len, "annotation %s: %s", JOB_ANNOTATION_SCALE,
	                    what);
}

static drake_err decode_place(json_t *pl, const struct job_scale *s, struct job_place **out, int *n)
{
	*out = NULL;
	*n = 0;
	if (!pl)
		return DRAKE_OK;
	if (!json_is_object(pl) || json_object_size(pl) > JOB_MAX_REPLICAS)
		return DRAKE_EINVAL;
	*out = calloc(json_object_size(pl) + 1, sizeof(**out));
	if (!*out)
		return DRAKE_ENOMEM;
	const char *k;
	json_t *v;
	json_object_foreach (pl, k, v) {
		char *end;
		long idx = strtol(k, &end, 10);
		const char *node = json_string_value(v);
		if (!*k || *end || idx < 0 || idx >= JOB_MAX_REPLICAS || !s->member[idx] || !node ||
		    !*node || strlen(node) >= sizeof((*out)->node))
			return DRAKE_EINVAL;
		(*out)[*n].index = (int)idx;
		snprintf((*out)[*n].node, sizeof((*out)[*n].node), "%s", node);
		(*n)++;
	}
	return DRAKE_OK;
}

drake_err job_scale_decode(const json_t *obj, const struct job *job, struct job_scale *out,
                           char *why, size_t whylen)
{
	memset(out, 0, sizeof(*out));
	const char *v = kube_obj_annotation(obj, JOB_ANNOTATION_SCALE);
	if (!v)
		return DRAKE_OK;
	if (strlen(v) > SCALE_MAX_BYTES)
		return bad(out, why, whylen, "too long");
	json_error_t jerr;
	json_t *root = json_loads(v, JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_object(root)) {
		json_decref(root);
		return bad(out, why, whylen, "not a JSON object");
	}
	const char *err = NULL;
	json_t *ws = json_object_get(root, "workers");
	json_t *at = json_object_get(root, "at");
	json_t *fk = json_object_get(root, "for");
	json_t *gk = json_object_get(root, "gang");
	size_t i;
	json_t *x;
	if (!json_is_array(ws))
		err = "\"workers\" is not an array";
	json_array_foreach (ws, i, x) {
		if (err)
			break;
		if (!json_is_integer(x) || json_integer_value(x) < 0 ||
		    json_integer_value(x) >= job->max_instances ||
		    json_integer_value(x) >= JOB_MAX_REPLICAS)
			err = "a worker index is not an integer below max-instances";
		else if (out->member[json_integer_value(x)]++)
			err = "a worker index is listed twice";
		else
			out->n++;
	}
	if (!err && !out->member[0])
		err = "worker 0 is not a member";
	if (!err && out->n < job->min_instances)
		err = "fewer workers than min-instances";
	if (!err && at &&
	    (!json_is_number(at) || json_number_value(at) < 0 || !isfinite(json_number_value(at))))
		err = "\"at\" is not a time in seconds";
	if (!err && fk && (!json_is_string(fk) || json_string_length(fk) >= sizeof(out->for_key)))
		err = "\"for\" is not a job key";
	if (!err && gk && (!json_is_string(gk) || json_string_length(gk) >= sizeof(out->gang)))
		err = "\"gang\" is not a wave id";
	if (!err) {
		drake_err e =
		    decode_place(json_object_get(root, "place"), out, &out->place, &out->n_place);
		if (e == DRAKE_ENOMEM) {
			json_decref(root);
			job_scale_release(out);
			return drake_errorf(e, why, whylen, "out of memory");
		}
		if (e)
			err = "\"place\" is not a map of member worker index to node";
	}
	if (err) {
		json_decref(root);
		return bad(out, why, whylen, err);
	}
	out->present = true;
	out->at = at ? json_number_value(at) : 0;
	if (fk)
		snprintf(out->for_key, sizeof(out->for_key), "%s", json_string_value(fk));
	if (gk)
		snprintf(out->gang, sizeof(out->gang), "%s", json_string_value(gk));
	json_decref(root);
	return DRAKE_OK;
}

/* A time to the millisecond: the round decides at fractional seconds, and
 * a timer counted from the record (the rescale pause, --idle-after) must
 * not come up to a second early. A whole second stays an integer. */
static json_t *seconds_to_ms(double at)
{
	double ms = round(at * 1e3);
	if (fmod(ms, 1e3) == 0)
		return json_integer((json_int_t)(ms / 1e3));
	return json_real(ms / 1e3);
}

char *job_scale_value(const struct job_scale *s)
{
	json_t *v = json_object(), *ws = json_array(), *pl = json_object();
	bool ok = v && ws && pl;
	for (int i = 0; ok && i < JOB_MAX_REPLICAS; i++)
		if (s->member[i])
			ok = !json_array_append_new(ws, json_integer(i));
	for (int i = 0; ok && i < s->n_place; i++) {
		char k[16];
		snprintf(k, sizeof(k), "%d", s->place[i].index);
		ok = !json_object_set_new(pl, k, json_string(s->place[i].node));
	}
	ok = ok && !json_object_set(v, "workers", ws) &&
	     !json_object_set_new(v, "at", seconds_to_ms(s->at));
	if (ok && s->for_key[0])
		ok = !json_object_set_new(v, "for", json_string(s->for_key));
	if (ok && s->gang[0])
		ok = !json_object_set_new(v, "gang", json_string(s->gang));
	if (ok && s->n_place)
		ok = !json_object_set(v, "place", pl);
	/* 15 digits print a millisecond of an epoch time (13) without the
	 * binary fraction's tail. */
	char *value =
	    ok ? json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(15)) : NULL;
	json_decref(v);
	json_decref(ws);
	json_decref(pl);
	return value;
}

char *job_scale_patch(const char *value)
{
	return job_annotation_patch(JOB_ANNOTATION_SCALE, value);
}

const char *job_scale_place(const struct job_scale *s, int index)
{
	for (int i = 0; i < s->n_place; i++)
		if (s->place[i].index == index)
			return s->place[i].node;
	return NULL;
}
