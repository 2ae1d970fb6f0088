/* roles_test.c - per-role minimums read and written the way pods carry them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "gang/roles.h"

static void a_minimum_round_trips(void **state)
{
	struct drake_roles r = {{1, 1, 2}}, back;
	char buf[64], msg[128];
	assert_string_equal(drake_roles_format(&r, buf, sizeof(buf)), "ps=1,chief=1,worker=2");
	assert_int_equal(drake_roles_parse(buf, 4096, &back, msg, sizeof(msg)), DRAKE_OK);
	assert_memory_equal(&r, &back, sizeof(r));
	assert_int_equal(drake_roles_total(&back), 4);
}

static void any_order_is_read(void **state)
{
	struct drake_roles r;
	char msg[128];
	assert_int_equal(drake_roles_parse("worker=7,ps=2,chief=0", 4096, &r, msg, sizeof(msg)),
	                 DRAKE_OK);
	assert_int_equal(r.n[DRAKE_ROLE_PS], 2);
	assert_int_equal(r.n[DRAKE_ROLE_CHIEF], 0);
	assert_int_equal(r.n[DRAKE_ROLE_WORKER], 7);
}

static void malformed_minimums_are_refused_with_a_reason(void **state)
{
	static const struct {
		const char *in, *says;
	} cases[] = {
	    {"3", "role=count"},
	    {"ps=1,chief=1", "worker missing"},
	    {"ps=1,chief=1,worker=2,ps=1", "ps given twice"},
	    {"ps=1,boss=1,worker=2", "unknown role"},
	    {"ps=-1,chief=0,worker=2", "needs a count"},
	    {"ps=1,chief=0,worker=5000", "above 4096"},
	    {"ps=1;chief=0,worker=2", "expected ','"},
	    {"ps=99999999999999999999,chief=0,worker=1", "above"},
	    {"", "role=count"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct drake_roles r;
		char msg[160] = "";
		assert_int_equal(drake_roles_parse(cases[i].in, 4096, &r, msg, sizeof(msg)),
		                 DRAKE_EINVAL);
		assert_non_null(strstr(msg, cases[i].says));
	}
	struct drake_roles r;
	char msg[64];
	assert_int_equal(drake_roles_parse(NULL, 4096, &r, msg, sizeof(msg)), DRAKE_EINVAL);
}

static void the_short_role_is_the_first_below_its_minimum(void **state)
{
	struct drake_roles min = {{1, 1, 2}};
	struct drake_roles workers_only = {{0, 1, 4}}, no_chief = {{1, 0, 2}}, whole = {{1, 1, 2}};
	assert_int_equal(drake_roles_short(&workers_only, &min), DRAKE_ROLE_PS);
	assert_int_equal(drake_roles_short(&no_chief, &min), DRAKE_ROLE_CHIEF);
	assert_int_equal(drake_roles_short(&whole, &min), -1);
	enum drake_role role;
	assert_true(drake_role_parse("chief", &role) && role == DRAKE_ROLE_CHIEF);
	assert_false(drake_role_parse("evaluator", &role));
	assert_string_equal(drake_role_name(DRAKE_ROLE_WORKER), "worker");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(a_minimum_round_trips),
	    cmocka_unit_test(any_order_is_read),
	    cmocka_unit_test(malformed_minimums_are_refused_with_a_reason),
	    cmocka_unit_test(the_short_role_is_the_first_below_its_minimum),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
