/* resource_test.c - the names table holds what requests ask for and no
 * more, and reading a resource never adds to it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "gang/resource.h"

/* A table holding example.com/r0 .. r<n-1>. */
static struct drake_res_names table_of(int n)
{
	struct drake_res_names t = {0};
	for (int i = 0; i < n; i++) {
		char name[32];
		snprintf(name, sizeof(name), "example.com/r%d", i);
		assert_int_equal(drake_res_name_index(&t, name, true), i);
	}
	return t;
}

static void the_table_takes_max_ext_names_and_refuses_one_more(void **state)
{
	struct drake_res_names t = table_of(DRAKE_RES_MAX_EXT);
	assert_int_equal(t.n, DRAKE_RES_MAX_EXT);
	assert_int_equal(drake_res_name_index(&t, "example.com/one-more", true), -1);
	assert_int_equal(t.n, DRAKE_RES_MAX_EXT);
	assert_int_equal(drake_res_name_index(&t, "example.com/r3", true),
	                 3); /* found, not added */
}

static void a_lookup_never_adds(void **state)
{
	struct drake_res_names t = table_of(2);
	assert_int_equal(drake_res_name_find(&t, "example.com/r1"), 1);
	assert_int_equal(drake_res_name_find(&t, "example.com/r2"), -1);
	assert_int_equal(drake_res_name_index(&t, "example.com/r2", false), -1);
	assert_int_equal(t.n, 2);
}

static void a_name_too_long_for_the_table_is_refused(void **state)
{
	char name[DRAKE_RES_NAME_MAX + 1];
	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	struct drake_res_names t = {0};
	assert_int_equal(drake_res_name_index(&t, name, true), -1);
	name[DRAKE_RES_NAME_MAX - 1] = '\0'; /* 253 characters fit */
	assert_int_equal(drake_res_name_index(&t, name, true), 0);
}

struct set_case {
	const char *name;
	int table;            /* names r0 .. r<table-1> */
	const char *resource; /* what is set */
	const char *quantity;
	drake_err err;
	int64_t cpu_milli, mem_bytes, gpu;
	int ext;       /* index set, or -1 */
	int64_t value; /* its value */
};

static const struct set_case set_cases[] = {
    {"cpu is millicores without a table", 0, "cpu", "1500m", DRAKE_OK, 1500, 0, 0, -1, 0},
    {"memory is bytes without a table", 0, "memory", "2Gi", DRAKE_OK, 0, 2LL << 30, 0, -1, 0},
    {"nvidia.com/gpu is whole GPUs without a table", 0, "nvidia.com/gpu", "4", DRAKE_OK, 0, 0, 4,
     -1, 0},
    {"a resource the table names takes its slot", 8, "example.com/r7", "3", DRAKE_OK, 0, 0, 0, 7,
     3},
    {"a resource the table does not name is not found", 8, "example.com/r8", "3", DRAKE_ENOTFOUND,
     0, 0, 0, -1, 0},
    {"an untracked resource is refused before its quantity is read", 0, "hugepages-2Mi", "garbage",
     DRAKE_ENOTFOUND, 0, 0, 0, -1, 0},
    {"a tracked resource with a bad quantity is invalid", 1, "example.com/r0", "garbage",
     DRAKE_EINVAL, 0, 0, 0, -1, 0},
};

static void run_set_case(void **state)
{
	const struct set_case *k = *state;
	struct drake_res_names t = table_of(k->table);
	struct drake_res r = {0};
	unsigned has = 0;
	char msg[128] = "";
	drake_err e = drake_res_set(&r, &has, &t, k->resource, k->quantity, msg, sizeof(msg));
	if (e != k->err)
		fail_msg("case '%s': got %s (%s)", k->name, drake_strerror(e), msg);
	assert_int_equal(t.n, k->table); /* never adds */
	if (e) {
		assert_true(msg[0] != '\0');
		assert_true(drake_res_is_zero(&r));
		return;
	}
	assert_int_equal(r.cpu_milli, k->cpu_milli);
	assert_int_equal(r.mem_bytes, k->mem_bytes);
	assert_int_equal(r.gpu, k->gpu);
	for (int i = 0; i < DRAKE_RES_MAX_EXT; i++)
		assert_int_equal(r.ext[i], i == k->ext ? k->value : 0);
	if (k->ext >= 0)
		assert_int_equal(has, DRAKE_RES_HAS_EXT0 << k->ext);
}

static void the_last_extended_resource_counts_in_every_fit(void **state)
{
	struct drake_res req = {0}, avail = {0};
	req.cpu_milli = 1000;
	req.ext[DRAKE_RES_MAX_EXT - 1] = 2;
	avail.cpu_milli = 64000;
	avail.ext[DRAKE_RES_MAX_EXT - 1] = 5;
	assert_true(drake_res_fits(&req, &avail));
	assert_int_equal(drake_res_count_fit(&req, &avail, 100), 2);
	avail.ext[DRAKE_RES_MAX_EXT - 1] = 1;
	assert_false(drake_res_fits(&req, &avail));
	assert_int_equal(drake_res_count_fit(&req, &avail, 100), 0);
}

static void only_cpu_memory_and_whole_gpus_are_built_in(void **state)
{
	assert_true(drake_res_builtin("cpu"));
	assert_true(drake_res_builtin("memory"));
	assert_true(drake_res_builtin("nvidia.com/gpu"));
	assert_false(drake_res_builtin("pods"));
	assert_false(drake_res_builtin("ephemeral-storage"));
	assert_false(drake_res_builtin("nvidia.com/mig-1g.10gb"));
}

int main(void)
{
	const struct CMUnitTest fixed[] = {
	    cmocka_unit_test(the_table_takes_max_ext_names_and_refuses_one_more),
	    cmocka_unit_test(a_lookup_never_adds),
	    cmocka_unit_test(a_name_too_long_for_the_table_is_refused),
	    cmocka_unit_test(the_last_extended_resource_counts_in_every_fit),
	    cmocka_unit_test(only_cpu_memory_and_whole_gpus_are_built_in),
	};
	enum {
		NF = sizeof(fixed) / sizeof(fixed[0]),
		NS = sizeof(set_cases) / sizeof(set_cases[0])
	};
	struct CMUnitTest tests[NF + NS];
	for (size_t i = 0; i < NF; i++)
		tests[i] = fixed[i];
	for (size_t i = 0; i < NS; i++)
		tests[NF + i] = (struct CMUnitTest){set_cases[i].name, run_set_case, NULL, NULL,
		                                    (void *)&set_cases[i]};
	return _cmocka_run_group_tests("resource", tests, NF + NS, NULL, NULL);
}
