/*
 * tfconfig_test.c - TF_CONFIG as drake-train reads it: what drake's own
 * reconciler writes (built here by tfjob/tfconfig_json.c from a TFJob,
 * for every replica, dense and sparse), TensorFlow's spellings, and every
 * malformed input refused with a message naming the field.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "examples/train/tfconfig.h"
#include "tfjob/tfconfig.h"

static void parse_ok(const char *json, struct tf_config *c)
{
	char msg[512] = "";
	if (tfc_parse(json, c, msg, sizeof(msg)) != DRAKE_OK)
		fail_msg("refused %s: %s", json, msg);
}

#define TMPL "{\"spec\":{\"containers\":[{\"name\":\"tensorflow\",\"image\":\"t\"}]}}"

static void decode_job(const char *spec, struct job *job)
{
	char text[2048], msg[512];
	snprintf(text, sizeof(text),
	         "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":"
	         "\"mnist\",\"namespace\":\"ml\",\"uid\":\"u-1\"},\"spec\":%s}",
	         spec);
	json_error_t jerr;
	json_t *o = json_loads(text, 0, &jerr);
	if (!o)
		fail_msg("bad test JSON: %s", jerr.text);
	bool managed;
	if (tfjob_decode(o, job, &managed, msg, sizeof(msg)) != DRAKE_OK)
		fail_msg("tfjob_decode: %s", msg);
	json_decref(o);
}

static void test_reads_what_drakes_reconciler_writes_for_every_replica(void **state)
{
	struct job job;
	/* DRAGON's shape: 1 PS, 2 workers started of max-instances 4 */
	decode_job("{\"max-instances\":4,\"min-instances\":1,\"tfReplicaSpecs\":{"
	           "\"PS\":{\"template\":" TMPL "},"
	           "\"Worker\":{\"replicas\":2,\"template\":" TMPL "}}}",
	           &job);
	const struct {
		enum job_rtype rt;
		int index;
		enum tfc_type want;
	} replicas[] = {
	    {JOB_PS, 0, TFC_PS}, {JOB_WORKER, 0, TFC_WORKER}, {JOB_WORKER, 3, TFC_WORKER}};
	for (size_t i = 0; i < sizeof(replicas) / sizeof(replicas[0]); i++) {
		char *json =
		    tf_config_json(&job, replicas[i].rt, replicas[i].index, "cluster.local");
		assert_non_null(json);
		struct tf_config c;
		parse_ok(json, &c);
		assert_int_equal(c.type, replicas[i].want);
		assert_int_equal(c.index, replicas[i].index);
		assert_int_equal(c.slots[TFC_PS], 1);
		assert_int_equal(c.slots[TFC_WORKER], 4); /* max-instances, not the live count */
		assert_int_equal(c.slots[TFC_CHIEF], 0);
		assert_string_equal(c.ep[TFC_PS][0], "mnist-ps-0.ml.svc.cluster.local:2222");
		assert_string_equal(c.ep[TFC_WORKER][3],
		                    "mnist-worker-3.ml.svc.cluster.local:2222");
		char host[TFC_HOST_MAX + 1], msg[256];
		int port;
		assert_int_equal(
		    tfc_split_address(c.ep[TFC_PS][0], host, sizeof(host), &port, msg, sizeof(msg)),
		    DRAKE_OK);
		assert_string_equal(host, "mnist-ps-0.ml.svc.cluster.local");
		assert_int_equal(port, 2222);
		tfc_release(&c);
		free(json);
	}
}

static void test_reads_the_chief_evaluator_and_the_sparse_form(void **state)
{
	struct job job;
	decode_job("{\"enableDynamicWorker\":true,\"tfReplicaSpecs\":{"
	           "\"Chief\":{\"template\":" TMPL "},\"Evaluator\":{\"template\":" TMPL "},"
	           "\"PS\":{\"template\":" TMPL "},\"Worker\":{\"replicas\":3,\"template\":" TMPL
	           "}}}",
	           &job);
	/* sparse: a worker sees the PS and itself, keyed by index */
	char *json = tf_config_json(&job, JOB_WORKER, 2, NULL);
	struct tf_config c;
	parse_ok(json, &c);
	assert_int_equal(c.type, TFC_WORKER);
	assert_int_equal(c.index, 2);
	assert_int_equal(c.slots[TFC_WORKER], 3);
	assert_null(c.ep[TFC_WORKER][0]);
	assert_string_equal(c.ep[TFC_WORKER][2], "mnist-worker-2.ml.svc:2222");
	assert_int_equal(c.slots[TFC_PS], 1);
	tfc_release(&c);
	free(json);
	/* dense: the chief, and the evaluator the operator lists too */
	job.dynamic_worker = false;
	const enum job_rtype types[] = {JOB_CHIEF, JOB_EVALUATOR};
	const enum tfc_type want[] = {TFC_CHIEF, TFC_EVALUATOR};
	for (int i = 0; i < 2; i++) {
		json = tf_config_json(&job, types[i], 0, NULL);
		parse_ok(json, &c);
		assert_int_equal(c.type, want[i]);
		assert_int_equal(c.slots[TFC_CHIEF], 1);
		assert_int_equal(c.slots[TFC_WORKER], 3);
		assert_string_equal(c.ep[TFC_CHIEF][0], "mnist-chief-0.ml.svc:2222");
		tfc_release(&c);
		free(json);
	}
}

