/*
 * pass_world_test.c - one pass's world (pass_world.h): every TFJob object
 * decoded once (counted through the linker's --wrap=job_decode, see the
 * Makefile), drake's jobs kept with their migration records, suspended ones
 * included; admission over the world decodes nothing again and decides
 * what it decides over the caches; the re-plan on a kept snapshot answers
 * as on a snapshot of its own, and hands back a pod whose resources that
 * snapshot cannot count.
 */
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
#include "reconciler/pass_world.h"

static int decodes;

drake_err __real_job_decode(const struct job_kind *kind, const struct json_t *obj, struct job *job,
                            bool *managed, char *msg, size_t msglen);
drake_err __wrap_job_decode(const struct job_kind *kind, const struct json_t *obj, struct job *job,
                            bool *managed, char *msg, size_t msglen);
drake_err __wrap_job_decode(const struct job_kind *kind, const struct json_t *obj, struct job *job,
                            bool *managed, char *msg, size_t msglen)
{
	decodes++;
	return __real_job_decode(kind, obj, job, managed, msg, msglen);
}

static char msg[256];

#define WORKER_TMPL                                                                                \
	"{\"spec\":{\"containers\":[{\"name\":\"tensorflow\",\"image\":\"tf\",\"resources\":{"     \
	"\"limits\":{\"cpu\":\"1\",\"memory\":\"1Gi\",\"nvidia.com/gpu\":\"1\"}}}]}}"
/* A Kubeflow-layout TFJob of one worker; run_policy and annotations are
 * JSON members (or ""). */
static void kf_job(struct world *w, const char *name, const char *run_policy,
                   const char *annotations)
{
	char b[2048];
	snprintf(b, sizeof(b),
	         "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":"
	         "\"%s\",\"namespace\":\"ml\",\"uid\":\"uid-%s\",\"creationTimestamp\":"
	         "\"2026-01-01T00:00:00Z\",\"annotations\":{%s}},\"spec\":{\"runPolicy\":{%s},"
	         "\"tfReplicaSpecs\":{\"Worker\":{\"replicas\":1,\"template\":" WORKER_TMPL "}}}}",
	         name, name, annotations, run_policy);
	put(&w->jobs, b);
}

static const struct pass_job *job_named(const struct pass_world *pw, const char *name)
{
	for (size_t i = 0; i < pw->n; i++)
		if (!strcmp(pw->jobs[i].job.name, name))
			return &pw->jobs[i];
	return NULL;
}

static void test_a_world_decodes_every_tfjob_once_and_keeps_drakes_with_their_records(void **state)
{
	struct world w;
	world_init(&w);
	node(&w, "gpu-a", 8);
	node(&w, "gpu-b", 8);
	gated_job(&w, "plain", "2026-01-01T00:00:00Z", 2, 2, 1);
	kf_job(&w, "moved", "",
	       "\"drake.dev/migrations\":\"{\\\"counts\\\":{\\\"worker-0\\\":{\\\"n\\\":2,"
	       "\\\"last\\\":1763880000}}}\"");
	kf_job(&w, "paused", "\"suspend\":true", "");
	kf_job(&w, "broken", "", "\"drake.dev/migrations\":\"not json\"");
	kf_job(&w, "theirs", "\"managedBy\":\"kubeflow.org/training-operator\"", "");
	put(&w.jobs, "{\"metadata\":{\"name\":\"bad\",\"namespace\":\"ml\",\"uid\":\"u-bad\"},"
	             "\"spec\":{\"tfReplicaSpecs\":{\"Boss\":{}}}}");
	decodes = 0;
	struct pass_world pw;
	assert_int_equal(
	    pass_world_build(&pw, &w.nodes, &w.pods, TF_CACHES(&w.jobs), msg, sizeof(msg)),
	    DRAKE_OK);
	assert_int_equal(decodes, 6); /* each object once, the snapshot's names included */
	assert_int_equal(pw.n, 4);    /* another controller's and the invalid one left out */
	assert_null(job_named(&pw, "theirs"));
	assert_null(job_named(&pw, "bad"));
	const struct pass_job *plain = job_named(&pw, "plain"), *moved = job_named(&pw, "moved");
	const struct pass_job *paused = job_named(&pw, "paused"),
	                      *broken = job_named(&pw, "broken");
	assert_non_null(plain);
	assert_non_null(paused);
	assert_true(paused->job.suspend); /* carry() still reads a suspended job's move */
	assert_non_null(pass_job_migrations(plain));
	assert_int_equal(pass_job_migrations(plain)->n_counts, 0); /* none: an empty record */
	double last;
	assert_int_equal(job_migrations_count(pass_job_migrations(moved), JOB_WORKER, 0, &last), 2);
	assert_true(broken->mg_bad);
	assert_null(pass_job_migrations(broken)); /* no move of it until it is fixed */
	assert_true(strlen(broken->mg_why) > 0);
	assert_true(plain->created > 0);
	/* the snapshot is the one admission built for itself from the caches */
	struct drake_cluster c;
	drake_cluster_init(&c);
	assert_int_equal(
	    admit_snapshot(&w.nodes, &w.pods, TF_CACHES(&w.jobs), &c, NULL, msg, sizeof(msg)),
	    DRAKE_OK);
	assert_int_equal(pw.c.n, c.n);
	assert_int_equal(pw.c.names.n, c.names.n);
	for (int i = 0; i < c.names.n; i++)
		assert_string_equal(pw.c.names.name[i], c.names.name[i]);
	assert_memory_equal(&pw.c.used_total, &c.used_total, sizeof(c.used_total));
	drake_cluster_release(&c);
	/* what is kept after the pass borrows nothing of the caches */
	pass_world_drop_jobs(&pw);
	assert_null(pw.jobs);
	assert_int_equal(pw.n, 0);
	assert_int_equal(pw.c.n, 2);
	pass_world_release(&pw);
	world_release(&w);
}

