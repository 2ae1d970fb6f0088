/* elastic_test.c - starvation shrink (drake's rule; growth is gang/scale.c's,
 * tested in scale_test.c), and DRAGON's originals beside it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "gang/dragon.h"
#include "gang/elastic.h"
#include "gang/gang_testutil.h"

/* Two running jobs on a:8 b:8, built and charged onto the snapshot.
 * old: PS on a, workers a,a,a,a,b,b (min 2)   admitted at 10
 * new: PS on b, workers b,b,b,b,a,a (min 2)   admitted at 20
 * a holds old's 4 + new's 2 = 6 GPUs, b likewise: 2 + 2 free. */
static const int old_ps[] = {0}, old_w[] = {0, 0, 0, 0, 1, 1};
static const int new_ps[] = {1}, new_w[] = {1, 1, 1, 1, 0, 0};

static void setup_two(struct drake_cluster *cl, struct drake_running_job j[2])
{
	assert_int_equal(cluster_from(cl, "a:8:0 b:8:0"), 0);
	struct drake_gang_req g = gpu_job(1, 2, 6);
	j[0] = (struct drake_running_job){"old",  10,   0.9,   2,  8,     g.ps,   g.worker, 1,
	                                  old_ps, 6,    old_w, 10, false, false,  false,    0,
	                                  0,      NULL, 0,     0,  0,     {0, 0}, false};
	j[1] = (struct drake_running_job){"new",  20,   0.1,   2,  8,     g.ps,   g.worker, 1,
	                                  new_ps, 6,    new_w, 20, false, false,  false,    0,
	                                  0,      NULL, 0,     0,  0,     {0, 0}, false};
	for (int k = 0; k < 2; k++) {
		drake_cluster_charge(cl, (size_t)j[k].ps_node[0], &j[k].ps, 1);
		for (int s = 0; s < j[k].n_workers; s++)
			drake_cluster_charge(cl, (size_t)j[k].worker_node[s], &j[k].worker, 1);
	}
}

static int is_lonely(const struct drake_running_job *j, int slot)
{
	return j->worker_node[slot] != j->ps_node[0];
}

static void shrink_takes_lonely_workers_first_and_never_worker_zero(void **state)
{
	(void)state;
	struct drake_cluster cl;
	struct drake_running_job j[2];
	setup_two(&cl, j);
	/* 4 GPUs are free (2 + 2); 6 are needed: the newest job's two
	 * lonely workers go. */
	struct drake_gang_req starving = gpu_job(1, 6, 6);
	struct drake_shrink_opts o = {DRAKE_VICTIM_NEWEST_FIRST, true};
	struct drake_scale_op *ops;
	size_t n;
	struct drake_plan p = {0};
	char why[200];
	drake_err err = drake_shrink_for(&cl, j, 2, &starving, &o, &ops, &n, &p, why, sizeof(why));
	if (err)
		print_error("%s: %s\n", drake_strerror(err), why);
	assert_int_equal(err, DRAKE_OK);
	assert_int_equal(n, 2);
	for (size_t i = 0; i < n; i++) {
		assert_true(ops[i].slot != 0);
		assert_int_equal(ops[i].job, 1);
		assert_true(is_lonely(&j[ops[i].job], ops[i].slot));
	}
	assert_int_equal(p.n_workers, 6);
	free(ops);
	drake_plan_release(&p);
	drake_cluster_release(&cl);
}

/* A job of 6 workers starves on setup_two's cluster (4 GPUs free): the 2
 * workers it takes, in order o (lonely first or not), all come from job
 * giver. Releases cl. */
static void two_workers_come_from(struct drake_cluster *cl, struct drake_running_job j[2],
                                  enum drake_victim_order order, bool lonely, int giver)
{
	struct drake_gang_req starving = gpu_job(1, 6, 6);
	struct drake_shrink_opts o = {order, lonely};
	struct drake_scale_op *ops;
	size_t n;
	struct drake_plan p = {0};
	char why[200];
	assert_int_equal(drake_shrink_for(cl, j, 2, &starving, &o, &ops, &n, &p, why, sizeof(why)),
	                 DRAKE_OK);
	assert_int_equal(n, 2);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(ops[i].job, giver);
	free(ops);
	drake_plan_release(&p);
	drake_cluster_release(cl);
}

