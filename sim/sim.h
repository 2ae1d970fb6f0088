/*
 * sim.h - the discrete-event simulator behind `drake sim`.
 *
 * Virtual time only: jobs arrive from the trace, run at the model's speed
 * for the workers and nodes they hold, and finish; after every batch of
 * events at one instant the placement policy decides (admit, place pods,
 * shrink, grow) through the action functions below, which keep the cluster
 * snapshot, the jobs and the metrics consistent. Same trace, config and
 * seed give the same run.
 *
 * The seams: struct sim_policy is the placement policy (default, dragon,
 * drake in policy_*.c); struct sim_migrator is the migration policy
 * (migrate/'s, in migrator.c): it is called after the placement policy with
 * the same view and the same actions, plus sim_move_worker().
 *
 * Progress: with cfg.curves.on every running job reports a sample of its
 * learning curve (sim/progress_model.h) every cfg.curves.interval seconds
 * of virtual time, on a grid shared by all jobs (one wake-up per grid
 * point while anything runs), into a struct mig_progress of its own; its
 * class and fraction of steps then show in sim_running_view() as the
 * controller passes them to gang/round.h.
 *
 * Ownership: sim_run() owns everything it allocates and frees it before
 * returning, except the result, which sim_result_release() frees.
 */
#ifndef DRAKE_SIM_SIM_H
#define DRAKE_SIM_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "gang/cluster.h"
#include "gang/elastic.h"
#include "gang/scale.h"
#include "gang/tiresias.h"
#include "migrate/progress.h"
#include "sim/evq.h"
#include "sim/model.h"
#include "sim/pollux_apps.h"
#include "sim/progress_model.h"
#include "sim/trace.h"

struct job_resize_costs;

enum sim_job_state { SIM_JOB_FUTURE, SIM_JOB_WAITING, SIM_JOB_RUNNING, SIM_JOB_DONE };

struct sim_job {
	const struct sim_trace_job *t;
	const struct sim_papp *app; /* a Pollux job's application, else NULL */
	struct drake_gang_req req;  /* want_workers = initial size W0 */
	int max_workers;
	enum sim_job_state state;
	double submit, start, finish;
	double work_total, work_done, rate, last_update;
	uint32_t gen;
	int n_ps, n_workers, cap_workers;
	int *ps_node;     /* n_ps entries once placed */
	int *worker_node; /* n_workers entries (slots); [0] is worker 0 */
	/* per slot: the worker's index, as the controller names its pods.
	 * Slots stay in index order; a removal leaves a gap in the indexes
	 * (the controller deletes that pod, the others keep theirs) and an
	 * addition takes the lowest index free (the controller ungates the
	 * lowest gated worker). */
	int *worker_index;
	int pods_bound; /* default policy: pods placed so far */
	bool ever_partial;
	bool never_fits;
	int scale_events;
	double last_scaled; /* start, then every change of size */
	int shrunk_for;     /* the job it last gave workers to, or -1 */
	/* progress and migration */
	double work_orig;          /* work_total before any pause was charged */
	double pause_end;          /* the latest rescale pause runs to here */
	double pause_work;         /* and was charged this much work */
	double pause_len;          /* over this many seconds */
	int preemptions;           /* times stopped and sent back to wait */
	int pauses;                /* stops charged at distinct instants: starts and resumes (a
	                              Pollux job's), changes of size, moves; one that restarts a
	                              running stop counts, rounds of one instant count once */
	double paused_at;          /* when the latest stop was charged; -1 never */
	struct sim_curve curve;    /* drawn for every job, reported with curves.on */
	struct mig_progress *prog; /* its samples (curves.on), else NULL */
	int64_t last_step;         /* latest reported step */
	double slow_at;            /* fraction done when first slowing/converged, -1 never */
	int *moves;                /* per worker slot, like worker_node: moves so far */
	double *moved_at;          /* per worker slot: time of its latest move, -1 never */
	double service;            /* attained service: GPU-seconds run */
	/* a Pollux job's reports: its rate (fraction of its work per second)
	 * at each size and spread it ran at for a report interval (sim_observe) */
	struct drake_speed_obs obs[DRAKE_SPEED_MAX_OBS];
	int n_obs;
	/* what a change of its size costs it: its kind's (kind/registry.h),
	 * zero without a kind (model.speed.rescale_pause) */
	struct drake_change_cost cost;
};

