/* tiresias_test.c - 2D-LAS: demotion at the threshold, promotion after
 * starvation, FIFO within a queue, skipping jobs that do not fit,
 * preempting lower priority, and the artifact's placement. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "gang/tiresias.h"

#define MAXJ 6
/* a job not seen before */
#define NEW(g)                                                                                     \
	{                                                                                          \
		(g), false, false, 0, 0, 0, 0, 0                                                   \
	}

/* A job as a case writes it: GPUs, running since the previous decision,
 * and its state then (seen: queue, entered, last check, executed,
 * pending since run). */
struct cj {
	int64_t gpus;
	bool running;
	bool seen;
	int queue;
	double entered, last_check, executed, pending;
};

static void the_decisions_follow_2d_las(void **state)
{
	static const struct {
		const char *name;
		int64_t total;
		double now;
		double knob;
		int n;
		struct cj j[MAXJ];
		const char *run;   /* per job: 'r' runs, '-' waits */
		const char *queue; /* per job: its queue after the decision */
		const char *order; /* priority order of the jobs, as digits */
	} cases[] = {
	    {"new jobs enter the top queue and run in arrival order while they fit",
	     8,
	     0,
	     0,
	     3,
	     {NEW(4), NEW(4), NEW(4)},
	     "rr-",
	     "000",
	     "012"},
	    {"a running job stays in the top queue below the threshold",
	     8,
	     60,
	     0,
	     1,
	     {{1, true, true, 0, 0, 0, 0, 0}},
	     "r",
	     "0",
	     "0"},
	    {"a running job is demoted once its GPU-seconds reach the threshold",
	     8,
	     25,
	     0,
	     1,
	     {{4, true, true, 0, 0, 0, 0, 0}},
	     "r",
	     "1",
	     "0"},
	    {"a waiting job is not demoted however long it waits",
	     8,
	     1000,
	     0,
	     1,
	     {{4, false, true, 0, 0, 0, 0, 0}},
	     "r",
	     "0",
	     "0"},
	    {"a demoted job yields to a new job in the top queue and is preempted",
	     4,
	     60,
	     0,
	     2,
	     {{4, true, true, 0, 0, 0, 0, 0}, NEW(4)},
	     "-r",
	     "10",
	     "10"},
	    {"a later job that fits runs when an earlier one of its queue does not",
	     6,
	     10,
	     0,
	     3,
	     {{2, true, true, 0, 0, 10, 0, 0},
	      {8, false, true, 0, 1, 10, 0, 0},
	      {4, false, true, 0, 2, 10, 0, 0}},
	     "r-r",
	     "000",
	     "012"},
	    {"within a queue the job that joined it first goes first, not the oldest",
	     4,
	     100,
	     0,
	     2,
	     {{4, false, true, 1, 50, 100, 30, 0}, {4, false, true, 1, 40, 100, 30, 0}},
	     "-r",
	     "11",
	     "10"},
	    {"a low-priority job that still fits keeps running beside a new one",
	     8,
	     60,
	     0,
	     2,
	     {{4, true, true, 1, 0, 0, 30, 0}, NEW(4)},
	     "rr",
	     "10",
	     "10"},
	    {"without the knob a demoted job waits forever",
	     4,
	     1e6,
	     0,
	     2,
	     {{4, false, true, 1, 0, 0, 30, 0}, {4, true, true, 0, 5, 1e6 - 1, 0, 0}},
	     "-r",
	     "10",
	     "10"},
	    {"with the knob a demoted job that waited knob x its run time is promoted",
	     4,
	     100,
	     2,
	     2,
	     {{4, false, true, 1, 0, 40, 30, 0}, {1, true, true, 0, 5, 40, 0, 0}},
	     "-r",
	     "00",
	     "10"},
	    {"a promoted job joins the top queue's end and passes everything below",
	     4,
	     100,
	     2,
	     3,
	     {{4, false, true, 1, 0, 40, 30, 0},
	      {4, false, true, 0, 5, 40, 0, 0},
	      {4, false, true, 1, 1, 40, 1000, 0}},
	     "-r-",
	     "001",
	     "102"},
	    {"one second short of knob x run time is not yet promoted",
	     4,
	     99,
	     2,
	     2,
	     {{4, false, true, 1, 0, 40, 30, 0}, {1, true, true, 0, 5, 40, 0, 0}},
	     "-r",
	     "10",
	     "10"},
	    {"a job larger than the cluster never runs and blocks no one",
	     8,
	     0,
	     0,
	     2,
	     {NEW(16), NEW(8)},
	     "-r",
	     "00",
	     "01"},
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct drake_las_opts o;
		drake_las_defaults(&o);
		o.threshold[0] = 100;
		o.promote_knob = cases[c].knob;
		struct drake_las_state st[MAXJ];
		struct drake_las_job jobs[MAXJ];
		size_t order[MAXJ];
		int n = cases[c].n;
		for (int i = 0; i < n; i++) {
			const struct cj *x = &cases[c].j[i];
			st[i] = (struct drake_las_state){.seen = x->seen,
			                                 .queue = x->queue,
			                                 .entered = x->entered,
			                                 .last_check = x->last_check,
			                                 .executed = x->executed,
			                                 .total_executed = x->executed,
			                                 .pending_since_run = x->pending};
			jobs[i] = (struct drake_las_job){.gpus = x->gpus,
			                                 .running = x->running,
			                                 .seq = (uint64_t)i,
			                                 .st = &st[i]};
		}
		assert_int_equal(
		    drake_las_decide(jobs, (size_t)n, cases[c].total, cases[c].now, &o, order),
		    DRAKE_OK);
		char run[MAXJ + 1] = {0}, queue[MAXJ + 1] = {0}, ord[MAXJ + 1] = {0};
		for (int i = 0; i < n; i++) {
			run[i] = jobs[i].run ? 'r' : '-';
			queue[i] = (char)('0' + st[i].queue);
			ord[i] = (char)('0' + order[i]);
		}
		if (strcmp(run, cases[c].run) || strcmp(queue, cases[c].queue) ||
		    strcmp(ord, cases[c].order))
			fail_msg("%s: run %s queue %s order %s", cases[c].name, run, queue, ord);
	}
}

