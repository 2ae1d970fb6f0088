/*
 * leader_rule_test.c - the lease rule, case by case: who creates, renews,
 * takes over or waits, judged on the candidate's own clock.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kube/leader_rule.h"

#define ME    "drake-a"
#define OTHER "drake-b"

struct rule_case {
	const char *name;
	bool exists;
	const char *holder;
	int held_s;         /* the record's leaseDurationSeconds */
	double observed_at; /* monotonic, when the record last changed */
	double mono;        /* now, monotonic */
	enum leader_act want;
	int want_transitions;
};

static void test_the_rule_table(void **state)
{
	static const struct rule_case cases[] = {
	    {"no lease yet: create it", false, "", 0, 0, 100, LEADER_CREATE, 0},
	    {"ours: renew it", true, ME, 15, 90, 100, LEADER_RENEW, 3},
	    {"ours, even unchanged for long: renew it", true, ME, 15, 10, 100, LEADER_RENEW, 3},
	    {"another's, changed 5 s ago of 15: wait", true, OTHER, 15, 95, 100, LEADER_WAIT, 3},
	    {"another's, unchanged 14.9 s of 15: wait", true, OTHER, 15, 85.1, 100, LEADER_WAIT, 3},
	    {"another's, unchanged 15 s of 15: take it", true, OTHER, 15, 85, 100, LEADER_TAKE, 4},
	    {"another's, its own 60 s lease, unchanged 20 s: wait", true, OTHER, 60, 80, 100,
	     LEADER_WAIT, 3},
	    {"released (no holder): take it at once", true, "", 1, 99.9, 100, LEADER_TAKE, 4},
	    {"another's with no duration: expires after 1 s", true, OTHER, 0, 98, 100, LEADER_TAKE,
	     4},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct rule_case *c = &cases[i];
		struct lease_seen seen = {.exists = c->exists, .observed_at = c->observed_at};
		snprintf(seen.rec.holder, sizeof(seen.rec.holder), "%s", c->holder);
		seen.rec.duration_s = c->held_s;
		seen.rec.transitions = c->exists ? 3 : 0;
		seen.rec.acquire_time = c->exists ? 1000 : 0;
		seen.rec.renew_time = 1005;
		struct lease_record w;
		enum leader_act got = leader_decide(&seen, ME, c->mono, 2000, 15, &w);
		if (got != c->want)
			fail_msg("%s: got %s, want %s", c->name, leader_act_name(got),
			         leader_act_name(c->want));
		if (got == LEADER_WAIT)
			continue;
		if (strcmp(w.holder, ME) || w.duration_s != 15 || w.renew_time != 2000 ||
		    w.transitions != c->want_transitions)
			fail_msg(
			    "%s: wrote holder %s for %d s renewed %g, transitions %d (want %d)",
			    c->name, w.holder, w.duration_s, w.renew_time, w.transitions,
			    c->want_transitions);
		/* a renewal keeps when the lease was acquired; a take-over restarts it */
		double acquired = got == LEADER_RENEW ? 1000 : 2000;
		if (w.acquire_time != acquired)
			fail_msg("%s: acquire time %g, want %g", c->name, w.acquire_time, acquired);
	}
}

static void test_a_holder_stops_acting_after_its_renew_deadline(void **state)
{
	assert_false(leader_overdue(100, 109.9, 10));
	assert_false(leader_overdue(100, 110, 10));
	assert_true(leader_overdue(100, 110.1, 10));
}

static void test_a_leader_yields_once_its_node_is_not_ready_for_the_grace(void **state)
{
	static const struct {
		const char *name;
		double since, mono, grace;
		bool yield;
	} cases[] = {
	    {"a Ready node keeps its leader", -1, 1000, 20, false},
	    {"a node not Ready for less than the grace keeps it", 100, 119.9, 20, false},
	    {"a node not Ready for the grace gives it up", 100, 120, 20, true},
	    {"a node not Ready since long ago gives it up", 0, 5000, 20, true},
	    {"a grace of 0 never yields", 100, 5000, 0, false},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (leader_node_yield(cases[i].since, cases[i].mono, cases[i].grace) !=
		    cases[i].yield)
			fail_msg("%s: got %d", cases[i].name, !cases[i].yield);
}

static void test_a_release_clears_the_holder_and_keeps_the_count(void **state)
{
	struct lease_record held = {
	    .holder = ME, .acquire_time = 10, .renew_time = 20, .duration_s = 15, .transitions = 7};
	struct lease_record w;
	leader_release_record(&held, 30, &w);
	assert_string_equal(w.holder, "");
	assert_int_equal(w.transitions, 7);
	assert_int_equal(w.duration_s, 1);
	assert_true(w.renew_time == 30);
	/* and the next candidate takes it at once, one transition later */
	struct lease_seen seen = {.exists = true, .rec = w, .observed_at = 50};
	struct lease_record next;
	assert_int_equal(leader_decide(&seen, OTHER, 50, 31, 15, &next), LEADER_TAKE);
	assert_int_equal(next.transitions, 8);
}

static void test_any_field_changing_counts_as_a_change(void **state)
{
	struct lease_record a = {.holder = OTHER,
	                         .acquire_time = 1,
	                         .renew_time = 2,
	                         .duration_s = 15,
	                         .transitions = 1};
	struct lease_record b = a;
	assert_false(leader_record_changed(&a, &b));
	b.renew_time = 3;
	assert_true(leader_record_changed(&a, &b));
	b = a;
	snprintf(b.holder, sizeof(b.holder), "%s", ME);
	assert_true(leader_record_changed(&a, &b));
	b = a;
	b.transitions = 2;
	assert_true(leader_record_changed(&a, &b));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_the_rule_table),
	    cmocka_unit_test(test_a_holder_stops_acting_after_its_renew_deadline),
	    cmocka_unit_test(test_a_leader_yields_once_its_node_is_not_ready_for_the_grace),
	    cmocka_unit_test(test_a_release_clears_the_holder_and_keeps_the_count),
	    cmocka_unit_test(test_any_field_changing_counts_as_a_change),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
