/*
 * place.h - one task, one node: the resource model GPU placement is scored
 * on (place/frag.h, place/score.h), down to each GPU's free share.
 *
 * Why a folder of its own: gang/ plans whole gangs onto whole GPUs and
 * KubeShare vGPUs from a cluster snapshot; this scores a single task
 * against a single node, for plain pods and GPU shares alike, which is what
 * both the placement study (`drake sim placement`) and the extender's
 * prioritize verb ask. It shares no state with the gang planner, so it sits
 * beside it and is pure in the same way: no I/O, no clock, no third-party
 * header, deterministic. The fragmentation measures and drake's score are
 * integer arithmetic; the study's FGD and dot-product points are doubles,
 * as the study computes them, in a fixed order of operations, so the same
 * inputs give the same points.
 *
 * A node: CPU (milli-cores), memory (MiB), up to PLACE_MAX_GPUS GPUs of one
 * model, each with its free milli-GPU (1000 = the whole GPU), and how many
 * GPU tasks of each request class run on it (GPU clustering reads them).
 * A task: CPU, memory, and either num_gpu whole GPUs (gpu_milli 1000) or a
 * share of one GPU (num_gpu 1, gpu_milli 1..999), optionally restricted to
 * some GPU models; several shares fit on one GPU up to its 1000 milli.
 *
 * GPU models are bits of a struct place_models table, so a task's allowed
 * models are one mask. A task that uses no GPU has no model restriction.
 *
 * Ownership: plain structs copied by value; nothing here allocates.
 */
#ifndef DRAKE_PLACE_PLACE_H
#define DRAKE_PLACE_PLACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

#define PLACE_GPU_MILLI     1000                 /* one whole GPU */
#define PLACE_MAX_GPUS      16                   /* GPUs per node; also the most a task asks */
#define PLACE_MAX_MODELS    64                   /* GPU models a table names (bits of a mask) */
#define PLACE_MODEL_MAX     32                   /* model name, NUL included */
#define PLACE_CLASSES       (PLACE_MAX_GPUS + 1) /* a share, or 1..PLACE_MAX_GPUS whole */
#define PLACE_CLASS_SHARE   0
#define PLACE_ANY_MODEL     UINT64_MAX
#define PLACE_MAX_CPU_MILLI INT64_C(100000000)  /* 100,000 cores: per node and task */
#define PLACE_MAX_MEM_MIB   INT64_C(1073741824) /* 1 PiB */

struct place_models {
	int n;
	char name[PLACE_MAX_MODELS][PLACE_MODEL_MAX];
};

struct place_task {
	int64_t cpu_milli;
	int64_t mem_mib;
	int32_t num_gpu;   /* 0..PLACE_MAX_GPUS */
	int32_t gpu_milli; /* per GPU: 1000 whole, 1..999 a share (num_gpu 1); 0 without GPUs */
	uint64_t models;   /* allowed GPU models, PLACE_ANY_MODEL for any */
};

struct place_node {
	int64_t cpu_cap, cpu_left;
	int64_t mem_cap, mem_left;
	int32_t n_gpu;
	int32_t model; /* index in the model table, -1: none named */
	int32_t gpu_left[PLACE_MAX_GPUS];
	int32_t tasks[PLACE_CLASSES]; /* GPU tasks running, by place_task_class */
};

/* Index of name in the table, adding it when add is true; -1 when absent, or
 * when the table is full or the name empty or PLACE_MODEL_MAX long or more. */
int place_model_index(struct place_models *m, const char *name, bool add);

/* A gpu_spec ("A|B", empty parts skipped; "" or only '|': any model) into a
 * mask of m's models, adding the names m lacks. A full table or a name of
 * PLACE_MODEL_MAX characters or more is DRAKE_ELIMIT, filling msg. */
drake_err place_models_mask(struct place_models *m, const char *spec, uint64_t *mask, char *msg,
                            size_t mlen) DRAKE_MUST_CHECK;

/* Checks a task's numbers (the rules in the header above); fills msg. */
drake_err place_task_check(const struct place_task *t, char *msg, size_t mlen) DRAKE_MUST_CHECK;

/* PLACE_CLASS_SHARE for a share, k for k whole GPUs, -1 without GPUs. */
int place_task_class(const struct place_task *t);

/* GPU capacity the task takes, in milli-GPU. */
static inline int64_t place_task_gpu(const struct place_task *t)
{
	return (int64_t)t->num_gpu * t->gpu_milli;
}

/* An empty node; gpus beyond PLACE_MAX_GPUS are cut to it (callers check). */
void place_node_init(struct place_node *n, int64_t cpu_milli, int64_t mem_mib, int gpus, int model);

/* Free milli-GPU over the node's GPUs, and how many GPUs are wholly free. */
int64_t place_node_gpu_left(const struct place_node *n);
int place_node_free_gpus(const struct place_node *n);

/* The task may run on the node's GPU model (always, without GPUs). */
bool place_model_ok(const struct place_node *n, const struct place_task *t);

/* CPU, memory, model, and GPUs (k wholly free ones, or one GPU with room
 * for the share) all fit. */
bool place_fits(const struct place_node *n, const struct place_task *t);

/* For a share: the GPU with the least room that still holds it (lowest
 * index among equals), -1 when none. What the study's baselines pick. */
int place_share_best_fit(const struct place_node *n, const struct place_task *t);

/* The GPUs a fitting task takes into gpus[] (num_gpu entries): the share's
 * given GPU, or the lowest-numbered wholly free GPUs. Returns how many, 0
 * when they do not fit (a share's GPU is out of range or too full). */
int place_pick_gpus(const struct place_node *n, const struct place_task *t, int share_gpu,
                    int gpus[PLACE_MAX_GPUS]);

/* Charges (sign > 0) or gives back (sign < 0) the task on gpus[] (from
 * place_pick_gpus, or the GPUs a running pod holds). The caller checks fit;
 * values are clamped to the node's capacity either way. */
void place_charge(struct place_node *n, const struct place_task *t, const int *gpus, int sign);

#endif
