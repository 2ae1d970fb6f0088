/*
 * policy_tiresias.c - Tiresias (2D-LAS, gang/tiresias.h) in the simulator,
 * driven as the Pollux artifact's simulator drives its TiresiasPolicy
 * (petuum/adaptdl, osdi21-artifact, simulator/simulator.py):
 *
 *   - it decides only every cfg->tiresias_interval seconds (60), at whole
 *     multiples of it from time 0, the first at one interval: a job that
 *     arrives or finishes in between waits for the next decision;
 *   - every job runs rigidly at its size (want_workers: a Pollux job's
 *     num_replicas, the artifact's TunedJobs), never resized;
 *   - a running job the rule no longer runs is preempted (sim_preempt:
 *     it keeps its progress), then the jobs that now run start in priority
 *     order, each on the nodes with the most free GPUs first
 *     (drake_las_place);
 *   - every start, the first and each resume, costs cfg->tiresias_restart
 *     seconds (30) without progress, as the artifact's reallocate().
 *
 * A job whose workers ask for several GPUs is placed worker by worker on
 * the nodes with room for the most workers; when CPU or memory (which the
 * artifact does not model) do not fit there, gang/planner.h places it, and
 * when nothing fits it waits for the next decision. Its PS, if any, goes
 * with worker 0 or on the first node it fits.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gang/admission.h"
#include "gang/tiresias.h"
#include "sim/sim.h"

struct tiresias_pstate {
	struct drake_las_state *st; /* per sim job */
	size_t n;
	double decided; /* the last tick decided, -1 none */
};

static drake_err tiresias_init(struct sim *s, void **state)
{
	struct tiresias_pstate *p = calloc(1, sizeof(*p));
	if (!p)
		return DRAKE_ENOMEM;
	p->n = sim_job_count(s);
	p->st = calloc(p->n + 1, sizeof(*p->st));
	if (!p->st) {
		free(p);
		return DRAKE_ENOMEM;
	}
	p->decided = -1;
	*state = p;
	return DRAKE_OK;
}

static void tiresias_release(void *state)
{
	struct tiresias_pstate *p = state;
	if (!p)
		return;
	free(p->st);
	free(p);
}

static int64_t job_gpus(const struct sim_job *j)
{
	return j->req.worker.gpu * j->req.want_workers + j->req.ps.gpu * j->req.n_ps;
}

/* Does the plan fit the cluster's free room, every pod counted? */
static bool plan_fits(const struct drake_cluster *c, const struct drake_gang_req *req,
                      const struct drake_plan *p)
{
	struct drake_cluster t;
	if (drake_cluster_clone(&t, c) != DRAKE_OK)
		return false;
	bool ok = true;
	for (int i = 0; ok && i < p->n_ps + p->n_workers; i++) {
		bool ps = i < p->n_ps;
		size_t node = (size_t)(ps ? p->ps_node[i] : p->worker_node[i - p->n_ps]);
		const struct drake_res *r = ps ? &req->ps : &req->worker;
		struct drake_res f;
		drake_cluster_free(&t, node, &f);
		ok = t.nodes[node].schedulable && drake_res_fits(r, &f);
		if (ok)
			drake_cluster_charge(&t, node, r, 1);
	}
	drake_cluster_release(&t);
	return ok;
}

/* The artifact's placement of job j, or the planner's when CPU or memory
 * rule it out; DRAKE_ESTATE when it does not fit now. */
static drake_err place(struct sim *s, struct sim_job *j, struct drake_plan *p)
{
	struct drake_cluster *c = sim_cluster(s);
	int w = j->req.want_workers;
	int64_t *room = malloc((c->n + 1) * sizeof(*room));
	p->worker_node = malloc(((size_t)w + 1) * sizeof(int));
	p->ps_node = malloc(((size_t)j->req.n_ps + 1) * sizeof(int));
	if (!room || !p->worker_node || !p->ps_node) {
		free(room);
		return DRAKE_ENOMEM;
	}
	int64_t g = j->req.worker.gpu > 0 ? j->req.worker.gpu : 1;
	for (size_t i = 0; i < c->n; i++) {
		struct drake_res f;
		drake_cluster_free(c, i, &f);
		room[i] = c->nodes[i].schedulable ? f.gpu / g : 0;
	}
	drake_err err = drake_las_place(room, c->n, w, p->worker_node);
	free(room);
	if (!err) {
		p->n_workers = w;
		p->n_ps = j->req.n_ps;
		for (int i = 0; i < p->n_ps; i++)
			p->ps_node[i] = w > 0 ? p->worker_node[0] : 0;
		if (plan_fits(c, &j->req, p))
			return DRAKE_OK;
	}
	drake_plan_release(p);
	struct drake_gang_req rigid = j->req;
	rigid.min_workers = rigid.want_workers;
	char why[DRAKE_WHY_MAX];
	err = drake_plan_gang(c, &rigid, p, why, sizeof(why));
	return err == DRAKE_ELIMIT || err == DRAKE_EINVAL ? DRAKE_ESTATE : err;
}

static drake_err decide_now(struct sim *s, struct tiresias_pstate *p)
{
	const struct sim_config *cfg = sim_cfg(s);
	size_t nw, nr;
	const int *w = sim_waiting(s, &nw);
	const int *r = sim_running(s, &nr);
	size_t n = nw + nr;
	struct drake_las_job *jobs = calloc(n + 1, sizeof(*jobs));
	int *ids = malloc((n + 1) * sizeof(*ids));
	size_t *order = malloc((n + 1) * sizeof(*order));
	drake_err err = jobs && ids && order ? DRAKE_OK : DRAKE_ENOMEM;
	for (size_t i = 0; !err && i < n; i++) {
		ids[i] = i < nw ? w[i] : r[i - nw];
		const struct sim_job *j = sim_job(s, ids[i]);
		jobs[i] = (struct drake_las_job){.gpus = job_gpus(j),
		                                 .running = j->state == SIM_JOB_RUNNING,
		                                 .seq = (uint64_t)ids[i],
		                                 .st = &p->st[ids[i]]};
	}
	if (!err)
		err = drake_las_decide(jobs, n, sim_cluster(s)->alloc_total.gpu, sim_now(s),
		                       &cfg->las, order);
	/* preemptions first: the starts below are planned on what they free */
	for (size_t i = 0; !err && i < n; i++)
		if (jobs[i].running && !jobs[i].run)
			err = sim_preempt(s, ids[i]);
	for (size_t k = 0; !err && k < n; k++) {
		size_t i = order[k];
		if (jobs[i].running || !jobs[i].run)
			continue;
		struct drake_plan plan = {0};
		err = place(s, sim_job(s, ids[i]), &plan);
		if (err == DRAKE_ESTATE) {
			err = DRAKE_OK; /* it waits for the next decision */
		} else if (!err) {
			err = sim_start(s, ids[i], &plan);
			/* sim_start charges a Pollux job's restart itself */
			if (!err && !sim_job(s, ids[i])->app)
				err = sim_restart_pause(s, ids[i], cfg->tiresias_restart);
		}
		drake_plan_release(&plan);
	}
	free(jobs);
	free(ids);
	free(order);
	return err;
}

static drake_err decide_at(struct sim *s, void *p)
{
	return decide_now(s, p);
}

static drake_err tiresias_decide(struct sim *s, void *state)
{
	struct tiresias_pstate *p = state;
	return sim_every(s, sim_cfg(s)->tiresias_interval, &p->decided, decide_at, p);
}

const struct sim_policy sim_policy_tiresias = {"tiresias", tiresias_init, tiresias_release,
                                               tiresias_decide};
