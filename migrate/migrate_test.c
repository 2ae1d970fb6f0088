/* migrate_test.c - overload decisions: which node sheds, which worker,
 * where it goes, and the safety rules, including the defects of the
 * container-migration fork (limits for load, a "std" of one node's
 * deviation, a cap that plan copies reset). Cases are built by
 * migrate_testutil.h. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "migrate/migrate_testutil.h"

struct dcase {
	const char *name;
	struct nspec n[MAXN];
	struct rspec r[MAXR];
	const char *want; /* the decisions, rendered */
};

/* 32 CPUs and 128Gi: a worker of c CPUs and 4c Gi adds c/32 to the load. */
#define N32(name, other)                                                                           \
	{                                                                                          \
		name, 32, 128, 0, other, 4 * (other), 0, false                                     \
	}
#define WK(pod, node, cpus)                                                                        \
	{                                                                                          \
		pod, NULL, node, 'w', cpus, 4 * (cpus), 0, 0, 0, 0, NULL                           \
	}
/* 100 CPUs and 100Gi with `other` of each used: load other/100 before workers */
#define N100(name, other)                                                                          \
	{                                                                                          \
		name, 100, 100, 0, other, other, 0, false                                          \
	}

static const struct dcase decide_cases[] = {
    {"a balanced cluster moves nothing",
     {N32("n1", 0), N32("n2", 0), N32("n3", 0)},
     {WK("w1", "n1", 8), WK("w2", "n2", 8), WK("w3", "n3", 8)},
     ""},
    {"the overloaded node sheds one worker to the least-loaded node, the first by pod name",
     {N32("n1", 0), N32("n2", 0), N32("n3", 0), N32("n4", 0)},
     {WK("w-2", "n1", 8), WK("w-1", "n1", 8), WK("w-0", "n1", 8), WK("x", "n2", 8),
      WK("y", "n4", 8)},
     "w-0:n1>n3"},
    /* The fork's testbed gave every container limits of 4 CPUs / 8Gi. n1's
     * four pods request 0.5 CPU / 1Gi each: a quarter of n1 by requests,
     * twice n1 by limits (loads 2.0, .75, 0 by limits make n1 the hot
     * node); by requests (.25, .75, 0) n2 is. */
    {"load is requests, not limits: the node over-committed on limits is not the hot one",
     {{"n1", 8, 16, 0, 0, 0, 0, false},
      {"n2", 8, 16, 0, 0, 0, 0, false},
      {"n3", 8, 16, 0, 0, 0, 0, false}},
     {{"small-0", "ns/s", "n1", 'w', 0.5, 1, 0, 0, 0, 0, NULL},
      {"small-1", "ns/s", "n1", 'w', 0.5, 1, 0, 0, 0, 0, NULL},
      {"small-2", "ns/s", "n1", 'w', 0.5, 1, 0, 0, 0, 0, NULL},
      {"small-3", "ns/s", "n1", 'w', 0.5, 1, 0, 0, 0, 0, NULL},
      {"big-0", "ns/b", "n2", 'w', 3, 6, 0, 0, 0, 0, NULL},
      {"big-1", "ns/b", "n2", 'w', 3, 6, 0, 0, 0, 0, NULL}},
     "big-0:n2>n3"},
    /* loads a .6, b .55, c .45, d .4, e .5: mean .5, population std
     * sqrt(.025 / 5) = .0707, so only a (+.1) is over; the fork's
     * `sum = dx*dx` kept e's deviation (0): "std" 0 marks b (+.05) too. */
    {"the std is the population's over every node: only the node above mean + std sheds",
     {N100("a", 50), N100("b", 45), N100("c", 45), N100("d", 40), N100("e", 50)},
     {{"a-w0", NULL, "a", 'w', 5, 5, 0, 0, 0, 0, NULL},
      {"a-w1", NULL, "a", 'w', 5, 5, 0, 0, 0, 0, NULL},
      {"b-w0", NULL, "b", 'w', 5, 5, 0, 0, 0, 0, NULL},
      {"b-w1", NULL, "b", 'w', 5, 5, 0, 0, 0, 0, NULL}},
     "a-w0:a>d"},
    {"equal loads are never overloaded (std 0)",
     {N32("n1", 16), N32("n2", 16)},
     {WK("w1", "n1", 4), WK("w2", "n2", 4)},
     ""},
    {"a PS or chief never moves for overload",
     {N32("n1", 0), N32("n2", 0), N32("n3", 0), N32("n4", 0)},
     {{"ps-0", NULL, "n1", 'p', 12, 48, 0, 0, 0, 0, NULL},
      {"chief-0", NULL, "n1", 'c', 12, 48, 0, 0, 0, 0, NULL}},
     ""},
    {"a worker cooling down stays; the next by name moves",
     {N32("n1", 0), N32("n2", 0), N32("n3", 0), N32("n4", 0)},
     {{"w-0", NULL, "n1", 'w', 8, 32, 0, 1, 12, 0, NULL}, WK("w-1", "n1", 8), WK("w-2", "n1", 8)},
     "w-1:n1>n2"},
    {"a worker cooled down moves again",
     {N32("n1", 0), N32("n2", 0), N32("n3", 0), N32("n4", 0)},
     {{"w-0", NULL, "n1", 'w', 8, 32, 0, 1, 30, 0, NULL}, WK("w-1", "n1", 8), WK("w-2", "n1", 8)},
     "w-0:n1>n2"},
    {"the cap is the persisted count alone: 3 moves and never a timestamp still stays",
     {N32("n1", 0), N32("n2", 0), N32("n3", 0), N32("n4", 0)},
     {{"w-0", NULL, "n1", 'w', 8, 32, 0, 3, 0, 0, NULL},
      {"w-1", NULL, "n1", 'w', 8, 32, 0, 2, 0, 0, NULL},
      WK("w-2", "n1", 8)},
     "w-1:n1>n2"},
    {"nothing moves in the last 5% of a job's steps; unknown progress does not block",
     {N32("n1", 0), N32("n2", 0), N32("n3", 0), N32("n4", 0)},
     {{"w-0", "ns/late", "n1", 'w', 8, 32, 0, 0, 0, 95, NULL},
      {"w-1", "ns/new", "n1", 'w', 8, 32, 0, 0, 0, 0, NULL},
      WK("w-2", "n1", 8)},
     "w-1:n1>n2"},
    {"a worker at its role's minimum stays: the move would leave the job short",
     {N32("n1", 0), N32("n2", 0), N32("n3", 0), N32("n4", 0)},
     {{"w-0", "ns/tight", "n1", 'w', 8, 32, 0, 0, 0, 0, "2/2"},
      {"w-1", "ns/ok", "n1", 'w', 8, 32, 0, 0, 0, 0, "3/2"},
      {"w-2", "ns/tight", "n1", 'w', 8, 32, 0, 0, 0, 0, "2/2"}},
     "w-1:n1>n2"},
    {"two moves of one job in one call count each other: the second would leave it short",
     {N100("a-hot", 75), N100("b-hot", 85), N100("c1", 10), N100("c2", 10), N100("c3", 10),
      N100("c4", 10), N100("c5", 10), N100("c6", 10)},
     {{"j-0", "ns/j", "a-hot", 'w', 5, 5, 0, 0, 0, 0, "3/2"},
      {"j-1", "ns/j", "b-hot", 'w', 5, 5, 0, 0, 0, 0, "3/2"}},
     "j-1:b-hot>c1"},
    {"each overloaded node sheds one, most loaded first, seeing the moves before it",
     {N100("a-hot", 75), N100("b-hot", 85), N100("c1", 10), N100("c2", 10), N100("c3", 10),
      N100("c4", 10), N100("c5", 10), N100("c6", 10)},
     {{"a-0", "ns/a", "a-hot", 'w', 5, 5, 0, 0, 0, 0, NULL},
      {"b-0", "ns/b", "b-hot", 'w', 5, 5, 0, 0, 0, 0, NULL}},
     "b-0:b-hot>c1 a-0:a-hot>c2"},
    /* g1 is GPU-full; c1, a CPU-only node, is the least loaded but has no GPU */
    {"the target has room for it: a GPU worker passes over the idle node without GPUs",
     {{"c1", 64, 512, 0, 0, 0, 0, false},
      {"g1", 64, 512, 8, 0, 0, 0, false},
      {"g2", 64, 512, 8, 0, 0, 0, false},
      {"g3", 64, 512, 8, 0, 0, 8, false}},
     {{"g1-w0", NULL, "g1", 'w', 8, 64, 2, 0, 0, 0, NULL},
      {"g1-w1", NULL, "g1", 'w', 8, 64, 2, 0, 0, 0, NULL},
      {"g1-w2", NULL, "g1", 'w', 8, 64, 2, 0, 0, 0, NULL},
      {"g1-w3", NULL, "g1", 'w', 8, 64, 2, 0, 0, 0, NULL},
      {"g2-w0", NULL, "g2", 'w', 8, 64, 2, 0, 0, 0, NULL}},
     "g1-w0:g1>g2"},
    {"no node has room for it: nothing moves",
     {{"c1", 64, 512, 0, 0, 0, 0, false},
      {"c2", 64, 512, 0, 0, 0, 0, false},
      {"g1", 64, 512, 8, 0, 0, 0, false}},
     {{"g1-w0", NULL, "g1", 'w', 32, 256, 4, 0, 0, 0, NULL},
      {"g1-w1", NULL, "g1", 'w', 16, 128, 4, 0, 0, 0, NULL}},
     ""},
    /* s is the least loaded but small: taking a 16-CPU worker it would be at
     * .8, above h's .5 after the move; m ends at .5, no higher than h */
    {"the target never ends more loaded than the source after the move",
     {{"h", 64, 256, 0, 16, 64, 0, false},
      {"m", 64, 256, 0, 16, 64, 0, false},
      {"s", 20, 80, 0, 0, 0, 0, false}},
     {{"h-w0", NULL, "h", 'w', 16, 64, 0, 0, 0, 0, NULL},
      {"h-w1", NULL, "h", 'w', 16, 64, 0, 0, 0, 0, NULL}},
     "h-w0:h>m"},
    {"a cordoned node neither counts toward the mean nor receives",
     {N32("n1", 0), N32("n2", 0), N32("n3", 0), N32("n4", 0), {"n0", 32, 128, 0, 0, 0, 0, true}},
     {WK("w-0", "n1", 8), WK("w-1", "n1", 8), WK("w-2", "n1", 8), WK("x", "n2", 8),
      WK("y", "n4", 8)},
     "w-0:n1>n3"},
    {"the move that lowers the spread most wins over the first pod name",
     {N32("n1", 0), N32("n2", 0), N32("n3", 0), N32("n4", 0)},
     {WK("a", "n1", 2), WK("d", "n1", 6), WK("b", "n1", 6), WK("c", "n1", 6), WK("x", "n2", 4),
      WK("y", "n3", 2), WK("z", "n4", 6)},
     "b:n1>n3"},
    /* b .55 sheds 2 CPUs to s (4 CPUs): b .53, s .5; the loads' sum grows,
     * and the spread, taken about the new mean, still falls (.259 -> .243) */
    {"a move onto a smaller node counts the mean it raises: the spread still falls",
     {{"b", 100, 100, 0, 53, 53, 0, false},
      {"o", 1, 1, 0, 0, 0, 0, false},
      {"s", 4, 4, 0, 0, 0, 0, false}},
     {{"b-w0", NULL, "b", 'w', 2, 2, 0, 0, 0, 0, NULL}},
     "b-w0:b>s"},
    /* a .55 could give 1 CPU to s (2 CPUs): a .54, s .5, below a; but
     * with o1 and o2 idle the spread grows (.238 -> .260): no move */
    {"a move that would raise the spread is not made, though the target stays below the source",
     {{"a", 100, 100, 0, 54, 54, 0, false},
      {"o1", 1, 1, 0, 0, 0, 0, false},
      {"o2", 1, 1, 0, 0, 0, 0, false},
      {"s", 2, 2, 0, 0, 0, 0, false}},
     {{"a-w0", NULL, "a", 'w', 1, 1, 0, 0, 0, 0, NULL}},
     ""},
    {"a worker that requests nothing is not moved: it changes no load",
     {N32("n1", 24), N32("n2", 0), N32("n3", 0)},
     {WK("empty", "n1", 0)},
     ""},
    {"the only worker of a node is not moved just to make the target the hot node",
     {N32("n1", 0), N32("n2", 0), N32("n3", 0)},
     {WK("only", "n1", 24)},
     ""},
};

