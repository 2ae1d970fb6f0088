/* codec_test.c - the wire codec against golden request/response pairs built
 * by hand from the extender/v1 reference, plus every malformed-input case. */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "extender/codec.h"
#include "extender/codec_internal.h"

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		fail_msg("cannot open golden file %s", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static void assert_json_equal(const char *got, const char *want_path)
{
	size_t n;
	char *want = slurp(want_path, &n);
	json_t *a = json_loads(got, 0, NULL);
	json_t *b = json_loadb(want, n, 0, NULL);
	assert_non_null(a);
	assert_non_null(b);
	if (!json_equal(a, b))
		fail_msg("%s:\n got: %s\nwant: %s", want_path, got, want);
	json_decref(a);
	json_decref(b);
	free(want);
}

static struct ext_limits limits(void)
{
	struct ext_limits lim;
	ext_limits_default(&lim);
	return lim;
}

/* Filter and prioritize: every golden request, answered as the pass-through
 * extender answers it, must match its golden response exactly. */
static void test_args_goldens_round_trip(void **state)
{
	static const struct {
		const char *name;
		bool prioritize;
		bool cache_mode;
		size_t n_nodes;
	} cases[] = {
	    {"filter-node-names", false, true, 3},     {"filter-full-nodes", false, false, 2},
	    {"filter-lower-case", false, true, 2},     {"prioritize-node-names", true, true, 2},
	    {"prioritize-full-nodes", true, false, 2},
	};
	struct ext_limits lim = limits();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char path[256];
		size_t len;
		snprintf(path, sizeof(path), "tests/golden/%s.request.json", cases[i].name);
		char *body = slurp(path, &len);
		struct ext_args args;
		char msg[256];
		assert_int_equal(ext_args_decode(body, len, &lim, &args, msg, sizeof(msg)),
		                 DRAKE_OK);
		assert_int_equal(args.node_cache_mode, cases[i].cache_mode);
		assert_int_equal(args.n_nodes, cases[i].n_nodes);
		char *out;
		if (cases[i].prioritize) {
			out = ext_prioritize_encode(&args, NULL);
		} else {
			enum ext_verdict v[8] = {0};
			struct ext_filter_result res = {.verdicts = v};
			out = ext_filter_encode(&args, &res);
		}
		assert_non_null(out);
		snprintf(path, sizeof(path), "tests/golden/%s.response.json", cases[i].name);
		assert_json_equal(out, path);
		free(out);
		ext_args_release(&args);
		free(body);
	}
}

static void test_pod_fields_and_labels_are_decoded(void **state)
{
	size_t len;
	char *body = slurp("tests/golden/filter-node-names.request.json", &len);
	struct ext_limits lim = limits();
	struct ext_args args;
	char msg[256];
	assert_int_equal(ext_args_decode(body, len, &lim, &args, msg, sizeof(msg)), DRAKE_OK);
	assert_string_equal(args.pod.name, "mnist-worker-1");
	assert_string_equal(args.pod.ns, "ml");
	assert_string_equal(args.pod.uid, "5b9c0d2e-0000-4000-8000-000000000001");
	assert_string_equal(ext_pod_label(&args.pod, "training.kubeflow.org/job-name"), "mnist");
	assert_null(ext_pod_label(&args.pod, "absent"));
	assert_string_equal(args.node_names[2], "gpu-c");
	ext_args_release(&args);
	free(body);
}

static void test_only_drake_annotations_are_kept(void **state)
{
	const char *body = "{\"Pod\":{\"metadata\":{\"name\":\"p\",\"annotations\":{\"big\":\"x\","
	                   "\"drake.dev/planned-node\":\"gpu-a\",\"drake.dev/gang-size\":\"8\"}}},"
	                   "\"NodeNames\":[\"gpu-a\"]}";
	struct ext_limits lim = limits();
	for (int tree = 0; tree < 2; tree++) {
		struct ext_args args;
		char msg[256];
		drake_err e =
		    tree ? codec_args_decode_tree(body, strlen(body), &lim, &args, msg, sizeof(msg))
		         : ext_args_decode(body, strlen(body), &lim, &args, msg, sizeof(msg));
		assert_int_equal(e, DRAKE_OK);
		assert_int_equal(args.pod.n_annotations, 2);
		assert_string_equal(ext_pod_annotation(&args.pod, "drake.dev/planned-node"),
		                    "gpu-a");
		assert_string_equal(ext_pod_annotation(&args.pod, "drake.dev/gang-size"), "8");
		assert_null(ext_pod_annotation(&args.pod, "big"));
		ext_args_release(&args);
	}
}

