/*
 * registry.h - every job kind drake is built with (a kind is a folder:
 * adding one is its folder and a line in registry.c). The controller serves
 * those drake serve --kinds names; the rest of drake reads them from here
 * only to recognise a replica's owner, and a kind's cost of a resize
 * (drake serve --resize-cost, drake sim's kinds).
 *
 * Ownership: the kinds are static.
 */
#ifndef DRAKE_KIND_REGISTRY_H
#define DRAKE_KIND_REGISTRY_H

#include <stddef.h>

#include "common/err.h"
#include "kind/job.h"

extern const struct job_kind *const job_kinds[];
extern const size_t job_nkinds;

/* The kind whose resource (plural, "tfjobs") or lower-case Kind
 * ("tfjob") is name, or NULL. */
const struct job_kind *job_kind_lookup(const char *name);

/* What a change of a running job's worker count costs, seconds, per kind
 * (job_kinds' order): the kinds' measured resize_shrink_s and
 * resize_grow_s unless an operator said otherwise. */
struct job_resize_cost {
	double shrink_s, grow_s;
};
struct job_resize_costs {
	struct job_resize_cost k[JOB_KINDS_MAX];
};

/* Every kind's own measured cost. */
void job_resize_costs_default(struct job_resize_costs *c);

/* Parses "KIND=SHRINK[/GROW],..." over c (KIND as job_kind_lookup reads
 * it, durations as "18s", "6.5s" or "1m"; one duration is both; above 0,
 * at most 1h): "pytorchjobs=18s/6.5s,tfjobs=2s". A kind not named keeps
 * its cost. "" changes nothing. EINVAL with msg naming the bad part. */
drake_err job_resize_costs_parse(const char *s, struct job_resize_costs *c, char *msg,
                                 size_t len) DRAKE_MUST_CHECK;

/* k's cost in c (NULL c: k's own); a kind drake does not know: zero. */
struct job_resize_cost job_resize_cost_of(const struct job_resize_costs *c,
                                          const struct job_kind *k);

#endif
