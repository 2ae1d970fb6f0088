/* step_test.c - one migration round (migrate/step.h): its rules in order
 * (a scale settling, a move in flight, a quiet cluster, the policy), one
 * move at most, waiting jobs only for a slow worker. Worlds are built by
 * migrate_testutil.h; jobs named "ns/slow..." are slowing unless a case
 * gives them another class. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "migrate/migrate_testutil.h"
#include "migrate/step.h"

/* 32 CPUs, 128Gi, 8 GPUs; `og` GPUs used by pods drake does not move */
#define G8(name, og)                                                                               \
	{                                                                                          \
		name, 32, 128, 8, 0, 0, og, false                                                  \
	}
/* 64 CPUs, 256Gi, 8 GPUs */
#define G64(name, og)                                                                              \
	{                                                                                          \
		name, 64, 256, 8, 0, 0, og, false                                                  \
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
/* job j packed whole on node n (PS and five workers) */
#define PACKED(j, n)                                                                               \
	PS(j "-ps", "ns/" j, n), W1(j "-w0", "ns/" j, n), W1(j "-w1", "ns/" j, n),                 \
	    W1(j "-w2", "ns/" j, n), W1(j "-w3", "ns/" j, n), W1(j "-w4", "ns/" j, n)
/* job j's PS and two workers on node n */
#define THREE(j, n) PS(j "-ps", "ns/" j, n), W1(j "-w0", "ns/" j, n), W1(j "-w1", "ns/" j, n)
/* g1 (load .83) holds job b whole and a's lonely worker a-w2; a's PS and
 * other workers are on g2: g1 alone is overloaded, and a-w2 onto g2
 * brings a onto one node (migrate_test.c's base world). */
#define HOT_G1 PACKED("b", "g1"), W1("a-w2", "ns/a", "g1"), THREE("a", "g2")
#define NODES4 G8("g1", 0), G8("g2", 0), G8("g3", 0), G8("g4", 0)
/* job s: its PS and six workers on g1, s-w6 on g2; g1, g2, g3 have one
 * GPU free each, so a waiting job of a two-GPU worker fits nowhere, and
 * fits on g2 once s-w6 moves onto g1 (migrate_test.c's placement world,
 * with g3 as loaded as g1 by others' CPU and memory, so no node is
 * overloaded: loads .58, .33, .58). */
#define S_SPREAD(job)                                                                              \
	PS("s-ps", job, "g1"), W1("s-w0", job, "g1"), W1("s-w1", job, "g1"),                       \
	    W1("s-w2", job, "g1"), W1("s-w3", job, "g1"), W1("s-w4", job, "g1"),                   \
	    W1("s-w5", job, "g1"), W1("s-w6", job, "g2")
#define NODES_S                                                                                    \
	G64("g1", 1), G64("g2", 6),                                                                \
	{                                                                                          \
		"g3", 64, 256, 8, 28, 112, 7, false                                                \
	}

struct scase {
	const char *name;
	struct nspec n[MAXN];
	struct rspec r[MAXR];
	int wait_gpus;   /* the waiting job's worker; 0: nobody waits */
	bool moving;     /* a move is in flight */
	bool scaling;    /* a scale record has not settled */
	bool off;        /* the better-placement rule is off */
	const char *cls; /* the class of "ns/slow..." jobs; NULL slowing */
	enum mig_held held;
	const char *want; /* the move, rendered; "" none */
	enum mig_reason reason;
};

static const struct scase cases[] = {
    {"a hot node sheds its lonely worker onto its job's other node",
     {NODES4},
     {HOT_G1},
     .held = MIG_MOVED,
     .want = "a-w2:g1>g2",
     .reason = MIG_OVERLOAD},
    {"nothing moves while a scale settles",
     {NODES4},
     {HOT_G1},
     .scaling = true,
     .held = MIG_HELD_SCALING,
     .want = ""},
    {"one move at a time: nothing moves while one is in flight",
     {NODES4},
     {HOT_G1},
     .moving = true,
     .held = MIG_HELD_MOVING,
     .want = ""},
    {"a scale settling is named before a move in flight",
     {NODES4},
     {HOT_G1},
     .moving = true,
     .scaling = true,
     .held = MIG_HELD_SCALING,
     .want = ""},
    {"two hot nodes: one move per round, the most loaded node's first",
     {G8("g1", 0), G8("g2", 0), G8("g3", 1), G8("g4", 0), G8("g5", 0), G8("g6", 0), G8("g7", 0),
      G8("g8", 0)},
     {PACKED("b", "g1"), W1("a-w2", "ns/a", "g1"), THREE("a", "g2"), PACKED("c", "g3"),
      W1("d-w2", "ns/d", "g3"), THREE("d", "g4")},
     .held = MIG_MOVED,
     .want = "d-w2:g3>g4",
     .reason = MIG_OVERLOAD},
    {"a balanced cluster with nobody waiting is quiet",
     {G8("g1", 0), G8("g2", 0), G8("g3", 0)},
     {THREE("a", "g1"), THREE("b", "g2"), THREE("c", "g3")},
     .held = MIG_HELD_QUIET,
     .want = ""},
    {"a hot node whose only move would not pay for its restart: the policy finds none",
     {NODES4},
     {PACKED("b", "g1"), W1("a-w2", "ns/young-a", "g1"), THREE("young-a", "g2")},
     .held = MIG_HELD_NONE,
     .want = ""},
    {"a slow, spread job's worker yields so the first waiting job fits",
     {NODES_S},
     {S_SPREAD("ns/slow-s")},
     .wait_gpus = 2,
     .held = MIG_MOVED,
     .want = "s-w6:g2>g1",
     .reason = MIG_PLACEMENT},
    {"a converged job is slow too and yields",
     {NODES_S},
     {S_SPREAD("ns/slow-s")},
     .wait_gpus = 2,
     .cls = "converged",
     .held = MIG_MOVED,
     .want = "s-w6:g2>g1",
     .reason = MIG_PLACEMENT},
    {"a progressing job is not slow: a waiting job alone does not make a round",
     {NODES_S},
     {S_SPREAD("ns/slow-s")},
     .wait_gpus = 2,
     .cls = "progressing",
     .held = MIG_HELD_QUIET,
     .want = ""},
    {"a job that has reported too little to be classed is not slow",
     {NODES_S},
     {S_SPREAD("ns/slow-s")},
     .wait_gpus = 2,
     .cls = "unknown",
     .held = MIG_HELD_QUIET,
     .want = ""},
    {"a slow job with nobody waiting on a cool cluster is quiet",
     {NODES_S},
     {S_SPREAD("ns/slow-s")},
     .held = MIG_HELD_QUIET,
     .want = ""},
    {"with the better-placement rule off a slow job and a waiting one are quiet",
     {NODES_S},
     {S_SPREAD("ns/slow-s")},
     .wait_gpus = 2,
     .off = true,
     .held = MIG_HELD_QUIET,
     .want = ""},
    {"a waiting job beside a hot node and nobody slow: the overload move",
     {NODES4},
     {HOT_G1},
     .wait_gpus = 8,
     .held = MIG_MOVED,
     .want = "a-w2:g1>g2",
     .reason = MIG_OVERLOAD},
};

static enum mig_class class_named(const char *name)
{
	const enum mig_class all[] = {MIG_CLASS_UNKNOWN, MIG_CLASS_PROGRESSING, MIG_CLASS_SLOWING,
	                              MIG_CLASS_CONVERGED};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (!strcmp(mig_class_name(all[i]), name))
			return all[i];
	fail_msg("no class %s", name);
	return MIG_CLASS_UNKNOWN;
}

static void a_round_follows_its_rules_in_order(void **state)
{
	int failed = 0;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct scase *k = &cases[i];
		struct world w;
		assert_int_equal(build(&w, k->n, k->r), 0);
		for (size_t j = 0; k->cls && j < w.nr; j++)
			if (!strncmp(w.r[j].job, "ns/slow", 7))
				w.r[j].cls = class_named(k->cls);
		struct drake_gang_req q = {0};
		q.n_ps = 1;
		q.ps = res(4, 16, 0);
		q.worker = res(4.0 * k->wait_gpus, 16 * k->wait_gpus, k->wait_gpus);
		q.min_workers = q.want_workers = 1;
		struct mig_waiting wt = {"ns/waiting", &q};
		struct mig_opts o;
		mig_defaults(&o);
		o.better_placement = !k->off;
		const struct mig_world in = {.c = &w.c,
		                             .r = w.r,
		                             .nr = w.nr,
		                             .wait = &wt,
		                             .nwait = k->wait_gpus > 0,
		                             .moving = k->moving,
		                             .scaling = k->scaling};
		struct mig_step_out out;
		assert_int_equal(mig_step(&in, NOW, &o, &out), DRAKE_OK);
		char got[512];
		render(&w, &out.move, out.held == MIG_MOVED, got, sizeof(got));
		if (out.held != k->held || strcmp(got, k->want) != 0 ||
		    (out.held == MIG_MOVED && out.move.reason != k->reason)) {
			print_error("%s: got %s \"%s\" (reason %d), want %s \"%s\" (reason %d)\n",
			            k->name, mig_held_name(out.held), got, out.move.reason,
			            mig_held_name(k->held), k->want, k->reason);
			failed++;
		}
		if (out.held == MIG_MOVED)
			assert_true(out.move.why[0] != '\0');
		drake_cluster_release(&w.c);
	}
	assert_int_equal(failed, 0);
}

