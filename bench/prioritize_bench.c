/*
 * prioritize_bench.c - `make bench-prioritize`: drake's own work in one
 * prioritize call with its score on (drake serve --prioritize), at
 * realistic node counts.
 *
 * The caches hold Alibaba's GPU nodes (the openb node list of
 * traces/, cycled past its 1,213 nodes: CPU, memory, GPUs and the
 * GPU model as nvidia.com/gpu.product) and pods drawn from the default task
 * list, bound until 60 % of the GPU capacity is taken (whole GPUs, and
 * KubeShare shares on named vGPUs). Then pending pods of the same list are
 * scored over every node, as kube-scheduler's prioritize call names them:
 * the call's whole path in drake past the wire (the controller's view of
 * the pod and each candidate, the learner, drake's score and the
 * normalisation; extender/score.h), timed in process. drake keeps each
 * node's state between calls until a pod on it or the node changes
 * (reconciler/place_view.h); here one node changes between two calls, as
 * when kube-scheduler binds the pod before, and the first call (every node
 * read) is reported apart. What the wire adds
 * (TLS, HTTP/2, the request's JSON) is bench-extender's prioritize row.
 * Prints median and p99 per node count and writes them as CSV.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_json.h"
#include "bench/bench_util.h"
#include "extender/score.h"
#include "kube/node.h"
#include "kube/pod.h"
#include "reconciler/place_view.h"

#define TRACES "traces" /* from the repository root, as make runs it */

struct node_row {
	long cpu, mem;
	int gpu;
	char model[32];
};
struct task_row {
	long cpu, mem;
	int gpu, milli;
};

static struct node_row *rows;
static size_t n_rows;
static struct task_row *tasks;
static size_t n_tasks;

/* The next comma-separated field of *s (empty fields kept). */
static const char *field(char **s)
{
	char *f = *s;
	if (!f)
		return "";
	char *c = strpbrk(f, ",\r\n");
	if (c) {
		*s = *c == ',' ? c + 1 : NULL;
		*c = 0;
	} else {
		*s = NULL;
	}
	return f;
}

static FILE *open_csv(const char *path, char *line, size_t len)
{
	FILE *f = fopen(path, "r");
	if (!f || !fgets(line, (int)len, f)) {
		fprintf(stderr, "bench-prioritize: cannot read %s\n", path);
		exit(1);
	}
	return f;
}

static void load(const char *dir)
{
	char path[512], line[512];
	snprintf(path, sizeof(path), "%s/alibaba2023_openb_node_list_gpu_node.csv", dir);
	FILE *f = open_csv(path, line, sizeof(line));
	size_t cap = 0;
	while (fgets(line, sizeof(line), f)) {
		if (n_rows == cap &&
		    !(rows = realloc(rows, (cap = cap ? 2 * cap : 1024) * sizeof(*rows))))
			exit(1);
		char *s = line;
		struct node_row *r = &rows[n_rows++];
		field(&s);
		r->cpu = atol(field(&s));
		r->mem = atol(field(&s));
		r->gpu = atoi(field(&s));
		snprintf(r->model, sizeof(r->model), "%s", field(&s));
	}
	fclose(f);
	snprintf(path, sizeof(path), "%s/alibaba2023_openb_pod_list_default.csv", dir);
	f = open_csv(path, line, sizeof(line));
	cap = 0;
	while (fgets(line, sizeof(line), f)) {
		if (n_tasks == cap &&
		    !(tasks = realloc(tasks, (cap = cap ? 2 * cap : 4096) * sizeof(*tasks))))
			exit(1);
		char *s = line;
		struct task_row *t = &tasks[n_tasks++];
		field(&s);
		t->cpu = atol(field(&s));
		t->mem = atol(field(&s));
		t->gpu = atoi(field(&s));
		t->milli = atoi(field(&s));
	}
	fclose(f);
	if (!n_rows || !n_tasks) {
		fprintf(stderr, "bench-prioritize: empty node or task list in %s\n", dir);
		exit(1);
	}
}

static uint64_t rng = 88172645463325252ull;
static size_t draw(size_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (size_t)(rng % n);
}