static void overload_decisions_follow_the_rules(void **state)
{
	int failed = 0;
	for (size_t i = 0; i < sizeof(decide_cases) / sizeof(decide_cases[0]); i++) {
		const struct dcase *k = &decide_cases[i];
		struct world w;
		assert_int_equal(build(&w, k->n, k->r), 0);
		struct mig_decision *d = NULL;
		size_t n = 0;
		assert_int_equal(mig_decide(&w.c, w.r, w.nr, NOW, NULL, &d, &n), DRAKE_OK);
		char got[512];
		render(&w, d, n, got, sizeof(got));
		if (strcmp(got, k->want) != 0) {
			print_error("%s: got \"%s\", want \"%s\"\n", k->name, got, k->want);
			failed++;
		}
		for (size_t j = 0; j < n; j++) {
			assert_int_equal(d[j].reason, MIG_OVERLOAD);
			assert_int_not_equal(d[j].from, d[j].to);
			assert_non_null(strstr(d[j].why, "is overloaded"));
		}
		free(d);
		drake_cluster_release(&w.c);
	}
	assert_int_equal(failed, 0);
}

static void the_choice_does_not_depend_on_the_order_of_the_replicas(void **state)
{
	const struct dcase *k = &decide_cases[1];
	struct world w;
	assert_int_equal(build(&w, k->n, k->r), 0);
	struct mig_replica rev[MAXR];
	for (size_t i = 0; i < w.nr; i++)
		rev[i] = w.r[w.nr - 1 - i];
	struct mig_decision *a = NULL, *b = NULL;
	size_t na = 0, nb = 0;
	assert_int_equal(mig_decide(&w.c, w.r, w.nr, NOW, NULL, &a, &na), DRAKE_OK);
	assert_int_equal(mig_decide(&w.c, rev, w.nr, NOW, NULL, &b, &nb), DRAKE_OK);
	assert_int_equal(na, 1);
	assert_int_equal(nb, 1);
	assert_string_equal(w.r[a[0].replica].pod, rev[b[0].replica].pod);
	assert_int_equal(a[0].to, b[0].to);
	assert_string_equal(a[0].why, b[0].why);
	free(a);
	free(b);
	drake_cluster_release(&w.c);
}

