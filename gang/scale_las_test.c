/* scale_las_test.c - the step's rules on attained service and observed
 * rates (scale.h, rules 1b and 4; gang/speed_fit.h): loans taken back at
 * once, a job past the service threshold giving down to its minimum, the
 * most served giving first, a job giving back workers its own rates say
 * slow it, growth that believes those rates, and the narrow queue with
 * aging. Each case builds a snapshot with its running jobs charged and
 * calls drake_scale_step() once. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gang/gang_testutil.h"
#include "gang/scale.h"

#define MAXR 3
#define MAXS 8

/* A running job without PS: worker slot k on node workers[k] (one-letter
 * node names), asking want workers between min and max. */
struct rj {
	const char *name;
	int min, want, max;
	const char *workers;
	double service;
	double progress;
	struct drake_speed_obs obs[2];
	int n_obs;
};

struct world {
	struct drake_cluster c;
	struct drake_running_job r[MAXR];
	int wn[MAXR][MAXS];
	size_t nr;
	struct drake_admission_entry w[2];
	size_t nw;
	struct drake_scale_opts o;
	struct drake_step st;
};

static struct drake_res worker(void)
{
	return res_of(4, 32, 1);
}

static void build(struct world *x, const char *cluster, const struct rj *r, size_t nr)
{
	memset(x, 0, sizeof(*x));
	assert_int_equal(cluster_from(&x->c, cluster), 0);
	for (size_t i = 0; i < nr; i++) {
		struct drake_running_job *j = &x->r[i];
		int n = (int)strlen(r[i].workers);
		for (int k = 0; k < n; k++) {
			char s[2] = {r[i].workers[k], 0};
			x->wn[i][k] = drake_cluster_find(&x->c, s);
			assert_true(x->wn[i][k] >= 0);
		}
		*j = (struct drake_running_job){.name = r[i].name,
		                                .admitted = 0,
		                                .progress = r[i].progress,
		                                .min_workers = r[i].min,
		                                .max_workers = r[i].max,
		                                .worker = worker(),
		                                .n_workers = n,
		                                .worker_node = x->wn[i],
		                                .last_scaled = 0,
		                                .service = r[i].service,
		                                .obs = r[i].obs,
		                                .n_obs = r[i].n_obs,
		                                .want_workers = r[i].want};
		for (int k = 0; k < n; k++)
			drake_cluster_charge(&x->c, (size_t)x->wn[i][k], &j->worker, 1);
	}
	x->nr = nr;
	drake_scale_defaults(&x->o);
}

/* A waiting job without PS asking want workers (min), created at t. */
static void wait_for(struct world *x, const char *name, double t, int min, int want)
{
	struct drake_admission_entry *e = &x->w[x->nw++];
	e->name = name;
	e->created = t;
	e->req =
	    (struct drake_gang_req){.worker = worker(), .min_workers = min, .want_workers = want};
}

static void step(struct world *x, double now)
{
	assert_int_equal(drake_scale_step(&x->c, x->w, x->nw, x->r, x->nr, now, &x->o, &x->st),
	                 DRAKE_OK);
}

static int count(const struct world *x, enum drake_act_kind kind, int job, int for_job)
{
	int n = 0;
	for (size_t i = 0; i < x->st.n; i++)
		n += x->st.act[i].kind == kind && x->st.act[i].job == job &&
		     (kind != DRAKE_ACT_SHRINK || x->st.act[i].for_job == for_job);
	return n;
}

static void release(struct world *x)
{
	drake_step_release(&x->st);
	drake_admission_release(x->w, x->nw);
	drake_cluster_release(&x->c);
}