/* A pod of task t: bound to node (NULL: pending), a share on vGPU g. */
static void put_pod(struct kube_cache *pods, const char *name, const struct task_row *t,
                    const char *node, int g)
{
	char b[1024], gpu[48] = "", ann[160] = "", bind[96] = "";
	if (t->gpu && t->milli >= 1000)
		snprintf(gpu, sizeof(gpu), ",\"nvidia.com/gpu\":\"%d\"", t->gpu);
	else if (t->gpu && g >= 0)
		snprintf(ann, sizeof(ann),
		         "\"kubeshare/gpu_request\":\"%.3f\",\"kubeshare/GPUID\":\"v%d\"",
		         t->milli / 1000.0, g);
	else if (t->gpu)
		snprintf(ann, sizeof(ann), "\"kubeshare/gpu_request\":\"%.3f\"", t->milli / 1000.0);
	if (node)
		snprintf(bind, sizeof(bind), "\"nodeName\":\"%s\",", node);
	snprintf(b, sizeof(b),
	         "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"bench\",\"uid\":\"u-%s\","
	         "\"annotations\":{%s}},\"spec\":{%s\"containers\":[{\"name\":\"c\",\"resources\":"
	         "{\"requests\":{\"cpu\":\"%ldm\",\"memory\":\"%ldMi\"%s}}}]},"
	         "\"status\":{\"phase\":\"%s\"}}",
	         name, name, ann, bind, t->cpu, t->mem, gpu, node ? "Running" : "Pending");
	bench_cache_put(pods, b);
}

struct world {
	struct kube_cache nodes, pods;
	struct place_view_memo memo;
};

static drake_err view(void *arg, const char *ns, const char *pod, const char *const *candidates,
                      size_t n, struct place_models *models, struct place_task *task,
                      struct place_node *nodes, bool *known, char *why, size_t whylen)
{
	struct world *w = arg;
	return place_view_build_memo(&w->nodes, &w->pods, &w->memo, ns, pod, candidates, n, models,
	                             task, nodes, known, why, whylen);
}

/* N nodes, pods bound until 60 % of the GPU capacity is taken; returns
 * the pods bound. */
