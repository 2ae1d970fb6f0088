/*
 * pollux_model.c - a Pollux job's work and iteration time from its
 * application's measurements (see pollux_model.h).
 */
#include "sim/pollux_model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double lerp(double a, double b, double w)
{
	return a + w * (b - a);
}

/* step and sync at local batch b among n points from base, `stride` bytes
 * apart, sorted by local_bsz: linear between the two around b, the nearest
 * outside. */
static void along_bsz(const void *base, size_t stride, size_t n, double b, double *step,
                      double *sync)
{
#define PT(i) ((const struct sim_papp_point *)((const char *)base + (i)*stride))
	const struct sim_papp_point *p = PT(0);
	if (n > 1 && b >= PT(n - 1)->local_bsz) {
		p = PT(n - 1);
	} else if (n > 1 && b > p->local_bsz) {
		size_t i = 1;
		while (PT(i)->local_bsz < b)
			i++;
		const struct sim_papp_point *x = PT(i - 1), *y = PT(i);
		double w = (b - x->local_bsz) / (y->local_bsz - x->local_bsz);
		*step = lerp(x->step, y->step, w);
		*sync = lerp(x->sync, y->sync, w);
		return;
	}
	*step = p->step;
	*sync = p->sync;
#undef PT
}

/* The measured replica counts at `nodes` around rr: lo <= rr <= hi (the
 * nearest when rr is outside); 0 when nothing is measured at nodes. */
static int replicas_around(const struct sim_papp *a, int nodes, double rr, int *lo, int *hi)
{
	*lo = *hi = 0;
	int first = 0, last = 0;
	for (size_t i = 0; i < a->n_pt; i++) {
		const struct sim_papp_point *p = &a->pt[i];
		if (p->nodes != nodes)
			continue;
		if (!first)
			first = p->replicas;
		last = p->replicas;
		if (p->replicas <= rr)
			*lo = p->replicas;
		if (p->replicas >= rr && !*hi)
			*hi = p->replicas;
	}
	if (!first)
		return 0;
	if (!*lo)
		*lo = first;
	if (!*hi)
		*hi = last;
	return 1;
}

/* The points of (nodes, replicas), interpolated at local batch b. */
static void at_group(const struct sim_papp *a, int nodes, int replicas, double b, double *step,
                     double *sync)
{
	size_t i = 0;
	while (i < a->n_pt && (a->pt[i].nodes != nodes || a->pt[i].replicas != replicas))
		i++;
	size_t k = i;
	while (k < a->n_pt && a->pt[k].nodes == nodes && a->pt[k].replicas == replicas)
		k++;
	along_bsz(a->pt + i, sizeof(*a->pt), k - i, b, step, sync);
}

/* At a measured node count: linear in replicas, rr = replicas wanted. */
static void at_nodes(const struct sim_papp *a, int nodes, double rr, double b, double *step,
                     double *sync)
{
	int lo, hi;
	replicas_around(a, nodes, rr, &lo, &hi);
	double s0, y0, s1, y1;
	at_group(a, nodes, lo, b, &s0, &y0);
	if (hi == lo) {
		*step = s0;
		*sync = y0;
		return;
	}
	at_group(a, nodes, hi, b, &s1, &y1);
	double w = (rr - lo) / (double)(hi - lo);
	*step = lerp(s0, s1, w);
	*sync = lerp(y0, y1, w);
}

static void by_table(const struct sim_papp *a, int nodes, int replicas, double b, double *step,
                     double *sync)
{
	if (nodes > SIM_PAPP_MAX_NODES)
		nodes = SIM_PAPP_MAX_NODES;
	double per_node = (double)replicas / nodes;
	/* the measured node counts around nodes (pt is sorted by nodes) */
	int lo = 0, hi = 0;
	for (size_t i = 0; i < a->n_pt; i++) {
		int m = a->pt[i].nodes;
		if (m <= nodes)
			lo = m;
		if (m >= nodes && !hi)
			hi = m;
	}
	if (!lo)
		lo = hi;
	if (!hi)
		hi = lo;
	double s0, y0;
	at_nodes(a, lo, per_node * lo, b, &s0, &y0);
	if (hi == lo) {
		*step = s0;
		*sync = y0;
		return;
	}
	double s1, y1;
	at_nodes(a, hi, per_node * hi, b, &s1, &y1);
	double w = (double)(nodes - lo) / (hi - lo);
	*step = lerp(s0, s1, w);
	*sync = lerp(y0, y1, w);
}

void sim_papp_throughput(const struct sim_papp *a, const int *per_node, int n, double local_bsz,
                         double *step, double *sync)
{
	char layout[SIM_PAPP_MAX_NODES + 1];
	int nodes = 0, replicas = 0;
	for (int i = 0; i < n; i++) {
		nodes += per_node[i] > 0;
		replicas += per_node[i] > 0 ? per_node[i] : 0;
	}
	if (sim_papp_layout(per_node, n, layout) > 0) {
		size_t i = 0;
		while (i < a->n_pl && strcmp(a->pl[i].layout, layout) < 0)
			i++;
		size_t k = i;
		while (k < a->n_pl && strcmp(a->pl[k].layout, layout) == 0)
			k++;
		if (k > i) {
			along_bsz(&a->pl[i].p, sizeof(*a->pl), k - i, local_bsz, step, sync);
			return;
		}
	}
	by_table(a, nodes, replicas, local_bsz, step, sync);
}

