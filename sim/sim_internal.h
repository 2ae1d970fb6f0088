/*
 * sim_internal.h - the simulator's state, shared by sim.c (the event loop,
 * the job lifecycle, the actions), sampling.c (learning-curve samples) and
 * result.c (the figures of a run) only.
 */
#ifndef DRAKE_SIM_SIM_INTERNAL_H
#define DRAKE_SIM_SIM_INTERNAL_H

#include "sim/sim.h"

#define MAX_WAKES 256

struct sim {
	const struct sim_config *cfg;
	const struct sim_policy *policy;
	struct drake_cluster c;
	struct sim_job *jobs;
	size_t n;
	struct sim_evq q;
	double now;
	int *waiting, *running, *arrived;
	size_t n_waiting, n_running, n_arrived, n_done, n_never;
	int64_t busy, held;
	double last_acct, busy_gpu_s, held_gpu_s;
	struct sim_sample *samples;
	size_t n_samples, cap_samples;
	double wakes[MAX_WAKES];
	size_t n_wakes;
	uint64_t rng;
	size_t scale_up, scale_down, moves, preemptions;
	size_t changes;     /* every start, bind, removal, addition and move, for decide_all() */
	double next_sample; /* the next grid point of progress samples */
	bool sample_pending;
	struct drake_history_ring history; /* finished jobs' service */
};

/* Brings job j's work done up to now at its current rate. */
void sim_progress_to_now(struct sim_job *j, double now);

/* sampling.c: asks for the next grid point of samples (curves on, once);
 * on a grid point, every running job reports a sample. */
drake_err sim_schedule_sample(struct sim *s) DRAKE_MUST_CHECK;
drake_err sim_report_samples(struct sim *s, char *msg, size_t mlen) DRAKE_MUST_CHECK;

/* result.c: the run's figures into r (DRAKE_ENOMEM). */
drake_err sim_collect(struct sim *s, struct sim_result *r) DRAKE_MUST_CHECK;

#endif
