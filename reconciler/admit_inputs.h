/*
 * admit_inputs.h - what admit.c's round reads from the pass's world and
 * the pod cache: each drake-managed job the pass decoded, as
 * gang/round.h's input (admit_inputs.c).
 *
 * Ownership: admit_inputs_collect() fills in, which admit_inputs_release()
 * frees; the round's inputs borrow strings from the caches, which must not
 * change in between.
 */
#ifndef DRAKE_RECONCILER_ADMIT_INPUTS_H
#define DRAKE_RECONCILER_ADMIT_INPUTS_H

#include "gang/round.h"
#include "reconciler/admit.h"
#include "reconciler/migration.h"
#include "reconciler/scale.h"
#include "kind/job.h"

/* One job as the round gets it, and the storage its inputs borrow. */
struct candidate {
	struct job job;
	char key[320]; /* "ns/name" */
	struct job_scale scale;
	struct job_move move;
	struct drake_gang_req req; /* as the spec asks; node masks in mask[] */
	double created;
	struct drake_round_place *place;
	struct drake_round_member *members; /* PS, chief, then max_instances workers */
	unsigned char *mask[3];             /* the PS', workers' and chief's node masks */
	char scale_why[DRAKE_WHY_MAX];      /* drake.dev/scale is malformed: why */
};

/* The round's jobs, in[i] read from cand[i], and the jobs it cannot be
 * given (a malformed template, node rules), each noted as invalid. */
struct collect_ctx {
	const struct admit_options *opts;
	const struct kube_cache *pods, *nodes;
	const struct drake_cluster *c;
	struct candidate *cand;
	struct drake_round_job *in;
	size_t n, cap;
	struct admit_waiting *invalid;
	size_t n_invalid;
	drake_err err;
};

/* Reads every unsuspended job of the pass's world w into x (whose opts,
 * pods, nodes and c, w's snapshot, the caller sets). */
struct pass_world;
drake_err admit_inputs_collect(const struct pass_world *w, struct collect_ctx *x) DRAKE_MUST_CHECK;
void admit_inputs_release(struct collect_ctx *x);

/* A waiting note for job. */
void admit_note(struct admit_waiting *w, const struct job *job, enum drake_admit_status st,
                const char *why);

#endif
