/* score_test.c - each policy scores as the study's plugins do (integer
 * points, fuller or better-matching nodes higher), FGD takes the GPU that
 * grows fragmentation least, drake also counts the GPUs a placement
 * starves of CPU, and scores map onto an extender's priorities. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "place/frag.h"
#include "place/reserve.h"
#include "place/score.h"

#define NCASES(a) (sizeof(a) / sizeof((a)[0]))
#define ANY       PLACE_ANY_MODEL

static struct place_typical empty_ty;
static const struct place_ctx CTX = {&empty_ty, 128000, 8000, NULL};

/* A node of model 0 with 64 GiB: cpu free, gpus GPUs with these free milli,
 * and the GPU tasks running on it by class. */
static struct place_node node(int64_t cpu, int gpus, const int32_t *left, int share_tasks,
                              int one_gpu_tasks)
{
	struct place_node n;
	place_node_init(&n, cpu, 65536, gpus, 0);
	for (int i = 0; i < gpus && left; i++)
		n.gpu_left[i] = left[i];
	n.tasks[PLACE_CLASS_SHARE] = share_tasks;
	n.tasks[1] = one_gpu_tasks;
	return n;
}

#define FREE8 ((const int32_t[]){1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000})
#define USED8 ((const int32_t[]){1000, 400, 1000, 1000, 0, 1000, 1000, 1000})

struct points_case {
	const char *name;
	enum place_policy p;
	struct place_node n;
	struct place_task t;
	int64_t points;
	int gpu;
};

static const struct place_task ONE = {8000, 1024, 1, 1000, ANY};
static const struct place_task TWO = {8000, 1024, 2, 1000, ANY};
static const struct place_task SHARE = {8000, 1024, 1, 300, ANY};
static const struct place_task CPU = {8000, 1024, 0, 0, ANY};

static struct points_case points_cases[] = {
    {"random scores every fitting node alike", PLACE_RANDOM, {0}, {0}, 0, -1},
    {"best fit: 100 x (1 - half the CPU and half the GPU left, over the largest node's)",
     PLACE_BESTFIT,
     {0},
     {0},
     34,
     -1},
    {"best fit puts a share on the fullest GPU that holds it", PLACE_BESTFIT, {0}, {0}, 0, 1},
    {"dot product: 100 x (1 - the mean of free x asked, over the largest node's)",
     PLACE_DOTPROD,
     {0},
     {0},
     92,
     -1},
    {"packing: a node with every GPU free scores 33 less its GPUs",
     PLACE_PACKING,
     {0},
     {0},
     25,
     -1},
    {"packing: a share into a partly used GPU scores 100 less a tenth of its room in %",
     PLACE_PACKING,
     {0},
     {0},
     96,
     1},
    {"packing: opening one free GPU on a used node scores 49", PLACE_PACKING, {0}, {0}, 49, -1},
    {"packing: opening two scores 48", PLACE_PACKING, {0}, {0}, 48, -1},
    {"packing: a task without GPUs scores 0", PLACE_PACKING, {0}, {0}, 0, -1},
    {"clustering: an idle node scores 25 and up", PLACE_CLUSTERING, {0}, {0}, 25, -1},
    {"clustering: a node running only the same request scores 75 and up",
     PLACE_CLUSTERING,
     {0},
     {0},
     81,
     1},
    {"clustering: the same request among others scores 50 and up",
     PLACE_CLUSTERING,
     {0},
     {0},
     56,
     1},
    {"clustering: only other requests score 0 and up", PLACE_CLUSTERING, {0}, {0}, 6, -1},
    {"clustering: a task without GPUs scores 0", PLACE_CLUSTERING, {0}, {0}, 0, -1},
};

