/*
 * admission.h - which waiting gangs start now, and with how many workers.
 *
 * drake's rule: walk the waiting jobs in FIFO order (creation time, then
 * name), admit every one whose PS, chief (if any) and at least min workers
 * fit, charging the snapshot as it goes so later jobs see what earlier ones
 * took. A job that does not fit is skipped and smaller jobs behind it may
 * start (backfill); with backfill off the walk stops at the first job that
 * waits. A job that can never fit on this cluster is reported as such and
 * never blocks the queue, in either mode.
 *
 * Pure. The caller owns the entries; drake_admit() fills their outputs and
 * may allocate each admitted entry's plan, which the caller frees with
 * drake_admission_release() (or drake_plan_release on each plan).
 */
#ifndef DRAKE_GANG_ADMISSION_H
#define DRAKE_GANG_ADMISSION_H

#include <stdbool.h>

#include "common/err.h"
#include "gang/cluster.h"
#include "gang/planner.h"

#define DRAKE_WHY_MAX 512

enum drake_admit_status {
	DRAKE_ADMIT_NOT_TRIED = 0, /* behind the head with backfill off, or past the cap */
	DRAKE_ADMIT_STARTED,       /* plan is valid and charged to the snapshot */
	DRAKE_ADMIT_WAITING,       /* does not fit now; why says on what */
	DRAKE_ADMIT_NEVER,         /* cannot fit on this cluster at all */
	DRAKE_ADMIT_INVALID,       /* malformed request */
};

struct drake_admission_entry {
	/* in */
	const char *name;
	double created; /* creation time, any monotonic unit */
	struct drake_gang_req req;
	/* seconds of work it has left at the size its spec asks for, <= 0
	 * unknown: only the simulator's oracle knows it (DRAKE_QUEUE_SRPT) */
	double remaining;
	/* out */
	enum drake_admit_status status;
	struct drake_plan plan;
	char why[DRAKE_WHY_MAX];
};

struct drake_admission_opts {
	bool backfill;  /* skip jobs that do not fit (drake: true) */
	int max_admits; /* stop after this many starts; <= 0 means no cap */
};

/* FIFO order, the one queue rule: created ascending, then name (<0, 0, >0). */
int drake_fifo_cmp(double created_a, const char *name_a, double created_b, const char *name_b);

/* Sorts entries into FIFO order (drake_fifo_cmp). */
void drake_admission_sort(struct drake_admission_entry *e, size_t n);

/*
 * Runs one admission round over e[0..n) (already in FIFO order) against c,
 * charging c for every job started. Returns the number started in *started.
 * Fails only on DRAKE_ENOMEM, leaving already-started entries charged and
 * planned (so the caller may still release them).
 */
drake_err drake_admit(struct drake_cluster *c, struct drake_admission_entry *e, size_t n,
                      const struct drake_admission_opts *opts, size_t *started) DRAKE_MUST_CHECK;

/*
 * Tries one entry, as drake_admit does for each: *avail is the free
 * capacity summed over nodes (drake_cluster_free_sum) and is kept up to
 * date, so a long queue behind a full cluster costs one comparison per
 * job. With backfill, a job that cannot fit in total is not planned unless
 * it could never fit the empty cluster. Fails only on DRAKE_ENOMEM.
 */
drake_err drake_admit_one(struct drake_cluster *c, struct drake_admission_entry *x, bool backfill,
                          struct drake_res *avail) DRAKE_MUST_CHECK;

/* Charges a plan to the snapshot (the planner itself never does), vGPU
 * shares included: a vGPU the plan opens takes its whole GPU. sign -1
 * gives a charged plan back. */
void drake_plan_charge(struct drake_cluster *c, const struct drake_gang_req *req,
                       const struct drake_plan *p, int sign);

/* Frees every entry's plan. */
void drake_admission_release(struct drake_admission_entry *e, size_t n);

const char *drake_admit_status_name(enum drake_admit_status s);

#endif
