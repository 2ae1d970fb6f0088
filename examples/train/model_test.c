/*
 * model_test.c - the perceptron's math: parameter counts, seeded
 * initialisation, the analytic gradient against finite differences (with
 * and without the hidden layer), a softmax that survives huge logits, and
 * SGD that actually learns a small problem.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "examples/train/model.h"

static void test_parameter_counts_and_limits(void **state)
{
	struct model_shape mlp = {64, 32, 10}, soft = {64, 0, 10};
	assert_int_equal(model_nparams(&mlp), 64 * 32 + 32 + 32 * 10 + 10);
	assert_int_equal(model_nparams(&soft), 64 * 10 + 10);
	const struct model_shape bad[] = {
	    {0, 4, 10},
	    {64, -1, 10},
	    {64, 4, 1},
	    {64, MODEL_HIDDEN_MAX + 1, 10},
	    {MODEL_IN_MAX + 1, 4, 10},
	    {64, 4, MODEL_OUT_MAX + 1},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(model_nparams(&bad[i]), 0);
}

static void test_init_is_seeded_glorot_with_zero_biases(void **state)
{
	struct model_shape s = {64, 32, 10};
	size_t n = model_nparams(&s);
	double *a = malloc(n * sizeof(double)), *b = malloc(n * sizeof(double));
	assert_non_null(a);
	assert_non_null(b);
	model_init(&s, 7, a);
	model_init(&s, 7, b);
	assert_memory_equal(a, b, n * sizeof(double));
	model_init(&s, 8, b);
	assert_memory_not_equal(a, b, n * sizeof(double));
	double lim1 = sqrt(6.0 / (64 + 32)), lim2 = sqrt(6.0 / (32 + 10));
	for (size_t i = 0; i < 64 * 32; i++)
		assert_true(fabs(a[i]) <= lim1 && a[i] != 0);
	for (size_t i = 64 * 32; i < 64 * 32 + 32; i++)
		assert_true(a[i] == 0); /* b1 */
	for (size_t i = 64 * 32 + 32; i < n - 10; i++)
		assert_true(fabs(a[i]) <= lim2);
	for (size_t i = n - 10; i < n; i++)
		assert_true(a[i] == 0); /* b2 */
	/* the generator is the same on every machine: pin its first value */
	struct model_rng r = {0};
	assert_true(model_rng_next(&r) == 0xe220a8397b1dcdafULL);
	free(a);
	free(b);
}

/* Central finite differences of the loss against model_gradient. */
static void check_gradient(struct model_shape s)
{
	size_t n = model_nparams(&s), rows_n = 5;
	double *w = malloc(n * sizeof(double)), *g = malloc(n * sizeof(double)),
	       *g2 = malloc(n * sizeof(double));
	double *x = malloc(rows_n * (size_t)s.in * sizeof(double)),
	       *scratch = malloc((model_scratch_len(&s) + 1) * sizeof(double));
	uint8_t y[5];
	uint32_t rows[5] = {0, 1, 2, 3, 4};
	assert_true(w && g && g2 && x && scratch);
	struct model_rng r = {99};
	model_init(&s, 3, w);
	for (size_t i = 0; i < n; i++)
		w[i] += 0.1 * (model_rng_uniform(&r) - 0.5); /* non-zero biases too */
	for (size_t i = 0; i < rows_n * (size_t)s.in; i++)
		x[i] = model_rng_uniform(&r);
	for (size_t i = 0; i < rows_n; i++)
		y[i] = (uint8_t)(i % (size_t)s.out);
	double loss = model_gradient(&s, w, x, y, rows, rows_n, g, scratch);
	assert_true(loss > 0 && isfinite(loss));
	const double h = 1e-6;
	for (size_t i = 0; i < n; i++) {
		double keep = w[i];
		w[i] = keep + h;
		double up = model_gradient(&s, w, x, y, rows, rows_n, g2, scratch);
		w[i] = keep - h;
		double down = model_gradient(&s, w, x, y, rows, rows_n, g2, scratch);
		w[i] = keep;
		double num = (up - down) / (2 * h);
		if (fabs(num - g[i]) > 1e-6 * (1 + fabs(num)))
			fail_msg("shape %d-%d-%d, parameter %zu: analytic %.10g, numeric %.10g",
			         s.in, s.hidden, s.out, i, g[i], num);
	}
	free(w);
	free(g);
	free(g2);
	free(x);
	free(scratch);
}

static void test_gradient_matches_finite_differences(void **state)
{
	check_gradient((struct model_shape){6, 4, 3});
	check_gradient((struct model_shape){6, 0, 3}); /* softmax regression */
	check_gradient((struct model_shape){3, 1, 2});
}

static void test_softmax_survives_huge_logits(void **state)
{
	struct model_shape s = {2, 0, 3};
	/* W rows: class 0 = 1000*x0, class 1 = 1000*x1, class 2 = 0 */
	double w[9] = {1000, 0, 0, 1000, 0, 0, 0, 0, 0};
	double x[4] = {1, 0, 0, 1}, scratch[8], loss;
	assert_int_equal(model_predict(&s, w, x, 0, &loss, scratch), 0);
	assert_true(loss >= 0 && loss < 1e-12);
	assert_int_equal(model_predict(&s, w, x + 2, 0, &loss, scratch), 1);
	assert_true(isfinite(loss) && loss == 50.0); /* p underflowed: capped, not inf */
	uint8_t y[2] = {0, 1};
	uint32_t rows[2] = {0, 1};
	double g[9];
	double l = model_gradient(&s, w, x, y, rows, 2, g, scratch);
	assert_true(isfinite(l));
	for (int i = 0; i < 9; i++)
		assert_true(isfinite(g[i]));
	assert_true(model_evaluate(&s, w, x, y, 2, &l, scratch) == 1.0);
}

static void test_sgd_learns_a_small_problem(void **state)
{
	/* four classes, one per quadrant of the plane, not linearly separable
	 * by a single threshold but easy for 8 tanh units */
	enum { N = 200 };
	struct model_shape s = {2, 8, 4};
	size_t n = model_nparams(&s);
	double x[N * 2], w[64], g[64], scratch[32];
	assert_true(n <= 64);
	uint8_t y[N];
	uint32_t rows[16];
	struct model_rng r = {5};
	for (int i = 0; i < N; i++) {
		x[2 * i] = 2 * model_rng_uniform(&r) - 1;
		x[2 * i + 1] = 2 * model_rng_uniform(&r) - 1;
		y[i] = (uint8_t)((x[2 * i] > 0) + 2 * (x[2 * i + 1] > 0));
	}
	model_init(&s, 1, w);
	double loss0, loss1;
	double acc0 = model_evaluate(&s, w, x, y, N, &loss0, scratch);
	for (int step = 0; step < 3000; step++) {
		for (int i = 0; i < 16; i++)
			rows[i] = (uint32_t)(model_rng_uniform(&r) * N);
		model_gradient(&s, w, x, y, rows, 16, g, scratch);
		model_sgd(n, w, g, 0.5);
	}
	double acc1 = model_evaluate(&s, w, x, y, N, &loss1, scratch);
	assert_true(loss1 < loss0 / 4);
	assert_true(acc1 >= 0.95);
	assert_true(acc1 > acc0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parameter_counts_and_limits),
	    cmocka_unit_test(test_init_is_seeded_glorot_with_zero_biases),
	    cmocka_unit_test(test_gradient_matches_finite_differences),
	    cmocka_unit_test(test_softmax_survives_huge_logits),
	    cmocka_unit_test(test_sgd_learns_a_small_problem),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
