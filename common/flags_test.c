/* flags_test.c - command-line flags: precedence, every value type, and the
 * errors a user sees. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/flags.h"

struct opts {
	const char *s;
	int i;
	size_t bytes, count;
	double secs;
	bool on;
};

static drake_err parse(struct opts *o, int argc, char **argv, enum flags_outcome *out, char *msg)
{
	const struct flag flags[] = {
	    {"name", "T_NAME", FLAG_STRING, &o->s, "dflt", "a string"},
	    {"port", "T_PORT", FLAG_INT, &o->i, "8443", "an int"},
	    {"max-body", NULL, FLAG_SIZE, &o->bytes, "1Mi", "a size"},
	    {"max-nodes", NULL, FLAG_COUNT, &o->count, "10", "a count"},
	    {"timeout", NULL, FLAG_DURATION, &o->secs, "30s", "a duration"},
	    {"reconcile", "T_REC", FLAG_BOOL, &o->on, "false", "a bool"},
	};
	return flags_parse(flags, 6, argc, argv, out, msg, 256);
}

static void test_defaults_then_environment_then_command_line(void **state)
{
	struct opts o;
	enum flags_outcome out;
	char msg[256];
	char *none[] = {"x"};
	unsetenv("T_NAME");
	unsetenv("T_PORT");
	assert_int_equal(parse(&o, 1, none, &out, msg), DRAKE_OK);
	assert_string_equal(o.s, "dflt");
	assert_int_equal(o.i, 8443);
	assert_int_equal(o.bytes, 1u << 20);
	assert_int_equal(o.count, 10);
	assert_true(o.secs == 30.0);
	assert_false(o.on);
	setenv("T_NAME", "from-env", 1);
	setenv("T_PORT", "9000", 1);
	char *argv[] = {"x",     "--port=1234", "--reconcile", "--timeout",
	                "250ms", "--max-body",  "64Ki"};
	assert_int_equal(parse(&o, 7, argv, &out, msg), DRAKE_OK);
	assert_string_equal(o.s, "from-env");
	assert_int_equal(o.i, 1234);
	assert_true(o.on);
	assert_true(o.secs == 0.25);
	assert_int_equal(o.bytes, 64u << 10);
	assert_int_equal(out, FLAGS_RUN);
	char *argv2[] = {"x", "--no-reconcile", "--help"};
	assert_int_equal(parse(&o, 3, argv2, &out, msg), DRAKE_OK);
	assert_int_equal(out, FLAGS_HELP);
	unsetenv("T_NAME");
	unsetenv("T_PORT");
}

static void test_bad_values_are_refused_with_a_message_naming_the_flag(void **state)
{
	const struct {
		char *arg;
		char *val;
		const char *want;
	} cases[] = {
	    {"--port", "80x", "flag --port: \"80x\" is not an integer"},
	    {"--max-body", "12Q", "--max-body: \"12Q\" is not a size"},
	    {"--max-body", "-1", "is not a size"},
	    {"--max-nodes", "1Ki", "is not a non-negative integer"},
	    {"--timeout", "soon", "is not a duration"},
	    {"--reconcile=maybe", NULL, "is not true or false"},
	    {"--nope", "1", "unknown flag --nope"},
	    {"stray", NULL, "unexpected argument \"stray\""},
	    {"--port", NULL, "flag --port needs a value"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct opts o;
		enum flags_outcome out;
		char msg[256] = "";
		char *argv[] = {"x", cases[i].arg, cases[i].val};
		drake_err e = parse(&o, cases[i].val ? 3 : 2, argv, &out, msg);
		if (e != DRAKE_EINVAL || !strstr(msg, cases[i].want))
			fail_msg("case %zu: got %d \"%s\", want \"%s\"", i, e, msg, cases[i].want);
	}
	setenv("T_PORT", "lots", 1);
	struct opts o;
	enum flags_outcome out;
	char msg[256];
	char *argv[] = {"x"};
	assert_int_equal(parse(&o, 1, argv, &out, msg), DRAKE_EINVAL);
	assert_non_null(strstr(msg, "environment T_PORT for --port"));
	unsetenv("T_PORT");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_defaults_then_environment_then_command_line),
	    cmocka_unit_test(test_bad_values_are_refused_with_a_message_naming_the_flag),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
