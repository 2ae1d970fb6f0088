/* gang_test.c - reading admission's plan from a pod, and the filter and
 * prioritize answers for gang members. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "extender/gang.h"
#include "gang/protocol.h"

static struct ext_pod pod_with(struct ext_label *ann, size_t n)
{
	static struct ext_label job = {"training.kubeflow.org/job-name", "mnist"};
	return (struct ext_pod){.name = "mnist-worker-1",
	                        .ns = "ml",
	                        .uid = "u",
	                        .labels = &job,
	                        .n_labels = 1,
	                        .annotations = ann,
	                        .n_annotations = n};
}

static void test_plans_are_read_and_malformed_ones_refused(void **state)
{
	const struct {
		const char *planned, *gang, *size, *min;
		drake_err want;
		long size_v, min_v;
		const char *why;
	} cases[] = {
	    {"gpu-a", "uid.1", "5", "2", DRAKE_OK, 5, 2, NULL},
	    {"gpu-a", "uid.1", "1", NULL, DRAKE_OK, 1, 0, NULL},
	    {NULL, NULL, NULL, NULL, DRAKE_OK, 0, 0, NULL}, /* not a member */
	    {"gpu-a", NULL, "5", NULL, DRAKE_EINVAL, 0, 0, "needs a non-empty drake.dev/gang"},
	    {"gpu-a", "no-wave", "5", NULL, DRAKE_EINVAL, 0, 0, "<uid>.<wave>"},
	    {"", "uid.1", "5", NULL, DRAKE_EINVAL, 0, 0, "needs a non-empty"},
	    {"gpu-a", "uid.1", "0", NULL, DRAKE_EINVAL, 0, 0,
	     "gang-size must be an integer from 1"},
	    {"gpu-a", "uid.1", "x", NULL, DRAKE_EINVAL, 0, 0, "gang-size must be"},
	    {"gpu-a", "uid.1", "4097", NULL, DRAKE_EINVAL, 0, 0, "gang-size must be"},
	    {"gpu-a", "uid.1", "5", "-1", DRAKE_EINVAL, 0, 0, "gang-min must be"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ext_label ann[4];
		size_t n = 0;
		if (cases[i].planned)
			ann[n++] = (struct ext_label){DRAKE_ANNOTATION_PLANNED_NODE,
			                              (char *)cases[i].planned};
		if (cases[i].gang)
			ann[n++] = (struct ext_label){DRAKE_ANNOTATION_GANG, (char *)cases[i].gang};
		if (cases[i].size)
			ann[n++] =
			    (struct ext_label){DRAKE_ANNOTATION_GANG_SIZE, (char *)cases[i].size};
		if (cases[i].min)
			ann[n++] =
			    (struct ext_label){DRAKE_ANNOTATION_GANG_MIN, (char *)cases[i].min};
		struct ext_pod pod = pod_with(ann, n);
		struct gang_member m;
		char why[256] = "";
		drake_err e = gang_member_of(&pod, &m, why, sizeof(why));
		if (e != cases[i].want || (cases[i].why && !strstr(why, cases[i].why)))
			fail_msg("case %zu: got %d \"%s\"", i, e, why);
		if (e == DRAKE_OK && cases[i].planned) {
			assert_string_equal(m.planned_node, cases[i].planned);
			assert_int_equal(m.size, cases[i].size_v);
			assert_int_equal(m.min, cases[i].min_v);
			assert_string_equal(m.job, "mnist");
		}
		if (e == DRAKE_OK && !cases[i].planned)
			assert_null(m.planned_node);
	}
}

static void test_filter_passes_only_the_planned_node(void **state)
{
	char *names[] = {"gpu-a", "gpu-b", "gpu-c"};
	struct ext_args args = {.node_cache_mode = true, .n_nodes = 3, .node_names = names};
	struct ext_pod pod = pod_with(NULL, 0);
	struct gang_member m = {"gpu-b", "uid.1", "mnist", 2, 2};
	enum ext_verdict v[3];
	const char *why[3];
	char buf[256];
	gang_filter(&m, &pod, &args, v, why, buf, sizeof(buf));
	assert_int_equal(v[0], EXT_FAIL_UNRESOLVABLE);
	assert_int_equal(v[1], EXT_PASS);
	assert_int_equal(v[2], EXT_FAIL_UNRESOLVABLE);
	assert_string_equal(why[0], "tfjob ml/mnist: gang uid.1 reserves gpu-b for mnist-worker-1");
	int64_t s[3];
	gang_prioritize(&m, &args, s);
	assert_int_equal(s[0], 0);
	assert_int_equal(s[1], EXT_MAX_SCORE);
	assert_int_equal(s[2], 0);
}

static void test_filter_without_the_planned_node_rejects_all_and_says_why(void **state)
{
	char *names[] = {"gpu-a", "gpu-c"};
	struct ext_args args = {.node_cache_mode = true, .n_nodes = 2, .node_names = names};
	struct ext_pod pod = pod_with(NULL, 0);
	struct gang_member m = {"gpu-b", "uid.1", "mnist", 2, 2};
	enum ext_verdict v[2];
	const char *why[2];
	char buf[256];
	gang_filter(&m, &pod, &args, v, why, buf, sizeof(buf));
	assert_int_equal(v[0], EXT_FAIL_UNRESOLVABLE);
	assert_int_equal(v[1], EXT_FAIL_UNRESOLVABLE);
	assert_non_null(
	    strstr(why[1], "planned node gpu-b for mnist-worker-1 is not feasible now"));
}

static void test_preemption_is_allowed_when_drake_has_no_pod_cache(void **state)
{
	char *uids[] = {"a"};
	char why[64];
	assert_true(gang_preempt_allowed(NULL, "gpu-a", uids, 1, why, sizeof(why)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_plans_are_read_and_malformed_ones_refused),
	    cmocka_unit_test(test_filter_passes_only_the_planned_node),
	    cmocka_unit_test(test_filter_without_the_planned_node_rejects_all_and_says_why),
	    cmocka_unit_test(test_preemption_is_allowed_when_drake_has_no_pod_cache),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
