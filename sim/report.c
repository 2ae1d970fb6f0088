/*
 * report.c - tables, CSV files and gnuplot plots of simulation results.
 */
#include "sim/report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

static void fmt_secs(char *buf, size_t len, double s)
{
	if (s >= 86400 * 2)
		snprintf(buf, len, "%.1fd", s / 86400);
	else if (s >= 7200)
		snprintf(buf, len, "%.1fh", s / 3600);
	else
		snprintf(buf, len, "%.0fs", s);
}

void sim_report_table(FILE *out, const char *title, const struct sim_result *r, size_t n)
{
	fprintf(out, "\n== %s ==\n", title);
	fprintf(out, "%-8s %6s %9s %9s %9s %9s %9s %6s %6s %7s %7s %8s %11s %8s\n", "policy",
	        "done", "meanJCT", "medJCT", "p95JCT", "meanQ", "makespan", "util", "good",
	        "partial", "heldGh", "deadlock", "scale+/-", "us/dec");
	for (size_t i = 0; i < n; i++) {
		const struct sim_result *x = &r[i];
		char a[16], b[16], c[16], d[16], e[16], dl[24], sc[24];
		fmt_secs(a, sizeof(a), x->mean_jct);
		fmt_secs(b, sizeof(b), x->median_jct);
		fmt_secs(c, sizeof(c), x->p95_jct);
		fmt_secs(d, sizeof(d), x->mean_queue);
		fmt_secs(e, sizeof(e), x->makespan);
		if (x->deadlocked)
			snprintf(dl, sizeof(dl), "%zuj/%lldG", x->deadlock_jobs,
			         (long long)x->deadlock_gpus);
		else
			snprintf(dl, sizeof(dl), "no");
		snprintf(sc, sizeof(sc), "%zu/%zu", x->scale_up_events, x->scale_down_events);
		fprintf(out,
		        "%-8s %6zu %9s %9s %9s %9s %9s %5.1f%% %5.1f%% %7zu %7.0f %8s %11s %8.1f\n",
		        x->policy, x->finished, a, b, c, d, e, 100 * x->gpu_util,
		        100 * x->goodput_util, x->ever_partial, x->held_gpu_hours, dl, sc,
		        x->decisions ? 1e6 * x->policy_cpu_s / (double)x->decisions : 0);
	}
	fflush(out);
}

void sim_report_progress(FILE *out, bool curves, bool migrate, const struct sim_result *r, size_t n)
{
	fprintf(out, "\nprogress and migration (learning curves %s, migration %s):\n",
	        curves ? "on" : "off", migrate ? "on" : "off");
	fprintf(out, "%-8s %7s %10s %10s %13s %13s %8s\n", "policy", "moves", "early", "late",
	        "meanJCT-early", "meanJCT-late", "flagged");
	for (size_t i = 0; i < n; i++) {
		const struct sim_result *x = &r[i];
		char a[16], b[16], fe[16], fl[16], fg[32];
		fmt_secs(a, sizeof(a), x->mean_jct_early);
		fmt_secs(b, sizeof(b), x->mean_jct_late);
		snprintf(fe, sizeof(fe), "%zu", x->early_done);
		snprintf(fl, sizeof(fl), "%zu", x->late_done);
		snprintf(fg, sizeof(fg), "%zu/%zu", x->flagged_early, x->flagged_late);
		fprintf(out, "%-8s %7zu %10s %10s %13s %13s %8s\n", x->policy, x->moves, fe, fl, a,
		        b, fg);
	}
	fprintf(out, "(early/late: finished jobs whose curve converges early / keeps improving; "
	             "flagged: jobs ever classed slowing or converged, early/late)\n");
	fflush(out);
}

static drake_err mkdir_p(const char *dir, char *msg, size_t mlen)
{
	char buf[1024];
	if (snprintf(buf, sizeof(buf), "%s", dir) >= (int)sizeof(buf))
		return drake_errorf(DRAKE_ELIMIT, msg, mlen, "output path too long");
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			return drake_errorf(DRAKE_EIO, msg, mlen, "mkdir %s: %s", buf,
			                    strerror(errno));
		*p = '/';
	}
	if (mkdir(buf, 0755) && errno != EEXIST)
		return drake_errorf(DRAKE_EIO, msg, mlen, "mkdir %s: %s", buf, strerror(errno));
	return DRAKE_OK;
}

