/* dist_test.c - shapes are counted as tasks come and go, the typical set
 * is the most popular shapes up to the coverage whatever order the tasks
 * were seen in, and the distribution stays within its limits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "place/dist.h"

#define ANY PLACE_ANY_MODEL

static const struct place_task A = {4000, 1024, 1, 1000, ANY};  /* one whole GPU */
static const struct place_task B = {8000, 2048, 1, 470, ANY};   /* a share */
static const struct place_task C = {12000, 4096, 0, 0, ANY};    /* no GPU */
static const struct place_task D = {32000, 8192, 8, 1000, ANY}; /* eight GPUs */

static void observe(struct place_dist *d, const struct place_task *t, int64_t k)
{
	assert_int_equal(place_dist_observe(d, t, k), DRAKE_OK);
}

static int64_t count_of(const struct place_typical *ty, const struct place_task *t)
{
	for (size_t i = 0; i < ty->n; i++)
		if (memcmp(&ty->s[i].t, t, sizeof(*t)) == 0)
			return ty->s[i].count;
	return 0;
}

static void the_typical_set_stops_once_it_covers_the_share_asked(void **state)
{
	(void)state;
	struct place_dist d;
	place_dist_init(&d);
	observe(&d, &A, 50);
	observe(&d, &B, 30);
	observe(&d, &C, 15);
	observe(&d, &D, 5);
	struct place_typical *ty = malloc(sizeof(*ty));
	place_typical_build(&d, 95, ty); /* 50 + 30 + 15 = 95 of 100 */
	assert_int_equal(ty->n, 3);
	assert_int_equal(ty->total, 95);
	assert_int_equal(count_of(ty, &D), 0);
	place_typical_build(&d, 96, ty);
	assert_int_equal(ty->n, 4);
	assert_int_equal(ty->total, 100);
	place_typical_build(&d, 50, ty);
	assert_int_equal(ty->n, 1);
	assert_int_equal(count_of(ty, &A), 50);
	free(ty);
	place_dist_release(&d);
}

static void equal_popularity_is_cut_in_shape_order_whatever_the_order_seen(void **state)
{
	(void)state;
	const struct place_task *order1[] = {&A, &B, &C, &D}, *order2[] = {&D, &C, &B, &A};
	struct place_typical *t1 = calloc(1, sizeof(*t1)), *t2 = calloc(1, sizeof(*t2));
	for (int k = 0; k < 2; k++) {
		struct place_dist d;
		place_dist_init(&d);
		for (int i = 0; i < 4; i++)
			observe(&d, (k ? order2 : order1)[i], 10);
		place_typical_build(&d, 50, k ? t2 : t1);
		place_dist_release(&d);
	}
	assert_int_equal(t1->n, 2);
	assert_memory_equal(t1, t2, sizeof(*t1));
	/* shape order: fewer GPUs first, so the CPU task and a share stay */
	assert_int_equal(count_of(t1, &C), 10);
	assert_int_equal(count_of(t1, &B), 10);
	free(t1);
	free(t2);
}

static void taken_back_tasks_leave_the_counts_and_never_below_zero(void **state)
{
	(void)state;
	struct place_dist d;
	place_dist_init(&d);
	observe(&d, &A, 3);
	observe(&d, &B, 2);
	uint64_t ch = d.changes;
	observe(&d, &A, -1);
	assert_true(d.changes > ch);
	assert_int_equal(d.total, 4);
	observe(&d, &A, -10); /* more than there are */
	assert_int_equal(d.total, 2);
	observe(&d, &C, -1); /* never seen */
	assert_int_equal(d.total, 2);
	struct place_typical *ty = malloc(sizeof(*ty));
	place_typical_build(&d, 100, ty);
	assert_int_equal(ty->n, 1);
	assert_int_equal(count_of(ty, &B), 2);
	observe(&d, &B, -2);
	place_typical_build(&d, 100, ty);
	assert_int_equal(ty->n, 0);
	assert_int_equal(ty->total, 0);
	free(ty);
	place_dist_release(&d);
}

