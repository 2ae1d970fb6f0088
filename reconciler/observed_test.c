/* observed_test.c - what the controller tells the round of a running job:
 * its attained service added up pass by pass (a job first seen running is
 * taken to have run at its GPUs since admission), its rate per size and
 * spread from the reports after the size last changed, and forgetting the
 * jobs a pass did not see. The progress samples come through a wrapped
 * rec_job_samples(). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gang/round.h"
#include "migrate/progress.h"
#include "reconciler/internal.h"

static struct mig_progress samples;
static bool have_samples;

const struct mig_progress *__wrap_rec_job_samples(const struct reconciler *r, const char *key,
                                                  const char *uid);
const struct mig_progress *__wrap_rec_job_samples(const struct reconciler *r, const char *key,
                                                  const char *uid)
{
	(void)r;
	(void)key;
	(void)uid;
	return have_samples ? &samples : NULL;
}

static void report(double t, int64_t step)
{
	struct mig_sample s = {t, step, 0.5};
	char why[128];
	assert_int_equal(mig_progress_add(&samples, &s, NULL, why, sizeof(why)), DRAKE_OK);
	have_samples = true;
}

/* A job of 1 GPU a worker, no PS, workers bound on nodes[0..n). */
struct test_job {
	struct drake_round_member w[8];
	struct drake_round_job in;
};

static void job_on(struct test_job *j, const int *nodes, int n, double admitted)
{
	memset(j, 0, sizeof(*j));
	for (int i = 0; i < n; i++)
		j->w[i] = (struct drake_round_member){
		    .state = DRAKE_MEMBER_PLACED, .node = nodes[i], .bound = true};
	for (int i = n; i < 8; i++)
		j->w[i] = (struct drake_round_member){.state = DRAKE_MEMBER_WAITING, .node = -1};
	j->in = (struct drake_round_job){.name = "ns/a",
	                                 .uid = "u1",
	                                 .max_workers = 8,
	                                 .workers = j->w,
	                                 .admitted = admitted,
	                                 .progress = -1};
	j->in.req.worker.gpu = 1;
	j->in.req.want_workers = n;
}

static struct reconciler r;

static void reset(void)
{
	rec_observed_free(&r);
	memset(&r, 0, sizeof(r));
	memset(&samples, 0, sizeof(samples));
	mig_progress_init(&samples, MIG_KIND_ACCURACY, 10000);
	have_samples = false;
}

static void service_adds_up_the_gpus_a_job_held_pass_by_pass(void **state)
{
	(void)state;
	reset();
	struct test_job j;
	const int four[] = {0, 0, 1, 1}, two[] = {0, 0};
	job_on(&j, four, 4, 100);
	r.observe_pass++;
	rec_observe(&r, "ns/a", &j.in, 160); /* first seen: 4 GPUs for 60 s */
	assert_float_equal(j.in.service, 240, 1e-9);
	job_on(&j, two, 2, 100);
	r.observe_pass++;
	rec_observe(&r, "ns/a", &j.in, 200); /* it held 4 until this pass */
	assert_float_equal(j.in.service, 240 + 4 * 40, 1e-9);
	r.observe_pass++;
	rec_observe(&r, "ns/a", &j.in, 300); /* then 2 */
	assert_float_equal(j.in.service, 400 + 2 * 100, 1e-9);
	assert_null(j.in.obs); /* no reports: no rates */
	reset();
}