static void a_moved_worker_is_not_moved_back(void **state)
{
	/* n1 .75 sheds to n3; after the move n1 (.5) is still above mean + std,
	 * but any worker it sheds would leave its target above n1: no ping-pong,
	 * no hot spot moved around */
	const struct dcase *k = &decide_cases[1];
	struct world w;
	assert_int_equal(build(&w, k->n, k->r), 0);
	struct mig_decision *d = NULL;
	size_t n = 0;
	assert_int_equal(mig_decide(&w.c, w.r, w.nr, NOW, NULL, &d, &n), DRAKE_OK);
	assert_int_equal(n, 1);
	struct mig_replica *x = &w.r[d[0].replica];
	drake_cluster_charge(&w.c, (size_t)x->node, &x->req, -1);
	drake_cluster_charge(&w.c, (size_t)d[0].to, &x->req, 1);
	x->node = d[0].to;
	x->migrations++;
	x->last_migrated = NOW;
	free(d);
	struct mig_spread s;
	mig_spread(&w.c, &s);
	assert_true(mig_overloaded(&w.c, 0, &s, 1.0));
	assert_int_equal(mig_decide(&w.c, w.r, w.nr, NOW + 3600, NULL, &d, &n), DRAKE_OK);
	assert_int_equal(n, 0);
	assert_null(d);
	drake_cluster_release(&w.c);
}

