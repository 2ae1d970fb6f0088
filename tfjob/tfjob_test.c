/*
 * tfjob_test.c - cmocka tests for TFJob decoding (Kubeflow and DRAGON
 * layouts, defaults, every validation message), replica naming and the
 * TF_CONFIG builder (dense and sparse forms, max-instances workers, limits).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "tfjob/tfconfig.h"
#include "kind/job_codec.h"
#include "tfjob/tfjob.h"

static char msg[256];

#define TMPL "{\"spec\":{\"containers\":[{\"name\":\"tensorflow\",\"image\":\"tf\"}]}}"
#define TMPL_PORT(p)                                                                               \
	"{\"spec\":{\"containers\":[{\"name\":\"sidecar\"},{\"name\":\"tensorflow\",\"ports\":[{"  \
	"\"name\":\"tfjob-port\",\"containerPort\":" #p "}]}]}}"
#define META "\"metadata\":{\"name\":\"job1\",\"namespace\":\"ml\",\"uid\":\"u-1\"}"

/* DRAGON's README job: top-level fields, 1 PS + 4 workers, min 1, max 4. */
static const char *DRAGON_JOB =
    "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\"," META ",\"spec\":{"
    "\"max-instances\":4,\"min-instances\":1,\"cleanPodPolicy\":\"All\",\"tfReplicaSpecs\":{"
    "\"PS\":{\"replicas\":1,\"restartPolicy\":\"OnFailure\",\"template\":" TMPL_PORT(
        2222) "},"
              "\"Worker\":{\"replicas\":4,\"restartPolicy\":\"OnFailure\",\"template\":" TMPL
              "}}}}";

static drake_err decode(const char *text, struct job *job, bool *managed, json_t **keep)
{
	json_error_t err;
	json_t *o = json_loads(text, 0, &err);
	if (!o)
		fail_msg("bad test JSON: %s at %d", err.text, err.position);
	msg[0] = '\0';
	drake_err e = tfjob_decode(o, job, managed, msg, sizeof(msg));
	if (keep)
		*keep = o;
	else
		json_decref(o);
	return e;
}

static void test_dragon_readme_job_decodes_with_top_level_fields(void **state)
{
	struct job job;
	bool managed;
	json_t *o;
	assert_int_equal(decode(DRAGON_JOB, &job, &managed, &o), DRAKE_OK);
	assert_true(managed);
	assert_true(job.dragon_layout);
	assert_string_equal(job.name, "job1");
	assert_int_equal(job.rs[JOB_PS].replicas, 1);
	assert_int_equal(job.rs[JOB_WORKER].replicas, 4);
	assert_int_equal(job.min_instances, 1);
	assert_int_equal(job.max_instances, 4);
	assert_int_equal(job.clean, JOB_CLEAN_ALL);
	assert_int_equal(job.rs[JOB_WORKER].restart, JOB_RESTART_ON_FAILURE);
	assert_int_equal(job.rs[JOB_WORKER].port, 2222);
	assert_false(job.rs[JOB_CHIEF].present);
	assert_int_equal(job_replica_slots(&job, JOB_WORKER), 4);
	json_decref(o);
}

static void test_kubeflow_layout_and_defaults(void **state)
{
	struct job job;
	bool managed;
	assert_int_equal(
	    decode("{" META
	           ",\"spec\":{\"runPolicy\":{\"backoffLimit\":3,\"activeDeadlineSeconds\":60,"
	           "\"ttlSecondsAfterFinished\":10},\"successPolicy\":\"AllWorkers\","
	           "\"tfReplicaSpecs\":{\"ps\":{\"template\":" TMPL_PORT(
	               3333) "},"
	                     "\"worker\":{\"replicas\":2,\"template\":" TMPL "}}}}",
	           &job, &managed, NULL),
	    DRAKE_OK);
	assert_false(job.dragon_layout);
	assert_int_equal(job.rs[JOB_PS].replicas, 1); /* default */
	assert_int_equal(job.rs[JOB_PS].port, 3333);
	assert_int_equal(job.rs[JOB_PS].restart, JOB_RESTART_NEVER);
	assert_int_equal(job.clean, JOB_CLEAN_NONE); /* Kubeflow's TFJob default */
	assert_int_equal(job.min_instances, 2);      /* default: Worker.replicas */
	assert_int_equal(job.max_instances, 2);
	assert_int_equal(job.backoff_limit, 3);
	assert_int_equal(job.deadline_s, 60);
	assert_int_equal(job.ttl_s, 10);
	assert_int_equal(job.success, JOB_SUCCESS_ALL_WORKERS);
}

