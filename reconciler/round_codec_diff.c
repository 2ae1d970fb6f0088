/*
 * round_codec_diff.c - where two decision-log lines first differ, by the
 * path of the field in the line, for `drake sim --replay`.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reconciler/round_codec.h"

/* First place a and b differ under path (objects: a's keys in order, then
 * keys only b has; arrays: by index). */
static bool first_diff(json_t *a, json_t *b, char *path, size_t len, json_t **la, json_t **lb)
{
	size_t used = strlen(path);
	if (json_is_object(a) && json_is_object(b)) {
		const char *key;
		json_t *v;
		json_object_foreach (a, key, v) {
			snprintf(path + used, len - used, "%s%s", used ? "." : "", key);
			json_t *w = json_object_get(b, key);
			if (!w) {
				*la = v, *lb = NULL;
				return true;
			}
			if (first_diff(v, w, path, len, la, lb))
				return true;
		}
		json_object_foreach (b, key, v) {
			if (!json_object_get(a, key)) {
				snprintf(path + used, len - used, "%s%s", used ? "." : "", key);
				*la = NULL, *lb = v;
				return true;
			}
		}
		path[used] = 0;
		return false;
	}
	if (json_is_array(a) && json_is_array(b)) {
		size_t na = json_array_size(a), nb = json_array_size(b);
		for (size_t i = 0; i < na || i < nb; i++) {
			snprintf(path + used, len - used, "[%zu]", i);
			if (i >= na || i >= nb) {
				*la = json_array_get(a, i), *lb = json_array_get(b, i);
				return true;
			}
			if (first_diff(json_array_get(a, i), json_array_get(b, i), path, len, la,
			               lb))
				return true;
		}
		path[used] = 0;
		return false;
	}
	if (json_equal(a, b))
		return false;
	*la = a, *lb = b;
	return true;
}

static void value(json_t *v, char *buf, size_t len)
{
	char *s = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
	snprintf(buf, len, "%s", s ? s : "(absent)");
	free(s);
}

int round_log_diff(const struct round_log_entry *e, const char *line,
                   struct round_log_difference *d)
{
	memset(d, 0, sizeof(*d));
	d->action = -1;
	json_t *b = json_loads(line, 0, NULL);
	if (!b)
		return -1;
	json_t *la = NULL, *lb = NULL;
	bool differs = first_diff(e->root, b, d->path, sizeof(d->path), &la, &lb);
	if (differs) {
		value(la, d->logged, sizeof(d->logged));
		value(lb, d->again, sizeof(d->again));
		unsigned long ai;
		if (sscanf(d->path, "out.actions[%lu]", &ai) == 1)
			d->action = (long)ai;
	}
	json_decref(b);
	return differs;
}
