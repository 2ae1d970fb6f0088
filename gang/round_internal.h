/*
 * round_internal.h - what the files of the decision round share (round.c:
 * members, classes, backoff, strays, the round itself; round_repair.c:
 * waves and repairs; round_step.c: the scaling step and pacing;
 * round_tiresias.c: step 5 by 2D-LAS). Not part
 * of gang/'s interface.
 */
#ifndef DRAKE_GANG_ROUND_INTERNAL_H
#define DRAKE_GANG_ROUND_INTERNAL_H

#include "gang/round.h"

/* What the round makes of one job. */
struct work {
	const struct drake_round_job *in;
	struct drake_gang_req req; /* want_workers clamped to [min, max] */
	unsigned char *member;     /* max_workers entries */
	int n_members;
	bool rec;                    /* its record applies to its wave */
	int *ps_idx, *c_idx, *w_idx; /* waiting indexes per role (w: members only) */
	int n_ps_idx, n_c_idx, n_w_idx;
	enum drake_round_class cls;
	bool backoff;
	char gang[DRAKE_GANG_ID_MAX]; /* REPAIR, RUNNING: the wave of its placed pods */
	/* scalable: the running view, its slots' worker indexes */
	int view;
	int *ps_node, *w_node, *w_index;
	int n_bound, n_unbound;
	const struct drake_round_member *said; /* first member kube-scheduler refused */
};

struct round_ctx {
	const struct drake_round_job *jobs;
	size_t n;
	double now;
	const struct drake_round_opts *o;
	struct work *w;
	size_t *order;                   /* FIFO */
	const struct drake_cluster *cur; /* the snapshot, or clone once a repair charges it */
	struct drake_cluster c;
	struct drake_round *out;
	size_t cap;
};

struct drake_round_action *round_push(struct round_ctx *x, enum drake_round_kind kind,
                                      enum drake_round_reason reason, int job);
const struct drake_round_member *round_member(const struct drake_round_job *j, enum drake_role role,
                                              int i);
/* A REPAIR or ADMIT action's wave of w's waiting pods, placed by plan. */
drake_err round_wave(struct round_ctx *x, struct drake_round_action *a, const struct work *w,
                     const struct drake_plan *plan) DRAKE_MUST_CHECK;
/* Rule 3: every repair, in FIFO order; *admitted counts their pods. */
drake_err round_repairs(struct round_ctx *x, long *admitted) DRAKE_MUST_CHECK;
/* Rules 5 and 6: the scaling step over new and running jobs, paced. */
drake_err round_step(struct round_ctx *x, long *admitted) DRAKE_MUST_CHECK;
/* Rule 5 with policy DRAKE_POLICY_TIRESIAS (round_tiresias.c). */
drake_err round_tiresias(struct round_ctx *x, long *admitted) DRAKE_MUST_CHECK;
/* Rule 6 for admitted wave a: it goes (admitted counts its pods), or it
 * becomes a HOLD PACED, as does every wave after it. */
void round_pace(struct round_ctx *x, struct drake_round_action *a, long *admitted);
/* Members bound, and the first refusal, of a running job. */
void round_count_bound(struct work *w);
/* Rule 7's strays of w: the indexes (up to cap, lowest first) of workers
 * still placed that its record no longer lists; returns how many. */
int round_strays(const struct work *w, int *idx, int cap);
/* Rule 5's note: a scalable job with nothing bound waits for kube-scheduler. */
drake_err round_unbound_hold(struct round_ctx *x, size_t i) DRAKE_MUST_CHECK;

#endif
