/* round_test.c - drake's decision round: each action and each reason, from
 * inputs as the controller and `drake sim` build them.
 *
 * Jobs are one PS of no GPU and workers of one GPU each (gpu_job); the
 * snapshot's used GPUs stand for what running jobs hold. Each case calls
 * drake_round() once and checks the actions a user relies on. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gang/gang_testutil.h"
#include "gang/round.h"
#include "gang/round_testutil.h"

static struct drake_round_opts opts(void)
{
	struct drake_round_opts o = {0};
	drake_scale_defaults(&o.scale);
	return o;
}

/* The two policies that shrink for a starving job: drake's rules, and
 * DRAGON's with no ScaleUp yet. */
static const enum drake_round_policy shrinking[] = {DRAKE_POLICY_DRAKE, DRAKE_POLICY_DRAGON};

static struct drake_round_opts opts_of(enum drake_round_policy p)
{
	struct drake_round_opts o = opts();
	o.policy = p;
	o.dragon_last_action = NOW - 10;
	return o;
}

static int node(const struct drake_cluster *c, const char *name)
{
	return drake_cluster_find(c, name);
}

static void a_job_that_fits_is_admitted_with_its_member_indexes_in_a_new_wave(void **state)
{
	(void)state;
	struct drake_cluster c;
	assert_int_equal(cluster_from(&c, "a:8:0"), 0);
	struct tj t[1];
	new_job(&t[0], "ml/a", 1, 1, 2, 4);
	struct drake_round_opts o = opts();
	struct drake_round r;
	run(&c, t, 1, &o, &r);
	const struct drake_round_action *a = only(&r, DRAKE_ROUND_ADMIT, 0);
	assert_int_equal(a->reason, DRAKE_REASON_FITS);
	assert_string_equal(a->gang, "ml/a.10000");
	assert_int_equal(a->size, 3);
	assert_int_equal(a->n_pods, 3);
	assert_int_equal(a->min.n[DRAKE_ROLE_WORKER], 1);
	assert_int_equal(a->pods[0].role, DRAKE_ROLE_PS);
	assert_int_equal(a->pods[1].index, 0);
	assert_int_equal(a->pods[2].index, 1);
	assert_int_equal(a->pods[2].node, node(&c, "a"));
	assert_int_equal(r.jobs[0].cls, DRAKE_CLASS_NEW);
	drake_round_release(&r);
	drake_cluster_release(&c);
}

static void an_ending_jobs_room_is_held_for_the_job_ahead_not_taken_by_a_small_one(void **state)
{
	(void)state;
	struct drake_cluster c;
	/* done's workers 0-3 ended on a a moment ago (a is free); 4-7 and its
	 * PS still run on b; c is another tenant's */
	assert_int_equal(cluster_from(&c, "a:4:0 b:4:4 c:4:4"), 0);
	struct tj t[3];
	static const int on[] = {0, 0, 0, 0, 1, 1, 1, 1};
	running_job(&t[0], "ml/done", 100, 8, 8, "ml/done.100", 1, on, 8);
	for (int k = 0; k < 4; k++) {
		t[0].j.workers[k].finished = true;
		t[0].j.workers[k].ended = NOW - 0.5;
		t[0].j.workers[k].node = -1;
	}
	new_job(&t[1], "ml/head", NOW - 5, 8, 8, 8);  /* fits a and b once done is gone */
	new_job(&t[2], "ml/small", NOW - 4, 2, 2, 2); /* fits a now; neither starves yet */
	struct drake_round_opts o = opts();
	struct drake_round r;
	run(&c, t, 3, &o, &r);
	assert_int_equal(count(&r, DRAKE_ROUND_ADMIT), 0);
	const struct drake_round_action *h = only(&r, DRAKE_ROUND_HOLD, 1);
	assert_int_equal(h->reason, DRAKE_REASON_NO_FIT);
	assert_non_null(strstr(h->why, "of ending jobs held for it"));
	assert_int_equal(only(&r, DRAKE_ROUND_HOLD, 2)->reason, DRAKE_REASON_NO_FIT);
	assert_false(r.jobs[0].scalable); /* an ending job is never scaled */
	assert_int_equal(count(&r, DRAKE_ROUND_SHRINK) + count(&r, DRAKE_ROUND_GROW), 0);
	assert_true(r.next <= NOW - 0.5 + o.scale.ending_hold);
	drake_round_release(&r);
	drake_cluster_release(&c);
}