static void fill_points_cases(void)
{
	/* 64 cores and 8 free GPUs; one GPU asked with 8 cores */
	points_cases[0].n = node(64000, 8, FREE8, 0, 0), points_cases[0].t = ONE;
	points_cases[1].n = node(64000, 8, FREE8, 0, 0), points_cases[1].t = ONE;
	points_cases[2].n = node(64000, 8, USED8, 0, 0), points_cases[2].t = SHARE;
	/* 56 cores and 6100 milli-GPU left: 100 - (50 x 56/128 + 50 x 6100/8000) */
	points_cases[2].points = 40;
	points_cases[3].n = node(64000, 8, FREE8, 0, 0), points_cases[3].t = ONE;
	points_cases[4].n = node(64000, 8, FREE8, 0, 0), points_cases[4].t = ONE;
	points_cases[5].n = node(64000, 8, USED8, 0, 0), points_cases[5].t = SHARE;
	points_cases[6].n = node(64000, 8, USED8, 0, 0), points_cases[6].t = ONE;
	points_cases[7].n = node(64000, 8, USED8, 0, 0), points_cases[7].t = TWO;
	points_cases[8].n = node(64000, 8, USED8, 0, 0), points_cases[8].t = CPU;
	points_cases[9].n = node(64000, 8, FREE8, 0, 0), points_cases[9].t = ONE;
	/* 6000 milli-GPU free: 25 x 2000 / 8000 = 6 over the class's floor */
	const int32_t six[] = {1000, 1000, 1000, 1000, 1000, 1000, 0, 0};
	points_cases[10].n = node(64000, 8, six, 2, 0), points_cases[10].t = SHARE;
	points_cases[11].n = node(64000, 8, six, 2, 1), points_cases[11].t = SHARE;
	points_cases[12].n = node(64000, 8, six, 2, 0), points_cases[12].t = ONE;
	points_cases[13].n = node(64000, 8, six, 2, 0), points_cases[13].t = CPU;
	/* the share cases' GPU: best fit, the 400-free GPU; clustering's a free one */
	points_cases[10].gpu = points_cases[11].gpu = 0;
}

static void run_points_case(void **state)
{
	const struct points_case *c = *state;
	int gpu = -7;
	assert_int_equal(place_score(c->p, &c->n, &c->t, &CTX, &gpu), c->points);
	assert_int_equal(gpu, c->gpu);
}

static void nothing_scores_a_node_the_task_does_not_fit(void **state)
{
	(void)state;
	struct place_node n = node(4000, 8, FREE8, 0, 0); /* too few cores */
	for (int p = 0; p < PLACE_NPOLICIES; p++) {
		int gpu = 3;
		assert_true(place_score((enum place_policy)p, &n, &ONE, &CTX, &gpu) ==
		            PLACE_NO_FIT);
		assert_int_equal(gpu, -1);
	}
}

static void best_fit_prefers_the_node_left_fullest(void **state)
{
	(void)state;
	int gpu;
	struct place_node full = node(16000, 8, USED8, 0, 0), empty = node(64000, 8, FREE8, 0, 0);
	assert_true(place_score(PLACE_BESTFIT, &full, &ONE, &CTX, &gpu) >
	            place_score(PLACE_BESTFIT, &empty, &ONE, &CTX, &gpu));
}

/* A typical set of tasks. */
static struct place_typical *typical(const struct place_task *t, const int64_t *count, int n)
{
	struct place_dist d;
	place_dist_init(&d);
	for (int i = 0; i < n; i++)
		assert_int_equal(place_dist_observe(&d, &t[i], count[i]), DRAKE_OK);
	struct place_typical *ty = malloc(sizeof(*ty));
	place_typical_build(&d, 100, ty);
	place_dist_release(&d);
	return ty;
}

/* The prioritize verb's answer: the node that keeps a whole 8-GPU node
 * free for the 8-GPU shapes gets the top priority and only it; a node the
 * caller could not read and one the task does not fit get 0. */
static void priorities_keep_whole_nodes_for_whole_node_shapes(void **state)
{
	(void)state;
	const struct place_task shapes[] = {{8000, 16384, 1, 1000, ANY},
	                                    {64000, 131072, 8, 1000, ANY}};
	struct place_typical *ty = typical(shapes, (const int64_t[]){3, 1}, 2);
	const int32_t half[8] = {0, 0, 0, 0, 1000, 1000, 1000, 1000};
	struct place_node nodes[4] = {
	    node(64000, 8, FREE8, 0, 0), /* whole and free */
	    node(32000, 8, half, 0, 4),  /* four GPUs taken */
	    node(32000, 8, half, 0, 4),  /* the same, but not read */
	    node(4000, 8, FREE8, 0, 0),  /* too few cores */
	};
	const bool known[4] = {true, true, false, true};
	int64_t out[4];
	place_priorities(nodes, known, 4, &shapes[0], ty, 10, out);
	assert_int_equal(out[1], 10);
	assert_true(out[0] < 10);
	assert_int_equal(out[2], 0);
	assert_int_equal(out[3], 0);
	free(ty);
}