static void test_master_is_chief_and_managed_by_is_respected(void **state)
{
	struct job job;
	bool managed;
	assert_int_equal(
	    decode("{" META ",\"spec\":{\"tfReplicaSpecs\":{\"Master\":{\"template\":" TMPL "}}}}",
	           &job, &managed, NULL),
	    DRAKE_OK);
	assert_true(job.rs[JOB_CHIEF].present);
	assert_true(job_is_master_role(&job, JOB_CHIEF, 0));
	assert_int_equal(decode("{" META ",\"spec\":{\"runPolicy\":{\"managedBy\":\"kubeflow.org/"
	                        "training-operator\"},\"tfReplicaSpecs\":{}}}",
	                        &job, &managed, NULL),
	                 DRAKE_OK);
	assert_false(managed); /* not ours, not even validated */
	assert_int_equal(decode("{" META
	                        ",\"spec\":{\"runPolicy\":{\"managedBy\":\"" TF_MANAGED_BY_DRAKE
	                        "\"},\"tfReplicaSpecs\":{\"Worker\":{\"template\":" TMPL "}}}}",
	                        &job, &managed, NULL),
	                 DRAKE_OK);
	assert_true(managed);
}

static void test_invalid_jobs_name_the_problem(void **state)
{
	static const struct {
		const char *json, *want;
	} bad[] = {
	    {"{" META ",\"spec\":{}}", "tfReplicaSpecs is missing"},
	    {"{" META ",\"spec\":{\"tfReplicaSpecs\":{\"Boss\":{}}}}", "unknown replica type Boss"},
	    {"{" META ",\"spec\":{\"tfReplicaSpecs\":{\"PS\":{\"template\":" TMPL "}}}}",
	     "needs a Worker or a Chief"},
	    {"{" META
	     ",\"spec\":{\"tfReplicaSpecs\":{\"Worker\":{\"replicas\":\"2\",\"template\":" TMPL
	     "}}}}",
	     "Worker.replicas must be an integer"},
	    {"{" META
	     ",\"spec\":{\"tfReplicaSpecs\":{\"Worker\":{\"replicas\":1001,\"template\":" TMPL
	     "}}}}",
	     "between 0 and 1000"},
	    {"{" META ",\"spec\":{\"tfReplicaSpecs\":{\"Chief\":{\"replicas\":2,\"template\":" TMPL
	     "}}}}",
	     "Chief.replicas must be between 0 and 1"},
	    {"{" META ",\"spec\":{\"tfReplicaSpecs\":{\"Worker\":{\"template\":{\"spec\":{"
	     "\"containers\":[{\"name\":\"main\"}]}}}}}}",
	     "no container named \"tensorflow\""},
	    {"{" META ",\"spec\":{\"tfReplicaSpecs\":{\"Worker\":{}}}}", "containers is missing"},
	    {"{" META ",\"spec\":{\"tfReplicaSpecs\":{\"Worker\":{\"restartPolicy\":\"Sometimes\","
	     "\"template\":" TMPL "}}}}",
	     "restartPolicy Sometimes"},
	    {"{" META ",\"spec\":{\"min-instances\":3,\"max-instances\":2,\"tfReplicaSpecs\":{"
	     "\"Worker\":{\"replicas\":2,\"template\":" TMPL "}}}}",
	     "min-instances (3) is above"},
	    {"{" META
	     ",\"spec\":{\"max-instances\":2,\"tfReplicaSpecs\":{\"Worker\":{\"replicas\":3,"
	     "\"template\":" TMPL "}}}}",
	     "outside [min-instances"},
	    {"{" META ",\"spec\":{\"cleanPodPolicy\":\"Some\",\"tfReplicaSpecs\":{\"Worker\":{"
	     "\"template\":" TMPL "}}}}",
	     "cleanPodPolicy Some"},
	    {"{" META
	     ",\"spec\":{\"runPolicy\":{\"backoffLimit\":-1},\"tfReplicaSpecs\":{\"Worker\":{"
	     "\"template\":" TMPL "}}}}",
	     "backoffLimit must be between"},
	    {"{" META ",\"spec\":{\"tfReplicaSpecs\":{\"Worker\":{\"template\":{\"spec\":{"
	     "\"containers\":[{\"name\":\"tensorflow\",\"ports\":[{\"name\":\"tfjob-port\","
	     "\"containerPort\":70000}]}]}}}}}}",
	     "not a port number"},
	    {"{\"metadata\":{\"name\":\"a-name-that-is-far-too-long-for-service-names-to-fit\","
	     "\"namespace\":\"ml\",\"uid\":\"u\"},\"spec\":{}}",
	     "DNS-1035 label of at most 49"},
	    {"{\"metadata\":{\"name\":\"9lives\",\"namespace\":\"ml\",\"uid\":\"u\"},\"spec\":{}}",
	     "DNS-1035"},
	    {"{\"metadata\":{\"name\":\"x\",\"uid\":\"u\"},\"spec\":{}}", "metadata.namespace"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct job job;
		bool managed;
		drake_err e = decode(bad[i].json, &job, &managed, NULL);
		if (e != DRAKE_EINVAL || !strstr(msg, bad[i].want))
			fail_msg("case %zu: got %s '%s', want '%s'", i, drake_strerror(e), msg,
			         bad[i].want);
	}
}

static void test_replica_names_and_their_limit(void **state)
{
	struct job job = {.name = "mnist", .ns = "ml"};
	char buf[JOB_SERVICE_NAME_MAX + 1];
	assert_int_equal(job_replica_name(&job, JOB_WORKER, 1, buf, sizeof(buf)), DRAKE_OK);
	assert_string_equal(buf, "mnist-worker-1");
	assert_int_equal(job_replica_name(&job, JOB_EVALUATOR, 0, buf, sizeof(buf)), DRAKE_OK);
	assert_string_equal(buf, "mnist-evaluator-0");
	assert_int_equal(job_replica_name(&job, JOB_PS, JOB_MAX_REPLICAS, buf, sizeof(buf)),
	                 DRAKE_EINVAL);
	/* the longest valid job name still fits with the longest type and index */
	memset(job.name, 'a', JOB_NAME_MAX);
	job.name[JOB_NAME_MAX] = '\0';
	assert_int_equal(job_replica_name(&job, JOB_EVALUATOR, 999, buf, sizeof(buf)), DRAKE_OK);
	assert_int_equal(strlen(buf), JOB_SERVICE_NAME_MAX);
	job.name[JOB_NAME_MAX] = 'a';
	job.name[JOB_NAME_MAX + 1] = '\0';
	assert_int_equal(job_replica_name(&job, JOB_EVALUATOR, 999, buf, sizeof(buf)),
	                 DRAKE_ELIMIT);
}

static void test_tf_config_lists_max_instances_workers(void **state)
{
	struct job job;
	bool managed;
	json_t *o;
	/* README job but only 2 workers started of max 4 */
	const char *two = "{" META ",\"spec\":{\"max-instances\":4,\"min-instances\":1,"
	                  "\"tfReplicaSpecs\":{\"PS\":{\"template\":" TMPL "},"
	                  "\"Worker\":{\"replicas\":2,\"template\":" TMPL "}}}}";
	assert_int_equal(decode(two, &job, &managed, &o), DRAKE_OK);
	char *cfg = tf_config_json(&job, JOB_WORKER, 1, NULL);
	assert_string_equal(
	    cfg, "{\"cluster\":{\"ps\":[\"job1-ps-0.ml.svc:2222\"],\"worker\":["
	         "\"job1-worker-0.ml.svc:2222\",\"job1-worker-1.ml.svc:2222\","
	         "\"job1-worker-2.ml.svc:2222\",\"job1-worker-3.ml.svc:2222\"]},"
	         "\"task\":{\"type\":\"worker\",\"index\":1},\"environment\":\"cloud\"}");
	free(cfg);
	cfg = tf_config_json(&job, JOB_PS, 0, "cluster.local");
	assert_non_null(strstr(cfg, "\"job1-ps-0.ml.svc.cluster.local:2222\""));
	assert_non_null(strstr(cfg, "\"task\":{\"type\":\"ps\",\"index\":0}"));
	free(cfg);
	/* a worker index beyond max-instances has no TF_CONFIG */
	assert_null(tf_config_json(&job, JOB_WORKER, 4, NULL));
	char big[TF_CLUSTER_DOMAIN_MAX + 2];
	memset(big, 'd', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_null(tf_config_json(&job, JOB_WORKER, 0, big));
	assert_true(tf_config_wanted(&job));
	assert_true(job_replica_starts(&job, JOB_WORKER, 1));
	assert_false(job_replica_starts(&job, JOB_WORKER, 2));
	json_decref(o);
}

static void test_tf_config_with_chief_evaluator_and_sparse_form(void **state)
{
	struct job job;
	bool managed;
	json_t *o;
	const char *j = "{" META ",\"spec\":{\"enableDynamicWorker\":true,\"tfReplicaSpecs\":{"
	                "\"Evaluator\":{\"template\":" TMPL "},\"Chief\":{\"template\":" TMPL "},"
	                "\"PS\":{\"replicas\":2,\"template\":" TMPL_PORT(
	                    4000) "},"
	                          "\"Worker\":{\"replicas\":3,\"template\":" TMPL "}}}}";
	assert_int_equal(decode(j, &job, &managed, &o), DRAKE_OK);
	char *cfg = tf_config_json(&job, JOB_WORKER, 2, NULL);
	assert_string_equal(
	    cfg, "{\"cluster\":{\"ps\":[\"job1-ps-0.ml.svc:4000\",\"job1-ps-1.ml.svc:4000\"],"
	         "\"worker\":{\"2\":\"job1-worker-2.ml.svc:2222\"}},"
	         "\"task\":{\"type\":\"worker\",\"index\":2},\"environment\":\"cloud\"}");
	free(cfg);
	job.dynamic_worker = false; /* the dense form lists every type, chief first */
	cfg = tf_config_json(&job, JOB_EVALUATOR, 0, NULL);
	assert_non_null(
	    strstr(cfg, "{\"cluster\":{\"chief\":[\"job1-chief-0.ml.svc:2222\"],\"ps\":["));
	assert_non_null(strstr(cfg, "\"evaluator\":[\"job1-evaluator-0.ml.svc:2222\"]}"));
	free(cfg);
	json_decref(o);
	/* one replica in all: not distributed, no TF_CONFIG */
	assert_int_equal(
	    decode("{" META ",\"spec\":{\"tfReplicaSpecs\":{\"Worker\":{\"template\":" TMPL "}}}}",
	           &job, &managed, NULL),
	    DRAKE_OK);
	assert_false(tf_config_wanted(&job));
}

/* A Kubeflow job of 1 PS, an optional chief and 4 workers with the given
 * schedulingPolicy and extra spec fields. */
static drake_err kubeflow_gang(const char *policy, const char *extra, bool chief, struct job *job)
{
	char text[2048];
	snprintf(text, sizeof(text),
	         "{" META ",\"spec\":{%s\"runPolicy\":{\"schedulingPolicy\":%s},"
	         "\"tfReplicaSpecs\":{%s\"PS\":{\"replicas\":1,\"template\":" TMPL "},"
	         "\"Worker\":{\"replicas\":4,\"template\":" TMPL "}}}}",
	         extra, policy, chief ? "\"Chief\":{\"template\":" TMPL "}," : "");
	bool managed;
	return decode(text, job, &managed, NULL);
}

static void test_kubeflow_min_available_gives_the_gang_minimum(void **state)
{
	struct job job;
	assert_int_equal(kubeflow_gang("{\"minAvailable\":3}", "", false, &job), DRAKE_OK);
	assert_int_equal(job.min_instances, 2); /* 3 pods: the PS and 2 workers */
	assert_int_equal(job.max_instances, 4);
	assert_int_equal(job.min_available, 3);
	assert_int_equal(kubeflow_gang("{\"minAvailable\":3}", "", true, &job), DRAKE_OK);
	assert_int_equal(job.min_instances, 1); /* the chief counts */
	assert_int_equal(kubeflow_gang("{\"minAvailable\":1}", "", false, &job), DRAKE_OK);
	assert_int_equal(job.min_instances, 0);
	/* Kubeflow's default, every replica */
	assert_int_equal(kubeflow_gang("{\"minAvailable\":5}", "", false, &job), DRAKE_OK);
	assert_int_equal(job.min_instances, 4);
	/* absent: every worker, as before */
	assert_int_equal(kubeflow_gang("{\"queue\":\"q\"}", "", false, &job), DRAKE_OK);
	assert_int_equal(job.min_instances, 4);
	assert_int_equal(job.min_available, -1);
	/* DRAGON's min-instances wins when both say the same */
	assert_int_equal(kubeflow_gang("{\"minAvailable\":3}", "\"min-instances\":2,", false, &job),
	                 DRAKE_OK);
	assert_int_equal(job.min_instances, 2);
}

static void test_kubeflow_scheduling_policy_contradictions_are_refused(void **state)
{
	struct job job;
	assert_int_equal(kubeflow_gang("{\"minAvailable\":0}", "", false, &job), DRAKE_EINVAL);
	assert_non_null(
	    strstr(msg, "minAvailable (0) is below the 1 PS the job cannot run without"));
	assert_int_equal(kubeflow_gang("{\"minAvailable\":1}", "", true, &job), DRAKE_EINVAL);
	assert_non_null(strstr(msg, "below the 2 PS and the chief"));
	assert_int_equal(kubeflow_gang("{\"minAvailable\":6}", "", false, &job), DRAKE_EINVAL);
	assert_non_null(strstr(msg, "minAvailable (6) is above the job's 5 replicas"));
	assert_int_equal(kubeflow_gang("{\"minAvailable\":4}", "\"min-instances\":1,", false, &job),
	                 DRAKE_EINVAL);
	assert_non_null(strstr(msg, "minAvailable (4) contradicts spec.min-instances (1)"));
	assert_int_equal(kubeflow_gang("{\"minAvailable\":\"3\"}", "", false, &job), DRAKE_EINVAL);
	assert_non_null(strstr(msg, "minAvailable must be an integer"));
	assert_int_equal(kubeflow_gang("[]", "", false, &job), DRAKE_EINVAL);
	assert_non_null(strstr(msg, "schedulingPolicy must be an object"));
	assert_int_equal(kubeflow_gang("{\"priorityClass\":\"Not_A_Name\"}", "", false, &job),
	                 DRAKE_EINVAL);
	assert_non_null(strstr(msg, "priorityClass must be the name of a PriorityClass"));
	assert_int_equal(kubeflow_gang("{\"scheduleTimeoutSeconds\":0}", "", false, &job),
	                 DRAKE_EINVAL);
	assert_non_null(strstr(msg, "scheduleTimeoutSeconds must be between 1"));
	assert_int_equal(kubeflow_gang("{\"priorityClass\":\"high\",\"scheduleTimeoutSeconds\":90,"
	                               "\"minResources\":{\"cpu\":\"1\"}}",
	                               "", false, &job),
	                 DRAKE_OK);
	assert_string_equal(job.priority_class, "high");
	assert_int_equal(job.schedule_timeout_s, 90);
}

static void test_refusal_record_round_trips_and_malformed_ones_are_ignored(void **state)
{
	/* at the second's fraction: a node change earlier in the same second
	 * must not count as one after the refusal (drake_refusal_may_retry) */
	struct job_refusal r = {.tries = 3, .at_s = 1795949074.81, .until_s = 1795949134.81};
	snprintf(r.pod, sizeof(r.pod), "job1-worker-0");
	snprintf(r.why, sizeof(r.why), "persistentvolumeclaim \"x\" not found");
	char *v = job_refusal_value(&r);
	struct job_refusal back;
	assert_true(job_refusal_decode(v, &back));
	free(v);
	assert_int_equal(back.tries, 3);
	assert_true(fabs(back.at_s - r.at_s) < 1e-3 && fabs(back.until_s - r.until_s) < 1e-3);
	assert_string_equal(back.pod, "job1-worker-0");
	assert_string_equal(back.why, r.why);
	assert_false(job_refusal_decode(NULL, &back));
	assert_false(job_refusal_decode(
	    "{\"tries\":0,\"at\":1,\"until\":2,\"pod\":\"p\",\"why\":\"w\"}", &back));
	assert_false(job_refusal_decode(
	    "{\"tries\":1,\"at\":\"x\",\"until\":2,\"pod\":\"p\",\"why\":\"w\"}", &back));
	assert_false(job_refusal_decode("not json", &back));
	assert_int_equal(back.tries, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_dragon_readme_job_decodes_with_top_level_fields),
	    cmocka_unit_test(test_kubeflow_layout_and_defaults),
	    cmocka_unit_test(test_master_is_chief_and_managed_by_is_respected),
	    cmocka_unit_test(test_invalid_jobs_name_the_problem),
	    cmocka_unit_test(test_replica_names_and_their_limit),
	    cmocka_unit_test(test_tf_config_lists_max_instances_workers),
	    cmocka_unit_test(test_tf_config_with_chief_evaluator_and_sparse_form),
	    cmocka_unit_test(test_kubeflow_min_available_gives_the_gang_minimum),
	    cmocka_unit_test(test_kubeflow_scheduling_policy_contradictions_are_refused),
	    cmocka_unit_test(test_refusal_record_round_trips_and_malformed_ones_are_ignored),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
