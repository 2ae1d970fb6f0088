/* optimus_test.c - Optimus' allocation: one replica each in order while
 * GPUs last, then each GPU to the largest gain (step-time cut x remaining
 * iterations), the first job on a tie, never past a job's maximum. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "gang/optimus.h"

static const double flat[] = {10, 10, 10, 10};      /* gains nothing from more */
static const double halves[] = {8, 4, 2, 1};        /* halves each time */
static const double steep_then_flat[] = {10, 6, 6}; /* gains once */

static void the_allocations_follow_the_marginal_gain(void **state)
{
	static const struct {
		const char *name;
		int64_t gpus;
		int n;
		struct drake_optimus_job j[4];
		const char *want; /* replicas per job, as digits */
	} cases[] = {
	    {"every job gets one replica in order while GPUs last",
	     2,
	     3,
	     {{4, 1, flat, 0}, {4, 1, flat, 0}, {4, 1, flat, 0}},
	     "110"},
	    {"a job that gains nothing from more stays at one",
	     8,
	     2,
	     {{4, 1, flat, 0}, {4, 1, halves, 0}},
	     "14"},
	    {"the larger remaining work wins the next GPU",
	     3,
	     2,
	     {{4, 1, halves, 0}, {4, 2, halves, 0}},
	     "12"},
	    {"on a tie the first job wins", 3, 2, {{4, 1, halves, 0}, {4, 1, halves, 0}}, "21"},
	    {"never past a job's maximum, the rest stays free",
	     8,
	     2,
	     {{2, 1, halves, 0}, {3, 1, steep_then_flat, 0}},
	     "22"},
	    {"a finished job's remaining 0 gains nothing",
	     4,
	     2,
	     {{4, 0, halves, 0}, {4, 1, halves, 0}},
	     "13"},
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct drake_optimus_job j[4];
		memcpy(j, cases[c].j, sizeof(j));
		assert_int_equal(drake_optimus_allocate(j, (size_t)cases[c].n, cases[c].gpus),
		                 DRAKE_OK);
		char got[5] = {0};
		for (int i = 0; i < cases[c].n; i++)
			got[i] = (char)('0' + j[i].replicas);
		if (strcmp(got, cases[c].want))
			fail_msg("%s: got %s, want %s", cases[c].name, got, cases[c].want);
	}
}

static void bad_jobs_are_refused(void **state)
{
	struct drake_optimus_job j = {0, 1, halves, 7};
	assert_int_equal(drake_optimus_allocate(&j, 1, 4), DRAKE_EINVAL);
	j = (struct drake_optimus_job){2, -1, halves, 7};
	assert_int_equal(drake_optimus_allocate(&j, 1, 4), DRAKE_EINVAL);
	j = (struct drake_optimus_job){2, 1, NULL, 7};
	assert_int_equal(drake_optimus_allocate(&j, 1, 4), DRAKE_EINVAL);
	assert_int_equal(drake_optimus_allocate(&j, DRAKE_OPTIMUS_MAX_JOBS + 1, 4), DRAKE_ELIMIT);
	assert_int_equal(drake_optimus_allocate(NULL, 0, 4), DRAKE_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(the_allocations_follow_the_marginal_gain),
	    cmocka_unit_test(bad_jobs_are_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
