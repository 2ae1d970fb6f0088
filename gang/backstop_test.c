/* backstop_test.c - the backstop's verdict for a running gang, per role,
 * on a clock the test holds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "gang/backstop.h"

#define T 15.0 /* the barrier timeout */

/* PS, chief, worker */
#define R(ps, chief, worker)                                                                       \
	{                                                                                          \
		{                                                                                  \
			ps, chief, worker                                                          \
		}                                                                                  \
	}

struct tcase {
	const char *name;
	struct drake_backstop_in in;
	double now;
	enum drake_backstop_verdict want;
	int short_role;
	const char *says;
};

static const struct tcase cases[] = {
    {"a whole gang is left alone",
     {.min = R(1, 0, 2), .bound = R(1, 0, 4), .timeout_s = T},
     1000,
     DRAKE_BACKSTOP_OK,
     -1,
     ""},
    {"workers without their ps are short of the ps, however many they are",
     {.min = R(1, 0, 1), .bound = R(0, 0, 4), .first_seen_s = 1000, .timeout_s = T},
     1001,
     DRAKE_BACKSTOP_REPAIR,
     DRAKE_ROLE_PS,
     "has 0 of the 1 ps it needs"},
    {"workers without their ps are rolled back two timeouts after the loss",
     {.min = R(1, 0, 1), .bound = R(0, 0, 4), .first_seen_s = 1000, .timeout_s = T},
     1030,
     DRAKE_BACKSTOP_ROLL_BACK,
     DRAKE_ROLE_PS,
     "had 0 of the 1 ps it needs for 30s"},
    {"a gang without its chief is short of the chief",
     {.min = R(1, 1, 2), .bound = R(1, 0, 2), .first_seen_s = 1000, .timeout_s = T},
     1031,
     DRAKE_BACKSTOP_ROLL_BACK,
     DRAKE_ROLE_CHIEF,
     "chief"},
    {"a worker finished early counts as done: a finishing job is whole",
     {.min = R(1, 0, 2),
      .bound = R(1, 0, 1),
      .done = R(0, 0, 1),
      .first_seen_s = 1000,
      .timeout_s = T},
     5000,
     DRAKE_BACKSTOP_OK,
     -1,
     ""},
    {"gated slots above the minimum are not missing",
     {.min = R(1, 0, 2), .bound = R(1, 0, 2), .timeout_s = T},
     5000,
     DRAKE_BACKSTOP_OK,
     -1,
     ""},
    {"a job queued with nothing admitted waits for as long as it takes",
     {.min = R(1, 0, 2), .timeout_s = T},
     99999,
     DRAKE_BACKSTOP_OK,
     -1,
     ""},
    {"a job whose members all finished is not partial",
     {.min = R(1, 0, 2), .done = R(1, 0, 2), .timeout_s = T},
     99999,
     DRAKE_BACKSTOP_OK,
     -1,
     ""},
    {"an admitted wave with nothing bound waits four timeouts",
     {.min = R(1, 0, 2), .admitted = R(1, 0, 2), .admitted_at_s = 1000, .timeout_s = T},
     1059,
     DRAKE_BACKSTOP_WAIT,
     -1,
     "3 admitted members"},
    {"an admitted wave with nothing bound is released after four timeouts",
     {.min = R(1, 0, 2),
      .admitted = R(1, 0, 2),
      .admitted_at_s = 1000,
      .first_seen_s = 1050,
      .timeout_s = T},
     1060,
     DRAKE_BACKSTOP_RELEASE,
     -1,
     "none of the 3 admitted members was bound in 60s"},
    {"the pods' own clock survives a restart: the deadline is not reset",
     {.min = R(1, 0, 1),
      .bound = R(0, 0, 4),
      .since_s = 1000,
      .first_seen_s = 1025,
      .timeout_s = T},
     1031,
     DRAKE_BACKSTOP_ROLL_BACK,
     DRAKE_ROLE_PS,
     "for 31s"},
    {"without the pods' clock a restart starts it again",
     {.min = R(1, 0, 1), .bound = R(0, 0, 4), .first_seen_s = 1025, .timeout_s = T},
     1031,
     DRAKE_BACKSTOP_REPAIR,
     DRAKE_ROLE_PS,
     "rolled back after 30s"},
    {"a wave cut short while binding is partial, not stuck",
     {.min = R(1, 0, 4),
      .bound = R(1, 0, 1),
      .admitted = R(0, 0, 3),
      .since_s = 1000,
      .timeout_s = T},
     1010,
     DRAKE_BACKSTOP_REPAIR,
     DRAKE_ROLE_WORKER,
     "has 1 of the 4 worker"},
};

static void each_case(void **state)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct tcase *c = &cases[i];
		struct drake_backstop_out out;
		drake_backstop_judge(&c->in, c->now, &out);
		if (out.verdict != c->want || out.short_role != c->short_role ||
		    !strstr(out.why, c->says))
			fail_msg("%s: got %s (role %d, \"%s\"), want %s (role %d, \"%s\")", c->name,
			         drake_backstop_name(out.verdict), out.short_role, out.why,
			         drake_backstop_name(c->want), c->short_role, c->says);
	}
}