struct sim_config {
	/* cluster: nodes and node_gpus 0 go by the trace (sim_cluster_shape) */
	int nodes;
	int node_gpus;
	int64_t node_cpu_milli;
	int64_t node_mem_bytes;
	const struct sim_nodes *node_list; /* overrides the shape when set */
	/* a Pollux trace's applications, its jobs bound to them
	 * (sim_pollux_bind); NULL for other traces */
	const struct sim_papps *apps;
	/* trace handling */
	double time_scale; /* multiply submission times */
	size_t max_jobs;   /* 0: all */
	/* policy knobs: drake's and DRAGON's rules' (scale.speed is set from
	 * model.speed at run time; DRAGON's take starve_after and idle_after) */
	struct drake_scale_opts scale;
	/* Tiresias' (policy_tiresias.c): its 2D-LAS queues, how often it
	 * decides and what each (re)start costs; the Pollux artifact's by
	 * default (60 s, 30 s) */
	struct drake_las_opts las;
	double tiresias_interval;
	double tiresias_restart;
	uint64_t seed;
	bool progress; /* log progress lines on long runs (nothing to do with curves) */
	struct sim_model model;
	/* learning curves and the progress classes fed from them */
	struct sim_curve_opts curves;
	struct mig_progress_opts prog;
	/* A job whose trace row names a kind (sim_trace_job.kind, or
	 * sim_kind_mix) is charged that kind's cost on every change of its
	 * size: resize_costs' (NULL: the kind's measured one). drake's policy
	 * is told each job's cost unless policy_blind (then it believes every
	 * job pays model.speed.rescale_pause, as before jobs had kinds). */
	const struct job_resize_costs *resize_costs;
	bool policy_blind;
	/* Each running job reports its steps against its total, as a trainer
	 * does through drake's POST /v1/progress (sim_running_view,
	 * sim_observe); false: no job reports, and drake's policy weighs a
	 * change by a job's age and its default speed model. */
	bool progress_reports;
	/* drake's policy takes a job that reports no progress to run what the
	 * finished jobs' attained service says is left (gang/history.h), as
	 * drake serve does: sim_history; false: its age. */
	bool history;
};

void sim_config_defaults(struct sim_config *c);
/* The identical nodes a run builds for a trace of this kind: c's, or by
 * the trace when 0: 64 nodes for ITP, 32 for gang, 16 for Pollux (the
 * artifact's cluster); 8 GPUs a node, 4 for Pollux. */
void sim_cluster_shape(const struct sim_config *c, enum sim_trace_kind kind, int *nodes,
                       int *node_gpus);
/* How many of a trace's n jobs a run replays: c->max_jobs of them, or all. */
size_t sim_config_jobs(const struct sim_config *c, size_t n);

struct sim;

struct sim_policy {
	const char *name;
	drake_err (*init)(struct sim *s, void **state);
	void (*release)(void *state);
	/* Called after each batch of events at s's current time. */
	drake_err (*decide)(struct sim *s, void *state);
};

struct sim_migrator {
	const char *name;
	drake_err (*decide)(struct sim *s, void *state);
	void *state;
};

extern const struct sim_policy sim_policy_default;
extern const struct sim_policy sim_policy_dragon;
extern const struct sim_policy sim_policy_drake;
extern const struct sim_policy sim_policy_tiresias;
/* a bound, not a policy: drake's round in the order of least remaining
 * work, which it reads from the sim's truth (policy_oracle.c) */
