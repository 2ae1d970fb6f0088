/*
 * scale.h - a running job's worker membership as drake's scaling sets it,
 * recorded on the job so that a restart neither forgets nor repeats it.
 *
 * drake.dev/scale on the job holds JSON:
 *
 *   {"workers":[0,1,2,5],"at":1763880000,"for":"ml/big","place":{"5":"node-3"},
 *    "gang":"<tfjob uid>.<wave>"}
 *
 * workers: the worker indexes that are members of the running gang (the
 * rest of the max-instances worker pods stay gated); at: when the job was
 * last scaled (seconds, to the millisecond); for: the job a scale-down
 * gave workers to (so the job is not grown back while that one still
 * waits); place: the node each worker added by the latest scale-up was
 * planned on; gang: the wave of the job the record was written for. A
 * record of another wave (the job was rolled back and admitted again
 * since) is stale and ignored.
 *
 * Without the annotation, a running job's members are the workers of the
 * wave that admitted it. The annotation is checked against the job: every
 * index below max-instances, no duplicates, worker 0 a member, at least
 * min-instances members; one that fails is ignored (with why), never
 * partly applied.
 *
 * Ownership: job_scale_decode fills a struct whose place array it
 * allocates; job_scale_release frees it. job_scale_value and job_scale_patch
 * return strings the caller frees.
 */
#ifndef DRAKE_RECONCILER_SCALE_H
#define DRAKE_RECONCILER_SCALE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"
#include "kind/job.h"

struct json_t;

#define JOB_ANNOTATION_SCALE "drake.dev/scale"

struct job_place {
	int index;
	char node[KUBE_NAME_MAX + 1];
};

struct job_scale {
	bool present;
	unsigned char member[JOB_MAX_REPLICAS]; /* 1 for a member worker index */
	int n;                                  /* members */
	double at;                              /* seconds; 0 unknown */
	char for_key[320];                      /* "" when none */
	char gang[128];                         /* the wave the record applies to */
	struct job_place *place;
	int n_place;
};

/* Reads the annotation of the job object obj for job. Absent: DRAKE_OK
 * with present false. Malformed or inconsistent with job: DRAKE_EINVAL
 * with why, and out reset (present false). */
drake_err job_scale_decode(const struct json_t *obj, const struct job *job, struct job_scale *out,
                           char *why, size_t whylen) DRAKE_MUST_CHECK;
void job_scale_release(struct job_scale *s);

/* The annotation's value for s, and the merge patch writing a value; NULL
 * on allocation failure. */
char *job_scale_value(const struct job_scale *s);
char *job_scale_patch(const char *value);

/* The planned node recorded for worker index, or NULL. */
const char *job_scale_place(const struct job_scale *s, int index);

#endif
