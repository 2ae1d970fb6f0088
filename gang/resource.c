/*
 * resource.c - arithmetic, fit tests and parsing for resource vectors.
 */
#include "gang/resource.h"

#include <stdio.h>
#include <string.h>

#include "gang/quantity.h"

#define NDIM (3 + DRAKE_RES_MAX_EXT)

/* The vector as an array, so every operation is one loop over all dims. */
static void to_array(const struct drake_res *r, int64_t v[NDIM])
{
	v[0] = r->cpu_milli;
	v[1] = r->mem_bytes;
	v[2] = r->gpu;
	for (int i = 0; i < DRAKE_RES_MAX_EXT; i++)
		v[3 + i] = r->ext[i];
}

static void from_array(struct drake_res *r, const int64_t v[NDIM])
{
	r->cpu_milli = v[0];
	r->mem_bytes = v[1];
	r->gpu = v[2];
	for (int i = 0; i < DRAKE_RES_MAX_EXT; i++)
		r->ext[i] = v[3 + i];
}

static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t s;
	if (__builtin_add_overflow(a, b, &s))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return s;
}

void drake_res_add(struct drake_res *a, const struct drake_res *b)
{
	drake_res_add_n(a, b, 1);
}

void drake_res_sub(struct drake_res *a, const struct drake_res *b)
{
	drake_res_add_n(a, b, -1);
}

void drake_res_add_n(struct drake_res *a, const struct drake_res *b, int64_t k)
{
	int64_t va[NDIM], vb[NDIM];
	to_array(a, va);
	to_array(b, vb);
	for (int i = 0; i < NDIM; i++) {
		int64_t m;
		if (__builtin_mul_overflow(vb[i], k, &m))
			m = (vb[i] > 0) == (k > 0) ? INT64_MAX : INT64_MIN;
		va[i] = sat_add(va[i], m);
	}
	from_array(a, va);
}

bool drake_res_fits(const struct drake_res *req, const struct drake_res *avail)
{
	int64_t vr[NDIM], va[NDIM];
	to_array(req, vr);
	to_array(avail, va);
	for (int i = 0; i < NDIM; i++)
		if (vr[i] > 0 && vr[i] > va[i])
			return false;
	return true;
}

int64_t drake_res_count_fit(const struct drake_res *req, const struct drake_res *avail, int64_t cap)
{
	int64_t vr[NDIM], va[NDIM];
	to_array(req, vr);
	to_array(avail, va);
	int64_t n = cap;
	for (int i = 0; i < NDIM; i++) {
		if (vr[i] <= 0)
			continue;
		int64_t k = va[i] > 0 ? va[i] / vr[i] : 0;
		if (k < n)
			n = k;
	}
	return n < 0 ? 0 : n;
}

bool drake_res_is_zero(const struct drake_res *r)
{
	int64_t v[NDIM];
	to_array(r, v);
	for (int i = 0; i < NDIM; i++)
		if (v[i] != 0)
			return false;
	return true;
}

double drake_res_leftover(const struct drake_res *left, const struct drake_res *alloc)
{
	int64_t vl[NDIM], va[NDIM];
	to_array(left, vl);
	to_array(alloc, va);
	double s = 0;
	for (int i = 0; i < NDIM; i++)
		if (va[i] > 0)
			s += (double)(vl[i] > 0 ? vl[i] : 0) / (double)va[i];
	return s;
}

int drake_res_name_find(const struct drake_res_names *names, const char *name)
{
	for (int i = 0; i < names->n; i++)
		if (strcmp(names->name[i], name) == 0)
			return i;
	return -1;
}

int drake_res_name_index(struct drake_res_names *names, const char *name, bool add)
{
	int i = drake_res_name_find(names, name);
	if (i >= 0)
		return i;
	if (!add || names->n >= DRAKE_RES_MAX_EXT || strlen(name) >= DRAKE_RES_NAME_MAX)
		return -1;
	snprintf(names->name[names->n], DRAKE_RES_NAME_MAX, "%s", name);
	return names->n++;
}

