/*
 * admit_refusal_test.c - admission of jobs kube-scheduler refused: a job
 * backing off holds nothing and the queue behind it moves, it is tried
 * again when its backoff ends or something it may wait for changes, and a
 * job admitted with nothing bound is waiting, never running.
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
#include "kind/job.h"

#define NOW 1700000000L

/* job() with a drake.dev/unschedulable record of tries refusals, the last
 * at `at`, backing off until `until`. */
static void refused_job(struct world *w, const char *name, const char *created, int workers,
                        int gpu, int tries, long at, long until)
{
	job(w, name, created, workers, workers, gpu);
	json_t *o = json_deep_copy(kube_cache_get(&w->jobs, "ml", name));
	struct job_refusal r = {.tries = tries, .at_s = (double)at, .until_s = (double)until};
	snprintf(r.pod, sizeof(r.pod), "%s-worker-0", name);
	snprintf(r.why, sizeof(r.why),
	         "0/1 nodes are available: persistentvolumeclaim \"data\" not found.");
	char *v = job_refusal_value(&r);
	json_object_set_new(json_object_get(o, "metadata"), "annotations",
	                    json_pack("{s:s}", JOB_ANNOTATION_UNSCHEDULABLE, v));
	free(v);
	char *text = json_dumps(o, JSON_COMPACT);
	put(&w->jobs, text);
	free(text);
	json_decref(o);
	pod(w, name, "ps", 0, 0, NULL, NULL);
	for (int i = 0; i < workers; i++)
		pod(w, name, "worker", i, gpu, NULL, NULL);
}

static double changed_at;
static double changed(void *arg, const char *ns)
{
	assert_string_equal(ns, "ml");
	return changed_at;
}

static void round_at(struct world *w, struct admit_result *res)
{
	struct admit_options o = {.backfill = true, .now_s = NOW, .changed = changed};
	char msg[256];
	assert_int_equal(
	    admit_round(TF_CACHES(&w->jobs), &w->pods, &w->nodes, &o, res, msg, sizeof(msg)),
	    DRAKE_OK);
}

static const struct admit_waiting *waiting_of(const struct admit_result *res, const char *job)
{
	for (size_t i = 0; i < res->n_waiting; i++)
		if (!strcmp(res->waiting[i].job, job))
			return &res->waiting[i];
	return NULL;
}

static void test_a_job_backing_off_holds_nothing_and_the_next_job_gets_the_room(void **state)
{
	struct world w;
	world_init(&w);
	node(&w, "gpu-a", 8);
	refused_job(&w, "claimless", "2026-11-22T10:00:00Z", 2, 4, 2, NOW - 5, NOW + 15);
	gated_job(&w, "next", "2026-11-22T10:00:05Z", 2, 2, 4); /* the same 8 GPUs */
	changed_at = NOW - 10;                                  /* before the refusal */
	struct admit_result res;
	round_at(&w, &res);
	assert_int_equal(res.n_waves, 1);
	assert_string_equal(res.waves[0].job, "next");
	const struct admit_waiting *wt = waiting_of(&res, "claimless");
	assert_non_null(wt);
	assert_int_equal(wt->status, DRAKE_ADMIT_WAITING);
	assert_true(wt->quiet); /* the release's Event said it */
	assert_non_null(strstr(wt->why, "kube-scheduler cannot place claimless-worker-0: 0/1 "
	                                "nodes are available: persistentvolumeclaim \"data\" not "
	                                "found. (refused 2 times in a row; tried again in 15s"));
	assert_true(res.next == (double)(NOW + 15)); /* a round when the backoff ends */
	admit_result_release(&res);
	world_release(&w);
}

