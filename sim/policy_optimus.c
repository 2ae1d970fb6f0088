/*
 * policy_optimus.c - Optimus (gang/optimus.h) in the simulator, driven as
 * the Pollux artifact's simulator drives its OptimusPolicy ("Optimus +
 * Oracle + TunedJobs"; petuum/adaptdl, osdi21-artifact, simulator/
 * optimus.py and simulator.py), for Pollux workloads only:
 *
 *   - it decides every cfg->tiresias_interval seconds (60), as Tiresias;
 *   - each job keeps its tuned batch size; its replicas run from 1 to
 *     batch_size / the smallest local batch measured (ncf: 1), as many as
 *     the greedy allocation gives it, from its measured step time packed 4
 *     to a node (the oracle) and its remaining iterations: the curve's
 *     iterations at the last epoch less those at the epochs it has done
 *     (optimus.py's get_iteration difference, epoch = epochs completed);
 *   - a job whose count changes is stopped and placed again from scratch,
 *     jobs in ascending count, each on the nodes with the most free GPUs
 *     first (drake_las_place), and pays cfg->tiresias_restart (30 s);
 *     jobs whose count stays keep their nodes.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gang/optimus.h"
#include "gang/tiresias.h"
#include "sim/pollux_model.h"
#include "sim/sim.h"

struct ojob {
	bool ready;
	int max;      /* its most replicas */
	double *step; /* max entries: predicted seconds per iteration */
	double *cum;  /* epochs entries: work done at the end of each epoch */
};

struct optimus_pstate {
	struct ojob *j;
	size_t n;
	double decided;
	int node_gpus;
};

static drake_err optimus_init(struct sim *s, void **state)
{
	if (!sim_cfg(s)->apps)
		return DRAKE_EINVAL; /* Pollux workloads only: it needs measurements */
	struct optimus_pstate *p = calloc(1, sizeof(*p));
	if (!p)
		return DRAKE_ENOMEM;
	p->n = sim_job_count(s);
	p->j = calloc(p->n + 1, sizeof(*p->j));
	if (!p->j) {
		free(p);
		return DRAKE_ENOMEM;
	}
	p->decided = -1;
	const struct drake_cluster *c = sim_cluster(s);
	p->node_gpus = c->n > 0 && c->nodes[0].alloc.gpu > 0 ? (int)c->nodes[0].alloc.gpu : 1;
	*state = p;
	return DRAKE_OK;
}

static void optimus_release(void *state)
{
	struct optimus_pstate *p = state;
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++) {
		free(p->j[i].step);
		free(p->j[i].cum);
	}
	free(p->j);
	free(p);
}

static int ceil_div(double x)
{
	return (int)ceil(x - 1e-8);
}

/* optimus.py's predict_step_time: r replicas packed node_gpus to a node,
 * at least two passes on one replica. */
static double predict(const struct sim_papp *a, int r, int node_gpus, int batch)
{
	int per[SIM_PAPP_MAX_REPLICAS], n = 0;
	for (int left = r; left > 0 && n < SIM_PAPP_MAX_REPLICAS; left -= node_gpus)
		per[n++] = left < node_gpus ? left : node_gpus;
	int local = ceil_div((double)batch / r);
	int accum = ceil_div(local / a->max_local_bsz) - 1;
	if (r == 1 && accum < 1)
		accum = 1;
	int atomic = ceil_div((double)local / (accum + 1));
	int cap = a->curve[a->n_curve - 1].batch / (r * (accum + 1));
	if (atomic > cap)
		atomic = cap;
	double step, sync;
	sim_papp_throughput(a, per, n, atomic, &step, &sync);
	return step + (step - sync) * accum;
}

static drake_err ready(struct optimus_pstate *p, struct sim *s, int id, int64_t gpus)
{
	struct ojob *o = &p->j[id];
	if (o->ready)
		return DRAKE_OK;
	const struct sim_job *j = sim_job(s, id);
	const struct sim_papp *a = j->app;
	if (!a)
		return DRAKE_EINVAL;
	int batch = j->t->batch_size;
	o->max = strcmp(a->name, "ncf") == 0 ? 1 : (int)(batch / a->min_local_bsz);
	if (o->max > gpus)
		o->max = (int)gpus;
	if (o->max < 1)
		o->max = 1;
	o->step = malloc((size_t)o->max * sizeof(*o->step));
	o->cum = malloc((size_t)a->epochs * sizeof(*o->cum));
	if (!o->step || !o->cum)
		return DRAKE_ENOMEM;
	for (int r = 1; r <= o->max; r++)
		o->step[r - 1] = predict(a, r, p->node_gpus, batch);
	drake_err err = sim_papp_samples_cumulative(a, batch, j->t->replicas, o->cum);
	if (err)
		return err;
	o->ready = true;
	return DRAKE_OK;
}

