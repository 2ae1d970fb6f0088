/*
 * registry.h - every job kind drake is built with (a kind is a folder:
 * adding one is its folder and a line in registry.c). The controller serves
 * those drake serve --kinds names; the rest of drake reads them from here
 * only to recognise a replica's owner.
 *
 * Ownership: the kinds are static.
 */
#ifndef DRAKE_KIND_REGISTRY_H
#define DRAKE_KIND_REGISTRY_H

#include <stddef.h>

#include "kind/job.h"

extern const struct job_kind *const job_kinds[];
extern const size_t job_nkinds;

/* The kind whose resource (plural, "tfjobs") or lower-case Kind
 * ("tfjob") is name, or NULL. */
const struct job_kind *job_kind_lookup(const char *name);

#endif
