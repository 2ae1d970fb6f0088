/*
 * place_view.h - the controller's caches as place/ sees them, for the
 * extender's prioritize verb: the shape of the pod being scored and the
 * state of each candidate node (place/place.h).
 *
 * A pod's shape: its requests counted as kube-scheduler counts them
 * (requests.h: CPU, memory, nvidia.com/gpu), or, with a KubeShare
 * kubeshare/gpu_request below one GPU, that share of one GPU; its allowed
 * GPU models, those its nodeSelector or required node affinity names on
 * the GPU-product label (kube/model_codec.h), else any.
 *
 * A node: its allocatable CPU, memory and nvidia.com/gpu, its GPU model
 * from the GPU-product label (PLACE_VIEW_MODEL_LABEL, which NVIDIA's GPU
 * feature discovery writes), and every pod bound to it that has not
 * finished charged on it: a share on the GPU its kubeshare/GPUID names
 * (the first pod of an id opens it on a wholly free GPU), whole GPUs on
 * the lowest-numbered wholly free ones. Pods kube-scheduler has placed but
 * whose binding drake's cache has not seen yet are not charged.
 *
 * Pure readers of the caches: everything is borrowed, nothing allocated,
 * except struct place_view_memo, which keeps each node's state between
 * calls until the informers say the node or a pod on it changed (a
 * prioritize call names hundreds of nodes; reading each one's pods and
 * their quantities every time cost 9 us a node, BENCHMARKS.md).
 */
#ifndef DRAKE_RECONCILER_PLACE_VIEW_H
#define DRAKE_RECONCILER_PLACE_VIEW_H

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"
#include "place/place.h"

struct kube_cache;
struct kube_pod;
struct kube_node;

#define PLACE_VIEW_MODEL_LABEL "nvidia.com/gpu.product"

/* The shape of pod into t, its model named in models (added when new;
 * models NULL: any model); EINVAL (why) when its requests cannot be read
 * or exceed what place/ models (more than PLACE_MAX_GPUS GPUs...), or the
 * model table is full. */
drake_err place_view_task(const struct kube_pod *pod, struct place_models *models,
                          struct place_task *t, char *why, size_t whylen) DRAKE_MUST_CHECK;

/* Node node (from the node cache) with the pods of pods bound to it, into
 * n; its model is named in models (added when new; -1 when the table is
 * full or the node has no label). EINVAL (why) when its allocatable
 * cannot be read. */
drake_err place_view_node(const struct kube_node *node, const struct kube_cache *pods,
                          struct place_models *models, struct place_node *n, char *why,
                          size_t whylen) DRAKE_MUST_CHECK;

/*
 * The pod ns/name (from the pod cache) and the candidates (from the node
 * cache): task, and nodes[i] with known[i] true for each candidate the
 * cache holds and can read (false: left for the caller to score as not
 * fitting). EINVAL (why) when the pod is not in the cache or its shape
 * cannot be read.
 */
drake_err place_view_build(const struct kube_cache *nodes, const struct kube_cache *pods,
                           const char *ns, const char *name, const char *const *candidates,
                           size_t n, struct place_models *models, struct place_task *task,
                           struct place_node *out, bool *known, char *why,
                           size_t whylen) DRAKE_MUST_CHECK;

/* Node states kept between calls, by node name. Whoever applies the
 * informers' events calls place_view_memo_forget for the node of every
 * pod added, changed or deleted (its old and new node) and for every node
 * changed; a forgotten or never seen node is read again from the caches.
 * Owns its entries; release frees them. */
struct place_view_memo_entry;
struct place_view_memo {
	struct place_view_memo_entry *e; /* open addressing, cap a power of two */
	size_t cap, n;
};

void place_view_memo_release(struct place_view_memo *m);
void place_view_memo_forget(struct place_view_memo *m, const char *node);
/* Forgets every node (a relist, a model table that changed). */
void place_view_memo_clear(struct place_view_memo *m);

/* place_view_build reading known nodes from memo (NULL: none), and
 * remembering those it reads. Out of memory only stops remembering. */
drake_err place_view_build_memo(const struct kube_cache *nodes, const struct kube_cache *pods,
                                struct place_view_memo *memo, const char *ns, const char *name,
                                const char *const *candidates, size_t n,
                                struct place_models *models, struct place_task *task,
                                struct place_node *out, bool *known, char *why,
                                size_t whylen) DRAKE_MUST_CHECK;

#endif