/* The fork kept the count in plan entries that every plan copy (a scale
 * up or down of the job) reset. Here the count is the caller's, persisted
 * on the TFJob, and it alone decides: a replica recreated under a new pod
 * name, on another node, with no timestamp and a bigger gang, has still
 * moved 3 times. */
static void the_cap_holds_whatever_else_about_the_replica_changed(void **state)
{
	const struct dcase *k = &decide_cases[1]; /* n1 sheds w-0 to n3 */
	struct world w;
	assert_int_equal(build(&w, k->n, k->r), 0);
	for (size_t i = 0; i < w.nr; i++) {
		w.r[i].migrations = 3;
		w.r[i].last_migrated = -1;
		w.r[i].role_live = 100;
	}
	w.r[0].pod = "w-0-recreated";
	struct mig_decision *d = NULL, one;
	size_t n = 0;
	char why[MIG_WHY_MAX];
	assert_int_equal(mig_decide(&w.c, w.r, w.nr, NOW, NULL, &d, &n), DRAKE_OK);
	assert_int_equal(n, 0);
	for (size_t i = 0; i < w.nr; i++) {
		assert_int_equal(
		    mig_explicit(&w.c, w.r, w.nr, i, -1, -1, NOW, NULL, &one, why, sizeof(why)),
		    DRAKE_ESTATE);
		assert_string_equal(why, "moved 3 times already (cap 3)");
	}
	w.r[2].migrations = 2; /* w-0, as the table names it, one move short of the cap */
	assert_int_equal(mig_decide(&w.c, w.r, w.nr, NOW, NULL, &d, &n), DRAKE_OK);
	assert_int_equal(n, 1);
	assert_string_equal(w.r[d[0].replica].pod, "w-0");
	free(d);
	drake_cluster_release(&w.c);
}

