/*
 * result.c - a run's figures: JCT, queueing, makespan, utilisation, and the
 * split of jobs by learning curve.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_internal.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

drake_err sim_collect(struct sim *s, struct sim_result *r)
{
	r->jobs = s->n;
	r->never_fit = s->n_never;
	r->jct = malloc((s->n + 1) * sizeof(double));
	r->queue = malloc((s->n + 1) * sizeof(double));
	r->job_submit = malloc((s->n + 1) * sizeof(double));
	r->job_start = malloc((s->n + 1) * sizeof(double));
	r->job_finish = malloc((s->n + 1) * sizeof(double));
	r->job_gpus = malloc((s->n + 1) * sizeof(int));
	r->job_early = malloc((s->n + 1) * sizeof(bool));
	r->job_slow_at = malloc((s->n + 1) * sizeof(double));
	r->job_pauses = malloc((s->n + 1) * sizeof(int));
	if (!r->jct || !r->queue || !r->job_submit || !r->job_start || !r->job_finish ||
	    !r->job_gpus || !r->job_early || !r->job_slow_at || !r->job_pauses)
		return DRAKE_ENOMEM;
	double sum_jct = 0, sum_q = 0, useful = 0, sum_early = 0, sum_late = 0;
	r->first_submit = -1;
	for (size_t i = 0; i < s->n; i++) {
		const struct sim_job *j = &s->jobs[i];
		r->job_submit[i] = j->submit;
		r->job_start[i] = j->start;
		r->job_finish[i] = j->state == SIM_JOB_DONE ? j->finish : -1;
		r->job_gpus[i] = j->t->gpus;
		r->job_early[i] = j->curve.early;
		r->job_slow_at[i] = j->slow_at;
		r->job_pauses[i] = j->pauses;
		if (j->slow_at >= 0 && j->curve.early)
			r->flagged_early++;
		else if (j->slow_at >= 0)
			r->flagged_late++;
		if (!j->never_fits && (r->first_submit < 0 || j->submit < r->first_submit))
			r->first_submit = j->submit;
		r->ever_partial += j->ever_partial;
		if (j->state != SIM_JOB_DONE)
			continue;
		r->jct[r->finished] = j->finish - j->submit;
		r->queue[r->finished] = j->start - j->submit;
		sum_jct += r->jct[r->finished];
		if (j->curve.early) {
			sum_early += r->jct[r->finished];
			r->early_done++;
		} else {
			sum_late += r->jct[r->finished];
			r->late_done++;
		}
		useful += (double)j->t->duration * j->t->gpus;
		sum_q += r->queue[r->finished];
		if (j->finish > r->last_finish)
			r->last_finish = j->finish;
		r->finished++;
	}
	qsort(r->jct, r->finished, sizeof(double), cmp_double);
	if (r->finished) {
		r->mean_jct = sum_jct / (double)r->finished;
		r->mean_queue = sum_q / (double)r->finished;
		r->median_jct = r->jct[(r->finished - 1) / 2];
		r->mean_jct_early = r->early_done ? sum_early / (double)r->early_done : 0;
		r->mean_jct_late = r->late_done ? sum_late / (double)r->late_done : 0;
		size_t k = (size_t)ceil(0.95 * (double)r->finished);
		r->p95_jct = r->jct[k > 0 ? k - 1 : 0];
	}
	r->makespan = r->finished ? r->last_finish - r->first_submit : 0;
	r->total_gpus = s->c.alloc_total.gpu;
	if (r->makespan > 0 && r->total_gpus > 0) {
		r->gpu_util = s->busy_gpu_s / ((double)r->total_gpus * r->makespan);
		r->goodput_util = useful / ((double)r->total_gpus * r->makespan);
	}
	r->held_gpu_hours = s->held_gpu_s / 3600.0;
	r->deadlock_jobs = s->n - s->n_done - s->n_never;
	r->deadlocked = r->deadlock_jobs > 0;
	r->deadlock_gpus = s->held;
	r->scale_up_events = s->scale_up;
	r->scale_down_events = s->scale_down;
	r->moves = s->moves;
	r->preemptions = s->preemptions;
	r->samples = s->samples;
	r->n_samples = s->n_samples;
	s->samples = NULL;
	return DRAKE_OK;
}

void sim_result_release(struct sim_result *r)
{
	if (!r)
		return;
	free(r->jct);
	free(r->queue);
	free(r->samples);
	free(r->job_submit);
	free(r->job_start);
	free(r->job_finish);
	free(r->job_gpus);
	free(r->job_early);
	free(r->job_slow_at);
	free(r->job_pauses);
	const char *p = r->policy;
	memset(r, 0, sizeof(*r));
	r->policy = p;
}
