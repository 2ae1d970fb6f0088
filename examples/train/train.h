/*
 * train.h - drake-train's options and its two roles: the parameter server
 * (ps.c), which holds the weights and the global step, and the training
 * replicas (worker.c: workers, the chief, an evaluator), which hold
 * nothing a restart would lose. main.c reads the options and TF_CONFIG and
 * calls one of them.
 *
 * Exit codes: 0 the job finished (target accuracy or step cap), 1 it
 * cannot go on (the PS never answered, the PS refused us, unreadable data),
 * 2 bad usage (no TF_CONFIG, a malformed one, a bad flag).
 */
#ifndef DRAKE_TRAIN_TRAIN_H
#define DRAKE_TRAIN_TRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "examples/train/model.h"
#include "examples/train/tfconfig.h"

struct train_opts {
	const char *data;
	double target;       /* test accuracy that ends the job */
	size_t global_steps; /* the step cap */
	int hidden;
	size_t batch;
	double lr;
	int seed;
	size_t eval_every; /* the coordinator tests every this many global steps */
	double test_fraction;
	double log_every;       /* seconds between progress lines */
	double ps_timeout;      /* how long a worker tries to reach the PS */
	double io_timeout;      /* an answer slower than this drops the connection */
	double step_delay;      /* seconds a worker sleeps after each step */
	double report_every;    /* seconds between reports to drake */
	double finish_linger;   /* seconds the PS waits to tell workers DONE */
	double idle_timeout;    /* the PS drops a connection silent this long */
	const char *drake;      /* the drake binary that reports progress */
	const char *report_url; /* DRAKE_PROGRESS_URL; reports only when set */
};

/* The task that evaluates and ends the job: the chief, else worker 0. */
struct train_coord {
	enum tfc_type type;
	int index;
};

int ps_main(const struct train_opts *o, const struct tf_config *tc, const struct model_shape *s);
int worker_main(const struct train_opts *o, const struct tf_config *tc, const struct model_shape *s,
                struct train_coord coord);

#endif
