/*
 * pytorchjob_test.c - the PyTorchJob kind: the shapes of Kubeflow's own
 * examples decode, each replica gets the environment the training operator
 * gives it, the pods and Services carry the kind's names, the status rules
 * follow the kind, and every field drake cannot honour is refused or
 * explained, naming it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "kind/pod_codec.h"
#include "kind/status.h"
#include "pytorchjob/pytorchjob.h"

#define CONTAINER(extra)                                                                           \
	"{\"spec\":{\"containers\":[{\"name\":\"pytorch\",\"image\":\"img\"" extra "}]}}"

/* The training operator's examples, as shapes: simple and mnist-gloo (a
 * Master and a Worker, OnFailure), elastic echo (Workers only, c10d,
 * min 1 max 2), elastic imagenet (the same with metrics for an HPA). */
#define SIMPLE                                                                                     \
	"{\"pytorchReplicaSpecs\":{\"Master\":{\"replicas\":1,\"restartPolicy\":\"OnFailure\","    \
	"\"template\":" CONTAINER("") "},\"Worker\":{\"replicas\":1,\"restartPolicy\":"            \
	                              "\"OnFailure\",\"template\":" CONTAINER("") "}}}"
#define MNIST_GLOO                                                                                 \
	"{\"pytorchReplicaSpecs\":{\"Master\":{\"replicas\":1,\"restartPolicy\":\"OnFailure\","    \
	"\"template\":" CONTAINER(                                                                 \
	    ",\"args\":[\"--backend\",\"gloo\"],\"resources\":{\"limits\":{"                       \
	    "\"nvidia.com/gpu\":1}}") "},\"Worker\":{\"replicas\":1,"                              \
	                              "\"restartPolicy\":\"OnFailure\","                           \
	                              "\"template\":" CONTAINER(",\"args\":[\"--backend\","        \
	                                                        "\"gloo\"]") "}}}"
#define ECHO                                                                                       \
	"{\"elasticPolicy\":{\"rdzvBackend\":\"c10d\",\"minReplicas\":1,\"maxReplicas\":2,"        \
	"\"maxRestarts\":100},\"pytorchReplicaSpecs\":{\"Worker\":{\"replicas\":2,"                \
	"\"template\":" CONTAINER(",\"command\":[\"python\",\"-m\",\"torch.distributed.run\","     \
	                          "\"--rdzv_backend=c10d\",\"./echo.py\"]") "}}}"
#define IMAGENET                                                                                   \
	"{\"elasticPolicy\":{\"rdzvBackend\":\"c10d\",\"minReplicas\":1,\"maxReplicas\":3,"        \
	"\"maxRestarts\":100,\"metrics\":[{\"type\":\"Resource\",\"resource\":{\"name\":\"cpu\","  \
	"\"target\":{\"type\":\"Utilization\",\"averageUtilization\":80}}}]},"                     \
	"\"pytorchReplicaSpecs\":{\"Worker\":{\"replicas\":2,\"restartPolicy\":\"OnFailure\","     \
	"\"template\":" CONTAINER(",\"resources\":{\"requests\":{\"cpu\":4}}") "}}}"

static json_t *object(const char *name, const char *spec)
{
	char *b = NULL;
	if (asprintf(&b,
	             "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"PyTorchJob\",\"metadata\":{"
	             "\"name\":\"%s\",\"namespace\":\"ml\",\"uid\":\"u-%s\"},\"spec\":%s}",
	             name, name, spec) < 0)
		fail();
	json_error_t e;
	json_t *o = json_loads(b, 0, &e);
	free(b);
	if (!o)
		fail_msg("bad JSON: %s", e.text);
	return o;
}

static json_t *decoded(const char *name, const char *spec, struct job *job)
{
	json_t *o = object(name, spec);
	bool managed;
	char msg[256];
	if (pytorchjob_decode(o, job, &managed, msg, sizeof(msg)) != DRAKE_OK)
		fail_msg("%s: %s", name, msg);
	assert_true(managed);
	return o;
}

