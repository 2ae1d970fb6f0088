/*
 * api_codec.c - the progress and migration API's JSON, through jansson; see
 * api_codec.h for what is strict and why.
 */
#include "extender/api_codec.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/object.h"

static const char *type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "object";
	case JSON_ARRAY: return "array";
	case JSON_STRING: return "string";
	case JSON_INTEGER: return "integer";
	case JSON_REAL: return "number";
	case JSON_TRUE:
	case JSON_FALSE: return "boolean";
	case JSON_NULL: return "null";
	}
	return "unknown";
}

/* obj[key], NULL when absent or null. Keys are exact: this API is new, so
 * there are no old spellings to forgive. */
static json_t *get(const json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);
	return json_is_null(v) ? NULL : v;
}

bool api_label_valid(const char *s)
{
	return kube_name_valid(s) && strlen(s) < API_NS_SIZE && !strchr(s, '.');
}

/* Parses a request body: an object of known keys only, within API_MAX_BODY. */
static drake_err load_body(const char *body, size_t len, const char *const *known, json_t **out,
                           char *msg, size_t msglen)
{
	*out = NULL;
	if (len > API_MAX_BODY)
		return drake_errorf(DRAKE_ELIMIT, msg, msglen,
		                    "request body: %zu bytes, over the limit of %d", len,
		                    API_MAX_BODY);
	json_error_t jerr;
	json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root)
		return drake_errorf(DRAKE_EINVAL, msg, msglen,
		                    "malformed JSON at line %d column %d: %s", jerr.line,
		                    jerr.column, jerr.text);
	const char *k;
	json_t *v;
	json_object_foreach (root, k, v) {
		size_t i = 0;
		while (known[i] && strcmp(known[i], k) != 0)
			i++;
		if (!known[i]) {
			char list[160] = "";
			for (i = 0; known[i]; i++)
				snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
				         i ? ", " : "", known[i]);
			drake_errorf(DRAKE_EINVAL, msg, msglen,
			             "unknown field \"%.64s\" (known: %s)", k, list);
			json_decref(root); /* k lives in root */
			return DRAKE_EINVAL;
		}
	}
	*out = root;
	return DRAKE_OK;
}

/* A name field: absent is "" unless required; present, it must be a string
 * that is a valid name of its kind (label for namespaces, else subdomain). */
static drake_err name_field(const json_t *root, const char *key, bool label, bool required,
                            char *dst, size_t size, char *msg, size_t msglen)
{
	dst[0] = '\0';
	json_t *v = get(root, key);
	if (!v) {
		if (required)
			return drake_errorf(DRAKE_EINVAL, msg, msglen, "%s: required", key);
		return DRAKE_OK;
	}
	if (!json_is_string(v))
		return drake_errorf(DRAKE_EINVAL, msg, msglen, "%s: expected string, got %s", key,
		                    type_name(v));
	const char *s = json_string_value(v);
	bool ok = label ? api_label_valid(s) : kube_name_valid(s) && strlen(s) < size;
	if (!ok || strlen(s) != json_string_length(v))
		return drake_errorf(DRAKE_EINVAL, msg, msglen,
		                    "%s: \"%.64s\" is not a valid %s name (lower-case DNS-1123 %s, "
		                    "at most %zu characters)",
		                    key, s, label ? "namespace" : "object",
		                    label ? "label" : "subdomain", size - 1);
	memcpy(dst, s, strlen(s) + 1);
	return DRAKE_OK;
}

/* An integer field >= min; *out keeps its value when the field is absent. */
static drake_err int_field(const json_t *root, const char *key, bool required, int64_t min,
                           int64_t *out, char *msg, size_t msglen)
{
	json_t *v = get(root, key);
	if (!v)
		return required ? drake_errorf(DRAKE_EINVAL, msg, msglen, "%s: required", key)
		                : DRAKE_OK;
	if (!json_is_integer(v))
		return drake_errorf(DRAKE_EINVAL, msg, msglen, "%s: expected integer, got %s", key,
		                    type_name(v));
	json_int_t n = json_integer_value(v);
	if (n < min)
		return drake_errorf(DRAKE_EINVAL, msg, msglen, "%s: must be >= %lld, got %lld", key,
		                    (long long)min, (long long)n);
	*out = (int64_t)n;
	return DRAKE_OK;
}

