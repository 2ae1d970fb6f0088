/* explicit_test.c - explicit migration requests: any role may move (a PS
 * or chief only this way, and the why says what that costs), under the
 * same safety rules, each refusal saying why. Cases are built by
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

#define KWOK(i, gpu_used)                                                                          \
	{                                                                                          \
		"kwok-node-" #i, 64, 256, 8, 0, 0, gpu_used, false                                 \
	}

struct ecase {
	const char *name;
	struct nspec n[MAXN];
	struct rspec r[MAXR];
	const char *pod;         /* the replica asked for */
	const char *away, *onto; /* NULL: -1 */
	drake_err want;
	const char *says; /* substring of why (or of the decision's why) */
	const char *to;   /* with DRAKE_OK: the target */
};

/* job ns/a: a PS and two 4-GPU workers on kwok-node-1 */
#define JOB_A(w0moves, w0ago, pct, gang)                                                           \
	{"a-ps-0", NULL, "kwok-node-1", 'p', 2, 8, 0, 0, 0, pct, "1/1"},                           \
	    {"a-worker-0", NULL, "kwok-node-1", 'w', 8, 32, 4, w0moves, w0ago, pct, gang},         \
	{                                                                                          \
		"a-worker-1", NULL, "kwok-node-1", 'w', 8, 32, 4, 0, 0, pct, gang                  \
	}