static void the_deadline_says_when_to_look_again(void **state)
{
	struct drake_backstop_in in = {
	    .min = R(1, 0, 1), .bound = R(0, 0, 2), .first_seen_s = 100, .timeout_s = T};
	struct drake_backstop_out out;
	drake_backstop_judge(&in, 110, &out);
	assert_int_equal(out.verdict, DRAKE_BACKSTOP_REPAIR);
	assert_true(out.deadline_s == 130);
	drake_backstop_judge(&in, out.deadline_s, &out);
	assert_int_equal(out.verdict, DRAKE_BACKSTOP_ROLL_BACK);
}

static void
a_member_stuck_terminating_on_a_lost_node_is_deleted_at_once_after_the_deadline(void **state)
{
	struct drake_backstop_in in = {.min = R(1, 0, 1),
	                               .bound = R(1, 0, 0),
	                               .stuck_terminating_s = 1000,
	                               .first_seen_s = 1000,
	                               .timeout_s = T};
	struct drake_backstop_out out;
	drake_backstop_judge(&in, 1059, &out);
	assert_false(out.force_delete);
	drake_backstop_judge(&in, 1060, &out);
	assert_true(out.force_delete);
	assert_int_equal(out.verdict, DRAKE_BACKSTOP_ROLL_BACK); /* and the gang is short */
	assert_string_equal(drake_backstop_name(DRAKE_BACKSTOP_RELEASE), "release");
}

static void a_wave_refused_outside_the_model_is_released_at_once_naming_the_member(void **state)
{
	(void)state;
	struct drake_backstop_in in = {
	    .min = R(1, 0, 2),
	    .admitted = R(1, 0, 2),
	    .admitted_at_s = 1000,
	    .timeout_s = T,
	    .refused = 1,
	    .refused_pod = "tf-worker-0",
	    .refused_msg = "0/7 nodes are available: persistentvolumeclaim \"data\" not found."};
	struct drake_backstop_out out;
	drake_backstop_judge(&in, 1001, &out);
	assert_int_equal(out.verdict, DRAKE_BACKSTOP_REFUSED);
	assert_non_null(strstr(out.why, "kube-scheduler cannot place tf-worker-0: 0/7 nodes are "
	                                "available: persistentvolumeclaim \"data\" not found"));
	assert_null(strstr(out.why, "no longer fits"));
	assert_string_equal(drake_backstop_name(out.verdict), "refused");
	/* a refusal the planner answers for waits for kube-scheduler as before,
	 * and the release at the deadline quotes kube-scheduler */
	in.refused = 0;
	in.refused_msg = "0/7 nodes are available: 1 Insufficient cpu.";
	drake_backstop_judge(&in, 1001, &out);
	assert_int_equal(out.verdict, DRAKE_BACKSTOP_WAIT);
	drake_backstop_judge(&in, 1000 + DRAKE_BACKSTOP_STUCK_TIMEOUTS * T, &out);
	assert_int_equal(out.verdict, DRAKE_BACKSTOP_RELEASE);
	assert_non_null(strstr(out.why, "kube-scheduler says 0/7 nodes are available: 1 "
	                                "Insufficient cpu."));
	/* once a member is bound the wave is no longer the refused one's */
	in.refused = 1;
	in.bound = (struct drake_roles)R(1, 0, 0);
	in.admitted = (struct drake_roles)R(0, 0, 2);
	in.first_seen_s = 1000;
	drake_backstop_judge(&in, 1001, &out);
	assert_int_equal(out.verdict, DRAKE_BACKSTOP_REPAIR);
}

static void a_jobs_schedule_timeout_is_the_deadline_of_its_admitted_wave(void **state)
{
	(void)state;
	struct drake_backstop_in in = {.min = R(1, 0, 1),
	                               .admitted = R(1, 0, 1),
	                               .admitted_at_s = 1000,
	                               .timeout_s = T,
	                               .stuck_s = 200};
	struct drake_backstop_out out;
	drake_backstop_judge(&in, 1000 + DRAKE_BACKSTOP_STUCK_TIMEOUTS * T, &out);
	assert_int_equal(out.verdict, DRAKE_BACKSTOP_WAIT);
	assert_true(out.deadline_s == 1200);
	drake_backstop_judge(&in, 1200, &out);
	assert_int_equal(out.verdict, DRAKE_BACKSTOP_RELEASE);
	in.stuck_s = 5;
	drake_backstop_judge(&in, 1005, &out);
	assert_int_equal(out.verdict, DRAKE_BACKSTOP_RELEASE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(each_case),
	    cmocka_unit_test(the_deadline_says_when_to_look_again),
	    cmocka_unit_test(
	        a_member_stuck_terminating_on_a_lost_node_is_deleted_at_once_after_the_deadline),
	    cmocka_unit_test(
	        a_wave_refused_outside_the_model_is_released_at_once_naming_the_member),
	    cmocka_unit_test(a_jobs_schedule_timeout_is_the_deadline_of_its_admitted_wave),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