static void test_the_controller_owner_uid_is_decoded_by_both_decoders(void **state)
{
	static const struct {
		const char *refs, *want;
	} cases[] = {
	    {"", ""},
	    {",\"ownerReferences\":null", ""},
	    {",\"ownerReferences\":[]", ""},
	    {",\"ownerReferences\":[{\"kind\":\"TFJob\",\"uid\":\"job-uid\",\"controller\":true}]",
	     "job-uid"},
	    {",\"ownerReferences\":[{\"uid\":\"not-me\"},{\"uid\":\"not-me-either\","
	     "\"controller\":false},{\"uid\":\"job-uid\",\"controller\":true,"
	     "\"blockOwnerDeletion\":true},{\"uid\":\"second\",\"controller\":true}]",
	     "job-uid"},
	    {",\"ownerReferences\":[{\"UID\":\"job-uid\",\"Controller\":true}]", "job-uid"},
	};
	struct ext_limits lim = limits();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char body[512];
		snprintf(body, sizeof(body),
		         "{\"Pod\":{\"metadata\":{\"name\":\"p\"%s}},\"NodeNames\":[\"a\"]}",
		         cases[i].refs);
		struct ext_args fast, tree;
		char msg[256];
		if (!codec_args_decode_fast(body, strlen(body), &lim, &fast))
			fail_msg("case %zu: the fast path refused it", i);
		assert_int_equal(
		    codec_args_decode_tree(body, strlen(body), &lim, &tree, msg, sizeof(msg)),
		    DRAKE_OK);
		if (strcmp(fast.pod.owner_uid, cases[i].want) ||
		    strcmp(tree.pod.owner_uid, cases[i].want))
			fail_msg("case %zu: owner \"%s\" / \"%s\", want \"%s\"", i,
			         fast.pod.owner_uid, tree.pod.owner_uid, cases[i].want);
		ext_args_release(&fast);
		ext_args_release(&tree);
	}
	const char *pod = "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ml\","
	                  "\"ownerReferences\":[{\"uid\":\"job-uid\",\"controller\":true}]},"
	                  "\"spec\":{\"nodeName\":\"gpu-a\"}}";
	struct ext_pod p;
	char *node;
	char msg[256];
	assert_int_equal(ext_pod_object_decode(pod, strlen(pod), &lim, &p, &node, msg, sizeof(msg)),
	                 DRAKE_OK);
	assert_string_equal(p.owner_uid, "job-uid");
	assert_string_equal(node, "gpu-a");
	ext_pod_release(&p);
	free(node);
}

static void test_a_pod_without_namespace_is_in_default(void **state)
{
	const char *body = "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"NodeNames\":[\"a\"]}";
	struct ext_limits lim = limits();
	struct ext_args args;
	char msg[256];
	assert_int_equal(ext_args_decode(body, strlen(body), &lim, &args, msg, sizeof(msg)),
	                 DRAKE_OK);
	assert_string_equal(args.pod.ns, "default");
	assert_string_equal(args.pod.uid, "");
	ext_args_release(&args);
}

static json_t *encode_filter(const char *body, const enum ext_verdict *v, const char **why)
{
	struct ext_limits lim = limits();
	struct ext_args args;
	char msg[256];
	assert_int_equal(ext_args_decode(body, strlen(body), &lim, &args, msg, sizeof(msg)),
	                 DRAKE_OK);
	struct ext_filter_result res = {.verdicts = v, .reasons = why};
	char *out = ext_filter_encode(&args, &res);
	json_t *j = json_loads(out, 0, NULL);
	free(out);
	ext_args_release(&args);
	assert_non_null(j);
	return j;
}

