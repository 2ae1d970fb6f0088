/*
 * vgpu.h - KubeShare's fractional GPUs. A replica may ask for a share of one
 * physical GPU instead of whole ones: kubeshare/gpu_request (a fraction in
 * (0, 1], held as milli-GPU) and kubeshare/gpu_mem (bytes of that GPU's
 * memory). Shares are packed onto shared GPUs, "vGPUs": a vGPU is one whole
 * GPU of its node opened for sharing, with 1000 milli-GPU and the GPU's
 * memory (the node's kubeshare/gpu_info) to hand out, named by a short
 * lowercase id that every pod using it carries as kubeshare/GPUID.
 *
 * Placement is first fit: a replica goes to the first open vGPU of its node
 * with room for both its milli-GPU and its memory, else a new vGPU is opened
 * on a free whole GPU. A node keeps its open vGPUs sorted by id, so the walk
 * is in a fixed order whatever order the pods were seen in.
 *
 * Pure and allocation-free: a node's table is a flat array inside the node,
 * so nodes, requests and plans stay copyable.
 */
#ifndef DRAKE_GANG_VGPU_H
#define DRAKE_GANG_VGPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

#define DRAKE_KUBESHARE_GPU_REQUEST "kubeshare/gpu_request"
#define DRAKE_KUBESHARE_GPU_LIMIT   "kubeshare/gpu_limit"
#define DRAKE_KUBESHARE_GPU_MEM     "kubeshare/gpu_mem"
#define DRAKE_KUBESHARE_GPUID       "kubeshare/GPUID"
#define DRAKE_KUBESHARE_GPU_INFO    "kubeshare/gpu_info" /* on nodes */

#define DRAKE_GPU_MILLI      1000 /* one whole GPU */
#define DRAKE_VGPU_ID_MAX    16   /* ids read from pods: 15 characters and NUL */
#define DRAKE_VGPU_ID_LEN    5    /* new ids: 5 lowercase letters, like KubeShare's */
#define DRAKE_NODE_MAX_VGPUS 16   /* shared GPUs tracked per node */

/* A replica's share of one GPU. milli == 0: the replica shares no GPU. */
struct drake_share {
	int32_t milli;       /* kubeshare/gpu_request, 1..1000 */
	int32_t limit_milli; /* kubeshare/gpu_limit, milli..1000 (not placed on) */
	int64_t mem_bytes;   /* kubeshare/gpu_mem, 0 when not asked */
};

/* One open vGPU: what is left of its GPU, and how many replicas share it. */
struct drake_vgpu {
	char id[DRAKE_VGPU_ID_MAX];
	int32_t free_milli;
	int32_t sharers;
	int64_t free_mem;
};

/* A node's open vGPUs, sorted by id. */
struct drake_vgpus {
	int n;
	struct drake_vgpu v[DRAKE_NODE_MAX_VGPUS];
};

/* Which vGPU a replica of a plan gets. */
struct drake_vgpu_pick {
	char id[DRAKE_VGPU_ID_MAX];
	bool opened; /* the vGPU is new: the plan opens it on a free whole GPU */
};

/*
 * Parses a replica's annotations (each may be NULL when absent). No request
 * and no memory: a zero share. gpu_request must be a number in (0, 1];
 * gpu_limit defaults to the request and must lie between it and 1; gpu_mem
 * is a byte count or quantity ("1073741824", "1Gi"). Fills msg on error.
 */
drake_err drake_share_parse(const char *request, const char *limit, const char *mem,
                            struct drake_share *out, char *msg, size_t len) DRAKE_MUST_CHECK;

/* Bytes of memory per GPU from a node's kubeshare/gpu_info: the first
 * comma-separated "<id>:<MiB>" entry. Fills msg on error. */
drake_err drake_gpu_info_parse(const char *info, int64_t *bytes, char *msg,
                               size_t len) DRAKE_MUST_CHECK;

/* "gpu_share=0.5 gpu_mem=4Gi" into buf (always terminated); returns buf. */
const char *drake_share_format(const struct drake_share *s, char *buf, size_t len);

/* Milli-GPU as KubeShare writes a fraction: 500 -> "0.5", 1000 -> "1". */
const char *drake_milli_format(int32_t milli, char *buf, size_t len);

/* Index of the vGPU called id, or -1. */
int drake_vgpu_find(const struct drake_vgpus *t, const char *id);

/* The first vGPU (in id order) with room for s, or -1. */
int drake_vgpu_first_fit(const struct drake_vgpus *t, const struct drake_share *s);

/* True when a new vGPU can be opened for s: a whole GPU is free, the table
 * has room, and the GPU's memory (gpu_mem bytes) holds s's. */
bool drake_vgpu_can_open(const struct drake_vgpus *t, int64_t free_gpus, int64_t gpu_mem,
                         const struct drake_share *s);

/* How many replicas asking s first fit packs into t plus new vGPUs opened
 * on free_gpus GPUs of gpu_mem bytes each; at most cap. */
int64_t drake_vgpu_count_fit(const struct drake_vgpus *t, int64_t free_gpus, int64_t gpu_mem,
                             const struct drake_share *s, int64_t cap);

/* Opens an empty vGPU called id holding gpu_mem bytes, keeping t sorted.
 * Returns its index; -1 when t is full or id is empty, too long or taken. */
int drake_vgpu_open(struct drake_vgpus *t, const char *id, int64_t gpu_mem);

/* Removes vGPU k from t. */
void drake_vgpu_close(struct drake_vgpus *t, int k);

/* One replica asking s joins (sign > 0) or leaves (sign < 0) vGPU g. */
void drake_vgpu_share(struct drake_vgpu *g, const struct drake_share *s, int sign);

/* Unused share of every open vGPU, in GPUs (stranded capacity). */
double drake_vgpu_stranded(const struct drake_vgpus *t);

/* A seed for new ids from a string (e.g. the job's uid). */
uint64_t drake_vgpu_seed(const char *s);

/*
 * The id of the next vGPU opened on node under seed: DRAKE_VGPU_ID_LEN
 * lowercase letters derived from (seed, node), stepping on to the next id
 * until it is not one of t's. Deterministic, and never an id open on t.
 */
void drake_vgpu_new_id(const struct drake_vgpus *t, uint64_t seed, const char *node,
                       char id[DRAKE_VGPU_ID_MAX]);

#endif
