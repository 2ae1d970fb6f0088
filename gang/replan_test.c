/* replan_test.c - a gang member whose planned node is no longer offered
 * goes beside its job, into room no other gang reserved, tightest first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gang/gang_testutil.h"
#include "gang/replan.h"

struct tcase {
	const char *name;
	const char *cluster; /* gang_testutil's cluster_from */
	const char *cand[4];
	int members[4];
	int want; /* index into cand, -1 none */
};

static const struct tcase cases[] = {
    {"the node holding most of its job wins over a tighter fit",
     "a:8:6 b:8:0 c:8:7",
     {"a", "b", "c"},
     {0, 3, 1},
     1},
    {"with no job on any candidate, the tightest fit wins",
     "a:8:2 b:8:6 c:8:0",
     {"a", "b", "c"},
     {0, 0, 0},
     1},
    {"a node without room is never chosen, however much of the job it holds",
     "a:8:8 b:8:0",
     {"a", "b"},
     {5, 0},
     1},
    {"another gang's reservation is room taken", "a:8:8 b:8:8", {"a", "b"}, {0, 0}, -1},
    {"an unschedulable node is skipped", "a:8:0! b:8:4", {"a", "b"}, {4, 0}, 1},
    {"a candidate the snapshot does not know is skipped", "a:8:4", {"ghost", "a"}, {9, 0}, 1},
    {"equal nodes go by name, whatever the candidates' order",
     "a:8:0 b:8:0",
     {"b", "a"},
     {0, 0},
     1},
};

static void each_case(void **state)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct tcase *t = &cases[i];
		struct drake_cluster c;
		assert_int_equal(cluster_from(&c, t->cluster), 0);
		size_t n = 0;
		while (n < 4 && t->cand[n])
			n++;
		struct drake_res req = res_of(4, 32, 1);
		int got = drake_replan_pick(&c, &req, t->cand, t->members, n);
		drake_cluster_release(&c);
		if (got != t->want)
			fail_msg("%s: got %d, want %d", t->name, got, t->want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(each_case)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