static void a_rate_counts_the_reports_after_the_size_changed(void **state)
{
	(void)state;
	reset();
	struct test_job j;
	const int four[] = {0, 0, 0, 0}, eight[] = {0, 0, 0, 0, 1, 1, 1, 1};
	job_on(&j, four, 4, 0);
	r.observe_pass++;
	rec_observe(&r, "ns/a", &j.in, 10);
	report(40, 100);
	report(100, 700); /* 10 steps/s */
	r.observe_pass++;
	rec_observe(&r, "ns/a", &j.in, 100);
	assert_int_equal(j.in.n_obs, 1);
	assert_int_equal(j.in.obs[0].workers, 4);
	assert_int_equal(j.in.obs[0].nodes, 1);
	assert_float_equal(j.in.obs[0].rate, 10.0 / 10000, 1e-12);
	/* grown to 8 over two nodes at 100: the reports within the change's
	 * first 30 s and before it are not its rate */
	job_on(&j, eight, 8, 0);
	r.observe_pass++;
	rec_observe(&r, "ns/a", &j.in, 100);
	report(120, 750);
	r.observe_pass++;
	rec_observe(&r, "ns/a", &j.in, 120);
	assert_int_equal(j.in.n_obs, 1);
	report(140, 800);
	report(200, 1100); /* 5 steps/s after the settling */
	r.observe_pass++;
	rec_observe(&r, "ns/a", &j.in, 200);
	assert_int_equal(j.in.n_obs, 2);
	assert_int_equal(j.in.obs[1].workers, 8);
	assert_int_equal(j.in.obs[1].nodes, 2);
	assert_float_equal(j.in.obs[1].rate, 5.0 / 10000, 1e-12);
	assert_float_equal(j.in.obs[0].rate, 10.0 / 10000, 1e-12);
	reset();
}

/* A job's rates handed to the round stay readable while later jobs of the
 * same pass are seen for the first time: the controller observes every
 * job before the round runs, and a new job must not move the entries the
 * earlier ones point into (the decision log once showed a job's rates as
 * 1,245,141,280 workers over 22,034 nodes). */
static void a_jobs_rates_outlive_the_jobs_observed_after_it(void **state)
{
	(void)state;
	reset();
	struct test_job a, b;
	const int four[] = {0, 0, 0, 0};
	job_on(&a, four, 4, 0);
	r.observe_pass++;
	rec_observe(&r, "ns/a", &a.in, 10);
	report(40, 100);
	report(100, 700);
	r.observe_pass++;
	rec_observe(&r, "ns/a", &a.in, 100);
	assert_int_equal(a.in.n_obs, 1);
	have_samples = false;
	for (int i = 0; i < 200; i++) { /* the same pass: 200 jobs seen anew */
		char uid[32];
		snprintf(uid, sizeof(uid), "n%d", i);
		job_on(&b, four, 4, 0);
		b.in.uid = uid;
		rec_observe(&r, "ns/b", &b.in, 100);
	}
	assert_int_equal(a.in.obs[0].workers, 4);
	assert_int_equal(a.in.obs[0].nodes, 1);
	assert_float_equal(a.in.obs[0].rate, 10.0 / 10000, 1e-12);
	reset();
}

static void a_job_no_pass_saw_is_forgotten(void **state)
{
	(void)state;
	reset();
	struct test_job j;
	const int one[] = {0};
	job_on(&j, one, 1, 20);
	r.observe_pass++;
	rec_observe(&r, "ns/a", &j.in, 50);
	rec_observed_gc(&r);
	assert_int_equal(r.nobserved, 1);
	r.observe_pass++;
	rec_observed_gc(&r);
	assert_int_equal(r.nobserved, 0);
	/* seen again, it starts afresh from its age */
	r.observe_pass++;
	rec_observe(&r, "ns/a", &j.in, 80);
	assert_float_equal(j.in.service, 60, 1e-9);
	reset();
}

static void
a_jobs_2d_las_state_is_kept_with_it_and_a_preempted_jobs_service_outlives_a_restart(void **state)
{
	(void)state;
	reset();
	struct test_job j;
	const int two[] = {0, 0};
	job_on(&j, two, 2, 100);
	r.observe_pass++;
	rec_observe(&r, "ns/a", &j.in, 110);
	assert_false(j.in.las.seen); /* none kept yet: the round rebuilds it */
	struct drake_las_state st = {.seen = true, .queue = 1, .entered = 105, .executed = 3};
	rec_observed_keep_las(&r, "u1", &st);
	r.observe_pass++;
	rec_observe(&r, "ns/a", &j.in, 120);
	assert_true(j.in.las.seen && j.in.las.queue == 1 && j.in.las.entered == 105);
	/* drake restarts while the job waits, preempted: nothing placed, its
	 * note's service is its service */
	reset();
	job_on(&j, two, 0, 0);
	j.in.service = 5000; /* admit_inputs: its drake.dev/preempted note's */
	r.observe_pass++;
	rec_observe(&r, "ns/a", &j.in, 300);
	assert_float_equal(j.in.service, 5000, 1e-9);
	assert_false(j.in.las.seen);
	reset();
}

