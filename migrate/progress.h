/*
 * progress.h - how a training job is progressing, from the metric its
 * workers report (SpeCon's slow-growing test, with the container-migration
 * fork's defect fixed: the fit runs on every sample, not once).
 *
 * A job reports samples (t seconds, global step, metric value). With
 * d = +1 for an accuracy (higher is better) and d = -1 for a loss, the
 * observed improvement rate of the interval between consecutive samples
 * i-1 and i is
 *
 *     r_i = d * (v_i - v_{i-1}) / (t_i - t_{i-1})        (per second)
 *
 * Expectation. Learning is modelled as exponential decay of that rate,
 * r(t) = R0 * exp(-lambda * t), so ln r is linear in t. On EVERY sample,
 * ordinary least squares (closed form, centred sums) fits
 *
 *     ln r_i = a + b * (m_i - m_n)
 *
 * over the intervals in the ring whose r_i > 0 (ln needs a positive rate;
 * a rate <= 0 is no improvement at all, which is below any expectation
 * anyway), where m_i is interval i's midpoint and m_n the latest one;
 * b = -lambda. The expected rate now is E = exp(a), clamped to the range
 * of the rates fitted, [min r_i, max r_i], and kept as ln E so nothing
 * overflows. The clamp matters at a change of regime: a line through a
 * plateau's tiny rates and a learning-rate drop's fast ones extrapolates
 * growth the job never showed, and a job that truly resumed would stay
 * below that for a whole ring. A fit needs 2 positive rates; without one
 * there is no E.
 *
 * Per sample with a rate (the second sample on):
 *   below  r_n <= 0, or a fit exists and r_n < alpha * E
 *          (the sample counts toward slowing);
 *   above  a fit exists and r_n >= E (back at or above the expectation).
 * `below` and `above` count consecutive such samples (each run resets on a
 * sample that is not one).
 *
 * Early rate R_early: the job's mean rate over its first `window`
 * intervals, d * (v_w - v_0) / (t_w - t_0) with w = window, at least 0;
 * frozen once the job has had window + 1 samples.
 * Window rate R_win: the mean rate over the latest `window` intervals (or
 * as many as the ring holds), d * (v_n - v_{n-w}) / (t_n - t_{n-w}).
 * Converged condition C:
 *     (a fit exists and E < alpha * R_early)   the fitted rate has fallen
 *                                              below alpha of the early one,
 *     or R_win <= alpha * R_early              the improvement is ~zero (a
 *                                              flat metric: R_win <= 0).
 *
 * Classes, one transition at most per sample:
 *   fewer than 3 samples                          UNKNOWN
 *   UNKNOWN, PROGRESSING -> SLOWING      when below >= window
 *   SLOWING -> PROGRESSING               when above >= MIG_PROGRESS_RECOVER
 *   SLOWING -> CONVERGED                 when this sample is below and C
 *   CONVERGED -> PROGRESSING             when above >= MIG_PROGRESS_RECOVER
 *                                        and R_win > alpha * R_early
 *   otherwise the class stays (UNKNOWN becomes PROGRESSING at 3 samples).
 *
 * Hysteresis: MIG_PROGRESS_RECOVER = 3 consecutive samples at or above the
 * expectation (four samples improving at the expected pace) to leave
 * SLOWING or CONVERGED. One sample could be a lucky evaluation, and
 * SLOWING is what the scheduler acts on (the job's workers yield), so
 * flipping back on one sample would take capacity away and give it back
 * on noise. Three, not `window`: entering SLOWING costs the job capacity
 * and needs a whole window of evidence; leaving it only stops that, and a
 * job that truly resumes (a learning-rate drop) should not wait a whole
 * window. CONVERGED also needs the window's net improvement back above
 * alpha * R_early, so a plateau whose metric happens to rise three times in
 * a row stays converged.
 *
 * Known limits of the rule (by construction, not bugs):
 *   - it is relative to the job's own trend: a job that keeps exactly to
 *     its exponential decay is never below it, however slow it gets, until
 *     its per-interval change drops below the metric's resolution (a
 *     reported accuracy is a fraction of an evaluation set, a loss is
 *     printed with a few decimals): then intervals with no change are
 *     below and the job slows and converges;
 *   - the streak is of consecutive samples, so a metric that rises as
 *     often as it falls (noise larger than alpha * E per interval) never
 *     makes `window` of them: jobs should report an evaluation over a
 *     fixed set, or a smoothed metric, not a per-batch accuracy (the
 *     fork's 16-image batch was pure noise at its plateau).
 *
 * Pure and fixed-size: the struct is the caller's; nothing allocates.
 */
