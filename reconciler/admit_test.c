/* admit_test.c - admission rounds over caches built from API objects: who
 * starts, where, with which gang annotations, and what the others wait for. */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/cache.h"
#include "reconciler/admit.h"
#include "reconciler/admit_testutil.h"

static void test_the_first_job_starts_whole_on_one_node_and_the_next_waits(void **state)
{
	struct world w;
	world_init(&w);
	node(&w, "gpu-a", 8);
	node(&w, "gpu-b", 8);
	gated_job(&w, "first", "2026-11-22T10:00:00Z", 7, 2, 1);  /* 1 PS + 7 x 1 GPU */
	gated_job(&w, "second", "2026-11-22T10:00:05Z", 4, 4, 4); /* 16 GPUs: after first, no */
	struct admit_result res;
	fifo_round_of(&w, &res); /* the pack queue would start second: it fills both nodes */
	assert_int_equal(res.n_waves, 1);
	struct admit_wave *wv = &res.waves[0];
	assert_string_equal(wv->job, "first");
	assert_string_equal(wv->gang, "uid-first.1700000000");
	assert_int_equal(wv->size, 8);
	assert_int_equal(wv->min, 3); /* PS + min-instances */
	for (int i = 0; i < wv->size; i++)
		assert_string_equal(wv->pods[i].node, wv->pods[0].node); /* one node */
	assert_string_equal(wv->pods[0].name, "first-ps-0");
	assert_string_equal(wv->pods[7].name, "first-worker-6");
	assert_int_equal(res.n_waiting, 1);
	assert_string_equal(res.waiting[0].job, "second");
	assert_int_equal(res.waiting[0].status, DRAKE_ADMIT_WAITING);
	assert_true(strlen(res.waiting[0].why) > 0);
	admit_result_release(&res);
	world_release(&w);
}

static void
test_planned_and_bound_pods_take_capacity_and_their_jobs_are_not_readmitted(void **state)
{
	struct world w;
	world_init(&w);
	node(&w, "gpu-a", 8);
	job(&w, "running", "2026-11-22T09:00:00Z", 2, 2, 2);
	pod(&w, "running", "ps", 0, 0, "gpu-a", "gpu-a");
	pod(&w, "running", "worker", 0, 2, "gpu-a", "gpu-a");   /* bound */
	pod(&w, "running", "worker", 1, 2, "gpu-a", NULL);      /* planned, not bound yet */
	gated_job(&w, "next", "2026-11-22T10:00:00Z", 2, 2, 2); /* 4 GPUs: exactly what is left */
	gated_job(&w, "last", "2026-11-22T10:00:01Z", 1, 1, 1);
	struct admit_result res;
	round_of(&w, true, &res);
	assert_int_equal(res.n_waves, 1);
	assert_string_equal(res.waves[0].job, "next");
	assert_int_equal(res.n_waiting, 1);
	assert_string_equal(res.waiting[0].job, "last");
	admit_result_release(&res);
	world_release(&w);
}

static void test_backfill_starts_a_small_job_behind_a_big_one_and_strict_fifo_does_not(void **state)
{
	for (int strict = 0; strict < 2; strict++) {
		struct world w;
		world_init(&w);
		node(&w, "gpu-a", 8);
		node(&w, "gpu-b", 8);
		job(&w, "hog", "2026-11-22T08:00:00Z", 1, 1, 6);
		pod(&w, "hog", "ps", 0, 0, "gpu-a", "gpu-a");
		pod(&w, "hog", "worker", 0, 6, "gpu-a", "gpu-a");
		gated_job(&w, "big", "2026-11-22T10:00:00Z", 3, 3, 4);   /* 12 GPUs, 10 free */
		gated_job(&w, "small", "2026-11-22T10:00:09Z", 1, 1, 2); /* fits */
		struct admit_result res;
		round_of(&w, !strict, &res);
		assert_int_equal(res.n_waves, strict ? 0 : 1);
		if (!strict)
			assert_string_equal(res.waves[0].job, "small");
		admit_result_release(&res);
		world_release(&w);
	}
}

static void test_a_job_whose_pods_are_not_all_created_yet_is_not_considered(void **state)
{
	struct world w;
	world_init(&w);
	node(&w, "gpu-a", 8);
	job(&w, "partial", "2026-11-22T10:00:00Z", 2, 2, 1);
	pod(&w, "partial", "ps", 0, 0, NULL, NULL);
	pod(&w, "partial", "worker", 0, 1, NULL, NULL); /* worker-1 not created yet */
	struct admit_result res;
	round_of(&w, true, &res);
	assert_int_equal(res.n_waves, 0);
	assert_int_equal(res.n_waiting, 0);
	admit_result_release(&res);
	world_release(&w);
}

static void test_a_recreated_member_of_a_running_job_is_planned_alone_and_first(void **state)
{
	struct world w;
	world_init(&w);
	node(&w, "gpu-a", 8);
	job(&w, "running", "2026-11-22T09:00:00Z", 2, 1, 2);
	pod(&w, "running", "ps", 0, 0, "gpu-a", "gpu-a");
	pod(&w, "running", "worker", 0, 2, "gpu-a", "gpu-a");
	pod(&w, "running", "worker", 1, 2, NULL, NULL);           /* failed, recreated, gated */
	gated_job(&w, "queued", "2026-11-22T08:00:00Z", 3, 3, 2); /* older, 6 GPUs: 6 free */
	struct admit_result res;
	round_of(&w, true, &res);
	assert_int_equal(res.n_waves, 1); /* the repair took 2 GPUs first */
	assert_string_equal(res.waves[0].job, "running");
	/* It rejoins the job's wave: the barrier then counts the two bound
	 * members and binds this one at once. */
	assert_string_equal(res.waves[0].gang, "uid-running.1");
	assert_int_equal(res.waves[0].size, 3);
	assert_int_equal(res.waves[0].n_pods, 1);
	assert_int_equal(res.waves[0].min, 2); /* the job's PS + min-instances */
	assert_string_equal(res.waves[0].pods[0].name, "running-worker-1");
	assert_string_equal(res.waves[0].pods[0].node, "gpu-a");
	assert_int_equal(res.n_waiting, 1);
	assert_string_equal(res.waiting[0].job, "queued");
	admit_result_release(&res);
	world_release(&w);
}

static void test_quantities_may_be_numbers_and_bad_ones_are_reported(void **state)
{
	struct world w;
	world_init(&w);
	node(&w, "gpu-a", 8);
	/* YAML's `nvidia.com/gpu: 1` arrives as the number 1 */
	put(&w.jobs, "{\"metadata\":{\"name\":\"num\",\"namespace\":\"ml\",\"uid\":\"uid-num\","
	             "\"resourceVersion\":\"1\"},\"spec\":{\"tfReplicaSpecs\":{\"Worker\":{"
	             "\"replicas\":1,\"template\":{\"spec\":{\"containers\":[{\"name\":"
	             "\"tensorflow\",\"image\":\"tf\",\"resources\":{\"limits\":{\"nvidia.com/"
	             "gpu\":1,\"cpu\":0.5}}}]}}}}}}");
	pod(&w, "num", "worker", 0, 1, NULL, NULL);
	put(&w.jobs, "{\"metadata\":{\"name\":\"bad\",\"namespace\":\"ml\",\"uid\":\"uid-bad\","
	             "\"resourceVersion\":\"1\"},\"spec\":{\"tfReplicaSpecs\":{\"Worker\":{"
	             "\"replicas\":1,\"template\":{\"spec\":{\"containers\":[{\"name\":"
	             "\"tensorflow\",\"image\":\"tf\",\"resources\":{\"limits\":{\"memory\":"
	             "\"lots\"}}}]}}}}}}");
	pod(&w, "bad", "worker", 0, 0, NULL, NULL);
	struct admit_result res;
	round_of(&w, true, &res);
	assert_int_equal(res.n_waves, 1);
	assert_string_equal(res.waves[0].job, "num");
	assert_int_equal(res.n_waiting, 1);
	assert_string_equal(res.waiting[0].job, "bad");
	assert_int_equal(res.waiting[0].status, DRAKE_ADMIT_INVALID);
	assert_non_null(strstr(res.waiting[0].why, "lots"));
	admit_result_release(&res);
	world_release(&w);
}