static void test_accepts_tensorflows_own_spellings(void **state)
{
	struct tf_config c;
	/* master is the chief's old name; index may be a string; no index is 0;
	 * unknown jobs, environment and rpc_layer are ignored */
	parse_ok("{\"cluster\":{\"master\":[\"m:1\"],\"ps\":[\"p:2\"],\"other\":[\"o:3\"]},"
	         "\"task\":{\"type\":\"master\"},\"environment\":\"cloud\",\"rpc_layer\":\"grpc\"}",
	         &c);
	assert_int_equal(c.type, TFC_CHIEF);
	assert_int_equal(c.index, 0);
	assert_int_equal(c.slots[TFC_CHIEF], 1);
	tfc_release(&c);
	parse_ok("{\"cluster\":{\"ps\":[\"[::1]:2222\"],\"worker\":[\"a:1\",\"b:2\"]},"
	         "\"task\":{\"type\":\"Worker\",\"index\":\"1\"}}",
	         &c);
	assert_int_equal(c.type, TFC_WORKER);
	assert_int_equal(c.index, 1);
	char host[TFC_HOST_MAX + 1], msg[256];
	int port;
	assert_int_equal(
	    tfc_split_address(c.ep[TFC_PS][0], host, sizeof(host), &port, msg, sizeof(msg)),
	    DRAKE_OK);
	assert_string_equal(host, "::1");
	assert_int_equal(port, 2222);
	tfc_release(&c);
	/* an evaluator need not be in the cluster (TensorFlow leaves it out) */
	parse_ok("{\"cluster\":{\"ps\":[\"p:2\"],\"worker\":[\"w:1\"]},"
	         "\"task\":{\"type\":\"evaluator\",\"index\":0}}",
	         &c);
	assert_int_equal(c.type, TFC_EVALUATOR);
	tfc_release(&c);
}

