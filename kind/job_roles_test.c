/* job_roles_test.c - a Kubeflow replica type, in any case, maps to its gang
 * role and back (kind/job.h), and a type that is no part of the gang maps
 * to none. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gang/roles.h"
#include "kind/job.h"

static void replica_types_map_to_roles_and_back(void **state)
{
	(void)state;
	static const struct {
		const char *type;
		int role;
	} table[] = {
	    {"PS", DRAKE_ROLE_PS},
	    {"ps", DRAKE_ROLE_PS},
	    {"Worker", DRAKE_ROLE_WORKER},
	    {"worker", DRAKE_ROLE_WORKER},
	    {"Chief", DRAKE_ROLE_CHIEF},
	    {"chief", DRAKE_ROLE_CHIEF},
	    {"Master", DRAKE_ROLE_CHIEF},
	    {"MASTER", DRAKE_ROLE_CHIEF},
	    {"Evaluator", -1},
	    {"evaluator", -1},
	    {"", -1},
	    {"workers", -1},
	    {NULL, -1},
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (job_role_of_type_name(table[i].type) != table[i].role)
			fail_msg("%s: role %d, want %d", table[i].type ? table[i].type : "(null)",
			         job_role_of_type_name(table[i].type), table[i].role);
	for (int r = 0; r < DRAKE_NROLES; r++)
		assert_int_equal(job_role_of_type_name(job_type_name_of_role(r)), r);
	assert_string_equal(job_type_name_of_role(DRAKE_ROLE_PS), "PS");
	assert_string_equal(job_type_name_of_role(DRAKE_ROLE_CHIEF), "Chief");
	assert_string_equal(job_type_name_of_role(DRAKE_ROLE_WORKER), "Worker");
	assert_null(job_type_name_of_role(DRAKE_NROLES));
}

static void an_evaluator_is_no_part_of_the_gang(void **state)
{
	(void)state;
	assert_int_equal(job_role_of(JOB_EVALUATOR), -1);
	assert_int_equal(job_role_of(JOB_PS), DRAKE_ROLE_PS);
	assert_int_equal(job_rtype_of_role(DRAKE_ROLE_CHIEF), JOB_CHIEF);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(replica_types_map_to_roles_and_back),
	    cmocka_unit_test(an_evaluator_is_no_part_of_the_gang),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
