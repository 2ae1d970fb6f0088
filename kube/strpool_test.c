/*
 * strpool_test.c - cmocka tests for the interned string pool: one copy per
 * distinct string, freed with its last reference, through table growth.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kube/strpool.h"

static void test_equal_strings_share_one_copy_until_the_last_put(void **state)
{
	struct kube_strpool p;
	kube_strpool_init(&p);
	int oom = 0;
	char a[] = "gpu-node-00001", b[] = "gpu-node-00001";
	const char *x = kube_strpool_get(&p, a, &oom), *y = kube_strpool_get(&p, b, &oom);
	assert_false(oom);
	assert_ptr_equal(x, y);
	assert_ptr_not_equal(x, a);
	assert_string_equal(x, "gpu-node-00001");
	assert_int_equal(kube_strpool_count(&p), 1);
	assert_null(kube_strpool_get(&p, NULL, &oom));
	kube_strpool_put(&p, x);
	assert_int_equal(kube_strpool_count(&p), 1); /* y still holds it */
	kube_strpool_put(&p, y);
	assert_int_equal(kube_strpool_count(&p), 0);
	kube_strpool_put(&p, NULL);
	kube_strpool_release(&p);
	kube_strpool_release(NULL);
}

static void test_many_strings_survive_the_table_growing(void **state)
{
	struct kube_strpool p;
	kube_strpool_init(&p);
	enum { N = 5000 };
	static const char *held[N];
	int oom = 0;
	for (int i = 0; i < N; i++) {
		char s[32];
		snprintf(s, sizeof(s), "uid-%d", i);
		held[i] = kube_strpool_get(&p, s, &oom);
	}
	assert_false(oom);
	assert_int_equal(kube_strpool_count(&p), N);
	for (int i = 0; i < N; i++) {
		char s[32];
		snprintf(s, sizeof(s), "uid-%d", i);
		assert_string_equal(held[i], s);
		assert_ptr_equal(kube_strpool_get(&p, s, &oom), held[i]);
		kube_strpool_put(&p, held[i]);
	}
	for (int i = 0; i < N; i += 2)
		kube_strpool_put(&p, held[i]);
	assert_int_equal(kube_strpool_count(&p), N / 2);
	kube_strpool_release(&p); /* frees what is still held */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_equal_strings_share_one_copy_until_the_last_put),
	    cmocka_unit_test(test_many_strings_survive_the_table_growing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
