/* ratelimit_test.c - per-pod token buckets: a burst, then the sustained
 * rate; pods do not share a bucket; the table stays within its size and
 * forgets refilled or stale pods first. Time is passed in, so no sleeps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "extender/ratelimit.h"

static void test_a_pod_gets_its_burst_then_one_report_a_second(void **state)
{
	struct ratelimit *rl = ratelimit_new(1, 5, 16);
	double wait = -1;
	for (int i = 0; i < 5; i++)
		assert_true(ratelimit_take(rl, "ml/a", 100.0, &wait));
	assert_false(ratelimit_take(rl, "ml/a", 100.0, &wait));
	assert_true(wait > 0.99 && wait <= 1.0);
	assert_false(ratelimit_take(rl, "ml/a", 100.5, &wait));
	assert_true(wait > 0.49 && wait < 0.51);
	assert_true(ratelimit_take(rl, "ml/a", 101.0, &wait));
	assert_false(ratelimit_take(rl, "ml/a", 101.0, NULL));
	/* after a long pause the bucket is full again, never fuller */
	for (int i = 0; i < 5; i++)
		assert_true(ratelimit_take(rl, "ml/a", 1000.0, NULL));
	assert_false(ratelimit_take(rl, "ml/a", 1000.0, NULL));
	/* a clock that steps back earns nothing */
	assert_false(ratelimit_take(rl, "ml/a", 900.0, NULL));
	ratelimit_free(rl);
}

static void test_a_throttled_pod_does_not_throttle_another(void **state)
{
	struct ratelimit *rl = ratelimit_new(1, 5, 16);
	for (int i = 0; i < 5; i++)
		assert_true(ratelimit_take(rl, "ml/a", 0, NULL));
	assert_false(ratelimit_take(rl, "ml/a", 0, NULL));
	assert_true(ratelimit_take(rl, "ml/b", 0, NULL));
	assert_true(ratelimit_take(rl, "other/a", 0, NULL));
	assert_int_equal(ratelimit_len(rl), 3);
	ratelimit_free(rl);
}

static void test_a_full_table_forgets_refilled_then_stalest_pods_and_never_grows(void **state)
{
	struct ratelimit *rl = ratelimit_new(1, 5, 4);
	char key[32];
	for (int i = 0; i < 4; i++) {
		snprintf(key, sizeof(key), "ml/p%d", i);
		for (int j = 0; j < 5; j++)
			assert_true(ratelimit_take(rl, key, 10.0 + i * 0.1, NULL));
	}
	assert_int_equal(ratelimit_len(rl), 4);
	/* all four are (nearly) empty: the stalest (p0) makes room for p4 */
	assert_true(ratelimit_take(rl, "ml/p4", 10.35, NULL));
	assert_int_equal(ratelimit_len(rl), 4);
	/* p2 and p3 are still remembered as empty */
	assert_false(ratelimit_take(rl, "ml/p3", 10.35, NULL));
	assert_false(ratelimit_take(rl, "ml/p2", 10.35, NULL));
	/* p0 was forgotten: it starts again with a full bucket */
	assert_true(ratelimit_take(rl, "ml/p0", 10.35, NULL));
	/* much later every bucket has refilled; newcomers reuse those slots */
	for (int i = 10; i < 30; i++) {
		snprintf(key, sizeof(key), "ml/q%d", i);
		assert_true(ratelimit_take(rl, key, 100.0 + i * 10, NULL));
	}
	assert_int_equal(ratelimit_len(rl), 4);
	ratelimit_free(rl);
}

static void test_a_key_over_the_limit_is_refused_and_bad_settings_make_no_table(void **state)
{
	struct ratelimit *rl = ratelimit_new(1, 5, 4);
	char key[RATELIMIT_KEY_MAX + 1];
	memset(key, 'a', RATELIMIT_KEY_MAX);
	key[RATELIMIT_KEY_MAX] = '\0';
	double wait = -1;
	assert_false(ratelimit_take(rl, key, 0, &wait));
	assert_true(wait == 0);
	assert_int_equal(ratelimit_len(rl), 0);
	ratelimit_free(rl);
	assert_null(ratelimit_new(0, 5, 4));
	assert_null(ratelimit_new(1, 0, 4));
	assert_null(ratelimit_new(1, 5, 0));
	ratelimit_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_a_pod_gets_its_burst_then_one_report_a_second),
	    cmocka_unit_test(test_a_throttled_pod_does_not_throttle_another),
	    cmocka_unit_test(test_a_full_table_forgets_refilled_then_stalest_pods_and_never_grows),
	    cmocka_unit_test(test_a_key_over_the_limit_is_refused_and_bad_settings_make_no_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