static void a_new_job_takes_back_at_once_what_a_running_job_grew_beyond_its_size(void **state)
{
	(void)state;
	struct world x;
	/* "big" asks 4 and grew into the idle node b */
	const struct rj r[] = {{"big", 1, 4, 8, "aaaabbbb", 100, -1, {{0}}, 0}};
	build(&x, "a:4:0 b:4:0", r, 1);
	wait_for(&x, "new", 999, 1, 4); /* arrived 1 s ago: not starving */
	step(&x, 1000);
	assert_int_equal(x.w[0].status, DRAKE_ADMIT_STARTED);
	assert_int_equal(x.w[0].plan.n_workers, 4);
	assert_int_equal(count(&x, DRAKE_ACT_SHRINK, 0, 0), 4);
	assert_int_equal(count(&x, DRAKE_ACT_ADMIT, 0, 0), 1);
	release(&x);
}

static void below_the_threshold_a_job_at_its_size_keeps_its_workers(void **state)
{
	(void)state;
	struct world x;
	const struct rj r[] = {{"big", 1, 8, 8, "aaaabbbb", 3600, -1, {{0}}, 0}};
	build(&x, "a:4:0 b:4:0", r, 1);
	wait_for(&x, "new", 999, 1, 4);
	step(&x, 1000);
	assert_int_equal(x.w[0].status, DRAKE_ADMIT_WAITING);
	assert_int_equal(count(&x, DRAKE_ACT_SHRINK, 0, 0), 0);
	release(&x);
}

static void past_the_threshold_a_job_gives_down_to_its_minimum_at_once(void **state)
{
	(void)state;
	struct world x;
	/* 8 GPUs for 2 h: 16 GPU-hours, past the default 4 */
	const struct rj r[] = {{"old", 2, 8, 8, "aaaabbbb", 8 * 7200.0, -1, {{0}}, 0}};
	build(&x, "a:4:0 b:4:0", r, 1);
	wait_for(&x, "new", 999, 1, 6);
	step(&x, 1000);
	assert_int_equal(x.w[0].status, DRAKE_ADMIT_STARTED);
	assert_int_equal(x.w[0].plan.n_workers, 6);
	assert_int_equal(count(&x, DRAKE_ACT_SHRINK, 0, 0), 6);
	/* never below its minimum: with a threshold of 0 it would have kept all */
	release(&x);
	build(&x, "a:4:0 b:4:0", r, 1);
	x.o.service_threshold = 0;
	wait_for(&x, "new", 999, 1, 6);
	step(&x, 1000);
	assert_int_equal(count(&x, DRAKE_ACT_SHRINK, 0, 0), 0);
	release(&x);
}

static void the_job_with_most_attained_service_gives_first(void **state)
{
	(void)state;
	struct world x;
	/* both lent two workers; "long" has run far more */
	const struct rj r[] = {{"long", 1, 2, 4, "aaaa", 50000, -1, {{0}}, 0},
	                       {"short", 1, 2, 4, "bbbb", 600, -1, {{0}}, 0}};
	build(&x, "a:4:0 b:4:0", r, 2);
	wait_for(&x, "new", 999, 1, 2);
	step(&x, 1000);
	assert_int_equal(x.w[0].status, DRAKE_ADMIT_STARTED);
	assert_int_equal(count(&x, DRAKE_ACT_SHRINK, 0, 0), 2);
	assert_int_equal(count(&x, DRAKE_ACT_SHRINK, 1, 0), 0);
	release(&x);
	/* the old rule, newest first, took from "short" */
	build(&x, "a:4:0 b:4:0", r, 2);
	x.o.shrink.order = DRAKE_VICTIM_NEWEST_FIRST;
	wait_for(&x, "new", 999, 1, 2);
	step(&x, 1000);
	assert_int_equal(count(&x, DRAKE_ACT_SHRINK, 1, 0), 2);
	release(&x);
}

