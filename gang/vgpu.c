/*
 * vgpu.c - parsing KubeShare's annotations, and first-fit packing of GPU
 * shares onto a node's vGPU table.
 */
#include "gang/vgpu.h"

#include <stdio.h>
#include <string.h>

#include "gang/quantity.h"
#include "gang/resource.h"

#define ID_SPACE (26LL * 26 * 26 * 26 * 26) /* DRAKE_VGPU_ID_LEN lowercase letters */

/* A fraction of one GPU in (0, 1] as milli-GPU, rounded up. */
static drake_err parse_fraction(const char *name, const char *s, int32_t *milli, char *msg,
                                size_t len)
{
	char why[160];
	int64_t m;
	if (drake_quantity_milli(s, &m, why, sizeof(why)) != DRAKE_OK)
		return drake_errorf(DRAKE_EINVAL, msg, len, "%s \"%.64s\": %s", name, s, why);
	if (m <= 0)
		return drake_errorf(
		    DRAKE_EINVAL, msg, len,
		    "%s \"%.64s\" must be above 0 (a fraction of one GPU in (0, 1])", name, s);
	if (m > DRAKE_GPU_MILLI)
		return drake_errorf(DRAKE_EINVAL, msg, len,
		                    "%s \"%.64s\" is more than one GPU (whole GPUs are asked as "
		                    "nvidia.com/gpu)",
		                    name, s);
	*milli = (int32_t)m;
	return DRAKE_OK;
}

drake_err drake_share_parse(const char *request, const char *limit, const char *mem,
                            struct drake_share *out, char *msg, size_t len)
{
	struct drake_share s = {0};
	drake_err err;
	if (!request) {
		if (limit || mem)
			return drake_errorf(DRAKE_EINVAL, msg, len, "%s without %s",
			                    limit ? DRAKE_KUBESHARE_GPU_LIMIT
			                          : DRAKE_KUBESHARE_GPU_MEM,
			                    DRAKE_KUBESHARE_GPU_REQUEST);
		*out = s;
		return DRAKE_OK;
	}
	if ((err = parse_fraction(DRAKE_KUBESHARE_GPU_REQUEST, request, &s.milli, msg, len)))
		return err;
	s.limit_milli = s.milli;
	if (limit) {
		if ((err = parse_fraction(DRAKE_KUBESHARE_GPU_LIMIT, limit, &s.limit_milli, msg,
		                          len)))
			return err;
		if (s.limit_milli < s.milli)
			return drake_errorf(
			    DRAKE_EINVAL, msg, len, "%s \"%.64s\" is below %s \"%.64s\"",
			    DRAKE_KUBESHARE_GPU_LIMIT, limit, DRAKE_KUBESHARE_GPU_REQUEST, request);
	}
	if (mem) {
		char why[160];
		if (drake_quantity_value(mem, &s.mem_bytes, why, sizeof(why)) != DRAKE_OK)
			return drake_errorf(DRAKE_EINVAL, msg, len, "%s \"%.64s\": %s",
			                    DRAKE_KUBESHARE_GPU_MEM, mem, why);
	}
	*out = s;
	return DRAKE_OK;
}

drake_err drake_gpu_info_parse(const char *info, int64_t *bytes, char *msg, size_t len)
{
	/* "<id>:<MiB>,<id>:<MiB>,...": every GPU of a node is alike, so the
	 * first entry speaks for all of them. */
	size_t n = info ? strcspn(info, ",") : 0;
	const char *colon = NULL;
	for (size_t i = 0; i < n; i++)
		if (info[i] == ':')
			colon = &info[i];
	if (!colon || colon + 1 == info + n)
		return drake_errorf(DRAKE_EINVAL, msg, len,
		                    "%s \"%.64s\": expected \"<id>:<MiB>\" first",
		                    DRAKE_KUBESHARE_GPU_INFO, info ? info : "");
	int64_t mib = 0;
	for (const char *p = colon + 1; p < info + n; p++) {
		if (*p < '0' || *p > '9')
			return drake_errorf(DRAKE_EINVAL, msg, len,
			                    "%s \"%.64s\": memory must be whole MiB",
			                    DRAKE_KUBESHARE_GPU_INFO, info);
		mib = mib * 10 + (*p - '0');
		if (mib > (INT64_MAX >> 20))
			return drake_errorf(DRAKE_ELIMIT, msg, len,
			                    "%s \"%.64s\": memory too large",
			                    DRAKE_KUBESHARE_GPU_INFO, info);
	}
	if (mib == 0)
		return drake_errorf(DRAKE_EINVAL, msg, len, "%s \"%.64s\": a GPU with no memory",
		                    DRAKE_KUBESHARE_GPU_INFO, info);
	*bytes = mib << 20;
	return DRAKE_OK;
}

const char *drake_milli_format(int32_t milli, char *buf, size_t len)
{
	if (!buf || !len)
		return "";
	char frac[8];
	snprintf(frac, sizeof(frac), "%03d", (int)(milli % DRAKE_GPU_MILLI));
	for (int i = 2; i >= 0 && frac[i] == '0'; i--)
		frac[i] = '\0';
	snprintf(buf, len, "%d%s%s", (int)(milli / DRAKE_GPU_MILLI), frac[0] ? "." : "", frac);
	return buf;
}

