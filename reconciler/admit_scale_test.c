/* admit_scale_test.c - scaling in admission rounds: a running job's members
 * come from drake.dev/scale, a starving job's round returns the record and
 * the pods to delete, a grown job's record names where its new workers go
 * and the next round puts them there, and a record that does not fit its
 * job is ignored with why. */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gang/round.h"
#include "kind/registry.h"
#include "kube/cache.h"
#include "reconciler/admit.h"
#include "reconciler/admit_testutil.h"

/* A DRAGON-layout TFJob with replicas workers (1 GPU each) between min and
 * max, and optionally a drake.dev/scale record (a JSON string). */
static void elastic(struct world *w, const char *name, const char *created, int replicas, int min,
                    int max, const char *record)
{
	json_t *o = json_pack(
	    "{s:s,s:s,s:{s:s,s:s,s:s,s:s,s:s},s:{s:i,s:i,s:{s:{s:i,s:{s:{s:[{s:s,s:s,s:{s:{s:s,s:s}"
	    "}}]}}},"
	    "s:{s:i,s:{s:{s:[{s:s,s:s,s:{s:{s:s,s:s,s:s}}}]}}}}}}",
	    "apiVersion", "kubeflow.org/v1", "kind", "TFJob", "metadata", "name", name, "namespace",
	    "ml", "uid", "", "resourceVersion", "1", "creationTimestamp", created, "spec",
	    "min-instances", min, "max-instances", max, "tfReplicaSpecs", "PS", "replicas", 1,
	    "template", "spec", "containers", "name", "tensorflow", "image", "tf", "resources",
	    "limits", "cpu", "1", "memory", "1Gi", "Worker", "replicas", replicas, "template",
	    "spec", "containers", "name", "tensorflow", "image", "tf", "resources", "limits", "cpu",
	    "1", "memory", "1Gi", "nvidia.com/gpu", "1");
	assert_non_null(o);
	char uid[64];
	snprintf(uid, sizeof(uid), "uid-%s", name);
	json_object_set_new(json_object_get(o, "metadata"), "uid", json_string(uid));
	if (record)
		json_object_set_new(json_object_get(o, "metadata"), "annotations",
		                    json_pack("{s:s}", "drake.dev/scale", record));
	char *text = json_dumps(o, JSON_COMPACT);
	put(&w->jobs, text);
	free(text);
	json_decref(o);
}

/* A running job: its PS and workers [0, placed) on node, in one wave of
 * 1 + placed pods; workers [placed, max) gated. */
static void running(struct world *w, const char *name, int placed, int max, const char *node)
{
	pod_in(w, name, "ps", 0, 0, node, node, 1 + placed);
	for (int i = 0; i < max; i++)
		if (i < placed)
			pod_in(w, name, "worker", i, 1, node, node, 1 + placed);
		else
			pod(w, name, "worker", i, 1, NULL, NULL);
}

static const struct admit_scale *scale_of(const struct admit_result *r, const char *job)
{
	for (size_t i = 0; i < r->n_scales; i++)
		if (!strcmp(r->scales[i].job, job))
			return &r->scales[i];
	return NULL;
}

/* A starving job: created long before now, a PS and 4 workers of 1 GPU. */
static void late(struct world *w)
{
	elastic(w, "late", "2023-11-14T22:10:00Z", 4, 4, 4, NULL);
	for (int i = 0; i < 4; i++)
		pod(w, "late", "worker", i, 1, NULL, NULL);
	pod(w, "late", "ps", 0, 0, NULL, NULL);
}