static const char *const progress_keys[] = {"step",      "value", "metric", "totalSteps",
                                            "namespace", "pod",   NULL};

drake_err api_progress_decode(const char *body, size_t len, struct api_progress_body *out,
                              char *msg, size_t msglen)
{
	memset(out, 0, sizeof(*out));
	json_t *root;
	drake_err e = load_body(body, len, progress_keys, &root, msg, msglen);
	if (e)
		return e;
	if (!json_is_object(root)) {
		e = drake_errorf(DRAKE_EINVAL, msg, msglen, "request body: expected object, got %s",
		                 type_name(root));
		goto out;
	}
	e = int_field(root, "step", true, 0, &out->step, msg, msglen);
	if (e)
		goto out;
	json_t *v = get(root, "value");
	if (!v) {
		e = drake_errorf(DRAKE_EINVAL, msg, msglen, "value: required");
		goto out;
	}
	if (!json_is_number(v)) {
		e = drake_errorf(DRAKE_EINVAL, msg, msglen, "value: expected number, got %s",
		                 type_name(v));
		goto out;
	}
	out->value = json_number_value(v);
	if (!isfinite(out->value)) {
		e = drake_errorf(DRAKE_EINVAL, msg, msglen, "value: must be finite");
		goto out;
	}
	v = get(root, "metric");
	if (!v) {
		e = drake_errorf(DRAKE_EINVAL, msg, msglen,
		                 "metric: required (\"accuracy\" or \"loss\")");
		goto out;
	}
	const char *m = json_is_string(v) ? json_string_value(v) : NULL;
	if (!m) {
		e = drake_errorf(DRAKE_EINVAL, msg, msglen, "metric: expected string, got %s",
		                 type_name(v));
		goto out;
	}
	if (strcmp(m, "loss") != 0 && strcmp(m, "accuracy") != 0) {
		e = drake_errorf(DRAKE_EINVAL, msg, msglen,
		                 "metric: expected \"accuracy\" or \"loss\", got \"%.32s\"", m);
		goto out;
	}
	out->loss = strcmp(m, "loss") == 0;
	e = int_field(root, "totalSteps", false, 1, &out->total_steps, msg, msglen);
	if (!e)
		e = name_field(root, "namespace", true, false, out->ns, sizeof(out->ns), msg,
		               msglen);
	if (!e)
		e = name_field(root, "pod", false, false, out->pod, sizeof(out->pod), msg, msglen);
	if (!e && (!out->ns[0]) != (!out->pod[0]))
		e = drake_errorf(DRAKE_EINVAL, msg, msglen, "%s: required with %s",
		                 out->ns[0] ? "pod" : "namespace",
		                 out->ns[0] ? "namespace" : "pod");
out:
	json_decref(root);
	return e;
}

static const char *const migration_keys[] = {"namespace", "pod",      "awayFrom",
                                             "onto",      "pauseJob", NULL};

drake_err api_migration_decode(const char *body, size_t len, struct api_migration_body *out,
                               char *msg, size_t msglen)
{
	memset(out, 0, sizeof(*out));
	json_t *root;
	drake_err e = load_body(body, len, migration_keys, &root, msg, msglen);
	if (e)
		return e;
	if (!json_is_object(root))
		e = drake_errorf(DRAKE_EINVAL, msg, msglen, "request body: expected object, got %s",
		                 type_name(root));
	if (!e)
		e = name_field(root, "namespace", true, true, out->ns, sizeof(out->ns), msg,
		               msglen);
	if (!e)
		e = name_field(root, "pod", false, true, out->pod, sizeof(out->pod), msg, msglen);
	if (!e)
		e = name_field(root, "awayFrom", false, false, out->away, sizeof(out->away), msg,
		               msglen);
	if (!e)
		e = name_field(root, "onto", false, false, out->onto, sizeof(out->onto), msg,
		               msglen);
	if (!e && out->away[0] && strcmp(out->away, out->onto) == 0)
		e = drake_errorf(DRAKE_EINVAL, msg, msglen,
		                 "onto: \"%s\" is the node awayFrom names", out->onto);
	json_t *pause = e ? NULL : json_object_get(root, "pauseJob");
	if (pause && !json_is_boolean(pause) && !json_is_null(pause))
		e = drake_errorf(DRAKE_EINVAL, msg, msglen, "pauseJob: expected boolean, got %s",
		                 type_name(pause));
	else if (pause)
		out->pause_job = json_is_true(pause);
	json_decref(root);
	return e;
}

