/*
 * ratelimit.c - per-key token buckets in one flat table; see ratelimit.h.
 *
 * The table is scanned linearly: a key's hash is compared first, so a scan
 * of a few thousand entries costs microseconds, well under one TLS record's
 * work, and there is no second structure to keep in step.
 */
#include "extender/ratelimit.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct bucket {
	uint64_t hash;
	double tokens;
	double last; /* when tokens was last brought up to date */
	char key[RATELIMIT_KEY_MAX];
};

struct ratelimit {
	double rate, burst;
	size_t cap, n;
	struct bucket *b;
};

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 14695981039346656037ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

struct ratelimit *ratelimit_new(double rate, double burst, size_t cap)
{
	if (!(rate > 0) || !(burst >= 1) || cap == 0)
		return NULL;
	struct ratelimit *rl = calloc(1, sizeof(*rl));
	if (!rl)
		return NULL;
	rl->b = calloc(cap, sizeof(*rl->b));
	if (!rl->b) {
		free(rl);
		return NULL;
	}
	rl->rate = rate;
	rl->burst = burst;
	rl->cap = cap;
	return rl;
}

void ratelimit_free(struct ratelimit *rl)
{
	if (!rl)
		return;
	free(rl->b);
	free(rl);
}

static double refilled(const struct ratelimit *rl, const struct bucket *b, double now)
{
	double t = b->tokens + (now > b->last ? now - b->last : 0) * rl->rate;
	return t < rl->burst ? t : rl->burst;
}

/* A slot for a new key: a free one, else a full bucket, else the stalest. */
static struct bucket *slot_for(struct ratelimit *rl, double now)
{
	if (rl->n < rl->cap)
		return &rl->b[rl->n++];
	struct bucket *stalest = &rl->b[0];
	for (size_t i = 0; i < rl->n; i++) {
		if (refilled(rl, &rl->b[i], now) >= rl->burst)
			return &rl->b[i];
		if (rl->b[i].last < stalest->last)
			stalest = &rl->b[i];
	}
	return stalest;
}

bool ratelimit_take(struct ratelimit *rl, const char *key, double now, double *retry_after)
{
	if (retry_after)
		*retry_after = 0;
	size_t len = strlen(key);
	if (len >= RATELIMIT_KEY_MAX)
		return false;
	uint64_t h = fnv1a(key);
	struct bucket *b = NULL;
	for (size_t i = 0; i < rl->n && !b; i++)
		if (rl->b[i].hash == h && strcmp(rl->b[i].key, key) == 0)
			b = &rl->b[i];
	if (!b) {
		b = slot_for(rl, now);
		b->hash = h;
		memcpy(b->key, key, len + 1);
		b->tokens = rl->burst;
		b->last = now;
	}
	b->tokens = refilled(rl, b, now);
	if (now > b->last)
		b->last = now;
	if (b->tokens >= 1) {
		b->tokens -= 1;
		return true;
	}
	if (retry_after)
		*retry_after = (1 - b->tokens) / rl->rate;
	return false;
}

size_t ratelimit_len(const struct ratelimit *rl)
{
	return rl ? rl->n : 0;
}
