/*
 * scale_internal.h - what the files of drake's decision step share
 * (scale.c: admission, the starvation shrink, the room of ending jobs and
 * the queue's order; scale_grow.c: growth into idle capacity and giving
 * back workers that slow a job down). Not part of gang/'s interface.
 */
#ifndef DRAKE_GANG_SCALE_INTERNAL_H
#define DRAKE_GANG_SCALE_INTERNAL_H

#include "gang/scale.h"
#include "gang/speed_fit.h"

/* A running job as the step changes it. */
struct work {
	int *node; /* current workers' nodes */
	int *orig; /* their slots in the caller's view */
	int n;
	struct drake_speed_fitted fit; /* its speed model (gang/speed_fit.h) */
};

struct step {
	const struct drake_cluster *orig; /* the caller's snapshot: no node held */
	struct drake_cluster c;           /* the clone */
	const char *held_for;             /* the job nodes are held for, or NULL */
	const struct drake_running_job *r;
	size_t nr;
	struct work *work;
	struct drake_running_job *view; /* r with work's lists */
	struct drake_action *act;
	size_t n_act, cap_act;
	const struct drake_scale_opts *o;
	double now;
	double soon_until; /* the earliest end of an ending job's hold */
	double hold_until; /* soon_until once a node is held for it (INFINITY: none held) */
	struct drake_res keep[DRAKE_GANG_MAX_KEEP]; /* the queue's shapes (keep_shapes) */
	int n_keep;
	bool to_asked; /* growth back to the size jobs ask for only (rule 4a) */
	size_t *took;  /* waiting entries started on workers running jobs gave, this step */
	size_t n_took;
};

/* Appends an action to the step's list. */
drake_err scale_push(struct step *s, struct drake_action a) DRAKE_MUST_CHECK;

/* Removes the workers ops[0..n) names from the clone and the jobs' lists,
 * each a SHRINK for waiting entry `to` (-1: none). */
drake_err scale_apply_removals(struct step *s, const struct drake_scale_op *ops, size_t n,
                               int to) DRAKE_MUST_CHECK;

/* The size a running job's spec asks for (its floor when a waiting job
 * takes back what it was lent). */
int scale_asked(const struct drake_running_job *r);

/* A running job's expected remaining time (scale.h, E) at s->now;
 * *by_history (may be NULL) when it came from the finished jobs'
 * service. */
double scale_remaining(const struct step *s, const struct drake_running_job *j, bool *by_history);

/* Rule 4 (and 4a with s->to_asked): grows the jobs whose batch pays;
 * *next gets the earliest time a batch that does not pay yet will. */
drake_err scale_grow(struct step *s, double *next) DRAKE_MUST_CHECK;

/* Rule 0: gives back the workers a job's own rates say slow it down. */
drake_err scale_shed(struct step *s) DRAKE_MUST_CHECK;

/* Could a worker of some growable job fit anywhere now? */
bool scale_room_to_grow(const struct step *s);

#endif
