/* round_tiresias_test.c - the round's step 5 by 2D-LAS (round_tiresias.c):
 * preemption, order inside a queue, the decision interval, and jobs that
 * do not fit.
 *
 * Jobs are one PS of no GPU and workers of one GPU each (gpu_job) unless a
 * case says; the snapshot's used GPUs stand for what running jobs hold.
 * Thresholds are GPU-seconds, small so that a case's numbers stay short. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gang/gang_testutil.h"
#include "gang/round.h"
#include "gang/round_testutil.h"

/* A job admitted at `admitted` as wave gang, PS and workers on node, run
 * for `ran` seconds by the last decision at NOW - 60. */
static void las_running(struct tj *t, const char *name, double admitted, int n, int node,
                        const char *gang, double ran)
{
	const int nodes[MAXW] = {node, node, node, node, node, node, node, node};
	running_job(t, name, admitted, n, n, gang, node, nodes, n);
	t->j.las = (struct drake_las_state){
	    .seen = true, .entered = admitted, .last_check = NOW - 60, .executed = ran};
	t->j.service = ran * n;
}

/* Two queues split at 300 GPU-s, a decision every 60 s, the last at NOW - 60. */
static struct drake_round_opts opts(void)
{
	struct drake_round_opts o = {0};
	drake_scale_defaults(&o.scale);
	o.policy = DRAKE_POLICY_TIRESIAS;
	drake_las_defaults(&o.las);
	o.las.threshold[0] = 300;
	o.las_interval = 60;
	o.las_decided = NOW - 60;
	return o;
}

static void a_short_job_arriving_behind_a_long_job_past_the_threshold_preempts_it(void **state)
{
	(void)state;
	struct drake_cluster c;
	assert_int_equal(cluster_from(&c, "a:4:4"), 0);
	struct tj t[2];
	/* 4 GPUs for 60 s by the last decision, 60 more since: 480 GPU-s */
	las_running(&t[0], "ml/long", 100, 4, 0, "ml/long.100", 60);
	new_job(&t[1], "ml/short", NOW - 10, 4, 4, 4);
	struct drake_round_opts o = opts();
	struct drake_round r;
	run(&c, t, 2, &o, &r);
	const struct drake_round_action *p = only(&r, DRAKE_ROUND_PREEMPT, 0);
	assert_int_equal(p->reason, DRAKE_REASON_LAS_PREEMPT);
	assert_int_equal(p->n_pods, 5); /* its PS and its 4 workers */
	assert_int_equal(p->pods[0].role, DRAKE_ROLE_PS);
	assert_int_equal(p->pods[4].index, 3);
	assert_non_null(strstr(p->why, "queue 1, attained service 480 GPU-s"));
	const struct drake_round_action *a = only(&r, DRAKE_ROUND_ADMIT, 1);
	assert_int_equal(a->n_pods, 5); /* planned on the GPUs the preemption frees */
	assert_int_equal(r.jobs[0].las.queue, 1);
	assert_int_equal(r.jobs[1].las.queue, 0);
	assert_true(r.jobs[1].las.seen);
	assert_true(r.las_decided == NOW);
	assert_true(r.next <= NOW + 60);
	drake_round_release(&r);
	drake_cluster_release(&c);
}

static void a_long_job_below_the_threshold_keeps_running(void **state)
{
	(void)state;
	struct drake_cluster c;
	assert_int_equal(cluster_from(&c, "a:4:4"), 0);
	struct tj t[2];
	las_running(&t[0], "ml/long", 100, 4, 0, "ml/long.100", 10); /* 280 GPU-s */
	new_job(&t[1], "ml/short", NOW - 10, 4, 4, 4);
	struct drake_round_opts o = opts();
	struct drake_round r;
	run(&c, t, 2, &o, &r);
	assert_int_equal(count(&r, DRAKE_ROUND_PREEMPT), 0);
	assert_int_equal(only(&r, DRAKE_ROUND_HOLD, 1)->reason, DRAKE_REASON_LAS_QUEUE);
	drake_round_release(&r);
	drake_cluster_release(&c);
}

