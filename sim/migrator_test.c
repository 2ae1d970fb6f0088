/* migrator_test.c - migrate/'s policy in the simulator's seam: a lonely
 * worker on an overloaded shared node joins its PS, its job pays the
 * rescale pause and runs faster, one move at a time, none with a cap of 0; and with learning curves
 * a converged job gives workers to a starving one before a job that still improves. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sim/migrator.h"
#include "sim/progress_model.h"
#include "sim/sim.h"

/* A placement policy for these tests: every waiting job starts with all
 * its pods on one node, job k on node place[k] (node 0 by default), so
 * that node is overloaded. At each call it also checks what the migrator
 * did before: how many moves were made by then (at most one per rescale
 * pause: one move at a time) and the most moves of one worker slot. */
struct pack {
	const int *place;
	const int *lonely; /* job k's last worker on node lonely[k] (< 0: with the rest) */
	size_t moves_seen, most_per_slot;
	bool overlapped;
};

static struct pack pack_state;

static void observe(struct sim *s, struct pack *p)
{
	size_t n = 0;
	const struct sim_job *j;
	for (int k = 0; (j = sim_job(s, k))->t; k++) /* jobs[] ends with a zeroed entry */
		for (int w = 0; w < j->n_workers && j->state == SIM_JOB_RUNNING; w++) {
			n += (size_t)j->moves[w];
			if ((size_t)j->moves[w] > p->most_per_slot)
				p->most_per_slot = (size_t)j->moves[w];
		}
	double pause = sim_cfg(s)->model.speed.rescale_pause;
	if (n > p->moves_seen && (double)n > sim_now(s) / pause + 1)
		p->overlapped = true;
	if (n > p->moves_seen)
		p->moves_seen = n;
}

static drake_err pack_init(struct sim *s, void **state)
{
	(void)s;
	const int *place = pack_state.place, *lonely = pack_state.lonely;
	memset(&pack_state, 0, sizeof(pack_state));
	pack_state.place = place;
	pack_state.lonely = lonely;
	*state = &pack_state;
	return DRAKE_OK;
}

static void pack_release(void *state)
{
	(void)state;
}

static drake_err pack_decide(struct sim *s, void *state)
{
	struct pack *p = state;
	observe(s, p);
	size_t nw;
	const int *w = sim_waiting(s, &nw);
	int ids[8];
	size_t n = nw < 8 ? nw : 8;
	memcpy(ids, w, n * sizeof(int)); /* sim_start changes the list */
	for (size_t i = 0; i < n; i++) {
		struct sim_job *j = sim_job(s, ids[i]);
		int node = p->place ? p->place[ids[i]] : 0;
		int ps[4] = {0}, wk[16] = {0};
		struct drake_plan plan = {.n_ps = j->req.n_ps,
		                          .n_workers = j->req.want_workers,
		                          .ps_node = ps,
		                          .worker_node = wk};
		for (int k = 0; k < plan.n_workers; k++)
			wk[k] = node;
		for (int k = 0; k < plan.n_ps; k++)
			ps[k] = node;
		if (p->lonely && p->lonely[ids[i]] >= 0)
			wk[plan.n_workers - 1] = p->lonely[ids[i]];
		drake_err err = sim_start(s, ids[i], &plan);
		if (err)
			return err;
	}
	return DRAKE_OK;
}

static const struct sim_policy pack_policy = {"pack", pack_init, pack_release, pack_decide};

static void load(const char *text, struct sim_trace *t)
{
	char msg[256];
	assert_int_equal(sim_trace_parse(text, strlen(text), "mem", t, msg, sizeof(msg)), DRAKE_OK);
}

static void run(const struct sim_config *cfg, const char *text, const struct sim_policy *p,
                const struct sim_migrator *m, struct sim_result *r)
{
	struct sim_trace t;
	char msg[256];
	load(text, &t);
	drake_err err = sim_run(cfg, &t, p, m, r, msg, sizeof(msg));
	if (err)
		print_error("%s\n", msg);
	assert_int_equal(err, DRAKE_OK);
	sim_trace_release(&t);
}

/* Job a: its PS and three one-GPU workers on node 1, its fourth worker
 * on node 0 beside job b, packed whole there, so node 0 is the hot,
 * shared node. Job c (node 3) arrives at 200 s: a decision, by then a's
 * lonely worker saves more than its restart by joining its PS. */
static const char lonely_trace[] = "job_id,submission_time,duration,num_gpu\n"
                                   "a,0,1000,4\nb,0,1000,4\nc,200,100,1\n";
static const int lonely_place[] = {1, 0, 3};
static const int lonely_of[] = {0, -1, -1};

static void pack_config(struct sim_config *cfg)
{
	sim_config_defaults(cfg);
	cfg->nodes = 4;
}

static void lonely_run(const struct mig_opts *o, bool migrate, struct sim_result *r,
                       struct sim_mig_state *st)
{
	struct sim_config cfg;
	pack_config(&cfg);
	struct sim_migrator m;
	sim_migrator_init(&m, st, o);
	pack_state.place = lonely_place;
	pack_state.lonely = lonely_of;
	run(&cfg, lonely_trace, &pack_policy, migrate ? &m : NULL, r);
	pack_state.place = NULL;
	pack_state.lonely = NULL;
}