static void a_new_job_whose_uid_cannot_name_a_gang_is_held_as_invalid(void **state)
{
	(void)state;
	struct drake_cluster c;
	assert_int_equal(cluster_from(&c, "a:8:0"), 0);
	struct tj t[2];
	new_job(&t[0], "ml/a", 1, 1, 2, 4);
	t[0].j.uid = "not.a-uid";
	new_job(&t[1], "ml/b", 2, 1, 2, 4);
	struct drake_round_opts o = opts();
	struct drake_round r;
	run(&c, t, 2, &o, &r);
	const struct drake_round_action *a = only(&r, DRAKE_ROUND_HOLD, 0);
	assert_int_equal(a->status, DRAKE_ADMIT_INVALID);
	assert_non_null(strstr(a->why, "cannot name a gang"));
	assert_int_equal(only(&r, DRAKE_ROUND_ADMIT, 1)->reason, DRAKE_REASON_FITS);
	drake_round_release(&r);
	drake_cluster_release(&c);
}

static void
with_dragons_policy_a_round_admits_one_job_by_first_fit_and_moves_its_timer(void **state)
{
	(void)state;
	struct drake_cluster c;
	assert_int_equal(cluster_from(&c, "a:8:4 b:8:0"), 0);
	struct tj t[2];
	new_job(&t[0], "ml/a", NOW - 5, 2, 2, 2);
	new_job(&t[1], "ml/b", NOW - 4, 2, 2, 2);
	struct drake_round_opts o = opts();
	struct drake_round r;
	run(&c, t, 2, &o, &r); /* drake's: both, best fit */
	assert_int_equal(count(&r, DRAKE_ROUND_ADMIT), 2);
	assert_int_equal(only(&r, DRAKE_ROUND_ADMIT, 0)->pods[1].node, node(&c, "a"));
	drake_round_release(&r);
	o.policy = DRAKE_POLICY_DRAGON;
	o.dragon_last_action = NOW - 100;
	run(&c, t, 2, &o, &r); /* DRAGON's: the first, first fit, one a round */
	assert_int_equal(count(&r, DRAKE_ROUND_ADMIT), 1);
	const struct drake_round_action *a = only(&r, DRAKE_ROUND_ADMIT, 0);
	assert_int_equal(a->pods[0].node, node(&c, "a"));
	assert_true(r.dragon_last_action == NOW);
	drake_round_release(&r);
	drake_cluster_release(&c);
}

static void the_workers_a_spec_asks_for_are_clamped_to_max(void **state)
{
	(void)state;
	struct drake_cluster c;
	assert_int_equal(cluster_from(&c, "a:8:0"), 0);
	struct tj t[1];
	new_job(&t[0], "ml/a", 1, 1, 6, 3); /* replicas 6, max-instances 3 */
	struct drake_round_opts o = opts();
	struct drake_round r;
	run(&c, t, 1, &o, &r);
	assert_int_equal(r.jobs[0].members, 3);
	assert_int_equal(only(&r, DRAKE_ROUND_ADMIT, 0)->n_pods, 1 + 3);
	drake_round_release(&r);
	drake_cluster_release(&c);
}

static void a_job_with_a_member_missing_waits_for_the_next_round(void **state)
{
	(void)state;
	struct drake_cluster c;
	assert_int_equal(cluster_from(&c, "a:8:0"), 0);
	struct tj t[1];
	new_job(&t[0], "ml/a", 1, 1, 2, 4);
	t[0].j.workers[1].state = DRAKE_MEMBER_MISSING;
	struct drake_round_opts o = opts();
	struct drake_round r;
	run(&c, t, 1, &o, &r);
	assert_int_equal(r.n, 0);
	assert_int_equal(r.jobs[0].cls, DRAKE_CLASS_INCOMPLETE);
	drake_round_release(&r);
	drake_cluster_release(&c);
}

/* A burst of jobs (a script, a controller) takes a moment to create: the
 * pack queue chooses among the whole burst, not among the first jobs whose
 * pods exist. One that never completes is waited for DRAKE_ARRIVAL_HOLD at
 * most, and a running job's pod being replaced is no arrival. */