static int ceil_div(double x)
{
	return (int)ceil(x - 1e-8);
}

/* The artifact's update_local_bsz: at r replicas, the accumulation passes
 * beyond the first and the per-pass local batch for total batch `batch`. */
static void local_batch(const struct sim_papp *a, int r, int batch, int *accum, int *atomic)
{
	int init = a->curve[0].batch, max_batch = a->curve[a->n_curve - 1].batch;
	int local = ceil_div((double)batch / r);
	*accum = ceil_div(local / a->max_local_bsz) - 1;
	if (*accum < 0)
		*accum = 0;
	if (r == 1 && batch > init && *accum < 1)
		*accum = 1;
	*atomic = ceil_div((double)local / (*accum + 1));
	int cap = max_batch / (r * (*accum + 1));
	if (*atomic > cap)
		*atomic = cap;
	if (*atomic < 1)
		*atomic = 1;
}

double sim_papp_iter_time(const struct sim_papp *a, const int *per_node, int n, int batch)
{
	int r = 0;
	for (int i = 0; i < n; i++)
		r += per_node[i] > 0 ? per_node[i] : 0;
	if (r == 0 || a->n_curve == 0)
		return 0;
	int accum, atomic;
	local_batch(a, r, batch, &accum, &atomic);
	double step, sync;
	sim_papp_throughput(a, per_node, n, atomic, &step, &sync);
	return step + accum * (step - sync);
}

drake_err sim_papp_samples_work(const struct sim_papp *a, int batch, int replicas,
                                double *iterations)
{
	if (a->epochs < 1)
		return DRAKE_EINVAL;
	double *cum = malloc((size_t)a->epochs * sizeof(*cum));
	if (!cum)
		return DRAKE_ENOMEM;
	drake_err err = sim_papp_samples_cumulative(a, batch, replicas, cum);
	if (!err)
		*iterations = cum[a->epochs - 1];
	free(cum);
	return err;
}

drake_err sim_papp_samples_cumulative(const struct sim_papp *a, int batch, int replicas,
                                      double *cum)
{
	if (a->n_curve == 0 || a->epochs < 1 || replicas < 1 || batch < a->curve[0].batch ||
	    batch > a->curve[a->n_curve - 1].batch)
		return DRAKE_EINVAL;
	int accum, atomic;
	local_batch(a, replicas, batch, &accum, &atomic);
	double run = (double)replicas * atomic * (accum + 1);
	/* the curves around the batch it runs at (the nearest outside them) */
	size_t hi = 0;
	while (hi + 1 < a->n_curve && a->curve[hi].batch < run)
		hi++;
	size_t lo = hi > 0 && a->curve[hi].batch > run ? hi - 1 : hi;
	const struct sim_papp_curve *l = &a->curve[lo], *u = &a->curve[hi];
	double w = u->batch == l->batch ? 0 : (run - l->batch) / (u->batch - l->batch);
	if (w < 0)
		w = 0;
	double scale = run / a->curve[0].batch, done = 0, sum = 0;
	for (int e = 0; e < a->epochs; e++) {
		double target = INFINITY;
		for (size_t c = 0; c < a->n_curve; c++)
			if (a->curve[c].e[e].progress < target)
				target = a->curve[c].e[e].progress;
		double sqr = lerp(l->e[e].grad_sqr, u->e[e].grad_sqr, w);
		double var = lerp(l->e[e].grad_var, u->e[e].grad_var, w);
		double gain = (var + sqr) / (var / scale + sqr);
		if (!(gain > 0) || !isfinite(gain))
			return DRAKE_EINVAL;
		sum += (target - done) / gain;
		done = target;
		cum[e] = sum;
	}
	return DRAKE_OK;
}

double sim_papp_curve_iteration(const struct sim_papp *a, int batch, int epoch)
{
	if (a->n_curve == 0 || epoch < 0 || epoch >= a->epochs)
		return 0;
	size_t hi = 0;
	while (hi + 1 < a->n_curve && a->curve[hi].batch < batch)
		hi++;
	size_t lo = hi > 0 && a->curve[hi].batch > batch ? hi - 1 : hi;
	const struct sim_papp_curve *l = &a->curve[lo], *u = &a->curve[hi];
	double w = u->batch == l->batch ? 0 : (double)(batch - l->batch) / (u->batch - l->batch);
	return lerp(l->e[epoch].iteration, u->e[epoch].iteration, w < 0 ? 0 : w);
}

