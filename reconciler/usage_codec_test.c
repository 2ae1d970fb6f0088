/*
 * usage_codec_test.c - NodeMetricsList decoding: quantities as
 * metrics-server writes them (nanocores, Ki), items left out one by one,
 * bodies refused whole.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reconciler/usage_codec.h"

#define ITEM(name, cpu, mem)                                                                       \
	"{\"metadata\":{\"name\":\"" name "\",\"creationTimestamp\":\"2026-11-23T10:00:00Z\"},"    \
	"\"timestamp\":\"2026-11-23T10:00:00Z\",\"window\":\"20.051s\",\"usage\":{\"cpu\":\"" cpu  \
	"\",\"memory\":\"" mem "\"}}"
#define LIST(items)                                                                                \
	"{\"kind\":\"NodeMetricsList\",\"apiVersion\":\"metrics.k8s.io/v1beta1\","                 \
	"\"metadata\":{},\"items\":[" items "]}"

static void reads_metrics_servers_quantities_sorted_by_name(void **state)
{
	const char *body = LIST(ITEM("gpu-b", "31538942195n", "125829120Ki") "," ITEM(
	    "gpu-a", "250m", "2Gi") "," ITEM("gpu-c", "4", "1073741824"));
	struct node_usage_row *rows;
	size_t n, skipped;
	char why[128];
	assert_int_equal(
	    node_usage_decode(body, strlen(body), &rows, &n, &skipped, why, sizeof(why)), DRAKE_OK);
	assert_int_equal(n, 3);
	assert_int_equal(skipped, 0);
	assert_string_equal(rows[0].name, "gpu-a");
	assert_int_equal(rows[0].u.cpu_milli, 250);
	assert_int_equal(rows[0].u.mem_bytes, 2LL << 30);
	assert_true(rows[0].u.known);
	/* 31.538942195 cores: rounded up to the milli-core */
	assert_int_equal(rows[1].u.cpu_milli, 31539);
	assert_int_equal(rows[1].u.mem_bytes, 125829120LL * 1024);
	assert_int_equal(rows[2].u.cpu_milli, 4000);
	const struct node_usage_row *b = node_usage_find(rows, n, "gpu-b");
	assert_non_null(b);
	assert_string_equal(b->name, "gpu-b");
	assert_null(node_usage_find(rows, n, "gpu-d"));
	assert_null(node_usage_find(rows, n, NULL));
	free(rows);
}

static void unreadable_items_are_left_out_and_counted(void **state)
{
	static const char *const bad[] = {
	    "{\"metadata\":{},\"usage\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}", /* no name */
	    "{\"metadata\":{\"name\":\"\"},\"usage\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}",
	    "{\"metadata\":{\"name\":\"x\"},\"usage\":{\"memory\":\"1Gi\"}}", /* no cpu */
	    "{\"metadata\":{\"name\":\"x\"},\"usage\":{\"cpu\":\"1\"}}",      /* no memory */
	    "{\"metadata\":{\"name\":\"x\"},\"usage\":{\"cpu\":\"lots\",\"memory\":\"1Gi\"}}",
	    "{\"metadata\":{\"name\":\"x\"},\"usage\":{\"cpu\":\"1\",\"memory\":\"-1Gi\"}}",
	    "{\"metadata\":{\"name\":\"x\"},\"usage\":{\"cpu\":1,\"memory\":\"1Gi\"}}", /* number */
	    "{\"metadata\":{\"name\":\"x\"}}",
	    "17",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char body[1024];
		snprintf(body, sizeof(body), LIST(ITEM("ok", "1", "1Gi") ",%s"), bad[i]);
		struct node_usage_row *rows;
		size_t n, skipped;
		char why[128];
		assert_int_equal(
		    node_usage_decode(body, strlen(body), &rows, &n, &skipped, why, sizeof(why)),
		    DRAKE_OK);
		if (n != 1 || skipped != 1)
			fail_msg("item %zu (%s): kept %zu, skipped %zu", i, bad[i], n, skipped);
		assert_string_equal(rows[0].name, "ok");
		free(rows);
	}
}

static void a_body_that_is_not_a_list_is_refused_whole(void **state)
{
	static const char *const bad[] = {"", "not json", "[]", "{\"items\":{}}",
	                                  "{\"kind\":\"Status\",\"code\":503}"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct node_usage_row *rows = (void *)1;
		size_t n = 9, skipped = 9;
		char why[128] = "";
		assert_int_equal(node_usage_decode(bad[i], strlen(bad[i]), &rows, &n, &skipped, why,
		                                   sizeof(why)),
		                 DRAKE_EINVAL);
		assert_null(rows);
		assert_int_equal(n, 0);
		assert_true(strstr(why, "node metrics") != NULL);
	}
	/* an empty list is a list */
	struct node_usage_row *rows;
	size_t n, skipped;
	char why[128];
	assert_int_equal(
	    node_usage_decode(LIST(""), strlen(LIST("")), &rows, &n, &skipped, why, sizeof(why)),
	    DRAKE_OK);
	assert_int_equal(n, 0);
	free(rows);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(reads_metrics_servers_quantities_sorted_by_name),
	    cmocka_unit_test(unreadable_items_are_left_out_and_counted),
	    cmocka_unit_test(a_body_that_is_not_a_list_is_refused_whole),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
