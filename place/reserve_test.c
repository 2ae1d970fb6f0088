/* reserve_test.c - the restricted shapes' claim on each GPU model: their
 * share of the GPU demand spread over the GPUs of the models they allow,
 * capped at the whole model, nothing without restricted shapes, and the
 * capacity read from the nodes the caller knows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "place/reserve.h"

#define NCASES(a) (sizeof(a) / sizeof((a)[0]))
#define ANY       PLACE_ANY_MODEL
#define M(i)      (UINT64_C(1) << (i))

struct reserve_case {
	const char *name;
	struct place_task shapes[3];
	int64_t count[3];
	int64_t cap[3]; /* GPUs (milli) of models 0, 1, 2 */
	int64_t cap_total;
	int32_t want[3];
};

static const struct reserve_case cases[] = {
    {"no restricted shape claims nothing",
     {{8000, 1, 1, 1000, ANY}, {4000, 1, 1, 500, ANY}},
     {3, 1},
     {8000, 8000, 0},
     16000,
     {0, 0, 0}},
    {"a model only restricted tasks ask for is claimed by their demand over its GPUs",
     /* a quarter of the demand, on half the GPUs: half of model 1 */
     {{8000, 1, 1, 1000, ANY}, {8000, 1, 1, 1000, M(1)}},
     {3, 1},
     {8000, 8000, 0},
     16000,
     {0, 500, 0}},
    {"a small model asked for by many restricted tasks is claimed whole",
     /* half the demand on an eighth of the GPUs: 4, capped at 1 */
     {{8000, 1, 1, 1000, ANY}, {8000, 1, 1, 1000, M(1)}},
     {1, 1},
     {14000, 2000, 0},
     16000,
     {0, 1000, 0}},
    {"a shape allowing two models spreads its claim over both",
     /* a quarter of the demand over models 1 and 2, half the GPUs */
     {{8000, 1, 1, 1000, ANY}, {8000, 1, 1, 1000, M(1) | M(2)}},
     {3, 1},
     {8000, 4000, 4000},
     16000,
     {0, 500, 500}},
    {"demand counts GPUs, not tasks: a share claims its milli",
     /* shares of 250 by 4 tasks: 1000 of 4000 milli demanded, a quarter */
     {{8000, 1, 1, 1000, ANY}, {8000, 1, 1, 250, M(0)}},
     {3, 4},
     {4000, 12000, 0},
     16000,
     {1000, 0, 0}},
    {"a model the cluster has no GPU of leaves its shapes' claim out",
     {{8000, 1, 1, 1000, ANY}, {8000, 1, 1, 1000, M(2)}},
     {1, 1},
     {8000, 8000, 0},
     16000,
     {0, 0, 0}},
};

static struct place_typical *typical(const struct reserve_case *c)
{
	struct place_dist d;
	place_dist_init(&d);
	for (int i = 0; i < 3; i++)
		if (c->count[i])
			assert_int_equal(place_dist_observe(&d, &c->shapes[i], c->count[i]),
			                 DRAKE_OK);
	struct place_typical *ty = malloc(sizeof(*ty));
	place_typical_build(&d, 100, ty);
	place_dist_release(&d);
	return ty;
}

static void run_case(void **state)
{
	const struct reserve_case *c = *state;
	struct place_typical *ty = typical(c);
	int64_t cap[PLACE_MAX_MODELS] = {c->cap[0], c->cap[1], c->cap[2]};
	int32_t out[PLACE_MAX_MODELS];
	place_reserve_build(ty, cap, c->cap_total, out);
	for (int m = 0; m < 3; m++)
		assert_int_equal(out[m], c->want[m]);
	for (int m = 3; m < PLACE_MAX_MODELS; m++)
		assert_int_equal(out[m], 0);
	free(ty);
}

static void capacity_counts_the_known_nodes_by_model(void **state)
{
	(void)state;
	struct place_node n[4];
	place_node_init(&n[0], 1000, 1, 8, 0);
	place_node_init(&n[1], 1000, 1, 2, 1);
	place_node_init(&n[2], 1000, 1, 4, 1);
	place_node_init(&n[3], 1000, 1, 1, -1); /* no model named */
	n[2].gpu_left[0] = 0;                   /* capacity, not what is free */
	const bool known[4] = {true, true, false, true};
	int64_t cap[PLACE_MAX_MODELS];
	assert_int_equal(place_model_capacity(n, known, 4, cap), 11000);
	assert_int_equal(cap[0], 8000);
	assert_int_equal(cap[1], 2000);
	assert_int_equal(place_model_capacity(n, NULL, 4, cap), 15000);
	assert_int_equal(cap[1], 6000);
}

int main(void)
{
	struct CMUnitTest tests[NCASES(cases) + 1];
	size_t k = 0;
	for (size_t i = 0; i < NCASES(cases); i++)
		tests[k++] =
		    (struct CMUnitTest){cases[i].name, run_case, NULL, NULL, (void *)&cases[i]};
	tests[k++] = (struct CMUnitTest)cmocka_unit_test(capacity_counts_the_known_nodes_by_model);
	return _cmocka_run_group_tests("reserve", tests, k, NULL, NULL);
}