static void test_filter_splits_nodes_into_passed_failed_and_unresolvable(void **state)
{
	enum ext_verdict v[] = {EXT_FAIL, EXT_PASS, EXT_FAIL_UNRESOLVABLE};
	const char *why[] = {"job ml/mnist: planned on b", NULL, "outside the job's domain"};
	json_t *j = encode_filter("{\"Pod\":{\"metadata\":{\"name\":\"p\"}},"
	                          "\"NodeNames\":[\"a\",\"b\",\"c\"]}",
	                          v, why);
	json_t *want = json_loads(
	    "{\"NodeNames\":[\"b\"],\"Nodes\":null,"
	    "\"FailedNodes\":{\"a\":\"job ml/mnist: planned on b\"},"
	    "\"FailedAndUnresolvableNodes\":{\"c\":\"outside the job's domain\"},\"Error\":\"\"}",
	    0, NULL);
	assert_true(json_equal(j, want));
	json_decref(j);
	json_decref(want);
}

static void test_filter_rejecting_every_node_still_sends_an_empty_node_names_list(void **state)
{
	enum ext_verdict v[] = {EXT_FAIL};
	json_t *j = encode_filter("{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"NodeNames\":[\"a\"]}",
	                          v, NULL);
	json_t *names = json_object_get(j, "NodeNames");
	assert_true(json_is_array(names));
	assert_int_equal(json_array_size(names), 0);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(j, "FailedNodes"), "a")),
	    "rejected by drake");
	json_decref(j);
}

static void test_filter_in_full_node_mode_returns_the_passing_node_objects(void **state)
{
	enum ext_verdict v[] = {EXT_FAIL, EXT_PASS};
	json_t *j = encode_filter("{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"Nodes\":{\"items\":["
	                          "{\"metadata\":{\"name\":\"a\"}},"
	                          "{\"metadata\":{\"name\":\"b\"},\"status\":{\"x\":1}}]}}",
	                          v, NULL);
	json_t *items = json_object_get(json_object_get(j, "Nodes"), "items");
	assert_int_equal(json_array_size(items), 1);
	json_t *want = json_loads("{\"metadata\":{\"name\":\"b\"},\"status\":{\"x\":1}}", 0, NULL);
	assert_true(json_equal(json_array_get(items, 0), want));
	assert_true(json_is_null(json_object_get(j, "NodeNames")));
	json_decref(want);
	json_decref(j);
}

static void test_filter_error_is_reported_in_the_error_field(void **state)
{
	struct ext_args args = {0};
	struct ext_filter_result res = {.error = "gang ml/mnist: planner failed"};
	char *out = ext_filter_encode(&args, &res);
	assert_string_equal(out, "{\"Error\":\"gang ml/mnist: planner failed\"}");
	free(out);
}

static void test_prioritize_scores_are_integers_clamped_to_0_through_10(void **state)
{
	const char *body =
	    "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"NodeNames\":[\"a\",\"b\",\"c\"]}";
	struct ext_limits lim = limits();
	struct ext_args args;
	char msg[256];
	assert_int_equal(ext_args_decode(body, strlen(body), &lim, &args, msg, sizeof(msg)),
	                 DRAKE_OK);
	int64_t scores[] = {-5, 7, 11};
	char *out = ext_prioritize_encode(&args, scores);
	assert_string_equal(out, "[{\"Host\":\"a\",\"Score\":0},{\"Host\":\"b\",\"Score\":7},"
	                         "{\"Host\":\"c\",\"Score\":10}]");
	free(out);
	ext_args_release(&args);
}

static void test_bind_goldens_produce_the_v1_binding(void **state)
{
	static const char *const names[] = {"bind", "bind-lower-case"};
	struct ext_limits lim = limits();
	for (size_t i = 0; i < 2; i++) {
		char path[256];
		size_t len;
		snprintf(path, sizeof(path), "tests/golden/%s.request.json", names[i]);
		char *body = slurp(path, &len);
		struct ext_bind_args b;
		char msg[256];
		assert_int_equal(ext_bind_decode(body, len, &lim, &b, msg, sizeof(msg)), DRAKE_OK);
		char *obj = ext_binding_object_encode(&b);
		snprintf(path, sizeof(path), "tests/golden/%s.binding.json", names[i]);
		assert_json_equal(obj, path);
		free(obj);
		ext_bind_release(&b);
		free(body);
	}
}