/* A job seen running and then ending (worker 0 Succeeded) adds its
 * attained service to the finished jobs' history once; one first seen
 * already ending (as after a restart) adds nothing, its service unseen;
 * the latest DRAKE_HISTORY_MAX are kept. */
static void a_job_seen_to_end_adds_its_service_to_the_history_once(void **state)
{
	(void)state;
	reset();
	struct test_job j;
	const int four[] = {0, 0, 1, 1};
	job_on(&j, four, 4, 100);
	r.observe_pass++;
	rec_observe(&r, "ns/a", &j.in, 160); /* 240 GPU-seconds */
	assert_int_equal(rec_history(&r).n, 0);
	r.observe_pass++;
	rec_observe(&r, "ns/a", &j.in, 200); /* 400 */
	assert_int_equal(rec_history(&r).n, 0);
	j.w[0].finished = true;
	j.w[0].ended = 199;
	r.observe_pass++;
	rec_observe(&r, "ns/a", &j.in, 210); /* 440: the 3 others ran on */
	struct drake_history h = rec_history(&r);
	assert_int_equal(h.n, 1);
	assert_float_equal(h.service[0], 440, 1e-9);
	r.observe_pass++;
	rec_observe(&r, "ns/a", &j.in, 220);
	assert_int_equal(rec_history(&r).n, 1);
	/* a Failed member is not an end */
	job_on(&j, four, 4, 100);
	j.in.uid = "u2";
	j.w[1].finished = true;
	r.observe_pass++;
	rec_observe(&r, "ns/b", &j.in, 230);
	r.observe_pass++;
	rec_observe(&r, "ns/b", &j.in, 240);
	assert_int_equal(rec_history(&r).n, 1);
	/* first seen ending: not counted */
	job_on(&j, four, 4, 100);
	j.in.uid = "u3";
	j.w[0].finished = true;
	j.w[0].ended = 150;
	r.observe_pass++;
	rec_observe(&r, "ns/c", &j.in, 250);
	assert_int_equal(rec_history(&r).n, 1);
	/* the ring keeps the latest */
	for (int i = 0; i < DRAKE_HISTORY_MAX + 5; i++) {
		char uid[32];
		snprintf(uid, sizeof(uid), "v%d", i);
		job_on(&j, four, 4, 100);
		j.in.uid = uid;
		r.observe_pass++;
		rec_observe(&r, "ns/d", &j.in, 101); /* 4 GPU-seconds */
		j.w[0].finished = true;
		j.w[0].ended = 101;
		r.observe_pass++;
		rec_observe(&r, "ns/d", &j.in, 100 + 2 + i); /* 8 + 4 i */
		rec_observed_gc(&r);
	}
	h = rec_history(&r);
	assert_int_equal(h.n, DRAKE_HISTORY_MAX);
	double least = INFINITY;
	for (size_t i = 0; i < h.n; i++)
		least = h.service[i] < least ? h.service[i] : least;
	assert_float_equal(least, 8 + 4 * 5, 1e-9); /* jobs 5.. are kept */
	reset();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(service_adds_up_the_gpus_a_job_held_pass_by_pass),
	    cmocka_unit_test(
	        a_jobs_2d_las_state_is_kept_with_it_and_a_preempted_jobs_service_outlives_a_restart),
	    cmocka_unit_test(a_rate_counts_the_reports_after_the_size_changed),
	    cmocka_unit_test(a_jobs_rates_outlive_the_jobs_observed_after_it),
	    cmocka_unit_test(a_job_no_pass_saw_is_forgotten),
	    cmocka_unit_test(a_job_seen_to_end_adds_its_service_to_the_history_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
