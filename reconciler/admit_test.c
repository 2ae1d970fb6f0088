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

struct world {
	struct kube_cache jobs, pods, nodes;
};

static void put(struct kube_cache *c, const char *text)
{
	json_error_t err;
	json_t *o = json_loads(text, 0, &err);
	if (!o)
		fail_msg("bad test JSON: %s: %s", err.text, text);
	json_t *old = NULL;
	bool changed;
	assert_int_equal(kube_cache_put(c, o, 1, &old, &changed), DRAKE_OK);
	json_decref(old);
	json_decref(o);
}

static void node(struct world *w, const char *name, int gpus)
{
	char b[512];
	snprintf(b, sizeof(b),
	         "{\"metadata\":{\"name\":\"%s\",\"uid\":\"n-%s\",\"resourceVersion\":\"1\"},"
	         "\"spec\":{},\"status\":{\"allocatable\":{\"cpu\":\"32\",\"memory\":\"256Gi\","
	         "\"nvidia.com/gpu\":\"%d\",\"pods\":\"110\"}}}",
	         name, name, gpus);
	put(&w->nodes, b);
}

/* A DRAGON-layout TFJob: 1 PS, `workers` workers of `gpu` GPUs each. */
static void job(struct world *w, const char *name, const char *created, int workers, int min,
                int gpu)
{
	char b[2048];
	snprintf(
	    b, sizeof(b),
	    "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":"
	    "\"%s\",\"namespace\":\"ml\",\"uid\":\"uid-%s\",\"resourceVersion\":\"1\","
	    "\"creationTimestamp\":\"%s\"},\"spec\":{\"min-instances\":%d,\"max-instances\":%d,"
	    "\"tfReplicaSpecs\":{\"PS\":{\"replicas\":1,\"template\":{\"spec\":{\"containers\":"
	    "[{\"name\":\"tensorflow\",\"image\":\"tf\",\"resources\":{\"limits\":{\"cpu\":\"1\","
	    "\"memory\":\"1Gi\"}}}]}}},\"Worker\":{\"replicas\":%d,\"template\":{\"spec\":"
	    "{\"containers\":[{\"name\":\"tensorflow\",\"image\":\"tf\",\"resources\":{\"limits\":"
	    "{\"cpu\":\"1\",\"memory\":\"1Gi\",\"nvidia.com/gpu\":\"%d\",\"drake.dev/gang\":"
	    "\"1\"}}}]}}}}}}",
	    name, name, created, min, workers, workers, gpu);
	put(&w->jobs, b);
}

/* A pod of a job: gated, or planned on / bound to a node. */
static void pod(struct world *w, const char *job, const char *type, int i, int gpu,
                const char *planned, const char *bound)
{
	char b[2048], ann[256] = "", node[128] = "", gates[128] = "";
	if (planned)
		snprintf(ann, sizeof(ann),
		         ",\"annotations\":{\"drake.dev/planned-node\":\"%s\",\"drake.dev/gang\":"
		         "\"uid-%s.1\",\"drake.dev/gang-size\":\"3\"}",
		         planned, job);
	if (bound)
		snprintf(node, sizeof(node), "\"nodeName\":\"%s\",", bound);
	if (!planned && !bound)
		snprintf(gates, sizeof(gates),
		         "\"schedulingGates\":[{\"name\":\"drake.dev/gang\"}],");
	snprintf(
	    b, sizeof(b),
	    "{\"metadata\":{\"name\":\"%s-%s-%d\",\"namespace\":\"ml\",\"uid\":\"p-%s-%s-%d\","
	    "\"resourceVersion\":\"1\",\"ownerReferences\":[{\"apiVersion\":\"kubeflow.org/v1\","
	    "\"kind\":\"TFJob\",\"name\":\"%s\",\"uid\":\"uid-%s\",\"controller\":true}]%s},"
	    "\"spec\":{%s%s\"containers\":[{\"name\":\"tensorflow\",\"resources\":{\"limits\":"
	    "{\"cpu\":\"1\",\"memory\":\"1Gi\",\"nvidia.com/gpu\":\"%d\"}}}]},"
	    "\"status\":{\"phase\":\"Pending\"}}",
	    job, type, i, job, type, i, job, job, ann, node, gates, gpu);
	put(&w->pods, b);
}

static void gated_job(struct world *w, const char *name, const char *created, int workers, int min,
                      int gpu)
{
	job(w, name, created, workers, min, gpu);
	pod(w, name, "ps", 0, 0, NULL, NULL);
	for (int i = 0; i < workers; i++)
		pod(w, name, "worker", i, gpu, NULL, NULL);
}

static void world_init(struct world *w)
{
	kube_cache_init(&w->jobs);
	kube_cache_init(&w->pods);
	kube_cache_init(&w->nodes);
}

