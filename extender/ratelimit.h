/*
 * ratelimit.h - a token bucket per key, for the progress API (internal to
 * extender/): each key (a pod, "ns/name") earns `rate` tokens a second up
 * to `burst`, and each request spends one. The table holds at most `cap`
 * keys; when it is full, a key whose bucket has refilled (it then behaves
 * exactly like a key never seen) or else the one seen longest ago makes
 * room. Time comes from the caller in seconds from any fixed origin, so
 * this reads no clock and tests need no sleeps.
 *
 * Ownership: ratelimit_new() returns a table ratelimit_free() frees (NULL
 * is fine). Keys are copied; one longer than RATELIMIT_KEY_MAX - 1 bytes is
 * refused.
 */
#ifndef DRAKE_EXTENDER_RATELIMIT_H
#define DRAKE_EXTENDER_RATELIMIT_H

#include <stdbool.h>
#include <stddef.h>

#define RATELIMIT_KEY_MAX 320 /* "ns/pod": 63 + 1 + 253, NUL included */

struct ratelimit;

/* NULL when out of memory or rate, burst or cap is not positive. */
struct ratelimit *ratelimit_new(double rate, double burst, size_t cap);
void ratelimit_free(struct ratelimit *rl);

/* Spends one of key's tokens and returns true, or returns false and sets
 * *retry_after (when not NULL) to the seconds until the next token. A key
 * too long is refused with *retry_after 0. */
bool ratelimit_take(struct ratelimit *rl, const char *key, double now, double *retry_after);

/* Keys the table holds now. */
size_t ratelimit_len(const struct ratelimit *rl);

#endif