static void test_the_ungate_patch_writes_the_plan_before_removing_the_gate(void **state)
{
	struct admit_pod pods[] = {{.name = "x-ps-0", .role = DRAKE_ROLE_PS},
	                           {.name = "x-worker-0", .role = DRAKE_ROLE_WORKER}};
	struct admit_wave wv = {.gang = "uid-x.5",
	                        .size = 3,
	                        .min = 2,
	                        .min_roles = {{1, 0, 1}},
	                        .n_pods = 2,
	                        .pods = pods};
	struct kube_pod *gated = pod_record("{\"metadata\":{\"name\":\"x-ps-0\"},\"spec\":{"
	                                    "\"schedulingGates\":[{\"name\":\"other\"},{\"name\":"
	                                    "\"drake.dev/gang\"}]}}");
	char *p = admit_ungate_patch(gated, &wv, "gpu-a", false);
	assert_string_equal(
	    p, "[{\"op\":\"test\",\"path\":\"/spec/schedulingGates/1/name\",\"value\":\"drake.dev/"
	       "gang\"},{\"op\":\"add\",\"path\":\"/metadata/annotations\",\"value\":{\"drake.dev/"
	       "planned-node\":\"gpu-a\",\"drake.dev/gang\":\"uid-x.5\",\"drake.dev/gang-size\":"
	       "\"3\",\"drake.dev/gang-min\":\"2\",\"drake.dev/gang-min-roles\":\"ps=1,chief=0,"
	       "worker=1\",\"drake.dev/role\":\"ps\"}},{\"op\":\"remove\",\"path\":\"/spec/"
	       "schedulingGates/1\"}]");
	free(p);
	pod_record_free(gated);
	struct kube_pod *annotated = pod_record(
	    "{\"metadata\":{\"name\":\"x-ps-0\",\"annotations\":{\"a\":\"b\"}},\"spec\":{"
	    "\"schedulingGates\":[{\"name\":\"drake.dev/gang\"}]}}");
	p = admit_ungate_patch(annotated, &wv, "gpu-a", false);
	assert_non_null(strstr(p, "\"path\":\"/metadata/annotations/drake.dev~1planned-node\""));
	free(p);
	pod_record_free(annotated);
	struct kube_pod *ungated = pod_record("{\"metadata\":{\"name\":\"x-ps-0\"},\"spec\":{}}");
	assert_null(admit_ungate_patch(ungated, &wv, "gpu-a", true));
	pod_record_free(ungated);
}

/* The pin: a pod nothing else constrains gets a required node affinity on
 * its planned node, then the wave's other nodes once each (a term per node:
 * the API server takes one value per metadata.name requirement), added after a
 * test that it has no affinity and before the gate comes off; a pod with a
 * node selector, an affinity or topology spread constraints does not. */
static void test_the_ungate_patch_pins_a_pod_to_its_planned_node_and_the_waves(void **state)
{
	struct admit_pod pods[] = {
	    {.name = "x-ps-0", .role = DRAKE_ROLE_PS, .node = "gpu-b"},
	    {.name = "x-worker-0", .role = DRAKE_ROLE_WORKER, .node = "gpu-a"},
	    {.name = "x-worker-1", .role = DRAKE_ROLE_WORKER, .node = "gpu-b"},
	    {.name = "x-worker-2", .role = DRAKE_ROLE_WORKER, .node = "gpu-c"}};
	struct admit_wave wv = {.gang = "uid-x.1",
	                        .size = 4,
	                        .min = 4,
	                        .min_roles = {{1, 0, 3}},
	                        .n_pods = 4,
	                        .pods = pods};
	struct kube_pod *free_pod =
	    pod_record("{\"metadata\":{\"name\":\"x-worker-0\",\"annotations\":{}},\"spec\":{"
	               "\"nodeSelector\":{},\"schedulingGates\":[{\"name\":\"drake.dev/gang\"}]}}");
	char *p = admit_ungate_patch(free_pod, &wv, "gpu-a", true);
	const char *pin =
	    "{\"op\":\"test\",\"path\":\"/spec/affinity\",\"value\":null},{\"op\":\"add\",\"path\":"
	    "\"/spec/"
	    "affinity\",\"value\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuring"
	    "Execution\":{\"nodeSelectorTerms\":[{\"matchFields\":[{\"key\":\"metadata.name\","
	    "\"operator\":\"In\",\"values\":[\"gpu-a\"]}]},{\"matchFields\":[{\"key\":\"metadata."
	    "name\",\"operator\":\"In\",\"values\":[\"gpu-b\"]}]},{\"matchFields\":[{\"key\":"
	    "\"metadata.name\",\"operator\":\"In\",\"values\":[\"gpu-c\"]}]}]}}}},{\"op\":"
	    "\"remove\",\"path\":\"/spec/schedulingGates/0\"}]";
	assert_non_null(p);
	size_t n = strlen(p), k = strlen(pin);
	assert_true(n > k);
	assert_string_equal(p + n - k, pin);
	free(p);
	p = admit_ungate_patch(free_pod, &wv, "gpu-a", false);
	assert_null(strstr(p, "affinity"));
	free(p);
	pod_record_free(free_pod);
	const char *constrained[] = {"\"nodeSelector\":{\"pool\":\"a\"}",
	                             "\"affinity\":{\"podAntiAffinity\":{}}",
	                             "\"topologySpreadConstraints\":[{\"maxSkew\":1}]"};
	for (size_t i = 0; i < sizeof(constrained) / sizeof(constrained[0]); i++) {
		char json[512];
		snprintf(json, sizeof(json),
		         "{\"metadata\":{\"name\":\"x-worker-0\"},\"spec\":{%s,"
		         "\"schedulingGates\":[{\"name\":\"drake.dev/gang\"}]}}",
		         constrained[i]);
		struct kube_pod *pod = pod_record(json);
		p = admit_ungate_patch(pod, &wv, "gpu-a", true);
		print_message("case: %s\n", constrained[i]);
		assert_non_null(p);
		assert_null(strstr(p, "\"/spec/affinity\""));
		free(p);
		pod_record_free(pod);
	}
}

/* A node with `gpus` GPUs of 16Gi each (kubeshare/gpu_info, when info). */
static void share_node(struct world *w, const char *name, int gpus, bool info)
{
	char b[640];
	snprintf(b, sizeof(b),
	         "{\"metadata\":{\"name\":\"%s\",\"uid\":\"n-%s\",\"resourceVersion\":\"1\"%s},"
	         "\"spec\":{},\"status\":{\"allocatable\":{\"cpu\":\"32\",\"memory\":\"256Gi\","
	         "\"nvidia.com/gpu\":\"%d\",\"pods\":\"110\"}}}",
	         name, name,
	         info ? ",\"annotations\":{\"kubeshare/gpu_info\":\"GPU-0:16384,GPU-1:16384\"}"
	              : "",
	         gpus);
	put(&w->nodes, b);
}