/* The env of replica (t, i) as a JSON array. */
static json_t *env_of(const struct job *job, enum job_rtype t, int i)
{
	json_t *pod = NULL;
	char msg[128];
	struct job_pod_opts po = {0};
	char *s = job_pod_json(job, t, i, &po, msg, sizeof(msg));
	if (!s)
		fail_msg("pod %d: %s", i, msg);
	pod = json_loads(s, 0, NULL);
	free(s);
	json_t *env = json_incref(json_object_get(
	    json_array_get(json_object_get(json_object_get(pod, "spec"), "containers"), 0), "env"));
	json_decref(pod);
	return env;
}

static const char *env_get(json_t *env, const char *name)
{
	for (size_t i = 0; i < json_array_size(env); i++)
		if (!strcmp(json_string_value(json_object_get(json_array_get(env, i), "name")),
		            name))
			return json_string_value(json_object_get(json_array_get(env, i), "value"));
	return NULL;
}

static void test_the_operators_examples_decode_with_their_minimum_and_maximum(void **state)
{
	const struct {
		const char *name, *spec;
		bool master;
		int min, max, slots;
		bool notice;
	} cases[] = {
	    {"pytorch-simple", SIMPLE, true, 1, 1, 1, false},
	    {"pytorch-dist-mnist-gloo", MNIST_GLOO, true, 1, 1, 1, false},
	    {"elastic-example-echo", ECHO, false, 1, 2, 2, false},
	    {"elastic-example-imagenet", IMAGENET, false, 1, 3, 3, true},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct job job;
		json_t *o = decoded(cases[i].name, cases[i].spec, &job);
		assert_ptr_equal(job.kind, &pytorchjob_kind);
		assert_int_equal(job.rs[JOB_CHIEF].present, cases[i].master);
		assert_false(job.rs[JOB_PS].present);
		assert_int_equal(job.min_instances, cases[i].min);
		assert_int_equal(job.max_instances, cases[i].max);
		assert_int_equal(job_replica_slots(&job, JOB_WORKER), cases[i].slots);
		assert_int_equal(job.rs[JOB_WORKER].restart, JOB_RESTART_ON_FAILURE);
		assert_int_equal(job.rs[JOB_WORKER].port, PT_DEFAULT_PORT);
		assert_int_equal(job.clean, JOB_CLEAN_NONE);
		if (cases[i].notice)
			assert_non_null(strstr(job.notice, "elasticPolicy.metrics"));
		else
			assert_string_equal(job.notice, "");
		json_decref(o);
	}
}

static void test_a_master_and_its_workers_get_master_addr_world_size_and_rank(void **state)
{
	struct job job;
	json_t *o =
	    decoded("sim",
	            "{\"nprocPerNode\":\"1\",\"pytorchReplicaSpecs\":{\"Master\":{"
	            "\"template\":" CONTAINER(",\"ports\":[{\"name\":\"pytorchjob-port\","
	                                      "\"containerPort\":29500}]") "},"
	                                                                   "\"Worker\":{"
	                                                                   "\"replicas\""
	                                                                   ":3,"
	                                                                   "\"template\""
	                                                                   ":" CONTAINER("") "}}}",
	            &job);
	json_t *m = env_of(&job, JOB_CHIEF, 0), *w = env_of(&job, JOB_WORKER, 2);
	assert_string_equal(env_get(m, "MASTER_ADDR"), "sim-master-0");
	assert_string_equal(env_get(m, "MASTER_PORT"), "29500");
	assert_string_equal(env_get(w, "MASTER_ADDR"), "sim-master-0");
	assert_string_equal(env_get(w, "PET_MASTER_PORT"), "29500");
	assert_string_equal(env_get(m, "WORLD_SIZE"), "4");
	assert_string_equal(env_get(m, "RANK"), "0");
	assert_string_equal(env_get(w, "RANK"), "3"); /* workers rank after the Master */
	assert_string_equal(env_get(w, "PET_NODE_RANK"), "3");
	assert_string_equal(env_get(w, "PET_NNODES"), "4");
	assert_string_equal(env_get(w, "PET_NPROC_PER_NODE"), "1");
	assert_string_equal(env_get(w, "PYTHONUNBUFFERED"), "0");
	assert_null(env_get(w, "PET_RDZV_ENDPOINT"));
	assert_null(env_get(w, "TF_CONFIG"));
	json_decref(m);
	json_decref(w);
	json_decref(o);
}