static void test_bind_without_uid_omits_the_precondition(void **state)
{
	const char *body =
	    "{\"PodName\":\"p\",\"PodNamespace\":\"n\",\"PodUID\":null,\"Node\":\"x\"}";
	struct ext_limits lim = limits();
	struct ext_bind_args b;
	char msg[256];
	assert_int_equal(ext_bind_decode(body, strlen(body), &lim, &b, msg, sizeof(msg)), DRAKE_OK);
	char *obj = ext_binding_object_encode(&b);
	assert_null(strstr(obj, "uid"));
	free(obj);
	ext_bind_release(&b);
}

static void test_preempt_goldens_answer_with_meta_victims(void **state)
{
	static const char *const names[] = {"preempt-meta", "preempt-full"};
	struct ext_limits lim = limits();
	for (size_t i = 0; i < 2; i++) {
		char path[256];
		size_t len;
		snprintf(path, sizeof(path), "tests/golden/%s.request.json", names[i]);
		char *body = slurp(path, &len);
		struct ext_preempt_args p;
		char msg[256];
		assert_int_equal(ext_preempt_decode(body, len, &lim, &p, msg, sizeof(msg)),
		                 DRAKE_OK);
		assert_int_equal(p.node_cache_mode, i == 0);
		char *out = ext_preempt_encode(&p, NULL);
		snprintf(path, sizeof(path), "tests/golden/%s.response.json", names[i]);
		assert_json_equal(out, path);
		free(out);
		ext_preempt_release(&p);
		free(body);
	}
}

static void test_preempt_drops_the_nodes_not_kept(void **state)
{
	size_t len;
	char *body = slurp("tests/golden/preempt-meta.request.json", &len);
	struct ext_limits lim = limits();
	struct ext_preempt_args p;
	char msg[256];
	assert_int_equal(ext_preempt_decode(body, len, &lim, &p, msg, sizeof(msg)), DRAKE_OK);
	bool keep[] = {false, true};
	char *out = ext_preempt_encode(&p, keep);
	assert_string_equal(out, "{\"NodeNameToMetaVictims\":{\"gpu-b\":{\"Pods\":[{\"UID\":"
	                         "\"33cc\"}],\"NumPDBViolations\":2}}}");
	free(out);
	ext_preempt_release(&p);
	free(body);
}

static void test_preempt_with_no_victims_answers_an_empty_map(void **state)
{
	const char *body = "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"NodeNameToVictims\":null,"
	                   "\"NodeNameToMetaVictims\":null}";
	struct ext_limits lim = limits();
	struct ext_preempt_args p;
	char msg[256];
	assert_int_equal(ext_preempt_decode(body, strlen(body), &lim, &p, msg, sizeof(msg)),
	                 DRAKE_OK);
	char *out = ext_preempt_encode(&p, NULL);
	assert_string_equal(out, "{\"NodeNameToMetaVictims\":{}}");
	free(out);
	ext_preempt_release(&p);
}

enum which { ARGS, BIND, PREEMPT };

/* Every malformed request: the decoder refuses it with a message that names
 * the problem, and releasing the half-filled struct is safe. */
