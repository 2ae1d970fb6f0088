/* progress_model_test.c - the learning-curve model: draws are the seed's,
 * early-converging curves go flat after their knee and late ones do not,
 * and fed to migrate/'s progress classes the early ones are the ones that
 * end up slowing or converged. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "migrate/progress.h"
#include "sim/progress_model.h"

static void the_same_seed_draws_the_same_curves(void **state)
{
	(void)state;
	struct sim_curve_opts o;
	sim_curve_defaults(&o);
	size_t early = 0, differ = 0;
	for (size_t j = 0; j < 400; j++) {
		struct sim_curve a, b, c;
		sim_curve_draw(&o, 1, j, &a);
		sim_curve_draw(&o, 1, j, &b);
		sim_curve_draw(&o, 2, j, &c);
		assert_true(a.tau == b.tau && a.early == b.early && a.rng == b.rng);
		differ += a.tau != c.tau;
		early += a.early;
		if (a.early)
			assert_true(a.tau >= o.tau_early_min && a.tau <= o.tau_early_max);
		else
			assert_true(a.tau >= o.tau_late_min && a.tau <= o.tau_late_max);
	}
	assert_true(differ > 390);               /* another seed, other curves */
	assert_true(early > 160 && early < 240); /* converge_frac 0.5 of 400 */
	o.converge_frac = 0;
	for (size_t j = 0; j < 100; j++) {
		struct sim_curve a;
		sim_curve_draw(&o, 1, j, &a);
		assert_false(a.early);
	}
}

static void an_early_curve_is_flat_after_its_knee_and_a_late_one_is_not(void **state)
{
	(void)state;
	struct sim_curve_opts o;
	sim_curve_defaults(&o);
	struct sim_curve early = {.tau = 0.03, .a_max = 0.9, .early = true};
	struct sim_curve late = {.tau = 0.5, .a_max = 0.9};
	double flat = sim_curve_flat_from(&o, &early);
	assert_float_equal(flat, 0.03 * log(0.9 / 1e-4), 1e-12); /* 0.273 */
	assert_true(sim_curve_flat_from(&o, &late) > 1);
	double at_flat = sim_curve_report(&o, &early, flat);
	double prev = -1;
	for (int i = 0; i <= 1000; i++) {
		double f = i / 1000.0;
		double v = sim_curve_report(&o, &early, f);
		assert_true(v >= prev); /* never falls without noise */
		prev = v;
		/* a multiple of the resolution */
		assert_float_equal(v / 1e-4, round(v / 1e-4), 1e-6);
		if (f >= flat) /* at most one step above what it was at the knee */
			assert_true(v - at_flat <= 1e-4 + 1e-12);
	}
	assert_true(sim_curve_report(&o, &early, 1) >= 0.9 - 1e-4 - 1e-12);
	/* the late curve still gains 500 steps in the last fifth of its work */
	assert_true(sim_curve_report(&o, &late, 1) - sim_curve_report(&o, &late, 0.8) > 0.05);
	assert_true(sim_curve_value(&late, 2) == sim_curve_value(&late, 1)); /* f clamped */
}

static void noise_is_the_jobs_own_and_repeats_per_seed(void **state)
{
	(void)state;
	struct sim_curve_opts o;
	sim_curve_defaults(&o);
	o.noise = 0.01;
	struct sim_curve a, b;
	sim_curve_draw(&o, 7, 3, &a);
	sim_curve_draw(&o, 7, 3, &b);
	int moved = 0;
	for (int i = 0; i < 100; i++) {
		double f = i / 100.0;
		double va = sim_curve_report(&o, &a, f);
		assert_true(va == sim_curve_report(&o, &b, f));
		assert_true(va >= 0 && va <= 1);
		moved += fabs(va - sim_curve_value(&a, f)) > 1e-4;
	}
	assert_true(moved > 50);
}

static void options_out_of_range_are_refused(void **state)
{
	(void)state;
	struct sim_curve_opts o;
	char why[128];
	sim_curve_defaults(&o);
	assert_int_equal(sim_curve_opts_check(&o, why, sizeof(why)), DRAKE_OK);
	o.converge_frac = 1.5;
	assert_int_equal(sim_curve_opts_check(&o, why, sizeof(why)), DRAKE_EINVAL);
	sim_curve_defaults(&o);
	o.tau_early_min = 0.1; /* above its max */
	assert_int_equal(sim_curve_opts_check(&o, why, sizeof(why)), DRAKE_EINVAL);
	sim_curve_defaults(&o);
	o.tau_late_min = 0;
	assert_int_equal(sim_curve_opts_check(&o, why, sizeof(why)), DRAKE_EINVAL);
	sim_curve_defaults(&o);
	o.interval = 0;
	assert_int_equal(sim_curve_opts_check(&o, why, sizeof(why)), DRAKE_EINVAL);
	sim_curve_defaults(&o);
	o.resolution = 0.5;
	assert_int_equal(sim_curve_opts_check(&o, why, sizeof(why)), DRAKE_EINVAL);
	sim_curve_defaults(&o);
	o.noise = -1;
	assert_int_equal(sim_curve_opts_check(&o, why, sizeof(why)), DRAKE_EINVAL);
}

/* One job's run of `seconds` at a steady pace, a sample a minute: the
 * fraction done when its class first became slowing or converged (-1
 * never). */
static double first_slow(const struct sim_curve_opts *o, struct sim_curve *c, int64_t seconds)
{
	struct mig_progress p;
	mig_progress_init(&p, MIG_KIND_ACCURACY, seconds);
	char why[128];
	for (int64_t t = 60; t <= seconds; t += 60) {
		double f = (double)t / (double)seconds;
		struct mig_sample s = {(double)t, t, sim_curve_report(o, c, f)};
		assert_int_equal(mig_progress_add(&p, &s, NULL, why, sizeof(why)), DRAKE_OK);
		if (mig_progress_slow(&p))
			return f;
	}
	return -1;
}

static void the_classes_find_early_curves_after_their_knee_and_not_late_ones(void **state)
{
	(void)state;
	struct sim_curve_opts o;
	sim_curve_defaults(&o);
	const int64_t lengths[] = {3600, 10000, 50000};
	for (size_t i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++) {
		struct sim_curve early = {.tau = 0.03, .a_max = 0.9, .early = true};
		struct sim_curve late = {.tau = 0.4, .a_max = 0.9};
		double f = first_slow(&o, &early, lengths[i]);
		print_message("%lld s: early curve slowing at f=%.3f (flat from %.3f)\n",
		              (long long)lengths[i], f, sim_curve_flat_from(&o, &early));
		assert_true(f > 3 * early.tau); /* not before the knee */
		assert_true(f < 0.7);
		assert_true(first_slow(&o, &late, lengths[i]) < 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(the_same_seed_draws_the_same_curves),
	    cmocka_unit_test(an_early_curve_is_flat_after_its_knee_and_a_late_one_is_not),
	    cmocka_unit_test(noise_is_the_jobs_own_and_repeats_per_seed),
	    cmocka_unit_test(options_out_of_range_are_refused),
	    cmocka_unit_test(the_classes_find_early_curves_after_their_knee_and_not_late_ones),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
