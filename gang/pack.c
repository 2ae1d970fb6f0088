/*
 * pack.c - the fullest set of waiting jobs with most jobs (see pack.h): a
 * 0/1 knapsack over the window, one best set kept per exact sum.
 *
 * Keeping one set per sum is exact for pack.h's order because the order
 * survives adding the same new job to two sets of equal sum: the counts
 * both grow by one and the first job not in both is unchanged. So the
 * best set of a sum, extended, is never beaten by a worse set extended.
 */
#include "gang/pack.h"

#include <stdlib.h>
#include <string.h>

struct best {
	bool ok;       /* some set sums to exactly this */
	int count;     /* its jobs */
	uint64_t mask; /* bit i: job i of the window */
};

/* Is set a (count ca) better than set b (count cb), both of one sum? */
static bool better(int ca, uint64_t a, int cb, uint64_t b)
{
	if (ca != cb)
		return ca > cb;
	uint64_t d = a ^ b;
	return d && (a & (d & (~d + 1))); /* the earliest job not in both is a's */
}

drake_err drake_pack_choose(const int64_t *gpus, size_t n, int64_t room, bool *chosen)
{
	size_t m = n < DRAKE_PACK_WINDOW ? n : DRAKE_PACK_WINDOW;
	memset(chosen, 0, n * sizeof(*chosen));
	int64_t sum = 0;
	for (size_t i = 0; i < m; i++)
		sum += gpus[i] > 0 ? gpus[i] : 0;
	if (sum <= room) {
		for (size_t i = 0; i < m; i++)
			chosen[i] = true;
		return DRAKE_OK;
	}
	if (room < 0)
		room = 0;
	size_t cap = (size_t)room; /* < sum: bounded by the window's GPUs */
	struct best *b = calloc(cap + 1, sizeof(*b));
	if (!b)
		return DRAKE_ENOMEM;
	b[0].ok = true;
	for (size_t i = 0; i < m; i++) {
		size_t g = gpus[i] > 0 ? (size_t)gpus[i] : 0;
		if (g > cap)
			continue;
		uint64_t bit = (uint64_t)1 << i;
		for (size_t f = cap + 1; f-- > g;) {
			const struct best *from = &b[f - g];
			if (!from->ok)
				continue;
			int c = from->count + 1;
			uint64_t mask = from->mask | bit;
			if (!b[f].ok || better(c, mask, b[f].count, b[f].mask))
				b[f] = (struct best){true, c, mask};
		}
	}
	size_t f = cap;
	while (!b[f].ok)
		f--;
	for (size_t i = 0; i < m; i++)
		chosen[i] = (b[f].mask >> i) & 1;
	free(b);
	return DRAKE_OK;
}
