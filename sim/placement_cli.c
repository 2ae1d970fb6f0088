/*
 * placement_cli.c - `drake sim placement`: load the node and task lists,
 * run every policy over every seed (placement.h), print the table, write
 * the curves as CSV and draw them with gnuplot.
 */
#include "sim/placement_cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/flags.h"
#include "place/learn.h"
#include "sim/placement.h"

#define DEFAULT_POLICIES "random,dotprod,clustering,packing,bestfit,fgd,drake"
#define MAX_SEEDS        1000

struct cli {
	const char *nodes, *tasks, *policies, *csv, *png, *title, *ties, *shapes;
	int seeds, seed, coverage, window;
	double arrive_pct;
	bool progress;
};

/* Mean over seeds of one policy's curves. */
struct agg {
	enum place_policy p;
	double alloc[PLACEMENT_MAX_PCT + 1], lo[PLACEMENT_MAX_PCT + 1], hi[PLACEMENT_MAX_PCT + 1];
	double frag[PLACEMENT_MAX_PCT + 1];
	int seen[PLACEMENT_MAX_PCT + 1];
	double failed, final_alloc, secs;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void agg_add(struct agg *a, const struct placement_run *r)
{
	for (int b = 0; b <= PLACEMENT_MAX_PCT; b++) {
		if (r->alloc[b] < 0)
			continue;
		if (a->seen[b] == 0 || r->alloc[b] < a->lo[b])
			a->lo[b] = r->alloc[b];
		if (a->seen[b] == 0 || r->alloc[b] > a->hi[b])
			a->hi[b] = r->alloc[b];
		a->alloc[b] += r->alloc[b];
		a->frag[b] += r->frag_rate[b] < 0 ? 0 : r->frag_rate[b];
		a->seen[b]++;
	}
	a->failed += (double)r->failed;
	a->final_alloc += r->final_alloc;
}

static void agg_finish(struct agg *a, int runs)
{
	for (int b = 0; b <= PLACEMENT_MAX_PCT; b++)
		if (a->seen[b]) {
			a->alloc[b] /= a->seen[b];
			a->frag[b] /= a->seen[b];
		}
	a->failed /= runs;
	a->final_alloc /= runs;
	a->secs /= runs;
}

/* "  95.23" or "     -" when no seed reached that percent. */
static const char *pct(char *buf, size_t len, const struct agg *a, const double *v, int b)
{
	if (b > PLACEMENT_MAX_PCT || a->seen[b] == 0)
		snprintf(buf, len, "%7s", "-");
	else
		snprintf(buf, len, "%7.2f", 100 * v[b]);
	return buf;
}

static void print_table(FILE *out, const struct agg *a, size_t n, int top, int64_t gpu_milli)
{
	char c1[16], c2[16], c3[16], c4[16], h1[16], h2[16], h3[16];
	snprintf(h1, sizeof(h1), "alloc@%d", top);
	snprintf(h2, sizeof(h2), "frag@%d", top);
	snprintf(h3, sizeof(h3), "unalloc@%d", top);
	fprintf(out, "%-11s %9s %9s %9s %9s %8s %11s %7s\n", "policy", "alloc@100", h1, "frag@100",
	        h2, "failed", h3, "s/run");
	for (size_t i = 0; i < n; i++) {
		const struct agg *x = &a[i];
		double unalloc = x->seen[top] ? (1 - x->alloc[top]) * (double)gpu_milli / 1000 : 0;
		fprintf(out, "%-11s %9s %9s %9s %9s %8.0f %11.0f %7.2f\n", place_policy_name(x->p),
		        pct(c1, sizeof(c1), x, x->alloc, 100),
		        pct(c2, sizeof(c2), x, x->alloc, top), pct(c3, sizeof(c3), x, x->frag, 100),
		        pct(c4, sizeof(c4), x, x->frag, top), x->failed, unalloc, x->secs);
	}
	fprintf(out,
	        "(alloc: allocated GPU capacity over the cluster's GPUs, %%, mean over seeds, with "
	        "100 %% and %d %% of them arrived; frag: fragmentation rate, %%; failed: tasks "
	        "that fit nowhere, mean; unalloc: GPUs left unallocated; s/run: seconds per "
	        "run)\n",
	        top);
	fflush(out);
}

static drake_err write_csv(const char *path, const struct agg *a, size_t n, char *msg, size_t mlen)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return drake_errorf(DRAKE_EIO, msg, mlen, "%s: %s", path, strerror(errno));
	fprintf(f,
	        "policy,arrived_pct,alloc_pct,alloc_min_pct,alloc_max_pct,frag_rate_pct,seeds\n");
	for (size_t i = 0; i < n; i++)
		for (int b = 0; b <= PLACEMENT_MAX_PCT; b++)
			if (a[i].seen[b])
				fprintf(f, "%s,%d,%.4f,%.4f,%.4f,%.4f,%d\n",
				        place_policy_name(a[i].p), b, 100 * a[i].alloc[b],
				        100 * a[i].lo[b], 100 * a[i].hi[b], 100 * a[i].frag[b],
				        a[i].seen[b]);
	if (fclose(f) != 0)
		return drake_errorf(DRAKE_EIO, msg, mlen, "%s: %s", path, strerror(errno));
	return DRAKE_OK;
}

