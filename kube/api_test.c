/*
 * api_test.c - cmocka tests for resource paths (validated names, limits) and
 * the request bodies the write helpers send (delete preconditions, bindings,
 * events), checked as text because their shape is the API server's contract.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/api.h"
#include "kube/object.h"

static void test_paths_for_core_group_and_named_groups(void **state)
{
	char p[KUBE_API_PATH_MAX];
	struct kube_resource pods = {.version = "v1", .plural = "pods", .ns = "ml"};
	assert_int_equal(kube_resource_path(&pods, p, sizeof(p)), DRAKE_OK);
	assert_string_equal(p, "/api/v1/namespaces/ml/pods");
	struct kube_resource st = {.group = "kubeflow.org",
	                           .version = "v1",
	                           .plural = "tfjobs",
	                           .ns = "ml",
	                           .name = "mnist",
	                           .subresource = "status"};
	assert_int_equal(kube_resource_path(&st, p, sizeof(p)), DRAKE_OK);
	assert_string_equal(p, "/apis/kubeflow.org/v1/namespaces/ml/tfjobs/mnist/status");
	struct kube_resource nodes = {.version = "v1", .plural = "nodes", .name = "kwok-node-0"};
	assert_int_equal(kube_resource_path(&nodes, p, sizeof(p)), DRAKE_OK);
	assert_string_equal(p, "/api/v1/nodes/kwok-node-0");
}

static void test_bad_names_and_small_buffers_are_refused(void **state)
{
	char p[KUBE_API_PATH_MAX];
	const char *bad[] = {"", "Upper", "a/b", "a b", "-lead", "trail-", "a?x=1", "..%2F"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct kube_resource r = {
		    .version = "v1", .plural = "pods", .ns = "ml", .name = bad[i]};
		assert_int_equal(kube_resource_path(&r, p, sizeof(p)), DRAKE_EINVAL);
	}
	char longname[KUBE_NAME_MAX + 2];
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	struct kube_resource r = {.version = "v1", .plural = "pods", .ns = "ml", .name = longname};
	assert_int_equal(kube_resource_path(&r, p, sizeof(p)), DRAKE_EINVAL);
	struct kube_resource sub = {.version = "v1", .plural = "pods", .subresource = "status"};
	assert_int_equal(kube_resource_path(&sub, p, sizeof(p)), DRAKE_EINVAL); /* needs a name */
	struct kube_resource ok = {.version = "v1", .plural = "pods", .ns = "ml", .name = "p"};
	assert_int_equal(kube_resource_path(&ok, p, 10), DRAKE_ELIMIT);
}

static void test_delete_options_carry_preconditions(void **state)
{
	char *b = kube_delete_options_body("uid-1", "42", "Background");
	assert_non_null(b);
	assert_non_null(
	    strstr(b, "\"preconditions\":{\"uid\":\"uid-1\",\"resourceVersion\":\"42\"}"));
	assert_non_null(strstr(b, "\"propagationPolicy\":\"Background\""));
	free(b);
	b = kube_delete_options_body(NULL, NULL, NULL);
	assert_non_null(strstr(b, "\"preconditions\":{}"));
	assert_null(strstr(b, "propagationPolicy"));
	free(b);
}

static void test_binding_and_event_bodies(void **state)
{
	char *b = kube_binding_body("mnist-worker-0", "node-1");
	assert_string_equal(b, "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":"
	                       "\"mnist-worker-0\"},\"target\":{\"apiVersion\":\"v1\",\"kind\":"
	                       "\"Node\",\"name\":\"node-1\"}}");
	free(b);
	b = kube_event_body("ml", "kubeflow.org/v1", "TFJob", "mnist", "u1", "Warning", "Failed",
	                    "a \"quoted\" message", "drake", "2026-01-01T00:00:00Z");
	assert_non_null(b);
	assert_non_null(strstr(b, "\"generateName\":\"mnist.\""));
	assert_non_null(strstr(b, "\"message\":\"a \\\"quoted\\\" message\""));
	assert_non_null(strstr(b, "\"kind\":\"TFJob\""));
	free(b);
	assert_null(kube_event_body("ml", "v1", "Pod", "p", NULL, NULL, "r", "m", "drake", "t"));
}

static void test_object_accessors(void **state)
{
	assert_true(kube_name_valid("mnist-worker-0"));
	assert_true(kube_name_valid("a.b-c"));
	assert_false(kube_name_valid(NULL));
	assert_false(kube_name_valid("a_b"));
	char buf[64];
	const char *st = "{\"kind\":\"Status\",\"message\":\"pods \\\"x\\\" is forbidden\"}";
	assert_string_equal(kube_status_message(st, strlen(st), buf, sizeof(buf)),
	                    "pods \"x\" is forbidden");
	assert_string_equal(kube_status_message("not json", 8, buf, sizeof(buf)), "");
	assert_string_equal(kube_status_message(NULL, 0, buf, sizeof(buf)), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_paths_for_core_group_and_named_groups),
	    cmocka_unit_test(test_bad_names_and_small_buffers_are_refused),
	    cmocka_unit_test(test_delete_options_carry_preconditions),
	    cmocka_unit_test(test_binding_and_event_bodies),
	    cmocka_unit_test(test_object_accessors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