static size_t build(struct world *w, size_t n, char (*names)[32])
{
	kube_node_cache_init(&w->nodes);
	kube_pod_cache_init(&w->pods);
	w->memo = (struct place_view_memo){0};
	long *cpu = calloc(n, sizeof(*cpu)), *mem = calloc(n, sizeof(*mem));
	int(*left)[16] = calloc(n, sizeof(*left));
	int64_t total = 0, taken = 0;
	for (size_t i = 0; i < n; i++) {
		const struct node_row *r = &rows[i % n_rows];
		snprintf(names[i], 32, "node-%05zu", i);
		char b[768];
		snprintf(
		    b, sizeof(b),
		    "{\"metadata\":{\"name\":\"%s\",\"uid\":\"n-%s\",\"labels\":{"
		    "\"nvidia.com/gpu.product\":\"%s\"}},\"spec\":{},\"status\":{\"allocatable\":"
		    "{\"cpu\":\"%ldm\",\"memory\":\"%ldMi\",\"nvidia.com/gpu\":\"%d\","
		    "\"pods\":\"110\"}}}",
		    names[i], names[i], r->model, r->cpu, r->mem, r->gpu);
		bench_cache_put(&w->nodes, b);
		cpu[i] = r->cpu;
		mem[i] = r->mem;
		for (int g = 0; g < r->gpu && g < 16; g++)
			left[i][g] = 1000;
		total += 1000 * (int64_t)(r->gpu < 16 ? r->gpu : 16);
	}
	size_t bound = 0;
	for (size_t a = 0; a < 40 * n && taken * 10 < total * 6; a++) {
		const struct task_row *t = &tasks[draw(n_tasks)];
		size_t i = draw(n);
		if (t->cpu > cpu[i] || t->mem > mem[i])
			continue;
		int g = -1, free_gpus = 0;
		for (int k = 0; k < 16; k++) {
			free_gpus += left[i][k] == 1000;
			if (t->gpu && t->milli < 1000 && g < 0 && left[i][k] >= t->milli)
				g = k;
		}
		if (t->gpu && t->milli >= 1000 && free_gpus < t->gpu)
			continue;
		if (t->gpu && t->milli < 1000 && g < 0)
			continue;
		cpu[i] -= t->cpu;
		mem[i] -= t->mem;
		if (t->gpu && t->milli < 1000) {
			left[i][g] -= t->milli;
			taken += t->milli;
		} else {
			for (int k = 0, need = t->gpu; k < 16 && need; k++)
				if (left[i][k] == 1000) {
					left[i][k] = 0;
					need--;
					taken += 1000;
				}
		}
		char name[32];
		snprintf(name, sizeof(name), "b-%zu", bound++);
		put_pod(&w->pods, name, t, names[i], g);
	}
	free(cpu);
	free(mem);
	free(left);
	return bound;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : TRACES;
	const char *csv = argc > 2 ? argv[2] : "bench/results/prioritize.csv";
	static const size_t counts[] = {100, 300, 1213, 5000};
	enum { PENDING = 256, CALLS = 400 };
	load(dir);
	FILE *out = fopen(csv, "w");
	if (!out) {
		fprintf(stderr, "bench-prioritize: cannot write %s\n", csv);
		return 1;
	}
	fprintf(out, "nodes,pods_bound,calls,first_us,median_us,p99_us\n");
	printf("prioritize with drake's score: drake's work per call past the wire\n");
	printf("%7s %10s %6s %10s %10s %10s\n", "nodes", "pods bound", "calls", "first", "median",
	       "p99");
	for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		size_t n = counts[c];
		struct world w;
		char(*names)[32] = calloc(n, sizeof(*names));
		const char **cand = calloc(n, sizeof(*cand));
		size_t bound = build(&w, n, names);
		for (size_t i = 0; i < n; i++)
			cand[i] = names[i];
		for (int p = 0; p < PENDING; p++) {
			char name[32];
			snprintf(name, sizeof(name), "q-%d", p);
			put_pod(&w.pods, name, &tasks[draw(n_tasks)], NULL, -1);
		}
		char msg[256];
		struct ext_scorer *sc =
		    ext_scorer_new(view, &w, PLACE_LEARN_WINDOW, msg, sizeof(msg));
		int64_t *scores = calloc(n, sizeof(*scores));
		double *us = calloc(CALLS, sizeof(*us));
		if (!sc || !scores || !us || !names || !cand) {
			fprintf(stderr, "bench-prioritize: out of memory\n");
			return 1;
		}
		for (int k = 0; k < CALLS; k++) {
			char name[32], uid[40], why[256];
			snprintf(name, sizeof(name), "q-%d", k % PENDING);
			snprintf(uid, sizeof(uid), "u-%s", name);
			double t0 = bench_now();
			if (!ext_scorer_score(sc, "bench", name, uid, cand, n, scores, why,
			                      sizeof(why))) {
				fprintf(stderr, "bench-prioritize: %s\n", why);
				return 1;
			}
			us[k] = (bench_now() - t0) * 1e6;
			/* the pod before was bound somewhere: that node is read again */
			place_view_memo_forget(&w.memo, names[draw(n)]);
		}
		double first = us[0];
		qsort(us + 1, CALLS - 1, sizeof(*us), bench_cmp_double);
		double med = us[1 + (CALLS - 1) / 2], p99 = us[1 + (CALLS - 1) * 99 / 100];
		printf("%7zu %10zu %6d %8.0fus %8.0fus %8.0fus\n", n, bound, CALLS - 1, first, med,
		       p99);
		fprintf(out, "%zu,%zu,%d,%.1f,%.1f,%.1f\n", n, bound, CALLS - 1, first, med, p99);
		ext_scorer_free(sc);
		free(scores);
		free(us);
		free(cand);
		free(names);
		place_view_memo_release(&w.memo);
		kube_cache_release(&w.nodes);
		kube_cache_release(&w.pods);
	}
	fclose(out);
	printf("CSV: %s\n", csv);
	return 0;
}