drake_err sim_papp_work(const struct sim_papp *a, int batch, double *iterations, double *metric)
{
	if (a->n_curve == 0 || a->epochs < 1 || batch < a->curve[0].batch ||
	    batch > a->curve[a->n_curve - 1].batch)
		return DRAKE_EINVAL;
	size_t e = (size_t)a->epochs - 1, hi = 0;
	while (a->curve[hi].batch < batch)
		hi++;
	const struct sim_papp_curve *u = &a->curve[hi], *l = hi ? &a->curve[hi - 1] : u;
	if (u->batch == batch || u == l) {
		*iterations = u->e[e].iteration;
		*metric = u->e[e].metric;
		return DRAKE_OK;
	}
	double w = (double)(batch - l->batch) / (u->batch - l->batch);
	*iterations = lerp(l->e[e].iteration, u->e[e].iteration, w);
	*metric = lerp(l->e[e].metric, u->e[e].metric, w);
	return DRAKE_OK;
}

int sim_papp_max_replicas(const struct sim_papp *a, int batch, int tuned)
{
	int r = 2 * tuned;
	while (r > tuned && (ceil_div((double)batch / r) < a->min_local_bsz || r > a->max_replicas))
		r--;
	return r;
}

double sim_papp_packed_iter_time(const struct sim_papp *a, int r, int node_gpus, int batch)
{
	int per[SIM_PAPP_MAX_REPLICAS], n = 0;
	if (node_gpus < 1)
		node_gpus = 1;
	for (int left = r; left > 0 && n < SIM_PAPP_MAX_REPLICAS; left -= node_gpus)
		per[n++] = left < node_gpus ? left : node_gpus;
	return sim_papp_iter_time(a, per, n, batch);
}

drake_err sim_pollux_bind(struct sim_trace *t, const char *file, const struct sim_papps *apps,
                          int node_gpus, char *msg, size_t mlen)
{
	for (size_t i = 0; i < t->n; i++) {
		struct sim_trace_job *j = &t->jobs[i];
		int k = sim_papps_find(apps, j->app);
		if (k < 0)
			return drake_errorf(DRAKE_EINVAL, msg, mlen,
			                    "%s:%zu: application \"%s\" has no measurements", file,
			                    j->line, j->app);
		const struct sim_papp *a = &apps->app[k];
		double iters, metric;
		if (sim_papp_work(a, j->batch_size, &iters, &metric))
			return drake_errorf(
			    DRAKE_EINVAL, msg, mlen,
			    "%s:%zu: batch_size %d is outside %s's validation curves "
			    "(%d to %d)",
			    file, j->line, j->batch_size, j->app, a->curve[0].batch,
			    a->curve[a->n_curve - 1].batch);
		if (j->replicas > a->max_replicas)
			return drake_errorf(
			    DRAKE_EINVAL, msg, mlen,
			    "%s:%zu: num_replicas %d is more than %s's measurements "
			    "cover (%d)",
			    file, j->line, j->replicas, j->app, a->max_replicas);
		double samples;
		if (sim_papp_samples_work(a, j->batch_size, j->replicas, &samples))
			return drake_errorf(DRAKE_EINVAL, msg, mlen,
			                    "%s:%zu: %s's gradient statistics give no positive "
			                    "efficiency at batch_size %d",
			                    file, j->line, j->app, j->batch_size);
		double sec =
		    samples * sim_papp_packed_iter_time(a, j->replicas, node_gpus, j->batch_size);
		if (!(sec < SIM_TRACE_MAX_SECONDS))
			return drake_errorf(DRAKE_ELIMIT, msg, mlen,
			                    "%s:%zu: the job would run %g s, more than %d", file,
			                    j->line, sec, SIM_TRACE_MAX_SECONDS);
		j->app_index = k;
		j->iterations = iters;
		j->samples = samples;
		j->max_replicas = sim_papp_max_replicas(a, j->batch_size, j->replicas);
		j->duration = (int64_t)ceil(sec);
		if (j->duration < 1)
			j->duration = 1;
	}
	return DRAKE_OK;
}

drake_err sim_papp_job_rate(const struct sim_papp *a, int batch, double samples,
                            const int *worker_node, int n, bool iterations, double *rate)
{
	*rate = 0;
	if (n <= 0)
		return DRAKE_OK;
	int *node = malloc((size_t)n * sizeof(int));
	int *per = malloc((size_t)n * sizeof(int));
	if (!node || !per) {
		free(node);
		free(per);
		return DRAKE_ENOMEM;
	}
	int used = 0;
	for (int i = 0; i < n; i++) {
		int k = 0;
		while (k < used && node[k] != worker_node[i])
			k++;
		if (k == used) {
			node[used] = worker_node[i];
			per[used++] = 0;
		}
		per[k]++;
	}
	double it = sim_papp_iter_time(a, per, used, batch);
	*rate = it > 0 ? 1.0 / it : 0;
	double w;
	if (!iterations && samples > 0 && sim_papp_samples_work(a, batch, n, &w) == DRAKE_OK &&
	    w > 0)
		*rate *= samples / w;
	free(node);
	free(per);
	return DRAKE_OK;
}
