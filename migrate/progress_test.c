/* progress_test.c - a job's progress class on recorded-style metric curves
 * (accuracies reported as fractions of a 10,000-image evaluation set, losses
 * printed with 3 decimals, one report every 10 s), the hysteresis, the fit
 * that runs on every sample (the fork's ran once), and the samples refused.
 *
 * A class sequence is written run-length encoded, one letter per class:
 * "2u 88p 1s 59c" is unknown for 2 samples, progressing for 88, slowing for
 * 1, converged for 59. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "migrate/progress.h"

#define DT 10.0 /* seconds between reports */

/* The same 64-bit LCG as the prototype the expected sequences were checked
 * against: uniform in [-1, 1). */
static double noise(uint64_t *x)
{
	*x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(*x >> 11) / 9007199254740992.0 * 2 - 1;
}

static double quantize(double v, double q)
{
	return q > 0 ? floor(v / q + 0.5) * q : v;
}

static double rise_slow_exp(double t)
{
	return 0.95 * (1 - exp(-t / 2000));
}
static double rise_sqrt(double t)
{
	return 0.1 + 0.02 * sqrt(t);
}
static double ceiling(double t)
{
	return fmin(0.9, 0.1 + 0.001 * t);
}
static double saturate(double t)
{
	return 0.95 * (1 - exp(-t / 200));
}
static double linear(double t)
{
	return 0.1 + 0.0004 * t;
}
static double flat_acc(double t)
{
	return 0.9712;
}
static double flat_loss(double t)
{
	return 0.0831;
}
static double loss_exp(double t)
{
	return 0.3 + 2 * exp(-t / 150);
}
static double loss_floor(double t)
{
	return fmax(0.25, 2.3 - 0.004 * t);
}
static double loss_up(double t)
{
	return 0.5 + 0.001 * t;
}

struct curve {
	const char *name;
	enum mig_kind kind;
	double (*f)(double t);
	int n;
	double q;     /* reporting resolution */
	double noise; /* uniform amplitude, before quantization */
	const char *want;
};

/* The class sequence of curve c, run-length encoded into buf. */
static const char *classes(const struct curve *c, char *buf, size_t len)
{
	static const char letter[] = {'u', 'p', 's', 'c'};
	struct mig_progress p;
	mig_progress_init(&p, c->kind, 0);
	uint64_t seed = 1;
	char prev = 0;
	int run = 0;
	size_t off = 0;
	buf[0] = '\0';
	for (int i = 0; i < c->n; i++) {
		double t = i * DT;
		struct mig_sample s = {t, i, quantize(c->f(t) + c->noise * noise(&seed), c->q)};
		char why[128];
		if (mig_progress_add(&p, &s, NULL, why, sizeof(why)))
			fail_msg("%s: sample %d refused: %s", c->name, i, why);
		char l = letter[p.cls];
		if (l != prev && run) {
			off += (size_t)snprintf(buf + off, len - off, "%s%d%c", off ? " " : "", run,
			                        prev);
			run = 0;
		}
		prev = l;
		run++;
	}
	snprintf(buf + off, len - off, "%s%d%c", off ? " " : "", run, prev);
	return buf;
}

