/* planner_test.c - where gangs go: packing, fewest nodes, fragmentation,
 * heterogeneous nodes, and jobs that must wait or can never fit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gang/gang_testutil.h"
#include "gang/planner.h"

struct pcase {
	const char *name;
	const char *cluster;
	int n_ps, min, want;
	drake_err err;
	int workers;          /* expected workers placed */
	int spanned;          /* expected nodes spanned (0: don't check) */
	const char *ps_on;    /* expected PS node (NULL: don't check) */
	const char *why_has;  /* substring of the reason, for waits */
	const char *last_on;  /* expected node of the last worker (NULL: don't check) */
	int chiefs;           /* 0: no chief; 1: a chief */
	int chief_gpu;        /* the chief's GPUs */
	const char *chief_on; /* expected node of the chief (NULL: don't check) */
};

#define NO_CHIEF 0, 0, NULL

static const struct pcase cases[] = {
    {"a job that fits one node is packed onto one node", "a:8:0 b:8:0 c:8:0", 1, 7, 7, DRAKE_OK, 7,
     1, "a", NULL, NULL, NO_CHIEF},
    {"one PS and seven workers land on one 8-GPU node", "n1:8:0 n2:8:0", 1, 7, 7, DRAKE_OK, 7, 1,
     "n1", NULL, NULL, NO_CHIEF},
    {"best fit picks the node that strands the least", "a:8:0 b:8:4 c:8:2", 1, 4, 4, DRAKE_OK, 4, 1,
     "b", NULL, NULL, NO_CHIEF},
    {"ties break by node name", "z:8:0 m:8:0 b:8:0", 1, 2, 2, DRAKE_OK, 2, 1, "b", NULL, NULL,
     NO_CHIEF},
    {"a job too big for any node spans the fewest nodes", "a:8:0 b:8:0 c:8:0 d:2:0", 1, 16, 16,
     DRAKE_OK, 16, 2, NULL, NULL, NULL, NO_CHIEF},
    {"the remainder goes to the tightest node that takes it", "a:8:0 b:8:5 c:8:3 d:8:6", 1, 11, 11,
     DRAKE_OK, 11, 2, "a", NULL, "b", NO_CHIEF},
    {"without a tight node the spill takes the largest block first", "a:8:0 b:8:6 c:8:3 d:8:6", 1,
     14, 14, DRAKE_OK, 14, 3, "a", NULL, "b", NO_CHIEF},
    {"on heterogeneous nodes the PS goes where most of the job fits", "a:2:0 b:4:0 c:8:0", 1, 12,
     12, DRAKE_OK, 12, 2, "c", NULL, NULL, NO_CHIEF},
    {"fragmented free GPUs still host a gang over several nodes", "a:8:6 b:8:6 c:8:6 d:8:6", 1, 8,
     8, DRAKE_OK, 8, 4, NULL, NULL, NULL, NO_CHIEF},
    {"fewer than desired workers start when only that many fit", "a:4:0 b:8:7", 1, 2, 8, DRAKE_OK,
     5, 2, "a", NULL, NULL, NO_CHIEF},
    {"a job below its minimum waits and names the largest block", "a:8:6 b:8:7", 1, 4, 4,
     DRAKE_ESTATE, 0, 0, NULL, "largest free block 2 workers on a", NULL, NO_CHIEF},
    {"a job larger than the empty cluster can never fit", "a:8:0 b:8:0", 1, 17, 17, DRAKE_ELIMIT, 0,
     0, NULL, "can never fit", NULL, NO_CHIEF},
    {"unschedulable nodes are never chosen", "a:8:0! b:8:0", 1, 8, 8, DRAKE_OK, 8, 1, "b", NULL,
     NULL, NO_CHIEF},
    {"a full cluster of cordoned nodes makes every job never fit", "a:8:0! b:8:0!", 1, 1, 1,
     DRAKE_ELIMIT, 0, 0, NULL, "can never fit", NULL, NO_CHIEF},
    {"a PS-only request places just the PS", "a:0:0", 1, 0, 0, DRAKE_OK, 0, 1, "a", NULL, NULL,
     NO_CHIEF},
    {"min above desired is refused", "a:8:0", 1, 5, 4, DRAKE_EINVAL, 0, 0, NULL, "min", NULL,
     NO_CHIEF},
    {"a job without PS that no node takes waits", "a:8:8 b:8:8", 0, 1, 1, DRAKE_ESTATE, 0, 0, NULL,
     "0 workers fit now", NULL, NO_CHIEF},
    {"a chief is packed beside the PS and workers on one node", "a:8:0 b:8:0", 1, 6, 6, DRAKE_OK, 6,
     1, "a", NULL, NULL, 1, 1, "a"},
    {"a chief stays beside the PS when the job spans nodes", "a:8:0 b:8:0 c:8:0", 1, 12, 12,
     DRAKE_OK, 12, 2, "a", NULL, NULL, 1, 1, "a"},
    {"a chief too big for the PS node goes where it fits best", "a:8:2 b:12:0 c:8:0", 1, 6, 6,
     DRAKE_OK, 6, 2, "a", NULL, "a", 1, 8, "c"},
    {"a chief takes its place before elastic workers fill the PS node", "a:8:0", 1, 4, 8, DRAKE_OK,
     6, 1, "a", NULL, NULL, 1, 2, "a"},
    {"without PS the chief and workers still pack onto one node", "a:8:4 b:8:0", 0, 6, 6, DRAKE_OK,
     6, 1, NULL, NULL, NULL, 1, 1, "b"},
    {"a chief that fits on no node now makes the job wait", "a:8:4 b:8:4", 1, 4, 4, DRAKE_ESTATE, 0,
     0, NULL, "the chief fits on no node now", NULL, 1, 5, NULL},
    {"a chief counts toward the minimum", "a:8:1", 1, 7, 7, DRAKE_ESTATE, 0, 0, NULL,
     "needs 1 PS + 1 chief + 7 workers", NULL, 1, 1, NULL},
    {"a chief larger than any node can never fit", "a:8:0 b:8:0", 1, 1, 1, DRAKE_ELIMIT, 0, 0, NULL,
     "1 workers but not the chief", NULL, 1, 9, NULL},
};