static const struct ecase explicit_cases[] = {
    {"a worker moves to the least-loaded node that has room",
     {KWOK(1, 0), KWOK(2, 4), KWOK(3, 0)},
     {JOB_A(0, 0, 0, NULL)},
     "a-worker-0",
     NULL,
     NULL,
     DRAKE_OK,
     "explicit request: worker a-worker-0 of ns/a moves from kwok-node-1 to "
     "kwok-node-3",
     "kwok-node-3"},
    {"onto a named node with just enough room",
     {KWOK(1, 0), KWOK(2, 4), KWOK(3, 0)},
     {JOB_A(0, 0, 0, NULL)},
     "a-worker-0",
     "kwok-node-1",
     "kwok-node-2",
     DRAKE_OK,
     "to kwok-node-2",
     "kwok-node-2"},
    /* kwok-node-1 has room for a second copy: it is still not a target */
    {"the only node that fits it is its own",
     {{"kwok-node-1", 64, 256, 16, 0, 0, 0, false},
      KWOK(2, 8),
      {"kwok-node-3", 64, 256, 8, 0, 0, 0, true}},
     {JOB_A(0, 0, 0, NULL)},
     "a-worker-0",
     NULL,
     NULL,
     DRAKE_ESTATE,
     "the only node that fits it is its own node kwok-node-1",
     NULL},
    {"the cap, from the persisted count",
     {KWOK(1, 0), KWOK(2, 0)},
     {JOB_A(3, 0, 0, NULL)},
     "a-worker-0",
     NULL,
     NULL,
     DRAKE_ESTATE,
     "moved 3 times already (cap 3)",
     NULL},
    {"the last 5% of its steps",
     {KWOK(1, 0), KWOK(2, 0)},
     {JOB_A(0, 0, 97, NULL)},
     "a-worker-0",
     NULL,
     NULL,
     DRAKE_ESTATE,
     "in the last 5% of its steps (at 97%)",
     NULL},
    {"cooling down",
     {KWOK(1, 0), KWOK(2, 0)},
     {JOB_A(1, 12, 0, NULL)},
     "a-worker-0",
     NULL,
     NULL,
     DRAKE_ESTATE,
     "cooling down: moved 12 s ago (cool-down 30 s)",
     NULL},
    {"a node without room says what is short",
     {KWOK(1, 0), KWOK(2, 4), KWOK(3, 0)},
     {{"big", "ns/b", "kwok-node-3", 'w', 8, 32, 8, 0, 0, 0, NULL}},
     "big",
     NULL,
     "kwok-node-2",
     DRAKE_ESTATE,
     "kwok-node-2 has no room for it: needs 8 GPUs, 4 free",
     NULL},
    {"CPUs short",
     {KWOK(1, 0), {"kwok-node-2", 8, 256, 8, 6, 0, 0, false}},
     {JOB_A(0, 0, 0, NULL)},
     "a-worker-0",
     NULL,
     "kwok-node-2",
     DRAKE_ESTATE,
     "needs 8 CPUs, 2 free",
     NULL},
    {"memory short",
     {KWOK(1, 0), {"kwok-node-2", 64, 40, 8, 0, 32, 0, false}},
     {JOB_A(0, 0, 0, NULL)},
     "a-worker-0",
     NULL,
     "kwok-node-2",
     DRAKE_ESTATE,
     "needs 32Gi memory, 8Gi free",
     NULL},
    {"a worker the job cannot be without while it moves",
     {KWOK(1, 0), KWOK(2, 0)},
     {JOB_A(0, 0, 0, "1/1")},
     "a-worker-0",
     NULL,
     NULL,
     DRAKE_ESTATE,
     "its job would have 0 of the 1 workers it needs while it moves",
     NULL},
    {"a PS moves on explicit request, though its job has no other, and the why says so",
     {KWOK(1, 0), KWOK(2, 0)},
     {JOB_A(0, 0, 0, NULL)},
     "a-ps-0",
     NULL,
     NULL,
     DRAKE_OK,
     "explicit request, so a ps may move (its job runs without it while it moves; the "
     "backstop repairs or rolls back): a-ps-0 of ns/a moves from kwok-node-1 to kwok-node-2",
     "kwok-node-2"},
    {"a chief too",
     {KWOK(1, 0), KWOK(2, 0)},
     {{"a-chief-0", NULL, "kwok-node-1", 'c', 2, 8, 1, 0, 0, 0, "1/1"}},
     "a-chief-0",
     NULL,
     NULL,
     DRAKE_OK,
     "so a chief may move",
     "kwok-node-2"},
    {"a PS keeps the cap",
     {KWOK(1, 0), KWOK(2, 0)},
     {{"a-ps-0", NULL, "kwok-node-1", 'p', 2, 8, 0, 3, 0, 0, "1/1"}},
     "a-ps-0",
     NULL,
     NULL,
     DRAKE_ESTATE,
     "moved 3 times already",
     NULL},
    {"onto its own node",
     {KWOK(1, 0), KWOK(2, 0)},
     {JOB_A(0, 0, 0, NULL)},
     "a-worker-0",
     NULL,
     "kwok-node-1",
     DRAKE_ESTATE,
     "a-worker-0 already runs on kwok-node-1",
     NULL},
    {"onto a cordoned node",
     {KWOK(1, 0), {"kwok-node-2", 64, 256, 8, 0, 0, 0, true}},
     {JOB_A(0, 0, 0, NULL)},
     "a-worker-0",
     NULL,
     "kwok-node-2",
     DRAKE_ESTATE,
     "kwok-node-2 is not schedulable (tainted or cordoned)",
     NULL},
    {"away from a node it is not on",
     {KWOK(1, 0), KWOK(2, 0)},
     {JOB_A(0, 0, 0, NULL)},
     "a-worker-0",
     "kwok-node-2",
     NULL,
     DRAKE_ESTATE,
     "a-worker-0 runs on kwok-node-1, not on kwok-node-2",
     NULL},
    {"away from its cordoned node (a drain)",
     {{"kwok-node-1", 64, 256, 8, 0, 0, 0, true}, KWOK(2, 6), KWOK(3, 2)},
     {JOB_A(0, 0, 0, NULL)},
     "a-worker-1",
     "kwok-node-1",
     NULL,
     DRAKE_OK,
     "to kwok-node-3",
     "kwok-node-3"},
};

static int node_or(const struct world *w, const char *name)
{
	return name ? drake_cluster_find(&w->c, name) : -1;
}