static void test_refuses_malformed_tf_config_naming_the_field(void **state)
{
	const struct {
		const char *json, *want;
	} cases[] = {
	    {"", "not JSON"},
	    {"{\"cluster\":", "not JSON"},
	    {"[1,2]", "expected a JSON object"},
	    {"{\"task\":{\"type\":\"ps\"}}", "\"cluster\" is missing"},
	    {"{\"cluster\":[],\"task\":{}}", "\"cluster\" is missing or not an object"},
	    {"{\"cluster\":{\"ps\":[\"p:1\"]}}", "\"task\" is missing"},
	    {"{\"cluster\":{\"ps\":[\"p:1\"]},\"task\":{\"index\":0}}", "task.type is missing"},
	    {"{\"cluster\":{\"ps\":[\"p:1\"]},\"task\":{\"type\":\"boss\"}}",
	     "task.type \"boss\" is not chief, ps, worker or evaluator"},
	    {"{\"cluster\":{\"ps\":[\"p:1\"]},\"task\":{\"type\":\"ps\",\"index\":-1}}",
	     "task.index must be a whole number"},
	    {"{\"cluster\":{\"ps\":[\"p:1\"]},\"task\":{\"type\":\"ps\",\"index\":1.5}}",
	     "task.index must be a whole number"},
	    {"{\"cluster\":{\"ps\":[\"p:1\"]},\"task\":{\"type\":\"ps\",\"index\":\"x\"}}",
	     "task.index \"x\""},
	    {"{\"cluster\":{\"ps\":[\"p:1\"]},\"task\":{\"type\":\"worker\",\"index\":0}}",
	     "the task worker 0 is not in cluster.worker (0 endpoints listed)"},
	    {"{\"cluster\":{\"ps\":[\"p:1\"],\"worker\":[\"w:1\"]},\"task\":{\"type\":\"worker\","
	     "\"index\":3}}",
	     "the task worker 3 is not in cluster.worker (1 endpoint listed)"},
	    {"{\"cluster\":{\"ps\":\"p:1\"},\"task\":{\"type\":\"ps\"}}",
	     "cluster.ps: expected a list"},
	    {"{\"cluster\":{\"ps\":[1]},\"task\":{\"type\":\"ps\"}}",
	     "cluster.ps[0]: expected a \"host:port\" string"},
	    {"{\"cluster\":{\"ps\":[\"nohost\"]},\"task\":{\"type\":\"ps\"}}",
	     "cluster.ps[0]: \"nohost\" has no port"},
	    {"{\"cluster\":{\"ps\":[\"p:0\"]},\"task\":{\"type\":\"ps\"}}",
	     "the port must be a number in 1..65535"},
	    {"{\"cluster\":{\"ps\":[\"p:65536\"]},\"task\":{\"type\":\"ps\"}}",
	     "the port must be a number in 1..65535"},
	    {"{\"cluster\":{\"ps\":[\"p:22x\"]},\"task\":{\"type\":\"ps\"}}",
	     "the port must be a number"},
	    {"{\"cluster\":{\"ps\":[\":2222\"]},\"task\":{\"type\":\"ps\"}}", "has no host"},
	    {"{\"cluster\":{\"ps\":[\"::1:2222\"]},\"task\":{\"type\":\"ps\"}}",
	     "an IPv6 address needs brackets"},
	    {"{\"cluster\":{\"ps\":[\"a b:1\"]},\"task\":{\"type\":\"ps\"}}",
	     "a character a host name cannot"},
	    {"{\"cluster\":{\"worker\":{\"01\":\"w:1\"}},\"task\":{\"type\":\"worker\"}}",
	     "cluster.worker: key \"01\" is not a task index"},
	    {"{\"cluster\":{\"worker\":{\"1\":\"w:1\"}},\"task\":{\"type\":\"worker\"}}",
	     "the task worker 0 is not in cluster.worker"},
	    {"{\"cluster\":{\"chief\":[\"c:1\"],\"master\":[\"m:1\"]},\"task\":{\"type\":"
	     "\"chief\"}}",
	     "cluster names the chief twice"},
	    {"{\"cluster\":{\"ps\":[\"p:1\"],\"ps\":[\"q:1\"]},\"task\":{\"type\":\"ps\"}}",
	     "duplicate object key"},
	    {"{\"cluster\":{\"worker\":{\"4096\":\"w:1\"}},\"task\":{\"type\":\"worker\"}}",
	     "index 4096 is over the limit of 4095"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tf_config c;
		char msg[512] = "";
		drake_err e = tfc_parse(cases[i].json, &c, msg, sizeof(msg));
		if (e == DRAKE_OK || !strstr(msg, cases[i].want))
			fail_msg("case %zu %s: got %d \"%s\", want \"%s\"", i, cases[i].json, e,
			         msg, cases[i].want);
	}
}

static void test_refuses_input_over_its_limits(void **state)
{
	/* TFC_JSON_MAX bytes of TF_CONFIG */
	char *big = malloc(TFC_JSON_MAX + 2);
	assert_non_null(big);
	memset(big, ' ', TFC_JSON_MAX + 1);
	big[TFC_JSON_MAX + 1] = '\0';
	struct tf_config c;
	char msg[512];
	assert_int_equal(tfc_parse(big, &c, msg, sizeof(msg)), DRAKE_ELIMIT);
	assert_non_null(strstr(msg, "over the limit"));
	free(big);
	/* TFC_TASKS_MAX endpoints of one type */
	size_t n = TFC_TASKS_MAX + 1, len = 64 + n * 8;
	char *many = malloc(len), *p = many;
	assert_non_null(many);
	p += sprintf(p, "{\"cluster\":{\"worker\":[");
	for (size_t i = 0; i < n; i++)
		p += sprintf(p, "%s\"w:1\"", i ? "," : "");
	sprintf(p, "]},\"task\":{\"type\":\"worker\"}}");
	assert_int_equal(tfc_parse(many, &c, msg, sizeof(msg)), DRAKE_ELIMIT);
	assert_non_null(strstr(msg, "cluster.worker: 4097 endpoints, over the limit of 4096"));
	free(many);
	/* a host over TFC_HOST_MAX characters */
	char json[512], host[TFC_HOST_MAX + 2];
	memset(host, 'h', sizeof(host) - 1);
	host[sizeof(host) - 1] = '\0';
	snprintf(json, sizeof(json), "{\"cluster\":{\"ps\":[\"%s:1\"]},\"task\":{\"type\":\"ps\"}}",
	         host);
	assert_int_equal(tfc_parse(json, &c, msg, sizeof(msg)), DRAKE_EINVAL);
	assert_non_null(strstr(msg, "the host is over 253 characters"));
	tfc_release(&c); /* safe after a refusal */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_reads_what_drakes_reconciler_writes_for_every_replica),
	    cmocka_unit_test(test_reads_the_chief_evaluator_and_the_sparse_form),
	    cmocka_unit_test(test_accepts_tensorflows_own_spellings),
	    cmocka_unit_test(test_refuses_malformed_tf_config_naming_the_field),
	    cmocka_unit_test(test_refuses_input_over_its_limits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
