/*
 * usage_codec.c - NodeMetricsList to rows; see usage_codec.h.
 */
#include "reconciler/usage_codec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "gang/quantity.h"

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct node_usage_row *)a)->name,
	              ((const struct node_usage_row *)b)->name);
}

/* Fills row from one NodeMetrics item; false when it is unreadable. */
static bool read_item(const json_t *item, struct node_usage_row *row)
{
	const char *name =
	    json_string_value(json_object_get(json_object_get(item, "metadata"), "name"));
	const json_t *usage = json_object_get(item, "usage");
	const char *cpu = json_string_value(json_object_get(usage, "cpu"));
	const char *mem = json_string_value(json_object_get(usage, "memory"));
	if (!name || !*name || strlen(name) >= sizeof(row->name) || !cpu || !mem)
		return false;
	char msg[128];
	if (drake_quantity_milli(cpu, &row->u.cpu_milli, msg, sizeof(msg)) != DRAKE_OK ||
	    drake_quantity_value(mem, &row->u.mem_bytes, msg, sizeof(msg)) != DRAKE_OK ||
	    row->u.cpu_milli < 0 || row->u.mem_bytes < 0)
		return false;
	snprintf(row->name, sizeof(row->name), "%s", name);
	row->u.known = true;
	return true;
}

drake_err node_usage_decode(const char *body, size_t len, struct node_usage_row **out, size_t *n,
                            size_t *skipped, char *why, size_t whylen)
{
	*out = NULL;
	*n = *skipped = 0;
	json_error_t jerr;
	json_t *doc = json_loadb(body ? body : "", body ? len : 0, 0, &jerr);
	if (!doc)
		return drake_errorf(DRAKE_EINVAL, why, whylen, "node metrics are not JSON: %s",
		                    jerr.text);
	json_t *items = json_object_get(doc, "items");
	if (!json_is_array(items)) {
		json_decref(doc);
		return drake_errorf(DRAKE_EINVAL, why, whylen,
		                    "node metrics have no items array (not a NodeMetricsList)");
	}
	size_t cap = json_array_size(items);
	struct node_usage_row *rows = cap ? calloc(cap, sizeof(*rows)) : NULL;
	if (cap && !rows) {
		json_decref(doc);
		return drake_errorf(DRAKE_ENOMEM, why, whylen, "out of memory");
	}
	size_t i;
	json_t *item;
	json_array_foreach (items, i, item) {
		if (read_item(item, &rows[*n]))
			(*n)++;
		else
			(*skipped)++;
	}
	json_decref(doc);
	if (*n > 1)
		qsort(rows, *n, sizeof(*rows), by_name);
	*out = rows;
	return DRAKE_OK;
}

const struct node_usage_row *node_usage_find(const struct node_usage_row *rows, size_t n,
                                             const char *name)
{
	struct node_usage_row key = {0};
	snprintf(key.name, sizeof(key.name), "%s", name ? name : "");
	return n ? bsearch(&key, rows, n, sizeof(*rows), by_name) : NULL;
}
