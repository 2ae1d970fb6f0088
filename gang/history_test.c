/* history_test.c - the mean residual service of finished jobs: what a job
 * that reports no progress is expected still to run, and when that guess
 * jumps. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gang/history.h"

/* 100, 200, ..., 1600 GPU-seconds, shuffled: the order does not matter. */
static const double sixteen[16] = {700,  100, 1600, 300, 1200, 500,  900,  200,
                                   1100, 400, 1500, 800, 600,  1300, 1000, 1400};

static void a_job_is_expected_to_run_the_mean_residual_of_the_finished_jobs_above_it(void **state)
{
	(void)state;
	const struct drake_history h = {sixteen, 16};
	static const struct {
		double s, want, next;
	} rows[] = {
	    {0, 850, 100},             /* no service yet: the mean of every sample */
	    {250, 700, 300},           /* 300..1600 left: mean 950, less 250 */
	    {300, 700, 400},           /* it reached 300: that sample is outlived */
	    {299.9995, 700.0005, 400}, /* within DRAKE_HISTORY_EPS of 300: outlived too */
	    {1250, 200, 1300},         /* 1300..1600: the last four samples */
	    {1350, -1, INFINITY},      /* three above it: too few to tell */
	    {2000, -1, INFINITY},
	    {-1, -1, INFINITY},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		double next = 0;
		double r = drake_history_residual(&h, rows[i].s, &next);
		assert_true(fabs(r - rows[i].want) < 1e-6);
		assert_true(next == rows[i].next);
	}
	assert_true(fabs(drake_history_residual(&h, 250, NULL) - 700) < 1e-9);
}

static void too_few_finished_jobs_tell_nothing(void **state)
{
	(void)state;
	const struct drake_history fifteen = {sixteen, 15}, none = {NULL, 0};
	double next = 0;
	assert_true(drake_history_residual(&fifteen, 0, &next) < 0);
	assert_true(isinf(next));
	assert_true(drake_history_residual(&none, 0, &next) < 0);
	assert_true(drake_history_residual(NULL, 0, NULL) < 0);
}

static void a_sample_that_is_not_a_number_is_not_counted(void **state)
{
	(void)state;
	double v[17];
	for (int i = 0; i < 16; i++)
		v[i] = sixteen[i];
	v[16] = INFINITY;
	const struct drake_history h = {v, 17};
	assert_true(fabs(drake_history_residual(&h, 0, NULL) - 850) < 1e-9);
	v[16] = NAN;
	assert_true(fabs(drake_history_residual(&h, 0, NULL) - 850) < 1e-9);
}

/* Between two samples R only falls, so the service at which it reaches a
 * value is a sample outlived: the first past which R is that much, or past
 * which too few samples are left to tell. */
static void r_reaches_a_value_only_as_a_sample_is_outlived(void **state)
{
	(void)state;
	const struct drake_history h = {sixteen, 16};
	/* past S_k, R = 850 - S_k / 2: falling; 1300 leaves three above */
	assert_true(drake_history_reaches(&h, 0, 800) == 100);
	assert_true(drake_history_reaches(&h, 0, 801) == 1300);
	assert_true(drake_history_reaches(&h, 1350, 1) == INFINITY); /* not known there */
	/* four short jobs, four longer, eight long: from 50, R reaches 9,000
	 * once the job outlived the 200s (ties outlived together) */
	double v[16];
	for (int i = 0; i < 16; i++)
		v[i] = i < 4 ? 100 : i < 8 ? 200 : 10000;
	const struct drake_history m = {v, 16};
	assert_true(drake_history_reaches(&m, 50, 6000) == 100);
	assert_true(drake_history_reaches(&m, 50, 9000) == 200);
	/* 9,800 past the 200s: then none left above the long ones */
	assert_true(drake_history_reaches(&m, 50, 9900) == 10000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(
	        a_job_is_expected_to_run_the_mean_residual_of_the_finished_jobs_above_it),
	    cmocka_unit_test(too_few_finished_jobs_tell_nothing),
	    cmocka_unit_test(a_sample_that_is_not_a_number_is_not_counted),
	    cmocka_unit_test(r_reaches_a_value_only_as_a_sample_is_outlived),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