/* One colour per policy, so the plots of every trace match. */
static const char *const colours[PLACE_NPOLICIES] = {
    [PLACE_RANDOM] = "#8c8c8c",  [PLACE_BESTFIT] = "#b8860b",    [PLACE_DOTPROD] = "#2ca02c",
    [PLACE_PACKING] = "#ff7f0e", [PLACE_CLUSTERING] = "#9467bd", [PLACE_FGD] = "#1f77b4",
    [PLACE_DRAKE] = "#d62728",
};

/* Three panels: allocation over arrived 0..top, the same from 80 % on,
 * and the fragmentation rate. top: the last arrived percent. */
static drake_err draw_png(const char *png, const char *csv, const char *title, const struct agg *a,
                          size_t n, int top, char *msg, size_t mlen)
{
	if (system("command -v gnuplot >/dev/null 2>&1") != 0)
		return drake_errorf(DRAKE_ENOTFOUND, msg, mlen,
		                    "gnuplot not found (Debian: gnuplot-nox); the CSV is written");
	char gp[1100];
	snprintf(gp, sizeof(gp), "%s.gp", png);
	FILE *f = fopen(gp, "w");
	if (!f)
		return drake_errorf(DRAKE_EIO, msg, mlen, "%s: %s", gp, strerror(errno));
	fprintf(f,
	        "set datafile separator ','\nset terminal pngcairo noenhanced size 1500,520 font "
	        "',10'\n"
	        "set output '%s'\nset multiplot layout 1,3 title '%s'\nset grid\n"
	        "set key bottom right\nset xlabel 'GPU requests arrived (%% of cluster GPUs)'\n",
	        png, title);
	const char *panels[3][3] = {
	    {"GPU allocation", "allocated GPUs (% of cluster)", "3"},
	    {"GPU allocation, from 80 % arrived", "allocated GPUs (% of cluster)", "3"},
	    {"fragmentation rate (fragment / idle GPU)", "fragmentation rate (%)", "6"},
	};
	for (int pnl = 0; pnl < 3; pnl++) {
		fprintf(f, "set title '%s'\nset ylabel '%s'\nset xrange [%d:%d]\n", panels[pnl][0],
		        panels[pnl][1], pnl == 1 && top > 90 ? 80 : 0, top);
		fprintf(f, pnl == 1 ? "set yrange [*:*]\n" : "set yrange [0:*]\n");
		if (pnl == 1)
			fprintf(f, "unset key\n"); /* the first panel's key names the colours */
		fprintf(f, "plot ");
		for (size_t i = 0; i < n; i++) {
			bool bold = a[i].p == PLACE_DRAKE || a[i].p == PLACE_FGD;
			fprintf(f,
			        "%s'%s' using 2:(strcol(1) eq '%s' ? $%s : 1/0) with lines lw %s "
			        "lc rgb '%s' title '%s'",
			        i ? ", " : "", csv, place_policy_name(a[i].p), panels[pnl][2],
			        bold ? "2.5" : "1.5", colours[a[i].p], place_policy_name(a[i].p));
		}
		if (pnl == 0)
			fprintf(f, ", x with lines dt 2 lc rgb 'gray' title 'arrived'");
		fprintf(f, "\n");
	}
	fprintf(f, "unset multiplot\n");
	if (fclose(f) != 0)
		return drake_errorf(DRAKE_EIO, msg, mlen, "%s: %s", gp, strerror(errno));
	char cmd[1200];
	snprintf(cmd, sizeof(cmd), "gnuplot '%s' 2>&1", gp);
	if (system(cmd) != 0)
		return drake_errorf(DRAKE_EIO, msg, mlen, "gnuplot failed on %s", gp);
	return DRAKE_OK;
}

