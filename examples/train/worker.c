/*
 * worker.c - a training replica (worker or chief) or an evaluator. It keeps
 * no state the PS does not hold: on any connection failure it reconnects
 * and goes on from the PS's weights and step, so a worker that drake
 * shrinks away, migrates or loses with its node and starts again just
 * rejoins. Reaching the PS is retried with backoff for --ps-timeout, from
 * the first failure, then the worker exits 1 with the last reason.
 *
 * The coordinator (the chief, else worker 0) also tests the weights every
 * --eval-every global steps, tells the PS the accuracy, reports it to drake,
 * and sends FINISH at the target accuracy or the step cap.
 *
 * Ownership: struct worker on worker_main's stack owns its buffers and the
 * socket, released before it returns.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "examples/train/digits.h"
#include "examples/train/net.h"
#include "examples/train/proto.h"
#include "examples/train/report.h"
#include "examples/train/train.h"

#define BACKOFF_MIN 0.1
#define BACKOFF_MAX 5.0

enum outcome { GO_ON, FINISHED, LOST, REFUSED };

struct worker {
	const struct train_opts *o;
	struct model_shape shape;
	size_t np, cap;
	enum tfc_type type;
	int index;
	uint8_t role;
	bool coord;
	char name[32], host[TFC_HOST_MAX + 1];
	int port;
	struct dataset all, train, test;
	double *w, *g, *scratch;
	uint32_t *rows;
	uint8_t *buf;
	int fd;
	uint64_t ps_id, step, last_eval;
	uint32_t live, rank;
	struct model_rng rng;
	double acc, loss, t0, last_log;
	bool have_acc;
	uint64_t local_steps, last_log_local;
	struct reporter rep;
	char why[PROTO_TEXT_MAX + 256];
};

static void sleep_for(double s)
{
	if (s <= 0)
		return;
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Sends m and reads the answer into *a. WEIGHTS updates the weights. */
static enum outcome call(struct worker *k, const struct proto_msg *m, struct proto_msg *a)
{
	if (net_send(k->fd, m, k->buf, k->cap, k->why, sizeof(k->why)) != DRAKE_OK ||
	    net_recv(k->fd, a, k->w, k->np, k->buf, k->cap, k->why, sizeof(k->why)) != DRAKE_OK)
		return LOST;
	switch (a->type) {
	case PROTO_DONE:
		printf("%s: the PS says the job is done (step %llu, accuracy %.4f)\n", k->name,
		       (unsigned long long)a->step, a->accuracy);
		return FINISHED;
	case PROTO_ERROR:
		snprintf(k->why, sizeof(k->why), "the PS refused us: %s", a->text);
		return REFUSED;
	case PROTO_WEIGHTS:
		if (m->type == PROTO_HELLO)
			break;
		if (a->n != k->np) {
			snprintf(k->why, sizeof(k->why), "the PS sent %u weights, expected %zu",
			         a->n, k->np);
			return REFUSED;
		}
		k->ps_id = a->ps_id;
		k->step = a->step;
		k->live = a->live ? a->live : 1;
		k->rank = a->rank % k->live;
		return GO_ON;
	case PROTO_WELCOME:
		if (m->type != PROTO_HELLO)
			break;
		k->ps_id = a->ps_id;
		k->step = a->step;
		return GO_ON;
	default: break;
	}
	snprintf(k->why, sizeof(k->why), "the PS answered a %s with a %s", proto_type_name(m->type),
	         proto_type_name(a->type));
	return REFUSED;
}

static enum outcome connect_ps(struct worker *k)
{
	double wait = k->o->io_timeout < 10 ? k->o->io_timeout : 10;
	k->fd = net_connect(k->host, k->port, wait, k->o->io_timeout, k->why, sizeof(k->why));
	if (k->fd < 0)
		return LOST;
	struct proto_msg h = {.type = PROTO_HELLO, .role = k->role, .index = (uint32_t)k->index}, a;
	h.shape[0] = (uint32_t)k->shape.in;
	h.shape[1] = (uint32_t)k->shape.hidden;
	h.shape[2] = (uint32_t)k->shape.out;
	enum outcome r = call(k, &h, &a);
	if (r != GO_ON)
		return r;
	printf("%s: connected to the PS %s:%d at step %llu\n", k->name, k->host, k->port,
	       (unsigned long long)k->step);
	struct proto_msg pull = {.type = PROTO_PULL};
	return call(k, &pull, &a);
}

