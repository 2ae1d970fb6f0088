/* round_codec_test.c - a decision round as a JSON line: what a replay
 * needs of its inputs and outputs is there, by name and by index. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <jansson.h>
#include <stdlib.h>

#include "gang/gang_testutil.h"
#include "reconciler/round_codec.h"

static void a_round_is_one_line_with_its_inputs_and_actions(void **state)
{
	(void)state;
	struct drake_cluster c;
	assert_int_equal(cluster_from(&c, "a:8:0 b:8:8"), 0);
	struct drake_round_member m[4];
	for (int i = 0; i < 4; i++)
		m[i] = (struct drake_round_member){.state = DRAKE_MEMBER_WAITING, .node = -1};
	struct drake_round_job j = {.name = "ml/a",
	                            .uid = "u1",
	                            .created = 5,
	                            .req = gpu_job(1, 1, 2),
	                            .max_workers = 3,
	                            .ps = m,
	                            .workers = m + 1,
	                            .progress = -1};
	struct drake_round_opts o = {.pace_budget = 64};
	drake_scale_defaults(&o.scale);
	struct drake_round r;
	assert_int_equal(drake_round(&c, &j, 1, 100, &o, &r), DRAKE_OK);
	char *line = round_log_line(&c, &j, 1, 100, &o, &r);
	assert_non_null(line);
	assert_null(strchr(line, '\n'));
	json_error_t err;
	json_t *v = json_loads(line, 0, &err);
	assert_non_null(v);
	assert_int_equal(json_real_value(json_object_get(v, "now")), 100);
	json_t *in = json_object_get(v, "in"), *out = json_object_get(v, "out");
	assert_string_equal(json_string_value(json_object_get(
	                        json_array_get(json_object_get(in, "nodes"), 1), "name")),
	                    "b");
	json_t *job = json_array_get(json_object_get(in, "jobs"), 0);
	assert_string_equal(json_string_value(json_object_get(job, "name")), "ml/a");
	assert_int_equal(json_array_size(json_object_get(job, "workers")), 3);
	assert_string_equal(json_string_value(json_object_get(
	                        json_array_get(json_object_get(job, "workers"), 2), "state")),
	                    "waiting");
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(in, "opts"), "paceBudget")), 64);
	json_t *a = json_array_get(json_object_get(out, "actions"), 0);
	assert_string_equal(json_string_value(json_object_get(a, "kind")), "admit");
	assert_string_equal(json_string_value(json_object_get(a, "reason")), "fits");
	assert_string_equal(json_string_value(json_object_get(json_object_get(a, "gang"), "id")),
	                    "u1.100");
	json_t *pods = json_object_get(a, "pods");
	assert_int_equal(json_array_size(pods), 3);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(pods, 2), "index")), 1);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(pods, 2), "node")), 0);
	assert_string_equal(json_string_value(json_object_get(
	                        json_array_get(json_object_get(out, "jobs"), 0), "class")),
	                    "new");
	json_decref(v);
	free(line);
	drake_round_release(&r);
	drake_cluster_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(a_round_is_one_line_with_its_inputs_and_actions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