static void test_a_starving_job_gets_workers_highest_index_first_and_the_record_says_so(void **s)
{
	struct world w;
	world_init(&w);
	node(&w, "gpu-a", 8);
	elastic(&w, "run", "2023-11-14T22:00:00Z", 6, 2, 6, NULL);
	running(&w, "run", 6, 6, "gpu-a"); /* 6 of 8 GPUs */
	late(&w);                          /* starving; needs 4 GPUs, 2 are free */
	struct admit_result res;
	round_of(&w, true, &res);
	const struct admit_scale *sc = scale_of(&res, "run");
	assert_non_null(sc);
	assert_false(sc->grow);
	assert_int_equal(sc->n, 2);
	assert_string_equal(sc->pods[0], "run-worker-5");
	assert_string_equal(sc->pods[1], "run-worker-4");
	assert_non_null(strstr(sc->value, "\"for\":\"ml/late\""));
	assert_non_null(strstr(sc->value, "\"workers\":[0,1,2,3]"));
	assert_non_null(strstr(sc->patch, "drake.dev/scale"));
	assert_non_null(strstr(sc->why, "gave 2 workers to ml/late"));
	/* and late starts in the same round, on the GPUs given */
	assert_int_equal(res.n_waves, 1);
	assert_string_equal(res.waves[0].job, "late");
	assert_string_equal(res.waves[0].pods[0].node, "gpu-a");
	admit_result_release(&res);
	world_release(&w);
}

static void test_nobody_gives_workers_while_a_deleted_worker_still_holds_its_gpu(void **s)
{
	struct world w;
	world_init(&w);
	node(&w, "gpu-a", 8);
	elastic(&w, "run", "2023-11-14T22:00:00Z", 5, 2, 6,
	        "{\"gang\":\"uid-run.1\",\"workers\":[0,1,2,3,4]}");
	running(&w, "run", 5, 6, "gpu-a");
	/* worker 5, deleted, still on gpu-a: 6 of 8 GPUs held */
	pod_meta(&w, "run", "worker", 5, 1, "gpu-a", "gpu-a", 6,
	         ",\"deletionTimestamp\":\"2023-11-14T22:20:00Z\"");
	late(&w);
	struct admit_result res;
	round_of(&w, true, &res);
	assert_int_equal(res.n_scales, 0);
	assert_int_equal(res.n_waves, 0);
	admit_result_release(&res);
	/* due to be gone 13 minutes ago: stuck, it holds nothing back */
	pod_meta(&w, "run", "worker", 5, 1, "gpu-a", "gpu-a", 6,
	         ",\"deletionTimestamp\":\"2023-11-14T22:00:00Z\"");
	round_of(&w, true, &res);
	assert_non_null(scale_of(&res, "run"));
	admit_result_release(&res);
	/* once it is gone, late takes workers (2 free, 2 given) */
	kube_cache_drop(&w.pods, kube_cache_remove(&w.pods, "ml", "run-worker-5"));
	round_of(&w, true, &res);
	assert_non_null(scale_of(&res, "run"));
	assert_int_equal(res.n_waves, 1);
	admit_result_release(&res);
	world_release(&w);
}

static void test_the_record_decides_members_gated_others_wait_and_strays_go(void **s)
{
	struct world w;
	world_init(&w);
	node(&w, "gpu-a", 8);
	/* asks 2 workers, ran 3, then shrunk to [0,1] (so it does not grow
	 * back: it is at its size); worker 2's deletion was lost, worker 3
	 * never joined */
	elastic(&w, "run", "2023-11-14T22:00:00Z", 2, 1, 4,
	        "{\"workers\":[0,1],\"at\":1700000000,\"gang\":\"uid-run.1\"}");
	running(&w, "run", 3, 4, "gpu-a");
	struct admit_result res;
	round_of(&w, true, &res);
	assert_int_equal(res.n_waves, 0); /* worker 3 is no member: not repaired */
	const struct admit_scale *sc = scale_of(&res, "run");
	assert_non_null(sc);
	assert_null(sc->patch); /* only a deletion */
	assert_int_equal(sc->n, 1);
	assert_string_equal(sc->pods[0], "run-worker-2");
	assert_int_equal(res.n_running, 1);
	assert_int_equal(res.running[0].workers, 2);
	assert_string_equal(res.running[0].uid, "uid-run"); /* GET /v1/jobs finds its progress */
	admit_result_release(&res);
	world_release(&w);
}