/* A pod on a vGPU: bound to (or, with planned, only planned on) node. */
static void share_pod(struct world *w, const char *name, const char *node, bool planned,
                      const char *phase, const char *gpuid, const char *request, const char *mem)
{
	char b[1024];
	snprintf(b, sizeof(b),
	         "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ml\",\"uid\":\"p-%s\","
	         "\"resourceVersion\":\"1\",\"ownerReferences\":[{\"kind\":\"TFJob\","
	         "\"name\":\"tf\",\"uid\":\"uid-tf\",\"controller\":true}],"
	         "\"annotations\":{\"kubeshare/GPUID\":\"%s\","
	         "\"kubeshare/gpu_request\":\"%s\",\"kubeshare/gpu_mem\":\"%s\"%s%s%s}},"
	         "\"spec\":{%s%s%s\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":"
	         "{\"cpu\":\"1\"}}}]},\"status\":{\"phase\":\"%s\"}}",
	         name, name, gpuid, request, mem, planned ? ",\"drake.dev/planned-node\":\"" : "",
	         planned ? node : "", planned ? "\"" : "", planned ? "" : "\"nodeName\":\"",
	         planned ? "" : node, planned ? "" : "\",", phase);
	put(&w->pods, b);
}

static void test_the_snapshot_rebuilds_vgpus_from_pods_with_a_gpuid(void **state)
{
	struct world w;
	world_init(&w);
	share_node(&w, "gpu-a", 8, true);
	share_node(&w, "gpu-b", 8, false);
	share_pod(&w, "half", "gpu-a", false, "Running", "abcde", "0.5", "4294967296");
	share_pod(&w, "quarter", "gpu-a", false, "Running", "abcde", "0.25", "2Gi");
	share_pod(&w, "planned", "gpu-a", true, "Pending", "fghij", "0.5", "0");
	share_pod(&w, "garbage", "gpu-a", false, "Running", "klmno", "lots", "0");
	share_pod(&w, "done", "gpu-a", false, "Succeeded", "pqrst", "0.5", "0");
	share_pod(&w, "other", "gpu-b", false, "Running", "abcde", "0.5", "0");
	struct drake_cluster c;
	drake_cluster_init(&c);
	char msg[256];
	assert_int_equal(
	    admit_snapshot(&w.nodes, &w.pods, TF_CACHES(&w.jobs), &c, NULL, msg, sizeof(msg)),
	    DRAKE_OK);
	const struct drake_node *a = &c.nodes[drake_cluster_find(&c, "gpu-a")];
	const struct drake_node *b = &c.nodes[drake_cluster_find(&c, "gpu-b")];
	assert_int_equal(a->gpu_mem, 16LL << 30);
	assert_int_equal(b->gpu_mem, 0); /* no kubeshare/gpu_info */
	assert_int_equal(a->vgpus.n, 3); /* abcde, fghij, klmno; the finished pod's is closed */
	assert_int_equal(a->used.gpu, 3);
	const struct drake_vgpu *v = &a->vgpus.v[drake_vgpu_find(&a->vgpus, "abcde")];
	assert_int_equal(v->free_milli, 250);
	assert_int_equal(v->free_mem, 10LL << 30);
	assert_int_equal(v->sharers, 2);
	v = &a->vgpus.v[drake_vgpu_find(&a->vgpus, "klmno")];
	assert_int_equal(v->free_milli, 0); /* unreadable: taken to fill its vGPU */
	assert_int_equal(b->vgpus.n, 1);    /* ids are per node */
	assert_int_equal(b->used.gpu, 1);
	drake_cluster_release(&c);
	world_release(&w);
}

/* A TFJob of 1 PS and `workers` workers asking 0.5 GPU and 4Gi each. */
static void share_job(struct world *w, const char *name, int workers, const char *request)
{
	char b[2048];
	snprintf(
	    b, sizeof(b),
	    "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":"
	    "\"%s\",\"namespace\":\"ml\",\"uid\":\"uid-%s\",\"resourceVersion\":\"1\","
	    "\"creationTimestamp\":\"2026-11-22T10:00:00Z\"},\"spec\":{\"tfReplicaSpecs\":{"
	    "\"PS\":{\"replicas\":1,\"template\":{\"spec\":{\"containers\":[{\"name\":"
	    "\"tensorflow\",\"image\":\"tf\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}},"
	    "\"Worker\":{\"replicas\":%d,\"template\":{\"metadata\":{\"annotations\":{"
	    "\"kubeshare/gpu_request\":\"%s\",\"kubeshare/gpu_mem\":\"4294967296\"}},"
	    "\"spec\":{\"containers\":[{\"name\":\"tensorflow\",\"image\":\"tf\","
	    "\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}}}}}",
	    name, name, workers, request);
	put(&w->jobs, b);
	pod(w, name, "ps", 0, 0, NULL, NULL);
	for (int i = 0; i < workers; i++)
		pod(w, name, "worker", i, 0, NULL, NULL);
}

static void test_a_kubeshare_job_fills_an_open_vgpu_then_opens_new_ones(void **state)
{
	struct world w;
	world_init(&w);
	share_node(&w, "gpu-a", 3, true);
	share_pod(&w, "running", "gpu-a", false, "Running", "zzzzz", "0.5", "4Gi");
	share_job(&w, "frac", 4, "0.5");
	struct admit_result res;
	round_of(&w, true, &res);
	assert_int_equal(res.n_waves, 1);
	const struct admit_wave *wv = &res.waves[0];
	assert_int_equal(wv->n_pods, 5);
	assert_string_equal(wv->pods[0].name, "frac-ps-0");
	assert_int_equal(wv->pods[0].share.milli, 0); /* the PS shares no GPU */
	assert_string_equal(wv->pods[0].gpuid, "");
	assert_string_equal(wv->pods[1].gpuid, "zzzzz"); /* the open vGPU first */
	int distinct = 0;
	for (int i = 1; i < 5; i++) {
		assert_string_equal(wv->pods[i].node, "gpu-a");
		assert_int_equal(wv->pods[i].share.milli, 500);
		assert_int_equal(wv->pods[i].share.mem_bytes, 4LL << 30);
		bool seen = false;
		for (int j = 1; j < i; j++)
			seen |= !strcmp(wv->pods[j].gpuid, wv->pods[i].gpuid);
		distinct += !seen;
	}
	assert_int_equal(distinct, 3); /* zzzzz's free half, then two new vGPUs */
	admit_result_release(&res);
	world_release(&w);
}

static void test_a_bad_share_annotation_makes_the_job_invalid(void **state)
{
	struct world w;
	world_init(&w);
	share_node(&w, "gpu-a", 8, true);
	share_job(&w, "bad", 2, "1.5");
	struct admit_result res;
	round_of(&w, true, &res);
	assert_int_equal(res.n_waves, 0);
	assert_int_equal(res.n_waiting, 1);
	assert_int_equal(res.waiting[0].status, DRAKE_ADMIT_INVALID);
	assert_non_null(strstr(res.waiting[0].why, "kubeshare/gpu_request \"1.5\" is more than"));
	admit_result_release(&res);
	world_release(&w);
}