static void test_a_job_backing_off_is_tried_at_once_when_something_changed_after(void **state)
{
	for (int after = 0; after < 2; after++) {
		struct world w;
		world_init(&w);
		node(&w, "gpu-a", 8);
		refused_job(&w, "claimless", "2026-11-22T10:00:00Z", 2, 4, 1, NOW - 5, NOW + 15);
		changed_at = after ? NOW - 1 : NOW - 5;
		struct admit_result res;
		round_at(&w, &res);
		assert_int_equal(res.n_waves, after ? 1 : 0);
		if (after)
			assert_string_equal(res.waves[0].job, "claimless");
		admit_result_release(&res);
		world_release(&w);
	}
	/* and once its backoff is over, with nothing changed */
	struct world w;
	world_init(&w);
	node(&w, "gpu-a", 8);
	refused_job(&w, "claimless", "2026-11-22T10:00:00Z", 2, 4, 3, NOW - 40, NOW);
	changed_at = 0;
	struct admit_result res;
	round_at(&w, &res);
	assert_int_equal(res.n_waves, 1);
	admit_result_release(&res);
	world_release(&w);
}

static void test_a_job_admitted_with_nothing_bound_is_waiting_not_running(void **state)
{
	struct world w;
	world_init(&w);
	node(&w, "gpu-a", 8);
	job(&w, "admitted", "2026-11-22T09:00:00Z", 2, 2, 2);
	pod(&w, "admitted", "ps", 0, 0, "gpu-a", NULL);
	pod(&w, "admitted", "worker", 0, 2, "gpu-a", NULL);
	pod(&w, "admitted", "worker", 1, 2, "gpu-a", NULL);
	job(&w, "bound", "2026-11-22T09:00:01Z", 1, 1, 2);
	pod_in(&w, "bound", "ps", 0, 0, "gpu-a", "gpu-a", 2);
	pod_in(&w, "bound", "worker", 0, 2, "gpu-a", "gpu-a", 2);
	struct admit_result res;
	round_of(&w, true, &res);
	assert_int_equal(res.n_running, 1);
	assert_string_equal(res.running[0].key, "ml/bound");
	const struct admit_waiting *wt = waiting_of(&res, "admitted");
	assert_non_null(wt);
	assert_true(wt->quiet);
	assert_non_null(strstr(wt->why, "admitted as gang uid-admitted.1; its 3 members wait for "
	                                "kube-scheduler to bind them"));
	admit_result_release(&res);
	/* kube-scheduler's own words, once it reported one of them unschedulable */
	put(&w.pods,
	    "{\"metadata\":{\"name\":\"admitted-worker-1\",\"namespace\":\"ml\",\"uid\":\"p-a-w1\","
	    "\"ownerReferences\":[{\"kind\":\"TFJob\",\"name\":\"admitted\",\"uid\":"
	    "\"uid-admitted\",\"controller\":true}],\"annotations\":{\"drake.dev/planned-node\":"
	    "\"gpu-a\",\"drake.dev/gang\":\"uid-admitted.1\",\"drake.dev/gang-size\":\"3\"}},"
	    "\"spec\":{\"containers\":[{\"name\":\"tensorflow\",\"resources\":{\"limits\":{"
	    "\"nvidia.com/gpu\":\"2\"}}}]},\"status\":{\"phase\":\"Pending\",\"conditions\":[{"
	    "\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":\"Unschedulable\","
	    "\"message\":\"0/1 nodes are available: 1 node(s) didn't have free ports for the "
	    "requested pod ports. preemption: 0/1 nodes are available: 1 Preemption is not "
	    "helpful for scheduling.\"}]}}");
	round_of(&w, true, &res);
	wt = waiting_of(&res, "admitted");
	assert_non_null(wt);
	assert_non_null(strstr(wt->why, "kube-scheduler has not placed admitted-worker-1: 0/1 "
	                                "nodes are available: 1 node(s) didn't have free ports "
	                                "for the requested pod ports."));
	assert_null(strstr(wt->why, "preemption"));
	admit_result_release(&res);
	world_release(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_a_job_backing_off_holds_nothing_and_the_next_job_gets_the_room),
	    cmocka_unit_test(test_a_job_backing_off_is_tried_at_once_when_something_changed_after),
	    cmocka_unit_test(test_a_job_admitted_with_nothing_bound_is_waiting_not_running),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