static void a_new_job_waits_while_jobs_submitted_with_it_are_being_created(void **state)
{
	(void)state;
	struct drake_cluster c;
	assert_int_equal(cluster_from(&c, "a:8:0"), 0);
	struct tj t[2];
	new_job(&t[0], "ml/ready", NOW - 1, 2, 2, 2);
	new_job(&t[1], "ml/arriving", NOW - 0.5, 2, 2, 2);
	t[1].j.workers[1].state = DRAKE_MEMBER_MISSING; /* its pod not created yet */
	struct drake_round_opts o = opts();
	struct drake_round r;
	run(&c, t, 2, &o, &r);
	assert_int_equal(count(&r, DRAKE_ROUND_ADMIT), 0);
	const struct drake_round_action *h = only(&r, DRAKE_ROUND_HOLD, 0);
	assert_non_null(strstr(h->why, "still being created"));
	assert_true(r.next <= NOW - 1 + DRAKE_ARRIVAL_HOLD);
	drake_round_release(&r);

	/* the same under the FIFO queue: later arrivals go behind it */
	o.scale.queue = DRAKE_QUEUE_FIFO;
	run(&c, t, 2, &o, &r);
	only(&r, DRAKE_ROUND_ADMIT, 0);
	drake_round_release(&r);
	o = opts();

	/* an arrival that never completes is no longer waited for */
	t[1].j.created = NOW - DRAKE_ARRIVAL_HOLD - 0.5;
	run(&c, t, 2, &o, &r);
	only(&r, DRAKE_ROUND_ADMIT, 0);
	drake_round_release(&r);

	/* a running job whose worker is being replaced is not arriving */
	const int on[2] = {0, 0};
	running_job(&t[1], "ml/run", NOW - 0.5, 1, 2, "ml/run.9999", 0, on, 2);
	t[1].j.workers[1] = (struct drake_round_member){.state = DRAKE_MEMBER_MISSING, .node = -1};
	run(&c, t, 2, &o, &r);
	only(&r, DRAKE_ROUND_ADMIT, 0);
	drake_round_release(&r);
	drake_cluster_release(&c);
}

static void lost_members_rejoin_their_wave_ahead_of_an_older_job(void **state)
{
	(void)state;
	struct drake_cluster c;
	assert_int_equal(cluster_from(&c, "a:4:3"), 0); /* room for one worker */
	struct tj t[2];
	const int nodes[2] = {0, 0};
	running_job(&t[0], "ml/run", 100, 2, 4, "run.100", 0, nodes, 2);
	t[0].j.workers[1] = (struct drake_round_member){.state = DRAKE_MEMBER_WAITING, .node = -1};
	new_job(&t[1], "ml/old", 1, 1, 1, 1); /* created first: FIFO would serve it */
	struct drake_round_opts o = opts();
	struct drake_round r;
	run(&c, t, 2, &o, &r);
	const struct drake_round_action *a = only(&r, DRAKE_ROUND_REPAIR, 0);
	assert_int_equal(a->reason, DRAKE_REASON_LOST_MEMBERS);
	assert_string_equal(a->gang, "run.100");
	assert_int_equal(a->size, 1 + 2);
	assert_int_equal(a->n_pods, 1);
	assert_int_equal(a->pods[0].index, 1);
	assert_int_equal(&r.act[0], a); /* before anything else */
	assert_int_equal(only(&r, DRAKE_ROUND_HOLD, 1)->reason, DRAKE_REASON_NO_FIT);
	assert_int_equal(r.jobs[0].cls, DRAKE_CLASS_REPAIR);
	drake_round_release(&r);
	drake_cluster_release(&c);
}

static void a_repair_goes_to_the_node_its_scale_up_recorded(void **state)
{
	(void)state;
	struct drake_cluster c;
	assert_int_equal(cluster_from(&c, "a:8:2 b:8:6"), 0);
	struct tj t[1];
	const int nodes[2] = {0, 0};
	running_job(&t[0], "ml/run", 100, 1, 4, "run.100", 0, nodes, 2);
	t[0].member[2] = 1;
	t[0].j.rec.n = 3;
	t[0].j.workers[2] = (struct drake_round_member){.state = DRAKE_MEMBER_WAITING, .node = -1};
	t[0].place[0] = (struct drake_round_place){2, "b"};
	t[0].j.rec.place = t[0].place;
	t[0].j.rec.n_place = 1;
	struct drake_round_opts o = opts();
	struct drake_round r;
	run(&c, t, 1, &o, &r);
	const struct drake_round_action *a = only(&r, DRAKE_ROUND_REPAIR, 0);
	assert_int_equal(a->reason, DRAKE_REASON_HINTED);
	assert_int_equal(a->pods[0].index, 2);
	assert_int_equal(a->pods[0].node, node(&c, "b")); /* the planner packs onto a */
	drake_round_release(&r);
	/* no room left there: the planner decides */
	drake_cluster_charge(&c, (size_t)node(&c, "b"), &(struct drake_res){.gpu = 2}, 1);
	run(&c, t, 1, &o, &r);
	a = only(&r, DRAKE_ROUND_REPAIR, 0);
	assert_int_equal(a->reason, DRAKE_REASON_LOST_MEMBERS);
	assert_int_equal(a->pods[0].node, node(&c, "a"));
	drake_round_release(&r);
	drake_cluster_release(&c);
}

