/*
 * evq.h - the simulator's event queue: a binary min-heap on (time, seq), so
 * events at the same virtual time come out in the order they were pushed
 * and every run is reproducible.
 *
 * The queue owns its array; sim_evq_release() frees it. Events are small
 * values copied in and out.
 */
#ifndef DRAKE_SIM_EVQ_H
#define DRAKE_SIM_EVQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

#define SIM_EVQ_MAX 50000000 /* events pending at once */

enum sim_ev_type {
	SIM_EV_ARRIVAL, /* job arrives */
	SIM_EV_FINISH,  /* job finishes, if gen still matches */
	SIM_EV_WAKE,    /* a policy asked to be called at this time */
};

struct sim_ev {
	double t;
	uint64_t seq;
	enum sim_ev_type type;
	int job;
	uint32_t gen;
};

struct sim_evq {
	struct sim_ev *h;
	size_t n, cap;
	uint64_t next_seq;
};

void sim_evq_init(struct sim_evq *q);
void sim_evq_release(struct sim_evq *q);
/* Fills ev->seq. */
drake_err sim_evq_push(struct sim_evq *q, struct sim_ev ev) DRAKE_MUST_CHECK;
bool sim_evq_pop(struct sim_evq *q, struct sim_ev *out);
/* The earliest event's time, or false when empty. */
bool sim_evq_peek_time(const struct sim_evq *q, double *t);

#endif