/* GET /v1/jobs: a running job's latest progress report, with its class,
 * only when one came. */
static void test_jobs_json_shows_a_running_jobs_progress_class(void **s)
{
	struct admit_running run[2] = {
	    {.key = "ml/a", .workers = 2, .min = 1, .max = 4, .last_scaled = 1700000000},
	    {.key = "ml/b", .workers = 1, .min = 1, .max = 1, .last_scaled = 1700000001},
	};
	run[0].progress = "converged";
	run[0].step = 3400;
	run[0].value = 0.96875;
	char *out = admit_waiting_json(NULL, 0, NULL, run, 2);
	assert_non_null(out);
	json_error_t err;
	json_t *root = json_loads(out, 0, &err);
	assert_non_null(root);
	json_t *a = json_array_get(json_object_get(root, "running"), 0);
	json_t *p = json_object_get(a, "progress");
	assert_string_equal(json_string_value(json_object_get(p, "class")), "converged");
	assert_int_equal(json_integer_value(json_object_get(p, "step")), 3400);
	assert_true(json_real_value(json_object_get(p, "value")) == 0.96875);
	json_t *b = json_array_get(json_object_get(root, "running"), 1);
	assert_non_null(b);
	assert_null(json_object_get(b, "progress")); /* none reported */
	json_decref(root);
	free(out);
}

static void test_growth_records_where_then_the_next_round_puts_them_there(void **s)
{
	struct world w;
	world_init(&w);
	node(&w, "gpu-a", 8);
	node(&w, "gpu-b", 8);
	/* admitted at 1 (its wave id), long idle: grows into gpu-a's room */
	elastic(&w, "run", "2023-11-14T22:00:00Z", 2, 1, 4, NULL);
	running(&w, "run", 2, 4, "gpu-a");
	struct admit_result res;
	round_of(&w, true, &res);
	const struct admit_scale *sc = scale_of(&res, "run");
	assert_non_null(sc);
	assert_true(sc->grow);
	assert_int_equal(sc->n, 2);
	assert_non_null(strstr(sc->value, "\"workers\":[0,1,2,3]"));
	assert_non_null(strstr(sc->value, "\"place\":{\"2\":\"gpu-a\",\"3\":\"gpu-a\"}"));
	assert_non_null(strstr(sc->value, "\"gang\":\"uid-run.1\""));
	assert_int_equal(res.n_waves, 0);
	admit_result_release(&res);
	/* a record that placed them on gpu-b lands (the planner alone would
	 * pick gpu-a, beside the PS): the members that wait are ungated where
	 * it says, joining the job's wave, now of 5 */
	elastic(&w, "run", "2023-11-14T22:00:00Z", 2, 1, 4,
	        "{\"at\":1700000000,\"gang\":\"uid-run.1\",\"place\":{\"2\":\"gpu-b\","
	        "\"3\":\"gpu-b\"},\"workers\":[0,1,2,3]}");
	round_of(&w, true, &res);
	assert_int_equal(res.n_waves, 1);
	assert_string_equal(res.waves[0].gang, "uid-run.1");
	assert_int_equal(res.waves[0].size, 5);
	assert_int_equal(res.waves[0].n_pods, 2);
	assert_string_equal(res.waves[0].pods[0].name, "run-worker-2");
	assert_string_equal(res.waves[0].pods[0].node, "gpu-b");
	assert_string_equal(res.waves[0].pods[1].node, "gpu-b");
	assert_null(scale_of(&res, "run")); /* it just grew: no new decision */
	admit_result_release(&res);
	world_release(&w);
}

/* A job rolled back and admitted again keeps its old record on the TFJob
 * until it scales: the record names the earlier wave and is ignored, the
 * new wave's workers are the members. */