static void test_the_ungate_patch_of_a_shared_pod_writes_its_gpuid(void **state)
{
	struct admit_pod pods[2] = {
	    {.name = "x-ps-0"},
	    {.name = "x-worker-0", .share = {500, 500, 4LL << 30}, .gpuid = "qwert"}};
	struct admit_wave wv = {.gang = "uid-x.5", .size = 2, .min = 2, .n_pods = 2, .pods = pods};
	/* The worker carries its template's request and memory, not a limit. */
	struct kube_pod *worker = pod_record(
	    "{\"metadata\":{\"name\":\"x-worker-0\",\"annotations\":{\"kubeshare/gpu_request\":"
	    "\"0.50\",\"kubeshare/gpu_mem\":\"4Gi\"}},\"spec\":{\"schedulingGates\":[{\"name\":"
	    "\"drake.dev/gang\"}]}}");
	char *p = admit_ungate_patch(worker, &wv, "gpu-a", false);
	json_t *ops = json_loads(p, 0, NULL);
	assert_non_null(ops);
	json_t *want = json_pack("{s:s,s:s}", "/metadata/annotations/kubeshare~1GPUID", "qwert",
	                         "/metadata/annotations/kubeshare~1gpu_limit", "0.5");
	size_t i, found = 0;
	json_t *op;
	json_array_foreach (ops, i, op) {
		const char *path = json_string_value(json_object_get(op, "path"));
		const char *v = json_string_value(json_object_get(op, "value"));
		if (strstr(path, "kubeshare") && !json_object_get(want, path))
			fail_msg("unexpected op on %s (the pod has it already)", path);
		if (json_object_get(want, path)) {
			assert_string_equal(v, json_string_value(json_object_get(want, path)));
			found++;
		}
	}
	assert_int_equal(found, 2);
	/* The gate still comes off last, after every annotation. */
	assert_string_equal(
	    json_string_value(json_object_get(json_array_get(ops, json_array_size(ops) - 1), "op")),
	    "remove");
	json_decref(want);
	json_decref(ops);
	free(p);
	pod_record_free(worker);
	/* A pod without annotations gets them all in one object; the PS none. */
	struct kube_pod *bare = pod_record("{\"metadata\":{\"name\":\"x-worker-0\"},\"spec\":{"
	                                   "\"schedulingGates\":[{\"name\":\"drake.dev/gang\"}]}}");
	p = admit_ungate_patch(bare, &wv, "gpu-a", false);
	assert_non_null(strstr(p, "\"kubeshare/GPUID\":\"qwert\""));
	assert_non_null(strstr(p, "\"kubeshare/gpu_request\":\"0.5\""));
	assert_non_null(strstr(p, "\"kubeshare/gpu_mem\":\"4294967296\""));
	free(p);
	pod_record_free(bare);
	struct kube_pod *ps = pod_record("{\"metadata\":{\"name\":\"x-ps-0\"},\"spec\":{"
	                                 "\"schedulingGates\":[{\"name\":\"drake.dev/gang\"}]}}");
	p = admit_ungate_patch(ps, &wv, "gpu-a", false);
	assert_null(strstr(p, "kubeshare"));
	free(p);
	pod_record_free(ps);
}

/* A replica spec of `n` replicas whose tensorflow container asks for gpu GPUs. */
static const char *replica(char *buf, size_t len, int n, int gpu)
{
	snprintf(buf, len,
	         "{\"replicas\":%d,\"template\":{\"spec\":{\"containers\":[{\"name\":"
	         "\"tensorflow\",\"image\":\"tf\",\"resources\":{\"limits\":{\"cpu\":\"1\","
	         "\"memory\":\"1Gi\",\"nvidia.com/gpu\":\"%d\"}}}]}}}",
	         n, gpu);
	return buf;
}

/* A Kubeflow-layout TFJob: 1 PS, a `key` replica (Chief or Master) of
 * chief_gpu GPUs, `workers` one-GPU workers and one evaluator, all pods
 * created and gated. */
static void chief_job(struct world *w, const char *name, const char *key, int chief_gpu,
                      int workers)
{
	char b[3072], ps[512], chief[512], worker[512], eval[512];
	snprintf(b, sizeof(b),
	         "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":"
	         "\"%s\",\"namespace\":\"ml\",\"uid\":\"uid-%s\",\"resourceVersion\":\"1\","
	         "\"creationTimestamp\":\"2026-11-22T10:00:00Z\"},\"spec\":{\"runPolicy\":{},"
	         "\"tfReplicaSpecs\":{\"PS\":%s,\"%s\":%s,\"Worker\":%s,\"Evaluator\":%s}}}",
	         name, name, replica(ps, sizeof(ps), 1, 0), key,
	         replica(chief, sizeof(chief), 1, chief_gpu),
	         replica(worker, sizeof(worker), workers, 1), replica(eval, sizeof(eval), 1, 1));
	put(&w->jobs, b);
	pod(w, name, "ps", 0, 0, NULL, NULL);
	pod(w, name, "chief", 0, chief_gpu, NULL, NULL);
	for (int i = 0; i < workers; i++)
		pod(w, name, "worker", i, 1, NULL, NULL);
	pod(w, name, "evaluator", 0, 1, NULL, NULL);
}

static void test_a_chief_joins_the_wave_after_the_ps_and_counts_in_size_and_min(void **state)
{
	const char *keys[] = {"Chief", "Master"}; /* Master: Kubeflow's legacy name */
	for (int k = 0; k < 2; k++) {
		struct world w;
		world_init(&w);
		node(&w, "gpu-a", 8);
		node(&w, "gpu-b", 8);
		chief_job(&w, "tf", keys[k], 1, 6);
		struct admit_result res;
		round_of(&w, true, &res);
		assert_int_equal(res.n_waves, 1);
		const struct admit_wave *wv = &res.waves[0];
		assert_int_equal(wv->size, 8); /* PS + chief + 6 workers; not the evaluator */
		assert_int_equal(wv->n_pods, 8);
		assert_int_equal(wv->min, 8); /* PS + chief + min-instances (6) */
		assert_int_equal(wv->n_ps, 1);
		assert_int_equal(wv->n_chief, 1);
		assert_int_equal(wv->n_workers, 6);
		assert_string_equal(wv->pods[0].name, "tf-ps-0");
		assert_string_equal(wv->pods[1].name, "tf-chief-0");
		assert_string_equal(wv->pods[2].name, "tf-worker-0");
		assert_string_equal(wv->pods[7].name, "tf-worker-5");
		for (int i = 0; i < wv->n_pods; i++) {
			assert_string_equal(wv->pods[i].node, wv->pods[0].node); /* one node */
			assert_null(strstr(wv->pods[i].name, "evaluator"));
		}
		/* The chief's ungate patch carries the wave's annotations. */
		const struct kube_pod *chief = kube_pods_get(&w.pods, "ml", "tf-chief-0");
		char *p = admit_ungate_patch(chief, wv, wv->pods[1].node, false);
		assert_non_null(p);
		assert_non_null(strstr(p, "\"drake.dev/gang\":\"uid-tf.1700000000\""));
		assert_non_null(strstr(p, "\"drake.dev/gang-size\":\"8\""));
		assert_non_null(strstr(p, "\"drake.dev/gang-min\":\"8\""));
		free(p);
		admit_result_release(&res);
		world_release(&w);
	}
}

static void
test_the_chief_counts_toward_the_minimum_so_a_job_without_room_for_it_waits(void **state)
{
	struct world w;
	world_init(&w);
	node(&w, "gpu-a", 8);
	chief_job(&w, "tf", "Chief", 2, 7); /* 9 GPUs with the chief, 7 without */
	struct admit_result res;
	round_of(&w, true, &res);
	assert_int_equal(res.n_waves, 0);
	assert_int_equal(res.n_waiting, 1);
	assert_string_equal(res.waiting[0].job, "tf");
	assert_int_equal(res.waiting[0].status, DRAKE_ADMIT_NEVER);
	assert_non_null(strstr(res.waiting[0].why, "1 chief"));
	admit_result_release(&res);
	world_release(&w);
}

