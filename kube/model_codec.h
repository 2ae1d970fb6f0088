/*
 * model_codec.h - the GPU models a pod's spec lets it run on, read from the
 * GPU-product node label (KUBE_GPU_PRODUCT_LABEL, which NVIDIA's GPU
 * feature discovery writes) in its nodeSelector or its required node
 * affinity, for place/'s view of the pod (reconciler/place_view.h).
 *
 * The nodeSelector's value wins when there is one. Otherwise a required
 * node affinity restricts the models when every one of its terms (which
 * kube-scheduler ORs) has an In expression on the label: the models are
 * the union of those values. A term without one, a NotIn or Exists on the
 * label, lets the pod run on some model it does not name, so the pod counts
 * as asking for any model. Preferred affinity never restricts.
 *
 * Ownership: the caller's buffer; nothing allocated.
 */
#ifndef DRAKE_KUBE_MODEL_CODEC_H
#define DRAKE_KUBE_MODEL_CODEC_H

#include <stdbool.h>
#include <stddef.h>

#define KUBE_GPU_PRODUCT_LABEL "nvidia.com/gpu.product"
#define KUBE_GPU_MODELS_MAX    512 /* the '|'-joined models kept, NUL included */

struct json_t;

/* The allowed models of spec joined by '|' ("A|B") into buf; false (buf
 * "") for any model, or when the join would not fit len. */
bool kube_gpu_models(const struct json_t *spec, char *buf, size_t len);

#endif