/* SpeCon: a job whose replicas report it slowing or converged gives its
 * workers before any other, the newest and lonely rules notwithstanding. */
static void shrink_takes_from_a_slow_job_first(void **state)
{
	(void)state;
	struct drake_cluster cl;
	struct drake_running_job j[2];
	setup_two(&cl, j);
	j[0].slow = true; /* the oldest job has converged */
	two_workers_come_from(&cl, j, DRAKE_VICTIM_NEWEST_FIRST, true, 0);
}

/* The oracle bound's victim order: the job with most remaining work
 * (seconds left times the GPUs it holds) gives first, whatever its
 * attained service; a job whose remaining work is unknown gives after the
 * known ones. */
static void with_the_oracle_the_job_with_most_remaining_work_gives_first(void **state)
{
	(void)state;
	/* remaining seconds of old, of new, and the job expected to give */
	static const double rows[][3] = {{100, 5000, 1}, {5000, 100, 0}, {0, 100, 1}, {100, -1, 0}};
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		struct drake_cluster cl;
		struct drake_running_job j[2];
		setup_two(&cl, j);
		j[0].service = 1e6; /* most served: least attained service would take old */
		j[0].remaining = rows[r][0];
		j[1].remaining = rows[r][1];
		two_workers_come_from(&cl, j, DRAKE_VICTIM_MOST_REMAINING, false, (int)rows[r][2]);
	}
}

/* most-left: the job expected to need the most GPU-seconds still gives
 * first, read from its progress p as service * (1 - p) / p, p at least a
 * tenth; a job that reports no progress is read as its service. */
static void the_job_with_most_service_left_gives_first(void **state)
{
	(void)state;
	/* service and progress of old, of new; the job expected to give */
	static const double rows[][5] = {
	    {1000, 0.9, 100, 0.1, 1},  /* 111 left against 900: the least served gives */
	    {1000, 0.5, 100, 0.5, 0},  /* 1000 against 100 */
	    {1000, -1, 100, -1, 0},    /* no reports: most served */
	    {1000, 0.5, 100, 0.01, 0}, /* 1 % done reads as a tenth: 900, not 9,900 */
	    {10, -1, 1e6, 1, 0},       /* all done: nothing left */
	    {500, 0.5, 100, 0.125, 1}, /* 500 against 700 */
	};
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		struct drake_cluster cl;
		struct drake_running_job j[2];
		setup_two(&cl, j);
		j[0].service = rows[r][0];
		j[0].progress = rows[r][1];
		j[1].service = rows[r][2];
		j[1].progress = rows[r][3];
		two_workers_come_from(&cl, j, DRAKE_VICTIM_MOST_LEFT, false, (int)rows[r][4]);
	}
	struct drake_running_job k = {.service = 100, .progress = 0.25};
	assert_true(drake_running_left(&k) == 300);
	k.progress = 0.05;
	assert_true(drake_running_left(&k) == 900);
	k.progress = -1;
	assert_true(drake_running_left(&k) == 100);
}

static void shrink_never_goes_below_min_and_removes_nothing_when_hopeless(void **state)
{
	(void)state;
	struct drake_cluster cl;
	struct drake_running_job j[2];
	setup_two(&cl, j);
	/* Each job keeps worker 0 and min 2: 12 GPUs at most, it wants 13. */
	struct drake_gang_req starving = gpu_job(1, 13, 13);
	struct drake_shrink_opts o = {DRAKE_VICTIM_NEWEST_FIRST, true};
	struct drake_scale_op *ops = NULL;
	size_t n = 99;
	struct drake_plan p = {0};
	char why[200];
	assert_int_equal(drake_shrink_for(&cl, j, 2, &starving, &o, &ops, &n, &p, why, sizeof(why)),
	                 DRAKE_ESTATE);
	assert_null(ops);
	assert_int_equal(n, 0);
	assert_true(why[0] != '\0');
	drake_cluster_release(&cl);
}