extern const struct sim_policy sim_policy_oracle;
extern const struct sim_policy sim_policy_optimus;
const struct sim_policy *sim_policy_find(const char *name);

/* A sample of the cluster's GPUs over time: busy (running jobs) and held
 * by pods of jobs that are not running (partial allocations). */
struct sim_sample {
	double t;
	int64_t busy, held;
};

struct sim_result {
	const char *policy;
	size_t jobs, finished, never_fit;
	double *jct;   /* finished jobs, sorted */
	double *queue; /* start - submit, finished jobs */
	double mean_jct, median_jct, p95_jct, mean_queue, makespan;
	double first_submit, last_finish;
	double gpu_util;       /* busy GPU-seconds / (GPUs * makespan) */
	double goodput_util;   /* trace GPU-seconds (duration x GPUs) / (GPUs * makespan) */
	double held_gpu_hours; /* GPU-hours held idle by partial allocations */
	int64_t total_gpus;
	size_t ever_partial;
	bool deadlocked;
	size_t deadlock_jobs;
	int64_t deadlock_gpus;
	size_t scale_up_events, scale_down_events;
	size_t moves;         /* sim_move_worker calls */
	size_t preemptions;   /* sim_preempt calls */
	size_t decisions;     /* policy calls, re-decisions at the same instant included */
	size_t rounds_capped; /* instants where decisions did not settle within the cap */
	double policy_cpu_s, policy_cpu_max_s;
	struct sim_sample *samples;
	size_t n_samples;
	/* per job, trace order: submit, start (-1 never), finish (-1 never) */
	double *job_submit, *job_start, *job_finish;
	int *job_gpus;
	/* per job: its curve converges early; fraction done when first
	 * classed slowing or converged (-1 never, or curves off) */
	bool *job_early;
	double *job_slow_at;
	int *job_pauses; /* per job: sim_job.pauses */
	/* finished jobs split by curve (the same split with curves off) */
	size_t early_done, late_done;
	double mean_jct_early, mean_jct_late;
	size_t flagged_early, flagged_late; /* jobs ever classed slow, by curve */
};

drake_err sim_run(const struct sim_config *cfg, const struct sim_trace *trace,
                  const struct sim_policy *policy, const struct sim_migrator *mig,
                  struct sim_result *out, char *msg, size_t mlen) DRAKE_MUST_CHECK;
void sim_result_release(struct sim_result *r);

/* --- the view and the actions policies use --- */

const struct sim_config *sim_cfg(const struct sim *s);
double sim_now(const struct sim *s);
struct drake_cluster *sim_cluster(struct sim *s);
struct sim_job *sim_job(struct sim *s, int j);
/* Waiting jobs in FIFO order (submit time, then trace order). */
const int *sim_waiting(const struct sim *s, size_t *n);
/* Running jobs in admission order. */
const int *sim_running(const struct sim *s, size_t *n);
/* Jobs that arrived in the current batch, in trace order. */
const int *sim_arrived(const struct sim *s, size_t *n);
uint64_t sim_rand(struct sim *s);

/* Starts a waiting job on a plan (charges the cluster). */
drake_err sim_start(struct sim *s, int j, const struct drake_plan *p) DRAKE_MUST_CHECK;
/* Binds one pod of a waiting job (default policy), a PS or a worker; when
 * the last is bound the job starts. Bound pods of a job that is not running
 * hold their resources (a partial allocation). */
drake_err sim_bind_pod(struct sim *s, int j, bool ps, int node) DRAKE_MUST_CHECK;
/* Removes worker `slot` (never 0; the slots after it move down, their
 * indexes kept) / adds a worker on node at the lowest index free (slotted
 * in index order). Call sim_rescaled() once after a batch of changes to
 * one job (grew: it gained workers, else lost them): it stops the job for
 * its cost of that change (sim_job.cost, else the model's rescale_pause). */