static void test_a_recreated_chief_rejoins_its_jobs_wave(void **state)
{
	struct world w;
	world_init(&w);
	node(&w, "gpu-a", 8);
	chief_job(&w, "tf", "Chief", 1, 1); /* PS + chief + worker: the pods' gang-size 3 */
	pod(&w, "tf", "ps", 0, 0, "gpu-a", "gpu-a");
	pod(&w, "tf", "worker", 0, 1, "gpu-a", "gpu-a");
	/* tf-chief-0 stays gated: it failed and was recreated. */
	struct admit_result res;
	round_of(&w, true, &res);
	assert_int_equal(res.n_waves, 1);
	const struct admit_wave *wv = &res.waves[0];
	assert_string_equal(wv->gang, "uid-tf.1");
	assert_int_equal(wv->size, 3);
	assert_int_equal(wv->n_pods, 1);
	assert_int_equal(wv->min, 3);
	assert_int_equal(wv->n_chief, 1);
	assert_string_equal(wv->pods[0].name, "tf-chief-0");
	assert_string_equal(wv->pods[0].node, "gpu-a");
	admit_result_release(&res);
	world_release(&w);
}

static void test_a_member_whose_node_is_gone_is_replanned_without_taking_a_reservation(void **state)
{
	struct world w;
	world_init(&w);
	node(&w, "a", 8);
	node(&w, "b", 8);
	node(&w, "c", 8);
	node(&w, "d", 2);
	job(&w, "j", "2026-01-01T00:00:00Z", 2, 2, 2);
	pod(&w, "j", "ps", 0, 0, "a", NULL);
	pod(&w, "j", "worker", 0, 2, "c", "c");
	pod(&w, "j", "worker", 1, 2, "a", NULL); /* a is no longer offered */
	pod(&w, "k", "worker", 0, 7, "b", NULL); /* another gang holds 7 of b's GPUs */
	char node_[64] = "", why[256] = "";
	/* beside its own job first */
	const char *all[] = {"b", "c", "d"};
	assert_int_equal(admit_replan(&w.nodes, &w.pods, "ml", "j-worker-1", all, 3, node_,
	                              sizeof(node_), why, sizeof(why)),
	                 DRAKE_OK);
	assert_string_equal(node_, "c");
	/* never into another gang's reservation: b has 1 GPU left, d has 2 */
	const char *bd[] = {"b", "d"};
	assert_int_equal(admit_replan(&w.nodes, &w.pods, "ml", "j-worker-1", bd, 2, node_,
	                              sizeof(node_), why, sizeof(why)),
	                 DRAKE_OK);
	assert_string_equal(node_, "d");
	/* nowhere with room: it says so */
	const char *b[] = {"b"};
	assert_int_equal(admit_replan(&w.nodes, &w.pods, "ml", "j-worker-1", b, 1, node_,
	                              sizeof(node_), why, sizeof(why)),
	                 DRAKE_ESTATE);
	assert_non_null(strstr(why, "room"));
	/* a pod the cache does not have */
	assert_int_equal(admit_replan(&w.nodes, &w.pods, "ml", "nobody", all, 3, node_,
	                              sizeof(node_), why, sizeof(why)),
	                 DRAKE_EINVAL);
	world_release(&w);
}

/* ---- the snapshot reads real nodes ---- */

/* A node as the API server reports a real GPU node (keys sorted): cpu,
 * memory and GPUs, and a handful of resources drake plans with only when
 * someone asks for them. extra (",\"k\":\"v\"") adds to its allocatable. */
static void real_node(struct world *w, const char *name, int cpu, int gpus, const char *extra)
{
	char b[1024];
	snprintf(b, sizeof(b),
	         "{\"metadata\":{\"name\":\"%s\",\"uid\":\"n-%s\",\"resourceVersion\":\"1\"},"
	         "\"spec\":{},\"status\":{\"allocatable\":{\"amd.com/gpu\":\"0\",\"cpu\":\"%d\","
	         "\"ephemeral-storage\":\"1677630584485\",\"hugepages-1Gi\":\"0\","
	         "\"hugepages-2Mi\":\"0\",\"memory\":\"515620Mi\",\"nvidia.com/gpu\":\"%d\","
	         "\"nvidia.com/mig-1g.10gb\":\"0\",\"pods\":\"110\","
	         "\"rdma/hca_shared_devices_a\":\"1k\"%s}}}",
	         name, name, cpu, gpus, extra);
	put(&w->nodes, b);
}

/* A TFJob of one PS of ps_cpu CPUs and `workers` workers whose limits are
 * worker_cpu CPUs, 1Gi and extra (",\"k\":\"v\""); its pods created and
 * gated. */
static void res_job(struct world *w, const char *name, const char *created, int ps_cpu, int workers,
                    int worker_cpu, const char *extra)
{
	char b[4096];
	snprintf(
	    b, sizeof(b),
	    "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":"
	    "\"%s\",\"namespace\":\"ml\",\"uid\":\"uid-%s\",\"resourceVersion\":\"1\","
	    "\"creationTimestamp\":\"%s\"},\"spec\":{\"min-instances\":%d,\"max-instances\":%d,"
	    "\"tfReplicaSpecs\":{\"PS\":{\"replicas\":1,\"template\":{\"spec\":{\"containers\":"
	    "[{\"name\":\"tensorflow\",\"image\":\"tf\",\"resources\":{\"limits\":{\"cpu\":"
	    "\"%d\",\"memory\":\"1Gi\"}}}]}}},\"Worker\":{\"replicas\":%d,\"template\":{\"spec\":"
	    "{\"containers\":[{\"name\":\"tensorflow\",\"image\":\"tf\",\"resources\":{\"limits\":"
	    "{\"cpu\":\"%d\",\"memory\":\"1Gi\"%s}}}]}}}}}}",
	    name, name, created, workers, workers, ps_cpu, workers, worker_cpu, extra);
	put(&w->jobs, b);
	pod(w, name, "ps", 0, 0, NULL, NULL);
	for (int i = 0; i < workers; i++)
		pod(w, name, "worker", i, 0, NULL, NULL);
}

static const struct drake_node *snap_node(const struct drake_cluster *c, const char *name)
{
	int i = drake_cluster_find(c, name);
	if (i < 0)
		fail_msg("node %s is not in the snapshot", name);
	return &c->nodes[i];
}

static void test_a_real_node_advertising_a_dozen_resources_is_read_whole(void **state)
{
	/* with nobody asking for an extended resource, and with jobs asking
	 * for more of them than the table holds */
	for (int asked = 0; asked < 2; asked++) {
		struct world w;
		world_init(&w);
		real_node(&w, "gpu-a", 64, 8,
		          ",\"example.com/fpga\":\"2\",\"xilinx.com/u250\":\"1\"");
		if (asked) {
			res_job(&w, "old", "2026-01-01T00:00:00Z", 1, 1, 1,
			        ",\"ephemeral-storage\":\"10Gi\",\"hugepages-2Mi\":\"0\","
			        "\"example.com/fpga\":\"1\",\"rdma/hca_shared_devices_a\":\"1\"");
			res_job(
			    &w, "new", "2026-01-02T00:00:00Z", 1, 1, 1,
			    ",\"amd.com/gpu\":\"0\",\"xilinx.com/u250\":\"1\",\"hugepages-1Gi\":"
			    "\"0\",\"nvidia.com/mig-1g.10gb\":\"0\",\"example.com/other\":\"1\"");
		}
		struct drake_cluster c;
		drake_cluster_init(&c);
		struct admit_skipped_list sk = {0};
		char msg[256];
		assert_int_equal(admit_snapshot(&w.nodes, &w.pods, TF_CACHES(&w.jobs), &c, &sk, msg,
		                                sizeof(msg)),
		                 DRAKE_OK);
		assert_int_equal(sk.n, 0);
		const struct drake_node *a = snap_node(&c, "gpu-a");
		assert_int_equal(a->alloc.cpu_milli, 64000);
		assert_int_equal(a->alloc.mem_bytes, 515620LL << 20);
		assert_int_equal(a->alloc.gpu, 8);
		assert_int_equal(c.names.n, asked ? 8 : 0); /* only what is asked for */
		if (asked) {
			/* the older job's names come first; fpga has the node's 2 */
			int fpga = drake_res_name_find(&c.names, "example.com/fpga");
			assert_true(fpga >= 0);
			assert_int_equal(a->alloc.ext[fpga], 2);
			assert_int_equal(
			    a->alloc.ext[drake_res_name_find(&c.names, "ephemeral-storage")],
			    1677630584485LL);
		}
		admit_skipped_release(&sk);
		drake_cluster_release(&c);
		world_release(&w);
	}
}

