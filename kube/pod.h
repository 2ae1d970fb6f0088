/*
 * pod.h - the pod cache's compact record: exactly what drake reads of a
 * pod, decoded once when the informer stores it, instead of the whole
 * jansson tree (about 26 KB a pod; this record is a few hundred bytes).
 *
 * What is kept, and nothing else (a reader needing more adds it here and
 * to pod_codec.c, with a test):
 *   - metadata: name, namespace, uid, resourceVersion, the controller
 *     owner's uid and kind, creationTimestamp and deletionTimestamp (as
 *     written), whether the pod is being deleted;
 *   - labels under training.kubeflow.org/ (Kubeflow's replica labels);
 *     annotations under drake.dev/ and kubeshare/, and whether the pod has
 *     an annotations object at all (a JSON patch adds to it or creates it);
 *   - spec: nodeName, the nodeSelector's nvidia.com/gpu.product (the GPU
 *     model a pod asks for, which prioritize's learnt shapes keep), the
 *     schedulingGates' names in order, and the resource
 *     lists kube-scheduler counts (kube_res_spec: each app and init
 *     container's requests and limits, sidecar or not, and overhead);
 *   - status: phase, nominatedNodeName, conditions (type, status,
 *     reason, message, lastTransitionTime), each container status's name, restartCount and
 *     terminated exit code.
 * Values keep JSON's distinctions the readers made: NULL for an absent or
 * non-string field, "" for an empty one.
 *
 * Ownership: a record and every string it points to belong to the cache
 * that decoded it (its string pool); readers borrow them for as long as the
 * record is in the cache (until the next informer event is applied).
 */
#ifndef DRAKE_KUBE_POD_H
#define DRAKE_KUBE_POD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "kube/object.h"

struct json_t;
struct kube_strpool;
struct kube_cache;
struct kube_cache_codec;

/* Most entries of one kind a record keeps (containers, quantities of one
 * list, labels, annotations, gates, conditions, statuses): a bound on one
 * hostile object; the API server's own object size limit comes first. */
#define KUBE_RECORD_LIST_MAX 4096

#define KUBE_POD_LABEL_PREFIX          "training.kubeflow.org/"
#define KUBE_POD_ANNOTATION_PREFIX     "drake.dev/"
#define KUBE_POD_ANNOTATION_PREFIX_ALT "kubeshare/"

struct kube_kv {
	const char *key;
	const char *value; /* NULL: present but not a string */
};

/* One entry of a resource list: "nvidia.com/gpu": "1". */
struct kube_qty {
	const char *name;
	const char *value; /* as written; a number as requests.h formats it;
	                      NULL when neither a string nor a number */
};

enum kube_container_kind { KUBE_APP_CONTAINER, KUBE_INIT_CONTAINER };

struct kube_container_res {
	const struct kube_qty *req, *lim; /* resources.requests, resources.limits */
	uint16_t n_req, n_lim;
	uint8_t kind; /* enum kube_container_kind */
	bool sidecar; /* an init container with restartPolicy Always */
};

/* The resource lists of a pod spec (or a pod template's), in the spec's
 * order: app containers, then init containers, then overhead. */
struct kube_res_spec {
	const struct kube_container_res *c;
	const struct kube_qty *overhead;
	uint16_t n_c, n_overhead;
};

struct kube_condition {
	const char *type, *status; /* NULL when not strings */
	const char *reason;        /* NULL when absent or not a string */
	const char *message;       /* the same; kube-scheduler's reason a pod waits */
	double since;              /* lastTransitionTime (kube_time), 0 when absent */
};

struct kube_container_status {
	const char *name;  /* NULL when not a string */
	int64_t restarts;  /* restartCount; -1 when not an integer */
	int64_t exit_code; /* state.terminated.exitCode, when terminated */
	bool terminated;   /* exit_code is an integer given */
};

