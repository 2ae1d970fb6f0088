/*
 * admit_nodes_test.c - admission plans a gang only onto nodes its
 * templates' node selector, required node affinity and tolerations allow,
 * as kube-scheduler would (gang/nodefit.h), and says why when none does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reconciler/admit_testutil.h"

/* An 8-GPU node with a pool label and, when taint is not NULL, a taint
 * "<taint>=yes:NoSchedule". */
static void labelled_node(struct world *w, const char *name, const char *pool, const char *taint)
{
	char b[1024], taints[160] = "";
	if (taint)
		snprintf(
		    taints, sizeof(taints),
		    "\"taints\":[{\"key\":\"%s\",\"value\":\"yes\",\"effect\":\"NoSchedule\"}]",
		    taint);
	snprintf(b, sizeof(b),
	         "{\"metadata\":{\"name\":\"%s\",\"uid\":\"n-%s\",\"labels\":{\"pool\":\"%s\","
	         "\"kubernetes.io/hostname\":\"%s\"}},\"spec\":{%s},\"status\":{\"allocatable\":{"
	         "\"cpu\":\"32\",\"memory\":\"256Gi\",\"nvidia.com/gpu\":\"8\",\"pods\":\"110\"}}}",
	         name, name, pool, name, taints);
	put(&w->nodes, b);
}

/* A job of a PS and `workers` one-GPU workers whose templates carry
 * `rules` (",\"nodeSelector\":{...}" and the like) in their specs. */
static void ruled_job(struct world *w, const char *name, int workers, const char *rules)
{
	char b[4096];
	snprintf(b, sizeof(b),
	         "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":"
	         "\"%s\",\"namespace\":\"ml\",\"uid\":\"uid-%s\",\"creationTimestamp\":"
	         "\"2026-11-22T10:00:00Z\"},\"spec\":{\"tfReplicaSpecs\":{\"PS\":{\"replicas\":1,"
	         "\"template\":{\"spec\":{\"containers\":[{\"name\":\"tensorflow\",\"resources\":{"
	         "\"limits\":{\"cpu\":\"1\"}}}]%s}}},\"Worker\":{\"replicas\":%d,\"template\":{"
	         "\"spec\":{\"containers\":[{\"name\":\"tensorflow\",\"resources\":{\"limits\":{"
	         "\"cpu\":\"1\",\"nvidia.com/gpu\":\"1\"}}}]%s}}}}}}",
	         name, name, rules, workers, rules);
	put(&w->jobs, b);
	pod(w, name, "ps", 0, 0, NULL, NULL);
	for (int i = 0; i < workers; i++)
		pod(w, name, "worker", i, 1, NULL, NULL);
}

static void three_nodes(struct world *w)
{
	labelled_node(w, "a", "cpu", NULL);
	labelled_node(w, "b", "train", NULL);
	labelled_node(w, "c", "train", "reserved");
}

static void plan_of(const char *rules, const char *want_node, const char *why_has)
{
	struct world w;
	world_init(&w);
	three_nodes(&w);
	ruled_job(&w, "j", 2, rules);
	struct admit_result res;
	round_of(&w, true, &res);
	if (want_node) {
		assert_int_equal(res.n_waves, 1);
		for (int i = 0; i < res.waves[0].n_pods; i++)
			if (strcmp(res.waves[0].pods[i].node, want_node) != 0)
				fail_msg("%s: %s planned on %s, want %s", rules,
				         res.waves[0].pods[i].name, res.waves[0].pods[i].node,
				         want_node);
	} else {
		assert_int_equal(res.n_waves, 0);
		assert_int_equal(res.n_waiting, 1);
		if (!why_has || !strstr(res.waiting[0].why, why_has))
			fail_msg("%s: waits for \"%s\", want \"%s\"", rules, res.waiting[0].why,
			         why_has);
	}
	admit_result_release(&res);
	world_release(&w);
}

static void test_a_node_selector_keeps_the_gang_to_the_nodes_it_matches(void **state)
{
	plan_of(",\"nodeSelector\":{\"pool\":\"train\"}", "b", NULL);
	plan_of(",\"nodeSelector\":{\"pool\":\"gpu\"}", NULL,
	        "no schedulable node matches the node selector and required affinity of the PS");
}