/* Iterations left as optimus.py counts them, from the epochs done. */
static double remaining(const struct ojob *o, const struct sim_job *j, double now)
{
	const struct sim_papp *a = j->app;
	double done = j->work_done;
	if (j->state == SIM_JOB_RUNNING && now > j->last_update)
		done += j->rate * (now - j->last_update);
	/* what its restarts were charged is not progress */
	double useful = j->work_orig - (j->work_total - done);
	int epoch = 0;
	while (epoch < a->epochs && o->cum[epoch] <= useful + 1e-9 * o->cum[a->epochs - 1])
		epoch++;
	int last = a->epochs - 1;
	if (last <= epoch)
		return 1;
	return sim_papp_curve_iteration(a, j->t->batch_size, last) -
	       sim_papp_curve_iteration(a, j->t->batch_size, epoch);
}

static int by_id(const void *x, const void *y)
{
	int a = *(const int *)x, b = *(const int *)y;
	return a < b ? -1 : a > b;
}

static drake_err start(struct sim *s, int id, int replicas, double restart)
{
	const struct drake_cluster *c = sim_cluster(s);
	int64_t *room = malloc((c->n + 1) * sizeof(*room));
	struct drake_plan plan = {0};
	plan.worker_node = malloc(((size_t)replicas + 1) * sizeof(int));
	plan.ps_node = malloc(sizeof(int));
	drake_err err = room && plan.worker_node && plan.ps_node ? DRAKE_OK : DRAKE_ENOMEM;
	for (size_t i = 0; !err && i < c->n; i++) {
		struct drake_res f;
		drake_cluster_free(c, i, &f);
		room[i] = c->nodes[i].schedulable ? f.gpu : 0;
	}
	if (!err)
		err = drake_las_place(room, c->n, replicas, plan.worker_node);
	plan.n_workers = replicas;
	if (!err)
		err = sim_start(s, id, &plan);
	/* sim_start charges a Pollux job's restart itself */
	if (!err && !sim_job(s, id)->app)
		err = sim_restart_pause(s, id, restart);
	free(room);
	drake_plan_release(&plan);
	return err;
}

static drake_err decide_now(struct sim *s, struct optimus_pstate *p)
{
	const struct sim_config *cfg = sim_cfg(s);
	size_t nw, nr;
	const int *w = sim_waiting(s, &nw);
	const int *r = sim_running(s, &nr);
	size_t n = nw + nr;
	int64_t gpus = sim_cluster(s)->alloc_total.gpu; /* over schedulable nodes */
	int *ids = malloc((n + 1) * sizeof(*ids));
	struct drake_optimus_job *jobs = calloc(n + 1, sizeof(*jobs));
	drake_err err = ids && jobs ? DRAKE_OK : DRAKE_ENOMEM;
	for (size_t i = 0; !err && i < n; i++)
		ids[i] = i < nw ? w[i] : r[i - nw];
	if (!err)
		qsort(ids, n, sizeof(*ids), by_id); /* the artifact's jobs: trace order */
	for (size_t i = 0; !err && i < n; i++) {
		err = ready(p, s, ids[i], gpus);
		if (err)
			break;
		const struct ojob *o = &p->j[ids[i]];
		jobs[i] = (struct drake_optimus_job){
		    o->max, remaining(o, sim_job(s, ids[i]), sim_now(s)), o->step, 0};
	}
	if (!err)
		err = drake_optimus_allocate(jobs, n, gpus);
	/* a job whose count changes leaves its nodes first */
	for (size_t i = 0; !err && i < n; i++) {
		const struct sim_job *j = sim_job(s, ids[i]);
		if (j->state == SIM_JOB_RUNNING && j->n_workers != jobs[i].replicas)
			err = sim_preempt(s, ids[i]);
	}
	/* then the jobs to place, fewest replicas first (stable) */
	for (int want = 1; !err && want <= (int)gpus; want++) {
		for (size_t i = 0; !err && i < n; i++) {
			if (jobs[i].replicas != want ||
			    sim_job(s, ids[i])->state == SIM_JOB_RUNNING)
				continue;
			err = start(s, ids[i], want, cfg->tiresias_restart);
		}
	}
	free(ids);
	free(jobs);
	return err;
}

static drake_err decide_at(struct sim *s, void *p)
{
	return decide_now(s, p);
}

static drake_err optimus_decide(struct sim *s, void *state)
{
	struct optimus_pstate *p = state;
	return sim_every(s, sim_cfg(s)->tiresias_interval, &p->decided, decide_at, p);
}

const struct sim_policy sim_policy_optimus = {"optimus", optimus_init, optimus_release,
                                              optimus_decide};