static void test_malformed_requests_are_refused_with_a_message_naming_the_problem(void **state)
{
	char longname[300];
	memset(longname, 'n', 254);
	longname[254] = '\0';
	char longbody[512];
	snprintf(longbody, sizeof(longbody),
	         "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"NodeNames\":[\"%s\"]}", longname);
	char deep[8192];
	size_t d = 0;
	for (int i = 0; i < 3000; i++)
		deep[d++] = '[';
	deep[d] = '\0';

	static const char body_nul[] = "{\"Pod\":{\"metadata\":{\"name\":\"a\\u0000b\"}},"
	                               "\"NodeNames\":[]}";
	const struct {
		enum which which;
		const char *body;
		drake_err want;
		const char *substring;
	} cases[] = {
	    {ARGS, "", DRAKE_EINVAL, "malformed JSON"},
	    {ARGS, "{\"Pod\":", DRAKE_EINVAL, "malformed JSON at line 1"},
	    {ARGS, "[]", DRAKE_EINVAL, "expected object, got array"},
	    {ARGS, "{\"NodeNames\":[\"a\"]}", DRAKE_EINVAL, "Pod: required"},
	    {ARGS, "{\"Pod\":null,\"NodeNames\":[\"a\"]}", DRAKE_EINVAL, "Pod: required"},
	    {ARGS, "{\"Pod\":\"p\",\"NodeNames\":[\"a\"]}", DRAKE_EINVAL,
	     "Pod: expected object, got string"},
	    {ARGS, "{\"Pod\":{},\"NodeNames\":[\"a\"]}", DRAKE_EINVAL, "Pod.metadata: required"},
	    {ARGS, "{\"Pod\":{\"metadata\":{}},\"NodeNames\":[\"a\"]}", DRAKE_EINVAL,
	     "Pod.metadata.name: required"},
	    {ARGS, "{\"Pod\":{\"metadata\":{\"name\":7}},\"NodeNames\":[\"a\"]}", DRAKE_EINVAL,
	     "Pod.metadata.name: expected string, got number"},
	    {ARGS, body_nul, DRAKE_EINVAL, "NUL"},
	    {ARGS, "{\"Pod\":{\"metadata\":{\"name\":\"p\"}}}", DRAKE_EINVAL,
	     "neither NodeNames nor Nodes"},
	    {ARGS, "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"NodeNames\":{}}", DRAKE_EINVAL,
	     "NodeNames: expected array of strings, got object"},
	    {ARGS, "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"NodeNames\":[\"a\",1]}",
	     DRAKE_EINVAL, "NodeNames[1]: expected string, got number"},
	    {ARGS, "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"NodeNames\":[\"\"]}", DRAKE_EINVAL,
	     "NodeNames[0]: invalid node name"},
	    {ARGS, longbody, DRAKE_ELIMIT, "254 bytes exceeds the limit of 253"},
	    {ARGS,
	     "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"NodeNames\":[\"a\",\"b\",\"c\",\"d\"]}",
	     DRAKE_ELIMIT, "4 nodes exceeds the limit of 3"},
	    {ARGS,
	     "{\"Pod\":{\"metadata\":{\"name\":\"p\",\"labels\":{\"a\":1}}},\"NodeNames\":[]}",
	     DRAKE_EINVAL, "Pod.metadata.labels[\"a\"]: expected string, got number"},
	    {ARGS,
	     "{\"Pod\":{\"metadata\":{\"name\":\"p\",\"labels\":{\"a\":\"1\",\"b\":\"2\","
	     "\"c\":\"3\"}}},\"NodeNames\":[]}",
	     DRAKE_ELIMIT, "Pod.metadata.labels: more than 2 labels"},
	    {ARGS, "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"Nodes\":{\"items\":[{}]}}",
	     DRAKE_EINVAL, "Nodes.items[0].metadata.name: required"},
	    {ARGS, "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"Nodes\":{\"items\":{}}}",
	     DRAKE_EINVAL, "Nodes.items: expected array, got object"},
	    {ARGS, deep, DRAKE_EINVAL, "malformed JSON"},
	    {BIND, "{\"PodName\":\"p\",\"PodNamespace\":\"n\",\"PodUID\":\"u\"}", DRAKE_EINVAL,
	     "Node: required"},
	    {BIND, "{\"PodName\":1,\"PodNamespace\":\"n\",\"Node\":\"x\"}", DRAKE_EINVAL,
	     "PodName: expected string, got number"},
	    {BIND, "{\"PodName\":\"\",\"PodNamespace\":\"n\",\"Node\":\"x\"}", DRAKE_EINVAL,
	     "PodName: must not be empty"},
	    {BIND, "\"bind\"", DRAKE_EINVAL, "expected object, got string"},
	    {PREEMPT, "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"NodeNameToMetaVictims\":[]}",
	     DRAKE_EINVAL, "NodeNameToMetaVictims: expected object, got array"},
	    {PREEMPT,
	     "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"NodeNameToMetaVictims\":{\"a\":"
	     "{\"Pods\":[],\"NumPDBViolations\":1.5}}}",
	     DRAKE_EINVAL, "NumPDBViolations: expected integer, got number"},
	    {PREEMPT,
	     "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"NodeNameToMetaVictims\":{\"a\":"
	     "{\"Pods\":[{\"uid\":\"x\"},{}]}}}",
	     DRAKE_EINVAL, "Pods[1].UID: required"},
	    {PREEMPT,
	     "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"NodeNameToVictims\":{\"a\":"
	     "{\"Pods\":[{\"metadata\":{}}]}}}",
	     DRAKE_EINVAL, "Pods[0].metadata.uid: required"},
	    {PREEMPT,
	     "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"NodeNameToMetaVictims\":{\"a\":"
	     "{\"Pods\":[{\"UID\":\"1\"},{\"UID\":\"2\"},{\"UID\":\"3\"}]}}}",
	     DRAKE_ELIMIT, "3 victims exceeds the limit of 2"},
	};
	struct ext_limits lim = limits();
	lim.max_nodes = 3;
	lim.max_labels = 2;
	lim.max_victims = 2;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char msg[256] = "";
		drake_err e;
		size_t len =
		    cases[i].body == body_nul ? sizeof(body_nul) - 1 : strlen(cases[i].body);
		if (cases[i].which == ARGS) {
			struct ext_args a;
			e = ext_args_decode(cases[i].body, len, &lim, &a, msg, sizeof(msg));
			ext_args_release(&a);
		} else if (cases[i].which == BIND) {
			struct ext_bind_args b;
			e = ext_bind_decode(cases[i].body, len, &lim, &b, msg, sizeof(msg));
			ext_bind_release(&b);
		} else {
			struct ext_preempt_args p;
			e = ext_preempt_decode(cases[i].body, len, &lim, &p, msg, sizeof(msg));
			ext_preempt_release(&p);
		}
		if (e != cases[i].want || !strstr(msg, cases[i].substring))
			fail_msg("case %zu (%.60s): got error %d \"%s\", want %d containing \"%s\"",
			         i, cases[i].body, e, msg, cases[i].want, cases[i].substring);
	}
}

