/*
 * sim.c - `drake sim`: flags to config, load the trace and nodes, run each
 * policy, print the tables, write CSVs and plots. Every knob of the job
 * model and of the policies is a flag (with a DRAKE_SIM_* environment
 * fallback).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/commands.h"
#include "cmd/migrate_flags.h"
#include "cmd/scale_flags.h"
#include "common/flags.h"
#include "common/log.h"
#include "kind/registry.h"
#include "sim/decision_replay.h"
#include "sim/jobs_json.h"
#include "sim/kind_mix.h"
#include "sim/migrator.h"
#include "sim/placement_cli.h"
#include "sim/pollux_apps.h"
#include "sim/pollux_model.h"
#include "sim/report.h"
#include "sim/sim.h"

#define MAX_POLICIES 8

struct cli {
	const char *trace, *nodes_file, *apps_dir, *policies, *out, *tag, *log_level;
	struct scale_flag_vals scale;
	struct migrate_flag_vals mig;
	bool backfill, migrate;
	int nodes, node_gpus, seed, first_job, max_jobs, ps_count, gpus_per_worker;
	double node_cpu, ps_cpu, worker_cpu, time_scale;
	size_t node_mem, ps_mem, worker_mem;
	bool plots, progress, print_jobs;
	/* --kind-mix, --resize-cost, --policy-costs */
	const char *kind_mix, *resize_cost;
	bool policy_costs, progress_reports, history;
	struct sim_kind_mix mix;
	struct job_resize_costs costs;
	struct sim_config cfg;
};

/* A Pollux workload's applications: loaded from --apps for the names its
 * jobs give, and its jobs bound to them (their work, max size and tuned
 * run time). 0, or the exit code with the reason on stderr. */
static int load_apps(struct cli *c, struct sim_trace *trace, const struct sim_nodes *nodes,
                     struct sim_papps *apps)
{
	char msg[512];
	if (!c->apps_dir || !*c->apps_dir) {
		fprintf(stderr,
		        "drake sim: %s is a Pollux workload: --apps DIR must name its "
		        "applications' measurements (traces/pollux/apps)\n",
		        c->trace);
		return 2;
	}
	const char **names = malloc((trace->n + 1) * sizeof(*names));
	if (!names) {
		fprintf(stderr, "drake sim: out of memory\n");
		return 1;
	}
	for (size_t i = 0; i < trace->n; i++)
		names[i] = trace->jobs[i].app;
	drake_err err = sim_papps_load(c->apps_dir, names, trace->n, apps, msg, sizeof(msg));
	free(names);
	int node_gpus = 0, n;
	if (nodes->n > 0) {
		for (size_t i = 0; i < nodes->n; i++)
			if (nodes->rows[i].gpu > node_gpus)
				node_gpus = nodes->rows[i].gpu;
	} else {
		sim_cluster_shape(&c->cfg, trace->kind, &n, &node_gpus);
	}
	if (!err && (err = sim_pollux_bind(trace, c->trace, apps, node_gpus, msg, sizeof(msg))))
		sim_papps_release(apps);
	if (err) {
		fprintf(stderr, "drake sim: %s\n", msg);
		return 1;
	}
	/* --pollux-work-scale scales the tuned run time with the work (the
	 * goodput column counts it) */
	for (size_t i = 0; i < trace->n; i++) {
		double d = ceil((double)trace->jobs[i].duration * c->cfg.model.pollux_work_scale);
		trace->jobs[i].duration = d < 1 ? 1 : (int64_t)d;
	}
	c->cfg.apps = apps;
	return 0;
}

/* The trace, and the node list with --nodes-file, loaded for a run or for
 * --print-jobs, and a Pollux workload's applications; 0, or the exit code
 * with the reason on stderr (nothing is left to release then). nodes and
 * apps must be zeroed. */
