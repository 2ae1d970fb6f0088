/*
 * pollux_model.h - how fast a Pollux workload's job runs and how much it
 * has to do, from its application's measurements (sim/pollux_apps.h), as
 * the Pollux artifact's simulator (simulator/applications.py, simulator.py)
 * derives them:
 *
 * Work: the iterations its validation curve at its batch size B has done
 * at the end of the application's last epoch (a->epochs). Between two
 * measured batch sizes the count is interpolated linearly in B.
 *
 * Iteration time at B with r replicas laid out over nodes: the local batch
 * is ceil(B / r); past the largest local batch (a->max_local_bsz) it is
 * split into accumulation passes, and a single replica whose B exceeds the
 * smallest measured batch size always takes at least two; the per-pass
 * batch is capped so that r x passes x it stays within the largest measured
 * batch size. One iteration takes step + (passes - 1) x (step - sync), where
 * step and sync are measured:
 *   - the placement (digits per node, rotation-free) was measured: linear
 *     in the local batch between its two nearest measurements;
 *   - else, over every measurement by (nodes, replicas, local batch)
 *     (placements averaged, and scalability.csv): linear in the local batch
 *     at each measured (nodes, replicas), then in the replicas at each of
 *     the two nearest measured node counts, holding replicas per node, then
 *     in the node count (at most 16, as the artifact). The artifact
 *     triangulates the same points instead (scipy's LinearNDInterpolator):
 *     both agree on every measured point and along each axis.
 * Outside a measured range the nearest measurement stands in (never an
 * extrapolation).
 *
 * Pure arithmetic on the loaded tables: no I/O, no allocation but the
 * placement's digits; deterministic.
 */
#ifndef DRAKE_SIM_POLLUX_MODEL_H
#define DRAKE_SIM_POLLUX_MODEL_H

#include <stdbool.h>

#include "common/err.h"
#include "sim/pollux_apps.h"
#include "sim/trace.h"

/* Measured step and sync seconds for replicas per_node[0..n) (zeros
 * allowed, in node order) at a local batch size. */
void sim_papp_throughput(const struct sim_papp *a, const int *per_node, int n, double local_bsz,
                         double *step, double *sync);

/* Seconds per iteration at total batch size `batch` on per_node[0..n);
 * 0 when there is no replica. */
double sim_papp_iter_time(const struct sim_papp *a, const int *per_node, int n, int batch);

/* The iterations a job at `batch` needs, and the metric its curve shows
 * then. DRAKE_EINVAL when batch is outside the measured batch sizes. */
drake_err sim_papp_work(const struct sim_papp *a, int batch, double *iterations,
                        double *metric) DRAKE_MUST_CHECK;

/* The work as the artifact's simulator counts it (simulator.py Job.step):
 * progress in the curves' units (the `progress` column, samples over the
 * smallest batch size) until the epoch target, the least progress any curve
 * shows after a->epochs epochs, gained at throughput x statistical
 * efficiency. Efficiency at the batch the job really runs (r x its local
 * batch x passes, as sim_papp_iter_time rounds it) in epoch e is
 * (var + sqr) / (var / scale + sqr), scale = that batch over the smallest
 * measured, grad_sqr and grad_var linear in the batch between the curves
 * around it. Given in iterations: sum over epochs of the epoch's progress
 * over its efficiency. DRAKE_EINVAL when batch is outside the curves or an
 * efficiency is not positive. */
drake_err sim_papp_samples_work(const struct sim_papp *a, int batch, int replicas,
                                double *iterations) DRAKE_MUST_CHECK;
/* The same count epoch by epoch: cum[e] (a->epochs entries) is the work
 * done at the end of epoch e (cum[a->epochs - 1] is the whole). */
drake_err sim_papp_samples_cumulative(const struct sim_papp *a, int batch, int replicas,
                                      double *cum) DRAKE_MUST_CHECK;
/* The curve's iterations after epoch index `epoch` (0-based row) at batch,
 * linear between the curves around it (the artifact's get_iteration); 0
 * outside the epochs. */
double sim_papp_curve_iteration(const struct sim_papp *a, int batch, int epoch);

/* The elastic policies' max-instances for a job tuned to `tuned` replicas:
 * 2 x tuned, lowered while its local batch would fall below the smallest
 * measured (ceil(batch / r) < a->min_local_bsz) or r above the most
 * replicas measured; never below tuned. */
int sim_papp_max_replicas(const struct sim_papp *a, int batch, int tuned);

/* A job's work per second with its replicas on worker_node[0..n) (node
 * numbers, by worker: only equality matters): its replicas per node in
 * the order its workers first use the nodes (the artifact's placement
 * tuple follows its allocation list, and a measurement depends on that
 * order up to rotation: 1234 and 1324 differ), at the measured iteration
 * time at batch. Unless iterations (the work counts the curve's
 * iterations), a job whose work is the artifact's count, `samples` at its
 * tuned size, gains samples / W(n) of it per iteration at n replicas (the
 * batch it really runs, and so its efficiency, differ). 0 with no
 * replica. The simulator and bench-replay's driver (through cgo) both
 * advance Pollux jobs by it. */
drake_err sim_papp_job_rate(const struct sim_papp *a, int batch, double samples,
                            const int *worker_node, int n, bool iterations,
                            double *rate) DRAKE_MUST_CHECK;

/* Seconds per iteration of r replicas packed node_gpus to a node. */
double sim_papp_packed_iter_time(const struct sim_papp *a, int r, int node_gpus, int batch);

/* Binds a Pollux trace's jobs to the loaded applications: per job its
 * application's index, its iterations (the curve's and the artifact's
 * count, sim_papp_samples_work), its max replicas, and as duration the run
 * time of the artifact's count at the tuned size packed on nodes of
 * node_gpus GPUs (rounded up to a second). Errors name file:line of the job. */
drake_err sim_pollux_bind(struct sim_trace *t, const char *file, const struct sim_papps *apps,
                          int node_gpus, char *msg, size_t mlen) DRAKE_MUST_CHECK;

#endif
