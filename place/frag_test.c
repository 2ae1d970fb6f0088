/* frag_test.c - the fragmentation measure follows the paper's cases (a
 * shape that cannot go on the node makes all idle GPU capacity fragment;
 * one that can makes fragment only the GPUs too full for it), the grouped
 * sum equals the per-shape definition on any node, and stranded capacity
 * grows with every core taken from GPUs that wait for work. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "place/frag.h"

#define NCASES(a) (sizeof(a) / sizeof((a)[0]))
#define ANY       PLACE_ANY_MODEL

/* The node of every case: model 0, 16 cores, 64 GiB, four GPUs with
 * 1000, 1000, 300 and 0 milli free: 2300 idle. */
static void the_node(struct place_node *n)
{
	place_node_init(n, 16000, 65536, 4, 0);
	n->gpu_left[2] = 300;
	n->gpu_left[3] = 0;
}

struct shape_case {
	const char *name;
	struct place_task m;
	int64_t unusable;
};

static const struct shape_case shape_cases[] = {
    {"a shape without GPUs can use none of the idle GPU capacity", {1000, 1, 0, 0, ANY}, 2300},
    {"one whole GPU fits: only the partly used GPU is fragment", {4000, 1, 1, 1000, ANY}, 300},
    {"two whole GPUs fit: the same", {4000, 1, 2, 1000, ANY}, 300},
    {"three whole GPUs do not fit: all idle capacity is fragment", {4000, 1, 3, 1000, ANY}, 2300},
    {"a share larger than the partly used GPU's room: that room is fragment",
     {1000, 1, 1, 470, ANY},
     300},
    {"a share that fits the partly used GPU too: nothing is fragment", {1000, 1, 1, 300, ANY}, 0},
    {"a fitting share on a node short of CPU: all is fragment", {16001, 1, 1, 100, ANY}, 2300},
    {"a fitting share on a node short of memory: all is fragment",
     {1000, 65537, 1, 100, ANY},
     2300},
    {"a share restricted to another GPU model: all is fragment", {1000, 1, 1, 100, 2}, 2300},
    {"a share restricted to the node's model: as any other", {1000, 1, 1, 470, 1}, 300},
};

static void run_shape_case(void **state)
{
	const struct shape_case *c = *state;
	struct place_node n;
	the_node(&n);
	assert_int_equal(place_frag_shape(&n, &c->m), c->unusable);
	/* alone in a typical set of count 3, the node's fragmentation is 3x */
	struct place_dist d;
	place_dist_init(&d);
	assert_int_equal(place_dist_observe(&d, &c->m, 3), DRAKE_OK);
	struct place_typical *ty = malloc(sizeof(*ty));
	place_typical_build(&d, 100, ty);
	assert_int_equal(place_frag(&n, ty), 3 * c->unusable);
	free(ty);
	place_dist_release(&d);
}

static void a_node_without_idle_gpu_capacity_has_no_fragment(void **state)
{
	(void)state;
	struct place_node n;
	place_node_init(&n, 1000, 1000, 2, 0);
	n.gpu_left[0] = n.gpu_left[1] = 0;
	struct place_task cpu_only = {1, 1, 0, 0, ANY};
	assert_int_equal(place_frag_shape(&n, &cpu_only), 0);
	struct place_typical ty = {0};
	assert_int_equal(place_frag(&n, &ty), 0);
}

static int64_t rnd(uint64_t *x, int64_t n)
{
	*x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
	return (int64_t)((*x >> 33) % (uint64_t)n);
}

/* The grouped sum (each group's GPUs read once) against the definition
 * applied shape by shape, over random nodes and typical sets. */
static void the_grouped_sum_is_the_per_shape_definition(void **state)
{
	(void)state;
	uint64_t x = 12345;
#define RND(n) rnd(&x, (n))
	struct place_typical *ty = malloc(sizeof(*ty));
	for (int round = 0; round < 200; round++) {
		struct place_dist d;
		place_dist_init(&d);
		int shapes = 1 + (int)RND(40);
		for (int i = 0; i < shapes; i++) {
			static const int32_t milli[] = {0, 100, 250, 470, 810, 1000, 1000, 1000};
			int32_t m = milli[RND(8)];
			struct place_task t = {0, 0, m ? 1 : 0, m, ANY};
			t.cpu_milli = RND(20) * 1000;
			t.mem_mib = RND(8) * 8192;
			if (RND(3) == 0)
				t.models = (uint64_t)(1 + RND(3));
			if (m == 1000)
				t.num_gpu = (int32_t)(1 + RND(4));
			assert_int_equal(place_dist_observe(&d, &t, 1 + RND(50)), DRAKE_OK);
		}
		place_typical_build(&d, 100, ty);
		struct place_node n;
		int64_t cpu = RND(40) * 1000, mem = RND(16) * 8192;
		int gpus = (int)RND(9);
		place_node_init(&n, cpu, mem, gpus, (int)RND(3) - 1);
		for (int g = 0; g < n.n_gpu; g++)
			n.gpu_left[g] = (int32_t)(RND(3) == 0 ? 1000 : RND(1001));
		int64_t want = 0;
		for (size_t i = 0; i < ty->n; i++)
			want += ty->s[i].count * place_frag_shape(&n, &ty->s[i].t);
		assert_int_equal(place_frag(&n, ty), want);
		place_dist_release(&d);
	}
#undef RND
	free(ty);
}