static void recorded_curves_get_the_classes_a_user_expects(void **state)
{
	static const struct curve cases[] = {
	    {"an accuracy rising along a slow exponential stays progressing", MIG_KIND_ACCURACY,
	     rise_slow_exp, 150, 1e-4, 0, "2u 148p"},
	    {"an accuracy rising as sqrt(t), slower than exponential, stays progressing",
	     MIG_KIND_ACCURACY, rise_sqrt, 150, 1e-4, 0, "2u 148p"},
	    /* 0.9 is reached at sample 81; intervals 81..90 are flat: slowing at
	     * 91, and the 92nd sample is below again with no improvement over
	     * the window: converged, for good. */
	    {"an accuracy that hits its ceiling slows after a window of flat samples, then "
	     "converges",
	     MIG_KIND_ACCURACY, ceiling, 150, 1e-4, 0, "2u 88p 1s 59c"},
	    {"evaluation noise below alpha x the expected change neither delays it nor brings it "
	     "back once the ring holds nothing but the plateau",
	     MIG_KIND_ACCURACY, ceiling, 400, 1e-4, 2e-4, "2u 88p 1s 309c"},
	    {"an accuracy saturating exponentially slows once its change per report is below the "
	     "reported resolution",
	     MIG_KIND_ACCURACY, saturate, 250, 1e-4, 0, "2u 173p 2s 73c"},
	    {"a noisy rising accuracy (many reports go down) never flaps", MIG_KIND_ACCURACY,
	     linear, 200, 1e-4, 0.006, "2u 198p"},
	    {"noisier still, for longer, it never flaps", MIG_KIND_ACCURACY, linear, 400, 1e-4,
	     0.01, "2u 398p"},
	    {"an accuracy converged from the start slows after a window and converges the sample "
	     "after",
	     MIG_KIND_ACCURACY, flat_acc, 40, 1e-4, 0, "2u 8p 1s 29c"},
	    {"a loss converged from the start does the same", MIG_KIND_LOSS, flat_loss, 40, 1e-4, 0,
	     "2u 8p 1s 29c"},
	    {"a loss decaying exponentially, printed to 3 decimals, slows and converges",
	     MIG_KIND_LOSS, loss_exp, 200, 1e-3, 0, "2u 116p 1s 81c"},
	    {"a loss falling steadily to a floor slows a window after it lands and converges",
	     MIG_KIND_LOSS, loss_floor, 150, 1e-3, 0, "2u 60p 1s 87c"},
	    {"a loss that goes up is no progress: it slows and converges", MIG_KIND_LOSS, loss_up,
	     30, 1e-3, 0, "2u 8p 1s 19c"},
	};
	int failed = 0;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char got[256];
		classes(&cases[i], got, sizeof(got));
		if (strcmp(got, cases[i].want) != 0) {
			print_error("%s: got \"%s\", want \"%s\"\n", cases[i].name, got,
			            cases[i].want);
			failed++;
		}
	}
	assert_int_equal(failed, 0);
}

static double acc_saturate(double t)
{
	return saturate(t);
}
static double loss_mirror(double t)
{
	return 1 - saturate(t);
}

static void a_loss_is_judged_as_the_mirror_of_an_accuracy(void **state)
{
	const struct curve acc = {"acc", MIG_KIND_ACCURACY, acc_saturate, 250, 1e-4, 0, ""};
	const struct curve loss = {"loss", MIG_KIND_LOSS, loss_mirror, 250, 1e-4, 0, ""};
	char a[256], l[256];
	assert_string_equal(classes(&acc, a, sizeof(a)), classes(&loss, l, sizeof(l)));
	/* and read as an accuracy, the falling curve is no progress at all */
	const struct curve wrong = {"wrong", MIG_KIND_ACCURACY, loss_mirror, 250, 1e-4, 0, ""};
	assert_string_equal(classes(&wrong, a, sizeof(a)), "2u 8p 1s 239c");
}

/* Feeds rates (per second, better direction) as an accuracy from 0. */
struct feed {
	struct mig_progress p;
	double t, v;
};

static void feed_init(struct feed *f)
{
	mig_progress_init(&f->p, MIG_KIND_ACCURACY, 0);
	f->t = 0;
	f->v = 0;
	struct mig_sample s = {0, 0, 0};
	assert_int_equal(mig_progress_add(&f->p, &s, NULL, NULL, 0), DRAKE_OK);
}

static enum mig_class feed(struct feed *f, double rate, int times)
{
	for (int i = 0; i < times; i++) {
		f->t += DT;
		f->v += rate * DT;
		struct mig_sample s = {f->t, 0, f->v};
		assert_int_equal(mig_progress_add(&f->p, &s, NULL, NULL, 0), DRAKE_OK);
	}
	return f->p.cls;
}

static void slowing_returns_to_progressing_only_after_three_samples_above(void **state)
{
	struct feed f;
	feed_init(&f);
	/* a slow start, then fast: the early rate is the slow one, so a later
	 * slowdown to 4e-4/s is below alpha x E but not converged */
	feed(&f, 1e-4, 10);
	assert_int_equal(feed(&f, 1e-2, 30), MIG_CLASS_PROGRESSING);
	assert_int_equal(feed(&f, 4e-4, 9), MIG_CLASS_PROGRESSING); /* 9 of the window */
	assert_int_equal(feed(&f, 4e-4, 1), MIG_CLASS_SLOWING);
	assert_int_equal(f.p.below, 10);
	assert_int_equal(feed(&f, 0.05, 2), MIG_CLASS_SLOWING); /* two above: not yet */
	assert_int_equal(f.p.above, 2);
	assert_int_equal(feed(&f, 4e-4, 1), MIG_CLASS_SLOWING); /* the run is broken */
	assert_int_equal(feed(&f, 0.05, 2), MIG_CLASS_SLOWING);
	assert_int_equal(feed(&f, 0.05, 1), MIG_CLASS_PROGRESSING); /* the third in a row */
	assert_int_equal(MIG_PROGRESS_RECOVER, 3);
}

