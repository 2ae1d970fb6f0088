/*
 * admit_testutil.h - helpers shared by the admission tests (header only,
 * not part of the library): caches built from API objects written inline.
 * Include it after <cmocka.h>: its helpers assert.
 */
#ifndef DRAKE_RECONCILER_ADMIT_TESTUTIL_H
#define DRAKE_RECONCILER_ADMIT_TESTUTIL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "kube/cache.h"
#include "kube/node.h"
#include "kube/pod.h"
#include "gang/scale.h"
#include "reconciler/admit.h"
#include "kind/job_codec.h"
#include "tfjob/tfjob.h"

/* One kind's cache as admission reads the caches of every kind. */
#define TF_CACHES(c) (&(struct job_caches){.cache = {(c)}, .kind = {&tfjob_kind}, .n = 1})

struct world {
	struct kube_cache jobs, pods, nodes;
};

static inline void put(struct kube_cache *c, const char *text)
{
	json_error_t err;
	json_t *o = json_loads(text, 0, &err);
	if (!o)
		fail_msg("bad test JSON: %s: %s", err.text, text);
	/* Each write is a new version, as the API server makes it: a cache
	 * keeps what it holds when the resourceVersion did not move. */
	static unsigned long version;
	char rv[32];
	snprintf(rv, sizeof(rv), "%lu", ++version);
	json_t *meta = json_object_get(o, "metadata");
	if (json_is_object(meta))
		json_object_set_new(meta, "resourceVersion", json_string(rv));
	void *old = NULL;
	bool changed;
	assert_int_equal(kube_cache_put(c, o, 1, NULL, &old, &changed), DRAKE_OK);
	kube_cache_drop(c, old);
	json_decref(o);
}

/* Pods decoded outside any cache (pod_record_free() gives them back). */
static struct kube_strpool test_pool;

static inline struct kube_pod *pod_record(const char *text)
{
	json_error_t err;
	json_t *o = json_loads(text, 0, &err);
	if (!o)
		fail_msg("bad test JSON: %s: %s", err.text, text);
	struct kube_pod *p = NULL;
	char msg[160];
	assert_int_equal(kube_pod_decode(o, &test_pool, &p, msg, sizeof(msg)), DRAKE_OK);
	json_decref(o);
	return p;
}

static inline void pod_record_free(struct kube_pod *p)
{
	kube_pod_free(p, &test_pool);
}

static inline void node(struct world *w, const char *name, int gpus)
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
static inline void job(struct world *w, const char *name, const char *created, int workers, int min,
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

/* A pod of a job: gated, or planned on / bound to a node as a member of
 * the job's wave "uid-<job>.1" of gang_size pods; meta: more metadata
 * fields (",\"deletionTimestamp\":...") or "". */
static inline void pod_meta(struct world *w, const char *job, const char *type, int i, int gpu,
                            const char *planned, const char *bound, int gang_size, const char *meta)
{
	char b[2048], ann[256] = "", node[128] = "", gates[128] = "";
	if (planned)
		snprintf(ann, sizeof(ann),
		         ",\"annotations\":{\"drake.dev/planned-node\":\"%s\",\"drake.dev/gang\":"
		         "\"uid-%s.1\",\"drake.dev/gang-size\":\"%d\"}",
		         planned, job, gang_size);
	if (bound)
		snprintf(node, sizeof(node), "\"nodeName\":\"%s\",", bound);
	if (!planned && !bound)
		snprintf(gates, sizeof(gates),
		         "\"schedulingGates\":[{\"name\":\"drake.dev/gang\"}],");
	snprintf(
	    b, sizeof(b),
	    "{\"metadata\":{\"name\":\"%s-%s-%d\",\"namespace\":\"ml\",\"uid\":\"p-%s-%s-%d\","
	    "\"resourceVersion\":\"1\",\"ownerReferences\":[{\"apiVersion\":\"kubeflow.org/v1\","
	    "\"kind\":\"TFJob\",\"name\":\"%s\",\"uid\":\"uid-%s\",\"controller\":true}]%s%s},"
	    "\"spec\":{%s%s\"containers\":[{\"name\":\"tensorflow\",\"resources\":{\"limits\":"
	    "{\"cpu\":\"1\",\"memory\":\"1Gi\",\"nvidia.com/gpu\":\"%d\"}}}]},"
	    "\"status\":{\"phase\":\"Pending\"}}",
	    job, type, i, job, type, i, job, job, meta, ann, node, gates, gpu);
	put(&w->pods, b);
}

static inline void pod_in(struct world *w, const char *job, const char *type, int i, int gpu,
                          const char *planned, const char *bound, int gang_size)
{
	pod_meta(w, job, type, i, gpu, planned, bound, gang_size, "");
}

/* pod_in a wave of 3 (a PS and two workers). */
static inline void pod(struct world *w, const char *job, const char *type, int i, int gpu,
                       const char *planned, const char *bound)
{
	pod_in(w, job, type, i, gpu, planned, bound, 3);
}

static inline void gated_job(struct world *w, const char *name, const char *created, int workers,
                             int min, int gpu)
{
	job(w, name, created, workers, min, gpu);
	pod(w, name, "ps", 0, 0, NULL, NULL);
	for (int i = 0; i < workers; i++)
		pod(w, name, "worker", i, gpu, NULL, NULL);
}

static inline void world_init(struct world *w)
{
	kube_cache_init(&w->jobs);
	kube_pod_cache_init(&w->pods);
	kube_node_cache_init(&w->nodes);
}

static inline void world_release(struct world *w)
{
	kube_cache_release(&w->jobs);
	kube_cache_release(&w->pods);
	kube_cache_release(&w->nodes);
}

static inline void round_of(struct world *w, bool backfill, struct admit_result *res)
{
	struct admit_options o = {.backfill = backfill, .now_s = 1700000000};
	char msg[256];
	assert_int_equal(
	    admit_round(TF_CACHES(&w->jobs), &w->pods, &w->nodes, &o, res, msg, sizeof(msg)),
	    DRAKE_OK);
}

/* The default scaling options with the FIFO queue, for cases about the
 * adapter whose jobs are named in the order they start (the default
 * queue's order is gang/'s, tested in gang/scale_queue_test.c). */
static inline const struct drake_scale_opts *fifo_queue(void)
{
	static struct drake_scale_opts o;
	drake_scale_defaults(&o);
	o.queue = DRAKE_QUEUE_FIFO;
	return &o;
}

/* round_of() with the FIFO queue. */
static inline void fifo_round_of(struct world *w, struct admit_result *res)
{
	struct admit_options o = {.backfill = true, .now_s = 1700000000, .scale = fifo_queue()};
	char msg[256];
	assert_int_equal(
	    admit_round(TF_CACHES(&w->jobs), &w->pods, &w->nodes, &o, res, msg, sizeof(msg)),
	    DRAKE_OK);
}

#endif
