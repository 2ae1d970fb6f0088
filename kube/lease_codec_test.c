/*
 * lease_codec_test.c - Lease JSON read and written as the API server does,
 * and bad Leases refused with a reason.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/lease_codec.h"

static void test_an_api_server_lease_is_read(void **state)
{
	const char *body =
	    "{\"kind\":\"Lease\",\"apiVersion\":\"coordination.k8s.io/v1\",\"metadata\":{\"name\":"
	    "\"drake\",\"namespace\":\"kube-system\",\"resourceVersion\":\"4711\"},\"spec\":{"
	    "\"holderIdentity\":\"drake-0_1a2b\",\"leaseDurationSeconds\":15,\"acquireTime\":"
	    "\"2026-11-23T09:00:00.250000Z\",\"renewTime\":\"2026-11-23T09:00:10.500000Z\","
	    "\"leaseTransitions\":2}}";
	struct lease_record r;
	char rv[LEASE_RV_MAX], why[128];
	assert_int_equal(lease_decode(body, strlen(body), &r, rv, sizeof(rv), why, sizeof(why)),
	                 DRAKE_OK);
	assert_string_equal(rv, "4711");
	assert_string_equal(r.holder, "drake-0_1a2b");
	assert_int_equal(r.duration_s, 15);
	assert_int_equal(r.transitions, 2);
	assert_true(r.renew_time - r.acquire_time == 10.25);
}

static void test_a_written_lease_reads_back_the_same(void **state)
{
	struct lease_record w = {.holder = "drake-1_ff",
	                         .acquire_time = 1795424400.125,
	                         .renew_time = 1795424410.5,
	                         .duration_s = 15,
	                         .transitions = 9};
	char *text = lease_encode("kube-system", "drake", "77", &w);
	assert_non_null(text);
	assert_non_null(strstr(text, "\"renewTime\":\"2026-11-23T09:00:10.500000Z\""));
	assert_non_null(strstr(text, ".500000Z\""));
	assert_non_null(strstr(text, "\"resourceVersion\":\"77\""));
	struct lease_record r;
	char rv[LEASE_RV_MAX], why[128];
	assert_int_equal(lease_decode(text, strlen(text), &r, rv, sizeof(rv), why, sizeof(why)),
	                 DRAKE_OK);
	free(text);
	assert_string_equal(r.holder, w.holder);
	assert_true(r.acquire_time == w.acquire_time && r.renew_time == w.renew_time);
	assert_int_equal(r.duration_s, 15);
	assert_int_equal(r.transitions, 9);
	/* a create carries no resourceVersion; a free lease has a null holder */
	w.holder[0] = '\0';
	text = lease_encode("kube-system", "drake", NULL, &w);
	assert_non_null(text);
	assert_null(strstr(text, "resourceVersion"));
	assert_non_null(strstr(text, "\"holderIdentity\":null"));
	free(text);
}

static void test_a_lease_without_a_spec_reads_as_free(void **state)
{
	const char *body = "{\"metadata\":{\"resourceVersion\":\"1\"}}";
	struct lease_record r;
	char rv[LEASE_RV_MAX], why[128];
	assert_int_equal(lease_decode(body, strlen(body), &r, rv, sizeof(rv), why, sizeof(why)),
	                 DRAKE_OK);
	assert_string_equal(r.holder, "");
	assert_int_equal(r.duration_s, 0);
}

static void test_bad_leases_are_refused_with_a_reason(void **state)
{
	static const struct {
		const char *body, *why;
	} cases[] = {
	    {"not json", "not a JSON object"},
	    {"[]", "not a JSON object"},
	    {"{\"spec\":{}}", "resourceVersion"},
	    {"{\"metadata\":{\"resourceVersion\":\"1\"},\"spec\":[]}", "spec is not an object"},
	    {"{\"metadata\":{\"resourceVersion\":\"1\"},\"spec\":{\"holderIdentity\":5}}",
	     "holderIdentity"},
	    {"{\"metadata\":{\"resourceVersion\":\"1\"},\"spec\":{\"renewTime\":\"yesterday\"}}",
	     "RFC 3339"},
	    {"{\"metadata\":{\"resourceVersion\":\"1\"},\"spec\":{\"leaseDurationSeconds\":-4}}",
	     "non-negative"},
	    {"{\"metadata\":{\"resourceVersion\":\"1\"},\"spec\":{\"leaseTransitions\":\"x\"}}",
	     "non-negative"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct lease_record r;
		char rv[LEASE_RV_MAX], why[128];
		drake_err e = lease_decode(cases[i].body, strlen(cases[i].body), &r, rv, sizeof(rv),
		                           why, sizeof(why));
		if (e != DRAKE_EINVAL || !strstr(why, cases[i].why))
			fail_msg("%s: got %d \"%s\", want EINVAL with \"%s\"", cases[i].body, e,
			         why, cases[i].why);
	}
	/* a holder too long to keep */
	char body[LEASE_HOLDER_MAX + 128];
	char holder[LEASE_HOLDER_MAX + 1];
	memset(holder, 'h', LEASE_HOLDER_MAX);
	holder[LEASE_HOLDER_MAX] = '\0';
	snprintf(body, sizeof(body),
	         "{\"metadata\":{\"resourceVersion\":\"1\"},\"spec\":{\"holderIdentity\":\"%s\"}}",
	         holder);
	struct lease_record r;
	char rv[LEASE_RV_MAX], why[128];
	assert_int_equal(lease_decode(body, strlen(body), &r, rv, sizeof(rv), why, sizeof(why)),
	                 DRAKE_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_an_api_server_lease_is_read),
	    cmocka_unit_test(test_a_written_lease_reads_back_the_same),
	    cmocka_unit_test(test_a_lease_without_a_spec_reads_as_free),
	    cmocka_unit_test(test_bad_leases_are_refused_with_a_reason),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