static void test_a_52_cpu_job_goes_whole_onto_the_one_64_cpu_node_not_over_two_32s(void **state)
{
	struct world w;
	world_init(&w);
	node(&w, "plain-a", 0); /* 32 CPUs */
	node(&w, "plain-b", 0);
	real_node(&w, "big", 64, 0, "");
	res_job(&w, "wide", "2026-11-22T10:00:00Z", 4, 2, 24, ""); /* 4 + 2 x 24 = 52 CPUs */
	struct admit_result res;
	round_of(&w, true, &res);
	assert_int_equal(res.skipped.n, 0);
	assert_int_equal(res.n_waves, 1);
	assert_int_equal(res.waves[0].n_pods, 3);
	for (int i = 0; i < 3; i++)
		assert_string_equal(res.waves[0].pods[i].node, "big");
	admit_result_release(&res);
	world_release(&w);
}

static void test_an_extended_resource_only_one_node_has_is_planned_only_there(void **state)
{
	struct world w;
	world_init(&w);
	/* every node advertises more resources than the table holds */
	real_node(&w, "a", 64, 8, ",\"example.com/x1\":\"1\",\"example.com/x2\":\"1\"");
	real_node(&w, "b", 64, 8, ",\"example.com/x1\":\"1\",\"example.com/fpga\":\"4\"");
	real_node(&w, "c", 64, 8, ",\"example.com/x2\":\"1\"");
	res_job(&w, "fpga", "2026-11-22T10:00:00Z", 1, 2, 2, ",\"example.com/fpga\":\"2\"");
	struct admit_result res;
	round_of(&w, true, &res);
	assert_int_equal(res.n_waves, 1);
	for (int i = 1; i < res.waves[0].n_pods; i++) /* the workers; the PS asks no fpga */
		assert_string_equal(res.waves[0].pods[i].node, "b");
	admit_result_release(&res);
	/* a third worker wanting 2 more fpgas fits nowhere: it waits */
	world_release(&w);
	world_init(&w);
	real_node(&w, "a", 64, 8, "");
	real_node(&w, "b", 64, 8, ",\"example.com/fpga\":\"4\"");
	res_job(&w, "fpga", "2026-11-22T10:00:00Z", 1, 3, 2, ",\"example.com/fpga\":\"2\"");
	round_of(&w, true, &res);
	assert_int_equal(res.n_waves, 0);
	assert_int_equal(res.n_waiting, 1);
	assert_int_not_equal(res.waiting[0].status, DRAKE_ADMIT_STARTED);
	admit_result_release(&res);
	world_release(&w);
}

/* ",\"example.com/r0\":\"1\",..." for names r<from> .. r<to - 1>. */
static const char *ext_limits(char *buf, size_t len, int from, int to)
{
	size_t o = 0;
	buf[0] = '\0';
	for (int i = from; i < to && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, ",\"example.com/r%d\":\"1\"", i);
	return buf;
}

struct beyond_case {
	const char *name;
	int old_from, old_to; /* the older job asks for example.com/r<from> .. r<to - 1> */
	int new_from, new_to; /* the newer job */
	const char *starts;   /* the job that starts, or NULL */
	const char *refused;  /* the job refused */
	const char *why;      /* what it is told */
};

static const struct beyond_case beyond_cases[] = {
    {"a job asking for nine extended resources is refused with the count", 0, 0, 0, 9, NULL, "new",
     "requests 9 extended resources; drake models at most 8"},
    {"a job whose resource finds the table full of older requests is refused, not planned "
     "without it",
     1, 9, 0, 1, "old", "new", "older requests hold every slot"},
    {"a job asking for more than drake models takes no slot from a newer job", 0, 9, 9, 10, "new",
     "old", "requests 9 extended resources"},
};

static void run_beyond_case(void **state)
{
	const struct beyond_case *k = *state;
	struct world w;
	world_init(&w);
	char all[1024], old_[1024], new_[1024];
	real_node(&w, "a", 64, 8, ext_limits(all, sizeof(all), 0, 10)); /* has every one */
	if (k->old_to > k->old_from)
		res_job(&w, "old", "2026-11-22T09:00:00Z", 1, 1, 1,
		        ext_limits(old_, sizeof(old_), k->old_from, k->old_to));
	res_job(&w, "new", "2026-11-22T10:00:00Z", 1, 1, 1,
	        ext_limits(new_, sizeof(new_), k->new_from, k->new_to));
	struct admit_result res;
	round_of(&w, true, &res);
	for (size_t i = 0; i < res.n_waves; i++)
		if (!k->starts || strcmp(res.waves[i].job, k->starts))
			fail_msg("case '%s': %s was planned ignoring a request", k->name,
			         res.waves[i].job);
	assert_int_equal(res.n_waves, k->starts ? 1 : 0);
	assert_int_equal(res.n_waiting, 1);
	assert_string_equal(res.waiting[0].job, k->refused);
	assert_int_equal(res.waiting[0].status, DRAKE_ADMIT_INVALID);
	if (!strstr(res.waiting[0].why, k->why))
		fail_msg("case '%s': why is \"%s\"", k->name, res.waiting[0].why);
	admit_result_release(&res);
	world_release(&w);
}

struct skip_case {
	const char *name;
	const char *node;  /* its name */
	const char *alloc; /* its allocatable */
	const char *why;   /* NULL: the node is read */
};

static const struct skip_case skip_cases[] = {
    {"a node with a malformed cpu is left out and reported", "bad-cpu",
     "{\"cpu\":\"lots\",\"memory\":\"1Gi\"}", "cpu: quantity \"lots\""},
    {"a node with a malformed memory is left out and reported", "bad-mem",
     "{\"cpu\":\"8\",\"memory\":\"-1Gi\"}", "memory: negative quantity"},
    {"a node with a fractional GPU count is left out and reported", "bad-gpu",
     "{\"cpu\":\"8\",\"nvidia.com/gpu\":\"0.5\"}", "nvidia.com/gpu must be a whole number"},
    {"a node with a malformed resource someone requests is left out and reported", "bad-fpga",
     "{\"cpu\":\"8\",\"example.com/fpga\":\"many\"}", "example.com/fpga: "},
    {"a node with a malformed resource nobody requests is read", "odd-pods",
     "{\"cpu\":\"8\",\"pods\":\"many\",\"hugepages-2Mi\":[]}", NULL},
};

static void run_skip_case(void **state)
{
	const struct skip_case *k = *state;
	struct world w;
	world_init(&w);
	node(&w, "good", 8);
	char b[1024];
	snprintf(b, sizeof(b),
	         "{\"metadata\":{\"name\":\"%s\",\"uid\":\"n-x\",\"resourceVersion\":\"1\"},"
	         "\"spec\":{},\"status\":{\"allocatable\":%s}}",
	         k->node, k->alloc);
	put(&w.nodes, b);
	res_job(&w, "fpga", "2026-11-22T10:00:00Z", 1, 1, 1, ",\"example.com/fpga\":\"1\"");
	struct admit_result res;
	round_of(&w, true, &res);
	if (!k->why) {
		assert_int_equal(res.skipped.n, 0);
	} else {
		assert_int_equal(res.skipped.n, 1);
		assert_int_equal(strncmp(res.skipped.v[0].node, k->node, 200), 0);
		if (!strstr(res.skipped.v[0].why, k->why))
			fail_msg("case '%s': why is \"%s\"", k->name, res.skipped.v[0].why);
	}
	admit_result_release(&res);
	/* the snapshot itself has the node exactly when it is read */
	struct drake_cluster c;
	drake_cluster_init(&c);
	char msg[256];
	assert_int_equal(
	    admit_snapshot(&w.nodes, &w.pods, TF_CACHES(&w.jobs), &c, NULL, msg, sizeof(msg)),
	    DRAKE_OK);
	assert_int_equal(c.n, k->why ? 1 : 2);
	assert_true(drake_cluster_find(&c, "good") >= 0);
	drake_cluster_release(&c);
	world_release(&w);
}