static void a_job_whose_rates_fell_with_more_workers_gives_them_back(void **state)
{
	(void)state;
	struct world x;
	/* 4 workers on a ran at 1 %/min; grown to 8 over two nodes at 0.55 */
	const struct rj r[] = {
	    {"yolo", 1, 4, 8, "aaaabbbb", 100, 0.1, {{4, 1, 1.0 / 6000}, {8, 2, 0.55 / 6000}}, 2}};
	build(&x, "a:4:0 b:4:0", r, 1);
	x.r[0].admitted = 0;
	step(&x, 600);
	assert_int_equal(count(&x, DRAKE_ACT_SHRINK, 0, -1), 4);
	for (size_t i = 0; i < x.st.n; i++)
		if (x.st.act[i].kind == DRAKE_ACT_SHRINK) /* the workers on b leave */
			assert_int_equal(x.st.act[i].node, drake_cluster_find(&x.c, "b"));
	release(&x);
	/* not while its wave is binding: a removal would leave it short */
	build(&x, "a:4:0 b:4:0", r, 1);
	x.r[0].binding = true;
	step(&x, 600);
	assert_int_equal(count(&x, DRAKE_ACT_SHRINK, 0, -1), 0);
	release(&x);
}

/* The same job gives nothing back when its change costs more than its
 * whole expected remaining time (600 s at 10 %: 5400 s), which bounds any
 * saving; a cheap change (100 s) still pays. */
static void a_job_whose_change_costs_more_than_it_saves_keeps_its_workers(void **state)
{
	(void)state;
	const double cost[] = {100, 5400};
	const int shrinks[] = {4, 0};
	for (int c = 0; c < 2; c++) {
		struct world x;
		const struct rj r[] = {{"yolo",
		                        1,
		                        4,
		                        8,
		                        "aaaabbbb",
		                        100,
		                        0.1,
		                        {{4, 1, 1.0 / 6000}, {8, 2, 0.55 / 6000}},
		                        2}};
		build(&x, "a:4:0 b:4:0", r, 1);
		x.r[0].cost.shrink = cost[c];
		step(&x, 600);
		assert_int_equal(count(&x, DRAKE_ACT_SHRINK, 0, -1), shrinks[c]);
		release(&x);
	}
}

static void one_size_seen_is_no_reason_to_give_back(void **state)
{
	(void)state;
	struct world x;
	const struct rj r[] = {
	    {"yolo", 1, 4, 8, "aaaabbbb", 100, 0.1, {{8, 2, 0.55 / 6000}, {0}}, 1}};
	build(&x, "a:4:0 b:4:0", r, 1);
	step(&x, 600);
	assert_int_equal(count(&x, DRAKE_ACT_SHRINK, 0, -1), 0);
	release(&x);
}

static void a_job_slower_across_two_nodes_is_not_grown_there_again(void **state)
{
	(void)state;
	struct world x;
	/* back at 4 on a after it ran slower at 8 over a and b; b is idle */
	const struct rj r[] = {
	    {"yolo", 1, 4, 8, "aaaa", 100, 0.1, {{4, 1, 1.0 / 6000}, {8, 2, 0.55 / 6000}}, 2}};
	build(&x, "a:4:0 b:4:0", r, 1);
	step(&x, 600);
	assert_int_equal(count(&x, DRAKE_ACT_GROW, 0, -1), 0);
	release(&x);
	/* with one rate only, the prior's promise grows it */
	const struct rj r1[] = {{"yolo", 1, 4, 8, "aaaa", 100, 0.1, {{4, 1, 1.0 / 6000}, {0}}, 1}};
	build(&x, "a:4:0 b:4:0", r1, 1);
	step(&x, 600);
	assert_true(count(&x, DRAKE_ACT_GROW, 0, -1) > 0);
	release(&x);
}

