/*
 * usage_codec.h - what nodes measurably use, as the metrics API serves it:
 * a metrics.k8s.io/v1beta1 NodeMetricsList read into rows of node name,
 * CPU (milli) and memory working set (bytes).
 *
 * Ownership: *out is malloc'd (the caller frees), sorted by name.
 */
#ifndef DRAKE_RECONCILER_USAGE_CODEC_H
#define DRAKE_RECONCILER_USAGE_CODEC_H

#include <stddef.h>

#include "common/err.h"
#include "gang/cluster.h"

struct node_usage_row {
	char name[DRAKE_NODE_NAME_MAX];
	struct drake_usage u; /* known: true */
};

/*
 * Reads body (len bytes). An item without a name, or whose usage lacks a
 * readable cpu or memory quantity, is left out and counted in *skipped;
 * a body that is not a NodeMetricsList (not JSON, no items array) is
 * DRAKE_EINVAL with why. DRAKE_ENOMEM on allocation failure.
 */
drake_err node_usage_decode(const char *body, size_t len, struct node_usage_row **out, size_t *n,
                            size_t *skipped, char *why, size_t whylen) DRAKE_MUST_CHECK;

/* The row of node name in rows[0..n) (sorted), or NULL. */
const struct node_usage_row *node_usage_find(const struct node_usage_row *rows, size_t n,
                                             const char *name);

#endif