static void run_case(void **state)
{
	const struct pcase *c = *state;
	struct drake_cluster cl;
	assert_int_equal(cluster_from(&cl, c->cluster), 0);
	struct drake_gang_req r = gpu_job(c->n_ps, c->min, c->want);
	if (c->chiefs)
		r = with_chief(r, c->chief_gpu);
	struct drake_plan p = {0};
	char why[256] = "";
	drake_err err = drake_plan_gang(&cl, &r, &p, why, sizeof(why));
	if (err != c->err)
		print_error("got %s (%s), want %s\n", drake_strerror(err), why,
		            drake_strerror(c->err));
	assert_int_equal(err, c->err);
	if (err == DRAKE_OK) {
		assert_int_equal(p.n_workers, c->workers);
		assert_int_equal(p.n_ps, c->n_ps);
		assert_int_equal(p.n_chief, c->chiefs);
		if (c->chief_on)
			assert_string_equal(cl.nodes[p.chief_node].name, c->chief_on);
		if (c->spanned)
			assert_int_equal(p.nodes_spanned, c->spanned);
		if (c->ps_on)
			assert_string_equal(cl.nodes[p.ps_node[0]].name, c->ps_on);
		if (c->last_on)
			assert_string_equal(cl.nodes[p.worker_node[p.n_workers - 1]].name,
			                    c->last_on);
		/* The plan never overcommits any node. */
		struct drake_cluster copy;
		assert_int_equal(drake_cluster_clone(&copy, &cl), DRAKE_OK);
		for (int i = 0; i < p.n_ps; i++)
			drake_cluster_charge(&copy, (size_t)p.ps_node[i], &r.ps, 1);
		for (int i = 0; i < p.n_workers; i++)
			drake_cluster_charge(&copy, (size_t)p.worker_node[i], &r.worker, 1);
		if (p.n_chief)
			drake_cluster_charge(&copy, (size_t)p.chief_node, &r.chief, 1);
		for (size_t i = 0; i < copy.n; i++)
			assert_true(drake_res_fits(&copy.nodes[i].used, &copy.nodes[i].alloc));
		/* Without a chief, worker 0 coordinates: it is beside the PS
		 * when there is a PS and a worker. */
		if (!p.n_chief && p.n_ps && p.n_workers)
			assert_int_equal(p.worker_node[0], p.ps_node[0]);
		drake_cluster_release(&copy);
	} else if (c->why_has) {
		if (!strstr(why, c->why_has))
			print_error("reason \"%s\" lacks \"%s\"\n", why, c->why_has);
		assert_non_null(strstr(why, c->why_has));
	}
	drake_plan_release(&p);
	drake_cluster_release(&cl);
}

static void planning_twice_gives_the_same_plan(void **state)
{
	(void)state;
	struct drake_cluster cl;
	assert_int_equal(cluster_from(&cl, "a:8:3 b:8:5 c:8:1 d:8:7 e:8:2"), 0);
	struct drake_gang_req r = gpu_job(1, 10, 14);
	struct drake_plan p1 = {0}, p2 = {0};
	assert_int_equal(drake_plan_gang(&cl, &r, &p1, NULL, 0), DRAKE_OK);
	assert_int_equal(drake_plan_gang(&cl, &r, &p2, NULL, 0), DRAKE_OK);
	assert_int_equal(p1.n_workers, p2.n_workers);
	assert_memory_equal(p1.worker_node, p2.worker_node, sizeof(int) * (size_t)p1.n_workers);
	drake_plan_release(&p1);
	drake_plan_release(&p2);
	drake_cluster_release(&cl);
}