struct kube_pod {
	const char *ns, *name, *uid, *rv;   /* "" when absent (name never) */
	const char *owner_uid, *owner_kind; /* the controller owner's, or NULL */
	const char *node_name;              /* spec.nodeName as written, NULL when absent */
	const char *nominated_node;         /* status.nominatedNodeName */
	const char *phase;                  /* status.phase */
	const char *created, *deleted;      /* creation and deletion timestamps */
	bool deleting;                      /* metadata.deletionTimestamp is set */
	bool has_annotations;               /* metadata.annotations is an object */
	/* spec.nodeSelector, spec.affinity or spec.topologySpreadConstraints is
	 * set: where the pod may go is not drake's planner's alone to say */
	bool node_constrained;
	/* the pod's only node constraint is a required node affinity whose
	 * every term matches metadata.name (drake's --gang-pin writes one) */
	bool name_pinned;
	/* the GPU models the pod may run on, '|'-joined, from its nodeSelector
	 * or required node affinity on nvidia.com/gpu.product (model_codec.h);
	 * NULL: any */
	const char *gpu_product;
	uint16_t n_labels, n_annotations, n_gates, n_conditions, n_statuses;
	const struct kube_kv *labels, *annotations;
	const char *const *gates; /* spec.schedulingGates[i].name (NULL: not a string) */
	const struct kube_condition *conditions;
	const struct kube_container_status *statuses;
	struct kube_res_spec res;
};

/* True for the label and annotation keys a pod record keeps. */
bool kube_pod_label_kept(const char *key);
bool kube_pod_annotation_kept(const char *key);

/* Decodes a pod object into a new record interning its strings in pool;
 * DRAKE_EINVAL without a metadata.name, DRAKE_ELIMIT past
 * KUBE_RECORD_LIST_MAX, DRAKE_ENOMEM. */
drake_err kube_pod_decode(const struct json_t *obj, struct kube_strpool *pool,
                          struct kube_pod **out, char *msg, size_t msglen) DRAKE_MUST_CHECK;
/* Frees a record and puts its strings back into pool; NULL is ignored. */
void kube_pod_free(struct kube_pod *p, struct kube_strpool *pool);

/* The resource lists of a pod spec object (a TFJob's pod template): a
 * record of its own, freed with kube_res_spec_free(). */
drake_err kube_res_spec_decode(const struct json_t *spec, struct kube_strpool *pool,
                               struct kube_res_spec **out, char *msg,
                               size_t msglen) DRAKE_MUST_CHECK;
void kube_res_spec_free(struct kube_res_spec *s, struct kube_strpool *pool);

/* The same answers kube_obj_meta() gives for the pod's object. */
void kube_pod_meta(const struct kube_pod *p, struct kube_meta *m);
/* True when phase (a pod's status.phase, or NULL) is Succeeded or Failed:
 * the pod ran to its end and holds no room on its node. */
bool kube_pod_phase_done(const char *phase);
/* Labels and annotations the record keeps (asking for another key is a
 * bug: it asserts), or NULL. */
const char *kube_pod_label(const struct kube_pod *p, const char *key);
const char *kube_pod_annotation(const struct kube_pod *p, const char *key);
/* status.conditions[type]: its status or NULL, *since as kube_obj_condition(). */
const char *kube_pod_condition(const struct kube_pod *p, const char *type, double *since);
/* status.conditions[type] itself, or NULL. */
const struct kube_condition *kube_pod_condition_of(const struct kube_pod *p, const char *type);
/* Index of the scheduling gate named name, or -1. */
int kube_pod_gate_index(const struct kube_pod *p, const char *name);

/* ---- the pod cache (a kube_cache made with kube_pod_cache_init) ---- */

void kube_pod_cache_init(struct kube_cache *c);
/* The codec of such a cache (for kube_informer_options.codec). */
const struct kube_cache_codec *kube_pod_codec(void);
typedef bool (*kube_pod_visit_cb)(const struct kube_pod *p, void *arg); /* false stops */
const struct kube_pod *kube_pods_get(const struct kube_cache *c, const char *ns, const char *name);
void kube_pods_foreach(const struct kube_cache *c, kube_pod_visit_cb cb, void *arg);
void kube_pods_by_owner(const struct kube_cache *c, const char *uid, kube_pod_visit_cb cb,
                        void *arg);
void kube_pods_by_node(const struct kube_cache *c, const char *node, kube_pod_visit_cb cb,
                       void *arg);

#endif
