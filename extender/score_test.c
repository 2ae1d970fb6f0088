/* score_test.c - the prioritize scorer translates: its scores are
 * place_priorities of what the view says, with the shapes of the pods it
 * was asked about; a view that fails leaves every node at 0. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "extender/score.h"
#include "place/score.h"

static const struct place_task ONE_GPU = {8000, 16384, 1, 1000, PLACE_ANY_MODEL};

struct fake_view {
	int calls;
	bool fail;
	const char *last_pod;
};

/* Three candidates: an empty 8-GPU node, one with four GPUs taken, and
 * one the caches do not hold. */
static drake_err view(void *arg, const char *ns, const char *pod, const char *const *candidates,
                      size_t n, struct place_models *models, struct place_task *task,
                      struct place_node *nodes, bool *known, char *why, size_t whylen)
{
	struct fake_view *v = arg;
	v->calls++;
	v->last_pod = pod;
	if (v->fail) {
		snprintf(why, whylen, "the controller's caches are not synced");
		return DRAKE_EINVAL;
	}
	assert_int_equal(n, 3);
	assert_string_equal(candidates[1], "half");
	int m = place_model_index(models, "V100", true);
	*task = ONE_GPU;
	for (size_t i = 0; i < n; i++) {
		place_node_init(&nodes[i], 64000, 262144, 8, m);
		known[i] = i != 2;
	}
	for (int g = 0; g < 4; g++)
		nodes[1].gpu_left[g] = 0;
	nodes[1].tasks[1] = 4;
	return DRAKE_OK;
}

static const char *const NODES[] = {"empty", "half", "gone"};

static void test_scores_are_places_priorities_of_the_view(void **state)
{
	(void)state;
	struct fake_view v = {0};
	char msg[128];
	struct ext_scorer *sc = ext_scorer_new(view, &v, 16, msg, sizeof(msg));
	assert_non_null(sc);
	int64_t got[3], want[3];
	char why[128];
	assert_true(ext_scorer_score(sc, "ml", "p", "uid-p", NODES, 3, got, why, sizeof(why)));
	assert_string_equal(v.last_pod, "p");

	/* the same inputs straight into place/, with the one pod learnt */
	struct place_models models = {0};
	struct place_task task;
	struct place_node nodes[3];
	bool known[3];
	assert_int_equal(
	    view(&v, "ml", "p", NODES, 3, &models, &task, nodes, known, why, sizeof(why)),
	    DRAKE_OK);
	struct place_learner l;
	bool counted;
	assert_int_equal(place_learner_init(&l, 16, msg, sizeof(msg)), DRAKE_OK);
	assert_int_equal(place_learner_observe(&l, "uid-p", &task, &counted), DRAKE_OK);
	place_priorities(nodes, known, 3, &task, place_learner_typical(&l), EXT_MAX_SCORE, want);
	assert_memory_equal(got, want, sizeof(got));
	/* and what that means: the partly used node first, the unread one 0 */
	assert_int_equal(got[1], EXT_MAX_SCORE);
	assert_true(got[0] < EXT_MAX_SCORE);
	assert_int_equal(got[2], 0);
	place_learner_release(&l);
	ext_scorer_free(sc);
}

static void test_each_pod_is_learnt_once_while_in_the_window(void **state)
{
	(void)state;
	struct fake_view v = {0};
	char msg[128], why[128];
	struct ext_scorer *sc = ext_scorer_new(view, &v, 16, msg, sizeof(msg));
	int64_t s[3];
	assert_true(ext_scorer_score(sc, "ml", "p", "uid-p", NODES, 3, s, why, sizeof(why)));
	assert_true(ext_scorer_score(sc, "ml", "p", "uid-p", NODES, 3, s, why, sizeof(why)));
	assert_int_equal(place_learner_count(&sc->learner), 1);
	assert_true(ext_scorer_score(sc, "ml", "q", "uid-q", NODES, 3, s, why, sizeof(why)));
	assert_int_equal(place_learner_count(&sc->learner), 2);
	ext_scorer_free(sc);
}

static void test_a_view_that_fails_leaves_every_node_at_zero(void **state)
{
	(void)state;
	struct fake_view v = {.fail = true};
	char msg[128], why[128] = "";
	struct ext_scorer *sc = ext_scorer_new(view, &v, 16, msg, sizeof(msg));
	int64_t s[3] = {7, 7, 7};
	assert_false(ext_scorer_score(sc, "ml", "p", "uid-p", NODES, 3, s, why, sizeof(why)));
	assert_int_equal(s[0] + s[1] + s[2], 0);
	assert_non_null(strstr(why, "not synced"));
	assert_int_equal(place_learner_count(&sc->learner), 0);
	ext_scorer_free(sc);
}

static void test_a_bad_window_makes_no_scorer(void **state)
{
	(void)state;
	char msg[128] = "";
	assert_null(ext_scorer_new(view, NULL, 0, msg, sizeof(msg)));
	assert_non_null(strstr(msg, "window"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_scores_are_places_priorities_of_the_view),
	    cmocka_unit_test(test_each_pod_is_learnt_once_while_in_the_window),
	    cmocka_unit_test(test_a_view_that_fails_leaves_every_node_at_zero),
	    cmocka_unit_test(test_a_bad_window_makes_no_scorer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