static void test_two_nodes_of_one_name_are_both_left_out_and_reported(void **state)
{
	struct world w;
	world_init(&w);
	node(&w, "good", 8);
	node(&w, "twin", 8);
	/* a bogus namespace gives the cache a second key for the same name */
	put(&w.nodes, "{\"metadata\":{\"name\":\"twin\",\"namespace\":\"x\",\"uid\":\"n-t2\","
	              "\"resourceVersion\":\"1\"},\"status\":{\"allocatable\":{\"cpu\":\"8\","
	              "\"nvidia.com/gpu\":\"4\"}}}");
	struct drake_cluster c;
	drake_cluster_init(&c);
	struct admit_skipped_list sk = {0};
	char msg[256];
	assert_int_equal(
	    admit_snapshot(&w.nodes, &w.pods, TF_CACHES(&w.jobs), &c, &sk, msg, sizeof(msg)),
	    DRAKE_OK);
	assert_int_equal(c.n, 1);
	assert_string_equal(c.nodes[0].name, "good");
	assert_int_equal(c.alloc_total.gpu, 8);
	assert_int_equal(sk.n, 1);
	assert_string_equal(sk.v[0].node, "twin");
	assert_non_null(strstr(sk.v[0].why, "2 nodes have this name"));
	admit_skipped_release(&sk);
	drake_cluster_release(&c);
	world_release(&w);
}

static void test_every_skipped_node_is_listed_up_to_the_limit_then_counted(void **state)
{
	struct world w;
	world_init(&w);
	for (int i = 0; i < ADMIT_SKIPPED_MAX + 3; i++) {
		char b[256];
		snprintf(
		    b, sizeof(b),
		    "{\"metadata\":{\"name\":\"bad-%03d\",\"uid\":\"n-%d\",\"resourceVersion\":"
		    "\"1\"},\"status\":{\"allocatable\":{\"cpu\":\"x\"}}}",
		    i, i);
		put(&w.nodes, b);
	}
	struct admit_result res;
	round_of(&w, true, &res);
	assert_int_equal(res.skipped.n, ADMIT_SKIPPED_MAX);
	assert_int_equal(res.skipped.unlisted, 3);
	for (size_t i = 1; i < res.skipped.n; i++) /* sorted by name */
		assert_true(strcmp(res.skipped.v[i - 1].node, res.skipped.v[i].node) < 0);
	admit_result_release(&res);
	world_release(&w);
}

/* ---- requests counted as kube-scheduler counts them ---- */

struct req_case {
	const char *name;
	const char *spec;
	int64_t cpu_milli, mem_mib;
};

static const struct req_case req_cases[] = {
    {"the app containers are summed",
     "{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}},"
     "{\"resources\":{\"requests\":{\"cpu\":\"500m\",\"memory\":\"512Mi\"}}}]}",
     1500, 1536},
    {"a limit stands in for a request the container does not give",
     "{\"containers\":[{\"resources\":{\"limits\":{\"cpu\":\"2\",\"memory\":\"1Gi\"},"
     "\"requests\":{\"cpu\":\"1\"}}}]}",
     1000, 1024},
    {"the largest init container counts when larger than the app containers",
     "{\"initContainers\":[{\"resources\":{\"requests\":{\"cpu\":\"4\"}}},{\"resources\":"
     "{\"requests\":{\"cpu\":\"3\",\"memory\":\"4Gi\"}}}],\"containers\":[{\"resources\":"
     "{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}}]}",
     4000, 4096},
    {"the pod overhead is added to the containers",
     "{\"overhead\":{\"cpu\":\"250m\",\"memory\":\"120Mi\"},\"containers\":[{\"resources\":"
     "{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}}]}",
     1250, 1144},
    {"the pod overhead is added on top of the largest init container",
     "{\"overhead\":{\"cpu\":\"250m\"},\"initContainers\":[{\"resources\":{\"requests\":"
     "{\"cpu\":\"4\"}}}],\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}",
     4250, 0},
    {"a sidecar is summed with the app containers, not maxed",
     "{\"initContainers\":[{\"restartPolicy\":\"Always\",\"resources\":{\"requests\":{\"cpu\":"
     "\"1\",\"memory\":\"256Mi\"}}}],\"containers\":[{\"resources\":{\"requests\":{\"cpu\":"
     "\"2\",\"memory\":\"1Gi\"}}}]}",
     3000, 1280},
    {"an init container runs beside the sidecars started before it",
     "{\"initContainers\":[{\"restartPolicy\":\"Always\",\"resources\":{\"requests\":{\"cpu\":"
     "\"1\"}}},{\"resources\":{\"requests\":{\"cpu\":\"3\"}}},{\"restartPolicy\":\"Always\","
     "\"resources\":{\"requests\":{\"cpu\":\"1\"}}}],\"containers\":[{\"resources\":"
     "{\"requests\":{\"cpu\":\"1\"}}}]}",
     4000, 0},
    {"an init container before every sidecar counts alone",
     "{\"initContainers\":[{\"resources\":{\"requests\":{\"cpu\":\"3\"}}},{\"restartPolicy\":"
     "\"Always\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}],\"containers\":[{\"resources\":"
     "{\"requests\":{\"cpu\":\"1\"}}}]}",
     3000, 0},
    {"an init container with another restart policy is no sidecar",
     "{\"initContainers\":[{\"restartPolicy\":\"OnFailure\",\"resources\":{\"requests\":"
     "{\"cpu\":\"1\"}}}],\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"2\"}}}]}",
     2000, 0},
    {"drake's marker resource is not counted",
     "{\"containers\":[{\"resources\":{\"limits\":{\"cpu\":\"1\",\"drake.dev/gang\":\"1\"}}}]}",
     1000, 0},
};

static void run_req_case(void **state)
{
	const struct req_case *k = *state;
	/* the same spec as a cached pod's record and as a TFJob's template:
	 * one rule, the same answer */
	char text[2048];
	snprintf(text, sizeof(text), "{\"metadata\":{\"name\":\"p\"},\"spec\":%s}", k->spec);
	json_t *tmpl = json_loads(text, 0, NULL);
	assert_non_null(tmpl);
	struct kube_pod *pod = pod_record(text);
	struct drake_res_names names = {0};
	struct drake_res r, t;
	char msg[256];
	assert_int_equal(admit_pod_requests(pod, &names, &r, msg, sizeof(msg)), DRAKE_OK);
	assert_int_equal(admit_template_requests(tmpl, &names, &t, msg, sizeof(msg)), DRAKE_OK);
	if (r.cpu_milli != k->cpu_milli || r.mem_bytes != k->mem_mib << 20)
		fail_msg("case '%s': cpu %lldm mem %lld bytes", k->name, (long long)r.cpu_milli,
		         (long long)r.mem_bytes);
	assert_memory_equal(&r, &t, sizeof(r));
	pod_record_free(pod);
	json_decref(tmpl);
}

/* ---- which unbound pods take room ---- */