static void a_migrated_ps_goes_to_its_target(void **state)
{
	(void)state;
	struct drake_cluster c;
	assert_int_equal(cluster_from(&c, "a:8:2 b:8:0"), 0);
	struct tj t[1];
	const int nodes[2] = {0, 0};
	running_job(&t[0], "ml/run", 100, 1, 4, "run.100", 0, nodes, 2);
	t[0].j.ps[0] = (struct drake_round_member){.state = DRAKE_MEMBER_WAITING, .node = -1};
	t[0].j.move = (struct drake_round_move){true, DRAKE_ROLE_PS, 0, "b"};
	struct drake_round_opts o = opts();
	struct drake_round r;
	run(&c, t, 1, &o, &r);
	const struct drake_round_action *a = only(&r, DRAKE_ROUND_REPAIR, 0);
	assert_int_equal(a->reason, DRAKE_REASON_HINTED);
	assert_int_equal(a->pods[0].role, DRAKE_ROLE_PS);
	assert_int_equal(a->pods[0].node, node(&c, "b"));
	drake_round_release(&r);
	drake_cluster_release(&c);
}

static void the_oldest_job_starts_first_and_equal_times_go_by_name(void **state)
{
	(void)state;
	struct drake_cluster c;
	assert_int_equal(cluster_from(&c, "a:2:0"), 0); /* one job of two workers */
	struct tj t[3];
	new_job(&t[0], "ml/young", 50, 2, 2, 2);
	new_job(&t[1], "ml/b", 5, 2, 2, 2);
	new_job(&t[2], "ml/a", 5, 2, 2, 2);
	struct drake_round_opts o = opts();
	struct drake_round r;
	run(&c, t, 3, &o, &r);
	assert_int_equal(count(&r, DRAKE_ROUND_ADMIT), 1);
	assert_int_equal(only(&r, DRAKE_ROUND_ADMIT, 2)->job, 2);
	assert_int_equal(only(&r, DRAKE_ROUND_HOLD, 0)->status, DRAKE_ADMIT_WAITING);
	drake_round_release(&r);
	drake_cluster_release(&c);
}

static void with_strict_fifo_a_job_behind_one_that_waits_is_held(void **state)
{
	(void)state;
	struct drake_cluster c;
	assert_int_equal(cluster_from(&c, "a:2:0"), 0);
	struct tj t[2];
	new_job(&t[0], "ml/big", 1, 2, 2, 2); /* fits the empty cluster, not now */
	new_job(&t[1], "ml/small", 2, 1, 1, 1);
	struct drake_round_opts o = opts();
	o.scale.backfill = false;
	drake_cluster_charge(&c, 0, &(struct drake_res){.gpu = 1}, 1);
	struct drake_round r;
	run(&c, t, 2, &o, &r);
	assert_int_equal(only(&r, DRAKE_ROUND_HOLD, 0)->reason, DRAKE_REASON_NO_FIT);
	const struct drake_round_action *a = only(&r, DRAKE_ROUND_HOLD, 1);
	assert_int_equal(a->reason, DRAKE_REASON_FIFO);
	assert_string_equal(a->why, "behind a job that waits (strict FIFO)");
	drake_round_release(&r);
	o.scale.backfill = true; /* backfill: the small one starts */
	run(&c, t, 2, &o, &r);
	assert_int_equal(only(&r, DRAKE_ROUND_ADMIT, 1)->reason, DRAKE_REASON_FITS);
	drake_round_release(&r);
	drake_cluster_release(&c);
}

static void a_job_larger_than_the_cluster_is_held_as_never(void **state)
{
	(void)state;
	struct drake_cluster c;
	assert_int_equal(cluster_from(&c, "a:2:0"), 0);
	struct tj t[1];
	new_job(&t[0], "ml/huge", 1, 4, 4, 4);
	struct drake_round_opts o = opts();
	struct drake_round r;
	run(&c, t, 1, &o, &r);
	const struct drake_round_action *a = only(&r, DRAKE_ROUND_HOLD, 0);
	assert_int_equal(a->reason, DRAKE_REASON_NEVER);
	assert_int_equal(a->status, DRAKE_ADMIT_NEVER);
	drake_round_release(&r);
	drake_cluster_release(&c);
}

