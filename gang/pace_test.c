/* pace_test.c - the pacing budget follows kube-scheduler's measured bind
 * rate, counts only busy time, and never starves a wave. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gang/pace.h"

#define HORIZON 7.5 /* half of the default 15 s barrier timeout */
#define FLOOR   64

static void before_any_bind_the_budget_is_the_floor(void **state)
{
	struct drake_pace p;
	drake_pace_init(&p);
	assert_int_equal(drake_pace_budget(&p, HORIZON, FLOOR, 0), FLOOR);
	drake_pace_observe(&p, 0, 0, 100);
	drake_pace_observe(&p, 1, 0, 100); /* busy, but not a whole window yet */
	assert_int_equal(drake_pace_budget(&p, HORIZON, FLOOR, 0), FLOOR);
}

static void the_rate_is_binds_per_busy_second(void **state)
{
	struct drake_pace p;
	drake_pace_init(&p);
	drake_pace_observe(&p, 0, 0, 80);
	drake_pace_observe(&p, 1, 40, 40);
	drake_pace_observe(&p, 2, 40, 0); /* 80 binds in 2 busy seconds */
	assert_true(p.rate > 39.9 && p.rate < 40.1);
	assert_int_equal(drake_pace_budget(&p, HORIZON, FLOOR, 0), 300);
}

static void idle_time_does_not_read_as_a_slow_scheduler(void **state)
{
	struct drake_pace p;
	drake_pace_init(&p);
	drake_pace_observe(&p, 0, 0, 0);
	drake_pace_observe(&p, 100, 0, 0);  /* 100 s with nothing admitted */
	drake_pace_observe(&p, 100, 0, 20); /* a burst is admitted */
	drake_pace_observe(&p, 101, 20, 0); /* bound within a second */
	drake_pace_observe(&p, 500, 0, 20); /* idle again, then another burst */
	drake_pace_observe(&p, 501, 20, 0);
	assert_true(p.rate > 19.9 && p.rate < 20.1);
}

static void new_samples_move_the_rate_halfway(void **state)
{
	struct drake_pace p;
	drake_pace_init(&p);
	drake_pace_observe(&p, 0, 0, 10);
	drake_pace_observe(&p, 2, 20, 10); /* 10/s */
	drake_pace_observe(&p, 4, 60, 10); /* 30/s */
	assert_true(p.rate > 19.9 && p.rate < 20.1);
}

static void a_clock_going_backwards_adds_no_busy_time(void **state)
{
	struct drake_pace p;
	drake_pace_init(&p);
	drake_pace_observe(&p, 10, 0, 10);
	drake_pace_observe(&p, 5, 10, 10);
	assert_true(p.busy_s == 0);
	assert_true(p.rate == 0);
}

static void a_fixed_budget_overrides_the_measurement(void **state)
{
	struct drake_pace p;
	drake_pace_init(&p);
	drake_pace_observe(&p, 0, 0, 10);
	drake_pace_observe(&p, 2, 1000, 0);
	assert_int_equal(drake_pace_budget(&p, HORIZON, FLOOR, 16), 16);
	assert_int_equal(drake_pace_budget(&p, HORIZON, FLOOR, 0), 3750);
}

static void a_wave_larger_than_the_budget_still_starts_alone(void **state)
{
	assert_true(drake_pace_admits(64, 0, 200));  /* nothing in flight */
	assert_true(drake_pace_admits(64, 56, 8));   /* exactly fills it */
	assert_false(drake_pace_admits(64, 57, 8));  /* one over */
	assert_false(drake_pace_admits(64, 1, 200)); /* waits for the one in flight */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(before_any_bind_the_budget_is_the_floor),
	    cmocka_unit_test(the_rate_is_binds_per_busy_second),
	    cmocka_unit_test(idle_time_does_not_read_as_a_slow_scheduler),
	    cmocka_unit_test(new_samples_move_the_rate_halfway),
	    cmocka_unit_test(a_clock_going_backwards_adds_no_busy_time),
	    cmocka_unit_test(a_fixed_budget_overrides_the_measurement),
	    cmocka_unit_test(a_wave_larger_than_the_budget_still_starts_alone),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
