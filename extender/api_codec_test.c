/* api_codec_test.c - the progress and migration API's JSON: the request
 * bodies are strict (types, unknown fields, limits, names), a TokenReview
 * names a pod only when its token is bound to one, and a
 * SubjectAccessReview carries the reviewed user and says allowed or not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "extender/api_codec.h"

static void test_a_progress_report_is_decoded(void **state)
{
	struct api_progress_body b;
	char msg[256];
	const char *full = "{\"step\":123,\"value\":0.81,\"metric\":\"accuracy\","
	                   "\"totalSteps\":10000}";
	assert_int_equal(api_progress_decode(full, strlen(full), &b, msg, sizeof(msg)), DRAKE_OK);
	assert_int_equal(b.step, 123);
	assert_true(b.value > 0.8099 && b.value < 0.8101);
	assert_false(b.loss);
	assert_int_equal(b.total_steps, 10000);
	assert_string_equal(b.ns, "");
	assert_string_equal(b.pod, "");
	const char *loss = "{\"step\":0,\"value\":-3,\"metric\":\"loss\",\"totalSteps\":null,"
	                   "\"namespace\":\"ml\",\"pod\":\"job-worker-1\"}";
	assert_int_equal(api_progress_decode(loss, strlen(loss), &b, msg, sizeof(msg)), DRAKE_OK);
	assert_int_equal(b.step, 0);
	assert_true(b.value == -3.0); /* an integer is a number too */
	assert_true(b.loss);
	assert_int_equal(b.total_steps, 0); /* null is absent */
	assert_string_equal(b.ns, "ml");
	assert_string_equal(b.pod, "job-worker-1");
}

