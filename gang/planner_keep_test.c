/* planner_keep_test.c - room for the queue: with the shapes the waiting
 * jobs need, the planner keeps the nodes they can use, without spanning
 * more nodes than it would anyway. Every case is planned twice, without
 * the shapes and with them, and both placements are checked, so a case
 * fails when the preference is gone as well as when it misfires. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gang/gang_testutil.h"
#include "gang/planner.h"

#define MAXK 3

struct kcase {
	const char *name;
	const char *cluster;
	int min, want;      /* 1 PS (no GPU) and workers of worker_gpu GPUs */
	int worker_gpu;     /* 0: 1 */
	int keep_gpu[MAXK]; /* the queue's worker shapes (4 CPU, 32Gi, GPUs), 0 ends */
	const char *plain;  /* workers' nodes without the shapes, then "/" and the PS's */
	const char *kept;   /* the same with them */
};

static const struct kcase cases[] = {
    {"a job larger than a node fills the part-used nodes and keeps the empty one whole",
     "a:8:0 b:8:2 c:8:2",
     5,
     5,
     2,
     {8},
     "aaaab/a",
     "bbbcc/b"},
    {"the part-used nodes are taken only when the job spans no more nodes for it",
     "a:8:0 b:8:4 c:8:4",
     2,
     2,
     4,
     {8},
     "aa/a",
     "aa/a"},
    {"a job that fits one node goes where the queue's shape still fits, not where it fits "
     "tightest",
     "a:8:3 b:8:1",
     3,
     3,
     1,
     {4},
     "aaa/a",
     "bbb/b"},
    {"shapes that ask for no GPU change nothing",
     "a:8:0 b:8:2 c:8:2",
     5,
     5,
     2,
     {0},
     "aaaab/a",
     "aaaab/a"},
    {"a queue of one-GPU shapes can use every free GPU, so nothing is kept",
     "a:8:0 b:8:2 c:8:2",
     5,
     5,
     2,
     {1},
     "aaaab/a",
     "aaaab/a"},
    {"an elastic job that takes all the room it can leaves the plan as it was",
     "a:8:0 b:8:2 c:8:2",
     2,
     8,
     2,
     {8},
     "aaaabbbc/a",
     "aaaabbbc/a"},
    {"the last worker goes where it breaks no block of the queue's shape, not to the tightest "
     "node",
     "a:8:0 b:8:3 c:8:4",
     9,
     9,
     1,
     {4},
     "aaaaaaaac/a",
     "aaaaaaaab/a"},
    {"each worker goes where the queue loses the fewest GPUs, not to the tightest node",
     "a:8:4 b:8:1 c:12:3 d:8:7",
     5,
     5,
     2,
     {2, 8},
     "acccc/c",
     "aabbb/a"},
    {"a node the job already uses is filled before another that loses as much is opened",
     "a:8:4 b:8:2 c:8:1 d:8:0",
     5,
     5,
     2,
     {4, 8},
     "adddd/d",
     "bbbcc/b"},
    {"with several shapes the GPUs each can use are added up",
     "a:8:0 b:8:2 c:8:2",
     5,
     5,
     2,
     {4, 8},
     "aaaab/a",
     "bbbcc/b"},
};

/* "aaaab/a": the plan's worker nodes in slot order, then its PS node. */
static void plan_string(const struct drake_cluster *c, const struct drake_plan *p, char *buf,
                        size_t len)
{
	size_t at = 0;
	for (int i = 0; i < p->n_workers && at + 3 < len; i++)
		buf[at++] = c->nodes[p->worker_node[i]].name[0];
	buf[at++] = '/';
	buf[at++] = p->n_ps ? c->nodes[p->ps_node[0]].name[0] : '-';
	buf[at] = '\0';
}

/* The plan's workers as a sorted multiset, so the check does not depend on
 * which slot went first beyond worker 0 beside the PS. */
static void sorted(char *s)
{
	char *slash = strchr(s, '/');
	size_t n = slash ? (size_t)(slash - s) : strlen(s);
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && s[j - 1] > s[j]; j--) {
			char t = s[j];
			s[j] = s[j - 1];
			s[j - 1] = t;
		}
}

static void plan_as(const struct drake_cluster *c, const struct drake_gang_req *r, const char *want,
                    const char *what)
{
	struct drake_plan p = {0};
	char why[512], got[64], exp[64];
	assert_int_equal(drake_plan_gang(c, r, &p, why, sizeof(why)), DRAKE_OK);
	plan_string(c, &p, got, sizeof(got));
	/* worker 0 sits beside the PS */
	assert_int_equal(p.worker_node[0], p.ps_node[0]);
	assert_int_equal(p.nodes_spanned,
	                 drake_plan_count_nodes(p.ps_node, p.n_ps, p.worker_node, p.n_workers));
	snprintf(exp, sizeof(exp), "%s", want);
	sorted(got);
	sorted(exp);
	if (strcmp(got, exp) != 0)
		fail_msg("%s: planned %s, want %s", what, got, exp);
	drake_plan_release(&p);
}

static void run_case(void **state)
{
	const struct kcase *k = *state;
	struct drake_cluster c;
	assert_int_equal(cluster_from(&c, k->cluster), 0);
	struct drake_gang_req r = gpu_job(1, k->min, k->want);
	if (k->worker_gpu)
		r.worker = res_of(4, 32, k->worker_gpu);
	plan_as(&c, &r, k->plain, "without the queue's shapes");
	struct drake_res keep[MAXK];
	int n = 0;
	for (; n < MAXK && (n == 0 || k->keep_gpu[n]); n++)
		keep[n] = res_of(4, 32, k->keep_gpu[n]);
	r.keep = keep;
	r.n_keep = n;
	plan_as(&c, &r, k->kept, "with the queue's shapes");
	/* the snapshot is only read */
	plan_as(&c, &r, k->kept, "planned again");
	drake_cluster_release(&c);
}

static void too_many_shapes_are_refused(void **state)
{
	(void)state;
	struct drake_cluster c;
	assert_int_equal(cluster_from(&c, "a:8:0"), 0);
	struct drake_res keep[DRAKE_GANG_MAX_KEEP + 1] = {{0}};
	struct drake_gang_req r = gpu_job(1, 1, 1);
	struct drake_plan p = {0};
	char why[512];
	r.keep = keep;
	r.n_keep = DRAKE_GANG_MAX_KEEP + 1;
	assert_int_equal(drake_plan_gang(&c, &r, &p, why, sizeof(why)), DRAKE_EINVAL);
	assert_non_null(strstr(why, "queue shapes"));
	r.n_keep = 1;
	r.keep = NULL;
	assert_int_equal(drake_plan_gang(&c, &r, &p, why, sizeof(why)), DRAKE_EINVAL);
	r.keep = keep;
	r.n_keep = DRAKE_GANG_MAX_KEEP;
	assert_int_equal(drake_plan_gang(&c, &r, &p, why, sizeof(why)), DRAKE_OK);
	drake_plan_release(&p);
	drake_cluster_release(&c);
}

int main(void)
{
	size_t n = sizeof(cases) / sizeof(cases[0]);
	struct CMUnitTest tests[sizeof(cases) / sizeof(cases[0]) + 1];
	for (size_t i = 0; i < n; i++)
		tests[i] =
		    (struct CMUnitTest){cases[i].name, run_case, NULL, NULL, (void *)&cases[i]};
	tests[n] = (struct CMUnitTest)cmocka_unit_test(too_many_shapes_are_refused);
	return _cmocka_run_group_tests("planner_keep", tests, n + 1, NULL, NULL);
}
