/* preempt_test.c - preemption never takes a live PS or chief, nor workers
 * below their minimum; jobs without a per-role minimum keep their head
 * count. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "gang/preempt.h"

#define R(ps, chief, worker)                                                                       \
	{                                                                                          \
		{                                                                                  \
			(ps), (chief), (worker)                                                    \
		}                                                                                  \
	}

static void the_verdicts_follow_the_per_role_rule(void **state)
{
	static const struct {
		const char *name;
		struct drake_roles live, victims, min;
		bool per_role;
		int min_total;
		enum drake_preempt_verdict want;
		const char *why;
	} cases[] = {
	    {"the PS of a job with four workers is never a victim", R(1, 0, 4), R(1, 0, 0),
	     R(1, 0, 1), true, 0, DRAKE_PREEMPT_DENY, "would lose 1 of its 1 running PS"},
	    {"the PS is protected even when the minimum asks for no PS", R(1, 0, 2), R(1, 0, 0),
	     R(0, 0, 1), true, 0, DRAKE_PREEMPT_DENY, "running PS"},
	    {"one of two PS is still a PS", R(2, 0, 2), R(1, 0, 0), R(2, 0, 1), true, 0,
	     DRAKE_PREEMPT_DENY, "would lose 1 of its 2 running PS"},
	    {"the chief is never a victim", R(1, 1, 4), R(0, 1, 0), R(1, 1, 1), true, 0,
	     DRAKE_PREEMPT_DENY, "would lose its chief"},
	    {"a PS and a worker together are refused for the PS", R(1, 0, 4), R(1, 0, 1),
	     R(1, 0, 1), true, 0, DRAKE_PREEMPT_DENY, "PS"},
	    {"workers down to exactly the minimum may go", R(1, 1, 4), R(0, 0, 2), R(1, 1, 2), true,
	     0, DRAKE_PREEMPT_ALLOW, ""},
	    {"one worker more than that may not", R(1, 1, 4), R(0, 0, 3), R(1, 1, 2), true, 0,
	     DRAKE_PREEMPT_DENY, "would drop to 1 of the 2 workers it needs"},
	    {"a job already below its minimum loses no further worker", R(1, 0, 1), R(0, 0, 1),
	     R(1, 0, 2), true, 0, DRAKE_PREEMPT_DENY, "would drop to 0 of the 2 workers"},
	    {"a job with no victims is always allowed", R(1, 1, 0), R(0, 0, 0), R(1, 1, 2), true, 0,
	     DRAKE_PREEMPT_ALLOW, ""},
	    {"a worker of a job whose minimum is zero workers may go", R(1, 0, 1), R(0, 0, 1),
	     R(1, 0, 0), true, 0, DRAKE_PREEMPT_ALLOW, ""},
	    {"without a per-role minimum the head count decides and allows the PS", R(1, 0, 4),
	     R(1, 0, 0), R(0, 0, 0), false, 2, DRAKE_PREEMPT_ALLOW, ""},
	    {"without a per-role minimum going below the head count is refused", R(1, 0, 1),
	     R(0, 0, 1), R(0, 0, 0), false, 2, DRAKE_PREEMPT_DENY,
	     "would drop to 1 of the 2 pods its gang needs"},
	    {"without any minimum everything may go", R(1, 0, 1), R(1, 0, 1), R(0, 0, 0), false, 0,
	     DRAKE_PREEMPT_ALLOW, ""},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char why[128] = "x";
		enum drake_preempt_verdict v = drake_preempt_verdict(
		    &cases[i].live, &cases[i].victims, cases[i].per_role ? &cases[i].min : NULL,
		    cases[i].min_total, why, sizeof(why));
		if (v != cases[i].want || !strstr(why, cases[i].why) ||
		    (v == DRAKE_PREEMPT_ALLOW && why[0]))
			fail_msg("%s: got %s \"%s\"", cases[i].name,
			         v == DRAKE_PREEMPT_ALLOW ? "allow" : "deny", why);
	}
}

static void a_short_buffer_still_gets_a_terminated_reason(void **state)
{
	struct drake_roles live = R(1, 0, 2), victims = R(1, 0, 0), min = R(1, 0, 1);
	char why[8];
	assert_int_equal(drake_preempt_verdict(&live, &victims, &min, 0, why, sizeof(why)),
	                 DRAKE_PREEMPT_DENY);
	assert_int_equal(strlen(why), 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(the_verdicts_follow_the_per_role_rule),
	    cmocka_unit_test(a_short_buffer_still_gets_a_terminated_reason),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