static void fgd_takes_the_gpu_that_grows_fragmentation_least(void **state)
{
	(void)state;
	/* the workload: shares of 550 */
	const struct place_task w[] = {{1000, 1, 1, 550, ANY}};
	struct place_typical *ty = typical(w, (const int64_t[]){10}, 1);
	struct place_ctx c = {ty, 128000, 8000, NULL};
	struct place_node n = node(64000, 2, (const int32_t[]){1000, 600}, 0, 0);
	struct place_task small = {1000, 1, 1, 100, ANY};
	int gpu;
	/* on the 600-free GPU, 500 would be left, too little for a 550 share */
	assert_int_equal(place_score(PLACE_FGD, &n, &small, &c, &gpu), 50);
	assert_int_equal(gpu, 0);
	place_score(PLACE_BESTFIT, &n, &small, &c, &gpu);
	assert_int_equal(gpu, 1);
	/* filling room no 550 share can use lowers fragmentation: above 50 */
	n.gpu_left[1] = 500;
	struct place_task fits = {1000, 1, 1, 500, ANY};
	assert_true(place_score(PLACE_FGD, &n, &fits, &c, &gpu) > 50);
	assert_int_equal(gpu, 1);
	/* the cached fragmentation gives the same points */
	int gpu2;
	assert_int_equal(place_score_cached(PLACE_FGD, &n, place_frag(&n, ty), &fits, &c, &gpu2),
	                 place_score(PLACE_FGD, &n, &fits, &c, &gpu));
	assert_int_equal(gpu2, gpu);
	free(ty);
}

static void fgd_points_are_the_studys_sigmoid_buckets(void **state)
{
	(void)state;
	const struct place_task w[] = {{1000, 1, 1, 1000, ANY}};
	struct place_typical *ty = typical(w, (const int64_t[]){1}, 1);
	struct place_ctx c = {ty, 128000, 8000, NULL};
	/* a whole GPU task on a node with one partly used GPU (500) and one
	 * free: afterwards 500 idle, all fragment for a whole-GPU shape, as
	 * before: no change, sigmoid(0) = 50 */
	struct place_node n = node(64000, 2, (const int32_t[]){1000, 500}, 0, 0);
	int gpu;
	assert_int_equal(place_score(PLACE_FGD, &n, &ONE, &c, &gpu), 50);
	/* on two free GPUs, one stays free: 0 fragment before and after */
	n.gpu_left[1] = 1000;
	assert_int_equal(place_score(PLACE_FGD, &n, &ONE, &c, &gpu), 50);
	/* a share of 200 on a free GPU leaves 800 a whole-GPU shape cannot
	 * use: 100 x sigmoid(-0.8) = 31 */
	struct place_task s200 = {1000, 1, 1, 200, ANY};
	assert_int_equal(place_score(PLACE_FGD, &n, &s200, &c, &gpu), 31);
	free(ty);
}

/* drake's points without its tie-break (a floor division). */
static int64_t points_of(int64_t score)
{
	const int64_t k = PLACE_DRAKE_TIE_MAX + 1;
	return score >= 0 ? score / k : -((-score + k - 1) / k);
}

static void drake_keeps_cores_for_gpus_that_wait_for_work(void **state)
{
	(void)state;
	/* GPU tasks bring 12 cores per GPU; some tasks need no GPU */
	const struct place_task w[] = {{12000, 1, 1, 1000, ANY}, {8000, 1, 0, 0, ANY}};
	struct place_typical *ty = typical(w, (const int64_t[]){8, 2}, 2);
	struct place_ctx c = {ty, 128000, 8000, NULL};
	/* idle: 8 free GPUs and the 96 cores they need; busy: no idle GPU */
	struct place_node idle = node(96000, 8, FREE8, 0, 0);
	struct place_node busy = node(96000, 8, (const int32_t[]){0, 0, 0, 0, 0, 0, 0, 0}, 0, 8);
	int gpu;
	/* FGD sees no difference: one more 12-core task still fits either */
	assert_int_equal(place_score(PLACE_FGD, &idle, &CPU, &c, &gpu),
	                 place_score(PLACE_FGD, &busy, &CPU, &c, &gpu));
	/* drake does: 8 cores taken from the idle node leave 88, which feed
	 * 7333 of its 8000 idle milli-GPU: 667 stranded */
	int64_t on_idle = place_score_node(&idle, &CPU, &c, &gpu);
	int64_t on_busy = place_score_node(&busy, &CPU, &c, &gpu);
	assert_true(on_busy > on_idle);
	assert_int_equal(points_of(on_idle), -667 * PLACE_DRAKE_RESOLUTION);
	assert_int_equal(points_of(on_busy), 0);
	/* and the same for a GPU task asking more cores than its GPU brings */
	struct place_task hungry = {36000, 1, 1, 1000, ANY};
	struct place_node rich = node(128000, 2, (const int32_t[]){1000, 1000}, 0, 0);
	assert_true(place_score_node(&rich, &hungry, &c, &gpu) >
	            place_score_node(&idle, &hungry, &c, &gpu));
	free(ty);
}