static void jobs_in_one_queue_keep_arrival_order(void **state)
{
	(void)state;
	struct drake_cluster c;
	assert_int_equal(cluster_from(&c, "a:4:0"), 0);
	struct tj t[3]; /* passed newest first; names against arrival */
	new_job(&t[0], "ml/a", NOW - 10, 2, 2, 2);
	new_job(&t[1], "ml/b", NOW - 20, 2, 2, 2);
	new_job(&t[2], "ml/c", NOW - 30, 2, 2, 2);
	struct drake_round_opts o = opts();
	o.las_decided = -1; /* none yet: the round decides */
	struct drake_round r;
	run(&c, t, 3, &o, &r);
	only(&r, DRAKE_ROUND_ADMIT, 2);
	only(&r, DRAKE_ROUND_ADMIT, 1);
	const struct drake_round_action *h = only(&r, DRAKE_ROUND_HOLD, 0);
	assert_int_equal(h->reason, DRAKE_REASON_LAS_QUEUE);
	assert_non_null(strstr(h->why, "queue 0"));
	drake_round_release(&r);
	drake_cluster_release(&c);
}

static void nothing_is_decided_between_two_decisions(void **state)
{
	(void)state;
	struct drake_cluster c;
	assert_int_equal(cluster_from(&c, "a:4:4 b:4:0"), 0);
	struct tj t[2];
	las_running(&t[0], "ml/long", 100, 4, 0, "ml/long.100", 60);
	new_job(&t[1], "ml/short", NOW - 10, 4, 4, 4);
	struct drake_round_opts o = opts();
	o.las_decided = NOW - 30;
	struct drake_round r;
	run(&c, t, 2, &o, &r);
	assert_int_equal(count(&r, DRAKE_ROUND_PREEMPT) + count(&r, DRAKE_ROUND_ADMIT), 0);
	const struct drake_round_action *h = only(&r, DRAKE_ROUND_HOLD, 1);
	assert_int_equal(h->reason, DRAKE_REASON_LAS_NEXT);
	assert_true(h->quiet);
	assert_true(r.next == NOW + 30);
	assert_true(r.las_decided == NOW - 30);
	assert_true(r.jobs[0].las.last_check == NOW - 60); /* its state untouched */
	assert_false(r.jobs[1].las.seen);
	drake_round_release(&r);
	drake_cluster_release(&c);
}

static void a_job_too_big_for_the_gpus_left_waits_while_a_later_one_that_fits_runs(void **state)
{
	(void)state;
	struct drake_cluster c;
	assert_int_equal(cluster_from(&c, "a:4:0 b:4:0"), 0);
	struct tj t[3];
	las_running(&t[0], "ml/run", NOW - 100, 4, 0, "ml/run.9900", 10);
	new_job(&t[1], "ml/wide", NOW - 20, 3, 3, 3); /* 3 workers of 2 GPUs: 6 > 4 left */
	t[1].j.req.worker.gpu = 2;
	new_job(&t[2], "ml/narrow", NOW - 10, 2, 2, 2);
	struct drake_round_opts o = opts();
	struct drake_round r;
	run(&c, t, 3, &o, &r);
	assert_int_equal(only(&r, DRAKE_ROUND_HOLD, 1)->reason, DRAKE_REASON_LAS_QUEUE);
	only(&r, DRAKE_ROUND_ADMIT, 2);
	assert_int_equal(count(&r, DRAKE_ROUND_PREEMPT), 0);
	drake_round_release(&r);
	drake_cluster_release(&c);
}

static void a_job_2d_las_runs_that_no_node_can_hold_waits_for_the_next_decision(void **state)
{
	(void)state;
	struct drake_cluster c;
	/* 4 GPUs free in all, 2 on each node */
	assert_int_equal(cluster_from(&c, "a:4:2 b:4:2"), 0);
	struct tj t[3];
	las_running(&t[0], "ml/run-a", NOW - 100, 2, 0, "ml/run-a.9900", 10);
	las_running(&t[1], "ml/run-b", NOW - 100, 2, 1, "ml/run-b.9900", 10);
	new_job(&t[2], "ml/whole", NOW - 10, 1, 1, 1); /* one worker of 4 GPUs */
	t[2].j.req.worker.gpu = 4;
	struct drake_round_opts o = opts();
	struct drake_round r;
	run(&c, t, 3, &o, &r);
	const struct drake_round_action *h = only(&r, DRAKE_ROUND_HOLD, 2);
	assert_int_equal(h->reason, DRAKE_REASON_NO_FIT);
	assert_non_null(strstr(h->why, "2D-LAS runs it"));
	assert_int_equal(count(&r, DRAKE_ROUND_ADMIT) + count(&r, DRAKE_ROUND_PREEMPT), 0);
	assert_true(r.next == NOW + 60);
	drake_round_release(&r);
	drake_cluster_release(&c);
}