static void test_api_server_status_and_pod_node_are_extracted(void **state)
{
	const char *status = "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"pods "
	                     "\\\"p\\\" not found\",\"code\":404}";
	char *m = ext_status_message(status, strlen(status));
	assert_string_equal(m, "pods \"p\" not found");
	free(m);
	assert_null(ext_status_message("<html>", 6));
	const char *pod = "{\"spec\":{\"nodeName\":\"gpu-a\"}}";
	char *n = ext_pod_node_name(pod, strlen(pod));
	assert_string_equal(n, "gpu-a");
	free(n);
	n = ext_pod_node_name("{\"spec\":{}}", 11);
	assert_string_equal(n, "");
	free(n);
}

/* The streaming fast path takes only what the tree decoder takes, with the
 * same result, and steps aside for everything else. */
static void test_fast_path_agrees_with_the_tree_decoder(void **state)
{
	static const struct {
		const char *body;
		bool fast;
	} cases[] = {
	    {"{\"Pod\":{\"metadata\":{\"name\":\"p\",\"namespace\":\"n\",\"uid\":\"u\","
	     "\"labels\":{\"a\":\"1\",\"b\":null}},\"spec\":{\"x\":[1,{\"y\":[]}],\"z\":true}},"
	     "\"Nodes\":null,\"NodeNames\":[\"a\",\"b\"],\"Extra\":{\"k\":[null,1.5]}}",
	     true},
	    {"{\"nodenames\":[\"x\"],\"pod\":{\"metadata\":{\"name\":\"p\"}}}", true},
	    {"{\"Pod\":{\"metadata\":{\"name\":\"p\",\"annotations\":{\"kubectl.kubernetes.io/"
	     "last-applied-configuration\":\"{\\\"a\\\":1}\",\"drake.dev/planned-node\":\"n1\","
	     "\"drake.dev/gang\":\"uid.1\",\"other\":{\"x\":[1]},\"drake.dev/x\":null}}},"
	     "\"NodeNames\":[\"n1\",\"n2\"]}",
	     true},
	    {"{\"Pod\":{\"metadata\":{\"name\":\"p\",\"annotations\":{\"drake.dev/gang\":7}}},"
	     "\"NodeNames\":[]}",
	     false},
	    {"{\"Pod\":{\"metadata\":{\"name\":\"p\",\"annotations\":{\"drake.dev/gang\":\"a\","
	     "\"drake.dev/gang\":\"b\"}}},\"NodeNames\":[]}",
	     false},
	    {"{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"NodeNames\":[]}", true},
	    /* Everything below must go to the tree decoder. */
	    {"{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"Nodes\":{\"items\":[]}}", false},
	    {"{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"NodeNames\":[\"a\"],\"NodeNames\":[]}",
	     false},
	    {"{\"Pod\":{\"metadata\":{\"name\":\"p\",\"labels\":{\"a\":\"1\",\"a\":\"2\"}}},"
	     "\"NodeNames\":[]}",
	     false},
	    {"{\"Pod\":{\"metadata\":{\"name\":\"p\"},\"x\":\"a\\u0000b\"},\"NodeNames\":[]}",
	     false},
	    {"{\"Pod\":{\"metadata\":{\"name\":\"p\"},\"x\":99999999999999999999},"
	     "\"NodeNames\":[]}",
	     false},
	    {"{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"NodeNames\":[\"a\"]} x", false},
	    {"{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"NodeNames\":[\"a\"]}\"", false},
	    {"{\"Pod\":{\"metadata\":{\"NAME\":\"p\",\"namespAce\":\"n\"}},\"NodeNames\":[]} \n",
	     true},
	    {"{\"Pod\":{\"metadata\":{\"name\":\"p\",\"labels\":{\"a\":1}}},\"NodeNames\":[]}",
	     false},
	    {"{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"NodeNames\":[\"a\",null]}", false},
	    {"{\"Pod\":{\"metadata\":{\"name\":\"p\",\"ownerReferences\":[{\"uid\":\"a\","
	     "\"uid\":\"b\",\"controller\":true}]}},\"NodeNames\":[]}",
	     false},
	    {"{\"Pod\":{\"metadata\":{\"name\":\"p\",\"ownerReferences\":[{\"uid\":\"a\","
	     "\"controller\":true,\"Controller\":false}]}},\"NodeNames\":[]}",
	     false},
	    {"{\"Pod\":{\"metadata\":{\"name\":\"p\",\"ownerReferences\":[{\"uid\":\"\","
	     "\"controller\":true}]}},\"NodeNames\":[]}",
	     false},
	    {"{\"Pod\":{\"metadata\":{\"name\":\"p\",\"ownerReferences\":[{\"controller\":"
	     "\"true\",\"uid\":\"a\"}]}},\"NodeNames\":[]}",
	     false},
	    {"{\"Pod\":{\"metadata\":{\"name\":\"p\",\"ownerReferences\":[[]]}},"
	     "\"NodeNames\":[]}",
	     false},
	    {"{\"Pod\":{\"metadata\":{\"name\":\"p\",\"ownerReferences\":[{\"uid\":\"a\","
	     "\"controller\":true,\"x\":{\"y\":[1,{}]},\"z\":null}],\"ownerreferences\":[]}},"
	     "\"NodeNames\":[]}",
	     false},
	    {"{\"Pod\":{\"metadata\":{\"name\":\"p\",\"ownerReferences\":[{\"uid\":\"a\","
	     "\"controller\":true,\"x\":{\"y\":[1,{}]},\"z\":null,\"c\":3}]}},"
	     "\"NodeNames\":[]}",
	     true},
	};
	struct ext_limits lim = limits();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *b = cases[i].body;
		struct ext_args fast, tree;
		char msg[256];
		bool took = codec_args_decode_fast(b, strlen(b), &lim, &fast);
		drake_err e = codec_args_decode_tree(b, strlen(b), &lim, &tree, msg, sizeof(msg));
		if (took != cases[i].fast)
			fail_msg("case %zu: fast path %s it", i, took ? "took" : "refused");
		if (took && (e != DRAKE_OK || !codec_args_equal(&fast, &tree)))
			fail_msg("case %zu: fast and tree decoders disagree (%s)", i, msg);
		ext_args_release(&fast);
		ext_args_release(&tree);
	}
}