static void test_the_record_of_an_earlier_wave_is_ignored(void **s)
{
	struct world w;
	world_init(&w);
	node(&w, "gpu-a", 8);
	elastic(&w, "run", "2023-11-14T22:00:00Z", 3, 1, 3,
	        "{\"workers\":[0],\"at\":1600000000,\"gang\":\"uid-run.0\"}");
	running(&w, "run", 3, 3, "gpu-a"); /* wave uid-run.1 of 1 PS + 3 workers, at max */
	struct admit_result res;
	round_of(&w, true, &res);
	assert_int_equal(res.n_running, 1);
	assert_int_equal(res.running[0].workers, 3); /* not 1 */
	assert_null(scale_of(&res, "run"));          /* workers 1 and 2 are no strays */
	assert_int_equal(res.n_ignored, 0);
	admit_result_release(&res);
	world_release(&w);
}

static void test_a_record_that_does_not_fit_is_ignored_with_why(void **s)
{
	struct world w;
	world_init(&w);
	node(&w, "gpu-a", 8);
	/* forged: lists worker 9 of a job of at most 4 */
	elastic(&w, "run", "2023-11-14T22:00:00Z", 2, 1, 4, "{\"workers\":[0,1,9]}");
	running(&w, "run", 2, 4, "gpu-a");
	struct admit_result res;
	round_of(&w, true, &res);
	assert_int_equal(res.n_ignored, 1);
	assert_string_equal(res.ignored[0].job, "run");
	assert_non_null(strstr(res.ignored[0].why, "below max-instances"));
	/* without it the job's members are its wave's: 2 running, not 3 */
	assert_int_equal(res.n_running, 1);
	assert_int_equal(res.running[0].workers, 2);
	admit_result_release(&res);
	world_release(&w);
}

static struct drake_change_cost seen_cost;

static void observe_cost(void *arg, const char *key, struct drake_round_job *in)
{
	(void)arg;
	(void)key;
	seen_cost = in->cost;
}

/* The round input of a TFJob costs what drake-train was measured at
 * (kind/registry.h), or what the operator's --resize-cost says. */
static void test_a_jobs_round_input_carries_its_kinds_cost_of_a_change(void **state)
{
	(void)state;
	struct world w;
	world_init(&w);
	node(&w, "gpu-a", 8);
	gated_job(&w, "a", "2023-11-14T22:00:00Z", 2, 1, 1);
	struct job_resize_costs set;
	char msg[256];
	job_resize_costs_default(&set);
	assert_int_equal(job_resize_costs_parse("tfjobs=5s/7s", &set, msg, sizeof(msg)), DRAKE_OK);
	const struct job_resize_costs *costs[] = {NULL, &set};
	const struct drake_change_cost want[] = {{1.9, 2.3}, {5, 7}};
	for (int i = 0; i < 2; i++) {
		seen_cost = (struct drake_change_cost){0};
		struct admit_options o = {.backfill = true,
		                          .now_s = 1700000000,
		                          .observe = observe_cost,
		                          .resize_costs = costs[i]};
		struct admit_result res;
		assert_int_equal(
		    admit_round(TF_CACHES(&w.jobs), &w.pods, &w.nodes, &o, &res, msg, sizeof(msg)),
		    DRAKE_OK);
		assert_true(seen_cost.shrink == want[i].shrink && seen_cost.grow == want[i].grow);
		admit_result_release(&res);
	}
	world_release(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(
	        test_a_starving_job_gets_workers_highest_index_first_and_the_record_says_so),
	    cmocka_unit_test(test_nobody_gives_workers_while_a_deleted_worker_still_holds_its_gpu),
	    cmocka_unit_test(test_the_record_decides_members_gated_others_wait_and_strays_go),
	    cmocka_unit_test(test_growth_records_where_then_the_next_round_puts_them_there),
	    cmocka_unit_test(test_the_record_of_an_earlier_wave_is_ignored),
	    cmocka_unit_test(test_a_record_that_does_not_fit_is_ignored_with_why),
	    cmocka_unit_test(test_jobs_json_shows_a_running_jobs_progress_class),
	    cmocka_unit_test(test_a_jobs_round_input_carries_its_kinds_cost_of_a_change),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