static char *dump(json_t *v)
{
	if (!v)
		return NULL;
	char *s = json_dumps(v, JSON_COMPACT);
	json_decref(v);
	return s;
}

char *api_token_review_encode(const char *token, const char *audience)
{
	if (audience && *audience)
		return dump(json_pack("{s:s,s:s,s:{s:s,s:[s]}}", "apiVersion",
		                      "authentication.k8s.io/v1", "kind", "TokenReview", "spec",
		                      "token", token, "audiences", audience));
	return dump(json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "authentication.k8s.io/v1", "kind",
	                      "TokenReview", "spec", "token", token));
}

/* status.audiences names audience. */
static bool names_audience(const json_t *status, const char *audience)
{
	size_t i;
	json_t *a;
	json_array_foreach (json_object_get(status, "audiences"), i, a) {
		if (json_is_string(a) && !strcmp(json_string_value(a), audience))
			return true;
	}
	return false;
}

/* The one string of extra[key] (extra values are arrays of strings), or NULL. */
static const char *extra_one(const json_t *extra, const char *key)
{
	json_t *a = json_object_get(extra, key);
	if (!json_is_array(a) || json_array_size(a) != 1 || !json_is_string(json_array_get(a, 0)))
		return NULL;
	return json_string_value(json_array_get(a, 0));
}

/* Kept as JSON text for the SubjectAccessReview; false when too large. */
static bool keep_json(const json_t *v, char **dst)
{
	*dst = NULL;
	if (!v)
		return true;
	char *s = json_dumps(v, JSON_COMPACT);
	if (!s || strlen(s) > API_USER_JSON_MAX) {
		free(s);
		return false;
	}
	*dst = s;
	return true;
}

static bool copy_str(char *dst, size_t size, const char *s)
{
	if (!s || strlen(s) >= size)
		return false;
	memcpy(dst, s, strlen(s) + 1);
	return true;
}

/* Which pod a service-account token is bound to, from its username and extra;
 * leaves r->bound false when it names none (a user, or a legacy secret token). */
static void bound_pod(struct api_token_review *r, const json_t *extra)
{
	static const char sa[] = "system:serviceaccount:";
	if (strncmp(r->user, sa, sizeof(sa) - 1) != 0)
		return;
	const char *ns = r->user + sizeof(sa) - 1;
	const char *colon = strchr(ns, ':');
	const char *pod = extra_one(extra, "authentication.kubernetes.io/pod-name");
	const char *uid = extra_one(extra, "authentication.kubernetes.io/pod-uid");
	if (!colon || (size_t)(colon - ns) >= sizeof(r->ns) || !pod || !uid)
		return;
	memcpy(r->ns, ns, (size_t)(colon - ns));
	r->ns[colon - ns] = '\0';
	if (!api_label_valid(r->ns) || !kube_name_valid(pod) ||
	    !copy_str(r->pod, sizeof(r->pod), pod) ||
	    !copy_str(r->pod_uid, sizeof(r->pod_uid), uid) || !uid[0]) {
		r->ns[0] = r->pod[0] = r->pod_uid[0] = '\0';
		return;
	}
	r->bound = true;
}

