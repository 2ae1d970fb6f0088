/*
 * model.c - trace job to gang shape, and the speed model.
 */
#include "sim/model.h"

#include <math.h>

#define GIB (1024LL * 1024 * 1024)

void sim_model_defaults(struct sim_model *m)
{
	m->n_ps = 1;
	m->ps_cpu_milli = 4000;
	m->ps_mem_bytes = 16 * GIB;
	m->gpus_per_worker = 1;
	m->worker_cpu_milli_per_gpu = 4000;
	m->worker_mem_bytes_per_gpu = 32 * GIB;
	m->min_frac = 0.5;
	m->max_factor = 2.0;
	m->gang_elastic = false;
	m->pollux_rigid = false;
	m->pollux_iterations = false;
	m->pollux_work_scale = 1;
	drake_speed_defaults(&m->speed);
}

void sim_model_shape(const struct sim_model *m, const struct sim_trace_job *j,
                     enum sim_trace_kind kind, struct drake_gang_req *req, int *max_workers)
{
	int g, w0;
	if (kind == SIM_TRACE_POLLUX) {
		/* data-parallel all-reduce jobs: no PS, a GPU per replica, any
		 * size from one replica to max_replicas (sim_pollux_bind) */
		*req = (struct drake_gang_req){0};
		req->worker.gpu = 1;
		req->worker.cpu_milli = m->worker_cpu_milli_per_gpu;
		req->worker.mem_bytes = m->worker_mem_bytes_per_gpu;
		req->want_workers = j->replicas;
		req->min_workers = m->pollux_rigid ? j->replicas : 1;
		*max_workers = j->max_replicas > j->replicas && !m->pollux_rigid ? j->max_replicas
		                                                                 : j->replicas;
		if (*max_workers > DRAKE_GANG_MAX_REPLICAS)
			*max_workers = DRAKE_GANG_MAX_REPLICAS;
		return;
	}
	if (kind == SIM_TRACE_GANG) {
		g = j->gpus_per_pod;
		w0 = j->replicas;
	} else {
		g = m->gpus_per_worker > 0 ? m->gpus_per_worker : 1;
		if (g > j->gpus)
			g = j->gpus;
		w0 = (j->gpus + g - 1) / g;
	}
	*req = (struct drake_gang_req){0};
	req->n_ps = m->n_ps;
	req->ps.cpu_milli = m->ps_cpu_milli;
	req->ps.mem_bytes = m->ps_mem_bytes;
	req->worker.gpu = g;
	req->worker.cpu_milli = m->worker_cpu_milli_per_gpu * g;
	req->worker.mem_bytes = m->worker_mem_bytes_per_gpu * g;
	req->want_workers = w0;
	if (kind == SIM_TRACE_GANG && !m->gang_elastic) {
		req->min_workers = w0;
		*max_workers = w0;
		return;
	}
	int mn = (int)ceil(w0 * m->min_frac - 1e-9);
	if (mn < 1)
		mn = 1;
	if (mn > w0)
		mn = w0;
	int mx = (int)floor(w0 * m->max_factor + 1e-9);
	if (mx < w0)
		mx = w0;
	if (mx > DRAKE_GANG_MAX_REPLICAS - m->n_ps)
		mx = DRAKE_GANG_MAX_REPLICAS - m->n_ps;
	req->min_workers = mn;
	*max_workers = mx;
}
