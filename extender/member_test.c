/* member_test.c - reading admission's plan from a pod, telling a member from
 * a copy of one, and the filter and prioritize answers for gang members. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "extender/member.h"
#include "gang/protocol.h"
#include "kind/job.h"

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
	    {"gpu-a", ".1", "5", NULL, DRAKE_EINVAL, 0, 0,
	     "drake.dev/gang: gang id \".1\" has an empty uid"},
	    {"gpu-a", "uid.x", "5", NULL, DRAKE_EINVAL, 0, 0, "its wave is not a decimal"},
	    {"gpu-a", "uid.-1", "5", NULL, DRAKE_EINVAL, 0, 0, "its wave is not a decimal"},
	    {"gpu-a", "uid.99999999999999999999", "5", NULL, DRAKE_EINVAL, 0, 0,
	     "its wave is beyond"},
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
		struct ext_member m;
		char why[256] = "";
		drake_err e = ext_member_of(&pod, &m, why, sizeof(why));
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
	struct ext_member m = {
	    .planned_node = "gpu-b", .gang = "uid.1", .job = "mnist", .size = 2, .min = 2};
	enum ext_verdict v[3];
	const char *why[3];
	char buf[256];
	ext_member_filter(&m, &pod, &args, v, why, buf, sizeof(buf));
	assert_int_equal(v[0], EXT_FAIL_UNRESOLVABLE);
	assert_int_equal(v[1], EXT_PASS);
	assert_int_equal(v[2], EXT_FAIL_UNRESOLVABLE);
	assert_string_equal(why[0], "job ml/mnist: gang uid.1 reserves gpu-b for mnist-worker-1");
	int64_t s[3];
	ext_member_prioritize(&m, &args, s);
	assert_int_equal(s[0], 0);
	assert_int_equal(s[1], EXT_MAX_SCORE);
	assert_int_equal(s[2], 0);
}

static void test_filter_without_the_planned_node_rejects_all_and_says_why(void **state)
{
	char *names[] = {"gpu-a", "gpu-c"};
	struct ext_args args = {.node_cache_mode = true, .n_nodes = 2, .node_names = names};
	struct ext_pod pod = pod_with(NULL, 0);
	struct ext_member m = {
	    .planned_node = "gpu-b", .gang = "uid.1", .job = "mnist", .size = 2, .min = 2};
	enum ext_verdict v[2];
	const char *why[2];
	char buf[256];
	ext_member_filter(&m, &pod, &args, v, why, buf, sizeof(buf));
	assert_int_equal(v[0], EXT_FAIL_UNRESOLVABLE);
	assert_int_equal(v[1], EXT_FAIL_UNRESOLVABLE);
	assert_non_null(
	    strstr(why[1], "planned node gpu-b for mnist-worker-1 is not feasible now"));
}

static void test_roles_minimums_and_owner_are_read_with_the_legacy_fallbacks(void **state)
{
	const struct {
		const char *name;
		const char *role_ann, *type_label, *min_roles;
		drake_err want;
		int role;
		bool has_min_roles;
		const char *why;
	} cases[] = {
	    {"drake.dev/role names the role", "ps", "worker", "ps=1,chief=1,worker=2", DRAKE_OK,
	     DRAKE_ROLE_PS, true, NULL},
	    {"a pod of an older drake takes its role from the replica-type label", NULL, "worker",
	     NULL, DRAKE_OK, DRAKE_ROLE_WORKER, false, NULL},
	    {"Kubeflow's master is a chief", NULL, "master", NULL, DRAKE_OK, DRAKE_ROLE_CHIEF,
	     false, NULL},
	    {"an evaluator has no gang role", NULL, "evaluator", NULL, DRAKE_OK, -1, false, NULL},
	    {"a pod with neither has no role", NULL, NULL, NULL, DRAKE_OK, -1, false, NULL},
	    {"an unknown drake.dev/role is refused", "boss", NULL, NULL, DRAKE_EINVAL, -1, false,
	     "drake.dev/role must be ps, chief or worker"},
	    {"a malformed per-role minimum is refused", "ps", NULL, "ps=1,chief=1", DRAKE_EINVAL,
	     -1, false,
	     "drake.dev/gang-min-roles: per-role minimum \"ps=1,chief=1\": worker "
	     "missing"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ext_label ann[6] = {{DRAKE_ANNOTATION_PLANNED_NODE, "gpu-a"},
		                           {DRAKE_ANNOTATION_GANG, "job-uid.1"},
		                           {DRAKE_ANNOTATION_GANG_SIZE, "5"}};
		size_t n = 3;
		if (cases[i].role_ann)
			ann[n++] =
			    (struct ext_label){DRAKE_ANNOTATION_ROLE, (char *)cases[i].role_ann};
		if (cases[i].min_roles)
			ann[n++] = (struct ext_label){DRAKE_ANNOTATION_GANG_ROLES,
			                              (char *)cases[i].min_roles};
		struct ext_label labels[2] = {{DRAKE_LABEL_JOB_NAME, "mnist"},
		                              {JOB_LABEL_TYPE, (char *)cases[i].type_label}};
		struct ext_pod pod = pod_with(ann, n);
		pod.owner_uid = "job-uid";
		pod.labels = labels;
		pod.n_labels = cases[i].type_label ? 2 : 1;
		struct ext_member m;
		char why[256] = "";
		drake_err e = ext_member_of(&pod, &m, why, sizeof(why));
		if (e != cases[i].want || (cases[i].why && !strstr(why, cases[i].why)))
			fail_msg("%s: got %d \"%s\"", cases[i].name, e, why);
		if (e)
			continue;
		if (m.role != cases[i].role || m.has_min_roles != cases[i].has_min_roles)
			fail_msg("%s: role %d min_roles %d", cases[i].name, m.role,
			         m.has_min_roles);
		assert_string_equal(m.owner_uid, "job-uid");
		assert_string_equal(m.ns, "ml");
		assert_string_equal(m.name, "mnist-worker-1");
		if (m.has_min_roles)
			assert_int_equal(m.min_roles.n[DRAKE_ROLE_WORKER], 2);
	}
}

static void test_only_a_real_member_of_the_wave_passes_the_check(void **state)
{
	const struct {
		const char *name;
		const char *pod, *ns, *owner, *job;
		int role;
		const char *wave_ns;
		const char *why; /* NULL: a member */
	} cases[] = {
	    {"the PS of the job is a member", "mnist-ps-0", "ml", "job-uid", "mnist", DRAKE_ROLE_PS,
	     "ml", NULL},
	    {"a worker above the wave's size is still named like a member", "mnist-worker-17", "ml",
	     "job-uid", "mnist", DRAKE_ROLE_WORKER, "ml", NULL},
	    {"a chief may be named master", "mnist-master-0", "ml", "job-uid", "mnist",
	     DRAKE_ROLE_CHIEF, NULL, NULL},
	    {"a pod in another namespace is refused", "mnist-worker-0", "other", "job-uid", "mnist",
	     DRAKE_ROLE_WORKER, "ml", "is in namespace other, but gang job-uid.1 waits in ml"},
	    {"a pod owned by another object is refused", "mnist-worker-0", "ml", "someone-else",
	     "mnist", DRAKE_ROLE_WORKER, "ml", "is owned by someone-else, not by the job job-uid"},
	    {"a copy without an owner is refused", "mnist-worker-0-debug", "ml", "", "mnist",
	     DRAKE_ROLE_WORKER, "ml", "has no controller owner"},
	    {"a copy with the owner but another name is refused", "mnist-worker-0-debug", "ml",
	     "job-uid", "mnist", DRAKE_ROLE_WORKER, "ml", "is not named like the worker of job"},
	    {"a worker named like a PS is refused", "mnist-ps-0", "ml", "job-uid", "mnist",
	     DRAKE_ROLE_WORKER, "ml", "(mnist-worker-<index>)"},
	    {"a pod of another job's name is refused", "other-worker-0", "ml", "job-uid", "mnist",
	     DRAKE_ROLE_WORKER, "ml", "not named like"},
	    {"an index with a leading zero is refused", "mnist-worker-01", "ml", "job-uid", "mnist",
	     DRAKE_ROLE_WORKER, "ml", "not named like"},
	    {"an index that is not a number is refused", "mnist-worker-x", "ml", "job-uid", "mnist",
	     DRAKE_ROLE_WORKER, "ml", "not named like"},
	    {"a pod without a job-name label is refused", "mnist-worker-0", "ml", "job-uid", "",
	     DRAKE_ROLE_WORKER, "ml", "not named like"},
	    {"a pod without a role is refused", "mnist-worker-0", "ml", "job-uid", "mnist", -1,
	     "ml", "has no role"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ext_member m = {.planned_node = "gpu-a",
		                       .gang = "job-uid.1",
		                       .job = cases[i].job,
		                       .size = 3,
		                       .role = cases[i].role,
		                       .ns = cases[i].ns,
		                       .name = cases[i].pod,
		                       .owner_uid = cases[i].owner};
		char why[256] = "";
		drake_err e = ext_member_check(&m, cases[i].wave_ns, why, sizeof(why));
		if (cases[i].why ? (e != DRAKE_EINVAL || !strstr(why, cases[i].why))
		                 : e != DRAKE_OK)
			fail_msg("%s: got %d \"%s\"", cases[i].name, e, why);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_plans_are_read_and_malformed_ones_refused),
	    cmocka_unit_test(test_filter_passes_only_the_planned_node),
	    cmocka_unit_test(test_filter_without_the_planned_node_rejects_all_and_says_why),
	    cmocka_unit_test(test_roles_minimums_and_owner_are_read_with_the_legacy_fallbacks),
	    cmocka_unit_test(test_only_a_real_member_of_the_wave_passes_the_check),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