static void service_and_waiting_accumulate_over_decisions(void **state)
{
	struct drake_las_opts o;
	drake_las_defaults(&o);
	struct drake_las_state a = {0}, b = {0};
	struct drake_las_job jobs[2] = {{.gpus = 64, .seq = 0, .st = &a},
	                                {.gpus = 64, .seq = 1, .st = &b}};
	/* a runs from 0; 16 GPU-hours at 64 GPUs is 900 s */
	for (double t = 0; t < 900; t += 60) {
		assert_int_equal(drake_las_decide(jobs, 2, 64, t, &o, NULL), DRAKE_OK);
		for (int i = 0; i < 2; i++)
			jobs[i].running = jobs[i].run;
		assert_true(jobs[0].run && !jobs[1].run);
	}
	assert_int_equal(a.queue, 0);
	assert_int_equal(drake_las_decide(jobs, 2, 64, 900, &o, NULL), DRAKE_OK);
	assert_int_equal(a.queue, 1);
	assert_true(a.entered == 900);
	assert_true(!jobs[0].run && jobs[1].run);
	assert_true(a.executed == 900 && a.total_executed == 900 && a.pending_since_run == 0);
	assert_true(b.executed == 0 && b.queue == 0);
}

static void bad_input_changes_nothing(void **state)
{
	struct drake_las_opts o;
	drake_las_defaults(&o);
	struct drake_las_state a = {.seen = true, .last_check = 100};
	struct drake_las_job j = {.gpus = 1, .st = &a};
	assert_int_equal(drake_las_decide(&j, 1, 8, 50, &o, NULL), DRAKE_EINVAL);
	assert_true(a.last_check == 100);
	j.gpus = -1;
	assert_int_equal(drake_las_decide(&j, 1, 8, 200, &o, NULL), DRAKE_EINVAL);
	j.gpus = 1;
	o.n_queues = DRAKE_LAS_MAX_QUEUES + 1;
	assert_int_equal(drake_las_decide(&j, 1, 8, 200, &o, NULL), DRAKE_EINVAL);
	drake_las_defaults(&o);
	o.threshold[0] = 0;
	assert_int_equal(drake_las_decide(&j, 1, 8, 200, &o, NULL), DRAKE_EINVAL);
	drake_las_defaults(&o);
	assert_int_equal(drake_las_decide(&j, DRAKE_LAS_MAX_JOBS + 1, 8, 200, &o, NULL),
	                 DRAKE_ELIMIT);
	assert_true(a.last_check == 100 && !j.run);
	assert_int_equal(drake_las_decide(NULL, 0, 8, 200, &o, NULL), DRAKE_OK);
}

static void placement_takes_the_node_with_the_most_free_gpus_first(void **state)
{
	int64_t free[4] = {1, 4, 3, 4};
	int node[8];
	assert_int_equal(drake_las_place(free, 4, 6, node), DRAKE_OK);
	/* node 1 (4 free, the lower index of two), then node 3 */
	const int want[6] = {1, 1, 1, 1, 3, 3};
	assert_memory_equal(node, want, sizeof(want));
	assert_true(free[0] == 1 && free[1] == 0 && free[2] == 3 && free[3] == 2);
	/* a single GPU goes to the emptiest node, not the tightest */
	assert_int_equal(drake_las_place(free, 4, 1, node), DRAKE_OK);
	assert_int_equal(node[0], 2);
	assert_int_equal(drake_las_place(free, 4, 8, node), DRAKE_ESTATE);
	assert_true(free[0] == 1 && free[1] == 0 && free[2] == 2 && free[3] == 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(the_decisions_follow_2d_las),
	    cmocka_unit_test(service_and_waiting_accumulate_over_decisions),
	    cmocka_unit_test(bad_input_changes_nothing),
	    cmocka_unit_test(placement_takes_the_node_with_the_most_free_gpus_first),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