static void a_converged_job_that_resumes_is_progressing_again(void **state)
{
	struct feed f;
	feed_init(&f);
	feed(&f, 1e-3, 80);
	assert_int_equal(feed(&f, 0, 70), MIG_CLASS_CONVERGED);
	/* a learning-rate drop: the first fast interval has nothing to be fitted
	 * with (the ring's other rates are all zero), the next three are at
	 * or above E */
	assert_int_equal(feed(&f, 2e-3, 3), MIG_CLASS_CONVERGED);
	assert_int_equal(feed(&f, 2e-3, 1), MIG_CLASS_PROGRESSING);
}

static void a_plateau_that_creeps_up_stays_converged_until_it_truly_resumes(void **state)
{
	struct feed f;
	feed_init(&f);
	feed(&f, 1e-3, 80);
	assert_int_equal(feed(&f, 0, 70), MIG_CLASS_CONVERGED);
	/* one evaluation image more every report: above E (fitted to those very
	 * rises), but the window's improvement is nothing next to the early rate */
	assert_int_equal(feed(&f, 1e-5, 6), MIG_CLASS_CONVERGED);
	assert_true(f.p.above >= MIG_PROGRESS_RECOVER);
	feed(&f, 0, 5);
	/* then a true resume: E is clamped to the rates it was fitted to, so
	 * the line through 1e-5 and 2e-3 extrapolating growth does not hide it */
	assert_int_equal(feed(&f, 2e-3, 2), MIG_CLASS_CONVERGED);
	assert_int_equal(feed(&f, 2e-3, 1), MIG_CLASS_PROGRESSING);
	assert_true(mig_progress_expected(&f.p) <= 2e-3 * (1 + 1e-9));
}

/* The fit the header describes, computed independently (uncentred normal
 * equations over the samples kept, the latest MIG_RING). */
static double reference_log_e(const struct mig_sample *s, size_t n)
{
	size_t from = n > MIG_RING ? n - MIG_RING : 0;
	double sx = 0, sy = 0, sxx = 0, sxy = 0, lo = INFINITY, hi = -INFINITY;
	int k = 0;
	for (size_t i = from + 1; i < n; i++) {
		double r = (s[i].value - s[i - 1].value) / (s[i].t - s[i - 1].t);
		if (r <= 0)
			continue;
		double x = 0.5 * (s[i].t + s[i - 1].t), y = log(r);
		sx += x;
		sy += y;
		sxx += x * x;
		sxy += x * y;
		lo = fmin(lo, y);
		hi = fmax(hi, y);
		k++;
	}
	double b = (k * sxy - sx * sy) / (k * sxx - sx * sx);
	double a = (sy - b * sx) / k;
	double y = a + b * 0.5 * (s[n - 1].t + s[n - 2].t);
	return fmin(fmax(y, lo), hi);
}

static void the_fit_runs_on_every_sample_not_once(void **state)
{
	/* The fork's regression library answered only the first Run(), at the
	 * third sample; every later expectation was 0. Here E follows the
	 * curve on every sample, over the latest MIG_RING samples. */
	enum { N = 150 };
	static struct mig_sample s[N];
	struct mig_progress p;
	mig_progress_init(&p, MIG_KIND_ACCURACY, 0);
	double prev = -1;
	int changed = 0;
	for (int i = 0; i < N; i++) {
		double t = 5 + i * 7.0;
		s[i] = (struct mig_sample){t, i, 0.9 * (1 - exp(-t / 300)) + 0.01 * sin(i)};
		assert_int_equal(mig_progress_add(&p, &s[i], NULL, NULL, 0), DRAKE_OK);
		if (i < 2) {
			assert_false(p.fitted);
			continue;
		}
		if (!p.fitted)
			continue;
		double want = reference_log_e(s, (size_t)i + 1);
		if (fabs(p.log_expected - want) > 1e-6 * fmax(1, fabs(want)))
			fail_msg("sample %d: ln E %.12g, the reference fit says %.12g", i,
			         p.log_expected, want);
		changed += mig_progress_expected(&p) != prev;
		prev = mig_progress_expected(&p);
	}
	assert_int_equal(p.fits, N - 2); /* every rate here is positive */
	assert_true(changed > N - 10);
	assert_int_equal(p.n, MIG_RING);
	assert_int_equal(p.samples, N);
}

