/* speed_fit_test.c - a job's speed model fitted from its observed rates:
 * the prior without data, its shape scaled to one rate, the slope pinned
 * by two sizes, unusable observations ignored. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>

#include "gang/speed_fit.h"

static struct drake_speed prior(void)
{
	struct drake_speed m;
	drake_speed_defaults(&m);
	m.node_gpus = 4;
	return m;
}

static void without_observations_the_prior_stands(void **state)
{
	(void)state;
	struct drake_speed m = prior();
	struct drake_speed_fitted f;
	drake_speed_fit(&m, 1, NULL, 0, &f);
	assert_int_equal(f.n_obs, 0);
	assert_true(f.c == 1 && !f.sized);
	for (int w = 1; w <= 8; w++)
		assert_true(drake_speed_fitted_rate(&f, w, 1, 2) == drake_speed_rate(&m, w, 1, 2));
}

static void one_size_scales_the_priors_shape_to_the_rate_seen(void **state)
{
	(void)state;
	struct drake_speed m = prior();
	struct drake_speed_obs o[] = {{4, 1, 2.5}};
	struct drake_speed_fitted f;
	drake_speed_fit(&m, 1, o, 1, &f);
	assert_int_equal(f.n_obs, 1);
	assert_float_equal(drake_speed_fitted_rate(&f, 4, 1, 1), 2.5, 1e-9);
	double ratio = drake_speed_rate(&m, 8, 1, 2) / drake_speed_rate(&m, 4, 1, 1);
	assert_float_equal(drake_speed_fitted_rate(&f, 8, 1, 2), 2.5 * ratio, 1e-9);
	/* the prior still promises a gain: the job may try the size */
	assert_true(drake_speed_fitted_rate(&f, 8, 1, 2) > 2.5);
}

static void a_job_that_ran_slower_across_two_nodes_is_fitted_slower_there(void **state)
{
	(void)state;
	/* yolov3 of Pollux's workloads: 4 replicas on one node, then 8 on two
	 * at about half the rate */
	struct drake_speed m = prior();
	struct drake_speed_obs o[] = {{4, 1, 1.133}, {8, 2, 0.611}};
	struct drake_speed_fitted f;
	drake_speed_fit(&m, 1, o, 2, &f);
	assert_int_equal(f.n_obs, 2);
	double t4 = drake_speed_fitted_rate(&f, 4, 1, 1), t8 = drake_speed_fitted_rate(&f, 8, 1, 2);
	assert_float_equal(t4, 1.133, 0.02 * 1.133);
	assert_float_equal(t8, 0.611, 0.02 * 0.611);
	/* and no size in between on two nodes beats the one it ran at alone */
	for (int w = 5; w <= 8; w++)
		assert_true(drake_speed_fitted_rate(&f, w, 1, 2) < t4);
}

static void a_job_that_scaled_linearly_is_fitted_to_keep_scaling(void **state)
{
	(void)state;
	struct drake_speed m = prior();
	struct drake_speed_obs o[] = {{1, 1, 1}, {2, 1, 2}, {4, 1, 4}};
	struct drake_speed_fitted f;
	drake_speed_fit(&m, 1, o, 3, &f);
	/* better than the prior's 5 % loss: the prior's shape, no worse */
	assert_true(f.sized);
	assert_true(f.a == 0 && f.b == 0);
	assert_true(drake_speed_fitted_rate(&f, 8, 1, 2) >= drake_speed_rate(&m, 8, 1, 2));
}

static void more_workers_on_one_node_slower_pins_the_scaling_loss(void **state)
{
	(void)state;
	struct drake_speed m = prior();
	struct drake_speed_obs o[] = {{2, 1, 2}, {4, 1, 1.8}};
	struct drake_speed_fitted f;
	drake_speed_fit(&m, 1, o, 2, &f);
	assert_true(f.a > 0.3 && f.b == 0);
	assert_true(drake_speed_fitted_rate(&f, 4, 1, 1) < drake_speed_fitted_rate(&f, 2, 1, 1));
	assert_true(drake_speed_fitted_rate(&f, 3, 1, 1) < drake_speed_fitted_rate(&f, 2, 1, 1));
}

static void unusable_observations_are_ignored(void **state)
{
	(void)state;
	struct drake_speed m = prior();
	struct drake_speed_obs o[] = {{4, 1, 2},        {8, 2, 0}, {8, 2, -1}, {8, 2, NAN},
	                              {8, 2, INFINITY}, {0, 1, 5}, {8, 0, 5}};
	struct drake_speed_fitted f;
	drake_speed_fit(&m, 1, o, 7, &f);
	assert_int_equal(f.n_obs, 1);
	assert_float_equal(drake_speed_fitted_rate(&f, 4, 1, 1), 2, 1e-9);
	assert_true(!f.sized && f.a == 0 && f.b == 0);
}

static void no_more_than_the_limit_of_observations_is_read(void **state)
{
	(void)state;
	struct drake_speed m = prior();
	struct drake_speed_obs o[DRAKE_SPEED_MAX_OBS + 1];
	for (int i = 0; i < DRAKE_SPEED_MAX_OBS; i++)
		o[i] = (struct drake_speed_obs){4, 1, 3};
	o[DRAKE_SPEED_MAX_OBS] = (struct drake_speed_obs){8, 2, 0.1};
	struct drake_speed_fitted f;
	drake_speed_fit(&m, 1, o, DRAKE_SPEED_MAX_OBS + 1, &f);
	assert_int_equal(f.n_obs, DRAKE_SPEED_MAX_OBS);
	assert_true(!f.sized && f.b == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(without_observations_the_prior_stands),
	    cmocka_unit_test(one_size_scales_the_priors_shape_to_the_rate_seen),
	    cmocka_unit_test(a_job_that_ran_slower_across_two_nodes_is_fitted_slower_there),
	    cmocka_unit_test(a_job_that_scaled_linearly_is_fitted_to_keep_scaling),
	    cmocka_unit_test(more_workers_on_one_node_slower_pins_the_scaling_loss),
	    cmocka_unit_test(unusable_observations_are_ignored),
	    cmocka_unit_test(no_more_than_the_limit_of_observations_is_read),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