static void a_refused_job_backs_off_until_its_delay_or_a_change(void **state)
{
	(void)state;
	struct drake_cluster c;
	assert_int_equal(cluster_from(&c, "a:8:0"), 0);
	struct tj t[1];
	new_job(&t[0], "ml/a", 1, 1, 1, 1);
	t[0].j.refusal = (struct drake_refusal_record){2, NOW - 10, NOW + 20};
	t[0].j.refused_pod = "a-worker-0";
	t[0].j.refused_why = "0/1 nodes are available";
	struct drake_round_opts o = opts();
	struct drake_round r;
	run(&c, t, 1, &o, &r);
	const struct drake_round_action *a = only(&r, DRAKE_ROUND_HOLD, 0);
	assert_int_equal(a->reason, DRAKE_REASON_BACKOFF);
	assert_true(a->quiet);
	assert_true(r.next <= NOW + 20);
	assert_non_null(strstr(a->why, "kube-scheduler cannot place a-worker-0"));
	assert_non_null(strstr(a->why, "PersistentVolumeClaim in ml changes"));
	assert_int_equal(count(&r, DRAKE_ROUND_ADMIT), 0);
	drake_round_release(&r);
	t[0].j.changed = NOW - 5; /* a node changed after the refusal */
	run(&c, t, 1, &o, &r);
	assert_int_equal(count(&r, DRAKE_ROUND_ADMIT), 1);
	drake_round_release(&r);
	drake_cluster_release(&c);
}

static void once_a_wave_is_paced_every_wave_behind_it_is_held(void **state)
{
	(void)state;
	struct drake_cluster c;
	assert_int_equal(cluster_from(&c, "a:8:0 b:8:0"), 0);
	struct tj t[4];
	new_job(&t[0], "ml/1", 1, 2, 2, 2); /* 3 pods */
	new_job(&t[1], "ml/2", 2, 2, 2, 2); /* 3 pods: past the budget */
	new_job(&t[2], "ml/3", 3, 1, 1, 1); /* 2 pods: would fit the budget */
	const int nodes[1] = {1};
	running_job(&t[3], "ml/run", 0, 1, 1, "run.0", 1, nodes, 1);
	t[3].j.ps[0] = (struct drake_round_member){.state = DRAKE_MEMBER_WAITING, .node = -1};
	struct drake_round_opts o = opts();
	o.pace_budget = 6; /* repair 1 + first 3 = 4: the third (2) would fit */
	o.pace_unbound = 0;
	struct drake_round r;
	run(&c, t, 4, &o, &r);
	assert_int_equal(only(&r, DRAKE_ROUND_REPAIR, 3)->n_pods, 1); /* repairs always go */
	assert_int_equal(only(&r, DRAKE_ROUND_ADMIT, 0)->n_pods, 3);
	const struct drake_round_action *h = only(&r, DRAKE_ROUND_HOLD, 1);
	assert_int_equal(h->reason, DRAKE_REASON_PACED);
	assert_int_equal(h->n_pods, 3); /* the wave it would start */
	assert_int_equal(only(&r, DRAKE_ROUND_HOLD, 2)->reason, DRAKE_REASON_PACED);
	assert_int_equal(r.held, 2);
	drake_round_release(&r);
	o.pace_budget = 0; /* unpaced */
	run(&c, t, 4, &o, &r);
	assert_int_equal(count(&r, DRAKE_ROUND_ADMIT), 3);
	drake_round_release(&r);
	drake_cluster_release(&c);
}

/* Node a's 4 GPUs all held by ml/run (4 workers of 1 GPU, min 1, wave
 * gang, admitted at `admitted`), and ml/starving (2 workers) waiting 100 s. */
static void a_full_node_and_a_starving_job(struct drake_cluster *c, struct tj t[2], double admitted,
                                           const char *gang)
{
	assert_int_equal(cluster_from(c, "a:4:4"), 0);
	const int nodes[4] = {0, 0, 0, 0};
	running_job(&t[0], "ml/run", admitted, 1, 4, gang, 0, nodes, 4);
	new_job(&t[1], "ml/starving", NOW - 100, 2, 2, 2);
}