void sim_remove_worker(struct sim *s, int j, int slot);
drake_err sim_add_worker(struct sim *s, int j, int node) DRAKE_MUST_CHECK;
drake_err sim_rescaled(struct sim *s, int j, bool grew) DRAKE_MUST_CHECK;
/* Moves a worker to another node (for a migration policy): instantaneous
 * apart from its job's rescale pause, which it is charged. Counts the move
 * on the slot (moves[], moved_at[]); it is not a change of size, so
 * last_scaled and the scale counters stay. */
drake_err sim_move_worker(struct sim *s, int j, int slot, int node) DRAKE_MUST_CHECK;
/* Stops running job j and sends it back to wait (a preemption): its pods
 * leave, the work it has done stays (it resumes from there), its place in
 * the waiting list is its FIFO place, and the part of a pause not yet spent
 * is given back (a restart replaces it). Its start stays its first. */
drake_err sim_preempt(struct sim *s, int j) DRAKE_MUST_CHECK;
/* Charges running job j a restart of `seconds` (no progress for that long
 * at its rate), as the rescale pause does but of its own length. */
drake_err sim_restart_pause(struct sim *s, int j, double seconds) DRAKE_MUST_CHECK;
/* Jobs in the run (the trace's, after --max-jobs): job ids are 0..n-1. */
size_t sim_job_count(const struct sim *s);
/* Workers added plus removed by the placement policy so far. */
size_t sim_scale_count(const struct sim *s);
/* Asks for a decide() call at time t (>= now). */
drake_err sim_wake_at(struct sim *s, double t) DRAKE_MUST_CHECK;
/* For a policy that decides every `interval` seconds, at its multiples
 * (the first at one interval, as Pollux's artifact does): when now is one
 * not decided yet (*decided remembers the last), calls decide_now(s, arg);
 * then, while any job waits or runs, asks to be woken at the next. */
drake_err sim_every(struct sim *s, double interval, double *decided,
                    drake_err (*decide_now)(struct sim *s, void *arg), void *arg) DRAKE_MUST_CHECK;
/* Applies scale ops from gang/ (job = index into ids, the running jobs the
 * views were built from). Removals go highest slot first, so a removal
 * never moves a slot still to be removed; each touched job is rescaled
 * once. */
drake_err sim_apply_removals(struct sim *s, const int *ids, struct drake_scale_op *ops,
                             size_t n_ops) DRAKE_MUST_CHECK;
drake_err sim_apply_additions(struct sim *s, const int *ids, const struct drake_scale_op *ops,
                              size_t n_ops) DRAKE_MUST_CHECK;
/* The slot of job j's worker with index idx, or -1. */
int sim_worker_slot(const struct sim_job *j, int idx);
/* Fills a drake_running_job view of running job j (arrays borrowed). The
 * policy sees what the cluster would: with curves, progress is the
 * fraction of steps of its latest sample (-1 before one) and slow is its
 * class being slowing or converged; without them, its fraction of work
 * done when jobs report progress (cfg.progress_reports), else unknown
 * (-1), and it is not slow. */
void sim_running_view(struct sim *s, int j, struct drake_running_job *out);

/* A job's progress report as drake's controller would take it: once it
 * has run interval seconds at its current size and spread (its first
 * report after the change), the rate it ran at there (a Pollux job's
 * measured one, another's its speed model's) is kept in its obs (one
 * entry per size and spread, the latest; the oldest goes when they are
 * full). No-op unless jobs report progress (cfg.progress_reports). */
void sim_observe(struct sim *s, int j, double interval);
/* The attained service of the latest DRAKE_HISTORY_MAX jobs that finished
 * (any order; empty with cfg.history false), as drake serve keeps it for
 * its round (drake_scale_opts.history). Borrowed until the next event. */
struct drake_history sim_history(const struct sim *s);

/* Views of every running job, in admission order, with a copy of their ids
 * (the running list changes as jobs start). Caller frees both. */
drake_err sim_running_views(struct sim *s, struct drake_running_job **v, int **ids,
                            size_t *n) DRAKE_MUST_CHECK;

#endif