static FILE *open_out(const char *dir, const char *tag, const char *name, const char *policy,
                      char *path, size_t plen)
{
	snprintf(path, plen, "%s/%s%s%s%s%s%s", dir, tag, *tag ? "-" : "", name, policy ? "-" : "",
	         policy ? policy : "", policy ? ".csv" : "");
	return fopen(path, "w");
}

void sim_report_bucketize(const struct sim_result *r, double t0, double t1, double *util,
                          double *held, size_t buckets)
{
	double w = (t1 - t0) / (double)buckets;
	for (size_t b = 0; b < buckets; b++)
		util[b] = held[b] = 0;
	if (w <= 0 || r->total_gpus <= 0)
		return;
	for (size_t i = 0; i < r->n_samples; i++) {
		double a = r->samples[i].t, e = i + 1 < r->n_samples ? r->samples[i + 1].t : t1;
		if (a < t0)
			a = t0;
		if (e > t1)
			e = t1;
		while (a < e) {
			size_t b = (size_t)((a - t0) / w);
			if (b >= buckets)
				break;
			double end = t0 + (double)(b + 1) * w;
			double seg = (end < e ? end : e) - a;
			util[b] += seg * (double)r->samples[i].busy / ((double)r->total_gpus * w);
			held[b] += seg * (double)r->samples[i].held / ((double)r->total_gpus * w);
			a += seg;
			if (seg <= 0)
				break;
		}
	}
}

drake_err sim_report_csv(const char *dir, const char *tag, const struct sim_result *r, size_t n,
                         char *msg, size_t mlen)
{
	drake_err err = mkdir_p(dir, msg, mlen);
	if (err)
		return err;
	char path[1200];
	FILE *f = open_out(dir, tag, "summary.csv", NULL, path, sizeof(path));
	if (!f)
		return drake_errorf(DRAKE_EIO, msg, mlen, "%s: %s", path, strerror(errno));
	fprintf(f, "policy,jobs,finished,never_fit,mean_jct_s,median_jct_s,p95_jct_s,"
	           "mean_queue_s,makespan_s,gpu_util,goodput_util,held_gpu_hours,ever_partial,"
	           "deadlock_jobs,"
	           "deadlock_gpus,scale_up,scale_down,decisions,policy_cpu_us_per_decision,"
	           "policy_cpu_max_us,moves,early_done,late_done,mean_jct_early_s,"
	           "mean_jct_late_s,flagged_early,flagged_late\n");
	for (size_t i = 0; i < n; i++) {
		const struct sim_result *x = &r[i];
		fprintf(f,
		        "%s,%zu,%zu,%zu,%.1f,%.1f,%.1f,%.1f,%.1f,%.4f,%.4f,%.1f,%zu,%zu,%lld,%zu,%"
		        "zu,%zu,"
		        "%.2f,%.1f,%zu,%zu,%zu,%.1f,%.1f,%zu,%zu\n",
		        x->policy, x->jobs, x->finished, x->never_fit, x->mean_jct, x->median_jct,
		        x->p95_jct, x->mean_queue, x->makespan, x->gpu_util, x->goodput_util,
		        x->held_gpu_hours, x->ever_partial, x->deadlock_jobs,
		        (long long)x->deadlock_gpus, x->scale_up_events, x->scale_down_events,
		        x->decisions,
		        x->decisions ? 1e6 * x->policy_cpu_s / (double)x->decisions : 0,
		        1e6 * x->policy_cpu_max_s, x->moves, x->early_done, x->late_done,
		        x->mean_jct_early, x->mean_jct_late, x->flagged_early, x->flagged_late);
	}
	fclose(f);
	double t0 = -1, t1 = 0;
	for (size_t i = 0; i < n; i++) {
		if (t0 < 0 || r[i].first_submit < t0)
			t0 = r[i].first_submit;
		double end = r[i].n_samples ? r[i].samples[r[i].n_samples - 1].t : 0;
		if (end > t1)
			t1 = end;
	}
	for (size_t i = 0; i < n; i++) {
		const struct sim_result *x = &r[i];
		if (!(f = open_out(dir, tag, "jobs", x->policy, path, sizeof(path))))
			return drake_errorf(DRAKE_EIO, msg, mlen, "%s: %s", path, strerror(errno));
		fprintf(f, "job,gpus,submit_s,start_s,finish_s,jct_s,early,slow_at,pauses\n");
		for (size_t k = 0; k < x->jobs; k++)
			fprintf(f, "%zu,%d,%.1f,%.1f,%.1f,%.1f,%d,%.3f,%d\n", k, x->job_gpus[k],
			        x->job_submit[k], x->job_start[k], x->job_finish[k],
			        x->job_finish[k] >= 0 ? x->job_finish[k] - x->job_submit[k] : -1,
			        x->job_early[k], x->job_slow_at[k], x->job_pauses[k]);
		fclose(f);
		if (!(f = open_out(dir, tag, "jct", x->policy, path, sizeof(path))))
			return drake_errorf(DRAKE_EIO, msg, mlen, "%s: %s", path, strerror(errno));
		fprintf(f, "jct_s,fraction\n");
		for (size_t k = 0; k < x->finished; k++)
			fprintf(f, "%.1f,%.5f\n", x->jct[k] > 1 ? x->jct[k] : 1,
			        (double)(k + 1) / (double)x->finished);
		fclose(f);
		if (!(f = open_out(dir, tag, "util", x->policy, path, sizeof(path))))
			return drake_errorf(DRAKE_EIO, msg, mlen, "%s: %s", path, strerror(errno));
		double util[SIM_REPORT_BUCKETS], held[SIM_REPORT_BUCKETS];
		sim_report_bucketize(x, t0, t1, util, held, SIM_REPORT_BUCKETS);
		fprintf(f, "t_hours,busy_frac,held_idle_frac\n");
		double w = (t1 - t0) / SIM_REPORT_BUCKETS;
		for (size_t b = 0; b < SIM_REPORT_BUCKETS; b++)
			fprintf(f, "%.4f,%.4f,%.4f\n", ((double)b + 0.5) * w / 3600, util[b],
			        held[b]);
		fclose(f);
	}
	return DRAKE_OK;
}