/* A pod that is not bound: its owner kind (NULL: none), whether drake's
 * gate is on it, its planned-node annotation and nominatedNodeName. */
static void loose_pod(struct world *w, const char *name, const char *owner, bool gated,
                      const char *planned, const char *nominated, int gpu)
{
	char b[2048], own[256] = "", ann[128] = "", gate[128] = "", nom[128] = "";
	if (owner)
		snprintf(own, sizeof(own),
		         ",\"ownerReferences\":[{\"kind\":\"%s\",\"name\":\"o\",\"uid\":\"uid-o\","
		         "\"controller\":true}]",
		         owner);
	if (planned)
		snprintf(ann, sizeof(ann), ",\"annotations\":{\"drake.dev/planned-node\":\"%s\"}",
		         planned);
	if (gated)
		snprintf(gate, sizeof(gate),
		         "\"schedulingGates\":[{\"name\":\"drake.dev/gang\"}],");
	if (nominated)
		snprintf(nom, sizeof(nom), ",\"nominatedNodeName\":\"%s\"", nominated);
	snprintf(b, sizeof(b),
	         "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ml\",\"uid\":\"p-%s\","
	         "\"resourceVersion\":\"1\"%s%s},\"spec\":{%s\"containers\":[{\"name\":\"c\","
	         "\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"%d\"}}}]},\"status\":{\"phase\":"
	         "\"Pending\"%s}}",
	         name, name, own, ann, gate, gpu, nom);
	put(&w->pods, b);
}

struct loose_case {
	const char *name;
	const char *owner;
	bool gated;
	const char *planned, *nominated;
	int used_a; /* GPUs the snapshot charges to node a */
};

static const struct loose_case loose_cases[] = {
    {"an admitted member is charged where it is planned", "TFJob", false, "a", NULL, 6},
    {"a planned-node annotation on a pod drake's gate still holds is no reservation", "TFJob", true,
     "a", NULL, 0},
    {"a planned-node annotation on a pod no TFJob controls is no reservation", "ReplicaSet", false,
     "a", NULL, 0},
    {"a planned-node annotation on a pod without an owner is no reservation", NULL, false, "a",
     NULL, 0},
    {"a pod kube-scheduler nominated for a node is charged there", NULL, false, NULL, "a", 6},
    {"a forged planned node does not hide where the pod is nominated", NULL, false, "b", "a", 6},
    {"a pod neither bound, planned nor nominated takes nothing", NULL, false, NULL, NULL, 0},
};

static void run_loose_case(void **state)
{
	const struct loose_case *k = *state;
	struct world w;
	world_init(&w);
	node(&w, "a", 8);
	node(&w, "b", 8);
	loose_pod(&w, "p", k->owner, k->gated, k->planned, k->nominated, 6);
	struct drake_cluster c;
	drake_cluster_init(&c);
	char msg[256];
	assert_int_equal(
	    admit_snapshot(&w.nodes, &w.pods, TF_CACHES(&w.jobs), &c, NULL, msg, sizeof(msg)),
	    DRAKE_OK);
	if (snap_node(&c, "a")->used.gpu != k->used_a)
		fail_msg("case '%s': a has %lld GPUs used", k->name,
		         (long long)snap_node(&c, "a")->used.gpu);
	drake_cluster_release(&c);
	world_release(&w);
}

static void test_a_gang_is_not_planned_into_room_a_preemptor_was_nominated_for(void **state)
{
	struct world w;
	world_init(&w);
	node(&w, "a", 8);
	node(&w, "b", 8);
	loose_pod(&w, "preemptor", NULL, false, NULL, "a", 6);
	gated_job(&w, "j", "2026-11-22T10:00:00Z", 2, 2, 2); /* 4 GPUs: a has 2 left */
	struct admit_result res;
	round_of(&w, true, &res);
	assert_int_equal(res.n_waves, 1);
	for (int i = 0; i < res.waves[0].n_pods; i++)
		assert_string_equal(res.waves[0].pods[i].node, "b");
	admit_result_release(&res);
	world_release(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_the_first_job_starts_whole_on_one_node_and_the_next_waits),
	    cmocka_unit_test(
	        test_planned_and_bound_pods_take_capacity_and_their_jobs_are_not_readmitted),
	    cmocka_unit_test(
	        test_backfill_starts_a_small_job_behind_a_big_one_and_strict_fifo_does_not),
	    cmocka_unit_test(test_a_job_whose_pods_are_not_all_created_yet_is_not_considered),
	    cmocka_unit_test(test_a_recreated_member_of_a_running_job_is_planned_alone_and_first),
	    cmocka_unit_test(test_quantities_may_be_numbers_and_bad_ones_are_reported),
	    cmocka_unit_test(test_the_ungate_patch_writes_the_plan_before_removing_the_gate),
	    cmocka_unit_test(test_the_ungate_patch_pins_a_pod_to_its_planned_node_and_the_waves),
	    cmocka_unit_test(test_the_snapshot_rebuilds_vgpus_from_pods_with_a_gpuid),
	    cmocka_unit_test(test_a_kubeshare_job_fills_an_open_vgpu_then_opens_new_ones),
	    cmocka_unit_test(test_a_bad_share_annotation_makes_the_job_invalid),
	    cmocka_unit_test(test_the_ungate_patch_of_a_shared_pod_writes_its_gpuid),
	    cmocka_unit_test(test_a_chief_joins_the_wave_after_the_ps_and_counts_in_size_and_min),
	    cmocka_unit_test(
	        test_the_chief_counts_toward_the_minimum_so_a_job_without_room_for_it_waits),
	    cmocka_unit_test(test_a_recreated_chief_rejoins_its_jobs_wave),
	    cmocka_unit_test(
	        test_a_member_whose_node_is_gone_is_replanned_without_taking_a_reservation),
	    cmocka_unit_test(test_a_real_node_advertising_a_dozen_resources_is_read_whole),
	    cmocka_unit_test(
	        test_a_52_cpu_job_goes_whole_onto_the_one_64_cpu_node_not_over_two_32s),
	    cmocka_unit_test(test_an_extended_resource_only_one_node_has_is_planned_only_there),
	    cmocka_unit_test(test_every_skipped_node_is_listed_up_to_the_limit_then_counted),
	    cmocka_unit_test(test_two_nodes_of_one_name_are_both_left_out_and_reported),
	    cmocka_unit_test(test_a_gang_is_not_planned_into_room_a_preemptor_was_nominated_for),
	};
	enum { N = sizeof(tests) / sizeof(tests[0]) };
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
	struct CMUnitTest all[N + COUNT(beyond_cases) + COUNT(skip_cases) + COUNT(req_cases) +
	                      COUNT(loose_cases)];
	size_t n = 0;
	for (size_t i = 0; i < N; i++)
		all[n++] = tests[i];
	for (size_t i = 0; i < COUNT(beyond_cases); i++)
		all[n++] = (struct CMUnitTest){beyond_cases[i].name, run_beyond_case, NULL, NULL,
		                               (void *)&beyond_cases[i]};
	for (size_t i = 0; i < COUNT(skip_cases); i++)
		all[n++] = (struct CMUnitTest){skip_cases[i].name, run_skip_case, NULL, NULL,
		                               (void *)&skip_cases[i]};
	for (size_t i = 0; i < COUNT(req_cases); i++)
		all[n++] = (struct CMUnitTest){req_cases[i].name, run_req_case, NULL, NULL,
		                               (void *)&req_cases[i]};
	for (size_t i = 0; i < COUNT(loose_cases); i++)
		all[n++] = (struct CMUnitTest){loose_cases[i].name, run_loose_case, NULL, NULL,
		                               (void *)&loose_cases[i]};
	return _cmocka_run_group_tests("admit", all, n, NULL, NULL);
}