const char *drake_share_format(const struct drake_share *s, char *buf, size_t len)
{
	if (!buf || !len)
		return "";
	char frac[16], mem[32];
	snprintf(buf, len, "gpu_share=%s gpu_mem=%s",
	         drake_milli_format(s->milli, frac, sizeof(frac)),
	         drake_res_format_bytes(s->mem_bytes, mem, sizeof(mem)));
	return buf;
}

int drake_vgpu_find(const struct drake_vgpus *t, const char *id)
{
	for (int k = 0; k < t->n; k++)
		if (strcmp(t->v[k].id, id) == 0)
			return k;
	return -1;
}

/* How many replicas asking s one vGPU with this much left still takes. */
static int64_t room_for(int64_t free_milli, int64_t free_mem, const struct drake_share *s)
{
	int64_t k = free_milli > 0 ? free_milli / s->milli : 0;
	if (s->mem_bytes > 0) {
		int64_t m = free_mem > 0 ? free_mem / s->mem_bytes : 0;
		if (m < k)
			k = m;
	}
	return k;
}

int drake_vgpu_first_fit(const struct drake_vgpus *t, const struct drake_share *s)
{
	for (int k = 0; k < t->n; k++)
		if (room_for(t->v[k].free_milli, t->v[k].free_mem, s) > 0)
			return k;
	return -1;
}

bool drake_vgpu_can_open(const struct drake_vgpus *t, int64_t free_gpus, int64_t gpu_mem,
                         const struct drake_share *s)
{
	return free_gpus > 0 && t->n < DRAKE_NODE_MAX_VGPUS &&
	       room_for(DRAKE_GPU_MILLI, gpu_mem, s) > 0;
}

int64_t drake_vgpu_count_fit(const struct drake_vgpus *t, int64_t free_gpus, int64_t gpu_mem,
                             const struct drake_share *s, int64_t cap)
{
	if (s->milli <= 0)
		return cap;
	/* The replicas are alike, so first fit fills each open vGPU in turn
	 * before it opens new ones: the count is the sum of their rooms. */
	int64_t n = 0;
	for (int k = 0; k < t->n && n < cap; k++)
		n += room_for(t->v[k].free_milli, t->v[k].free_mem, s);
	if (n < cap && drake_vgpu_can_open(t, free_gpus, gpu_mem, s)) {
		int64_t opens = DRAKE_NODE_MAX_VGPUS - t->n;
		if (free_gpus < opens)
			opens = free_gpus;
		n += opens * room_for(DRAKE_GPU_MILLI, gpu_mem, s); /* at most 16 x 1000 */
	}
	return n < cap ? n : cap;
}

int drake_vgpu_open(struct drake_vgpus *t, const char *id, int64_t gpu_mem)
{
	if (!id || !*id || strlen(id) >= DRAKE_VGPU_ID_MAX || t->n >= DRAKE_NODE_MAX_VGPUS ||
	    drake_vgpu_find(t, id) >= 0)
		return -1;
	int k = 0;
	while (k < t->n && strcmp(t->v[k].id, id) < 0)
		k++;
	memmove(&t->v[k + 1], &t->v[k], (size_t)(t->n - k) * sizeof(t->v[0]));
	t->n++;
	struct drake_vgpu *g = &t->v[k];
	memset(g, 0, sizeof(*g));
	snprintf(g->id, sizeof(g->id), "%s", id);
	g->free_milli = DRAKE_GPU_MILLI;
	g->free_mem = gpu_mem;
	return k;
}

void drake_vgpu_close(struct drake_vgpus *t, int k)
{
	if (k < 0 || k >= t->n)
		return;
	memmove(&t->v[k], &t->v[k + 1], (size_t)(t->n - k - 1) * sizeof(t->v[0]));
	t->n--;
}

void drake_vgpu_share(struct drake_vgpu *g, const struct drake_share *s, int sign)
{
	g->free_milli -= sign * s->milli;
	g->free_mem -= sign * s->mem_bytes;
	g->sharers += sign;
}

double drake_vgpu_stranded(const struct drake_vgpus *t)
{
	double s = 0;
	for (int k = 0; k < t->n; k++)
		if (t->v[k].free_milli > 0)
			s += (double)t->v[k].free_milli / DRAKE_GPU_MILLI;
	return s;
}

/* FNV-1a, continuing from h. */
static uint64_t fnv(uint64_t h, const char *s)
{
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

uint64_t drake_vgpu_seed(const char *s)
{
	return fnv(14695981039346656037ULL, s ? s : "");
}

void drake_vgpu_new_id(const struct drake_vgpus *t, uint64_t seed, const char *node,
                       char id[DRAKE_VGPU_ID_MAX])
{
	/* Step through consecutive ids from the hashed start: t holds at
	 * most DRAKE_NODE_MAX_VGPUS of them, so a free one comes within that
	 * many steps. */
	int64_t start = (int64_t)(fnv(seed ^ 0x9e3779b97f4a7c15ULL, node) % (uint64_t)ID_SPACE);
	for (int64_t step = 0; step <= t->n; step++) {
		int64_t v = (start + step) % ID_SPACE;
		for (int i = DRAKE_VGPU_ID_LEN - 1; i >= 0; i--) {
			id[i] = (char)('a' + v % 26);
			v /= 26;
		}
		id[DRAKE_VGPU_ID_LEN] = '\0';
		if (drake_vgpu_find(t, id) < 0)
			return;
	}
}