static void a_starving_job_takes_the_highest_worker_indexes_never_worker_0(void **state)
{
	(void)state;
	struct drake_cluster c;
	struct tj t[2];
	a_full_node_and_a_starving_job(&c, t, 100, "run.100");
	struct drake_round_opts o = opts();
	struct drake_round r;
	run(&c, t, 2, &o, &r);
	const struct drake_round_action *s = only(&r, DRAKE_ROUND_SHRINK, 0);
	assert_int_equal(s->reason, DRAKE_REASON_GIVE);
	assert_int_equal(s->for_job, 1);
	assert_int_equal(s->n_pods, 2);
	assert_int_equal(s->pods[0].index, 3); /* highest first */
	assert_int_equal(s->pods[1].index, 2);
	assert_int_equal(s->members_after, 2);
	assert_true(s->member[0] && s->member[1] && !s->member[2] && !s->member[3]);
	assert_non_null(strstr(s->why, "gave 2 workers to ml/starving"));
	assert_int_equal(only(&r, DRAKE_ROUND_ADMIT, 1)->reason, DRAKE_REASON_STARVED);
	drake_round_release(&r);
	/* worker 0 is not a member: the job is not scaled at all */
	t[0].member[0] = 0;
	t[0].member[3] = 0;
	t[0].j.rec.n = 2;
	run(&c, t, 2, &o, &r);
	assert_int_equal(count(&r, DRAKE_ROUND_SHRINK), 0);
	assert_false(r.jobs[0].scalable);
	drake_round_release(&r);
	drake_cluster_release(&c);
}

static void nobody_gives_workers_while_pods_of_the_last_change_are_leaving(void **state)
{
	(void)state;
	struct drake_cluster c;
	assert_int_equal(cluster_from(&c, "a:5:5"), 0); /* 4 members and one leaving */
	struct tj t[2];
	const int nodes[4] = {0, 0, 0, 0};
	running_job(&t[0], "ml/run", 100, 1, 5, "run.100", 0, nodes, 4);
	t[0].j.workers[4] = (struct drake_round_member){
	    .state = DRAKE_MEMBER_MISSING, .node = 0, .bound = true, .leaving = true};
	new_job(&t[1], "ml/starving", NOW - 100, 2, 2, 2);
	for (size_t p = 0; p < 2; p++) {
		struct drake_round_opts o = opts_of(shrinking[p]);
		struct drake_round r;
		t[0].j.workers[4].leaving = true;
		run(&c, t, 2, &o, &r);
		assert_int_equal(count(&r, DRAKE_ROUND_SHRINK), 0);
		assert_int_equal(count(&r, DRAKE_ROUND_ADMIT), 0);
		assert_non_null(strstr(only(&r, DRAKE_ROUND_HOLD, 1)->why, "still leaving"));
		if (o.policy ==
		    DRAKE_POLICY_DRAGON) /* the head waits; the timer does not restart */
			assert_true(r.dragon_last_action == NOW - 10);
		drake_round_release(&r);
		/* due to be gone 29 s ago: still leaving */
		t[0].j.workers[4].leaving_by = NOW - DRAKE_LEAVING_STUCK + 1;
		run(&c, t, 2, &o, &r);
		assert_int_equal(count(&r, DRAKE_ROUND_SHRINK), 0);
		drake_round_release(&r);
		/* stuck past that (a lost kubelet, a finalizer): it holds nothing back */
		t[0].j.workers[4].leaving_by = NOW - DRAKE_LEAVING_STUCK;
		run(&c, t, 2, &o, &r);
		assert_int_equal(only(&r, DRAKE_ROUND_SHRINK, 0)->for_job, 1);
		drake_round_release(&r);
		t[0].j.workers[4].leaving_by = 0;
		/* gone (its GPU still counted here): the starving job takes workers */
		t[0].j.workers[4].leaving = false;
		run(&c, t, 2, &o, &r);
		assert_int_equal(only(&r, DRAKE_ROUND_SHRINK, 0)->for_job, 1);
		drake_round_release(&r);
	}
	drake_cluster_release(&c);
}

/* A job whose wave kube-scheduler has not bound in full gives no workers:
 * the barrier holds the wave for the size it was admitted at, and a wave
 * short of its members would never bind. Once every member is bound, the
 * starving job takes workers, under drake's rules and DRAGON's alike. */
static void a_job_whose_wave_is_not_yet_bound_gives_no_workers(void **state)
{
	(void)state;
	struct drake_cluster c;
	struct tj t[2];
	a_full_node_and_a_starving_job(&c, t, NOW - 1, "run.1");
	for (size_t p = 0; p < 2; p++) {
		struct drake_round_opts o = opts_of(shrinking[p]);
		struct drake_round r;
		for (int unbound = 0; unbound < 2; unbound++) {
			/* the PS, then worker 3: placed, not bound yet */
			struct drake_round_member *m = unbound ? &t[0].j.workers[3] : &t[0].j.ps[0];
			m->bound = false;
			run(&c, t, 2, &o, &r);
			assert_int_equal(count(&r, DRAKE_ROUND_SHRINK), 0);
			assert_int_equal(count(&r, DRAKE_ROUND_ADMIT), 0);
			assert_true(r.jobs[0].scalable);
			drake_round_release(&r);
			m->bound = true;
		}
		run(&c, t, 2, &o, &r);
		assert_int_equal(only(&r, DRAKE_ROUND_SHRINK, 0)->for_job, 1);
		drake_round_release(&r);
	}
	drake_cluster_release(&c);
}