static void shrink_removes_only_what_the_starving_job_needs(void **state)
{
	(void)state;
	struct drake_cluster cl;
	struct drake_running_job j[2];
	setup_two(&cl, j);
	struct drake_gang_req starving = gpu_job(1, 4, 4);
	struct drake_shrink_opts o = {DRAKE_VICTIM_OLDEST_FIRST, true};
	struct drake_scale_op *ops;
	size_t n;
	struct drake_plan p = {0};
	assert_int_equal(drake_shrink_for(&cl, j, 2, &starving, &o, &ops, &n, &p, NULL, 0),
	                 DRAKE_OK);
	/* Four GPUs are already free over two nodes: nothing needs to go. */
	assert_int_equal(n, 0);
	drake_plan_release(&p);
	drake_cluster_release(&cl);
}

static void dragon_first_fit_takes_the_first_node_in_its_order(void **state)
{
	(void)state;
	struct drake_cluster cl;
	assert_int_equal(cluster_from(&cl, "a:8:0 b:8:4"), 0);
	struct drake_gang_req r = gpu_job(1, 4, 4);
	int order[] = {0, 1};
	struct drake_plan p = {0};
	assert_int_equal(drake_dragon_schedule(&cl, order, 2, &r, &p), DRAKE_OK);
	assert_int_equal(p.ps_node[0], 0); /* drake's best fit would pick b */
	drake_plan_release(&p);
	struct drake_plan q = {0};
	assert_int_equal(drake_plan_gang(&cl, &r, &q, NULL, 0), DRAKE_OK);
	assert_int_equal(q.ps_node[0], 1);
	drake_plan_release(&q);
	drake_cluster_release(&cl);
}

static void dragon_scale_down_counts_only_min_workers_not_the_ps(void **state)
{
	(void)state;
	struct drake_cluster cl;
	struct drake_running_job j[2];
	setup_two(&cl, j);
	int order[] = {0, 1};
	struct drake_scale_op *ops;
	size_t n;
	/* 6 GPUs (4 free + 2 removed) make room for 6 workers; oldest job
	 * first, its lonely workers (on b) first, worker 0 never. */
	assert_int_equal(drake_dragon_scale_down(&cl, order, 2, j, 2, &j[0].worker, 6, &ops, &n),
	                 DRAKE_OK);
	assert_int_equal(n, 2);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(ops[i].job, 0);
		assert_int_equal(ops[i].node, 1);
	}
	free(ops);
	drake_cluster_release(&cl);
}

static void dragon_scale_up_never_exceeds_max(void **state)
{
	(void)state;
	struct drake_cluster cl;
	assert_int_equal(cluster_from(&cl, "a:8:7 b:8:0 c:8:0"), 0);
	struct drake_gang_req g = gpu_job(1, 1, 1);
	static const int ps[] = {0}, w[] = {0};
	struct drake_running_job j = {"j", 1,    0, 1, 4,     g.ps,   g.worker, 1,
	                              ps,  1,    w, 1, false, false,  false,    0,
	                              0,   NULL, 0, 0, 0,     {0, 0}, false};
	int order[] = {0, 1, 2};
	struct drake_scale_op *ops;
	size_t n;
	assert_int_equal(drake_dragon_scale_up(&cl, order, 3, &j, 1, &ops, &n), DRAKE_OK);
	assert_int_equal(n, 3); /* 1 + 3 = max 4 */
	free(ops);
	drake_cluster_release(&cl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(shrink_takes_lonely_workers_first_and_never_worker_zero),
	    cmocka_unit_test(shrink_takes_from_a_slow_job_first),
	    cmocka_unit_test(with_the_oracle_the_job_with_most_remaining_work_gives_first),
	    cmocka_unit_test(the_job_with_most_service_left_gives_first),
	    cmocka_unit_test(shrink_never_goes_below_min_and_removes_nothing_when_hopeless),
	    cmocka_unit_test(shrink_removes_only_what_the_starving_job_needs),
	    cmocka_unit_test(dragon_first_fit_takes_the_first_node_in_its_order),
	    cmocka_unit_test(dragon_scale_down_counts_only_min_workers_not_the_ps),
	    cmocka_unit_test(dragon_scale_up_never_exceeds_max),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
