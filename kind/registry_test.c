/* registry_test.c - the kinds' measured cost of a resize and drake serve's
 * --resize-cost over it (registry.h): defaults per kind, overrides by
 * either name, one or two durations, and a clear refusal of bad input. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kind/registry.h"

static struct job_resize_cost of(const struct job_resize_costs *c, const char *kind)
{
	const struct job_kind *k = job_kind_lookup(kind);
	assert_non_null(k);
	return job_resize_cost_of(c, k);
}

static void each_kind_costs_what_its_trainer_was_measured_at(void **state)
{
	(void)state;
	struct job_resize_costs c;
	job_resize_costs_default(&c);
	/* BENCHMARKS.md, "A resize's cost": torchrun 18.1 / 6.5 s, drake-train 1.9 / 2.3 s */
	assert_true(of(&c, "pytorchjobs").shrink_s == 18.1 && of(&c, "pytorchjobs").grow_s == 6.5);
	assert_true(of(&c, "tfjob").shrink_s == 1.9 && of(&c, "tfjob").grow_s == 2.3);
	assert_true(of(NULL, "PyTorchJob").shrink_s == 18.1);
	assert_true(job_resize_cost_of(&c, NULL).shrink_s == 0);
}

static void an_override_sets_one_or_both_costs_and_leaves_other_kinds_alone(void **state)
{
	(void)state;
	struct job_resize_costs c;
	char msg[256];
	job_resize_costs_default(&c);
	assert_int_equal(job_resize_costs_parse("pytorchjob=20s/4s", &c, msg, sizeof(msg)),
	                 DRAKE_OK);
	assert_true(of(&c, "pytorchjobs").shrink_s == 20 && of(&c, "pytorchjobs").grow_s == 4);
	assert_true(of(&c, "tfjobs").shrink_s == 1.9);
	assert_int_equal(job_resize_costs_parse("TFJob=1m,pytorchjobs=3s", &c, msg, sizeof(msg)),
	                 DRAKE_OK);
	assert_true(of(&c, "tfjobs").shrink_s == 60 && of(&c, "tfjobs").grow_s == 60);
	assert_true(of(&c, "pytorchjobs").shrink_s == 3 && of(&c, "pytorchjobs").grow_s == 3);
	assert_int_equal(job_resize_costs_parse("", &c, msg, sizeof(msg)), DRAKE_OK);
	assert_true(of(&c, "tfjobs").shrink_s == 60);
}

static void bad_input_is_refused_naming_what_is_wrong(void **state)
{
	(void)state;
	static const struct {
		const char *in, *says;
	} bad[] = {
	    {"mpijobs=2s", "\"mpijobs\" is not a job kind drake knows"},
	    {"tfjobs", "\"tfjobs\" is not KIND=SHRINK[/GROW]"},
	    {"tfjobs=fast", "tfjobs: \"fast\""},
	    {"tfjobs=0s", "tfjobs: \"0s\""},
	    {"tfjobs=2s/-1s", "tfjobs: \"2s/-1s\""},
	    {"tfjobs=2h", "at most 1h"},
	    {"tfjobs=2s,pytorchjobs=", "pytorchjobs: \"\""},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct job_resize_costs c;
		char msg[256] = "";
		job_resize_costs_default(&c);
		assert_int_equal(job_resize_costs_parse(bad[i].in, &c, msg, sizeof(msg)),
		                 DRAKE_EINVAL);
		if (!strstr(msg, bad[i].says))
			fail_msg("%s: %s", bad[i].in, msg);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(each_kind_costs_what_its_trainer_was_measured_at),
	    cmocka_unit_test(an_override_sets_one_or_both_costs_and_leaves_other_kinds_alone),
	    cmocka_unit_test(bad_input_is_refused_naming_what_is_wrong),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