static void test_bad_progress_reports_are_refused_naming_the_field(void **state)
{
	char big[API_MAX_BODY + 64];
	snprintf(big, sizeof(big), "{\"step\":1,\"value\":1,\"metric\":\"loss\",\"pod\":\"%0*d\"}",
	         API_MAX_BODY, 0);
	char longpod[400];
	snprintf(
	    longpod, sizeof(longpod),
	    "{\"step\":1,\"value\":1,\"metric\":\"loss\",\"namespace\":\"ml\",\"pod\":\"%0254d\"}",
	    0);
	static const char *const ok = "\"value\":1,\"metric\":\"loss\"";
	char buf[16][160];
	const struct {
		const char *name, *body;
		drake_err want;
		const char *msg;
	} cases[] = {
	    {"not JSON", "{\"step\":", DRAKE_EINVAL, "malformed JSON"},
	    {"empty", "", DRAKE_EINVAL, "malformed JSON"},
	    {"an array", "[1]", DRAKE_EINVAL, "expected object, got array"},
	    {"over the body limit", big, DRAKE_ELIMIT, "over the limit of 4096"},
	    {"no step", "{\"value\":1,\"metric\":\"loss\"}", DRAKE_EINVAL, "step: required"},
	    {"a string step", "{\"step\":\"1\",\"value\":1,\"metric\":\"loss\"}", DRAKE_EINVAL,
	     "step: expected integer, got string"},
	    {"a fractional step", "{\"step\":1.5,\"value\":1,\"metric\":\"loss\"}", DRAKE_EINVAL,
	     "step: expected integer, got number"},
	    {"a negative step", "{\"step\":-1,\"value\":1,\"metric\":\"loss\"}", DRAKE_EINVAL,
	     "step: must be >= 0, got -1"},
	    {"a step too big for 64 bits", "{\"step\":99999999999999999999,\"value\":1}",
	     DRAKE_EINVAL, "malformed JSON"},
	    {"no value", "{\"step\":1,\"metric\":\"loss\"}", DRAKE_EINVAL, "value: required"},
	    {"a boolean value", "{\"step\":1,\"value\":true,\"metric\":\"loss\"}", DRAKE_EINVAL,
	     "value: expected number, got boolean"},
	    {"an infinite value", "{\"step\":1,\"value\":1e999,\"metric\":\"loss\"}", DRAKE_EINVAL,
	     "malformed JSON"},
	    {"no metric", "{\"step\":1,\"value\":1}", DRAKE_EINVAL, "metric: required"},
	    {"an unknown metric", "{\"step\":1,\"value\":1,\"metric\":\"f1\"}", DRAKE_EINVAL,
	     "metric: expected \"accuracy\" or \"loss\", got \"f1\""},
	    {"a numeric metric", "{\"step\":1,\"value\":1,\"metric\":1}", DRAKE_EINVAL,
	     "metric: expected string, got integer"},
	    {"zero total steps", "{\"step\":1,\"value\":1,\"metric\":\"loss\",\"totalSteps\":0}",
	     DRAKE_EINVAL, "totalSteps: must be >= 1"},
	    {"an unknown field", "{\"step\":1,\"value\":1,\"metric\":\"loss\",\"totalStep\":9}",
	     DRAKE_EINVAL, "unknown field \"totalStep\""},
	    {"a duplicate field", "{\"step\":1,\"step\":2,\"value\":1,\"metric\":\"loss\"}",
	     DRAKE_EINVAL, "duplicate"},
	    {"a pod without its namespace", buf[0], DRAKE_EINVAL, "namespace: required with pod"},
	    {"a namespace with dots", buf[1], DRAKE_EINVAL,
	     "namespace: \"a.b\" is not a valid namespace name"},
	    {"an upper-case pod", buf[2], DRAKE_EINVAL, "pod: \"Job\" is not a valid object name"},
	    {"a pod name over 253 characters", longpod, DRAKE_EINVAL, "is not a valid object name"},
	    {"a pod name with a NUL", buf[3], DRAKE_EINVAL, "is not allowed"},
	};
	snprintf(buf[0], sizeof(buf[0]), "{\"step\":1,%s,\"pod\":\"p\"}", ok);
	snprintf(buf[1], sizeof(buf[1]), "{\"step\":1,%s,\"namespace\":\"a.b\",\"pod\":\"p\"}", ok);
	snprintf(buf[2], sizeof(buf[2]), "{\"step\":1,%s,\"namespace\":\"ml\",\"pod\":\"Job\"}",
	         ok);
	snprintf(buf[3], sizeof(buf[3]),
	         "{\"step\":1,%s,\"namespace\":\"ml\",\"pod\":\"a\\u0000b\"}", ok);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct api_progress_body b;
		char msg[256] = "";
		drake_err e =
		    api_progress_decode(cases[i].body, strlen(cases[i].body), &b, msg, sizeof(msg));
		if (e != cases[i].want || !strstr(msg, cases[i].msg))
			fail_msg("%s: got %d \"%s\", want %d \"%s\"", cases[i].name, e, msg,
			         cases[i].want, cases[i].msg);
	}
}

