/*
 * model.h - how a trace job becomes a TFJob gang, and how fast it trains.
 *
 * Shape. An ITP job asking for G GPUs becomes n_ps parameter servers (CPU
 * only) and W0 = ceil(G / gpus_per_worker) workers of gpus_per_worker GPUs
 * each; min-instances = max(1, ceil(W0 * min_frac)), max-instances =
 * max(W0, floor(W0 * max_factor)); it starts asking for W0. A gang trace
 * (knavigator) job is `replicas` pods of gpus_per_pod GPUs: replicas
 * workers of that size, and rigid (min = max = replicas) unless
 * gang_elastic, because that benchmark defines fixed-size gangs. A Pollux
 * job is num_replicas workers of one GPU and no PS (its applications are
 * all-reduce data-parallel), min-instances 1, max-instances its
 * max_replicas (sim/pollux_model.h: 2 x num_replicas within what the
 * measurements cover); with pollux_rigid, num_replicas for both (the
 * artifact's TunedJobs). A Pollux job's work is multiplied by
 * pollux_work_scale (1: as measured).
 *
 * Speed (ITP and gang): gang/speed.h, the model drake's growth rule
 * reasons with; a Pollux job runs at its application's measured speed
 * instead (sim/pollux_model.h), its work its iterations. An ITP job's
 * work is its trace duration times T(W0, n_min(W0)): placed as tightly as
 * possible at its original size it takes exactly the trace's duration.
 * Every change of worker count costs rescale_pause seconds of that job's
 * progress (workers joining or leaving a PS job re-sync).
 *
 * Pure arithmetic, no allocation.
 */
#ifndef DRAKE_SIM_MODEL_H
#define DRAKE_SIM_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "gang/planner.h"
#include "gang/speed.h"
#include "sim/trace.h"

struct sim_model {
	int n_ps;
	int64_t ps_cpu_milli;
	int64_t ps_mem_bytes;
	int gpus_per_worker; /* ITP traces */
	int64_t worker_cpu_milli_per_gpu;
	int64_t worker_mem_bytes_per_gpu;
	double min_frac;
	double max_factor;
	bool gang_elastic;
	bool pollux_rigid;        /* Pollux jobs keep their tuned size (min = max) */
	bool pollux_iterations;   /* a Pollux job's work is its curve's iterations, not
	                           * the artifact's efficiency-weighted count */
	double pollux_work_scale; /* a Pollux job's work times this (1; bench-replay
	                           * compresses a window's run times by it) */
	struct drake_speed speed; /* node_gpus is set from the cluster */
};

void sim_model_defaults(struct sim_model *m);

/* The gang request for job j (want = W0) and its max workers. */
void sim_model_shape(const struct sim_model *m, const struct sim_trace_job *j,
                     enum sim_trace_kind kind, struct drake_gang_req *req, int *max_workers);

#endif
