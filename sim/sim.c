/*
 * sim.c - the event loop, the job lifecycle and the actions policies call.
 * Metrics are integrated here, at every change, so no policy can forget to
 * account for what it did.
 */
#include "sim/sim.h"
#include "sim/sim_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "gang/admission.h"
#include "kind/registry.h"
#include "sim/pollux_model.h"

size_t sim_config_jobs(const struct sim_config *c, size_t n)
{
	return c->max_jobs && c->max_jobs < n ? c->max_jobs : n;
}

void sim_config_defaults(struct sim_config *c)
{
	memset(c, 0, sizeof(*c));
	c->nodes = 0;     /* by trace: sim_cluster_shape */
	c->node_gpus = 0; /* by trace */
	c->node_cpu_milli = 96000;
	c->node_mem_bytes = 768LL << 30;
	c->time_scale = 1.0;
	drake_las_defaults(&c->las);
	c->tiresias_interval = 60; /* simulator.py: --interval */
	c->tiresias_restart = 30;  /* simulator.py: Job.reallocate's rescale_time */
	drake_scale_defaults(&c->scale);
	c->seed = 1;
	sim_model_defaults(&c->model);
	sim_curve_defaults(&c->curves);
	mig_progress_defaults(&c->prog);
	c->progress_reports = true;
	c->history = true;
}

void sim_cluster_shape(const struct sim_config *c, enum sim_trace_kind kind, int *nodes,
                       int *node_gpus)
{
	*nodes = c->nodes > 0               ? c->nodes
	         : kind == SIM_TRACE_GANG   ? 32
	         : kind == SIM_TRACE_POLLUX ? 16
	                                    : 64;
	*node_gpus = c->node_gpus > 0 ? c->node_gpus : kind == SIM_TRACE_POLLUX ? 4 : 8;
}

const struct sim_config *sim_cfg(const struct sim *s)
{
	return s->cfg;
}
double sim_now(const struct sim *s)
{
	return s->now;
}
struct drake_cluster *sim_cluster(struct sim *s)
{
	return &s->c;
}
struct sim_job *sim_job(struct sim *s, int j)
{
	return &s->jobs[j];
}

const int *sim_waiting(const struct sim *s, size_t *n)
{
	*n = s->n_waiting;
	return s->waiting;
}

const int *sim_running(const struct sim *s, size_t *n)
{
	*n = s->n_running;
	return s->running;
}

const int *sim_arrived(const struct sim *s, size_t *n)
{
	*n = s->n_arrived;
	return s->arrived;
}

size_t sim_job_count(const struct sim *s)
{
	return s->n;
}

size_t sim_scale_count(const struct sim *s)
{
	return s->scale_up + s->scale_down;
}

