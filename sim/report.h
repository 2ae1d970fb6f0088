/*
 * report.h - what `drake sim` prints and writes: a table per run on stdout,
 * CSV files (summary, per job, utilisation over time) and PNG plots drawn
 * by gnuplot (utilisation over time, JCT distribution per policy).
 *
 * Functions write files under dir (created if missing) and allocate
 * nothing that outlives the call.
 */
#ifndef DRAKE_SIM_REPORT_H
#define DRAKE_SIM_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "common/err.h"
#include "sim/sim.h"

#define SIM_REPORT_BUCKETS 400

void sim_report_table(FILE *out, const char *title, const struct sim_result *r, size_t n);
/* Moves, and mean JCT of early-converging and of late jobs, per run. */
void sim_report_progress(FILE *out, bool curves, bool migrate, const struct sim_result *r,
                         size_t n);
drake_err sim_report_csv(const char *dir, const char *tag, const struct sim_result *r, size_t n,
                         char *msg, size_t mlen) DRAKE_MUST_CHECK;
/* Runs gnuplot; DRAKE_ENOTFOUND when it is not installed. */
drake_err sim_report_plots(const char *dir, const char *tag, const struct sim_result *r, size_t n,
                           char *msg, size_t mlen) DRAKE_MUST_CHECK;

/* Mean busy-GPU fraction per bucket of [t0, t1] into util[buckets]. */
void sim_report_bucketize(const struct sim_result *r, double t0, double t1, double *util,
                          double *held, size_t buckets);

#endif
