/* tokencache_test.c - reviewed pod tokens: found for their TTL and not
 * after, keyed by the whole token, bounded in size (expired entries, then
 * the oldest, make room). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "extender/tokencache.h"

static struct token_pod pod(const char *name)
{
	struct token_pod p = {0};
	snprintf(p.user, sizeof(p.user), "system:serviceaccount:ml:default");
	snprintf(p.ns, sizeof(p.ns), "ml");
	snprintf(p.pod, sizeof(p.pod), "%s", name);
	snprintf(p.pod_uid, sizeof(p.pod_uid), "uid-%s", name);
	return p;
}

static void test_a_token_is_trusted_for_its_ttl_and_not_after(void **state)
{
	struct tokencache *c = tokencache_new(8, 60);
	struct token_pod p = pod("job-worker-0"), got;
	assert_false(tokencache_get(c, "tok-a", 0, &got));
	tokencache_put(c, "tok-a", &p, 100);
	assert_true(tokencache_get(c, "tok-a", 100, &got));
	assert_string_equal(got.pod, "job-worker-0");
	assert_string_equal(got.pod_uid, "uid-job-worker-0");
	assert_string_equal(got.ns, "ml");
	assert_true(tokencache_get(c, "tok-a", 159.9, &got));
	assert_false(tokencache_get(c, "tok-a", 160, &got));
	/* a fresh review renews it */
	tokencache_put(c, "tok-a", &p, 160);
	assert_true(tokencache_get(c, "tok-a", 219, &got));
	assert_int_equal(tokencache_len(c), 1);
	tokencache_free(c);
}

static void test_only_the_exact_token_matches(void **state)
{
	struct tokencache *c = tokencache_new(8, 60);
	struct token_pod a = pod("a"), b = pod("b"), got;
	tokencache_put(c, "tok-a", &a, 0);
	tokencache_put(c, "tok-b", &b, 0);
	assert_false(tokencache_get(c, "tok-", 1, &got));
	assert_false(tokencache_get(c, "tok-a ", 1, &got));
	assert_false(tokencache_get(c, "TOK-A", 1, &got));
	assert_true(tokencache_get(c, "tok-b", 1, &got));
	assert_string_equal(got.pod, "b");
	tokencache_free(c);
}

static void test_a_full_cache_reuses_expired_then_oldest_entries(void **state)
{
	struct tokencache *c = tokencache_new(3, 60);
	struct token_pod p = pod("p"), got;
	tokencache_put(c, "t1", &p, 0);
	tokencache_put(c, "t2", &p, 10);
	tokencache_put(c, "t3", &p, 20);
	tokencache_put(c, "t4", &p, 30); /* none expired: t1, the oldest, goes */
	assert_int_equal(tokencache_len(c), 3);
	assert_false(tokencache_get(c, "t1", 31, &got));
	assert_true(tokencache_get(c, "t2", 31, &got));
	tokencache_put(c, "t5", &p, 75); /* t2 expired at 70: it goes */
	assert_true(tokencache_get(c, "t3", 75, &got));
	assert_true(tokencache_get(c, "t4", 75, &got));
	assert_true(tokencache_get(c, "t5", 75, &got));
	assert_int_equal(tokencache_len(c), 3);
	tokencache_free(c);
}

static void test_bad_settings_make_no_cache(void **state)
{
	assert_null(tokencache_new(0, 60));
	assert_null(tokencache_new(4, 0));
	tokencache_free(NULL);
	struct token_pod got;
	assert_false(tokencache_get(NULL, "t", 0, &got));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_a_token_is_trusted_for_its_ttl_and_not_after),
	    cmocka_unit_test(test_only_the_exact_token_matches),
	    cmocka_unit_test(test_a_full_cache_reuses_expired_then_oldest_entries),
	    cmocka_unit_test(test_bad_settings_make_no_cache),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
