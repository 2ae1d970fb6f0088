/*
 * wave_room_test.c - a wave admitted into room its round frees waits for
 * exactly the pods the round deleted on its own nodes, and for them only
 * while kube-scheduler still charges them there.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reconciler/admit_testutil.h"
#include "reconciler/wave_room.h"

/* A wave of job b: worker i on nodes[i]. */
static struct admit_wave wave_on(const char *const *nodes, int n, struct admit_pod *pods)
{
	struct admit_wave w = {.ns = "ml", .job = "b", .gang = "uid-b.1", .size = n, .n_pods = n};
	for (int i = 0; i < n; i++) {
		memset(&pods[i], 0, sizeof(pods[i]));
		snprintf(pods[i].name, sizeof(pods[i].name), "b-worker-%d", i);
		snprintf(pods[i].node, sizeof(pods[i].node), "%s", nodes[i]);
	}
	w.pods = pods;
	return w;
}

/* Deletes job a's bound workers 0..n-1 (on nodes[i]) as a round would,
 * listing them in left. */
static void delete_workers(struct world *w, const char *const *nodes, int n, struct room_list *left)
{
	for (int i = 0; i < n; i++) {
		pod_meta(w, "a", "worker", i, 1, NULL, nodes[i], 2, "");
		char name[32];
		snprintf(name, sizeof(name), "a-worker-%d", i);
		assert_true(room_list_add(left, kube_pods_get(&w->pods, "ml", name)));
	}
}

static void test_a_wave_waits_for_the_deleted_pods_on_its_own_nodes_only(void **state)
{
	struct world w;
	world_init(&w);
	struct room_list left = {0};
	delete_workers(&w, (const char *const[]){"n1", "n2", "n3"}, 3, &left);
	/* a gated pod is on no node: it holds no room and is not listed */
	pod(&w, "a", "worker", 7, 1, NULL, NULL);
	assert_true(room_list_add(&left, kube_pods_get(&w.pods, "ml", "a-worker-7")));
	assert_int_equal(left.n, 3);

	struct admit_pod pods[2];
	struct admit_wave wv = wave_on((const char *const[]){"n1", "n3"}, 2, pods);
	struct room_pod *waits;
	assert_int_equal(wave_room_waits(&wv, &left, &waits), 2);
	assert_string_equal(waits[0].name, "a-worker-0");
	assert_string_equal(waits[1].name, "a-worker-2");
	assert_string_equal(waits[1].node, "n3");
	assert_string_equal(waits[1].uid, "p-a-worker-2");
	free(waits);

	/* a wave elsewhere goes at once */
	struct admit_wave other = wave_on((const char *const[]){"n4"}, 1, pods);
	assert_int_equal(wave_room_waits(&other, &left, &waits), 0);
	assert_null(waits);
	room_list_release(&left);
	world_release(&w);
}

static void test_the_room_is_free_once_each_pod_is_gone_replaced_or_finished(void **state)
{
	struct world w;
	world_init(&w);
	struct room_list left = {0};
	delete_workers(&w, (const char *const[]){"n1", "n1", "n1"}, 3, &left);
	assert_false(wave_room_free(&w.pods, left.v, left.n));

	/* still charged while it terminates: deletionTimestamp set, on n1 */
	pod_meta(&w, "a", "worker", 0, 1, NULL, "n1", 2,
	         ",\"deletionTimestamp\":\"2026-01-01T00:00:30Z\"");
	assert_false(wave_room_free(&w.pods, left.v, left.n));
	/* worker 0 gone from the cache */
	kube_cache_drop(&w.pods, kube_cache_remove(&w.pods, "ml", "a-worker-0"));
	assert_false(wave_room_free(&w.pods, left.v, 3));
	/* worker 1 replaced: another pod of that name (another uid), even one
	 * bound to the same node, is not the pod the round deleted */
	put(&w.pods, "{\"metadata\":{\"name\":\"a-worker-1\",\"namespace\":\"ml\",\"uid\":\"new\"},"
	             "\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"name\":\"t\"}]},"
	             "\"status\":{\"phase\":\"Running\"}}");
	assert_false(wave_room_free(&w.pods, left.v, 3));
	/* worker 2 ended: kube-scheduler no longer counts a finished pod */
	put(&w.pods, "{\"metadata\":{\"name\":\"a-worker-2\",\"namespace\":\"ml\","
	             "\"uid\":\"p-a-worker-2\"},\"spec\":{\"nodeName\":\"n1\","
	             "\"containers\":[{\"name\":\"t\"}]},\"status\":{\"phase\":\"Succeeded\"}}");
	assert_true(wave_room_free(&w.pods, left.v, 3));
	assert_true(wave_room_free(&w.pods, NULL, 0));
	room_list_release(&left);
	world_release(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_a_wave_waits_for_the_deleted_pods_on_its_own_nodes_only),
	    cmocka_unit_test(test_the_room_is_free_once_each_pod_is_gone_replaced_or_finished),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