static void the_ring_keeps_the_latest_samples_oldest_first(void **state)
{
	struct mig_progress p;
	mig_progress_init(&p, MIG_KIND_LOSS, 0);
	for (int i = 0; i < 100; i++) {
		struct mig_sample s = {i, i, 10 - i * 0.01};
		assert_int_equal(mig_progress_add(&p, &s, NULL, NULL, 0), DRAKE_OK);
	}
	assert_int_equal(p.n, MIG_RING);
	assert_true(p.ring[p.head].t == 100 - MIG_RING);
	assert_true(p.ring[(p.head + MIG_RING - 1) % MIG_RING].t == 99);
}

static void bad_samples_are_refused_and_change_nothing(void **state)
{
	static const struct {
		const char *name;
		struct mig_sample s;
		const char *why;
	} cases[] = {
	    {"a NaN value", {20, 5, NAN}, "finite"},
	    {"an infinite value", {20, 5, INFINITY}, "finite"},
	    {"a NaN time", {NAN, 5, 0.5}, "finite"},
	    {"t going backwards", {-1, 5, 0.5}, "goes backwards (the latest sample is at 0)"},
	    {"t not advancing", {0, 5, 0.5}, "does not advance"},
	    {"a negative step", {20, -1, 0.5}, "step -1 is negative"},
	    {"a step beyond the job's steps",
	     {20, 1001, 0.5},
	     "step 1001 is beyond the job's 1000"},
	    {"a value beyond the limit", {20, 5, 2e15}, "beyond"},
	    {"a time beyond the limit", {2e12, 5, 0.5}, "beyond"},
	    {"a change too steep to rate", {1e-300, 5, 1e15}, "too steep"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct mig_progress p, before;
		mig_progress_init(&p, MIG_KIND_ACCURACY, 1000);
		for (int k = 0; k <= 10; k += 5) {
			struct mig_sample s = {k - 10, k, 0.1 * k};
			assert_int_equal(mig_progress_add(&p, &s, NULL, NULL, 0), DRAKE_OK);
		}
		before = p;
		char why[160] = "";
		drake_err err = mig_progress_add(&p, &cases[i].s, NULL, why, sizeof(why));
		if (err != DRAKE_EINVAL || !strstr(why, cases[i].why))
			fail_msg("%s: got %s \"%s\", want EINVAL \"%s\"", cases[i].name,
			         drake_strerror(err), why, cases[i].why);
		if (memcmp(&p, &before, sizeof(p)) != 0)
			fail_msg("%s: the progress changed", cases[i].name);
	}
}

static void options_out_of_range_are_refused_and_null_means_the_defaults(void **state)
{
	struct mig_progress_opts o;
	mig_progress_defaults(&o);
	assert_true(o.alpha == 0.1);
	assert_int_equal(o.window, 10);
	char why[128];
	struct mig_progress_opts bad[] = {{0, 10}, {1.5, 10}, {NAN, 10}, {0.1, 0}, {0.1, MIG_RING}};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct mig_progress p;
		mig_progress_init(&p, MIG_KIND_ACCURACY, 0);
		struct mig_sample s = {0, 0, 0};
		assert_int_equal(mig_progress_add(&p, &s, &bad[i], why, sizeof(why)), DRAKE_EINVAL);
		assert_int_equal(p.samples, 0);
	}
	assert_non_null(strstr(why, "window 64 is outside [1, 63]"));
	/* NULL and the defaults decide alike */
	struct mig_progress a, b;
	mig_progress_init(&a, MIG_KIND_ACCURACY, 0);
	mig_progress_init(&b, MIG_KIND_ACCURACY, 0);
	for (int i = 0; i < 50; i++) {
		struct mig_sample s = {i * DT, i, ceiling(i * 25.0)};
		assert_int_equal(mig_progress_add(&a, &s, NULL, NULL, 0), DRAKE_OK);
		assert_int_equal(mig_progress_add(&b, &s, &o, NULL, 0), DRAKE_OK);
	}
	assert_int_equal(memcmp(&a, &b, sizeof(a)), 0);
	assert_int_equal(a.cls, MIG_CLASS_CONVERGED);
}