uint64_t sim_rand(struct sim *s)
{
	/* splitmix64: small, fast, and the same everywhere */
	uint64_t z = (s->rng += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Integrates busy/held GPUs up to now and records a sample. */
static drake_err account(struct sim *s)
{
	double dt = s->now - s->last_acct;
	if (dt > 0) {
		s->busy_gpu_s += (double)s->busy * dt;
		s->held_gpu_s += (double)s->held * dt;
		s->last_acct = s->now;
	}
	if (s->n_samples > 0) {
		struct sim_sample *last = &s->samples[s->n_samples - 1];
		if (last->busy == s->busy && last->held == s->held)
			return DRAKE_OK;
		if (last->t == s->now) {
			last->busy = s->busy;
			last->held = s->held;
			return DRAKE_OK;
		}
	}
	if (s->n_samples == s->cap_samples) {
		size_t cap = s->cap_samples ? s->cap_samples * 2 : 4096;
		struct sim_sample *p = realloc(s->samples, cap * sizeof(*p));
		if (!p)
			return DRAKE_ENOMEM;
		s->samples = p;
		s->cap_samples = cap;
	}
	s->samples[s->n_samples++] = (struct sim_sample){s->now, s->busy, s->held};
	return DRAKE_OK;
}

void sim_progress_to_now(struct sim_job *j, double now)
{
	if (j->state == SIM_JOB_RUNNING && now > j->last_update) {
		j->service += (double)(j->req.worker.gpu * j->n_workers + j->req.ps.gpu * j->n_ps) *
		              (now - j->last_update);
		j->work_done += j->rate * (now - j->last_update);
		if (j->work_done > j->work_total)
			j->work_done = j->work_total;
	}
	j->last_update = now;
}

static int job_nodes(const struct sim_job *j)
{
	return drake_plan_count_nodes(j->ps_node, j->n_ps, j->worker_node, j->n_workers);
}

/* Work per second: the speed model's, or a Pollux job's measured rate. */
static drake_err job_rate(const struct sim *s, const struct sim_job *j, double *rate)
{
	if (j->app)
		return sim_papp_job_rate(j->app, j->t->batch_size, j->t->samples, j->worker_node,
		                         j->n_workers, s->cfg->model.pollux_iterations, rate);
	*rate = drake_speed_rate(&s->cfg->model.speed, j->n_workers, (int)j->req.worker.gpu,
	                         job_nodes(j));
	return DRAKE_OK;
}

static drake_err set_rate(struct sim *s, int ji)
{
	struct sim_job *j = &s->jobs[ji];
	drake_err err = job_rate(s, j, &j->rate);
	if (err)
		return err;
	j->gen++;
	if (j->rate <= 0)
		return DRAKE_OK; /* stalled: no finish until it gets workers back */
	double left = j->work_total - j->work_done;
	struct sim_ev ev = {s->now + (left > 0 ? left / j->rate : 0), 0, SIM_EV_FINISH, ji, j->gen};
	return sim_evq_push(&s->q, ev);
}

static void list_remove(int *a, size_t *n, int v)
{
	for (size_t i = 0; i < *n; i++) {
		if (a[i] == v) {
			memmove(&a[i], &a[i + 1], (*n - i - 1) * sizeof(int));
			(*n)--;
			return;
		}
	}
}

/* Room for n workers in the per-slot arrays (node, moves, moved_at). */
static drake_err ensure_workers(struct sim_job *j, int n)
{
	if (n <= j->cap_workers)
		return DRAKE_OK;
	int cap = n > 2 * j->cap_workers ? n : 2 * j->cap_workers;
	int *p = realloc(j->worker_node, (size_t)cap * sizeof(int));
	if (!p)
		return DRAKE_ENOMEM;
	j->worker_node = p;
	int *ix = realloc(j->worker_index, (size_t)cap * sizeof(int));
	if (!ix)
		return DRAKE_ENOMEM;
	j->worker_index = ix;
	int *m = realloc(j->moves, (size_t)cap * sizeof(int));
	if (!m)
		return DRAKE_ENOMEM;
	j->moves = m;
	double *at = realloc(j->moved_at, (size_t)cap * sizeof(double));
	if (!at)
		return DRAKE_ENOMEM;
	j->moved_at = at;
	j->cap_workers = cap;
	return DRAKE_OK;
}

/* Slots [from, to) are new workers: never moved. */
static void fresh_slots(struct sim_job *j, int from, int to)
{
	for (int i = from; i < to; i++) {
		j->moves[i] = 0;
		j->moved_at[i] = -1;
	}
}

static drake_err charge_pause(struct sim *s, int ji);

static drake_err begin_running(struct sim *s, int ji)
{
	struct sim_job *j = &s->jobs[ji];
	j->state = SIM_JOB_RUNNING;
	if (j->start < 0)
		j->start = s->now; /* a preempted job keeps its first start */
	j->last_scaled = s->now;
	j->last_update = s->now;
	list_remove(s->waiting, &s->n_waiting, ji);
	s->running[s->n_running++] = ji;
	s->busy += j->req.worker.gpu * j->n_workers;
	fresh_slots(j, 0, j->n_workers);
	drake_err err = sim_schedule_sample(s);
	if (!err)
		err = set_rate(s, ji);
	/* a Pollux job's every start, the first and each resume, costs a
	 * restart, under every policy (the artifact's reallocation cost) */
	if (!err && j->app)
		err = charge_pause(s, ji);
	return err;
}

drake_err sim_start(struct sim *s, int ji, const struct drake_plan *p)
{
	struct sim_job *j = &s->jobs[ji];
	if (j->state != SIM_JOB_WAITING || p->n_ps != j->req.n_ps)
		return DRAKE_ESTATE;
	if (ensure_workers(j, p->n_workers))
		return DRAKE_ENOMEM;
	j->n_ps = p->n_ps;
	memcpy(j->ps_node, p->ps_node, (size_t)p->n_ps * sizeof(int));
	j->n_workers = p->n_workers;
	memcpy(j->worker_node, p->worker_node, (size_t)p->n_workers * sizeof(int));
	for (int i = 0; i < p->n_workers; i++)
		j->worker_index[i] = i;
	s->changes++;
	drake_plan_charge(&s->c, &j->req, p, 1);
	return begin_running(s, ji);
}

drake_err sim_bind_pod(struct sim *s, int ji, bool ps, int node)
{
	struct sim_job *j = &s->jobs[ji];
	if (j->state != SIM_JOB_WAITING || (ps && j->n_ps >= j->req.n_ps) ||
	    (!ps && j->n_workers >= j->req.want_workers))
		return DRAKE_ESTATE;
	if (ps) {
		j->ps_node[j->n_ps++] = node;
		drake_cluster_charge(&s->c, (size_t)node, &j->req.ps, 1);
	} else {
		if (ensure_workers(j, j->n_workers + 1))
			return DRAKE_ENOMEM;
		j->worker_index[j->n_workers] = j->n_workers;
		j->worker_node[j->n_workers++] = node;
		drake_cluster_charge(&s->c, (size_t)node, &j->req.worker, 1);
		s->held += j->req.worker.gpu;
	}
	s->changes++;
	j->pods_bound++;
	if (j->pods_bound < j->req.n_ps + j->req.want_workers)
		return DRAKE_OK;
	s->held -= j->req.worker.gpu * j->n_workers;
	return begin_running(s, ji);
}

void sim_remove_worker(struct sim *s, int ji, int slot)
{
	struct sim_job *j = &s->jobs[ji];
	if (slot <= 0 || slot >= j->n_workers)
		return;
	sim_progress_to_now(j, s->now);
	drake_cluster_charge(&s->c, (size_t)j->worker_node[slot], &j->req.worker, -1);
	size_t after = (size_t)(j->n_workers - slot - 1);
	memmove(&j->worker_node[slot], &j->worker_node[slot + 1], after * sizeof(int));
	memmove(&j->worker_index[slot], &j->worker_index[slot + 1], after * sizeof(int));
	memmove(&j->moves[slot], &j->moves[slot + 1], after * sizeof(int));
	memmove(&j->moved_at[slot], &j->moved_at[slot + 1], after * sizeof(double));
	j->n_workers--;
	s->busy -= j->req.worker.gpu;
	s->changes++;
	s->scale_down++;
}

drake_err sim_add_worker(struct sim *s, int ji, int node)
{
	struct sim_job *j = &s->jobs[ji];
	if (j->state != SIM_JOB_RUNNING || j->n_workers >= j->max_workers)
		return DRAKE_ESTATE;
	if (ensure_workers(j, j->n_workers + 1))
		return DRAKE_ENOMEM;
	sim_progress_to_now(j, s->now);
	/* the lowest index free: slots are in index order, so the first slot
	 * whose index is not its position, or the end */
	int k = 0;
	while (k < j->n_workers && j->worker_index[k] == k)
		k++;
	size_t after = (size_t)(j->n_workers - k);
	memmove(&j->worker_node[k + 1], &j->worker_node[k], after * sizeof(int));
	memmove(&j->worker_index[k + 1], &j->worker_index[k], after * sizeof(int));
	memmove(&j->moves[k + 1], &j->moves[k], after * sizeof(int));
	memmove(&j->moved_at[k + 1], &j->moved_at[k], after * sizeof(double));
	j->n_workers++;
	fresh_slots(j, k, k + 1);
	j->worker_node[k] = node;
	j->worker_index[k] = k;
	drake_cluster_charge(&s->c, (size_t)node, &j->req.worker, 1);
	s->busy += j->req.worker.gpu;
	s->changes++;
	s->scale_up++;
	return DRAKE_OK;
}

/* A pause still running at now is cut short: the work of its part not yet
 * spent is taken back. */
static void give_back_pause(struct sim_job *j, double now)
{
	if (j->pause_end > now && j->pause_len > 0) {
		double unspent = j->pause_work * (j->pause_end - now) / j->pause_len;
		j->work_total -= unspent;
		if (j->work_total < j->work_done)
			j->work_total = j->work_done;
		j->pause_end = now;
	}
}

/* The job stops for the rescale pause: that much more work at its new rate.
 * A change while a pause still runs restarts it, as `make bench-replay`'s
 * driver does on the cluster (a job restarted by changes a second apart
 * stops about once): the part of the running pause not yet spent is taken
 * back before the new one is charged. So several rounds that shrink the
 * same job at one instant (DRAGON's one change per run) cost it one pause,
 * not one each. */
static drake_err charge_pause_of(struct sim *s, int ji, double pause)
{
	struct sim_job *j = &s->jobs[ji];
	sim_progress_to_now(j, s->now);
	give_back_pause(j, s->now);
	double r;
	drake_err err = job_rate(s, j, &r);
	if (err)
		return err;
	j->pause_work = pause * r;
	j->pause_len = pause;
	if (j->paused_at != s->now)
		j->pauses++;
	j->paused_at = s->now;
	j->pause_end = s->now + pause;
	j->work_total += j->pause_work;
	return set_rate(s, ji);
}

static drake_err charge_pause(struct sim *s, int ji)
{
	return charge_pause_of(s, ji, s->cfg->model.speed.rescale_pause);
}

drake_err sim_restart_pause(struct sim *s, int ji, double seconds)
{
	if (s->jobs[ji].state != SIM_JOB_RUNNING || !(seconds >= 0))
		return DRAKE_ESTATE;
	return charge_pause_of(s, ji, seconds);
}

drake_err sim_preempt(struct sim *s, int ji)
{
	struct sim_job *j = &s->jobs[ji];
	if (j->state != SIM_JOB_RUNNING)
		return DRAKE_ESTATE;
	sim_progress_to_now(j, s->now);
	give_back_pause(j, s->now);
	j->pause_end = s->now;
	for (int i = 0; i < j->n_ps; i++)
		drake_cluster_charge(&s->c, (size_t)j->ps_node[i], &j->req.ps, -1);
	for (int i = 0; i < j->n_workers; i++)
		drake_cluster_charge(&s->c, (size_t)j->worker_node[i], &j->req.worker, -1);
	s->busy -= j->req.worker.gpu * j->n_workers;
	j->n_ps = j->n_workers = 0;
	j->pods_bound = 0;
	j->rate = 0;
	j->gen++; /* its finish event is void */
	j->state = SIM_JOB_WAITING;
	j->preemptions++;
	list_remove(s->running, &s->n_running, ji);
	/* back into its FIFO place: submit time, then trace order */
	size_t at = s->n_waiting;
	while (at > 0) {
		const struct sim_job *w = &s->jobs[s->waiting[at - 1]];
		if (w->submit < j->submit || (w->submit == j->submit && s->waiting[at - 1] < ji))
			break;
		at--;
	}
	memmove(&s->waiting[at + 1], &s->waiting[at], (s->n_waiting - at) * sizeof(int));
	s->waiting[at] = ji;
	s->n_waiting++;
	s->changes++;
	s->preemptions++;
	return DRAKE_OK;
}

drake_err sim_rescaled(struct sim *s, int ji, bool grew)
{
	struct sim_job *j = &s->jobs[ji];
	j->scale_events++;
	j->last_scaled = s->now;
	return charge_pause_of(
	    s, ji, drake_speed_pause(&s->cfg->model.speed, grew ? j->cost.grow : j->cost.shrink));
}

drake_err sim_move_worker(struct sim *s, int ji, int slot, int node)
{
	struct sim_job *j = &s->jobs[ji];
	if (j->state != SIM_JOB_RUNNING || slot < 0 || slot >= j->n_workers || node < 0 ||
	    (size_t)node >= s->c.n || node == j->worker_node[slot])
		return DRAKE_ESTATE;
	sim_progress_to_now(j, s->now);
	drake_cluster_charge(&s->c, (size_t)j->worker_node[slot], &j->req.worker, -1);
	j->worker_node[slot] = node;
	drake_cluster_charge(&s->c, (size_t)node, &j->req.worker, 1);
	j->moves[slot]++;
	j->moved_at[slot] = s->now;
	s->changes++;
	s->moves++;
	return charge_pause(s, ji);
}

drake_err sim_wake_at(struct sim *s, double t)
{
	if (t < s->now)
		t = s->now;
	for (size_t i = 0; i < s->n_wakes; i++)
		if (s->wakes[i] == t)
			return DRAKE_OK;
	if (s->n_wakes == MAX_WAKES)
		return DRAKE_OK; /* enough pending wake-ups; the earliest will re-ask */
	s->wakes[s->n_wakes++] = t;
	return sim_evq_push(&s->q, (struct sim_ev){t, 0, SIM_EV_WAKE, -1, 0});
}

drake_err sim_every(struct sim *s, double interval, double *decided,
                    drake_err (*decide_now)(struct sim *s, void *arg), void *arg)
{
	double now = s->now, tick = ceil(now / interval) * interval;
	drake_err err = DRAKE_OK;
	if (tick == now && now > 0 && now != *decided) {
		*decided = now;
		err = decide_now(s, arg);
	}
	if (tick <= now)
		tick = now + interval; /* decided now, or time 0 */
	size_t nw, nr;
	sim_waiting(s, &nw);
	sim_running(s, &nr);
	if (!err && nw + nr > 0)
		err = sim_wake_at(s, tick);
	return err;
}

void sim_observe(struct sim *s, int ji, double interval)
{
	struct sim_job *j = &s->jobs[ji];
	if (!s->cfg->progress_reports || j->state != SIM_JOB_RUNNING || j->rate <= 0 ||
	    j->work_orig <= 0 || s->now - j->last_scaled < interval)
		return;
	drake_speed_obs_put(
	    j->obs, &j->n_obs,
	    (struct drake_speed_obs){j->n_workers, job_nodes(j), j->rate / j->work_orig});
}

int sim_worker_slot(const struct sim_job *j, int idx)
{
	for (int k = 0; k < j->n_workers; k++)
		if (j->worker_index[k] == idx)
			return k;
	return -1;
}

void sim_running_view(struct sim *s, int ji, struct drake_running_job *out)
{
	struct sim_job *j = &s->jobs[ji];
	sim_progress_to_now(j, s->now);
	*out = (struct drake_running_job){
	    .name = j->t->id,
	    .admitted = j->start,
	    .progress = -1,
	    .min_workers = j->req.min_workers,
	    .max_workers = j->max_workers,
	    .want_workers = j->req.want_workers,
	    .ps = j->req.ps,
	    .worker = j->req.worker,
	    .n_ps = j->n_ps,
	    .ps_node = j->ps_node,
	    .n_workers = j->n_workers,
	    .worker_node = j->worker_node,
	    .last_scaled = j->last_scaled,
	    .gave_to_waiting =
	        j->shrunk_for >= 0 && s->jobs[j->shrunk_for].state == SIM_JOB_WAITING,
	    .service = j->service,
	    .obs = j->obs,
	    .n_obs = j->n_obs,
	};
	if (!s->cfg->policy_blind)
		out->cost = j->cost;
	if (j->prog) {
		out->progress = mig_progress_fraction(j->prog);
		out->slow = mig_progress_slow(j->prog);
	} else if (s->cfg->progress_reports && j->work_total > 0) {
		/* the job reports its steps against its total */
		out->progress = j->work_done / j->work_total;
	}
}

static void finish(struct sim *s, int ji)
{
	struct sim_job *j = &s->jobs[ji];
	sim_progress_to_now(j, s->now);
	for (int i = 0; i < j->n_ps; i++)
		drake_cluster_charge(&s->c, (size_t)j->ps_node[i], &j->req.ps, -1);
	for (int i = 0; i < j->n_workers; i++)
		drake_cluster_charge(&s->c, (size_t)j->worker_node[i], &j->req.worker, -1);
	s->busy -= j->req.worker.gpu * j->n_workers;
	j->state = SIM_JOB_DONE;
	j->finish = s->now;
	list_remove(s->running, &s->n_running, ji);
	s->n_done++;
	drake_history_put(&s->history, j->service);
}

struct drake_history sim_history(const struct sim *s)
{
	if (!s->cfg->history)
		return (struct drake_history){0};
	return drake_history_of(&s->history);
}

static drake_err handle(struct sim *s, const struct sim_ev *ev)
{
	switch (ev->type) {
	case SIM_EV_ARRIVAL: {
		struct sim_job *j = &s->jobs[ev->job];
		j->state = SIM_JOB_WAITING;
		s->waiting[s->n_waiting++] = ev->job;
		s->arrived[s->n_arrived++] = ev->job;
		return DRAKE_OK;
	}
	case SIM_EV_FINISH:
		if (s->jobs[ev->job].state == SIM_JOB_RUNNING && s->jobs[ev->job].gen == ev->gen)
			finish(s, ev->job);
		return DRAKE_OK;
	case SIM_EV_WAKE:
		for (size_t i = 0; i < s->n_wakes; i++) {
			if (s->wakes[i] == ev->t) {
				s->wakes[i] = s->wakes[--s->n_wakes];
				break;
			}
		}
		return DRAKE_OK;
	}
	return DRAKE_OK;
}

/* Decisions at one instant that each changed something, at most: a policy
 * that never settles is stopped here and reported (sim_rounds_capped). */
#define SIM_ROUNDS_MAX 64

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static drake_err build_cluster(struct sim *s, struct sim_config *cfg, const struct sim_trace *t,
                               char *msg, size_t mlen)
{
	drake_err err;
	drake_cluster_init(&s->c);
	char name[64];
	int max_gpus = 0;
	if (cfg->node_list) {
		for (size_t i = 0; i < cfg->node_list->n; i++) {
			const struct sim_node_row *r = &cfg->node_list->rows[i];
			struct drake_res a = {0};
			a.cpu_milli = r->cpu_milli;
			a.mem_bytes = r->memory_mib << 20;
			a.gpu = r->gpu;
			if ((err = drake_cluster_add_node(&s->c, r->name, &a, true, msg, mlen)))
				return err;
			if (r->gpu > max_gpus)
				max_gpus = r->gpu;
		}
	} else {
		int n, gpus;
		sim_cluster_shape(cfg, t->kind, &n, &gpus);
		if (n > DRAKE_CLUSTER_MAX_NODES)
			return drake_errorf(DRAKE_ELIMIT, msg, mlen, "more than %d nodes",
			                    DRAKE_CLUSTER_MAX_NODES);
		for (int i = 0; i < n; i++) {
			struct drake_res a = {0};
			a.cpu_milli = cfg->node_cpu_milli;
			a.mem_bytes = cfg->node_mem_bytes;
			a.gpu = gpus;
			snprintf(name, sizeof(name), "node-%05d", i);
			if ((err = drake_cluster_add_node(&s->c, name, &a, true, msg, mlen)))
				return err;
		}
		max_gpus = gpus;
	}
	if ((err = drake_cluster_sort(&s->c, msg, mlen)))
		return err;
	cfg->model.speed.node_gpus = max_gpus > 0 ? max_gpus : 1;
	return DRAKE_OK;
}

static drake_err build_jobs(struct sim *s, const struct sim_trace *t, char *msg, size_t mlen)
{
	const struct sim_model *m = &s->cfg->model;
	for (size_t i = 0; i < s->n; i++) {
		struct sim_job *j = &s->jobs[i];
		j->t = &t->jobs[i];
		sim_model_shape(m, j->t, t->kind, &j->req, &j->max_workers);
		j->submit = (double)j->t->submit * s->cfg->time_scale;
		j->start = j->finish = -1;
		j->shrunk_for = -1;
		j->slow_at = -1;
		j->paused_at = -1;
		j->ps_node = malloc(((size_t)j->req.n_ps + 1) * sizeof(int));
		if (!j->ps_node || ensure_workers(j, j->req.want_workers + 1))
			return drake_errorf(DRAKE_ENOMEM, msg, mlen, "out of memory");
		int w0 = j->req.want_workers, g = (int)j->req.worker.gpu;
		if (t->kind == SIM_TRACE_POLLUX) {
			const struct sim_papps *apps = s->cfg->apps;
			if (!apps || j->t->app_index < 0 || (size_t)j->t->app_index >= apps->n)
				return drake_errorf(
				    DRAKE_EINVAL, msg, mlen,
				    "job %s: a Pollux trace's jobs must be bound to "
				    "their applications' measurements (--apps)",
				    j->t->id);
			j->app = &apps->app[j->t->app_index];
			j->work_total = (m->pollux_iterations ? j->t->iterations : j->t->samples) *
			                m->pollux_work_scale;
		} else {
			j->work_total = (double)j->t->duration *
			                drake_speed_rate(&m->speed, w0, g,
			                                 drake_speed_min_nodes(&m->speed, w0, g));
		}
		j->work_orig = j->work_total;
		struct job_resize_cost rc = job_resize_cost_of(s->cfg->resize_costs, j->t->kind);
		j->cost = (struct drake_change_cost){rc.shrink_s, rc.grow_s};
		/* drawn whatever the flags, so runs with and without curves split
		 * the same jobs into early and late */
		sim_curve_draw(&s->cfg->curves, s->cfg->seed, i, &j->curve);
		if (s->cfg->curves.on) {
			if (!(j->prog = malloc(sizeof(*j->prog))))
				return drake_errorf(DRAKE_ENOMEM, msg, mlen, "out of memory");
			mig_progress_init(j->prog, MIG_KIND_ACCURACY, j->t->duration);
		}
		struct drake_plan p = {0};
		char why[DRAKE_WHY_MAX];
		drake_err err = drake_plan_gang(&s->c, &j->req, &p, why, sizeof(why));
		drake_plan_release(&p);
		if (err == DRAKE_ELIMIT || err == DRAKE_EINVAL) {
			j->never_fits = true;
			s->n_never++;
			log_warn("sim_job_never_fits", "job=%s why=\"%s\"", j->t->id, why);
			continue;
		}
		if (err == DRAKE_ENOMEM)
			return drake_errorf(err, msg, mlen, "out of memory");
		struct sim_ev ev = {j->submit, 0, SIM_EV_ARRIVAL, (int)i, 0};
		if ((err = sim_evq_push(&s->q, ev)))
			return drake_errorf(err, msg, mlen, "event queue: %s", drake_strerror(err));
	}
	return DRAKE_OK;
}

static void sim_free(struct sim *s)
{
	for (size_t i = 0; s->jobs && i < s->n; i++) {
		free(s->jobs[i].ps_node);
		free(s->jobs[i].worker_node);
		free(s->jobs[i].worker_index);
		free(s->jobs[i].moves);
		free(s->jobs[i].moved_at);
		free(s->jobs[i].prog);
	}
	free(s->jobs);
	free(s->waiting);
	free(s->running);
	free(s->arrived);
	free(s->samples);
	sim_evq_release(&s->q);
	drake_cluster_release(&s->c);
}

drake_err sim_run(const struct sim_config *cfg_in, const struct sim_trace *trace,
                  const struct sim_policy *policy, const struct sim_migrator *mig,
                  struct sim_result *out, char *msg, size_t mlen)
{
	struct sim s;
	struct sim_config cfg = *cfg_in;
	void *pstate = NULL;
	drake_err err;
	memset(&s, 0, sizeof(s));
	memset(out, 0, sizeof(*out));
	out->policy = policy->name;
	/* a Pollux job's every change restarts it: the artifact's cost of a
	 * reallocation, for every policy and in what drake's believes */
	if (cfg.apps)
		cfg.model.speed.rescale_pause = cfg.tiresias_restart;
	s.cfg = &cfg;
	s.policy = policy;
	s.rng = cfg.seed;
	sim_evq_init(&s.q);
	s.n = sim_config_jobs(&cfg, trace->n);
	s.jobs = calloc(s.n + 1, sizeof(*s.jobs));
	s.waiting = malloc((s.n + 1) * sizeof(int));
	s.running = malloc((s.n + 1) * sizeof(int));
	s.arrived = malloc((s.n + 1) * sizeof(int));
	if (!s.jobs || !s.waiting || !s.running || !s.arrived) {
		err = drake_errorf(DRAKE_ENOMEM, msg, mlen, "out of memory");
		goto done;
	}
	if ((err = build_cluster(&s, &cfg, trace, msg, mlen)) ||
	    (err = build_jobs(&s, trace, msg, mlen)))
		goto done;
	if ((err = policy->init(&s, &pstate))) {
		drake_errorf(err, msg, mlen, "policy %s: init failed", policy->name);
		goto done;
	}

	struct sim_ev ev;
	size_t batches = 0, quiet = 0;
	double wall0 = cpu_seconds();
	while (sim_evq_pop(&s.q, &ev)) {
		s.now = ev.t;
		s.n_arrived = 0;
		if ((err = account(&s)) || (err = handle(&s, &ev)))
			break;
		double t;
		while (sim_evq_peek_time(&s.q, &t) && t == s.now) {
			sim_evq_pop(&s.q, &ev);
			if ((err = handle(&s, &ev)))
				break;
		}
		if ((err = sim_report_samples(&s, msg, mlen)))
			break;
		/* The controller runs another round after each of its own
		 * changes (the pods it ungated, deleted or created come back
		 * through its watch), so a decision that changed something is
		 * followed at once by another, until one changes nothing: a
		 * round's limits (shrink_tries, DRAGON's one admission per run)
		 * bound a round on both sides, not an instant. */
		size_t rounds = 0, before;
		do {
			before = s.changes;
			double c0 = cpu_seconds();
			err = policy->decide(&s, pstate);
			if (!err && mig && mig->decide)
				err = mig->decide(&s, mig->state);
			double dc = cpu_seconds() - c0;
			out->policy_cpu_s += dc;
			if (dc > out->policy_cpu_max_s)
				out->policy_cpu_max_s = dc;
			out->decisions++;
			s.n_arrived = 0; /* arrivals are news to the first decision only */
		} while (!err && s.changes != before && ++rounds < SIM_ROUNDS_MAX);
		if (!err && rounds == SIM_ROUNDS_MAX && !out->rounds_capped++)
			log_warn("sim_rounds_capped", "policy=%s t=%.0f rounds=%d", policy->name,
			         s.now, SIM_ROUNDS_MAX);
		if (err) {
			drake_errorf(err, msg, mlen, "policy %s failed at t=%.0f", policy->name,
			             s.now);
			break;
		}
		for (size_t i = 0; i < s.n_waiting; i++)
			if (s.jobs[s.waiting[i]].pods_bound > 0)
				s.jobs[s.waiting[i]].ever_partial = true;
		if ((err = account(&s)))
			break;
		if (cfg.progress && (++batches & 4095) == 0)
			log_info("sim_progress",
			         "policy=%s t=%.0f done=%zu/%zu running=%zu waiting=%zu cpu_s=%.1f",
			         policy->name, s.now, s.n_done, s.n, s.n_running, s.n_waiting,
			         cpu_seconds() - wall0);
		if (s.n_done + s.n_never == s.n)
			break;
		/* Nothing running and only wake-ups left: after enough quiet
		 * decisions nothing will ever change (a deadlock). */
		quiet = s.n_running == 0 && ev.type == SIM_EV_WAKE ? quiet + 1 : 0;
		if (quiet > 10000)
			break;
	}
	if (!err && (err = sim_collect(&s, out)))
		drake_errorf(err, msg, mlen, "out of memory");
	if (!err && out->deadlocked)
		log_warn("sim_deadlock", "policy=%s stuck_jobs=%zu held_gpus=%lld t=%.0f",
		         policy->name, out->deadlock_jobs, (long long)out->deadlock_gpus, s.now);
done:
	if (pstate)
		policy->release(pstate);
	sim_free(&s);
	if (err)
		sim_result_release(out);
	return err;
}

const struct sim_policy *sim_policy_find(const char *name)
{
	static const struct sim_policy *const all[] = {&sim_policy_default, &sim_policy_dragon,
	                                               &sim_policy_drake,   &sim_policy_tiresias,
	                                               &sim_policy_optimus, &sim_policy_oracle};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (strcmp(all[i]->name, name) == 0)
			return all[i];
	return NULL;
}