/* The fast path looks at a body eight bytes at a time and byte by byte only
 * where a word holds something other than printable ASCII. Whatever a word
 * boundary cuts, it refuses what jansson refuses (controls JSON does not
 * allow, escaped or raw surrogates, overlong forms, code points past
 * U+10FFFF) and takes what both take, with the same result. */
static void test_fast_path_checks_text_at_every_word_offset(void **state)
{
	static const struct {
		const char *text; /* inside a JSON string */
		bool fast;
	} snippets[] = {
	    {"plain-ascii", true},
	    {"tab\there", false},       /* JSON strings take no raw tab */
	    {"caf\xc3\xa9", true},      /* é, two bytes */
	    {"\xf0\x9f\x9a\x80", true}, /* U+1F680, four bytes */
	    {"a\\\\ud800", true},       /* an escaped backslash, then text */
	    {"\\u00e9\\n", true},       /* escapes the tree decoder takes */
	    {"form\ffeed", false},      /* a raw control */
	    {"a\\ud800b", false},       /* a lone escaped surrogate */
	    {"a\\uDBFFb", false},
	    {"\xc0\xaf", false},         /* overlong '/' */
	    {"\xe0\x80\xaf", false},     /* overlong, three bytes */
	    {"\xed\xa0\x80", false},     /* a raw surrogate */
	    {"\xf4\x90\x80\x80", false}, /* past U+10FFFF */
	    {"\xc3", false},             /* cut short */
	    {"\x80", false},             /* a lone continuation byte */
	};
	struct ext_limits lim = limits();
	for (size_t i = 0; i < sizeof(snippets) / sizeof(snippets[0]); i++)
		for (int pad = 0; pad < 16; pad++) {
			char b[256];
			snprintf(b, sizeof(b),
			         "{\"Pod\":{\"metadata\":{\"name\":\"p\",\"labels\":{\"k\":"
			         "\"%.*s%s\"}}},\"NodeNames\":[\"a\"]}",
			         pad, "xxxxxxxxxxxxxxxx", snippets[i].text);
			struct ext_args fast, tree;
			char msg[256];
			bool took = codec_args_decode_fast(b, strlen(b), &lim, &fast);
			drake_err e =
			    codec_args_decode_tree(b, strlen(b), &lim, &tree, msg, sizeof(msg));
			if (took != snippets[i].fast)
				fail_msg("snippet %zu, pad %d: fast path %s it", i, pad,
				         took ? "took" : "refused");
			if (took && (e != DRAKE_OK || !codec_args_equal(&fast, &tree)))
				fail_msg(
				    "snippet %zu, pad %d: fast and tree decoders disagree (%s)", i,
				    pad, msg);
			if (!took && !snippets[i].fast && e == DRAKE_OK)
				fail_msg(
				    "snippet %zu, pad %d: the tree decoder took what the fast path "
				    "refused",
				    i, pad);
			ext_args_release(&fast);
			ext_args_release(&tree);
		}
	/* yajl takes \f and \v as white space between tokens; JSON does not. */
	for (int pad = 0; pad < 16; pad++)
		for (const char *ws = "\f\v"; *ws; ws++) {
			char b[256];
			snprintf(
			    b, sizeof(b),
			    "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},%*s%c\"NodeNames\":[\"a\"]}",
			    pad, "", *ws);
			struct ext_args fast;
			if (codec_args_decode_fast(b, strlen(b), &lim, &fast))
				fail_msg("pad %d: the fast path took 0x%02x between tokens", pad,
				         *ws);
			ext_args_release(&fast);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_args_goldens_round_trip),
	    cmocka_unit_test(test_pod_fields_and_labels_are_decoded),
	    cmocka_unit_test(test_a_pod_without_namespace_is_in_default),
	    cmocka_unit_test(test_the_controller_owner_uid_is_decoded_by_both_decoders),
	    cmocka_unit_test(test_only_drake_annotations_are_kept),
	    cmocka_unit_test(test_filter_splits_nodes_into_passed_failed_and_unresolvable),
	    cmocka_unit_test(test_filter_rejecting_every_node_still_sends_an_empty_node_names_list),
	    cmocka_unit_test(test_filter_in_full_node_mode_returns_the_passing_node_objects),
	    cmocka_unit_test(test_filter_error_is_reported_in_the_error_field),
	    cmocka_unit_test(test_prioritize_scores_are_integers_clamped_to_0_through_10),
	    cmocka_unit_test(test_bind_goldens_produce_the_v1_binding),
	    cmocka_unit_test(test_bind_without_uid_omits_the_precondition),
	    cmocka_unit_test(test_preempt_goldens_answer_with_meta_victims),
	    cmocka_unit_test(test_preempt_drops_the_nodes_not_kept),
	    cmocka_unit_test(test_preempt_with_no_victims_answers_an_empty_map),
	    cmocka_unit_test(test_malformed_requests_are_refused_with_a_message_naming_the_problem),
	    cmocka_unit_test(test_api_server_status_and_pod_node_are_extracted),
	    cmocka_unit_test(test_fast_path_agrees_with_the_tree_decoder),
	    cmocka_unit_test(test_fast_path_checks_text_at_every_word_offset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