static void test_an_elastic_job_gets_torchruns_rendezvous_and_min_max_nodes(void **state)
{
	struct job job;
	json_t *o = decoded("echo", ECHO, &job);
	json_t *w = env_of(&job, JOB_WORKER, 1);
	assert_string_equal(env_get(w, "PET_RDZV_ENDPOINT"), "echo-worker-0:23456");
	assert_string_equal(env_get(w, "PET_RDZV_BACKEND"), "c10d");
	assert_string_equal(env_get(w, "PET_NNODES"), "1:2");
	assert_string_equal(env_get(w, "PET_MAX_RESTARTS"), "100");
	assert_null(env_get(w, "MASTER_ADDR"));
	assert_null(env_get(w, "PET_RDZV_ID"));
	assert_null(env_get(w, "PET_STANDALONE"));
	json_decref(w);
	json_decref(o);
	o = decoded("full",
	            "{\"elasticPolicy\":{\"rdzvHost\":\"etcd.ml\",\"rdzvPort\":2379,"
	            "\"rdzvBackend\":\"etcd-v2\",\"rdzvId\":\"run-7\",\"rdzvConf\":[{\"key\":"
	            "\"timeout\",\"value\":\"900\"},{\"key\":\"last_call_timeout\",\"value\":"
	            "\"30\"}],\"standalone\":true,\"nProcPerNode\":2},\"pytorchReplicaSpecs\":{"
	            "\"Worker\":{\"replicas\":2,\"template\":" CONTAINER("") "}}}",
	            &job);
	w = env_of(&job, JOB_WORKER, 0);
	assert_string_equal(env_get(w, "PET_RDZV_ENDPOINT"), "etcd.ml:2379");
	assert_string_equal(env_get(w, "PET_RDZV_BACKEND"), "etcd-v2");
	assert_string_equal(env_get(w, "PET_NNODES"), "2"); /* neither min nor max: replicas */
	assert_string_equal(env_get(w, "PET_RDZV_ID"), "run-7");
	assert_string_equal(env_get(w, "PET_RDZV_CONF"), "timeout=900,last_call_timeout=30");
	assert_string_equal(env_get(w, "PET_STANDALONE"), "");
	assert_string_equal(env_get(w, "PET_NPROC_PER_NODE"), "2");
	json_decref(w);
	json_decref(o);
}

static void test_pods_and_services_carry_the_kinds_names(void **state)
{
	struct job job;
	json_t *o = decoded("simple", SIMPLE, &job);
	char msg[128];
	struct job_pod_opts po = {0};
	char *s = job_pod_json(&job, JOB_CHIEF, 0, &po, msg, sizeof(msg));
	assert_non_null(s);
	json_t *pod = json_loads(s, 0, NULL);
	json_t *meta = json_object_get(pod, "metadata");
	json_t *lab = json_object_get(meta, "labels");
	assert_string_equal(json_string_value(json_object_get(meta, "name")), "simple-master-0");
	assert_string_equal(json_string_value(json_object_get(lab, JOB_LABEL_OPERATOR)),
	                    "pytorchjob-controller");
	assert_string_equal(json_string_value(json_object_get(lab, JOB_LABEL_TYPE)), "master");
	assert_string_equal(json_string_value(json_object_get(lab, JOB_LABEL_ROLE)), "master");
	json_t *own = json_array_get(json_object_get(meta, "ownerReferences"), 0);
	assert_string_equal(json_string_value(json_object_get(own, "kind")), "PyTorchJob");
	assert_string_equal(json_string_value(json_object_get(own, "apiVersion")),
	                    "kubeflow.org/v1");
	json_t *spec = json_object_get(pod, "spec");
	assert_string_equal(json_string_value(json_object_get(spec, "restartPolicy")), "OnFailure");
	json_t *port = json_array_get(
	    json_object_get(json_array_get(json_object_get(spec, "containers"), 0), "ports"), 0);
	assert_string_equal(json_string_value(json_object_get(port, "name")), "pytorchjob-port");
	assert_int_equal(json_integer_value(json_object_get(port, "containerPort")), 23456);
	json_decref(pod);
	free(s);
	s = job_service_json(&job, JOB_WORKER, 0);
	assert_non_null(strstr(s, "\"name\":\"simple-worker-0\""));
	assert_non_null(strstr(s, "\"clusterIP\":\"None\""));
	assert_non_null(strstr(s, "\"name\":\"pytorchjob-port\",\"port\":23456"));
	free(s);
	json_decref(o);
}