static int usage_error(const char *what)
{
	fprintf(stderr, "drake sim placement: %s (see --help)\n", what);
	return 2;
}

int placement_cli_main(int argc, char **argv)
{
	struct cli c;
	memset(&c, 0, sizeof(c));
	const struct flag flags[] = {
	    {"nodes", "DRAKE_SIM_PLACEMENT_NODES", FLAG_STRING, &c.nodes, "",
	     "node list CSV: sn,cpu_milli,memory_mib,gpu,model (required)"},
	    {"tasks", "DRAKE_SIM_PLACEMENT_TASKS", FLAG_STRING, &c.tasks, "",
	     "task list CSV naming cpu_milli, memory_mib, num_gpu, gpu_milli [, gpu_spec] "
	     "(required)"},
	    {"policies", NULL, FLAG_STRING, &c.policies, DEFAULT_POLICIES,
	     "comma-separated: random, bestfit, dotprod, packing, clustering, fgd, drake"},
	    {"seeds", NULL, FLAG_INT, &c.seeds, "10",
	     "runs per policy, seeds --seed, --seed+1, ..."},
	    {"seed", NULL, FLAG_INT, &c.seed, "42", "the first seed (the study's are 42..51)"},
	    {"arrive", NULL, FLAG_DOUBLE, &c.arrive_pct, "130",
	     "build each workload to this many GPUs requested, % of the cluster's"},
	    {"ties", NULL, FLAG_STRING, &c.ties, "order",
	     "best-scoring nodes tie: order (the first in a node order shuffled per seed, the "
	     "study's) or random (drawn per task, stock kube-scheduler's)"},
	    {"shapes", NULL, FLAG_STRING, &c.shapes, "list",
	     "the typical shapes fgd and drake score with: list (the whole task list's, the "
	     "study's) or learnt (those a learner of --window tasks has seen as they arrived, "
	     "as drake serve --prioritize learns them)"},
	    {"window", NULL, FLAG_INT, &c.window, "4096",
	     "--shapes learnt: the tasks the learner remembers (drake serve's "
	     "--prioritize-window)"},
	    {"coverage", NULL, FLAG_INT, &c.coverage, "95",
	     "typical shapes: the most popular ones covering this % of the task list"},
	    {"csv", NULL, FLAG_STRING, &c.csv, "",
	     "write the mean curves per policy and arrived % to this CSV"},
	    {"png", NULL, FLAG_STRING, &c.png, "",
	     "draw the curves into this PNG with gnuplot (needs --csv)"},
	    {"title", NULL, FLAG_STRING, &c.title, "", "the plot's title (default: the task list)"},
	    {"progress", NULL, FLAG_BOOL, &c.progress, "true", "one line per run on stderr"},
	};
	size_t nf = sizeof(flags) / sizeof(flags[0]);
	enum flags_outcome oc;
	char msg[512];
	if (flags_parse(flags, nf, argc, argv, &oc, msg, sizeof(msg))) {
		fprintf(stderr, "drake sim placement: %s\n", msg);
		return 2;
	}
	if (oc == FLAGS_HELP) {
		printf("usage: drake sim placement --nodes FILE --tasks FILE [flags]\n\n"
		       "The placement study of Weng et al., \"Beware of Fragmentation\" (USENIX "
		       "ATC'23):\n"
		       "the task list plus tasks drawn from it until their GPU requests reach "
		       "--arrive %% of\n"
		       "the cluster's GPUs, shuffled, placed one by one with no departures (a task "
		       "that\n"
		       "fits nowhere fails and is skipped), once per seed and policy. Prints GPU "
		       "allocation\n"
		       "and fragmentation rate at 100 %% and --arrive %% arrived; --csv and --png "
		       "keep the curves.\n\n"
		       "  drake sim placement --nodes traces/"
		       "alibaba2023_openb_node_list_gpu_node.csv \\\n"
		       "    --tasks traces/alibaba2023_openb_pod_list_default.csv \\\n"
		       "    --csv default.csv --png default.png\n\nflags:\n");
		flags_usage(stdout, flags, nf);
		return 0;
	}
	if (!*c.nodes)
		return usage_error("--nodes is required");
	if (!*c.tasks)
		return usage_error("--tasks is required");
	if (c.seeds < 1 || c.seeds > MAX_SEEDS)
		return usage_error("--seeds must be 1..1000");
	if (c.seed < 0)
		return usage_error("--seed must be at least 0");
	if (!(c.arrive_pct >= 1 && c.arrive_pct <= PLACEMENT_MAX_PCT))
		return usage_error("--arrive must be 1..200");
	if (c.coverage < 1 || c.coverage > 100)
		return usage_error("--coverage must be 1..100");
	enum placement_ties ties;
	if (strcmp(c.ties, "order") == 0)
		ties = PLACEMENT_TIES_ORDER;
	else if (strcmp(c.ties, "random") == 0)
		ties = PLACEMENT_TIES_RANDOM;
	else
		return usage_error("--ties must be order or random");
	size_t window = 0;
	if (strcmp(c.shapes, "learnt") == 0) {
		if (c.window < 1 || c.window > PLACE_LEARN_WINDOW_MAX)
			return usage_error("--window must be 1..1048576");
		window = (size_t)c.window;
	} else if (strcmp(c.shapes, "list") != 0) {
		return usage_error("--shapes must be list or learnt");
	}
	if (*c.png && !*c.csv)
		return usage_error("--png needs --csv (the plot reads it)");
	if (strchr(c.png, '\'') || strchr(c.csv, '\'') || strchr(c.title, '\''))
		return usage_error(
		    "--png, --csv and --title cannot hold a ' (gnuplot quotes with it)");

	struct agg aggs[PLACE_NPOLICIES];
	size_t np = 0;
	char plist[256];
	if (snprintf(plist, sizeof(plist), "%s", c.policies) >= (int)sizeof(plist))
		return usage_error("--policies is too long");
	char *save = NULL;
	for (char *t = strtok_r(plist, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int p = place_policy_parse(t);
		if (p < 0) {
			fprintf(stderr,
			        "drake sim placement: unknown policy \"%s\" (" DEFAULT_POLICIES
			        ")\n",
			        t);
			return 2;
		}
		for (size_t i = 0; i < np; i++)
			if (aggs[i].p == (enum place_policy)p) {
				fprintf(stderr, "drake sim placement: policy %s given twice\n", t);
				return 2;
			}
		memset(&aggs[np], 0, sizeof(aggs[np]));
		aggs[np++].p = (enum place_policy)p;
	}
	if (np == 0)
		return usage_error("--policies names none");

	int rc = 1;
	struct sim_nodes rows = {0};
	struct placement_cluster cl = {0};
	struct placement_tasks tasks = {0};
	struct place_dist dist;
	place_dist_init(&dist);
	struct place_typical *ty = malloc(sizeof(*ty));
	if (!ty) {
		fprintf(stderr, "drake sim placement: out of memory\n");
		return 1;
	}
	if (sim_nodes_load(c.nodes, &rows, msg, sizeof(msg)) ||
	    placement_cluster_build(&rows, c.nodes, &cl, msg, sizeof(msg)) ||
	    placement_tasks_load(c.tasks, &cl.models, &tasks, msg, sizeof(msg))) {
		fprintf(stderr, "drake sim placement: %s\n", msg);
		goto out;
	}
	for (size_t i = 0; i < tasks.n; i++) {
		if (place_dist_observe(&dist, &tasks.t[i], 1)) {
			fprintf(stderr, "drake sim placement: out of memory\n");
			goto out;
		}
	}
	place_typical_build(&dist, c.coverage, ty);
	int top = (int)(c.arrive_pct + 0.5);
	printf("\n== placement: %s on %s: %zu tasks listed, %zu nodes, %lld GPUs; %d seed%s "
	       "(%d..%d); %zu typical shapes cover %.1f %% of %zu distinct ==\n",
	       c.tasks, c.nodes, tasks.n, cl.n, (long long)(cl.gpu_milli / PLACE_GPU_MILLI),
	       c.seeds, c.seeds == 1 ? "" : "s", c.seed, c.seed + c.seeds - 1, ty->n,
	       dist.total ? 100.0 * (double)ty->total / (double)dist.total : 0.0, dist.n);
	fflush(stdout);
	for (int s = 0; s < c.seeds; s++) {
		uint64_t seed = (uint64_t)c.seed + (uint64_t)s;
		struct place_task *w;
		size_t n;
		if (placement_workload(&tasks, cl.gpu_milli, c.arrive_pct / 100, seed, &w, &n)) {
			fprintf(stderr,
			        "drake sim placement: out of memory building the workload\n");
			goto out;
		}
		for (size_t i = 0; i < np; i++) {
			struct placement_run run;
			double t0 = now_s();
			if (placement_run(&cl, ty, window, w, n, aggs[i].p, seed, ties, &run, msg,
			                  sizeof(msg))) {
				fprintf(stderr, "drake sim placement: %s\n", msg);
				free(w);
				goto out;
			}
			double dt = now_s() - t0;
			aggs[i].secs += dt;
			agg_add(&aggs[i], &run);
			if (c.progress)
				fprintf(stderr,
				        "placement: seed %llu %-10s %zu tasks, %zu failed, %.2f %% "
				        "allocated at %.1f %% arrived (%.1f s)\n",
				        (unsigned long long)seed, place_policy_name(aggs[i].p),
				        run.tasks, run.failed, 100 * run.final_alloc,
				        100 * run.final_arrived, dt);
		}
		free(w);
	}
	for (size_t i = 0; i < np; i++)
		agg_finish(&aggs[i], c.seeds);
	print_table(stdout, aggs, np, top, cl.gpu_milli);
	rc = 0;
	if (*c.csv && write_csv(c.csv, aggs, np, msg, sizeof(msg))) {
		fprintf(stderr, "drake sim placement: %s\n", msg);
		rc = 1;
	} else if (*c.png) {
		const char *title = *c.title ? c.title : c.tasks;
		if (draw_png(c.png, c.csv, title, aggs, np, top, msg, sizeof(msg))) {
			fprintf(stderr, "drake sim placement: %s\n", msg);
			rc = 1;
		}
	}
out:
	free(ty);
	place_dist_release(&dist);
	placement_tasks_release(&tasks);
	placement_cluster_release(&cl);
	sim_nodes_release(&rows);
	return rc;
}
