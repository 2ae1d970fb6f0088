/*
 * sampling.c - learning-curve samples (sim/progress_model.h): every running
 * job reports one per grid point of cfg.curves.interval into its own
 * struct mig_progress, as replicas report to the controller.
 */
#include <math.h>
#include <stdio.h>

#include "sim/sim_internal.h"

/* Asks for the next grid point of progress samples after now, once. */
drake_err sim_schedule_sample(struct sim *s)
{
	const struct sim_curve_opts *o = &s->cfg->curves;
	if (!o->on || s->sample_pending)
		return DRAKE_OK;
	s->next_sample = (floor(s->now / o->interval) + 1) * o->interval;
	s->sample_pending = true;
	/* straight into the queue, not sim_wake_at: its table of pending
	 * wake-ups may be full, and a sample must not be dropped */
	return sim_evq_push(&s->q, (struct sim_ev){s->next_sample, 0, SIM_EV_WAKE, -1, 0});
}

/* The step job j is at: its fraction of work done, the rescale pauses it
 * was charged taken out (no step advances during a pause), times its
 * steps (1 per second of its trace duration), never below the step it
 * reported before. */
static int64_t job_step(struct sim_job *j, double now)
{
	sim_progress_to_now(j, now);
	double paused = j->work_total - j->work_orig;
	double f = j->work_orig > 0 ? (j->work_done - paused) / j->work_orig : 1;
	f = f < 0 ? 0 : f > 1 ? 1 : f;
	int64_t step = llround(f * (double)j->t->duration);
	return step > j->last_step ? step : j->last_step;
}

/* On a grid point: every running job reports a sample of its curve. */
drake_err sim_report_samples(struct sim *s, char *msg, size_t mlen)
{
	if (!s->sample_pending || s->now < s->next_sample)
		return DRAKE_OK;
	s->sample_pending = false;
	for (size_t i = 0; i < s->n_running; i++) {
		struct sim_job *j = &s->jobs[s->running[i]];
		if (!j->prog)
			continue;
		j->last_step = job_step(j, s->now);
		double f = (double)j->last_step / (double)j->t->duration;
		struct mig_sample smp = {s->now, j->last_step,
		                         sim_curve_report(&s->cfg->curves, &j->curve, f)};
		char why[DRAKE_WHY_MAX];
		drake_err err = mig_progress_add(j->prog, &smp, &s->cfg->prog, why, sizeof(why));
		if (err)
			return drake_errorf(err, msg, mlen, "job %s: progress sample: %s", j->t->id,
			                    why);
		if (mig_progress_slow(j->prog) && j->slow_at < 0)
			j->slow_at = f;
	}
	return s->n_running ? sim_schedule_sample(s) : DRAKE_OK;
}