/* A scale-down writes the record before its workers' deletions reach the
 * snapshot: a worker the record no longer lists is leaving as a deleted one
 * is, or the next round would take workers again for the same job. */
static void a_worker_the_record_no_longer_lists_is_leaving_too(void **state)
{
	(void)state;
	struct drake_cluster c;
	assert_int_equal(cluster_from(&c, "a:5:5"), 0); /* 4 members and one stray */
	struct tj t[2];
	const int nodes[5] = {0, 0, 0, 0, 0};
	const enum drake_round_policy policies[] = {DRAKE_POLICY_DRAKE, DRAKE_POLICY_DRAGON};
	for (size_t p = 0; p < 2; p++) {
		running_job(&t[0], "ml/run", 100, 1, 5, "run.100", 0, nodes, 5);
		t[0].member[4] = 0; /* the record gave worker 4 away a second ago */
		t[0].j.rec.n = 4;
		t[0].j.rec.at = NOW - 1;
		new_job(&t[1], "ml/starving", NOW - 100, 2, 2, 2);
		struct drake_round_opts o = opts();
		o.policy = policies[p];
		o.dragon_last_action = NOW - 10;
		struct drake_round r;
		run(&c, t, 2, &o, &r);
		assert_int_equal(count(&r, DRAKE_ROUND_SHRINK), 0);
		assert_int_equal(count(&r, DRAKE_ROUND_ADMIT), 0);
		assert_non_null(strstr(only(&r, DRAKE_ROUND_HOLD, 1)->why, "still leaving"));
		assert_int_equal(only(&r, DRAKE_ROUND_RELEASE, 0)->pods[0].index, 4);
		drake_round_release(&r);
		/* the record written DRAKE_LEAVING_STUCK ago: the stray is stuck */
		t[0].j.rec.at = NOW - DRAKE_LEAVING_STUCK;
		run(&c, t, 2, &o, &r);
		assert_int_equal(only(&r, DRAKE_ROUND_SHRINK, 0)->for_job, 1);
		drake_round_release(&r);
		/* when the record was written is not known: nothing is held back */
		t[0].j.rec.at = 0;
		run(&c, t, 2, &o, &r);
		assert_int_equal(only(&r, DRAKE_ROUND_SHRINK, 0)->for_job, 1);
		drake_round_release(&r);
	}
	drake_cluster_release(&c);
}

static void growth_takes_the_lowest_gated_worker_that_is_not_a_member(void **state)
{
	(void)state;
	struct drake_cluster c;
	assert_int_equal(cluster_from(&c, "a:8:1"), 0);
	struct tj t[1];
	const int nodes[1] = {0};
	running_job(&t[0], "ml/run", 1000, 1, 4, "run.1000", 0, nodes, 1);
	t[0].j.workers[1].state = DRAKE_MEMBER_MISSING; /* being replaced */
	struct drake_round_opts o = opts();
	struct drake_round r;
	run(&c, t, 1, &o, &r);
	const struct drake_round_action *g = only(&r, DRAKE_ROUND_GROW, 0);
	assert_int_equal(g->reason, DRAKE_REASON_SPEEDUP);
	assert_true(g->n_pods >= 1);
	assert_int_equal(g->pods[0].index, 2);
	assert_int_equal(g->pods[0].node, node(&c, "a"));
	assert_true(g->member[0] && !g->member[1] && g->member[2]);
	assert_int_equal(g->members_after, 1 + g->n_pods);
	assert_true(g->gain > 0);
	drake_round_release(&r);
	drake_cluster_release(&c);
}