static void explicit_requests_follow_the_rules(void **state)
{
	int failed = 0;
	for (size_t i = 0; i < sizeof(explicit_cases) / sizeof(explicit_cases[0]); i++) {
		const struct ecase *k = &explicit_cases[i];
		struct world w;
		assert_int_equal(build(&w, k->n, k->r), 0);
		size_t ri = 0;
		while (ri < w.nr && strcmp(w.r[ri].pod, k->pod) != 0)
			ri++;
		assert_true(ri < w.nr);
		struct mig_decision d;
		char why[MIG_WHY_MAX] = "";
		/* every request here says its job may pause (pauseJob) */
		drake_err err =
		    mig_explicit(&w.c, w.r, w.nr, ri, node_or(&w, k->away), node_or(&w, k->onto),
		                 true, NOW, NULL, &d, why, sizeof(why));
		const char *said = err == DRAKE_OK ? d.why : why;
		if (err != k->want || !strstr(said, k->says)) {
			print_error("%s: got %s \"%s\", want %s \"%s\"\n", k->name,
			            drake_strerror(err), said, drake_strerror(k->want), k->says);
			failed++;
		} else if (err == DRAKE_OK) {
			assert_int_equal(d.replica, (int)ri);
			assert_int_equal(d.from, w.r[ri].node);
			assert_int_equal(d.to, drake_cluster_find(&w.c, k->to));
			assert_int_equal(d.reason, MIG_EXPLICIT);
		}
		drake_cluster_release(&w.c);
	}
	assert_int_equal(failed, 0);
}

static void explicit_requests_out_of_range_are_invalid(void **state)
{
	struct nspec n[MAXN] = {KWOK(1, 0), KWOK(2, 0)};
	struct rspec r[MAXR] = {JOB_A(0, 0, 0, NULL)};
	struct world w;
	assert_int_equal(build(&w, n, r), 0);
	struct mig_decision d;
	char why[MIG_WHY_MAX];
	assert_int_equal(
	    mig_explicit(&w.c, w.r, w.nr, 3, -1, -1, true, NOW, NULL, &d, why, sizeof(why)),
	    DRAKE_EINVAL);
	assert_int_equal(
	    mig_explicit(&w.c, w.r, w.nr, 1, 2, -1, true, NOW, NULL, &d, why, sizeof(why)),
	    DRAKE_EINVAL);
	assert_int_equal(
	    mig_explicit(&w.c, w.r, w.nr, 1, -1, -2, true, NOW, NULL, &d, why, sizeof(why)),
	    DRAKE_EINVAL);
	w.r[1].node = -1; /* pending: not on a node */
	assert_int_equal(
	    mig_explicit(&w.c, w.r, w.nr, 1, -1, -1, true, NOW, NULL, &d, why, sizeof(why)),
	    DRAKE_ESTATE);
	assert_string_equal(why, "a-worker-0 is not running on a node");
	drake_cluster_release(&w.c);
}

/* A PS or chief moves only when the request says its job may pause; a
 * worker needs no such word. */
static void a_ps_or_chief_moves_only_when_the_request_says_the_job_may_pause(void **state)
{
	struct nspec n[MAXN] = {KWOK(1, 0), KWOK(2, 0)};
	struct rspec r[MAXR] = {JOB_A(0, 0, 0, NULL),
	                        {"b-chief-0", NULL, "kwok-node-1", 'c', 2, 8, 0, 0, 0, 0, "1/1"}};
	struct world w;
	assert_int_equal(build(&w, n, r), 0);
	struct mig_decision d;
	char why[MIG_WHY_MAX];
	assert_int_equal(
	    mig_explicit(&w.c, w.r, w.nr, 0, -1, -1, false, NOW, NULL, &d, why, sizeof(why)),
	    DRAKE_ESTATE);
	assert_string_equal(why, "a-ps-0 is the ps of ns/a: its job stops training while it "
	                         "moves, so only a request that says so moves it "
	                         "(\"pauseJob\": true)");
	assert_int_equal(
	    mig_explicit(&w.c, w.r, w.nr, 3, -1, -1, false, NOW, NULL, &d, why, sizeof(why)),
	    DRAKE_ESTATE);
	assert_non_null(strstr(why, "b-chief-0 is the chief of"));
	assert_int_equal(
	    mig_explicit(&w.c, w.r, w.nr, 2, -1, -1, false, NOW, NULL, &d, why, sizeof(why)),
	    DRAKE_OK);
	assert_int_equal(d.to, drake_cluster_find(&w.c, "kwok-node-2"));
	assert_int_equal(
	    mig_explicit(&w.c, w.r, w.nr, 0, -1, -1, true, NOW, NULL, &d, why, sizeof(why)),
	    DRAKE_OK);
	drake_cluster_release(&w.c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(explicit_requests_follow_the_rules),
	    cmocka_unit_test(explicit_requests_out_of_range_are_invalid),
	    cmocka_unit_test(a_ps_or_chief_moves_only_when_the_request_says_the_job_may_pause),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