static void drake_breaks_equal_points_toward_the_fuller_node(void **state)
{
	(void)state;
	const struct place_task w[] = {{1000, 1, 1, 1000, ANY}};
	struct place_typical *ty = typical(w, (const int64_t[]){1}, 1);
	struct place_ctx c = {ty, 128000, 8000, NULL};
	/* neither placement changes fragmentation or strands anything */
	struct place_node roomy = node(64000, 8, FREE8, 0, 0);
	struct place_node fuller = node(32000, 4, (const int32_t[]){1000, 1000, 1000, 0}, 0, 3);
	int gpu;
	int64_t a = place_score_node(&roomy, &ONE, &c, &gpu);
	int64_t b = place_score_node(&fuller, &ONE, &c, &gpu);
	assert_int_equal(points_of(a), points_of(b));
	assert_true(b > a);
	/* a share, like FGD, avoids leaving room no typical share can use */
	const struct place_task w2[] = {{1000, 1, 1, 550, ANY}};
	struct place_typical *ty2 = typical(w2, (const int64_t[]){10}, 1);
	struct place_ctx c2 = {ty2, 128000, 8000, NULL};
	struct place_node n = node(64000, 2, (const int32_t[]){1000, 600}, 0, 0);
	struct place_task small = {1000, 1, 1, 100, ANY};
	assert_true(place_score_node(&n, &small, &c2, &gpu) != PLACE_NO_FIT);
	assert_int_equal(gpu, 0);
	free(ty);
	free(ty2);
}

/* Model 1's GPUs are a quarter of the cluster's, and a third of the GPU
 * demand may only run on model 1: restricted tasks claim all of it. A task
 * that may run anywhere goes to model 0 by a whole GPU's worth more than
 * the fragmentation measure alone says; one
 * restricted to model 1 still goes there, and on the cluster the claim is
 * read from the candidates the prioritize verb is asked about. */
static void drake_keeps_a_model_for_the_tasks_restricted_to_it(void **state)
{
	(void)state;
	const struct place_task w[] = {{8000, 1, 1, 1000, ANY},
	                               {8000, 1, 1, 1000, UINT64_C(1) << 1}};
	struct place_typical *ty = typical(w, (const int64_t[]){2, 1}, 2);
	struct place_node nodes[2] = {node(96000, 8, FREE8, 0, 0), node(96000, 8, FREE8, 0, 0)};
	nodes[1].model = 1;
	int64_t cap[PLACE_MAX_MODELS];
	int32_t reserve[PLACE_MAX_MODELS];
	/* the cluster: 24 GPUs of model 0, 8 of model 1 */
	memset(cap, 0, sizeof(cap));
	cap[0] = 24000;
	cap[1] = 8000;
	place_reserve_build(ty, cap, 32000, reserve);
	assert_int_equal(reserve[1], 1000);
	assert_int_equal(reserve[0], 0);
	struct place_ctx c = {ty, 96000, 8000, reserve};
	int gpu;
	/* without the claim, a GPU taken on model 0 only lowers the restricted
	 * shape's fragment there (a third of 1000): 333 points apart */
	struct place_ctx none = {ty, 96000, 8000, NULL};
	int64_t gap = points_of(place_score_node(&nodes[0], &ONE, &none, &gpu)) -
	              points_of(place_score_node(&nodes[1], &ONE, &none, &gpu));
	assert_int_equal(gap, 333 * PLACE_DRAKE_RESOLUTION + 341);
	/* with it, a whole GPU of model 1 costs a whole GPU more */
	int64_t on0 = place_score_node(&nodes[0], &ONE, &c, &gpu);
	int64_t on1 = place_score_node(&nodes[1], &ONE, &c, &gpu);
	assert_int_equal(points_of(on0) - points_of(on1), gap + 1000 * PLACE_DRAKE_RESOLUTION);
	/* the restricted task fits only model 1 */
	struct place_task only1 = ONE;
	only1.models = UINT64_C(1) << 1;
	assert_int_equal(place_score_node(&nodes[0], &only1, &c, &gpu), PLACE_NO_FIT);
	assert_true(place_score_node(&nodes[1], &only1, &c, &gpu) != PLACE_NO_FIT);
	free(ty);
	/* The prioritize verb, where the claim outweighs the fragmentation
	 * measure: 8-GPU tasks (1 in 8) lose a whole node of model 0 to the
	 * task, and model-1 tasks (6 in 8) gain room there, so FGD's measure
	 * prefers the half-used node of model 1 by 250 milli-GPU; model 1's
	 * claim, read from the candidates' GPUs, costs that node 800. */
	const struct place_task w2[] = {
	    {8000, 1, 8, 1000, ANY}, {8000, 1, 1, 1000, ANY}, {8000, 1, 1, 1000, UINT64_C(1) << 1}};
	ty = typical(w2, (const int64_t[]){1, 1, 6}, 3);
	const int32_t half[8] = {0, 0, 0, 0, 1000, 1000, 1000, 1000};
	struct place_node cand[3] = {node(96000, 8, FREE8, 0, 0), node(96000, 8, half, 0, 4),
	                             node(96000, 8, FREE8, 0, 0)};
	cand[1].model = 1;
	const bool known[3] = {true, true, false};
	int64_t out[3];
	place_priorities(cand, known, 3, &ONE, ty, 10, out);
	assert_int_equal(out[0], 10);
	assert_true(out[1] < 10);
	struct place_ctx bare = {ty, 96000, 8000, NULL};
	assert_true(place_score_node(&cand[1], &ONE, &bare, &gpu) >
	            place_score_node(&cand[0], &ONE, &bare, &gpu));
	free(ty);
}