bool drake_res_builtin(const char *name)
{
	return !strcmp(name, "cpu") || !strcmp(name, "memory") || !strcmp(name, DRAKE_RES_GPU_NAME);
}

drake_err drake_res_set(struct drake_res *r, unsigned *has, const struct drake_res_names *names,
                        const char *name, const char *quantity, char *msg, size_t len)
{
	drake_err err;
	int64_t v;
	if (!name || !*name)
		return drake_errorf(DRAKE_EINVAL, msg, len, "empty resource name");
	bool builtin = drake_res_builtin(name);
	int i = builtin ? 0 : drake_res_name_find(names, name);
	if (i < 0)
		return drake_errorf(DRAKE_ENOTFOUND, msg, len,
		                    "resource \"%.64s\" is not one drake tracks", name);
	if (strcmp(name, "cpu") == 0) {
		if ((err = drake_quantity_milli(quantity, &v, msg, len)))
			return err;
		r->cpu_milli = v;
		*has |= DRAKE_RES_HAS_CPU;
		return DRAKE_OK;
	}
	if ((err = drake_quantity_value(quantity, &v, msg, len)))
		return err;
	if (strcmp(name, "memory") == 0) {
		r->mem_bytes = v;
		*has |= DRAKE_RES_HAS_MEM;
		return DRAKE_OK;
	}
	if (strcmp(name, DRAKE_RES_GPU_NAME) == 0) {
		int64_t milli;
		if ((err = drake_quantity_milli(quantity, &milli, msg, len)))
			return err;
		if (milli % 1000 != 0)
			return drake_errorf(DRAKE_EINVAL, msg, len,
			                    "%s must be a whole number, got \"%s\"", name,
			                    quantity);
		r->gpu = v;
		*has |= DRAKE_RES_HAS_GPU;
		return DRAKE_OK;
	}
	r->ext[i] = v;
	*has |= DRAKE_RES_HAS_EXT0 << i;
	return DRAKE_OK;
}

void drake_res_default_requests(struct drake_res *req, unsigned *req_has,
                                const struct drake_res *lim, unsigned lim_has)
{
	unsigned take = lim_has & ~*req_has;
	if (take & DRAKE_RES_HAS_CPU)
		req->cpu_milli = lim->cpu_milli;
	if (take & DRAKE_RES_HAS_MEM)
		req->mem_bytes = lim->mem_bytes;
	if (take & DRAKE_RES_HAS_GPU)
		req->gpu = lim->gpu;
	for (int i = 0; i < DRAKE_RES_MAX_EXT; i++)
		if (take & (DRAKE_RES_HAS_EXT0 << i))
			req->ext[i] = lim->ext[i];
	*req_has |= take;
}

const char *drake_res_format_bytes(int64_t b, char *buf, size_t len)
{
	static const char *const unit[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi"};
	int u = 0;
	while (u < 5 && b != 0 && b % 1024 == 0) {
		b /= 1024;
		u++;
	}
	if (buf && len)
		snprintf(buf, len, "%lld%s", (long long)b, unit[u]);
	return buf ? buf : "";
}

const char *drake_res_format(const struct drake_res *r, char *buf, size_t len)
{
	if (!buf || len == 0)
		return "";
	char mem[32];
	drake_res_format_bytes(r->mem_bytes, mem, sizeof(mem));
	int n;
	if (r->cpu_milli % 1000 == 0)
		n = snprintf(buf, len, "cpu=%lld mem=%s gpu=%lld", (long long)(r->cpu_milli / 1000),
		             mem, (long long)r->gpu);
	else
		n = snprintf(buf, len, "cpu=%lldm mem=%s gpu=%lld", (long long)r->cpu_milli, mem,
		             (long long)r->gpu);
	for (int i = 0; i < DRAKE_RES_MAX_EXT && n >= 0 && (size_t)n < len; i++)
		if (r->ext[i])
			n += snprintf(buf + n, len - (size_t)n, " ext%d=%lld", i,
			              (long long)r->ext[i]);
	return buf;
}