static void placed_workers_the_record_no_longer_lists_are_released(void **state)
{
	(void)state;
	struct drake_cluster c;
	assert_int_equal(cluster_from(&c, "a:8:4"), 0);
	struct tj t[1];
	const int nodes[4] = {0, 0, 0, 0};
	running_job(&t[0], "ml/run", NOW - 1, 1, 4, "run.9999", 0, nodes, 4);
	t[0].member[2] = t[0].member[3] = 0; /* the record lists 0 and 1 */
	t[0].j.rec.n = 2;
	t[0].j.workers[3].finished = true; /* done: nothing to release */
	struct drake_round_opts o = opts();
	struct drake_round r;
	run(&c, t, 1, &o, &r);
	const struct drake_round_action *a = only(&r, DRAKE_ROUND_RELEASE, 0);
	assert_int_equal(a->reason, DRAKE_REASON_STRAY);
	assert_int_equal(a->n_pods, 1);
	assert_int_equal(a->pods[0].index, 2);
	drake_round_release(&r);
	/* a record of an earlier wave is not the job's: no strays, members
	 * from the wave's gang size */
	t[0].j.rec.gang = "run.1";
	run(&c, t, 1, &o, &r);
	assert_int_equal(count(&r, DRAKE_ROUND_RELEASE), 0);
	assert_int_equal(r.jobs[0].members, 4);
	assert_false(r.jobs[0].record);
	drake_round_release(&r);
	drake_cluster_release(&c);
}

static void an_admitted_job_with_nothing_bound_waits_for_kube_scheduler(void **state)
{
	(void)state;
	struct drake_cluster c;
	assert_int_equal(cluster_from(&c, "a:8:2"), 0);
	struct tj t[1];
	const int nodes[2] = {0, 0};
	running_job(&t[0], "ml/run", NOW - 1, 1, 2, "run.9999", 0, nodes, 2);
	for (int i = 0; i < 3; i++)
		t[0].m[i].bound = false;
	t[0].m[2].name = "run-worker-1";
	t[0].m[2].refused = "0/1 nodes are available: 1 Insufficient cpu.";
	struct drake_round_opts o = opts();
	struct drake_round r;
	run(&c, t, 1, &o, &r);
	const struct drake_round_action *a = only(&r, DRAKE_ROUND_HOLD, 0);
	assert_int_equal(a->reason, DRAKE_REASON_UNBOUND);
	assert_true(a->quiet);
	assert_non_null(strstr(a->why, "kube-scheduler has not placed run-worker-1"));
	assert_false(r.jobs[0].running);
	drake_round_release(&r);
	t[0].m[1].bound = true;
	run(&c, t, 1, &o, &r);
	assert_true(r.jobs[0].running);
	assert_int_equal(count(&r, DRAKE_ROUND_HOLD), 0);
	drake_round_release(&r);
	drake_cluster_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(a_job_that_fits_is_admitted_with_its_member_indexes_in_a_new_wave),
	    cmocka_unit_test(the_workers_a_spec_asks_for_are_clamped_to_max),
	    cmocka_unit_test(a_job_with_a_member_missing_waits_for_the_next_round),
	    cmocka_unit_test(a_new_job_waits_while_jobs_submitted_with_it_are_being_created),
	    cmocka_unit_test(lost_members_rejoin_their_wave_ahead_of_an_older_job),
	    cmocka_unit_test(a_repair_goes_to_the_node_its_scale_up_recorded),
	    cmocka_unit_test(a_migrated_ps_goes_to_its_target),
	    cmocka_unit_test(the_oldest_job_starts_first_and_equal_times_go_by_name),
	    cmocka_unit_test(with_strict_fifo_a_job_behind_one_that_waits_is_held),
	    cmocka_unit_test(a_job_larger_than_the_cluster_is_held_as_never),
	    cmocka_unit_test(a_refused_job_backs_off_until_its_delay_or_a_change),
	    cmocka_unit_test(once_a_wave_is_paced_every_wave_behind_it_is_held),
	    cmocka_unit_test(a_starving_job_takes_the_highest_worker_indexes_never_worker_0),
	    cmocka_unit_test(nobody_gives_workers_while_pods_of_the_last_change_are_leaving),
	    cmocka_unit_test(a_job_whose_wave_is_not_yet_bound_gives_no_workers),
	    cmocka_unit_test(a_worker_the_record_no_longer_lists_is_leaving_too),
	    cmocka_unit_test(growth_takes_the_lowest_gated_worker_that_is_not_a_member),
	    cmocka_unit_test(placed_workers_the_record_no_longer_lists_are_released),
	    cmocka_unit_test(an_admitted_job_with_nothing_bound_waits_for_kube_scheduler),
	    cmocka_unit_test(
	        an_ending_jobs_room_is_held_for_the_job_ahead_not_taken_by_a_small_one),
	    cmocka_unit_test(a_new_job_whose_uid_cannot_name_a_gang_is_held_as_invalid),
	    cmocka_unit_test(
	        with_dragons_policy_a_round_admits_one_job_by_first_fit_and_moves_its_timer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
