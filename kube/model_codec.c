/*
 * model_codec.c - a pod's allowed GPU models from its nodeSelector or
 * required node affinity (model_codec.h), with jansson.
 */
#include "kube/model_codec.h"

#include <string.h>

#include <jansson.h>

/* Appends s to buf (len) after a '|' unless buf is empty; false when it
 * does not fit. */
static bool append(char *buf, size_t len, const char *s)
{
	size_t have = strlen(buf), add = strlen(s) + (have ? 1 : 0);
	if (have + add + 1 > len)
		return false;
	if (have)
		buf[have++] = '|';
	memcpy(buf + have, s, strlen(s) + 1);
	return true;
}

/* The values of term's In expression on the label appended to buf; false
 * when the term does not restrict the model (or they do not fit). */
static bool term_models(const json_t *term, char *buf, size_t len)
{
	size_t i, j;
	const json_t *e, *v;
	bool restricted = false;
	json_array_foreach (json_object_get(term, "matchExpressions"), i, e) {
		const char *key = json_string_value(json_object_get(e, "key"));
		const char *op = json_string_value(json_object_get(e, "operator"));
		if (!key || strcmp(key, KUBE_GPU_PRODUCT_LABEL) != 0 || !op || strcmp(op, "In"))
			continue;
		const json_t *values = json_object_get(e, "values");
		if (json_array_size(values) == 0)
			return false;
		json_array_foreach (values, j, v) {
			const char *s = json_string_value(v);
			if (!s || !*s || !append(buf, len, s))
				return false;
		}
		/* one In is enough: the term's models are within its values */
		restricted = true;
		break;
	}
	return restricted;
}

bool kube_gpu_models(const json_t *spec, char *buf, size_t len)
{
	if (!len)
		return false;
	buf[0] = '\0';
	const char *sel = json_string_value(
	    json_object_get(json_object_get(spec, "nodeSelector"), KUBE_GPU_PRODUCT_LABEL));
	if (sel && *sel) {
		if (strlen(sel) + 1 > len)
			return false;
		memcpy(buf, sel, strlen(sel) + 1);
		return true;
	}
	const json_t *req =
	    json_object_get(json_object_get(json_object_get(spec, "affinity"), "nodeAffinity"),
	                    "requiredDuringSchedulingIgnoredDuringExecution");
	const json_t *terms = json_object_get(req, "nodeSelectorTerms");
	size_t i;
	const json_t *t;
	if (json_array_size(terms) == 0)
		return false;
	json_array_foreach (terms, i, t) {
		if (!term_models(t, buf, len)) {
			buf[0] = '\0';
			return false;
		}
	}
	return true;
}