static struct job_pod_obs obs(enum job_rtype t, int i, enum job_phase ph)
{
	return (struct job_pod_obs){.type = t, .index = i, .phase = ph, .exit_code = -1};
}

static void test_status_follows_the_kinds_rules_and_names_it(void **state)
{
	struct job job;
	struct job_verdict v;
	json_t *o = decoded("echo", ECHO, &job);
	/* elastic, no Master: one worker's agent finishing ends the job */
	struct job_pod_obs p[] = {obs(JOB_WORKER, 0, JOB_POD_RUNNING),
	                          obs(JOB_WORKER, 1, JOB_POD_SUCCEEDED)};
	job_judge(&job, p, 2, 0, 10, &v);
	assert_int_equal(v.state, JOB_STATE_SUCCEEDED);
	assert_string_equal(v.reason, "PyTorchJobSucceeded");
	assert_non_null(strstr(v.message, "PyTorchJob ml/echo"));
	json_decref(o);
	/* not elastic, no Master: every worker must finish */
	o = decoded("two",
	            "{\"pytorchReplicaSpecs\":{\"Worker\":{\"replicas\":2,\"template\":" CONTAINER(
	                "") "}}}",
	            &job);
	struct job_pod_obs q[] = {obs(JOB_WORKER, 0, JOB_POD_SUCCEEDED),
	                          obs(JOB_WORKER, 1, JOB_POD_RUNNING)};
	job_judge(&job, q, 2, 0, 10, &v);
	assert_int_equal(v.state, JOB_STATE_RUNNING);
	assert_string_equal(v.reason, "PyTorchJobRunning");
	q[1].phase = JOB_POD_SUCCEEDED;
	job_judge(&job, q, 2, 0, 10, &v);
	assert_int_equal(v.state, JOB_STATE_SUCCEEDED);
	json_decref(o);
	/* with a Master: the Master's end is the job's */
	o = decoded("simple", SIMPLE, &job);
	struct job_pod_obs r[] = {obs(JOB_CHIEF, 0, JOB_POD_RUNNING),
	                          obs(JOB_WORKER, 0, JOB_POD_SUCCEEDED)};
	job_judge(&job, r, 2, 0, 10, &v);
	assert_int_equal(v.state, JOB_STATE_RUNNING);
	r[0].phase = JOB_POD_SUCCEEDED;
	job_judge(&job, r, 2, 0, 10, &v);
	assert_int_equal(v.state, JOB_STATE_SUCCEEDED);
	json_decref(o);
}

