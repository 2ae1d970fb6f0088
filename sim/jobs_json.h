/*
 * jobs_json.h - `drake sim --print-jobs`: the jobs a replay would run, as
 * the model shapes them (sim/model.h: PS, workers, min/max, requests, the
 * work at the original size) and the speed model they run at, as one JSON
 * document, so a driver outside the simulator (e2e/cmd/bench-replay) makes
 * the same TFJobs and runs them by the same arithmetic without copying
 * either.
 *
 * Document:
 *   {"trace": path, "kind": "itp"|"gang", "time_scale": x,
 *    "cluster": {"nodes": n, "node_gpus": g, "node_cpu_milli": c,
 *                "node_mem_bytes": m},            (identical nodes only)
 *    "speed": {"scaling_loss", "locality_penalty", "rescale_pause_s",
 *              "node_gpus"},
 *    "jobs": [{"index", "id", "submit_s" (time_scale applied),
 *              "duration_s", "gpus", "ps", "ps_cpu_milli", "ps_mem_bytes",
 *              "workers" (W0), "min_workers", "max_workers",
 *              "gpus_per_worker", "worker_cpu_milli", "worker_mem_bytes",
 *              "work" (duration x T(W0, n_min(W0)))}, ...]}
 */
#ifndef DRAKE_SIM_JOBS_JSON_H
#define DRAKE_SIM_JOBS_JSON_H

#include <stdio.h>

#include "common/err.h"
#include "sim/sim.h"
#include "sim/trace.h"

/* Writes the document for the first cfg->max_jobs jobs of t (all when 0)
 * to out. cfg->model.speed.node_gpus is taken from the cluster as sim_run
 * does (the largest node's GPUs). */
drake_err sim_jobs_json(FILE *out, const char *trace_path, const struct sim_config *cfg,
                        const struct sim_trace *t, char *msg, size_t mlen) DRAKE_MUST_CHECK;

#endif