static int load_inputs(struct cli *c, const char *trace_format, const char *trace_columns,
                       struct sim_trace *trace, struct sim_nodes *nodes, struct sim_papps *apps)
{
	char msg[512];
	struct sim_trace_format tf;
	if (sim_trace_format_parse(trace_format, trace_columns, &tf, msg, sizeof(msg))) {
		fprintf(stderr, "drake sim: %s\n", msg);
		return 2;
	}
	if (sim_trace_load_as(c->trace, &tf, trace, msg, sizeof(msg))) {
		fprintf(stderr, "drake sim: %s\n", msg);
		return 1;
	}
	sim_trace_skips_print(stderr, c->trace, trace);
	if (sim_trace_skip(trace, (size_t)c->first_job, msg, sizeof(msg))) {
		fprintf(stderr, "drake sim: --first-job: %s: %s\n", c->trace, msg);
		sim_trace_release(trace);
		return 2;
	}
	if (sim_kind_resolve(trace, c->trace, msg, sizeof(msg))) {
		fprintf(stderr, "drake sim: %s\n", msg);
		sim_trace_release(trace);
		return 1;
	}
	sim_kind_mix_apply(&c->mix, trace);
	if (c->nodes_file && *c->nodes_file) {
		if (sim_nodes_load(c->nodes_file, nodes, msg, sizeof(msg))) {
			fprintf(stderr, "drake sim: %s\n", msg);
			sim_trace_release(trace);
			return 1;
		}
		c->cfg.node_list = nodes;
	}
	if (trace->kind == SIM_TRACE_POLLUX) {
		int rc = load_apps(c, trace, nodes, apps);
		if (rc) {
			c->cfg.node_list = NULL;
			sim_trace_release(trace);
			sim_nodes_release(nodes);
			return rc;
		}
	}
	return 0;
}

/* --print-jobs: the trace (and node list) loaded as for a run, the job list
 * written, nothing simulated. */
static int print_jobs(struct cli *c, const char *trace_format, const char *trace_columns)
{
	char msg[512];
	struct sim_trace trace;
	struct sim_nodes nodes = {0};
	struct sim_papps apps = {0};
	int rc = load_inputs(c, trace_format, trace_columns, &trace, &nodes, &apps);
	if (rc)
		return rc;
	if (sim_jobs_json(stdout, c->trace, &c->cfg, &trace, msg, sizeof(msg))) {
		fprintf(stderr, "drake sim: %s\n", msg);
		rc = 1;
	}
	c->cfg.node_list = NULL;
	c->cfg.apps = NULL;
	sim_trace_release(&trace);
	sim_nodes_release(&nodes);
	sim_papps_release(&apps);
	return rc;
}

