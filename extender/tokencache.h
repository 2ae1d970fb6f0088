/*
 * tokencache.h - pods whose bearer token a TokenReview accepted a moment
 * ago, so a replica reporting progress every few seconds costs one review a
 * TTL rather than one a report (internal to extender/). Keyed by the
 * SHA-256 of the token, so the cache holds no token. Only tokens bound to a
 * pod are kept; an entry lives `ttl` seconds from its review, and when the
 * table is full an expired entry, else the oldest, makes room. Time comes
 * from the caller, in seconds from any fixed origin.
 *
 * Ownership: tokencache_new() returns a cache tokencache_free() frees (NULL
 * is fine); identities are copied in and out.
 */
#ifndef DRAKE_EXTENDER_TOKENCACHE_H
#define DRAKE_EXTENDER_TOKENCACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "extender/api_codec.h"

/* The pod a token is bound to, as its TokenReview said. */
struct token_pod {
	char user[API_USER_SIZE]; /* system:serviceaccount:<ns>:<sa> */
	char ns[API_NS_SIZE];
	char pod[API_NAME_SIZE];
	char pod_uid[64];
};

struct tokencache;

/* NULL when out of memory, cap is 0 or ttl is not positive. */
struct tokencache *tokencache_new(size_t cap, double ttl);
void tokencache_free(struct tokencache *c);

/* True, with *out filled, when token was put less than ttl seconds ago. */
bool tokencache_get(struct tokencache *c, const char *token, double now, struct token_pod *out);
/* Remembers token's pod from now on (replacing an older entry for it). */
void tokencache_put(struct tokencache *c, const char *token, const struct token_pod *pod,
                    double now);

/* Entries held, expired ones included until they are reused. */
size_t tokencache_len(const struct tokencache *c);

#endif
