/*
 * pass_world.h - what one controller pass reads of the caches, built once
 * at the start of its admission round and lent read-only to both of the
 * pass's consumers: admission (admit.c) and migration (migrations.c).
 *
 * It holds the snapshot (gang/cluster.h: every node, every live pod
 * charged where it is bound or planned, the nodes left out of it, and the
 * measured node usage migration reads and admission does not) and every
 * drake-managed job decoded once, suspended ones included, each with
 * its drake.dev/migrations record decoded once. The caches do not change
 * during a pass (watch events are handled between passes), so both
 * consumers see what each of them built for itself before.
 *
 * Ownership: pass_world_build() fills w, which pass_world_release() frees.
 * The jobs borrow the job cache's objects: pass_world_drop_jobs() lets
 * them go at the end of the pass, and what is kept after it (the
 * snapshot, for the filter's re-plan) borrows nothing.
 */
#ifndef DRAKE_RECONCILER_PASS_WORLD_H
#define DRAKE_RECONCILER_PASS_WORLD_H

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"
#include "gang/cluster.h"
#include "reconciler/admit.h"
#include "reconciler/migration.h"
#include "kind/job.h"

struct json_t;
struct kube_cache;

/* One drake-managed job as the pass decoded it. */
struct pass_job {
	struct json_t *obj; /* borrowed from the job cache */
	struct job job;
	double created; /* metadata.creationTimestamp, s since the epoch */
	/* drake.dev/migrations: NULL when the job has none (an empty record)
	 * or it does not decode (mg_bad, mg_why) */
	struct job_migrations *mg;
	bool mg_bad;
	char mg_why[DRAKE_WHY_MAX];
};

struct pass_world {
	struct drake_cluster c;
	struct admit_skipped_list skipped; /* the nodes left out of c */
	struct pass_job *jobs;             /* cache order */
	size_t n;
	unsigned long gen; /* the round that kept it: 1, 2, ... (0: not kept) */
	double built_s;    /* when, on the controller's clock */
};

/* Decodes every drake-managed job of tfjobs once (a job that does not
 * decode, or that another controller manages, is left out: sync.c reports
 * it) into *jobs[0..*n), which pass_jobs_release() frees. */
drake_err pass_jobs_decode(const struct job_caches *caches, struct pass_job **jobs,
                           size_t *n) DRAKE_MUST_CHECK;
void pass_jobs_release(struct pass_job *jobs, size_t n);

/* The job's migration record: an empty one when it has none, NULL when it
 * does not decode (no move of the job until it is fixed). */
const struct job_migrations *pass_job_migrations(const struct pass_job *j);

/* Decodes tfjobs' jobs and builds the snapshot from nodes and pods (as
 * admit_snapshot, with the gang templates' resource names). w is zeroed
 * first; on error it holds what was built, for pass_world_release(). */
drake_err pass_world_build(struct pass_world *w, const struct kube_cache *nodes,
                           const struct kube_cache *pods, const struct job_caches *jobs, char *msg,
                           size_t msglen) DRAKE_MUST_CHECK;
/* Lets go of the jobs and the skipped list: what stays borrows nothing. */
void pass_world_drop_jobs(struct pass_world *w);
void pass_world_release(struct pass_world *w);

#endif