/* The coordinator's test of the weights it holds; FINISHED when done. */
static enum outcome evaluate(struct worker *k)
{
	struct proto_msg a;
	uint64_t step = k->step;
	k->acc =
	    model_evaluate(&k->shape, k->w, k->test.x, k->test.y, k->test.n, &k->loss, k->scratch);
	k->have_acc = true;
	k->last_eval = step;
	bool reached = k->acc >= k->o->target;
	bool capped = k->o->global_steps && step >= k->o->global_steps;
	if (!reached && !capped) {
		struct proto_msg e = {
		    .type = PROTO_EVAL, .step = step, .accuracy = k->acc, .loss = k->loss};
		return call(k, &e, &a);
	}
	printf("%s: accuracy %.4f at step %llu: %s; finishing the job\n", k->name, k->acc,
	       (unsigned long long)step,
	       reached ? "the target is reached" : "the step cap is reached");
	struct proto_msg f = {
	    .type = PROTO_FINISH, .step = step, .accuracy = k->acc, .flag = reached};
	enum outcome r = call(k, &f, &a);
	if (r == FINISHED)
		reporter_finish(&k->rep, step, k->acc);
	return r;
}

/* One minibatch from this replica's shard: the training rows i with
 * i % live == rank. */
static enum outcome train_step(struct worker *k)
{
	size_t n = k->train.n, live = k->live, rank = k->rank;
	size_t shard = (n - rank + live - 1) / live;
	for (size_t i = 0; i < k->o->batch; i++) {
		size_t j = (size_t)(model_rng_uniform(&k->rng) * (double)shard);
		k->rows[i] = (uint32_t)(rank + (j < shard ? j : shard - 1) * live);
	}
	struct proto_msg m = {.type = PROTO_PUSH, .ps_id = k->ps_id, .step = k->step};
	m.loss = model_gradient(&k->shape, k->w, k->train.x, k->train.y, k->rows, k->o->batch, k->g,
	                        k->scratch);
	m.n = (uint32_t)k->np;
	m.params = k->g;
	struct proto_msg a;
	enum outcome r = call(k, &m, &a);
	if (r == GO_ON) {
		k->local_steps++;
		k->loss = m.loss;
	}
	sleep_for(k->o->step_delay);
	return r;
}

static void log_line(struct worker *k, double now)
{
	double dt = now - k->last_log;
	char acc[48] = "";
	if (k->coord && k->have_acc)
		snprintf(acc, sizeof(acc), " accuracy=%.4f@%llu", k->acc,
		         (unsigned long long)k->last_eval);
	printf("%s: step=%llu local_steps/s=%.1f shard=%u/%u loss=%.4f%s\n", k->name,
	       (unsigned long long)k->step,
	       dt > 0 ? (double)(k->local_steps - k->last_log_local) / dt : 0, k->rank, k->live,
	       k->loss, acc);
	fflush(stdout);
	k->last_log = now;
	k->last_log_local = k->local_steps;
}

static enum outcome one_round(struct worker *k)
{
	struct proto_msg a;
	if (k->role == PROTO_ROLE_EVALUATOR) {
		struct proto_msg pull = {.type = PROTO_PULL};
		enum outcome r = call(k, &pull, &a);
		if (r != GO_ON)
			return r;
		double loss, acc = model_evaluate(&k->shape, k->w, k->test.x, k->test.y, k->test.n,
		                                  &loss, k->scratch);
		printf("%s: step=%llu accuracy=%.4f loss=%.4f\n", k->name,
		       (unsigned long long)k->step, acc, loss);
		fflush(stdout);
		sleep_for(k->o->log_every);
		return GO_ON;
	}
	bool capped = k->o->global_steps && k->step >= k->o->global_steps;
	if (k->coord && (!k->have_acc || capped || k->step >= k->last_eval + k->o->eval_every)) {
		enum outcome r = evaluate(k);
		if (r != GO_ON)
			return r;
		reporter_tick(&k->rep, net_now(), k->last_eval, k->acc);
		capped = k->o->global_steps && k->step >= k->o->global_steps;
	}
	if (capped) { /* wait for the coordinator's FINISH */
		sleep_for(0.05);
		struct proto_msg pull = {.type = PROTO_PULL};
		return call(k, &pull, &a);
	}
	return train_step(k);
}