static void extended_resources_must_be_free_too(void **state)
{
	(void)state;
	struct drake_cluster cl;
	drake_cluster_init(&cl);
	struct drake_res a = res_of(64, 512, 8), b = res_of(64, 512, 8);
	int fpga = drake_res_name_index(&cl.names, "example.com/fpga", true);
	assert_int_equal(fpga, 0);
	b.ext[fpga] = 2;
	assert_int_equal(drake_cluster_add_node(&cl, "a", &a, true, NULL, 0), DRAKE_OK);
	assert_int_equal(drake_cluster_add_node(&cl, "b", &b, true, NULL, 0), DRAKE_OK);
	assert_int_equal(drake_cluster_sort(&cl, NULL, 0), DRAKE_OK);
	struct drake_gang_req r = gpu_job(0, 2, 2);
	r.worker.ext[fpga] = 1;
	struct drake_plan p = {0};
	assert_int_equal(drake_plan_gang(&cl, &r, &p, NULL, 0), DRAKE_OK);
	assert_string_equal(cl.nodes[p.worker_node[0]].name, "b");
	assert_string_equal(cl.nodes[p.worker_node[1]].name, "b");
	drake_plan_release(&p);
	drake_cluster_release(&cl);
}

static void a_roles_node_mask_keeps_it_to_the_nodes_it_may_use(void **state)
{
	(void)state;
	struct drake_cluster c;
	assert_int_equal(cluster_from(&c, "a:8:0 b:8:0 c:8:0"), 0);
	/* the workers may only use c, the PS anywhere: the whole job on c */
	unsigned char only_c[3] = {0, 0, 1};
	struct drake_gang_req req = {.n_ps = 1,
	                             .worker = res_of(1, 1, 1),
	                             .min_workers = 4,
	                             .want_workers = 4,
	                             .worker_ok = only_c};
	struct drake_plan p;
	char why[256];
	assert_int_equal(drake_plan_gang(&c, &req, &p, why, sizeof(why)), DRAKE_OK);
	for (int i = 0; i < p.n_workers; i++)
		assert_int_equal(p.worker_node[i], 2);
	assert_int_equal(p.ps_node[0], 2); /* beside its workers */
	drake_plan_release(&p);
	/* more workers than c holds: they wait rather than spill onto a or b */
	req.min_workers = req.want_workers = 9;
	assert_int_equal(drake_plan_gang(&c, &req, &p, why, sizeof(why)), DRAKE_ELIMIT);
	assert_non_null(strstr(why, "the nodes its node selector, affinity and tolerations allow"));
	/* a mask with no node at all: waiting, and says why */
	unsigned char none[3] = {0, 0, 0};
	req.min_workers = req.want_workers = 1;
	req.worker_ok = none;
	assert_int_equal(drake_plan_gang(&c, &req, &p, why, sizeof(why)), DRAKE_ESTATE);
	assert_non_null(strstr(why, "no schedulable node matches the node selector and required "
	                            "affinity of the workers"));
	drake_cluster_release(&c);
}

static void a_tainted_node_is_open_only_to_replicas_that_tolerate_it(void **state)
{
	(void)state;
	struct drake_cluster c;
	assert_int_equal(cluster_from(&c, "a:8:0! b:8:6"), 0);
	c.nodes[0].tainted = true; /* a: kept out only by a taint */
	struct drake_gang_req req = {
	    .n_ps = 1, .worker = res_of(1, 1, 1), .min_workers = 4, .want_workers = 4};
	struct drake_plan p;
	char why[256];
	/* no mask: the taint keeps everyone off a; b has 2 GPUs free */
	assert_int_equal(drake_plan_gang(&c, &req, &p, why, sizeof(why)), DRAKE_ESTATE);
	/* tolerated (its mask lets it onto a and b) */
	unsigned char both[2] = {1, 1};
	req.ps_ok = req.worker_ok = both;
	assert_int_equal(drake_plan_gang(&c, &req, &p, why, sizeof(why)), DRAKE_OK);
	for (int i = 0; i < p.n_workers; i++)
		assert_int_equal(p.worker_node[i], 0);
	drake_plan_release(&p);
	/* a cordoned node stays closed to every mask */
	c.nodes[0].tainted = false;
	assert_int_equal(drake_plan_gang(&c, &req, &p, why, sizeof(why)), DRAKE_ESTATE);
	drake_cluster_release(&c);
}

int main(void)
{
	size_t n = sizeof(cases) / sizeof(cases[0]);
	struct CMUnitTest tests[sizeof(cases) / sizeof(cases[0]) + 4];
	for (size_t i = 0; i < n; i++)
		tests[i] =
		    (struct CMUnitTest){cases[i].name, run_case, NULL, NULL, (void *)&cases[i]};
	tests[n] = (struct CMUnitTest)cmocka_unit_test(planning_twice_gives_the_same_plan);
	tests[n + 1] = (struct CMUnitTest)cmocka_unit_test(extended_resources_must_be_free_too);
	tests[n + 2] =
	    (struct CMUnitTest)cmocka_unit_test(a_roles_node_mask_keeps_it_to_the_nodes_it_may_use);
	tests[n + 3] = (struct CMUnitTest)cmocka_unit_test(
	    a_tainted_node_is_open_only_to_replicas_that_tolerate_it);
	return _cmocka_run_group_tests("planner", tests, n + 4, NULL, NULL);
}