static void a_job_below_the_size_it_asks_grows_back_to_it_at_once(void **state)
{
	(void)state;
	struct world x;
	/* "small" asks 4 and runs 2 (it started narrow or gave 2 away); the
	 * last change was 5 s ago, far inside idle_after */
	const struct rj r[] = {{"small", 1, 4, 8, "aa", 100, 0.1, {{0}}, 0}};
	build(&x, "a:4:0 b:4:0", r, 1);
	x.r[0].admitted = 0;
	x.r[0].last_scaled = 95;
	step(&x, 100);
	/* two workers, to the size it asks, not the eight it may grow to */
	assert_int_equal(count(&x, DRAKE_ACT_GROW, 0, -1), 2);
	assert_int_equal((int)x.st.n, 2);
	release(&x);
}

static void a_job_at_the_size_it_asks_waits_for_idle_capacity_to_grow(void **state)
{
	(void)state;
	struct world x;
	const struct rj r[] = {{"asked", 1, 2, 8, "aa", 100, 0.1, {{0}}, 0}};
	build(&x, "a:4:0 b:4:0", r, 1);
	x.r[0].last_scaled = 95;
	step(&x, 100);
	assert_int_equal((int)x.st.n, 0);
	drake_step_release(&x.st);
	step(&x, 155); /* idle_after (60 s) passed: growth past its size */
	assert_true(count(&x, DRAKE_ACT_GROW, 0, -1) > 2);
	release(&x);
}

static void the_narrow_queue_tries_fewer_gpus_first_until_a_job_has_aged(void **state)
{
	(void)state;
	struct world x;
	const struct rj r[] = {{"full", 6, 6, 6, "aaaabb", 100, -1, {{0}}, 0}};
	/* room for 2: the wide job first in FIFO waits, the narrow one behind
	 * it starts under either order (backfill); strict FIFO shows the order */
	for (int q = 0; q < 2; q++) {
		build(&x, "a:4:0 b:4:0", r, 1);
		x.o.backfill = false;
		x.o.queue = q ? DRAKE_QUEUE_NARROW : DRAKE_QUEUE_FIFO;
		wait_for(&x, "wide", 990, 4, 4);
		wait_for(&x, "narrow", 995, 2, 2);
		step(&x, 1000);
		assert_int_equal(x.w[0].status, DRAKE_ADMIT_WAITING);
		assert_int_equal(x.w[1].status, q ? DRAKE_ADMIT_STARTED : DRAKE_ADMIT_NOT_TRIED);
		release(&x);
	}
	/* once the wide job has waited age_after, it goes first again */
	build(&x, "a:4:0 b:4:0", r, 1);
	x.o.backfill = false;
	x.o.queue = DRAKE_QUEUE_NARROW;
	x.o.starve_after = 1e9; /* not the starvation rule: the order alone */
	wait_for(&x, "wide", 0, 4, 4);
	wait_for(&x, "narrow", 995, 2, 2);
	step(&x, x.o.age_after + 1);
	assert_int_equal(x.w[1].status, DRAKE_ADMIT_NOT_TRIED);
	release(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(a_new_job_takes_back_at_once_what_a_running_job_grew_beyond_its_size),
	    cmocka_unit_test(below_the_threshold_a_job_at_its_size_keeps_its_workers),
	    cmocka_unit_test(past_the_threshold_a_job_gives_down_to_its_minimum_at_once),
	    cmocka_unit_test(the_job_with_most_attained_service_gives_first),
	    cmocka_unit_test(a_job_whose_rates_fell_with_more_workers_gives_them_back),
	    cmocka_unit_test(a_job_whose_change_costs_more_than_it_saves_keeps_its_workers),
	    cmocka_unit_test(one_size_seen_is_no_reason_to_give_back),
	    cmocka_unit_test(a_job_slower_across_two_nodes_is_not_grown_there_again),
	    cmocka_unit_test(a_job_below_the_size_it_asks_grows_back_to_it_at_once),
	    cmocka_unit_test(a_job_at_the_size_it_asks_waits_for_idle_capacity_to_grow),
	    cmocka_unit_test(the_narrow_queue_tries_fewer_gpus_first_until_a_job_has_aged),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