static void load_is_the_mean_of_requests_over_allocatable(void **state)
{
	struct nspec n[MAXN] = {{"cpu", 32, 128, 0, 8, 64, 0, false},
	                        {"gpu", 64, 256, 8, 16, 64, 6, false},
	                        {"idle", 32, 128, 0, 0, 0, 0, false}};
	struct rspec r[MAXR] = {{"w", NULL, "cpu", 'w', 8, 0, 0, 0, 0, 0, NULL}};
	struct world w;
	assert_int_equal(build(&w, n, r), 0);
	assert_true(fabs(mig_node_load(&w.c, 0) - (16.0 / 32 + 64.0 / 128) / 2) < 1e-12);
	/* a node with GPUs counts them as a third dimension */
	assert_true(fabs(mig_node_load(&w.c, 1) - (0.25 + 0.25 + 0.75) / 3) < 1e-12);
	assert_true(mig_node_load(&w.c, 2) == 0);
	assert_true(mig_node_load(&w.c, 99) == 0);
	drake_cluster_release(&w.c);
}

static void the_spread_is_the_population_standard_deviation(void **state)
{
	const struct dcase *k = &decide_cases[3]; /* loads .6 .55 .45 .4 .5 */
	struct world w;
	assert_int_equal(build(&w, k->n, k->r), 0);
	struct mig_spread s;
	mig_spread(&w.c, &s);
	assert_int_equal(s.n, 5);
	assert_true(fabs(s.mean - 0.5) < 1e-12);
	assert_true(fabs(s.std - sqrt(0.025 / 5)) < 1e-12); /* not the sample std's /4 */
	assert_true(mig_overloaded(&w.c, 0, &s, 1.0));
	assert_false(mig_overloaded(&w.c, 1, &s, 1.0)); /* +.05: the fork's std 0 marks it */
	assert_true(mig_overloaded(&w.c, 1, &s, 0.5));  /* k says how far above */
	assert_false(mig_overloaded(&w.c, 0, &s, 1.5));
	drake_cluster_release(&w.c);
}

static void options_have_defaults_and_ranges(void **state)
{
	struct mig_opts o;
	mig_defaults(&o);
	assert_true(o.k == 1.0 && o.cooldown == 30 && o.cap == 3 && o.tail == 0.05);
	char why[128];
	assert_int_equal(mig_opts_check(&o, why, sizeof(why)), DRAKE_OK);
	struct mig_opts bad[] = {{-1, 30, 3, 0.05},
	                         {NAN, 30, 3, 0.05},
	                         {1, -1, 3, 0.05},
	                         {1, 30, -1, 0.05},
	                         {1, 30, 3, 2}};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(mig_opts_check(&bad[i], why, sizeof(why)), DRAKE_EINVAL);
	/* a cap of 0 turns migration off */
	const struct dcase *k = &decide_cases[1];
	struct world w;
	assert_int_equal(build(&w, k->n, k->r), 0);
	o.cap = 0;
	struct mig_decision *d = NULL;
	size_t n = 0;
	assert_int_equal(mig_decide(&w.c, w.r, w.nr, NOW, &o, &d, &n), DRAKE_OK);
	assert_int_equal(n, 0);
	drake_cluster_release(&w.c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(overload_decisions_follow_the_rules),
	    cmocka_unit_test(the_choice_does_not_depend_on_the_order_of_the_replicas),
	    cmocka_unit_test(a_moved_worker_is_not_moved_back),
	    cmocka_unit_test(the_cap_holds_whatever_else_about_the_replica_changed),
	    cmocka_unit_test(load_is_the_mean_of_requests_over_allocatable),
	    cmocka_unit_test(the_spread_is_the_population_standard_deviation),
	    cmocka_unit_test(options_have_defaults_and_ranges),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