static void fragmentation_after_a_placement_is_that_of_the_charged_node(void **state)
{
	(void)state;
	struct place_dist d;
	place_dist_init(&d);
	struct place_task whole = {4000, 1, 1, 1000, ANY}, share = {1000, 1, 1, 470, ANY};
	assert_int_equal(place_dist_observe(&d, &whole, 1), DRAKE_OK);
	struct place_typical *ty = malloc(sizeof(*ty));
	place_typical_build(&d, 100, ty);
	struct place_node n;
	the_node(&n);
	/* a share on a whole GPU leaves 530 there that the whole-GPU shape cannot use */
	int gpus[PLACE_MAX_GPUS] = {0};
	assert_int_equal(place_frag_after(&n, &share, gpus, ty), 300 + 530);
	gpus[0] = 2; /* on the partly used GPU (300 free): does not fit */
	assert_int_equal(place_pick_gpus(&n, &share, 2, gpus), 0);
	/* the node itself is unchanged */
	assert_int_equal(place_frag(&n, ty), 300);
	free(ty);
	place_dist_release(&d);
}

static void stranded_capacity_grows_with_the_cores_taken_from_waiting_gpus(void **state)
{
	(void)state;
	struct place_dist d;
	place_dist_init(&d);
	/* GPU tasks bring 12 cores per GPU; the CPU-only shape does not count */
	struct place_task g1 = {12000, 1, 1, 1000, ANY}, cpu = {50000, 1, 0, 0, ANY};
	assert_int_equal(place_dist_observe(&d, &g1, 5), DRAKE_OK);
	assert_int_equal(place_dist_observe(&d, &cpu, 5), DRAKE_OK);
	struct place_typical *ty = malloc(sizeof(*ty));
	place_typical_build(&d, 100, ty);
	assert_int_equal(ty->gpu_task_cpu, 12000);
	assert_int_equal(ty->gpu_task_gpu, 1000);
	struct place_node n;
	place_node_init(&n, 96000, 65536, 8, 0); /* 12 cores for each of 8 GPUs */
	assert_int_equal(place_stranded(&n, ty), 0);
	n.cpu_left = 90000; /* 6 cores gone: half a GPU can no longer be fed */
	assert_int_equal(place_stranded(&n, ty), 500);
	n.cpu_left = 0;
	assert_int_equal(place_stranded(&n, ty), 8000);
	n.gpu_left[0] = 400; /* only idle capacity can be stranded */
	assert_int_equal(place_stranded(&n, ty), 7400);
	for (int i = 0; i < 8; i++)
		n.gpu_left[i] = 0;
	assert_int_equal(place_stranded(&n, ty), 0);
	struct place_typical none = {0}; /* no GPU task in the workload: nothing to feed */
	place_node_init(&n, 0, 0, 8, 0);
	assert_int_equal(place_stranded(&n, &none), 0);
	free(ty);
	place_dist_release(&d);
}

int main(void)
{
	static const struct CMUnitTest fixed[] = {
	    cmocka_unit_test(a_node_without_idle_gpu_capacity_has_no_fragment),
	    cmocka_unit_test(the_grouped_sum_is_the_per_shape_definition),
	    cmocka_unit_test(fragmentation_after_a_placement_is_that_of_the_charged_node),
	    cmocka_unit_test(stranded_capacity_grows_with_the_cores_taken_from_waiting_gpus),
	};
	struct CMUnitTest tests[NCASES(shape_cases) + NCASES(fixed)];
	size_t n = 0;
	for (size_t i = 0; i < NCASES(shape_cases); i++)
		tests[n++] = (struct CMUnitTest){shape_cases[i].name, run_shape_case, NULL, NULL,
		                                 (void *)&shape_cases[i]};
	for (size_t i = 0; i < NCASES(fixed); i++)
		tests[n++] = fixed[i];
	return _cmocka_run_group_tests("frag", tests, n, NULL, NULL);
}