static void test_a_required_node_affinity_keeps_the_gang_to_the_nodes_it_matches(void **state)
{
	plan_of(
	    ",\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
	    "{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"pool\",\"operator\":"
	    "\"NotIn\",\"values\":[\"train\"]}]}]}}}",
	    "a", NULL);
	plan_of(
	    ",\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
	    "{\"nodeSelectorTerms\":[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":"
	    "\"In\",\"values\":[\"b\"]}]}]}}}",
	    "b", NULL);
}

static void test_a_tainted_node_takes_only_a_gang_that_tolerates_its_taint(void **state)
{
	/* c is tainted: only a tolerating gang goes there */
	plan_of(",\"nodeSelector\":{\"kubernetes.io/hostname\":\"c\"}", NULL,
	        "has only taints they tolerate");
	plan_of(",\"nodeSelector\":{\"kubernetes.io/hostname\":\"c\"},\"tolerations\":[{\"key\":"
	        "\"reserved\",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}]",
	        "c", NULL);
	/* without rules a gang never goes to c, as before */
	struct world w;
	world_init(&w);
	labelled_node(&w, "c", "train", "reserved");
	ruled_job(&w, "j", 2, "");
	struct admit_result res;
	round_of(&w, true, &res);
	assert_int_equal(res.n_waves, 0);
	admit_result_release(&res);
	world_release(&w);
}

static void
test_room_on_a_tolerated_tainted_node_counts_though_the_cluster_sums_leave_it_out(void **state)
{
	/* a has 2 GPUs free, c (tainted) 8: the sums over schedulable nodes
	 * say 2 GPUs, yet a job tolerating c's taint fits there */
	struct world w;
	world_init(&w);
	labelled_node(&w, "a", "train", NULL);
	labelled_node(&w, "c", "train", "reserved");
	job(&w, "hog", "2026-11-22T09:00:00Z", 1, 1, 6);
	pod(&w, "hog", "ps", 0, 0, "a", "a");
	pod(&w, "hog", "worker", 0, 6, "a", "a");
	ruled_job(&w, "j", 4, ",\"tolerations\":[{\"key\":\"reserved\",\"operator\":\"Exists\"}]");
	struct admit_result res;
	round_of(&w, true, &res);
	assert_int_equal(res.n_waves, 1);
	assert_string_equal(res.waves[0].job, "j");
	for (int i = 0; i < res.waves[0].n_pods; i++)
		assert_string_equal(res.waves[0].pods[i].node, "c");
	admit_result_release(&res);
	world_release(&w);
}

static void test_a_malformed_requirement_makes_the_job_invalid_naming_it(void **state)
{
	struct world w;
	world_init(&w);
	three_nodes(&w);
	ruled_job(
	    &w, "j", 1,
	    ",\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
	    "{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"pool\",\"operator\":"
	    "\"Near\"}]}]}}}");
	struct admit_result res;
	round_of(&w, true, &res);
	assert_int_equal(res.n_waves, 0);
	assert_int_equal(res.n_waiting, 1);
	assert_int_equal(res.waiting[0].status, DRAKE_ADMIT_INVALID);
	assert_non_null(strstr(res.waiting[0].why,
	                       "tfReplicaSpecs.PS: node affinity: a requirement "
	                       "needs a key and an operator of In"));
	admit_result_release(&res);
	world_release(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_a_node_selector_keeps_the_gang_to_the_nodes_it_matches),
	    cmocka_unit_test(test_a_required_node_affinity_keeps_the_gang_to_the_nodes_it_matches),
	    cmocka_unit_test(test_a_tainted_node_takes_only_a_gang_that_tolerates_its_taint),
	    cmocka_unit_test(test_a_malformed_requirement_makes_the_job_invalid_naming_it),
	    cmocka_unit_test(
	        test_room_on_a_tolerated_tainted_node_counts_though_the_cluster_sums_leave_it_out),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