static void a_lonely_worker_joins_its_ps_and_its_job_pays_the_pause_and_gains(void **state)
{
	(void)state;
	struct sim_result off, on;
	struct sim_mig_state st;
	lonely_run(NULL, false, &off, &st);
	lonely_run(NULL, true, &on, &st);
	print_message("moves=%zu a: %.1f -> %.1f, b: %.1f -> %.1f\n", on.moves, off.job_finish[0],
	              on.job_finish[0], off.job_finish[1], on.job_finish[1]);
	assert_int_equal(on.moves, 1); /* b, packed, never moves: it would spread */
	assert_int_equal(on.moves, st.moves);
	/* spread until 200 s (at 1 / 1.15), the 10 s pause, the rest packed */
	assert_float_equal(on.job_finish[0], 200 + 10 + (1000 - 200 / 1.15), 1e-6);
	assert_float_equal(off.job_finish[0], 1150, 1e-6);
	assert_float_equal(on.job_finish[1], off.job_finish[1], 1e-9);
	assert_int_equal(on.scale_up_events + on.scale_down_events, 0); /* a move is no scaling */
	sim_result_release(&off);
	sim_result_release(&on);
}

static void nothing_moves_with_a_cap_of_0(void **state)
{
	(void)state;
	struct mig_opts o;
	mig_defaults(&o);
	o.cap = 0;
	struct sim_result r;
	struct sim_mig_state st;
	lonely_run(&o, true, &r, &st);
	assert_int_equal(r.moves, 0);
	assert_float_equal(r.job_finish[0], 1150, 1e-6);
	sim_result_release(&r);
}

/* Two hot shared nodes (0 and 1), each with a lonely worker whose PS is
 * elsewhere (a on 2, b on 3), so mig_decide returns two moves at 200 s;
 * a job arriving at 205 s asks for a decision while the first is in
 * flight: the controller starts one move at a time, the next once the
 * last is done. */
static void one_move_at_a_time(void **state)
{
	(void)state;
	static const char jobs[] = "job_id,submission_time,duration,num_gpu\n"
	                           "a,0,1000,4\nb,0,1000,4\nc,0,1000,4\nd,0,1000,4\n"
	                           "e,200,100,1\nf,205,100,1\n";
	static const int place[] = {2, 3, 0, 1, 4, 5};
	static const int lonely[] = {0, 1, -1, -1, -1, -1};
	struct sim_config cfg;
	pack_config(&cfg);
	cfg.nodes = 6;
	struct sim_migrator m;
	struct sim_mig_state st;
	sim_migrator_init(&m, &st, NULL);
	pack_state.place = place;
	pack_state.lonely = lonely;
	struct sim_result r;
	run(&cfg, jobs, &pack_policy, &m, &r);
	pack_state.place = NULL;
	pack_state.lonely = NULL;
	print_message("moves=%zu busy=%zu\n", r.moves, st.skipped_busy);
	assert_int_equal(r.moves, 2);
	assert_true(st.skipped_busy >= 1); /* the decision at 205 s */
	assert_false(pack_state.overlapped);
	sim_result_release(&r);
}

/*
 * Two elastic 4-GPU jobs fill an 8-GPU node; a 1-GPU job arrives at 8000 s
 * and starves, so one of them gives it a worker. Without progress the
 * newest gives (b); with learning curves job a, whose curve converged
 * early, is classed slow and gives instead, and it is not grown back.
 */
static void a_converged_job_gives_workers_first(void **state)
{
	(void)state;
	static const char trace[] = "job_id,submission_time,duration,num_gpu\n"
	                            "a,0,20000,4\nb,0,20000,4\nc,8000,1000,1\n";
	struct sim_config cfg;
	sim_config_defaults(&cfg);
	cfg.nodes = 1;
	cfg.curves.tau_early_min = cfg.curves.tau_early_max = 0.02; /* flat from f = 0.18 */
	/* a seed whose draw makes a early and b late */
	for (cfg.seed = 1;; cfg.seed++) {
		struct sim_curve a, b;
		sim_curve_draw(&cfg.curves, cfg.seed, 0, &a);
		sim_curve_draw(&cfg.curves, cfg.seed, 1, &b);
		if (a.early && !b.early)
			break;
	}
	const struct sim_policy *drake = sim_policy_find("drake");
	struct sim_result off, on;
	run(&cfg, trace, drake, NULL, &off);
	cfg.curves.on = true;
	run(&cfg, trace, drake, NULL, &on);
	print_message("off: a %.0f b %.0f; on: a %.0f b %.0f (a slow at f=%.3f)\n",
	              off.job_finish[0], off.job_finish[1], on.job_finish[0], on.job_finish[1],
	              on.job_slow_at[0]);
	assert_int_equal(off.finished, 3);
	assert_int_equal(on.finished, 3);
	assert_true(off.job_slow_at[0] < 0);                /* no curves, no classes */
	assert_true(on.job_slow_at[0] > 0.1);               /* a: classed slow after its knee */
	assert_true(on.job_slow_at[0] < 8000.0 / 20000);    /* ... before c arrived */
	assert_true(on.job_slow_at[1] < 0);                 /* b keeps improving */
	assert_true(off.job_finish[1] > off.job_finish[0]); /* b gave, a did not */
	assert_true(on.job_finish[0] > on.job_finish[1]);   /* a gave, b did not */
	assert_int_equal(on.flagged_early, 1);
	assert_int_equal(on.flagged_late, 0);
	sim_result_release(&off);
	sim_result_release(&on);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(a_lonely_worker_joins_its_ps_and_its_job_pays_the_pause_and_gains),
	    cmocka_unit_test(nothing_moves_with_a_cap_of_0),
	    cmocka_unit_test(one_move_at_a_time),
	    cmocka_unit_test(a_converged_job_gives_workers_first),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