drake_err sim_report_plots(const char *dir, const char *tag, const struct sim_result *r, size_t n,
                           char *msg, size_t mlen)
{
	if (system("command -v gnuplot >/dev/null 2>&1") != 0)
		return drake_errorf(DRAKE_ENOTFOUND, msg, mlen,
		                    "gnuplot not found (Debian: gnuplot-nox); CSVs are written");
	char path[1200], prefix[1100];
	snprintf(prefix, sizeof(prefix), "%s/%s%s", dir, tag, *tag ? "-" : "");
	snprintf(path, sizeof(path), "%splots.gp", prefix);
	FILE *f = fopen(path, "w");
	if (!f)
		return drake_errorf(DRAKE_EIO, msg, mlen, "%s: %s", path, strerror(errno));
	fprintf(f, "set datafile separator ','\nset terminal pngcairo size 1000,500\n"
	           "set key outside right\nset grid\n");
	fprintf(f,
	        "set output '%sutil.png'\nset title 'GPU utilisation over time (%s)'\n"
	        "set xlabel 'hours since first submission'\nset ylabel 'busy GPUs / all GPUs'\n"
	        "set yrange [0:1.05]\nplot ",
	        prefix, *tag ? tag : "sim");
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s'%sutil-%s.csv' using 1:2 with lines title '%s'", i ? ", " : "",
		        prefix, r[i].policy, r[i].policy);
	fprintf(f,
	        "\nset output '%sjct.png'\nset title 'JCT distribution (%s)'\n"
	        "set xlabel 'job completion time (s, log)'\nset ylabel 'fraction of jobs'\n"
	        "set logscale x\nset yrange [0:1.05]\nplot ",
	        prefix, *tag ? tag : "sim");
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s'%sjct-%s.csv' using 1:2 with steps title '%s'", i ? ", " : "",
		        prefix, r[i].policy, r[i].policy);
	fprintf(f, "\n");
	fclose(f);
	char cmd[1400];
	snprintf(cmd, sizeof(cmd), "gnuplot '%s' 2>&1", path);
	if (system(cmd) != 0)
		return drake_errorf(DRAKE_EIO, msg, mlen, "gnuplot failed on %s", path);
	return DRAKE_OK;
}