int sim_main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "placement") == 0)
		return placement_cli_main(argc - 1, argv + 1);
	struct cli c;
	memset(&c, 0, sizeof(c));
	sim_config_defaults(&c.cfg);
	struct sim_model *m = &c.cfg.model;
	struct sim_curve_opts *cv = &c.cfg.curves;
	const char *trace_format = NULL, *trace_columns = NULL, *replay = NULL;
	const struct flag flags[] = {
	    {"replay", "DRAKE_SIM_REPLAY", FLAG_STRING, &replay, "",
	     "a --decision-log FILE of drake serve: decide every logged round again with the "
	     "round's code and compare with what was logged; prints each differing round's "
	     "first difference and a summary, exits 1 on any difference or malformed line "
	     "(no trace is run; a partial last line and rounds with KubeShare shares are "
	     "skipped and counted)"},
	    {"trace", "DRAKE_SIM_TRACE", FLAG_STRING, &c.trace, NULL,
	     "trace CSV (ITP, knavigator gang or Pollux workload format, or your own; required "
	     "unless --replay)"},
	    {"trace-format", "DRAKE_SIM_TRACE_FORMAT", FLAG_STRING, &trace_format, "auto",
	     "auto (the header picks itp, gang or pollux; columns with --trace-columns), itp, "
	     "gang, pollux, columns"},
	    {"apps", "DRAKE_SIM_APPS", FLAG_STRING, &c.apps_dir, "",
	     "a Pollux workload's application measurements: DIR/<application>/ holds "
	     "scalability.csv, placements.csv and validation-<batch>.csv (traces/pollux/apps)"},
	    {"trace-columns", "DRAKE_SIM_TRACE_COLUMNS", FLAG_STRING, &trace_columns, "",
	     "your CSV: submit=COL,duration=COL,gpus=COL[,id=COL] (COL:m, COL:h: minutes, hours)"},
	    {"nodes-file", "DRAKE_SIM_NODES_FILE", FLAG_STRING, &c.nodes_file, "",
	     "node list CSV (Alibaba 2023 format) instead of identical nodes"},
	    {"nodes", NULL, FLAG_INT, &c.nodes, "0",
	     "identical nodes (0: 64 for ITP traces, 32 for gang traces, 16 for Pollux)"},
	    {"node-gpus", NULL, FLAG_INT, &c.node_gpus, "0",
	     "GPUs per node (0: 8, 4 for Pollux workloads)"},
	    {"node-cpu", NULL, FLAG_DOUBLE, &c.node_cpu, "96", "CPU cores per node"},
	    {"node-mem", NULL, FLAG_SIZE, &c.node_mem, "768Gi", "memory per node"},
	    {"policies", "DRAKE_SIM_POLICIES", FLAG_STRING, &c.policies, "default,dragon,drake",
	     "comma-separated policies to run: default, dragon, drake, tiresias, optimus "
	     "(optimus: Pollux workloads only), oracle (a bound, not a policy: drake's round "
	     "told every job's run time, shortest remaining work first; a cluster cannot "
	     "run it)"},
	    {"out", "DRAKE_SIM_OUT", FLAG_STRING, &c.out, "bench/results",
	     "directory for CSV files and plots"},
	    {"tag", NULL, FLAG_STRING, &c.tag, "", "prefix for output file names"},
	    {"plots", NULL, FLAG_BOOL, &c.plots, "true", "draw PNG plots with gnuplot"},
	    {"progress", NULL, FLAG_BOOL, &c.progress, "true", "log progress lines on long runs"},
	    {"seed", "DRAKE_SIM_SEED", FLAG_INT, &c.seed, "1",
	     "random seed (pod interleaving, tie breaks, DRAGON's node order)"},
	    {"first-job", NULL, FLAG_INT, &c.first_job, "0",
	     "replay from this job on (0-based, in submission order), on an empty cluster"},
	    {"max-jobs", NULL, FLAG_INT, &c.max_jobs, "0",
	     "replay only the first N jobs (from --first-job; 0: all)"},
	    {"time-scale", NULL, FLAG_DOUBLE, &c.time_scale, "1",
	     "multiply submission times (0.5 doubles the arrival rate)"},
	    {"ps-count", NULL, FLAG_INT, &c.ps_count, "1", "parameter servers per job"},
	    {"ps-cpu", NULL, FLAG_DOUBLE, &c.ps_cpu, "4", "CPU cores per PS"},
	    {"ps-mem", NULL, FLAG_SIZE, &c.ps_mem, "16Gi", "memory per PS"},
	    {"gpus-per-worker", NULL, FLAG_INT, &c.gpus_per_worker, "1",
	     "GPUs per worker for ITP jobs (gang traces give their own)"},
	    {"worker-cpu-per-gpu", NULL, FLAG_DOUBLE, &c.worker_cpu, "4",
	     "worker CPU cores per GPU"},
	    {"worker-mem-per-gpu", NULL, FLAG_SIZE, &c.worker_mem, "32Gi", "worker memory per GPU"},
	    {"min-frac", NULL, FLAG_DOUBLE, &m->min_frac, "0.5",
	     "min-instances = ceil(initial workers * this)"},
	    {"max-factor", NULL, FLAG_DOUBLE, &m->max_factor, "2",
	     "max-instances = floor(initial workers * this)"},
	    {"gang-elastic", NULL, FLAG_BOOL, &m->gang_elastic, "false",
	     "let gang-trace jobs scale too (they are rigid by default)"},
	    {"pollux-rigid", NULL, FLAG_BOOL, &m->pollux_rigid, "false",
	     "Pollux jobs keep their tuned num_replicas under every policy (by default the "
	     "elastic ones scale them from 1 to twice that)"},
	    {"pollux-iterations", NULL, FLAG_BOOL, &m->pollux_iterations, "false",
	     "a Pollux job's work is its validation curve's iterations at its batch size (by "
	     "default the artifact's count: the curves' progress at the efficiency of that "
	     "batch)"},
	    {"pollux-work-scale", NULL, FLAG_DOUBLE, &m->pollux_work_scale, "1",
	     "multiply every Pollux job's work (bench-replay's compression: 0.01 runs each job "
	     "100x shorter at the measured speeds)"},
	    {"tiresias-interval", NULL, FLAG_DURATION, &c.cfg.tiresias_interval, "60s",
	     "Tiresias and Optimus decide every this often (the Pollux artifact's interval)"},
	    {"tiresias-restart", NULL, FLAG_DURATION, &c.cfg.tiresias_restart, "30s",
	     "what each start, resume or resize of a job costs under Tiresias and Optimus (the "
	     "artifact's 30 s)"},
	    {"tiresias-threshold", NULL, FLAG_DOUBLE, &c.cfg.las.threshold[0], "57600",
	     "Tiresias' queue threshold in GPU-seconds (the artifact's 16 GPU-hours)"},
	    {"tiresias-promote", NULL, FLAG_DOUBLE, &c.cfg.las.promote_knob, "0",
	     "Tiresias' PROMOTEKNOB: a demoted job waiting this many times its run time "
	     "returns to the top queue; 0 never (the artifact)"},
	    {"backfill", NULL, FLAG_BOOL, &c.backfill, "true",
	     "drake starts jobs behind one that does not fit"},
	    {"log-level", "DRAKE_LOG_LEVEL", FLAG_STRING, &c.log_level, "info",
	     "debug, info, warn, error"},
	    {"learning-curves", NULL, FLAG_BOOL, &cv->on, "false",
	     "jobs report a learning curve's samples; their progress classes (slowing, "
	     "converged) reach the policy as the controller's do"},
	    {"progress-interval", NULL, FLAG_DURATION, &cv->interval, "60s",
	     "learning curves: virtual time between a job's samples"},
	    {"converge-frac", NULL, FLAG_DOUBLE, &cv->converge_frac, "0.5",
	     "learning curves: share of jobs that converge early"},
	    {"tau-early-min", NULL, FLAG_DOUBLE, &cv->tau_early_min, "0.02",
	     "learning curves: tau range (a fraction of the work) of early-converging jobs, low "
	     "end"},
	    {"tau-early-max", NULL, FLAG_DOUBLE, &cv->tau_early_max, "0.05",
	     "learning curves: tau range of early-converging jobs, high end"},
	    {"tau-late-min", NULL, FLAG_DOUBLE, &cv->tau_late_min, "0.3",
	     "learning curves: tau range of jobs that keep improving, low end"},
	    {"tau-late-max", NULL, FLAG_DOUBLE, &cv->tau_late_max, "1",
	     "learning curves: tau range of jobs that keep improving, high end"},
	    {"curve-max", NULL, FLAG_DOUBLE, &cv->a_max, "0.9",
	     "learning curves: the accuracy every curve tends to"},
	    {"curve-resolution", NULL, FLAG_DOUBLE, &cv->resolution, "0.0001",
	     "learning curves: reported accuracy is a multiple of this (an evaluation set of "
	     "10,000 examples); 0: exact"},
	    {"curve-noise", NULL, FLAG_DOUBLE, &cv->noise, "0",
	     "learning curves: standard deviation of the noise on a reported value"},
	    {"print-jobs", NULL, FLAG_BOOL, &c.print_jobs, "false",
	     "print the jobs the replay would run (the model's PS, workers, min/max, requests "
	     "and work) and the speed model as JSON on stdout, and exit without simulating"},
	    {"kind-mix", NULL, FLAG_STRING, &c.kind_mix, "",
	     "give the jobs whose trace row names no kind (a fixed layout's optional last column "
	     "\"kind\") a job kind by share, KIND=SHARE comma-separated (\"pytorchjobs=0.5,"
	     "tfjobs=0.5\"), interleaved in trace order; each resize of a job then costs its "
	     "kind's (--resize-cost), a job without a kind --rescale-pause"},
	    {"resize-cost", NULL, FLAG_STRING, &c.resize_cost, "",
	     "what one resize costs a job of a kind, KIND=SHRINK[/GROW] comma-separated, as drake "
	     "serve's --resize-cost (\"\": each kind's measured cost: tfjobs 1.9s/2.3s, "
	     "pytorchjobs 18.1s/6.5s)"},
	    {"policy-costs", NULL, FLAG_BOOL, &c.policy_costs, "true",
	     "drake's policy is told each job's cost of a resize, as drake serve tells it; false: "
	     "it believes every job pays --rescale-pause, while the simulator still charges each "
	     "its kind's"},
	    {"progress-reports", NULL, FLAG_BOOL, &c.progress_reports, "true",
	     "each running job reports its steps against its total, as a trainer does through "
	     "drake serve's POST /v1/progress: drake's policy reads its fraction of work done "
	     "and the rate it ran at each size; false: no job reports them (the policy sees "
	     "sizes, age and attained service, and --learning-curves' samples when on)"},
	    {"history", NULL, FLAG_BOOL, &c.history, "true",
	     "drake's policy takes a job that reports no progress to have left the mean of what "
	     "the finished jobs that ran longer than it ran beyond its attained service, as "
	     "drake serve does; false: as long again as it has run"},
	    {"migrate", NULL, FLAG_BOOL, &c.migrate, "false",
	     "run migrate/'s overload policy after each placement decision (one move at a "
	     "time)"},
	};
	/* The scaling flags are drake serve's, one table for both. In the
	 * simulator the speed model is also how fast jobs really run. */
	struct flag all[sizeof(flags) / sizeof(flags[0]) + SCALE_FLAGS_N + MIGRATE_FLAGS_N];
	size_t nf = sizeof(flags) / sizeof(flags[0]);
	memcpy(all, flags, sizeof(flags));
	scale_flags(&c.scale, all + nf);
	nf += SCALE_FLAGS_N;
	/* The migration flags are drake serve's too: the thresholds of
	 * migrate/'s overload policy (--migrate) and of the progress classes
	 * (--learning-curves). */
	migrate_flags(&c.mig, all + nf);
	nf += MIGRATE_FLAGS_N;
	enum flags_outcome oc;
	char msg[512];
	if (flags_parse(all, nf, argc, argv, &oc, msg, sizeof(msg))) {
		fprintf(stderr, "drake sim: %s\n", msg);
		return 2;
	}
	if (oc == FLAGS_HELP) {
		printf("usage: drake sim --trace FILE [flags]\n"
		       "       drake sim --replay DECISION_LOG\n"
		       "       drake sim placement --nodes FILE --tasks FILE [flags]\n\n"
		       "Replays a trace through drake's own policy code in virtual time and\n"
		       "compares the policies. See sim/README.md for the model. The placement\n"
		       "study of GPU fragmentation is `drake sim placement --help`. --replay\n"
		       "decides the rounds of drake serve's --decision-log again and compares.\n\n"
		       "The repository's traces/ holds the public traces (traces/README.md):\n"
		       "  drake sim --trace traces/ms_itp_cluster03.csv --policies drake,dragon\n"
		       "  drake sim --trace traces/pollux/workloads-1.0/workload-1.csv "
		       "--apps traces/pollux/apps\n\n"
		       "Your own CSV: name its columns; others are ignored, bad rows skipped\n"
		       "and counted on stderr, rows sorted by submit time. For example:\n"
		       "  drake sim --trace jobs.csv "
		       "--trace-columns submit=start_ts,duration=run_min:m,gpus=num_gpus,id=name\n"
		       "\nflags:\n");
		flags_usage(stdout, all, nf);
		return 0;
	}
	enum drake_log_level lvl;
	if (drake_log_parse_level(c.log_level, &lvl)) {
		fprintf(stderr, "drake sim: bad --log-level %s\n", c.log_level);
		return 2;
	}
	drake_log_set_level(lvl);
	if (replay && *replay) {
		struct decision_replay_counts counts;
		return decision_replay(replay, stdout, &counts);
	}
	if (!c.trace || !*c.trace) {
		fprintf(stderr, "drake sim: --trace or --replay is required (see --help)\n");
		return 2;
	}
	if (scale_flags_finish(&c.scale, msg, sizeof(msg)) ||
	    migrate_flags_finish(&c.mig, msg, sizeof(msg)) ||
	    sim_curve_opts_check(cv, msg, sizeof(msg))) {
		fprintf(stderr, "drake sim: %s\n", msg);
		return 2;
	}
	job_resize_costs_default(&c.costs);
	if (sim_kind_mix_parse(c.kind_mix, &c.mix, msg, sizeof(msg))) {
		fprintf(stderr, "drake sim: --kind-mix: %s\n", msg);
		return 2;
	}
	if (job_resize_costs_parse(c.resize_cost, &c.costs, msg, sizeof(msg))) {
		fprintf(stderr, "drake sim: --resize-cost: %s\n", msg);
		return 2;
	}
	c.cfg.resize_costs = &c.costs;
	c.cfg.policy_blind = !c.policy_costs;
	c.cfg.progress_reports = c.progress_reports;
	c.cfg.history = c.history;
	c.cfg.prog = c.mig.progress;
	c.cfg.scale = c.scale.opts;
	c.cfg.scale.backfill = c.backfill;
	m->speed = c.scale.opts.speed;
	if (c.nodes < 0 || c.node_gpus < 0 || c.node_cpu <= 0 || c.ps_count < 0 ||
	    c.gpus_per_worker < 1 || c.time_scale <= 0 || c.first_job < 0 || c.max_jobs < 0 ||
	    m->min_frac <= 0 || m->min_frac > 1 || m->max_factor < 1 ||
	    !(m->pollux_work_scale > 0) || !(c.cfg.tiresias_interval > 0) ||
	    !(c.cfg.tiresias_restart >= 0) || !(c.cfg.las.threshold[0] > 0) ||
	    !(c.cfg.las.promote_knob >= 0)) {
		fprintf(stderr, "drake sim: a numeric flag is out of range (see --help)\n");
		return 2;
	}
	c.cfg.nodes = c.nodes;
	c.cfg.node_gpus = c.node_gpus;
	c.cfg.node_cpu_milli = (int64_t)(c.node_cpu * 1000);
	c.cfg.node_mem_bytes = (int64_t)c.node_mem;
	c.cfg.seed = (uint64_t)c.seed;
	c.cfg.max_jobs = (size_t)c.max_jobs;
	c.cfg.time_scale = c.time_scale;
	c.cfg.progress = c.progress;
	m->n_ps = c.ps_count;
	m->ps_cpu_milli = (int64_t)(c.ps_cpu * 1000);
	m->ps_mem_bytes = (int64_t)c.ps_mem;
	m->gpus_per_worker = c.gpus_per_worker;
	m->worker_cpu_milli_per_gpu = (int64_t)(c.worker_cpu * 1000);
	m->worker_mem_bytes_per_gpu = (int64_t)c.worker_mem;

	if (c.print_jobs)
		return print_jobs(&c, trace_format, trace_columns);

	const struct sim_policy *pol[MAX_POLICIES];
	size_t np = 0;
	char plist[256];
	snprintf(plist, sizeof(plist), "%s", c.policies);
	char *save = NULL;
	for (char *t = strtok_r(plist, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (np == MAX_POLICIES || !(pol[np] = sim_policy_find(t))) {
			fprintf(stderr,
			        "drake sim: unknown policy \"%s\" (default, dragon, drake, "
			        "tiresias, optimus)\n",
			        t);
			return 2;
		}
		if (pol[np] == &sim_policy_optimus && (!c.apps_dir || !*c.apps_dir)) {
			fprintf(stderr,
			        "drake sim: optimus needs a Pollux workload and its "
			        "applications (--apps): it predicts from their measurements\n");
			return 2;
		}
		np++;
	}

	struct sim_trace trace;
	struct sim_nodes nodes = {0};
	struct sim_papps apps = {0};
	int lrc = load_inputs(&c, trace_format, trace_columns, &trace, &nodes, &apps);
	if (lrc)
		return lrc;
	struct sim_result res[MAX_POLICIES];
	memset(res, 0, sizeof(res));
	int rc = 0;
	size_t done = 0;
	for (; done < np; done++) {
		log_info("sim_start", "policy=%s trace=%s first_job=%d jobs=%zu", pol[done]->name,
		         c.trace, c.first_job, sim_config_jobs(&c.cfg, trace.n));
		struct sim_migrator mig;
		struct sim_mig_state mst;
		sim_migrator_init(&mig, &mst, &c.mig.opts);
		if (sim_run(&c.cfg, &trace, pol[done], c.migrate ? &mig : NULL, &res[done], msg,
		            sizeof(msg))) {
			fprintf(stderr, "drake sim: %s\n", msg);
			rc = 1;
			break;
		}
	}
	if (done > 0) {
		char title[512];
		snprintf(title, sizeof(title), "%s: %zu jobs, %lld GPUs", c.trace, trace.n,
		         (long long)res[0].total_gpus);
		sim_report_table(stdout, title, res, done);
		if (cv->on || c.migrate)
			sim_report_progress(stdout, cv->on, c.migrate, res, done);
		if (sim_report_csv(c.out, c.tag, res, done, msg, sizeof(msg))) {
			fprintf(stderr, "drake sim: %s\n", msg);
			rc = 1;
		} else if (c.plots && sim_report_plots(c.out, c.tag, res, done, msg, sizeof(msg))) {
			log_warn("sim_plots", "msg=\"%s\"", msg);
		}
	}
	for (size_t i = 0; i < done; i++)
		sim_result_release(&res[i]);
	sim_trace_release(&trace);
	sim_nodes_release(&nodes);
	sim_papps_release(&apps);
	return rc;
}
