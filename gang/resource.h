/*
 * resource.h - the resource vector every placement decision is made of:
 * CPU millicores, memory bytes, whole GPUs (nvidia.com/gpu) and up to
 * DRAKE_RES_MAX_EXT other extended resources, named through a small table
 * the cluster snapshot owns (so a vector stays a flat, copyable struct).
 *
 * The table names only what someone asks for: whoever builds a snapshot
 * interns the names that requests use (drake_res_name_index with add), and
 * reading a node or a request afterwards only looks names up, so a node
 * advertising a dozen resources costs nothing for the ones nobody requests.
 *
 * Pure and allocation-free: every function works on caller-owned structs.
 */
#ifndef DRAKE_GANG_RESOURCE_H
#define DRAKE_GANG_RESOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

#define DRAKE_RES_MAX_EXT  8
#define DRAKE_RES_NAME_MAX 254 /* a qualified Kubernetes name, plus NUL */
#define DRAKE_RES_GPU_NAME "nvidia.com/gpu"

struct drake_res {
	int64_t cpu_milli;
	int64_t mem_bytes;
	int64_t gpu;
	int64_t ext[DRAKE_RES_MAX_EXT];
};

/* Names of the extended resources; index i names drake_res.ext[i]. */
struct drake_res_names {
	int n;
	char name[DRAKE_RES_MAX_EXT][DRAKE_RES_NAME_MAX];
};

/* Which fields of a request or limit list were given (for defaulting). */
enum {
	DRAKE_RES_HAS_CPU = 1u << 0,
	DRAKE_RES_HAS_MEM = 1u << 1,
	DRAKE_RES_HAS_GPU = 1u << 2,
	DRAKE_RES_HAS_EXT0 = 1u << 3, /* ext[i] is bit 3 + i */
};

static inline void drake_res_zero(struct drake_res *r)
{
	*r = (struct drake_res){0};
}

/* a += b, a -= b, a += k * b. Saturate rather than wrap. */
void drake_res_add(struct drake_res *a, const struct drake_res *b);
void drake_res_sub(struct drake_res *a, const struct drake_res *b);
void drake_res_add_n(struct drake_res *a, const struct drake_res *b, int64_t k);

/* True when every component of req is <= the same component of avail. */
bool drake_res_fits(const struct drake_res *req, const struct drake_res *avail);

/* How many copies of req fit in avail, at most cap (cap also when req is 0). */
int64_t drake_res_count_fit(const struct drake_res *req, const struct drake_res *avail,
                            int64_t cap);

bool drake_res_is_zero(const struct drake_res *r);

/*
 * "Stranded capacity" after a placement: the sum over every dimension the
 * node has (alloc > 0) of left/alloc. Lower is a tighter fit; a node with
 * GPUs scores worse for a job that leaves them idle.
 */
double drake_res_leftover(const struct drake_res *left, const struct drake_res *alloc);

/* Index of name in the table, adding it when add is true; -1 when absent or
 * the table is full (or the name is DRAKE_RES_NAME_MAX long or more). */
int drake_res_name_index(struct drake_res_names *names, const char *name, bool add);

/* Index of name in the table, or -1: a lookup that never adds. */
int drake_res_name_find(const struct drake_res_names *names, const char *name);

/* True for the resources every vector has a field for: cpu, memory and
 * nvidia.com/gpu (they never take a slot of the table). */
bool drake_res_builtin(const char *name);

/*
 * Sets one named resource from a quantity string: "cpu" (millicores),
 * "memory" (bytes), "nvidia.com/gpu" (whole GPUs only), anything else an
 * extended resource the table names. A name the table does not hold is
 * DRAKE_ENOTFOUND, before its quantity is read (the caller decides whether
 * an untracked resource is skipped or refused). *has gets the matching
 * DRAKE_RES_HAS_* bit. Fills msg on error.
 */
drake_err drake_res_set(struct drake_res *r, unsigned *has, const struct drake_res_names *names,
                        const char *name, const char *quantity, char *msg,
                        size_t len) DRAKE_MUST_CHECK;

/* Kubernetes defaulting: a resource with a limit and no request gets the
 * limit as its request. */
void drake_res_default_requests(struct drake_res *req, unsigned *req_has,
                                const struct drake_res *lim, unsigned lim_has);

/* Bytes in the largest exact binary unit ("8Gi", "1536Mi", "7") into buf;
 * returns buf. */
const char *drake_res_format_bytes(int64_t bytes, char *buf, size_t len);

/* "cpu=500m mem=8Gi gpu=1" into buf (always terminated); returns buf. */
const char *drake_res_format(const struct drake_res *r, char *buf, size_t len);

#endif
