/*
 * migration.h - a job's migrations, recorded on the job so that a drake
 * restart neither loses nor repeats one: how often each replica has moved
 * (the cap counts these; no other plan change resets them) and the move in
 * flight, if any.
 *
 * drake.dev/migrations holds JSON:
 *
 *   {"counts":{"worker-1":{"n":2,"last":1763880000}},
 *    "moving":{"replica":"worker-1","from":"node-a","to":"node-b",
 *              "uid":"<the pod being moved>","at":1763880042,
 *              "reason":"overload: ...","by":"policy"}}
 *
 * A move is carried out from the record alone: the pod with that uid is
 * deleted, its replacement (same name, index, service, TF_CONFIG) is
 * planned onto "to" by admission, and once a pod of another uid is bound
 * the move is cleared. So a move interrupted by a restart completes, and
 * the replica is never doubled (one name, one pod) nor lost (the
 * controller recreates a missing replica).
 *
 * A record that does not fit its job (an unknown replica, a bad time, too
 * long) is ignored whole, with why.
 */
#ifndef DRAKE_RECONCILER_MIGRATION_H
#define DRAKE_RECONCILER_MIGRATION_H

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"
#include "kind/job.h"

struct json_t;

#define JOB_ANNOTATION_MIGRATIONS "drake.dev/migrations"
#define JOB_MIGRATION_COUNTS_MAX  64 /* replicas with a count kept */

struct job_move {
	bool active;
	enum job_rtype type;
	int index;
	char from[KUBE_NAME_MAX + 1], to[KUBE_NAME_MAX + 1];
	char uid[64];
	double at;
	char reason[200];
	char by[128];
};

struct job_move_count {
	enum job_rtype type;
	int index;
	int n;
	double last;
};

struct job_migrations {
	struct job_move_count counts[JOB_MIGRATION_COUNTS_MAX];
	int n_counts;
	struct job_move moving;
};

/* Reads the annotation of job obj (absent: all zero, DRAKE_OK). */
drake_err job_migrations_decode(const struct json_t *obj, const struct job *job,
                                struct job_migrations *out, char *why,
                                size_t whylen) DRAKE_MUST_CHECK;
/* The count of replica t/index (0 when none) and its last move (-1). */
int job_migrations_count(const struct job_migrations *m, enum job_rtype t, int index, double *last);
/* Counts one more move of t/index at time at; ELIMIT when the table is full. */
drake_err job_migrations_bump(struct job_migrations *m, enum job_rtype t, int index,
                              double at) DRAKE_MUST_CHECK;
/* The annotation's value for m, and the merge patch writing a value. */
char *job_migrations_value(const struct job_migrations *m);
char *job_migrations_patch(const char *value);
/* "worker-1" for t/index. */
void job_replica_key(enum job_rtype t, int index, char *buf, size_t len);

/* A decision, an outcome or a refusal, as GET /v1/migrations lists it. */
struct job_move_note {
	double at;
	char job[320], replica[32], from[KUBE_NAME_MAX + 1], to[KUBE_NAME_MAX + 1], by[128];
	char what[200];
};
/* {"migrations":[{"at":s,"job":...,"replica":...,"from":...,"to":...,
 * "by":...,"what":...}]} in the order given; caller frees. */
char *job_moves_json(const struct job_move_note *v, size_t n);

#endif