drake_err api_token_review_decode(const char *body, size_t len, const char *audience,
                                  struct api_token_review *out, char *msg, size_t msglen)
{
	memset(out, 0, sizeof(*out));
	json_error_t jerr;
	json_t *root = json_loadb(body, len, 0, &jerr);
	json_t *status = root ? json_object_get(root, "status") : NULL;
	drake_err e = DRAKE_OK;
	if (!json_is_object(status)) {
		e = drake_errorf(DRAKE_EINVAL, msg, msglen, "TokenReview answer without a status");
		goto out;
	}
	json_t *err = json_object_get(status, "error");
	if (json_is_string(err))
		snprintf(out->error, sizeof(out->error), "%s", json_string_value(err));
	if (!json_is_true(json_object_get(status, "authenticated")))
		goto out;
	if (audience && *audience && !names_audience(status, audience)) {
		snprintf(out->error, sizeof(out->error),
		         "the token is not for audience \"%s\" (the API server did not confirm it)",
		         audience);
		goto out;
	}
	json_t *user = json_object_get(status, "user");
	json_t *name = json_object_get(user, "username");
	json_t *uid = json_object_get(user, "uid");
	json_t *groups = get(user, "groups");
	json_t *extra = get(user, "extra");
	if (!json_is_string(name) ||
	    !copy_str(out->user, sizeof(out->user), json_string_value(name)) || !out->user[0] ||
	    (uid && !json_is_string(uid)) ||
	    (uid && !copy_str(out->uid, sizeof(out->uid), json_string_value(uid))) ||
	    (groups && !json_is_array(groups)) || (extra && !json_is_object(extra)) ||
	    !keep_json(groups, &out->groups) || !keep_json(extra, &out->extra)) {
		e = drake_errorf(DRAKE_EINVAL, msg, msglen,
		                 "TokenReview answer: a user drake cannot read (missing, malformed "
		                 "or over its limits)");
		goto out;
	}
	out->authenticated = true;
	bound_pod(out, extra);
out:
	json_decref(root);
	return e;
}

void api_token_review_release(struct api_token_review *r)
{
	if (!r)
		return;
	free(r->groups);
	free(r->extra);
	r->groups = r->extra = NULL;
}

char *api_access_review_encode(const struct api_token_review *who, const struct api_access *a)
{
	json_t *attrs =
	    json_pack("{s:s,s:s,s:s,s:s,s:s}", "namespace", a->ns, "verb", a->verb, "group",
	              a->group, "resource", a->resource, "subresource", a->subresource);
	json_t *spec = json_pack("{s:s,s:o}", "user", who->user, "resourceAttributes", attrs);
	if (!spec)
		return NULL;
	if (who->uid[0])
		json_object_set_new(spec, "uid", json_string(who->uid));
	json_t *g = who->groups ? json_loads(who->groups, 0, NULL) : NULL;
	if (g)
		json_object_set_new(spec, "groups", g);
	json_t *x = who->extra ? json_loads(who->extra, 0, NULL) : NULL;
	if (x)
		json_object_set_new(spec, "extra", x);
	return dump(json_pack("{s:s,s:s,s:o}", "apiVersion", "authorization.k8s.io/v1", "kind",
	                      "SubjectAccessReview", "spec", spec));
}

drake_err api_access_review_decode(const char *body, size_t len, bool *allowed, char *reason,
                                   size_t reasonlen, char *msg, size_t msglen)
{
	*allowed = false;
	if (reasonlen)
		reason[0] = '\0';
	json_t *root = json_loadb(body, len, 0, NULL);
	json_t *status = root ? json_object_get(root, "status") : NULL;
	drake_err e = DRAKE_OK;
	if (!json_is_object(status)) {
		e = drake_errorf(DRAKE_EINVAL, msg, msglen,
		                 "SubjectAccessReview answer without a status");
	} else {
		/* denied wins: an authorizer may deny outright */
		*allowed = json_is_true(json_object_get(status, "allowed")) &&
		           !json_is_true(json_object_get(status, "denied"));
		json_t *r = json_object_get(status, "reason");
		if (!json_is_string(r) || !*json_string_value(r))
			r = json_object_get(status, "evaluationError");
		if (json_is_string(r))
			snprintf(reason, reasonlen, "%s", json_string_value(r));
	}
	json_decref(root);
	return e;
}

char *api_id_encode(const char *id)
{
	return dump(json_pack("{s:s}", "id", id));
}

const char *api_error_message(const char *body, size_t len, char *buf, size_t buflen)
{
	if (!buflen)
		return buf;
	buf[0] = '\0';
	json_t *root = json_loadb(body, len, 0, NULL);
	json_t *e = json_object_get(root, "Error");
	if (json_is_string(e))
		snprintf(buf, buflen, "%s", json_string_value(e));
	json_decref(root);
	return buf;
}