static void test_fields_drake_cannot_honour_are_refused_naming_them(void **state)
{
	const struct {
		const char *spec, *want;
	} cases[] = {
	    {"{\"pytorchReplicaSpecs\":{\"PS\":{\"template\":" CONTAINER("") "}}}",
	     "pytorchReplicaSpecs: unknown replica type PS"},
	    {"{\"pytorchReplicaSpecs\":{\"Master\":{\"replicas\":2,\"template\":" CONTAINER(
	         "") "}}}",
	     "pytorchReplicaSpecs.Master.replicas must be between 0 and 1"},
	    {"{\"pytorchReplicaSpecs\":{\"Worker\":{\"template\":{\"spec\":{\"containers\":[{"
	     "\"name\":\"tensorflow\"}]}}}}}",
	     "pytorchReplicaSpecs.Worker: no container named \"pytorch\""},
	    {"{\"elasticPolicy\":{\"minReplicas\":1},\"pytorchReplicaSpecs\":{\"Worker\":{"
	     "\"template\":" CONTAINER("") "}}}",
	     "elasticPolicy needs both minReplicas and maxReplicas, or neither"},
	    {"{\"elasticPolicy\":{\"minReplicas\":3,\"maxReplicas\":2},\"pytorchReplicaSpecs\":{"
	     "\"Worker\":{\"replicas\":2,\"template\":" CONTAINER("") "}}}",
	     "elasticPolicy.minReplicas (3) is above maxReplicas (2)"},
	    {"{\"elasticPolicy\":{\"minReplicas\":1,\"maxReplicas\":2},\"pytorchReplicaSpecs\":{"
	     "\"Worker\":{\"replicas\":4,\"template\":" CONTAINER("") "}}}",
	     "pytorchReplicaSpecs.Worker.replicas (4) is outside [minReplicas 1, maxReplicas 2]"},
	    {"{\"elasticPolicy\":{\"rdzvBackend\":\"zookeeper\"},\"pytorchReplicaSpecs\":{"
	     "\"Worker\":{\"template\":" CONTAINER("") "}}}",
	     "elasticPolicy.rdzvBackend must be c10d, etcd or etcd-v2"},
	    {"{\"elasticPolicy\":{\"rdzvPort\":70000},\"pytorchReplicaSpecs\":{\"Worker\":{"
	     "\"template\":" CONTAINER("") "}}}",
	     "elasticPolicy.rdzvPort must be between 1 and 65535"},
	    {"{\"elasticPolicy\":{\"rdzvConf\":[{\"key\":\"a=b\",\"value\":\"1\"}]},"
	     "\"pytorchReplicaSpecs\":{\"Worker\":{\"template\":" CONTAINER("") "}}}",
	     "elasticPolicy.rdzvConf[0] must have a key"},
	    {"{\"elasticPolicy\":{\"metrics\":{}},\"pytorchReplicaSpecs\":{\"Worker\":{"
	     "\"template\":" CONTAINER("") "}}}",
	     "elasticPolicy.metrics must be a list"},
	    {"{\"elasticPolicy\":{},\"pytorchReplicaSpecs\":{\"Master\":{\"template\":" CONTAINER(
	         "") "}}}",
	     "elasticPolicy needs a Worker replica spec"},
	    {"{\"nprocPerNode\":\"many\",\"pytorchReplicaSpecs\":{\"Worker\":{"
	     "\"template\":" CONTAINER("") "}}}",
	     "spec.nprocPerNode must be auto, cpu, gpu or a count"},
	    {"{\"runPolicy\":{\"schedulingPolicy\":{\"minAvailable\":3}},\"pytorchReplicaSpecs\":{"
	     "\"Master\":{\"template\":" CONTAINER("") "},\"Worker\":{\"template\":" CONTAINER(
	         "") "}}}",
	     "runPolicy.schedulingPolicy.minAvailable (3) must be between 1"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *o = object("bad", cases[i].spec);
		struct job job;
		bool managed;
		char msg[256] = "";
		if (pytorchjob_decode(o, &job, &managed, msg, sizeof(msg)) != DRAKE_EINVAL ||
		    !strstr(msg, cases[i].want))
			fail_msg("case %zu: want \"%s\", got \"%s\"", i, cases[i].want, msg);
		json_decref(o);
	}
}

static void test_a_job_another_controller_manages_is_left_alone(void **state)
{
	json_t *o = object("theirs", "{\"runPolicy\":{\"managedBy\":\"kubeflow.org/"
	                             "training-operator\"},\"pytorchReplicaSpecs\":{}}");
	struct job job;
	bool managed = true;
	char msg[128];
	assert_int_equal(pytorchjob_decode(o, &job, &managed, msg, sizeof(msg)), DRAKE_OK);
	assert_false(managed);
	json_decref(o);
	o = object("ours",
	           "{\"runPolicy\":{\"managedBy\":\"" PT_MANAGED_BY_DRAKE "\"},"
	           "\"pytorchReplicaSpecs\":{\"Worker\":{\"template\":" CONTAINER("") "}}}");
	assert_int_equal(pytorchjob_decode(o, &job, &managed, msg, sizeof(msg)), DRAKE_OK);
	assert_true(managed);
	json_decref(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_the_operators_examples_decode_with_their_minimum_and_maximum),
	    cmocka_unit_test(test_a_master_and_its_workers_get_master_addr_world_size_and_rank),
	    cmocka_unit_test(test_an_elastic_job_gets_torchruns_rendezvous_and_min_max_nodes),
	    cmocka_unit_test(test_pods_and_services_carry_the_kinds_names),
	    cmocka_unit_test(test_status_follows_the_kinds_rules_and_names_it),
	    cmocka_unit_test(test_fields_drake_cannot_honour_are_refused_naming_them),
	    cmocka_unit_test(test_a_job_another_controller_manages_is_left_alone),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
