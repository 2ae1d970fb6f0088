/*
 * pollux_apps.h - the per-application measurements of the Pollux artifact
 * (traces/pollux/apps/<app>/, see traces/README.md), read for `drake sim
 * --apps DIR` so that a Pollux workload's jobs run at measured speeds:
 *
 *   scalability.csv    num_nodes,num_replicas,local_bsz,step_time,sync_time
 *   placements.csv     placement,local_bsz,step_time,sync_time
 *                      (placement: one digit per node, the replicas on it)
 *   validation-B.csv   progress,iteration,metric,grad_sqr,grad_var
 *                      (the training curve at total batch size B, per epoch)
 *
 * Every file is checked whole: its header, every field (finite numbers >= 0,
 * times > 0, integers where counts are meant, placements of digits), the
 * row limits below; the first problem fails the load with file:line and the
 * field. The parse functions work on buffers (tests, fuzzing); the loader
 * reads DIR/<app>/ for each application a workload names.
 *
 * Two facts per application are not in the files but in the artifact's
 * simulator/applications.py, and are kept here in a table: the epochs a job
 * trains (bert 2, cifar10 100, deepspeech2 80, imagenet 90, ncf 10, yolov3
 * 50; no application has a target metric there, so a job is done after
 * that many epochs) and yolov3's largest local batch, 8. An application not
 * in the table trains as many epochs as its shortest curve has, with the
 * largest local batch its placements measured, as the artifact's defaults.
 *
 * Ownership: a loaded struct sim_papps owns its arrays;
 * sim_papps_release frees them (safe on a zeroed or released struct).
 */
#ifndef DRAKE_SIM_POLLUX_APPS_H
#define DRAKE_SIM_POLLUX_APPS_H

#include <stddef.h>

#include "common/err.h"
#include "sim/trace.h"

#define SIM_PAPP_MAX_BYTES     (8u << 20) /* per file */
#define SIM_PAPP_MAX_ROWS      100000     /* per file */
#define SIM_PAPP_MAX_CURVES    32         /* validation files per application */
#define SIM_PAPP_MAX_NODES     16         /* digits of a placement, num_nodes */
#define SIM_PAPP_MAX_REPLICAS  1024       /* num_replicas of a measurement */
#define SIM_PAPP_MAX_APPS      64         /* applications of one workload */
#define SIM_PAPP_MAX_LOCAL_BSZ 1e7        /* local_bsz */
#define SIM_PAPP_MAX_SECONDS   1e6        /* step_time, sync_time */

/* One measurement: replicas over nodes at a local batch size, the seconds
 * of one step and of its gradient synchronisation. */
struct sim_papp_point {
	int nodes, replicas;
	double local_bsz, step, sync;
};

/* A measured placement: its digits, rotated to the smallest (the artifact
 * treats rotations as one placement), and a point. */
struct sim_papp_placement {
	char layout[SIM_PAPP_MAX_NODES + 1];
	struct sim_papp_point p;
};

struct sim_papp_epoch {
	double progress, iteration, metric;
	double grad_sqr, grad_var; /* the gradient's statistics during the epoch */
};

struct sim_papp_curve {
	int batch; /* total batch size, from the file's name */
	struct sim_papp_epoch *e;
	size_t n;
};

struct sim_papp {
	char name[SIM_TRACE_MAX_APP + 1];
	/* placements.csv, sorted by layout then local_bsz */
	struct sim_papp_placement *pl;
	size_t n_pl;
	/* placements averaged per (nodes, replicas, local_bsz), then
	 * scalability.csv; sorted by nodes, replicas, local_bsz */
	struct sim_papp_point *pt;
	size_t n_pt;
	struct sim_papp_curve *curve; /* sorted by batch */
	size_t n_curve;
	int epochs;                          /* a job is done after this many */
	double min_local_bsz, max_local_bsz; /* the artifact's bounds */
	int max_replicas;                    /* the most replicas measured */
};

struct sim_papps {
	struct sim_papp *app;
	size_t n;
};

/* Parse one file into a (appending; `file` names it in messages). A
 * validation curve's batch size is given (the loader takes it from the
 * file's name). */
drake_err sim_papp_parse_scalability(const char *buf, size_t len, const char *file,
                                     struct sim_papp *a, char *msg, size_t mlen) DRAKE_MUST_CHECK;
drake_err sim_papp_parse_placements(const char *buf, size_t len, const char *file,
                                    struct sim_papp *a, char *msg, size_t mlen) DRAKE_MUST_CHECK;
drake_err sim_papp_parse_curve(const char *buf, size_t len, const char *file, int batch,
                               struct sim_papp *a, char *msg, size_t mlen) DRAKE_MUST_CHECK;
/* After the files: sorts, averages the placements into points, sets the
 * epochs and bounds, and checks what the model needs (a placement, a
 * curve, every curve long enough for the epochs, no batch size twice).
 * `dir` names the application's folder in messages. */
drake_err sim_papp_finish(struct sim_papp *a, const char *dir, char *msg,
                          size_t mlen) DRAKE_MUST_CHECK;
void sim_papp_release(struct sim_papp *a);

/* Loads DIR/<name>/ for each distinct application the names list (n of
 * them, duplicates allowed). */
drake_err sim_papps_load(const char *dir, const char *const *names, size_t n, struct sim_papps *out,
                         char *msg, size_t mlen) DRAKE_MUST_CHECK;
/* The index of the application called name, or -1. */
int sim_papps_find(const struct sim_papps *apps, const char *name);
void sim_papps_release(struct sim_papps *apps);

/* The placement written as digits (one per node, zeros dropped), rotated
 * to the smallest rotation, into out (SIM_PAPP_MAX_NODES + 1 bytes); -1
 * when it has more than SIM_PAPP_MAX_NODES non-empty nodes or a count
 * over 9. Returns its node count. */
int sim_papp_layout(const int *per_node, int n, char *out);

#endif
