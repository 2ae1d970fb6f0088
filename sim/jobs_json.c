/*
 * jobs_json.c - the replay's jobs and speed model as JSON (see jobs_json.h).
 */
#include "sim/jobs_json.h"

#include <jansson.h>

#include "sim/model.h"

/* The largest node's GPUs, as sim_run sets model.speed.node_gpus. */
static int cluster_node_gpus(const struct sim_config *cfg, enum sim_trace_kind kind)
{
	int best = 0, nodes;
	if (cfg->node_list) {
		for (size_t i = 0; i < cfg->node_list->n; i++)
			if (cfg->node_list->rows[i].gpu > best)
				best = cfg->node_list->rows[i].gpu;
	} else {
		sim_cluster_shape(cfg, kind, &nodes, &best);
	}
	return best > 0 ? best : 1;
}

static drake_err add(json_t *obj, const char *key, json_t *v)
{
	return v && json_object_set_new(obj, key, v) == 0 ? DRAKE_OK : DRAKE_ENOMEM;
}

static drake_err job_json(json_t *arr, size_t i, const struct sim_config *cfg,
                          const struct sim_model *m, const struct sim_trace *t)
{
	const struct sim_trace_job *tj = &t->jobs[i];
	struct drake_gang_req req;
	int max_workers = 0;
	sim_model_shape(m, tj, t->kind, &req, &max_workers);
	int w0 = req.want_workers, g = (int)req.worker.gpu;
	/* a Pollux job's work is what the simulator counts (its duration is at
	 * its measured speed), another's the speed model's units */
	double work =
	    t->kind == SIM_TRACE_POLLUX
	        ? (m->pollux_iterations ? tj->iterations : tj->samples) * m->pollux_work_scale
	        : (double)tj->duration *
	              drake_speed_rate(&m->speed, w0, g, drake_speed_min_nodes(&m->speed, w0, g));
	json_t *o = json_object();
	if (!o || json_array_append_new(arr, o))
		return DRAKE_ENOMEM;
	drake_err err = DRAKE_OK;
	err |= add(o, "index", json_integer((json_int_t)i));
	err |= add(o, "id", json_string(tj->id));
	err |= add(o, "submit_s", json_real((double)tj->submit * cfg->time_scale));
	err |= add(o, "duration_s", json_integer(tj->duration));
	err |= add(o, "gpus", json_integer(tj->gpus));
	err |= add(o, "ps", json_integer(req.n_ps));
	err |= add(o, "ps_cpu_milli", json_integer(req.ps.cpu_milli));
	err |= add(o, "ps_mem_bytes", json_integer(req.ps.mem_bytes));
	err |= add(o, "workers", json_integer(w0));
	err |= add(o, "min_workers", json_integer(req.min_workers));
	err |= add(o, "max_workers", json_integer(max_workers));
	err |= add(o, "gpus_per_worker", json_integer(g));
	err |= add(o, "worker_cpu_milli", json_integer(req.worker.cpu_milli));
	err |= add(o, "worker_mem_bytes", json_integer(req.worker.mem_bytes));
	err |= add(o, "work", json_real(work));
	if (t->kind == SIM_TRACE_POLLUX) {
		err |= add(o, "application", json_string(tj->app));
		err |= add(o, "batch_size", json_integer(tj->batch_size));
		err |= add(o, "samples", json_real(tj->samples));
	}
	return err ? DRAKE_ENOMEM : DRAKE_OK;
}

drake_err sim_jobs_json(FILE *out, const char *trace_path, const struct sim_config *cfg,
                        const struct sim_trace *t, char *msg, size_t mlen)
{
	struct sim_model m = cfg->model;
	m.speed.node_gpus = cluster_node_gpus(cfg, t->kind);
	if (t->kind == SIM_TRACE_POLLUX) /* what sim_run charges a Pollux job's change */
		m.speed.rescale_pause = cfg->tiresias_restart;
	size_t n = sim_config_jobs(cfg, t->n);
	json_t *doc = json_object(), *jobs = json_array(), *speed = json_object();
	drake_err err = doc && jobs && speed ? DRAKE_OK : DRAKE_ENOMEM;
	if (!err) {
		err |= add(speed, "scaling_loss", json_real(m.speed.scaling_loss));
		err |= add(speed, "locality_penalty", json_real(m.speed.locality_penalty));
		err |= add(speed, "rescale_pause_s", json_real(m.speed.rescale_pause));
		err |= add(speed, "node_gpus", json_integer(m.speed.node_gpus));
	}
	if (!err && !cfg->node_list) {
		int nodes, node_gpus;
		sim_cluster_shape(cfg, t->kind, &nodes, &node_gpus);
		json_t *c = json_object();
		err = c ? DRAKE_OK : DRAKE_ENOMEM;
		if (!err) {
			err |= add(c, "nodes", json_integer(nodes));
			err |= add(c, "node_gpus", json_integer(node_gpus));
			err |= add(c, "node_cpu_milli", json_integer(cfg->node_cpu_milli));
			err |= add(c, "node_mem_bytes", json_integer(cfg->node_mem_bytes));
			err |= add(doc, "cluster", c);
		}
	}
	for (size_t i = 0; !err && i < n; i++)
		err = job_json(jobs, i, cfg, &m, t);
	if (!err) {
		err |= add(doc, "trace", json_string(trace_path));
		err |= add(doc, "kind",
		           json_string(t->kind == SIM_TRACE_GANG     ? "gang"
		                       : t->kind == SIM_TRACE_POLLUX ? "pollux"
		                                                     : "itp"));
		err |= add(doc, "time_scale", json_real(cfg->time_scale));
		err |= add(doc, "speed", speed);
		speed = NULL;
		err |= add(doc, "jobs", jobs);
		jobs = NULL;
	}
	json_decref(speed);
	json_decref(jobs);
	if (err) {
		json_decref(doc);
		return drake_errorf(DRAKE_ENOMEM, msg, mlen, "out of memory");
	}
	int rc = json_dumpf(doc, out, JSON_INDENT(1) | JSON_REAL_PRECISION(15));
	json_decref(doc);
	if (rc || fputc('\n', out) == EOF || fflush(out))
		return drake_errorf(DRAKE_EIO, msg, mlen, "writing the job list failed");
	return DRAKE_OK;
}
