/*
 * serve_flags.h - `drake serve`'s flags: the options they parse into, their
 * table (with the scaling and migration tables drake sim shares) and the
 * checks of their values.
 */
#ifndef DRAKE_CMD_SERVE_FLAGS_H
#define DRAKE_CMD_SERVE_FLAGS_H

#include <stdbool.h>
#include <stddef.h>

#include "cmd/migrate_flags.h"
#include "cmd/scale_flags.h"
#include "common/err.h"
#include "common/flags.h"
#include "common/log.h"
#include "extender/server.h"
#include "gang/tiresias.h"
#include "kind/job.h"
#include "kind/registry.h"
#include "kube/leader.h"

/* Flags of serve_flags' own table, before the scaling and migration ones. */
#define SERVE_OWN_FLAGS_N 58
#define SERVE_FLAGS_N     (SERVE_OWN_FLAGS_N + SCALE_FLAGS_N + MIGRATE_FLAGS_N)

/* Everything drake serve's flags parse into. */
struct serve_opts {
	struct ext_server_config srv;
	const char *kubeconfig;
	double api_qps;
	int api_burst;
	int api_max_inflight;
	double api_timeout;
	size_t api_max_body;
	const char *log_level;
	bool reconcile;
	const char *cluster_domain;
	const char *kinds;       /* --kinds: "tfjobs,pytorchjobs" */
	const char *resize_cost; /* --resize-cost: "pytorchjobs=18s/6.5s,tfjobs=2s" */
	const char *gang_resource;
	const char *scheduler_name;
	const char *decision_log;
	size_t decision_log_max;
	const char *policy;        /* drake, dragon or tiresias */
	const char *las_threshold; /* --las-threshold: GPU-seconds, comma-separated */
	double las_interval;
	bool gang, strict_fifo, gang_pin, gang_watch_claims;
	size_t gang_max_unbound;
	double gang_backoff_min, gang_backoff_max;
	struct scale_flag_vals scale;
	struct migrate_flag_vals mig;
	bool migrate;
	double node_metrics;
	const char *progress_url, *progress_ca_file;
	bool leader_elect;
	struct leader_options lease;
	const char *leader_node;  /* the node this replica runs on (the chart: spec.nodeName) */
	double leader_node_grace; /* seconds it may be not Ready before the leader yields */
	const char *prioritize;   /* auto, true or false */
	size_t prioritize_window;

	/* Worked out from the flags by serve_flags_finish. */
	const struct job_kind *kind_list[JOB_KINDS_MAX]; /* --kinds */
	struct job_resize_costs resize_costs;            /* --resize-cost over the kinds' own */
	size_t nkinds;
	int policy_id;                /* enum drake_round_policy */
	struct drake_las_opts las;    /* --las-threshold's queues */
	bool prioritize_on;           /* --prioritize, auto resolved */
	enum drake_log_level log_lvl; /* --log-level */
};

/* Sets o to its defaults and fills out[0..SERVE_FLAGS_N) with every flag of
 * drake serve writing into o: its own, then the scaling and the migration
 * flags (drake sim's tables). */
void serve_flags(struct serve_opts *o, struct flag *out);

/* After flags_parse: checks the values' ranges and works out policy_id,
 * prioritize_on and log_lvl; EINVAL with msg naming the flag. */
drake_err serve_flags_finish(struct serve_opts *o, char *msg, size_t len) DRAKE_MUST_CHECK;

#endif
