/*
 * node.h - the node cache's compact record: what drake reads of a node
 * (about 17 KB as a jansson tree, with its images and conditions; this
 * record is a few hundred bytes):
 *   - metadata: name, namespace (nodes have none: ""), uid,
 *     resourceVersion; annotations under drake.dev/ and kubeshare/
 *     (kubeshare/gpu_info);
 *   - metadata: every label (what a pod's node selector and required
 *     node affinity match);
 *   - spec: unschedulable, its taints (key, value, effect), and whether a
 *     taint has effect NoSchedule or NoExecute;
 *   - status: allocatable (every resource, names and quantities interned)
 *     and conditions (type, status, lastTransitionTime).
 *
 * Ownership: as pod.h: records and their strings are the cache's.
 */
#ifndef DRAKE_KUBE_NODE_H
#define DRAKE_KUBE_NODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "kube/pod.h"

struct json_t;
struct kube_strpool;
struct kube_cache;
struct kube_cache_codec;

struct kube_taint {
	const char *key, *value, *effect; /* NULL when absent or not strings */
};

struct kube_node {
	const char *ns, *name, *uid, *rv;
	bool unschedulable; /* spec.unschedulable is true */
	bool no_schedule;   /* a taint with effect NoSchedule or NoExecute */
	uint16_t n_alloc, n_annotations, n_conditions, n_labels, n_taints;
	const struct kube_qty *alloc; /* status.allocatable */
	const struct kube_kv *annotations;
	const struct kube_kv *labels;
	const struct kube_taint *taints; /* spec.taints */
	const struct kube_condition *conditions;
};

/* True when a and b differ in what placement reads: labels, taints,
 * spec.unschedulable, allocatable (not status heartbeats). Both records
 * must come from one cache (their strings are interned in its pool). */
bool kube_node_placement_changed(const struct kube_node *a, const struct kube_node *b);

/* Decodes a node object; errors as kube_pod_decode(). */
drake_err kube_node_decode(const struct json_t *obj, struct kube_strpool *pool,
                           struct kube_node **out, char *msg, size_t msglen) DRAKE_MUST_CHECK;
void kube_node_free(struct kube_node *n, struct kube_strpool *pool);

/* Annotations the record keeps (kube_pod_annotation_kept), or NULL. */
const char *kube_node_annotation(const struct kube_node *n, const char *key);
/* status.conditions[type], as kube_obj_condition(). */
const char *kube_node_condition(const struct kube_node *n, const char *type, double *since);

/* ---- the node cache ---- */

void kube_node_cache_init(struct kube_cache *c);
const struct kube_cache_codec *kube_node_codec(void);
typedef bool (*kube_node_visit_cb)(const struct kube_node *n, void *arg); /* false stops */
const struct kube_node *kube_nodes_get(const struct kube_cache *c, const char *name);
void kube_nodes_foreach(const struct kube_cache *c, kube_node_visit_cb cb, void *arg);

#endif