#ifndef DRAKE_MIGRATE_PROGRESS_H
#define DRAKE_MIGRATE_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

#define MIG_RING             64
#define MIG_PROGRESS_RECOVER 3    /* samples at or above E that leave SLOWING/CONVERGED */
#define MIG_VALUE_MAX        1e15 /* |value| above this is refused */
#define MIG_TIME_MAX         1e12 /* |t| above this (31,000 years) is refused */

enum mig_kind { MIG_KIND_ACCURACY, MIG_KIND_LOSS }; /* higher is better / lower is better */
enum mig_class { MIG_CLASS_UNKNOWN, MIG_CLASS_PROGRESSING, MIG_CLASS_SLOWING, MIG_CLASS_CONVERGED };

struct mig_sample {
	double t; /* seconds, strictly increasing per job */
	int64_t step;
	double value;
};

/* alpha in (0, 1], window in [1, MIG_RING - 1]. */
struct mig_progress_opts {
	double alpha;
	int window;
};

/* One job's progress, fixed memory: a ring of its latest samples,
 * ring[(head + k) % MIG_RING] for k in [0, n), oldest first. */
struct mig_progress {
	enum mig_kind kind;
	int64_t total_steps; /* 0: unknown */
	struct mig_sample ring[MIG_RING];
	size_t head, n;
	enum mig_class cls;

	int64_t samples;     /* accepted since init (the ring keeps the latest MIG_RING) */
	double rate;         /* r_n, the latest interval's rate (0 before 2 samples) */
	bool fitted;         /* a fit exists: log_expected and slope mean something */
	double log_expected; /* ln E at the latest interval's midpoint */
	double slope;        /* b: d ln(rate) / dt, per second (-lambda) */
	double early;        /* R_early, >= 0 */
	double window_rate;  /* R_win */
	int below, above;    /* consecutive samples below alpha * E / at or above E */
	int64_t fits;        /* least-squares fits run so far (one per sample that has one) */
};

void mig_progress_defaults(struct mig_progress_opts *o);

/* Checks o as mig_progress_add does: EINVAL with why when out of range. */
drake_err mig_progress_opts_check(const struct mig_progress_opts *o, char *why,
                                  size_t len) DRAKE_MUST_CHECK;

/* total_steps <= 0 means unknown. */
void mig_progress_init(struct mig_progress *p, enum mig_kind kind, int64_t total_steps);

/*
 * Adds one sample, refits, reclassifies. EINVAL with why (and nothing
 * changed) for NaN/inf values or times, |value| > MIG_VALUE_MAX,
 * |t| > MIG_TIME_MAX, t going backwards or not advancing (a rate needs
 * time to pass), a negative step, a step beyond total_steps, a change too
 * steep to rate as a finite number, or options out of range. o NULL means
 * the defaults.
 */
drake_err mig_progress_add(struct mig_progress *p, const struct mig_sample *s,
                           const struct mig_progress_opts *o, char *why,
                           size_t len) DRAKE_MUST_CHECK;

/* The latest step / total_steps in [0,1], or -1 when total_steps is
 * unknown (or no sample has come yet). */
double mig_progress_fraction(const struct mig_progress *p);

/* E, the fitted expected rate now (per second), or -1 without a fit. */
double mig_progress_expected(const struct mig_progress *p);

/* "unknown", "progressing", "slowing", "converged". */
const char *mig_class_name(enum mig_class c);

/*
 * The one "slow" rule: a job whose progress is SLOWING or CONVERGED is
 * slow, and a slow job yields (its workers move first for a waiting job,
 * migrate/step.h; it shrinks first and grows last, gang/scale.h). UNKNOWN
 * is not slow: a job that has not reported enough yields nothing.
 */
bool mig_class_slow(enum mig_class c);

/* mig_class_slow of p's class; false for NULL (no progress kept). */
bool mig_progress_slow(const struct mig_progress *p);

#endif
