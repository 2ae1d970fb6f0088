/*
 * codec.h - the extender wire format (k8s.io/kube-scheduler/extender/v1).
 *
 * Decoders turn a request body into plain structs; encoders turn decisions
 * into the exact JSON kube-scheduler expects: capitalised keys, NodeNames
 * always present in node-name mode, scores as integers 0..10, preemption
 * answered with meta victims. Only codec.c includes jansson; everything else
 * sees these structs and an opaque handle on full Node objects.
 *
 * Ownership: every ext_*_decode() fills a caller-provided struct that the
 * caller must release with the matching ext_*_release() (also after a failed
 * decode). Encoders return a malloc'd NUL-terminated string the caller frees.
 */
#ifndef DRAKE_EXTENDER_CODEC_H
#define DRAKE_EXTENDER_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

/* Named limits on every request; a request over one gets a 400 naming it. */
struct ext_limits {
	size_t max_nodes;    /* candidate nodes in one request */
	size_t max_name_len; /* node, pod, namespace names and UIDs */
	size_t max_labels;   /* labels on the pod */
	size_t max_victims;  /* victim pods on one node in a preempt request */
};

#define EXT_DEFAULT_MAX_NODES    50000
#define EXT_DEFAULT_MAX_NAME_LEN 253
#define EXT_DEFAULT_MAX_LABELS   512
#define EXT_DEFAULT_MAX_VICTIMS  10000
#define EXT_MAX_SCORE            10

void ext_limits_default(struct ext_limits *lim);

struct ext_label {
	char *key;
	char *value;
};

/* The fields of the Pod object drake reads from a request. */
struct ext_pod {
	char *name;
	char *ns;
	char *uid; /* "" when absent */
	/* uid of the controller ownerReference (the first with controller:
	 * true), "" when none: for a TFJob's pod, the TFJob's uid. */
	char *owner_uid;
	struct ext_label *labels;
	size_t n_labels;
	/* Only the annotations under DRAKE_ANNOTATION_PREFIX ("drake.dev/"):
	 * admission's plan. Others (last-applied-configuration...) are skipped. */
	struct ext_label *annotations;
	size_t n_annotations;
};

/* Value of label key on pod, or NULL. */
const char *ext_pod_label(const struct ext_pod *pod, const char *key);
/* Value of a drake.dev/ annotation on pod, or NULL. */
const char *ext_pod_annotation(const struct ext_pod *pod, const char *key);

/* ExtenderArgs: the body of filter and prioritize. */
struct ext_args {
	struct ext_pod pod;
	bool node_cache_mode; /* NodeNames given (nodeCacheCapable: true), else Nodes */
	size_t n_nodes;
	char **node_names;  /* n_nodes names, in request order, in both modes */
	char *names_arena;  /* when set, node_names point into it (one allocation) */
	void *node_objects; /* full-Node mode: the Node objects, for echoing back */
};

drake_err ext_args_decode(const char *body, size_t len, const struct ext_limits *lim,
                          struct ext_args *out, char *msg, size_t msglen) DRAKE_MUST_CHECK;
void ext_args_release(struct ext_args *a);

/* A filter decision for one candidate node, indexed like ext_args.node_names. */
enum ext_verdict {
	EXT_PASS = 0,
	EXT_FAIL,              /* rejected; preemption may help */
	EXT_FAIL_UNRESOLVABLE, /* rejected; preemption would not help */
};

struct ext_filter_result {
	const enum ext_verdict *verdicts; /* n_nodes entries */
	const char *const *reasons;       /* per node, may be NULL (or all NULL) */
	const char *error;                /* non-NULL: the whole call failed */
};

char *ext_filter_encode(const struct ext_args *args, const struct ext_filter_result *res);

/* Scores indexed like ext_args.node_names; clamped to 0..EXT_MAX_SCORE. */
char *ext_prioritize_encode(const struct ext_args *args, const int64_t *scores);

/* ExtenderBindingArgs. */
struct ext_bind_args {
	char *pod_name;
	char *pod_ns;
	char *pod_uid; /* "" when absent */
	char *node;
};

drake_err ext_bind_decode(const char *body, size_t len, const struct ext_limits *lim,
                          struct ext_bind_args *out, char *msg, size_t msglen) DRAKE_MUST_CHECK;
void ext_bind_release(struct ext_bind_args *b);

/* ExtenderBindingResult / ExtenderFilterResult-style error: {"Error": "..."}. */
char *ext_error_encode(const char *error);

/* The v1 Binding object posted to /api/v1/namespaces/{ns}/pods/{name}/binding. */
char *ext_binding_object_encode(const struct ext_bind_args *b);

/* The "message" of a Kubernetes Status body, or NULL when there is none. */
char *ext_status_message(const char *body, size_t len);

/* A whole Pod object (as GET returns it): the same fields as in a request,
 * and spec.nodeName into *node_name (malloc'd, "" when unbound). Release
 * with ext_pod_release() and free(*node_name), also after a failure. */
drake_err ext_pod_object_decode(const char *body, size_t len, const struct ext_limits *lim,
                                struct ext_pod *out, char **node_name, char *msg,
                                size_t msglen) DRAKE_MUST_CHECK;
void ext_pod_release(struct ext_pod *pod);

/* spec.nodeName of a Pod body: malloc'd, "" when unbound, NULL on bad JSON. */
char *ext_pod_node_name(const char *body, size_t len);

/* ExtenderPreemptionArgs, normalised to meta victims (UIDs) in both modes. */
struct ext_victims {
	char *node;
	char **uids;
	size_t n_uids;
	int64_t num_pdb_violations;
};

struct ext_preempt_args {
	struct ext_pod pod;
	bool node_cache_mode; /* NodeNameToMetaVictims given, else NodeNameToVictims */
	struct ext_victims *nodes;
	size_t n_nodes;
};

drake_err ext_preempt_decode(const char *body, size_t len, const struct ext_limits *lim,
                             struct ext_preempt_args *out, char *msg,
                             size_t msglen) DRAKE_MUST_CHECK;
void ext_preempt_release(struct ext_preempt_args *p);

/* ExtenderPreemptionResult for the nodes whose keep[i] is true (keep may be
 * NULL: all nodes). Always NodeNameToMetaVictims. */
char *ext_preempt_encode(const struct ext_preempt_args *p, const bool *keep);

#endif
