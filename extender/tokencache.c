/*
 * tokencache.c - a flat table of token hashes and the pods they name; see
 * tokencache.h. A linear scan compares 32-byte digests, which for the few
 * hundred entries a cluster's reporting replicas fill costs less than
 * hashing the token did.
 */
#include "extender/tokencache.h"

#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

struct entry {
	unsigned char digest[32];
	double expires;
	struct token_pod pod;
};

struct tokencache {
	double ttl;
	size_t cap, n;
	struct entry *e;
};

struct tokencache *tokencache_new(size_t cap, double ttl)
{
	if (cap == 0 || !(ttl > 0))
		return NULL;
	struct tokencache *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->e = calloc(cap, sizeof(*c->e));
	if (!c->e) {
		free(c);
		return NULL;
	}
	c->cap = cap;
	c->ttl = ttl;
	return c;
}

void tokencache_free(struct tokencache *c)
{
	if (!c)
		return;
	/* the identities are not secrets, but the digests are worth wiping */
	memset(c->e, 0, c->cap * sizeof(*c->e));
	free(c->e);
	free(c);
}

static bool digest(const char *token, unsigned char out[32])
{
	unsigned int len = 0;
	return EVP_Digest(token, strlen(token), out, &len, EVP_sha256(), NULL) == 1 && len == 32;
}

static struct entry *find(struct tokencache *c, const unsigned char d[32])
{
	for (size_t i = 0; i < c->n; i++)
		if (memcmp(c->e[i].digest, d, 32) == 0)
			return &c->e[i];
	return NULL;
}

bool tokencache_get(struct tokencache *c, const char *token, double now, struct token_pod *out)
{
	unsigned char d[32];
	if (!c || !digest(token, d))
		return false;
	struct entry *e = find(c, d);
	if (!e || now >= e->expires)
		return false;
	*out = e->pod;
	return true;
}

void tokencache_put(struct tokencache *c, const char *token, const struct token_pod *pod,
                    double now)
{
	unsigned char d[32];
	if (!c || !digest(token, d))
		return;
	struct entry *e = find(c, d);
	if (!e && c->n < c->cap)
		e = &c->e[c->n++];
	for (size_t i = 0; !e && i < c->n; i++)
		if (now >= c->e[i].expires)
			e = &c->e[i];
	if (!e) {
		e = &c->e[0];
		for (size_t i = 1; i < c->n; i++)
			if (c->e[i].expires < e->expires)
				e = &c->e[i];
	}
	memcpy(e->digest, d, 32);
	e->expires = now + c->ttl;
	e->pod = *pod;
}

size_t tokencache_len(const struct tokencache *c)
{
	return c ? c->n : 0;
}