static void shapes_sharing_a_gpu_request_form_one_group(void **state)
{
	(void)state;
	struct place_dist d;
	place_dist_init(&d);
	struct place_task a2 = A, b2 = B;
	a2.cpu_milli = 6000;
	b2.mem_mib = 9999;
	observe(&d, &A, 4);
	observe(&d, &a2, 2);
	observe(&d, &B, 3);
	observe(&d, &b2, 1);
	observe(&d, &C, 5);
	struct place_typical *ty = malloc(sizeof(*ty));
	place_typical_build(&d, 100, ty);
	assert_int_equal(ty->n, 5);
	assert_int_equal(ty->n_groups, 3); /* no GPU, a 470 share, one whole GPU */
	assert_int_equal(ty->g[0].num_gpu, 0);
	assert_int_equal(ty->g[0].weight, 5);
	assert_int_equal(ty->g[1].gpu_milli, 470);
	assert_int_equal(ty->g[1].n, 2);
	assert_int_equal(ty->g[1].weight, 4);
	assert_int_equal(ty->g[2].gpu_milli, 1000);
	assert_int_equal(ty->g[2].weight, 6);
	/* the GPU tasks' means: (4x4000 + 2x6000 + 4x8000) / 10 cores, and
	 * (6 x 1000 + 4 x 470) / 10 milli-GPU */
	assert_int_equal(ty->gpu_task_cpu, 6000);
	assert_int_equal(ty->gpu_task_gpu, 788);
	free(ty);
	place_dist_release(&d);
}

static void a_task_without_gpus_is_one_shape_whatever_its_models(void **state)
{
	(void)state;
	struct place_dist d;
	place_dist_init(&d);
	struct place_task c2 = C;
	c2.models = 1;
	observe(&d, &C, 1);
	observe(&d, &c2, 1);
	assert_int_equal(d.n, 1);
	assert_int_equal(d.s[0].count, 2);
	place_dist_release(&d);
}

static void shapes_beyond_the_table_are_counted_untracked(void **state)
{
	(void)state;
	struct place_dist d;
	place_dist_init(&d);
	struct place_task t = C;
	for (int i = 0; i < PLACE_DIST_MAX_SHAPES + 10; i++) {
		t.cpu_milli = 1000 + i;
		observe(&d, &t, 1);
	}
	assert_int_equal(d.n, PLACE_DIST_MAX_SHAPES);
	assert_int_equal(d.untracked, 10);
	assert_int_equal(d.total, PLACE_DIST_MAX_SHAPES + 10);
	/* a shape whose count fell to zero makes room for a new one */
	t.cpu_milli = 1000;
	observe(&d, &t, -1);
	t.cpu_milli = 999;
	observe(&d, &t, 1);
	assert_int_equal(d.n, PLACE_DIST_MAX_SHAPES);
	assert_int_equal(d.untracked, 10);
	struct place_typical *ty = malloc(sizeof(*ty));
	place_typical_build(&d, 100, ty);
	assert_int_equal(ty->n, PLACE_TYPICAL_MAX);
	free(ty);
	place_dist_release(&d);
}

static void counting_past_the_total_limit_is_refused(void **state)
{
	(void)state;
	struct place_dist d;
	place_dist_init(&d);
	observe(&d, &A, PLACE_DIST_MAX_TOTAL - 1);
	assert_int_equal(place_dist_observe(&d, &B, 2), DRAKE_ELIMIT);
	assert_int_equal(d.total, PLACE_DIST_MAX_TOTAL - 1);
	assert_int_equal(d.n, 1);
	observe(&d, &B, 1);
	assert_int_equal(d.total, PLACE_DIST_MAX_TOTAL);
	place_dist_release(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(the_typical_set_stops_once_it_covers_the_share_asked),
	    cmocka_unit_test(equal_popularity_is_cut_in_shape_order_whatever_the_order_seen),
	    cmocka_unit_test(taken_back_tasks_leave_the_counts_and_never_below_zero),
	    cmocka_unit_test(shapes_sharing_a_gpu_request_form_one_group),
	    cmocka_unit_test(a_task_without_gpus_is_one_shape_whatever_its_models),
	    cmocka_unit_test(shapes_beyond_the_table_are_counted_untracked),
	    cmocka_unit_test(counting_past_the_total_limit_is_refused),
	};
	return cmocka_run_group_tests_name("dist", tests, NULL, NULL);
}