static void
test_admission_over_a_world_decodes_nothing_again_and_decides_as_over_the_caches(void **state)
{
	struct world w;
	world_init(&w);
	node(&w, "gpu-a", 8);
	node(&w, "gpu-b", 8);
	gated_job(&w, "first", "2026-11-22T10:00:00Z", 7, 2, 1);
	gated_job(&w, "second", "2026-11-22T10:00:05Z", 4, 4, 4);
	gated_job(&w, "third", "2026-11-22T10:00:09Z", 1, 1, 1);
	/* FIFO: the pack queue would start second alone (it fills both nodes) */
	struct admit_options o = {.backfill = true, .now_s = 1700000000, .scale = fifo_queue()};
	struct admit_result over_caches, over_world;
	assert_int_equal(
	    admit_round(TF_CACHES(&w.jobs), &w.pods, &w.nodes, &o, &over_caches, msg, sizeof(msg)),
	    DRAKE_OK);
	struct pass_world pw;
	assert_int_equal(
	    pass_world_build(&pw, &w.nodes, &w.pods, TF_CACHES(&w.jobs), msg, sizeof(msg)),
	    DRAKE_OK);
	decodes = 0;
	assert_int_equal(
	    admit_round_world(&pw, &w.pods, &w.nodes, &o, &over_world, msg, sizeof(msg)), DRAKE_OK);
	assert_int_equal(decodes, 0);
	assert_int_equal(over_world.n_waves, over_caches.n_waves);
	assert_true(over_world.n_waves >= 2); /* first, and third behind second */
	for (size_t i = 0; i < over_world.n_waves; i++) {
		assert_string_equal(over_world.waves[i].job, over_caches.waves[i].job);
		assert_int_equal(over_world.waves[i].n_pods, over_caches.waves[i].n_pods);
		for (int k = 0; k < over_world.waves[i].n_pods; k++)
			assert_string_equal(over_world.waves[i].pods[k].node,
			                    over_caches.waves[i].pods[k].node);
	}
	assert_int_equal(over_world.n_waiting, over_caches.n_waiting);
	admit_result_release(&over_caches);
	admit_result_release(&over_world);
	pass_world_release(&pw);
	world_release(&w);
}

static void test_the_replan_on_a_kept_snapshot_answers_as_on_its_own(void **state)
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
	struct pass_world pw;
	assert_int_equal(
	    pass_world_build(&pw, &w.nodes, &w.pods, TF_CACHES(&w.jobs), msg, sizeof(msg)),
	    DRAKE_OK);
	pass_world_drop_jobs(&pw); /* as the reconciler keeps it */
	const char *all[] = {"b", "c", "d"}, *bd[] = {"b", "d"}, *b[] = {"b"};
	const struct {
		const char *const *cand;
		size_t n;
		drake_err e;
		const char *node;
	} cases[] = {
	    {all, 3, DRAKE_OK, "c"},    /* beside its own job first */
	    {bd, 2, DRAKE_OK, "d"},     /* never into another gang's reservation */
	    {b, 1, DRAKE_ESTATE, NULL}, /* nowhere with room */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char own[64] = "", kept[64] = "", why[256];
		assert_int_equal(admit_replan(&w.nodes, &w.pods, "ml", "j-worker-1", cases[i].cand,
		                              cases[i].n, own, sizeof(own), why, sizeof(why)),
		                 cases[i].e);
		assert_int_equal(admit_replan_on(&pw.c, &w.pods, "ml", "j-worker-1", cases[i].cand,
		                                 cases[i].n, kept, sizeof(kept), why, sizeof(why)),
		                 cases[i].e);
		assert_string_equal(kept, own);
		if (cases[i].node)
			assert_string_equal(kept, cases[i].node);
	}
	char node_[64], why[256];
	assert_int_equal(admit_replan_on(&pw.c, &w.pods, "ml", "nobody", all, 3, node_,
	                                 sizeof(node_), why, sizeof(why)),
	                 DRAKE_EINVAL);
	/* a member asking for a resource no TFJob template names: the kept
	 * snapshot cannot count it, so the caller re-plans on its own */
	put(&w.pods,
	    "{\"metadata\":{\"name\":\"j-worker-2\",\"namespace\":\"ml\",\"uid\":\"p-j-w2\","
	    "\"ownerReferences\":[{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"name\":"
	    "\"j\",\"uid\":\"uid-j\",\"controller\":true}],\"annotations\":{"
	    "\"drake.dev/planned-node\":\"a\",\"drake.dev/gang\":\"uid-j.1\","
	    "\"drake.dev/gang-size\":\"3\"}},\"spec\":{\"containers\":[{\"name\":\"tensorflow\","
	    "\"resources\":{\"limits\":{\"cpu\":\"1\",\"example.com/fpga\":\"1\"}}}]},"
	    "\"status\":{\"phase\":\"Pending\"}}");
	assert_int_equal(admit_replan_on(&pw.c, &w.pods, "ml", "j-worker-2", all, 3, node_,
	                                 sizeof(node_), why, sizeof(why)),
	                 DRAKE_ENOTFOUND);
	pass_world_release(&pw);
	world_release(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(
	        test_a_world_decodes_every_tfjob_once_and_keeps_drakes_with_their_records),
	    cmocka_unit_test(
	        test_admission_over_a_world_decodes_nothing_again_and_decides_as_over_the_caches),
	    cmocka_unit_test(test_the_replan_on_a_kept_snapshot_answers_as_on_its_own),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