static void a_smaller_window_slows_sooner(void **state)
{
	struct mig_progress_opts o = {0.1, 3};
	struct mig_progress p;
	mig_progress_init(&p, MIG_KIND_ACCURACY, 0);
	const char *want = "uupppppsccc"; /* 3 rising intervals, then flat */
	for (int i = 0; i < 11; i++) {
		struct mig_sample s = {i * DT, i, i < 5 ? 0.1 * i : 0.4};
		assert_int_equal(mig_progress_add(&p, &s, &o, NULL, 0), DRAKE_OK);
		if (mig_class_name(p.cls)[0] != want[i])
			fail_msg("sample %d: %s, want %c", i + 1, mig_class_name(p.cls), want[i]);
	}
}

static void the_fraction_is_the_latest_step_of_the_total(void **state)
{
	struct mig_progress p;
	mig_progress_init(&p, MIG_KIND_ACCURACY, 0);
	struct mig_sample s = {0, 500, 0.1};
	assert_int_equal(mig_progress_add(&p, &s, NULL, NULL, 0), DRAKE_OK);
	assert_true(mig_progress_fraction(&p) == -1); /* total unknown */

	mig_progress_init(&p, MIG_KIND_ACCURACY, 1000);
	assert_true(mig_progress_fraction(&p) == -1); /* nothing reported yet */
	assert_int_equal(mig_progress_add(&p, &s, NULL, NULL, 0), DRAKE_OK);
	assert_true(mig_progress_fraction(&p) == 0.5);
	s = (struct mig_sample){1, 1000, 0.2};
	assert_int_equal(mig_progress_add(&p, &s, NULL, NULL, 0), DRAKE_OK);
	assert_true(mig_progress_fraction(&p) == 1);
	s = (struct mig_sample){2, 400, 0.2}; /* a PS restored from a checkpoint */
	assert_int_equal(mig_progress_add(&p, &s, NULL, NULL, 0), DRAKE_OK);
	assert_true(mig_progress_fraction(&p) == 0.4);

	mig_progress_init(&p, MIG_KIND_ACCURACY, -5);
	assert_int_equal(p.total_steps, 0);
}

static void classes_have_names(void **state)
{
	assert_string_equal(mig_class_name(MIG_CLASS_UNKNOWN), "unknown");
	assert_string_equal(mig_class_name(MIG_CLASS_PROGRESSING), "progressing");
	assert_string_equal(mig_class_name(MIG_CLASS_SLOWING), "slowing");
	assert_string_equal(mig_class_name(MIG_CLASS_CONVERGED), "converged");
	assert_true(mig_progress_expected(&(struct mig_progress){0}) == -1);
}

/* The one slow rule, which migration (migrate/step.h) and scaling
 * (gang/scale.h, through the adapters) both read. */
static void slowing_and_converged_jobs_are_slow_and_no_other(void **state)
{
	static const struct {
		enum mig_class cls;
		bool slow;
	} table[] = {
	    {MIG_CLASS_UNKNOWN, false},
	    {MIG_CLASS_PROGRESSING, false},
	    {MIG_CLASS_SLOWING, true},
	    {MIG_CLASS_CONVERGED, true},
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		struct mig_progress p;
		mig_progress_init(&p, MIG_KIND_ACCURACY, 0);
		p.cls = table[i].cls;
		if (mig_class_slow(table[i].cls) != table[i].slow ||
		    mig_progress_slow(&p) != table[i].slow)
			fail_msg("%s: slow %d, want %d", mig_class_name(table[i].cls),
			         mig_class_slow(table[i].cls), table[i].slow);
	}
	assert_false(mig_progress_slow(NULL)); /* no progress kept */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(recorded_curves_get_the_classes_a_user_expects),
	    cmocka_unit_test(a_loss_is_judged_as_the_mirror_of_an_accuracy),
	    cmocka_unit_test(slowing_returns_to_progressing_only_after_three_samples_above),
	    cmocka_unit_test(a_converged_job_that_resumes_is_progressing_again),
	    cmocka_unit_test(a_plateau_that_creeps_up_stays_converged_until_it_truly_resumes),
	    cmocka_unit_test(the_fit_runs_on_every_sample_not_once),
	    cmocka_unit_test(the_ring_keeps_the_latest_samples_oldest_first),
	    cmocka_unit_test(bad_samples_are_refused_and_change_nothing),
	    cmocka_unit_test(options_out_of_range_are_refused_and_null_means_the_defaults),
	    cmocka_unit_test(a_smaller_window_slows_sooner),
	    cmocka_unit_test(the_fraction_is_the_latest_step_of_the_total),
	    cmocka_unit_test(classes_have_names),
	    cmocka_unit_test(slowing_and_converged_jobs_are_slow_and_no_other),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