/* The round's move is the policy's first decision, and the policy would
 * have made more: the rest wait for the next round. */
static void the_move_is_the_first_of_the_policys_decisions(void **state)
{
	const struct scase *k = &cases[4];
	struct world w;
	assert_int_equal(build(&w, k->n, k->r), 0);
	struct mig_decision *d = NULL;
	size_t n = 0;
	assert_int_equal(mig_decide(&w.c, w.r, w.nr, NOW, NULL, &d, &n), DRAKE_OK);
	assert_int_equal(n, 2);
	const struct mig_world in = {.c = &w.c, .r = w.r, .nr = w.nr};
	struct mig_step_out out;
	assert_int_equal(mig_step(&in, NOW, NULL, &out), DRAKE_OK);
	assert_int_equal(out.held, MIG_MOVED);
	assert_int_equal(out.move.replica, d[0].replica);
	assert_int_equal(out.move.to, d[0].to);
	assert_string_equal(out.move.why, d[0].why);
	free(d);
	drake_cluster_release(&w.c);
}

static void held_reasons_have_names(void **state)
{
	assert_string_equal(mig_held_name(MIG_MOVED), "moved");
	assert_string_equal(mig_held_name(MIG_HELD_SCALING), "scaling");
	assert_string_equal(mig_held_name(MIG_HELD_MOVING), "moving");
	assert_string_equal(mig_held_name(MIG_HELD_QUIET), "quiet");
	assert_string_equal(mig_held_name(MIG_HELD_NONE), "none");
	assert_string_equal(mig_held_name((enum mig_held)99), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(a_round_follows_its_rules_in_order),
	    cmocka_unit_test(the_move_is_the_first_of_the_policys_decisions),
	    cmocka_unit_test(held_reasons_have_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