static void world_release(struct world *w)
{
	kube_cache_release(&w->jobs);
	kube_cache_release(&w->pods);
	kube_cache_release(&w->nodes);
}

static void round_of(struct world *w, bool backfill, struct admit_result *res)
{
	struct admit_options o = {.backfill = backfill, .now_s = 1700000000};
	char msg[256];
	assert_int_equal(admit_round(&w->jobs, &w->pods, &w->nodes, &o, res, msg, sizeof(msg)),
	                 DRAKE_OK);
}

static void test_the_first_job_starts_whole_on_one_node_and_the_next_waits(void **state)
{
	struct world w;
	world_init(&w);
	node(&w, "gpu-a", 8);
	node(&w, "gpu-b", 8);
	gated_job(&w, "first", "2026-11-22T10:00:00Z", 7, 2, 1);  /* 1 PS + 7 x 1 GPU */
	gated_job(&w, "second", "2026-11-22T10:00:05Z", 4, 4, 4); /* 16 GPUs: after first, no */
	struct admit_result res;
	round_of(&w, true, &res);
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
	struct admit_wave wv = {.gang = "uid-x.5", .size = 3, .min = 2};
	json_t *gated = json_loads("{\"metadata\":{\"name\":\"x-ps-0\"},\"spec\":{"
	                           "\"schedulingGates\":[{\"name\":\"other\"},{\"name\":"
	                           "\"drake.dev/gang\"}]}}",
	                           0, NULL);
	char *p = admit_ungate_patch(gated, &wv, "gpu-a");
	assert_string_equal(
	    p, "[{\"op\":\"test\",\"path\":\"/spec/schedulingGates/1/name\",\"value\":\"drake.dev/"
	       "gang\"},{\"op\":\"add\",\"path\":\"/metadata/annotations\",\"value\":{\"drake.dev/"
	       "planned-node\":\"gpu-a\",\"drake.dev/gang\":\"uid-x.5\",\"drake.dev/gang-size\":"
	       "\"3\",\"drake.dev/gang-min\":\"2\"}},{\"op\":\"remove\",\"path\":\"/spec/"
	       "schedulingGates/1\"}]");
	free(p);
	json_decref(gated);
	json_t *annotated = json_loads("{\"metadata\":{\"annotations\":{\"a\":\"b\"}},\"spec\":{"
	                               "\"schedulingGates\":[{\"name\":\"drake.dev/gang\"}]}}",
	                               0, NULL);
	p = admit_ungate_patch(annotated, &wv, "gpu-a");
	assert_non_null(strstr(p, "\"path\":\"/metadata/annotations/drake.dev~1planned-node\""));
	free(p);
	json_decref(annotated);
	json_t *ungated = json_loads("{\"spec\":{}}", 0, NULL);
	assert_null(admit_ungate_patch(ungated, &wv, "gpu-a"));
	json_decref(ungated);
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
	assert_int_equal(admit_snapshot(&w.nodes, &w.pods, &w.jobs, &c, NULL, msg, sizeof(msg)),
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
	json_t *worker = json_loads(
	    "{\"metadata\":{\"name\":\"x-worker-0\",\"annotations\":{\"kubeshare/gpu_request\":"
	    "\"0.50\",\"kubeshare/gpu_mem\":\"4Gi\"}},\"spec\":{\"schedulingGates\":[{\"name\":"
	    "\"drake.dev/gang\"}]}}",
	    0, NULL);
	char *p = admit_ungate_patch(worker, &wv, "gpu-a");
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
	json_decref(worker);
	/* A pod without annotations gets them all in one object; the PS none. */
	json_t *bare = json_loads("{\"metadata\":{\"name\":\"x-worker-0\"},\"spec\":{"
	                          "\"schedulingGates\":[{\"name\":\"drake.dev/gang\"}]}}",
	                          0, NULL);
	p = admit_ungate_patch(bare, &wv, "gpu-a");
	assert_non_null(strstr(p, "\"kubeshare/GPUID\":\"qwert\""));
	assert_non_null(strstr(p, "\"kubeshare/gpu_request\":\"0.5\""));
	assert_non_null(strstr(p, "\"kubeshare/gpu_mem\":\"4294967296\""));
	free(p);
	json_decref(bare);
	json_t *ps = json_loads("{\"metadata\":{\"name\":\"x-ps-0\"},\"spec\":{"
	                        "\"schedulingGates\":[{\"name\":\"drake.dev/gang\"}]}}",
	                        0, NULL);
	p = admit_ungate_patch(ps, &wv, "gpu-a");
	assert_null(strstr(p, "kubeshare"));
	free(p);
	json_decref(ps);
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
		json_t *chief = kube_cache_get(&w.pods, "ml", "tf-chief-0");
		char *p = admit_ungate_patch(chief, wv, wv->pods[1].node);
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
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
