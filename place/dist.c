/*
 * dist.c - counting task shapes and choosing the typical ones.
 */
#include "place/dist.h"

#include <stdlib.h>
#include <string.h>

/* The order shapes are kept and tie-broken in: GPU request first (so a
 * group's shapes are adjacent), then CPU, then memory. */
static int task_cmp(const struct place_task *a, const struct place_task *b)
{
#define CMP(f)                                                                                     \
	if (a->f != b->f)                                                                          \
		return a->f < b->f ? -1 : 1;
	CMP(num_gpu)
	CMP(gpu_milli)
	CMP(models)
	CMP(cpu_milli)
	CMP(mem_mib)
#undef CMP
	return 0;
}

static int same_group(const struct place_task *a, const struct place_task *b)
{
	return a->num_gpu == b->num_gpu && a->gpu_milli == b->gpu_milli && a->models == b->models;
}

void place_dist_init(struct place_dist *d)
{
	memset(d, 0, sizeof(*d));
}

void place_dist_release(struct place_dist *d)
{
	if (!d)
		return;
	free(d->s);
	memset(d, 0, sizeof(*d));
}

/* Index of t's shape, or where it would go (*found false). */
static size_t find(const struct place_dist *d, const struct place_task *t, int *found)
{
	size_t lo = 0, hi = d->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = task_cmp(&d->s[mid].t, t);
		if (c == 0) {
			*found = 1;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = 0;
	return lo;
}

/* Drops shapes whose count fell to zero, to make room. */
static void compact(struct place_dist *d)
{
	size_t k = 0;
	for (size_t i = 0; i < d->n; i++)
		if (d->s[i].count > 0)
			d->s[k++] = d->s[i];
	d->n = k;
}

drake_err place_dist_observe(struct place_dist *d, const struct place_task *t, int64_t count)
{
	if (count == 0)
		return DRAKE_OK;
	if (count > 0 && count > PLACE_DIST_MAX_TOTAL - d->total)
		return DRAKE_ELIMIT;
	struct place_task key = *t;
	if (key.num_gpu == 0)
		key.models = PLACE_ANY_MODEL; /* no GPU, no model restriction */
	int found;
	size_t i = find(d, &key, &found);
	if (!found && count < 0) {
		/* taken back from an untracked shape, or never seen */
		int64_t back = count < -d->untracked ? d->untracked : -count;
		d->untracked -= back;
		d->total -= back;
		d->changes++;
		return DRAKE_OK;
	}
	if (!found && d->n == PLACE_DIST_MAX_SHAPES) {
		compact(d);
		i = find(d, &key, &found);
	}
	if (!found && d->n == PLACE_DIST_MAX_SHAPES) {
		d->untracked += count;
		d->total += count;
		d->changes++;
		return DRAKE_OK;
	}
	if (!found) {
		if (d->n == d->cap) {
			size_t c = d->cap ? d->cap * 2 : 64;
			if (c > PLACE_DIST_MAX_SHAPES)
				c = PLACE_DIST_MAX_SHAPES;
			struct place_shape *p = realloc(d->s, c * sizeof(*p));
			if (!p)
				return DRAKE_ENOMEM;
			d->s = p;
			d->cap = c;
		}
		memmove(&d->s[i + 1], &d->s[i], (d->n - i) * sizeof(*d->s));
		d->s[i] = (struct place_shape){key, 0};
		d->n++;
	}
	int64_t before = d->s[i].count;
	d->s[i].count = before + count < 0 ? 0 : before + count;
	d->total += d->s[i].count - before;
	d->changes++;
	return DRAKE_OK;
}

/* Most popular first; equal counts in shape order. */
static int by_popularity(const void *pa, const void *pb)
{
	const struct place_shape *a = pa, *b = pb;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return task_cmp(&a->t, &b->t);
}

static int by_shape(const void *pa, const void *pb)
{
	const struct place_shape *a = pa, *b = pb;
	return task_cmp(&a->t, &b->t);
}

void place_typical_build(const struct place_dist *d, int coverage_pct, struct place_typical *out)
{
	out->n = out->n_groups = 0;
	out->total = out->gpu_task_cpu = out->gpu_task_gpu = 0;
	if (coverage_pct < 1)
		coverage_pct = 1;
	if (coverage_pct > 100)
		coverage_pct = 100;
	/* Selection by popularity, one pass per shape taken: at most
	 * PLACE_TYPICAL_MAX passes over PLACE_DIST_MAX_SHAPES, and no memory. */
	unsigned char taken[PLACE_DIST_MAX_SHAPES] = {0};
	int64_t cum = 0;
	while (out->n < PLACE_TYPICAL_MAX && cum * 100 < (int64_t)coverage_pct * d->total) {
		size_t best = d->n;
		for (size_t i = 0; i < d->n; i++)
			if (!taken[i] && d->s[i].count > 0 &&
			    (best == d->n || by_popularity(&d->s[i], &d->s[best]) < 0))
				best = i;
		if (best == d->n)
			break;
		taken[best] = 1;
		out->s[out->n++] = d->s[best];
		cum += d->s[best].count;
	}
	out->total = cum;
	qsort(out->s, out->n, sizeof(out->s[0]), by_shape);
	for (size_t i = 0; i < out->n; i++) {
		const struct place_task *t = &out->s[i].t;
		if (i == 0 || !same_group(t, &out->s[i - 1].t))
			out->g[out->n_groups++] = (struct place_group){
			    t->num_gpu, t->gpu_milli, t->models, (int32_t)i, 0, 0};
		struct place_group *g = &out->g[out->n_groups - 1];
		g->n++;
		g->weight += out->s[i].count;
	}
	/* In double: a count times a request could overflow int64, and the
	 * sums run in a fixed order, so the result is the same every time. */
	double tasks = 0, cpu = 0, gpu = 0;
	for (size_t i = 0; i < out->n; i++) {
		const struct place_shape *s = &out->s[i];
		if (s->t.num_gpu == 0)
			continue;
		tasks += (double)s->count;
		cpu += (double)s->count * (double)s->t.cpu_milli;
		gpu += (double)s->count * (double)place_task_gpu(&s->t);
	}
	if (tasks > 0) {
		out->gpu_task_cpu = (int64_t)(cpu / tasks + 0.5);
		out->gpu_task_gpu = (int64_t)(gpu / tasks + 0.5);
	}
}
