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

/* 32 CPUs, 128Gi, 8 GPUs; `og` GPUs used by pods drake does not move */
#define G8(name, og)                                                                               \
	{                                                                                          \
		name, 32, 128, 8, 0, 0, og, false                                                  \
	}
/* a PS (4 CPUs, 16Gi) and a one-GPU worker (4 CPUs, 16Gi) of job `job` */
#define PS(pod, job, node)                                                                         \
	{                                                                                          \
		pod, job, node, 'p', 4, 16, 0, 0, 0, 0, "1/1"                                      \
	}
#define W1(pod, job, node)                                                                         \
	{                                                                                          \
		pod, job, node, 'w', 4, 16, 1, 0, 0, 0, NULL                                       \
	}
/* job b packed whole on g1 (PS and five workers) */
#define B_ON_G1                                                                                    \
	PS("b-ps", "ns/b", "g1"), W1("b-w0", "ns/b", "g1"), W1("b-w1", "ns/b", "g1"),              \
	    W1("b-w2", "ns/b", "g1"), W1("b-w3", "ns/b", "g1"), W1("b-w4", "ns/b", "g1")
/* a small CPU job of the e2e test: PS 1 CPU, two workers of 3 CPUs */
#define SMALL(j)                                                                                   \
	{"m" #j "-ps", "ns/m" #j, "g1", 'p', 1, 1, 0, 0, 0, 0, "1/1"},                             \
	    {"m" #j "-w0", "ns/m" #j, "g1", 'w', 3, 1, 0, 0, 0, 0, "2/1"},                         \
	{                                                                                          \
		"m" #j "-w1", "ns/m" #j, "g1", 'w', 3, 1, 0, 0, 0, 0, "2/1"                        \
	}

/* Case 1 is the base world: g1 (load .83) holds job b whole and a's lonely
 * worker a-w2; a's PS and other workers are on g2 (.33); g3 and g4 are
 * idle. Mean .29, std .34: only g1 is overloaded. a over two nodes runs at
 * 1 / 1.15 of a over one (gang/speed.h's locality penalty), so a-w2 on g2
 * saves 3600 s x (1 - 1 / 1.15) = 470 s, less the 10 s restart. */
static const struct dcase decide_cases[] = {
    {"a balanced cluster moves nothing",
     {G8("g1", 0), G8("g2", 0), G8("g3", 0)},
     {PS("a-ps", "ns/a", "g1"), W1("a-w0", "ns/a", "g1"), PS("b-ps", "ns/b", "g2"),
      W1("b-w0", "ns/b", "g2"), PS("c-ps", "ns/c", "g3"), W1("c-w0", "ns/c", "g3")},
     ""},
    {"a lonely worker on a hot shared node moves onto its PS's node",
     {G8("g1", 0), G8("g2", 0), G8("g3", 0), G8("g4", 0)},
     {B_ON_G1, W1("a-w2", "ns/a", "g1"), PS("a-ps", "ns/a", "g2"), W1("a-w0", "ns/a", "g2"),
      W1("a-w1", "ns/a", "g2")},
     "a-w2:g1>g2"},
    {"a node full of one job's gang is drake's packing, not an overload: nothing moves",
     {G8("g1", 0), G8("g2", 0), G8("g3", 0), G8("g4", 0)},
     {B_ON_G1, W1("b-w5", "ns/b", "g1"), W1("b-w6", "ns/b", "g1"), W1("b-w7", "ns/b", "g1")},
     ""},
    {"three small jobs packed on one node stay: every move would spread its job, and relief is "
     "worth nothing in the model",
     {G8("g1", 0), G8("g2", 0), G8("g3", 0), G8("g4", 0)},
     {SMALL(1), SMALL(2), SMALL(3)},
     ""},
    {"a move must save more than its restart: a job admitted 30 s ago stays spread",
     {G8("g1", 0), G8("g2", 0), G8("g3", 0), G8("g4", 0)},
     {B_ON_G1, W1("a-w2", "ns/young-a", "g1"), PS("a-ps", "ns/young-a", "g2"),
      W1("a-w0", "ns/young-a", "g2"), W1("a-w1", "ns/young-a", "g2")},
     ""},
    {"with no room beside its PS it joins the node holding more of its job (3 -> 2 nodes)",
     {G8("g1", 0), G8("g2", 7), G8("g3", 0), G8("g4", 0)},
     {B_ON_G1, W1("a-w2", "ns/a", "g1"), PS("a-ps", "ns/a", "g2"), W1("a-w0", "ns/a", "g2"),
      W1("a-w1", "ns/a", "g3")},
     "a-w2:g1>g3"},
    {"a lonely PS is never moved for overload, though its job would gain",
     {G8("g1", 0), G8("g2", 0), G8("g3", 0), G8("g4", 0)},
     {B_ON_G1, PS("a-ps", "ns/a", "g1"), W1("a-w0", "ns/a", "g2"), W1("a-w1", "ns/a", "g2"),
      W1("a-w2", "ns/a", "g2")},
     ""},
    {"a worker cooling down stays",
     {G8("g1", 0), G8("g2", 0), G8("g3", 0), G8("g4", 0)},
     {B_ON_G1,
      {"a-w2", "ns/a", "g1", 'w', 4, 16, 1, 1, 12, 0, NULL},
      PS("a-ps", "ns/a", "g2"),
      W1("a-w0", "ns/a", "g2"),
      W1("a-w1", "ns/a", "g2")},
     ""},
    {"a worker cooled down moves again",
     {G8("g1", 0), G8("g2", 0), G8("g3", 0), G8("g4", 0)},
     {B_ON_G1,
      {"a-w2", "ns/a", "g1", 'w', 4, 16, 1, 1, 30, 0, NULL},
      PS("a-ps", "ns/a", "g2"),
      W1("a-w0", "ns/a", "g2"),
      W1("a-w1", "ns/a", "g2")},
     "a-w2:g1>g2"},
    {"the cap is the persisted count alone: 3 moves and never a timestamp still stays",
     {G8("g1", 0), G8("g2", 0), G8("g3", 0), G8("g4", 0)},
     {B_ON_G1,
      {"a-w2", "ns/a", "g1", 'w', 4, 16, 1, 3, 0, 0, NULL},
      PS("a-ps", "ns/a", "g2"),
      W1("a-w0", "ns/a", "g2"),
      W1("a-w1", "ns/a", "g2")},
     ""},
    {"nothing moves in the last 5% of a job's steps",
     {G8("g1", 0), G8("g2", 0), G8("g3", 0), G8("g4", 0)},
     {B_ON_G1,
      {"a-w2", "ns/a", "g1", 'w', 4, 16, 1, 0, 0, 96, NULL},
      PS("a-ps", "ns/a", "g2"),
      W1("a-w0", "ns/a", "g2"),
      W1("a-w1", "ns/a", "g2")},
     ""},
    {"a worker at its role's minimum stays: the move would leave the job short",
     {G8("g1", 0), G8("g2", 0), G8("g3", 0), G8("g4", 0)},
     {B_ON_G1,
      {"a-w2", "ns/a", "g1", 'w', 4, 16, 1, 0, 0, 0, "3/3"},
      PS("a-ps", "ns/a", "g2"),
      W1("a-w0", "ns/a", "g2"),
      W1("a-w1", "ns/a", "g2")},
     ""},
    {"a cordoned node never receives, even its PS's",
     {G8("g1", 0), {"g2", 32, 128, 8, 0, 0, 0, true}, G8("g3", 0), G8("g4", 0)},
     {B_ON_G1, W1("a-w2", "ns/a", "g1"), PS("a-ps", "ns/a", "g2"), W1("a-w0", "ns/a", "g2"),
      W1("a-w1", "ns/a", "g2")},
     ""},
    /* g1 holds a's lonely worker and nothing else of anyone's: hot (.33
     * over a mean of .1), but contended by nobody */
    {"a hot node that holds one job alone is not overloaded, though a move would pay",
     {G8("g1", 0), G8("g2", 0), G8("g3", 0), G8("g4", 0), G8("g5", 0)},
     {{"a-w2", "ns/a", "g1", 'w', 8, 32, 4, 0, 0, 0, NULL},
      PS("a-ps", "ns/a", "g2"),
      W1("a-w0", "ns/a", "g2")},
     ""},
    {"the same node with a pod drake does not move beside it is contended: the worker moves",
     {{"g1", 32, 128, 8, 1, 1, 0, false}, G8("g2", 0), G8("g3", 0), G8("g4", 0), G8("g5", 0)},
     {{"a-w2", "ns/a", "g1", 'w', 8, 32, 4, 0, 0, 0, NULL},
      PS("a-ps", "ns/a", "g2"),
      W1("a-w0", "ns/a", "g2")},
     "a-w2:g1>g2"},
    {"the target has room for it: a full PS node takes nothing",
     {G8("g1", 0), G8("g2", 6), G8("g3", 0), G8("g4", 0)},
     {B_ON_G1, W1("a-w2", "ns/a", "g1"), PS("a-ps", "ns/a", "g2"), W1("a-w0", "ns/a", "g2"),
      W1("a-w1", "ns/a", "g2")},
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
			assert_true(d[j].gain > 0);
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
	/* g1 sheds a-w2 onto its PS's node g2; g1 is still above mean + std,
	 * but holds job b alone now (packing, not contention), and a-w2 back on
	 * g1 would spread its job again: no ping-pong */
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
	const struct dcase *k = &decide_cases[1]; /* g1 sheds a-w2 to g2 */
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
		assert_int_equal(mig_explicit(&w.c, w.r, w.nr, i, -1, -1, true, NOW, NULL, &one,
		                              why, sizeof(why)),
		                 DRAKE_ESTATE);
		assert_string_equal(why, "moved 3 times already (cap 3)");
	}
	w.r[6].migrations = 2; /* a-w2, one move short of the cap */
	assert_int_equal(mig_decide(&w.c, w.r, w.nr, NOW, NULL, &d, &n), DRAKE_OK);
	assert_int_equal(n, 1);
	assert_string_equal(w.r[d[0].replica].pod, "a-w2");
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

static void measured_usage_counts_where_it_exceeds_the_requests(void **state)
{
	/* cpu: 8 CPUs and 32Gi requested of 32 and 128 (.25, .25); measured
	 * 24 CPUs and 16Gi: cpu counts .75 (measured), memory .25 (requests) */
	struct nspec n[MAXN] = {{"cpu", 32, 128, 0, 8, 32, 0, false},
	                        {"gpu", 64, 256, 8, 16, 64, 6, false},
	                        {"idle", 32, 128, 0, 0, 0, 0, false}};
	struct rspec r[MAXR] = {{"w", NULL, "idle", 'w', 8, 0, 0, 0, 0, 0, NULL}};
	struct world w;
	assert_int_equal(build(&w, n, r), 0);
	measure(&w, "cpu", 24, 16);
	measure(&w, "gpu", 64, 256);
	assert_true(fabs(mig_node_load(&w.c, 0) - (0.75 + 0.25) / 2) < 1e-12);
	/* GPUs stay requests, whatever the measure: 1 + 1 + .75 */
	assert_true(fabs(mig_node_load(&w.c, 1) - (1.0 + 1.0 + 0.75) / 3) < 1e-12);
	/* not measured: requests (the worker's 8 CPUs of 32) */
	assert_true(fabs(mig_node_load(&w.c, 2) - 0.25 / 2) < 1e-12);
	drake_cluster_release(&w.c);
}

/* g1 holds a's lonely worker beside a small pod drake does not move: .14 by
 * requests (g2 .33; mean .12, std .14), so not overloaded. Its pods burst
 * to 30 CPUs and 120Gi: measured, it is .67 (mean .25, std .28). A measure
 * below the requests changes nothing: the requests are reserved. */
static void a_node_hot_by_measure_alone_sheds_its_lonely_worker(void **state)
{
	static const struct {
		const char *name;
		int cpu, mem; /* g1's measured usage; 0 0 none */
		const char *want;
	} cases[] = {
	    {"requests alone: not overloaded", 0, 0, ""},
	    {"measured bursting past its requests: overloaded, the worker joins its PS", 30, 120,
	     "a-w2:g1>g2"},
	    {"measured below its requests: still not overloaded", 1, 1, ""},
	};
	static const struct nspec n[MAXN] = {
	    {"g1", 32, 128, 8, 1, 1, 0, false}, G8("g2", 0), G8("g3", 0), G8("g4", 0)};
	static const struct rspec r[MAXR] = {W1("a-w2", "ns/a", "g1"), PS("a-ps", "ns/a", "g2"),
	                                     W1("a-w0", "ns/a", "g2"), W1("a-w1", "ns/a", "g2")};
	int failed = 0;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct world w;
		assert_int_equal(build(&w, n, r), 0);
		if (cases[i].cpu || cases[i].mem)
			measure(&w, "g1", cases[i].cpu, cases[i].mem);
		struct mig_decision *d = NULL;
		size_t nd = 0;
		assert_int_equal(mig_decide(&w.c, w.r, w.nr, NOW, NULL, &d, &nd), DRAKE_OK);
		char got[256];
		render(&w, d, nd, got, sizeof(got));
		if (strcmp(got, cases[i].want) != 0) {
			print_error("%s: got \"%s\", want \"%s\"\n", cases[i].name, got,
			            cases[i].want);
			failed++;
		}
		if (nd && strstr(d[0].why, "measured") == NULL) {
			print_error("%s: the why does not say the load was measured: %s\n",
			            cases[i].name, d[0].why);
			failed++;
		}
		free(d);
		drake_cluster_release(&w.c);
	}
	assert_int_equal(failed, 0);
}

static void the_spread_is_the_population_standard_deviation(void **state)
{
	/* loads a .6, b .55, c .45, d .4, e .5: mean .5, population std
	 * sqrt(.025 / 5) = .0707, so only a (+.1) is over; the fork's
	 * `sum = dx*dx` kept e's deviation (0): "std" 0 marks b (+.05) too. */
	static const struct nspec n[MAXN] = {{"a", 100, 100, 0, 50, 50, 0, false},
	                                     {"b", 100, 100, 0, 45, 45, 0, false},
	                                     {"c", 100, 100, 0, 45, 45, 0, false},
	                                     {"d", 100, 100, 0, 40, 40, 0, false},
	                                     {"e", 100, 100, 0, 50, 50, 0, false}};
	static const struct rspec r[MAXR] = {{"a-w0", NULL, "a", 'w', 10, 10, 0, 0, 0, 0, NULL},
	                                     {"b-w0", NULL, "b", 'w', 10, 10, 0, 0, 0, 0, NULL}};
	struct world w;
	assert_int_equal(build(&w, n, r), 0);
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
	assert_true(o.better_placement && o.speed.locality_penalty == 0.15 &&
	            o.speed.rescale_pause == 10);
	char why[128];
	assert_int_equal(mig_opts_check(&o, why, sizeof(why)), DRAKE_OK);
	struct mig_opts bad[7];
	for (size_t i = 0; i < 7; i++)
		bad[i] = o;
	bad[0].k = -1;
	bad[1].k = NAN;
	bad[2].cooldown = -1;
	bad[3].cap = -1;
	bad[4].tail = 2;
	bad[5].speed.locality_penalty = -0.1;
	bad[6].speed.rescale_pause = NAN;
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

/* Better placement. g1, g2, g3 have one GPU free each: the waiting job
 * (a PS and one two-GPU worker) fits nowhere. Job s (its PS and six
 * workers on g1, s-w6 on g2) is slow when its name says so. */
struct pcase {
	const char *name;
	struct nspec n[MAXN];
	struct rspec r[MAXR];
	int wait_gpus; /* the waiting job's worker; 0: nobody waits */
	bool off;      /* better_placement off */
	const char *want;
};

#define G64(name, og)                                                                              \
	{                                                                                          \
		name, 64, 256, 8, 0, 0, og, false                                                  \
	}
#define S_SPREAD(job)                                                                              \
	PS("s-ps", job, "g1"), W1("s-w0", job, "g1"), W1("s-w1", job, "g1"),                       \
	    W1("s-w2", job, "g1"), W1("s-w3", job, "g1"), W1("s-w4", job, "g1"),                   \
	    W1("s-w5", job, "g1")

static const struct pcase placement_cases[] = {
    {"a slow, spread job's worker moves onto its own other node so the first waiting job fits",
     {G64("g1", 1), G64("g2", 6), G64("g3", 7)},
     {S_SPREAD("ns/slow-s"), W1("s-w6", "ns/slow-s", "g2")},
     2,
     false,
     "s-w6:g2>g1"},
    {"a job whose progress is not slow does not yield",
     {G64("g1", 1), G64("g2", 6), G64("g3", 7)},
     {S_SPREAD("ns/s"), W1("s-w6", "ns/s", "g2")},
     2,
     false,
     ""},
    {"nobody waits: nothing to make room for",
     {G64("g1", 1), G64("g2", 6), G64("g3", 7)},
     {S_SPREAD("ns/slow-s"), W1("s-w6", "ns/slow-s", "g2")},
     0,
     false,
     ""},
    {"a waiting job that fits already is admission's: nothing moves",
     {G64("g1", 1), G64("g2", 6), G64("g3", 7)},
     {S_SPREAD("ns/slow-s"), W1("s-w6", "ns/slow-s", "g2")},
     1,
     false,
     ""},
    {"a slow job packed on one node is never spread to make room",
     {G64("g1", 0), G64("g2", 7), G64("g3", 7)},
     {S_SPREAD("ns/slow-s"), W1("s-w6", "ns/slow-s", "g1")},
     2,
     false,
     ""},
    {"a slow worker cooling down stays; one of its job's others yields the other way instead",
     {G64("g1", 1), G64("g2", 6), G64("g3", 7)},
     {S_SPREAD("ns/slow-s"), {"s-w6", "ns/slow-s", "g2", 'w', 4, 16, 1, 1, 5, 0, NULL}},
     2,
     false,
     "s-w0:g1>g2"},
    {"the rule is off with --migrate-placement=false",
     {G64("g1", 1), G64("g2", 6), G64("g3", 7)},
     {S_SPREAD("ns/slow-s"), W1("s-w6", "ns/slow-s", "g2")},
     2,
     true,
     ""},
};

static void slow_jobs_yield_a_placement_to_the_first_waiting_job(void **state)
{
	int failed = 0;
	for (size_t i = 0; i < sizeof(placement_cases) / sizeof(placement_cases[0]); i++) {
		const struct pcase *k = &placement_cases[i];
		struct world w;
		assert_int_equal(build(&w, k->n, k->r), 0);
		struct drake_gang_req q = {0};
		q.n_ps = 1;
		q.ps = res(4, 16, 0);
		q.worker = res(4.0 * k->wait_gpus, 16 * k->wait_gpus, k->wait_gpus);
		q.min_workers = q.want_workers = 1;
		struct mig_waiting wt = {"ns/waiting", &q};
		struct mig_opts o;
		mig_defaults(&o);
		o.better_placement = !k->off;
		struct mig_decision *d = NULL;
		size_t n = 0;
		assert_int_equal(
		    mig_decide_all(&w.c, w.r, w.nr, &wt, k->wait_gpus > 0, NOW, &o, &d, &n),
		    DRAKE_OK);
		char got[512];
		render(&w, d, n, got, sizeof(got));
		if (strcmp(got, k->want) != 0) {
			print_error("%s: got \"%s\", want \"%s\"\n", k->name, got, k->want);
			failed++;
		}
		for (size_t j = 0; j < n; j++) {
			assert_int_equal(d[j].reason, MIG_PLACEMENT);
			assert_non_null(strstr(d[j].why, "so waiting job ns/waiting fits"));
		}
		free(d);
		drake_cluster_release(&w.c);
	}
	assert_int_equal(failed, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(overload_decisions_follow_the_rules),
	    cmocka_unit_test(the_choice_does_not_depend_on_the_order_of_the_replicas),
	    cmocka_unit_test(a_moved_worker_is_not_moved_back),
	    cmocka_unit_test(the_cap_holds_whatever_else_about_the_replica_changed),
	    cmocka_unit_test(load_is_the_mean_of_requests_over_allocatable),
	    cmocka_unit_test(measured_usage_counts_where_it_exceeds_the_requests),
	    cmocka_unit_test(a_node_hot_by_measure_alone_sheds_its_lonely_worker),
	    cmocka_unit_test(the_spread_is_the_population_standard_deviation),
	    cmocka_unit_test(options_have_defaults_and_ranges),
	    cmocka_unit_test(slow_jobs_yield_a_placement_to_the_first_waiting_job),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