static void test_a_migration_request_is_decoded_and_bad_ones_are_refused(void **state)
{
	struct api_migration_body m;
	char msg[256] = "";
	const char *full =
	    "{\"namespace\":\"ml\",\"pod\":\"job-worker-1\",\"awayFrom\":\"node-a\",\"onto\":"
	    "\"node-b\"}";
	assert_int_equal(api_migration_decode(full, strlen(full), &m, msg, sizeof(msg)), DRAKE_OK);
	assert_string_equal(m.ns, "ml");
	assert_string_equal(m.pod, "job-worker-1");
	assert_string_equal(m.away, "node-a");
	assert_string_equal(m.onto, "node-b");
	assert_false(m.pause_job); /* absent: a PS or chief does not move */
	const char *ps = "{\"namespace\":\"ml\",\"pod\":\"job-ps-0\",\"pauseJob\":true}";
	assert_int_equal(api_migration_decode(ps, strlen(ps), &m, msg, sizeof(msg)), DRAKE_OK);
	assert_true(m.pause_job);
	const char *bare = "{\"namespace\":\"ml\",\"pod\":\"p\",\"onto\":null}";
	assert_int_equal(api_migration_decode(bare, strlen(bare), &m, msg, sizeof(msg)), DRAKE_OK);
	assert_string_equal(m.away, "");
	assert_string_equal(m.onto, "");
	const struct {
		const char *name, *body, *msg;
	} cases[] = {
	    {"no namespace", "{\"pod\":\"p\"}", "namespace: required"},
	    {"no pod", "{\"namespace\":\"ml\"}", "pod: required"},
	    {"a numeric pod", "{\"namespace\":\"ml\",\"pod\":7}",
	     "pod: expected string, got integer"},
	    {"a bad node", "{\"namespace\":\"ml\",\"pod\":\"p\",\"onto\":\"Node_B\"}",
	     "onto: \"Node_B\" is not a valid object name"},
	    {"the same node both ways",
	     "{\"namespace\":\"ml\",\"pod\":\"p\",\"awayFrom\":\"a\",\"onto\":\"a\"}",
	     "onto: \"a\" is the node awayFrom names"},
	    {"an unknown field", "{\"namespace\":\"ml\",\"pod\":\"p\",\"node\":\"a\"}",
	     "unknown field \"node\" (known: namespace, pod, awayFrom, onto, pauseJob)"},
	    {"pauseJob as a string", "{\"namespace\":\"ml\",\"pod\":\"p\",\"pauseJob\":\"yes\"}",
	     "pauseJob: expected boolean, got string"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		drake_err e = api_migration_decode(cases[i].body, strlen(cases[i].body), &m, msg,
		                                   sizeof(msg));
		if (e != DRAKE_EINVAL || !strstr(msg, cases[i].msg))
			fail_msg("%s: got %d \"%s\", want \"%s\"", cases[i].name, e, msg,
			         cases[i].msg);
	}
}

#define POD_TOKEN                                                                                  \
	"{\"kind\":\"TokenReview\",\"status\":{\"authenticated\":true,\"user\":{"                  \
	"\"username\":\"system:serviceaccount:ml:default\",\"uid\":\"sa-uid\","                    \
	"\"groups\":[\"system:serviceaccounts\",\"system:serviceaccounts:ml\"],"                   \
	"\"extra\":{\"authentication.kubernetes.io/pod-name\":[\"job-worker-1\"],"                 \
	"\"authentication.kubernetes.io/pod-uid\":[\"pod-uid-1\"]}},"                              \
	"\"audiences\":[\"https://kubernetes.default.svc\"]}}"

static void test_a_token_bound_to_a_pod_names_the_pod_and_its_namespace(void **state)
{
	struct api_token_review r;
	char msg[256];
	assert_int_equal(
	    api_token_review_decode(POD_TOKEN, strlen(POD_TOKEN), NULL, &r, msg, sizeof(msg)),
	    DRAKE_OK);
	assert_true(r.authenticated);
	assert_true(r.bound);
	assert_string_equal(r.user, "system:serviceaccount:ml:default");
	assert_string_equal(r.ns, "ml");
	assert_string_equal(r.pod, "job-worker-1");
	assert_string_equal(r.pod_uid, "pod-uid-1");
	assert_non_null(r.groups);
	assert_non_null(strstr(r.extra, "pod-name"));
	api_token_review_release(&r);
}

static void test_tokens_that_name_no_pod_are_authenticated_but_not_bound(void **state)
{
	const struct {
		const char *name, *body;
		bool authenticated;
		const char *error;
	} cases[] = {
	    {"a user",
	     "{\"status\":{\"authenticated\":true,\"user\":{\"username\":\"alice\","
	     "\"groups\":[\"devs\"]}}}",
	     true, ""},
	    {"a legacy service-account secret",
	     "{\"status\":{\"authenticated\":true,\"user\":{\"username\":"
	     "\"system:serviceaccount:ml:default\"}}}",
	     true, ""},
	    {"a pod name in a user's extra",
	     "{\"status\":{\"authenticated\":true,\"user\":{\"username\":\"alice\",\"extra\":{"
	     "\"authentication.kubernetes.io/pod-name\":[\"p\"],"
	     "\"authentication.kubernetes.io/pod-uid\":[\"u\"]}}}}",
	     true, ""},
	    {"a pod name without its uid",
	     "{\"status\":{\"authenticated\":true,\"user\":{\"username\":"
	     "\"system:serviceaccount:ml:default\",\"extra\":{"
	     "\"authentication.kubernetes.io/pod-name\":[\"p\"]}}}}",
	     true, ""},
	    {"two pod names",
	     "{\"status\":{\"authenticated\":true,\"user\":{\"username\":"
	     "\"system:serviceaccount:ml:default\",\"extra\":{"
	     "\"authentication.kubernetes.io/pod-name\":[\"p\",\"q\"],"
	     "\"authentication.kubernetes.io/pod-uid\":[\"u\"]}}}}",
	     true, ""},
	    {"a rejected token",
	     "{\"status\":{\"authenticated\":false,\"error\":\"token has expired\"}}", false,
	     "token has expired"},
	    {"no authenticated field", "{\"status\":{}}", false, ""},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct api_token_review r;
		char msg[256] = "";
		drake_err e = api_token_review_decode(cases[i].body, strlen(cases[i].body), NULL,
		                                      &r, msg, sizeof(msg));
		if (e || r.authenticated != cases[i].authenticated || r.bound ||
		    strcmp(r.error, cases[i].error) != 0)
			fail_msg("%s: err %d authenticated %d bound %d error \"%s\"", cases[i].name,
			         e, r.authenticated, r.bound, r.error);
		api_token_review_release(&r);
	}
}

static void test_token_review_answers_drake_cannot_read_are_errors(void **state)
{
	const char *cases[] = {
	    "not json",
	    "{\"kind\":\"Status\",\"message\":\"forbidden\"}",
	    "{\"status\":{\"authenticated\":true}}",
	    "{\"status\":{\"authenticated\":true,\"user\":{\"username\":7}}}",
	    "{\"status\":{\"authenticated\":true,\"user\":{\"username\":\"\"}}}",
	    "{\"status\":{\"authenticated\":true,\"user\":{\"username\":\"a\",\"groups\":\"g\"}}}",
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct api_token_review r;
		char msg[256] = "";
		if (api_token_review_decode(cases[i], strlen(cases[i]), NULL, &r, msg,
		                            sizeof(msg)) != DRAKE_EINVAL ||
		    r.authenticated)
			fail_msg("case %zu (%s) was accepted", i, cases[i]);
		api_token_review_release(&r);
	}
	/* groups that would make the SubjectAccessReview unbounded */
	char *big = malloc(API_USER_JSON_MAX + 400);
	int n = sprintf(big, "{\"status\":{\"authenticated\":true,\"user\":{\"username\":\"a\","
	                     "\"groups\":[");
	for (int i = 0; n < API_USER_JSON_MAX + 200; i++)
		n += sprintf(big + n, "%s\"g\"", i ? "," : "");
	strcpy(big + n, "]}}}");
	struct api_token_review r;
	char msg[256];
	assert_int_equal(api_token_review_decode(big, strlen(big), NULL, &r, msg, sizeof(msg)),
	                 DRAKE_EINVAL);
	api_token_review_release(&r);
	free(big);
}

static void test_the_review_requests_carry_token_user_and_resource(void **state)
{
	char *tr = api_token_review_encode("abc.def", NULL);
	assert_string_equal(tr, "{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":"
	                        "\"TokenReview\",\"spec\":{\"token\":\"abc.def\"}}");
	free(tr);
	tr = api_token_review_encode("abc.def", "drake");
	assert_string_equal(tr, "{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":"
	                        "\"TokenReview\",\"spec\":{\"token\":\"abc.def\",\"audiences\":"
	                        "[\"drake\"]}}");
	free(tr);
	/* asked for drake's audience, POD_TOKEN (the API server's) is not it */
	struct api_token_review other;
	char omsg[256];
	assert_int_equal(api_token_review_decode(POD_TOKEN, strlen(POD_TOKEN), "drake", &other,
	                                         omsg, sizeof(omsg)),
	                 DRAKE_OK);
	assert_false(other.authenticated);
	assert_string_equal(
	    other.error,
	    "the token is not for audience \"drake\" (the API server did not confirm it)");
	api_token_review_release(&other);
	assert_int_equal(api_token_review_decode(POD_TOKEN, strlen(POD_TOKEN),
	                                         "https://kubernetes.default.svc", &other, omsg,
	                                         sizeof(omsg)),
	                 DRAKE_OK);
	assert_true(other.authenticated);
	api_token_review_release(&other);
	struct api_token_review who;
	char msg[256];
	assert_int_equal(
	    api_token_review_decode(POD_TOKEN, strlen(POD_TOKEN), NULL, &who, msg, sizeof(msg)),
	    DRAKE_OK);
	struct api_access a = {"create", "kubeflow.org", "tfjobs", "migrations", "ml"};
	char *sar = api_access_review_encode(&who, &a);
	assert_non_null(sar);
	assert_non_null(strstr(sar, "\"kind\":\"SubjectAccessReview\""));
	assert_non_null(strstr(sar, "\"user\":\"system:serviceaccount:ml:default\""));
	assert_non_null(strstr(sar, "\"uid\":\"sa-uid\""));
	assert_non_null(strstr(sar, "\"groups\":[\"system:serviceaccounts\""));
	assert_non_null(strstr(sar, "\"authentication.kubernetes.io/pod-uid\":[\"pod-uid-1\"]"));
	assert_non_null(strstr(sar, "\"resourceAttributes\":{\"namespace\":\"ml\",\"verb\":"
	                            "\"create\",\"group\":\"kubeflow.org\",\"resource\":\"tfjobs\","
	                            "\"subresource\":\"migrations\"}"));
	free(sar);
	api_token_review_release(&who);
}

static void test_an_access_review_answer_says_allowed_or_why_not(void **state)
{
	bool allowed;
	char reason[128], msg[128];
	const char *yes = "{\"status\":{\"allowed\":true,\"reason\":\"RBAC: allowed by "
	                  "ClusterRoleBinding\"}}";
	assert_int_equal(api_access_review_decode(yes, strlen(yes), &allowed, reason,
	                                          sizeof(reason), msg, sizeof(msg)),
	                 DRAKE_OK);
	assert_true(allowed);
	const char *no = "{\"status\":{\"allowed\":false}}";
	assert_int_equal(api_access_review_decode(no, strlen(no), &allowed, reason, sizeof(reason),
	                                          msg, sizeof(msg)),
	                 DRAKE_OK);
	assert_false(allowed);
	assert_string_equal(reason, "");
	const char *denied = "{\"status\":{\"allowed\":true,\"denied\":true,\"reason\":\"webhook "
	                     "says no\"}}";
	assert_int_equal(api_access_review_decode(denied, strlen(denied), &allowed, reason,
	                                          sizeof(reason), msg, sizeof(msg)),
	                 DRAKE_OK);
	assert_false(allowed);
	assert_string_equal(reason, "webhook says no");
	assert_int_equal(
	    api_access_review_decode("{}", 2, &allowed, reason, sizeof(reason), msg, sizeof(msg)),
	    DRAKE_EINVAL);
	assert_false(allowed);
}

static void test_the_id_and_error_answers_round_trip(void **state)
{
	char *id = api_id_encode("ml/job-worker-1@1763880000");
	assert_string_equal(id, "{\"id\":\"ml/job-worker-1@1763880000\"}");
	free(id);
	char buf[64];
	const char *err = "{\"Error\":\"too often\"}";
	assert_string_equal(api_error_message(err, strlen(err), buf, sizeof(buf)), "too often");
	assert_string_equal(api_error_message("<html>", 6, buf, sizeof(buf)), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_a_progress_report_is_decoded),
	    cmocka_unit_test(test_bad_progress_reports_are_refused_naming_the_field),
	    cmocka_unit_test(test_a_migration_request_is_decoded_and_bad_ones_are_refused),
	    cmocka_unit_test(test_a_token_bound_to_a_pod_names_the_pod_and_its_namespace),
	    cmocka_unit_test(test_tokens_that_name_no_pod_are_authenticated_but_not_bound),
	    cmocka_unit_test(test_token_review_answers_drake_cannot_read_are_errors),
	    cmocka_unit_test(test_the_review_requests_carry_token_user_and_resource),
	    cmocka_unit_test(test_an_access_review_answer_says_allowed_or_why_not),
	    cmocka_unit_test(test_the_id_and_error_answers_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
