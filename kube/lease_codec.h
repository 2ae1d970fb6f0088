/*
 * lease_codec.h - coordination.k8s.io/v1 Lease objects to and from the
 * record the leader rule works on.
 *
 * Ownership: lease_decode() fills caller-owned buffers; lease_encode()
 * returns a malloc'd JSON text the caller frees.
 */
#ifndef DRAKE_KUBE_LEASE_CODEC_H
#define DRAKE_KUBE_LEASE_CODEC_H

#include <stddef.h>

#include "common/err.h"
#include "kube/leader_rule.h"

/* Longest resourceVersion kept. */
#define LEASE_RV_MAX 64

/* Reads a Lease's spec and metadata.resourceVersion from body. A spec
 * field that is absent reads as its zero value; one of the wrong type, or
 * a holder longer than LEASE_HOLDER_MAX, is DRAKE_EINVAL with why. */
drake_err lease_decode(const char *body, size_t len, struct lease_record *out, char *rv,
                       size_t rvlen, char *why, size_t whylen) DRAKE_MUST_CHECK;

/* The Lease ns/name holding r; rv, when not NULL, makes it an update that
 * the API server refuses (409) if the Lease changed since it was read.
 * NULL when out of memory. */
char *lease_encode(const char *ns, const char *name, const char *rv, const struct lease_record *r);

#endif