static void the_gpus_of_a_job_whose_workers_finished_go_to_the_next_job(void **state)
{
	(void)state;
	struct drake_cluster c;
	assert_int_equal(cluster_from(&c, "a:4:0"), 0);
	struct tj t[2];
	las_running(&t[0], "ml/done", 100, 4, 0, "ml/done.100", 60);
	for (int k = 0; k < 4; k++) { /* its PS still runs */
		t[0].j.workers[k].finished = true;
		t[0].j.workers[k].ended = NOW - 5;
	}
	new_job(&t[1], "ml/next", NOW - 10, 4, 4, 4);
	struct drake_round_opts o = opts();
	struct drake_round r;
	run(&c, t, 2, &o, &r);
	only(&r, DRAKE_ROUND_ADMIT, 1);
	assert_int_equal(count(&r, DRAKE_ROUND_PREEMPT), 0);
	drake_round_release(&r);
	drake_cluster_release(&c);
}

static void a_job_whose_state_was_lost_is_rebuilt_from_its_attained_service(void **state)
{
	(void)state;
	struct drake_cluster c;
	assert_int_equal(cluster_from(&c, "a:4:4"), 0);
	struct tj t[2];
	las_running(&t[0], "ml/long", 100, 4, 0, "ml/long.100", 0);
	t[0].j.las = (struct drake_las_state){0}; /* a controller that restarted */
	t[0].j.service = 400;
	new_job(&t[1], "ml/short", NOW - 10, 4, 4, 4);
	struct drake_round_opts o = opts();
	o.las_decided = 0; /* a controller that restarted: its 0 is long past */
	struct drake_round r;
	run(&c, t, 2, &o, &r);
	only(&r, DRAKE_ROUND_PREEMPT, 0);
	assert_int_equal(r.jobs[0].las.queue, 1);
	assert_true(r.jobs[0].las.entered == NOW);
	assert_true(r.jobs[0].las.executed == 100);
	drake_round_release(&r);
	drake_cluster_release(&c);
}

/* The simulator's clock starts at 0: a decision then is the last one, and
 * a job that arrives 10 s later waits for the next, one interval on. */
static void a_decision_at_time_zero_holds_the_next_job_for_one_interval(void **state)
{
	(void)state;
	struct drake_cluster c;
	assert_int_equal(cluster_from(&c, "a:4:0"), 0);
	struct tj t[2];
	new_job(&t[0], "ml/first", 0, 2, 2, 2);
	struct drake_round_opts o = opts();
	o.las_decided = -1;
	struct drake_round r;
	assert_int_equal(drake_round(&c, &t[0].j, 1, 0, &o, &r), DRAKE_OK);
	only(&r, DRAKE_ROUND_ADMIT, 0);
	assert_true(r.las_decided == 0);
	assert_true(r.next == 60);
	drake_round_release(&r);
	new_job(&t[1], "ml/second", 10, 2, 2, 2);
	o.las_decided = 0;
	assert_int_equal(drake_round(&c, &t[1].j, 1, 10, &o, &r), DRAKE_OK);
	const struct drake_round_action *h = only(&r, DRAKE_ROUND_HOLD, 0);
	assert_int_equal(h->reason, DRAKE_REASON_LAS_NEXT);
	assert_true(r.next == 60);
	drake_round_release(&r);
	drake_cluster_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(a_short_job_arriving_behind_a_long_job_past_the_threshold_preempts_it),
	    cmocka_unit_test(a_long_job_below_the_threshold_keeps_running),
	    cmocka_unit_test(jobs_in_one_queue_keep_arrival_order),
	    cmocka_unit_test(nothing_is_decided_between_two_decisions),
	    cmocka_unit_test(
	        a_job_too_big_for_the_gpus_left_waits_while_a_later_one_that_fits_runs),
	    cmocka_unit_test(a_job_2d_las_runs_that_no_node_can_hold_waits_for_the_next_decision),
	    cmocka_unit_test(the_gpus_of_a_job_whose_workers_finished_go_to_the_next_job),
	    cmocka_unit_test(a_job_whose_state_was_lost_is_rebuilt_from_its_attained_service),
	    cmocka_unit_test(a_decision_at_time_zero_holds_the_next_job_for_one_interval),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