static int run(struct worker *k)
{
	double backoff = BACKOFF_MIN, failing_since = net_now();
	bool failing = true; /* not connected yet: the budget runs from the start */
	bool told = false;   /* this streak of failures is on stdout */
	for (;;) {
		enum outcome r = k->fd >= 0 ? one_round(k) : connect_ps(k);
		double now = net_now();
		if (r == GO_ON) {
			failing = told = false;
			backoff = BACKOFF_MIN;
			if (now - k->last_log >= k->o->log_every && k->role != PROTO_ROLE_EVALUATOR)
				log_line(k, now);
			continue;
		}
		if (r == FINISHED)
			return 0;
		if (r == REFUSED) {
			fprintf(stderr, "drake-train %s: %s\n", k->name, k->why);
			return 1;
		}
		if (k->fd >= 0) {
			close(k->fd);
			k->fd = -1;
		}
		if (!failing) {
			failing = true;
			failing_since = now;
		}
		if (!told) {
			told = true;
			printf("%s: cannot reach the PS: %s; retrying for up to %.0f s\n", k->name,
			       k->why, k->o->ps_timeout);
		}
		if (now - failing_since >= k->o->ps_timeout) {
			fprintf(stderr,
			        "drake-train %s: gave up: the PS %s:%d did not answer for %.0f s "
			        "(--ps-timeout): %s\n",
			        k->name, k->host, k->port, now - failing_since, k->why);
			return 1;
		}
		double left = k->o->ps_timeout - (now - failing_since);
		sleep_for(backoff < left ? backoff : left);
		backoff = backoff * 2 < BACKOFF_MAX ? backoff * 2 : BACKOFF_MAX;
	}
}

int worker_main(const struct train_opts *o, const struct tf_config *tc, const struct model_shape *s,
                struct train_coord coord)
{
	struct worker *k = calloc(1, sizeof(*k));
	if (!k) {
		fprintf(stderr, "drake-train: out of memory\n");
		return 1;
	}
	k->o = o;
	k->shape = *s;
	k->fd = -1;
	k->type = tc->type;
	k->index = tc->index;
	k->role = tc->type == TFC_CHIEF    ? PROTO_ROLE_CHIEF
	          : tc->type == TFC_WORKER ? PROTO_ROLE_WORKER
	                                   : PROTO_ROLE_EVALUATOR;
	k->coord = tc->type == coord.type && tc->index == coord.index;
	snprintf(k->name, sizeof(k->name), "%s %d", tfc_type_name(tc->type), tc->index);
	int rc = 1;
	char why[512];
	if (tfc_split_address(tc->ep[TFC_PS][0], k->host, sizeof(k->host), &k->port, why,
	                      sizeof(why)) != DRAKE_OK) {
		fprintf(stderr, "drake-train %s: TF_CONFIG: cluster.ps[0]: %s\n", k->name, why);
		rc = 2;
		goto out;
	}
	if (digits_load(o->data, &k->all, why, sizeof(why)) != DRAKE_OK) {
		fprintf(stderr, "drake-train %s: the data: %s\n", k->name, why);
		goto out;
	}
	if (digits_split(&k->all, o->test_fraction, &k->train, &k->test, why, sizeof(why)) !=
	    DRAKE_OK) {
		fprintf(stderr, "drake-train %s: the data: %s\n", k->name, why);
		goto out;
	}
	dataset_release(&k->all); /* the halves are copies */
	k->np = model_nparams(s);
	k->cap = PROTO_HEADER + 32 + 8 * k->np;
	k->w = malloc(k->np * sizeof(double));
	k->g = malloc(k->np * sizeof(double));
	k->scratch = malloc((model_scratch_len(s) + 1) * sizeof(double));
	k->rows = malloc(o->batch * sizeof(uint32_t));
	k->buf = malloc(k->cap);
	if (!k->w || !k->g || !k->scratch || !k->rows || !k->buf) {
		fprintf(stderr, "drake-train %s: out of memory\n", k->name);
		goto out;
	}
	/* Minibatches depend on the seed and the task alone: with one worker,
	 * a run is repeatable step for step. */
	k->rng.s = (uint64_t)o->seed * 0x100000001b3ULL ^ (uint64_t)(k->role + 1) << 40 ^
	           (uint64_t)k->index;
	reporter_init(&k->rep, o->drake, k->coord ? o->report_url : NULL, o->report_every,
	              o->global_steps);
	k->t0 = k->last_log = net_now();
	printf("%s: PS %s:%d, %d worker%s and %d chief in TF_CONFIG, %zu training and %zu test "
	       "rows from %s%s%s\n",
	       k->name, k->host, k->port, tc->slots[TFC_WORKER],
	       tc->slots[TFC_WORKER] == 1 ? "" : "s", tc->slots[TFC_CHIEF], k->train.n, k->test.n,
	       o->data, k->coord ? "; coordinator: tests and ends the job" : "",
	       k->rep.on ? ", reports progress to drake" : "");
	fflush(stdout);
	rc = run(k);
out:
	fflush(stdout);
	if (k->fd >= 0)
		close(k->fd);
	dataset_release(&k->all);
	dataset_release(&k->train);
	dataset_release(&k->test);
	free(k->w);
	free(k->g);
	free(k->scratch);
	free(k->rows);
	free(k->buf);
	free(k);
	return rc;
}