struct norm_case {
	const char *name;
	int64_t in[5];
	size_t n;
	int64_t max;
	int64_t out[5];
};

static const struct norm_case norm_cases[] = {
    {"the best gets the top priority and only it", {7, 3, 5, 7, 1}, 5, 10, {10, 3, 6, 10, 0}},
    {"a node that does not fit gets 0", {PLACE_NO_FIT, 2, 4, 0, 0}, 3, 10, {0, 0, 10, 0, 0}},
    {"equal scores all get the top", {-5, -5, -5, 0, 0}, 3, 10, {10, 10, 10, 0, 0}},
    {"scores far apart do not overflow",
     {INT64_MAX, INT64_MIN + 1, 0, 0, 0},
     3,
     10,
     {10, 0, 4, 0, 0}},
    {"a top of 0 gives 0 to all", {3, 2, 0, 0, 0}, 2, 0, {0, 0, 0, 0, 0}},
};

static void run_norm_case(void **state)
{
	const struct norm_case *c = *state;
	int64_t out[5] = {0}, inplace[5];
	place_normalize(c->in, c->n, c->max, out);
	assert_memory_equal(out, c->out, c->n * sizeof(int64_t));
	memcpy(inplace, c->in, sizeof(inplace));
	place_normalize(inplace, c->n, c->max, inplace);
	assert_memory_equal(inplace, c->out, c->n * sizeof(int64_t));
}

static void policies_are_found_by_name(void **state)
{
	(void)state;
	for (int p = 0; p < PLACE_NPOLICIES; p++)
		assert_int_equal(place_policy_parse(place_policy_name((enum place_policy)p)), p);
	assert_int_equal(place_policy_parse("FGD"), -1);
	assert_int_equal(place_policy_parse(""), -1);
	assert_string_equal(place_policy_name(PLACE_NPOLICIES), "?");
}

int main(void)
{
	fill_points_cases();
	static const struct CMUnitTest fixed[] = {
	    cmocka_unit_test(nothing_scores_a_node_the_task_does_not_fit),
	    cmocka_unit_test(best_fit_prefers_the_node_left_fullest),
	    cmocka_unit_test(fgd_takes_the_gpu_that_grows_fragmentation_least),
	    cmocka_unit_test(fgd_points_are_the_studys_sigmoid_buckets),
	    cmocka_unit_test(drake_keeps_cores_for_gpus_that_wait_for_work),
	    cmocka_unit_test(drake_breaks_equal_points_toward_the_fuller_node),
	    cmocka_unit_test(drake_keeps_a_model_for_the_tasks_restricted_to_it),
	    cmocka_unit_test(policies_are_found_by_name),
	    cmocka_unit_test(priorities_keep_whole_nodes_for_whole_node_shapes),
	};
	struct CMUnitTest tests[NCASES(points_cases) + NCASES(norm_cases) + NCASES(fixed)];
	size_t n = 0;
	for (size_t i = 0; i < NCASES(points_cases); i++)
		tests[n++] = (struct CMUnitTest){points_cases[i].name, run_points_case, NULL, NULL,
		                                 (void *)&points_cases[i]};
	for (size_t i = 0; i < NCASES(norm_cases); i++)
		tests[n++] = (struct CMUnitTest){norm_cases[i].name, run_norm_case, NULL, NULL,
		                                 (void *)&norm_cases[i]};
	for (size_t i = 0; i < NCASES(fixed); i++)
		tests[n++] = fixed[i];
	return _cmocka_run_group_tests("score", tests, n, NULL, NULL);
}
