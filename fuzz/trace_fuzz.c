/* trace_fuzz.c - libFuzzer target for the simulator's trace and node-list
 * parsers: any byte string must give either a parsed trace or an error,
 * never a crash, a leak or an out-of-range row. The named-column reader
 * gets the input twice: under a fixed column list (the ITP names, so the
 * ITP seeds reach it) and with the input's first line as the column list
 * and the rest as the trace. The placement study's task-list reader gets
 * it as well: every task it keeps must pass place_task_check. So do the
 * Pollux application readers, the input split at blank lines into a
 * scalability, a placements and a validation file of one application:
 * when all three parse, its iteration times and work must be finite and
 * positive. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sim/placement.h"
#include "sim/pollux_apps.h"
#include "sim/pollux_model.h"
#include "sim/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_trace(const struct sim_trace *t)
{
	for (size_t i = 0; i < t->n; i++) {
		/* a Pollux job's duration comes later, from its application */
		if (t->jobs[i].gpus < 1 || t->jobs[i].gpus > SIM_TRACE_MAX_GPUS ||
		    (t->kind != SIM_TRACE_POLLUX && t->jobs[i].duration < 1) ||
		    (t->kind == SIM_TRACE_POLLUX &&
		     (t->jobs[i].batch_size < 1 || t->jobs[i].app[0] == '\0')) ||
		    t->jobs[i].submit < 0 || t->jobs[i].submit > SIM_TRACE_MAX_SECONDS ||
		    (i > 0 && t->jobs[i].submit < t->jobs[i - 1].submit))
			__builtin_trap();
	}
	const struct sim_trace_skips *s = &t->skipped;
	size_t sum = 0;
	for (int i = 0; i < SIM_SKIP_NREASONS; i++)
		sum += s->count[i];
	if (sum != s->total || s->n_examples > SIM_TRACE_SKIP_EXAMPLES ||
	    s->n_examples !=
	        (s->total < SIM_TRACE_SKIP_EXAMPLES ? s->total : SIM_TRACE_SKIP_EXAMPLES))
		__builtin_trap();
	for (size_t i = 0; i < s->n_examples; i++)
		if (!memchr(s->example[i], '\0', sizeof(s->example[i])))
			__builtin_trap();
	if (t->layout == SIM_LAYOUT_COLUMNS && (t->n == 0 || t->jobs[0].submit != 0))
		__builtin_trap();
	if (t->layout != SIM_LAYOUT_COLUMNS && s->total != 0)
		__builtin_trap();
}

static void parse_columns(const char *spec, const char *buf, size_t len)
{
	char msg[256];
	struct sim_trace_format f;
	struct sim_trace t;
	if (sim_trace_format_parse(NULL, spec, &f, msg, sizeof(msg)) != DRAKE_OK)
		return;
	if (sim_trace_parse_as(buf, len, "fuzz", &f, &t, msg, sizeof(msg)) == DRAKE_OK) {
		check_trace(&t);
		sim_trace_release(&t);
	}
}

/* Up to the next blank line ("\n\n"), or the rest; *p moves past it. */
static size_t part(const char **p, const char *end)
{
	const char *b = *p;
	for (const char *c = b; c + 1 < end; c++) {
		if (c[0] == '\n' && c[1] == '\n') {
			*p = c + 2;
			return (size_t)(c + 1 - b);
		}
	}
	*p = end;
	return (size_t)(end - b);
}

/* The input as a Pollux application: scalability.csv, placements.csv and
 * validation-64.csv, separated by blank lines. */
static void parse_app(const char *buf, size_t len)
{
	static const int layouts[][4] = {{1, 0, 0, 0}, {2, 2, 0, 0}, {4, 4, 4, 1}, {1, 1, 1, 1}};
	char msg[256];
	struct sim_papp a;
	const char *p = buf, *end = buf + len;
	memset(&a, 0, sizeof(a));
	snprintf(a.name, sizeof(a.name), "fuzz");
	const char *s1 = p;
	size_t n1 = part(&p, end);
	const char *s2 = p;
	size_t n2 = part(&p, end);
	const char *s3 = p;
	size_t n3 = (size_t)(end - p);
	if (sim_papp_parse_scalability(s1, n1, "s", &a, msg, sizeof(msg)) == DRAKE_OK &&
	    sim_papp_parse_placements(s2, n2, "p", &a, msg, sizeof(msg)) == DRAKE_OK &&
	    sim_papp_parse_curve(s3, n3, "c", 64, &a, msg, sizeof(msg)) == DRAKE_OK &&
	    sim_papp_finish(&a, "fuzz", msg, sizeof(msg)) == DRAKE_OK) {
		for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
			double t = sim_papp_iter_time(&a, layouts[i], 4, 64);
			if (!isfinite(t) || t <= 0)
				__builtin_trap();
		}
		double it, metric;
		if (sim_papp_work(&a, 64, &it, &metric) != DRAKE_OK || !isfinite(it) || it < 0)
			__builtin_trap();
	}
	sim_papp_release(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	char msg[256];
	struct sim_trace t;
	if (sim_trace_parse(buf, size, "fuzz", &t, msg, sizeof(msg)) == DRAKE_OK) {
		check_trace(&t);
		sim_trace_release(&t);
	}
	parse_columns("submit=submission_time,duration=duration,gpus=num_gpu,id=job_id", buf, size);
	const char *nl = memchr(buf, '\n', size);
	char spec[512];
	if (nl && (size_t)(nl - buf) < sizeof(spec)) {
		memcpy(spec, buf, (size_t)(nl - buf));
		spec[nl - buf] = '\0';
		parse_columns(spec, nl + 1, size - (size_t)(nl + 1 - buf));
	}
	struct sim_nodes n;
	if (sim_nodes_parse(buf, size, "fuzz", &n, msg, sizeof(msg)) == DRAKE_OK) {
		for (size_t i = 0; i < n.n; i++)
			if (n.rows[i].gpu < 0 || n.rows[i].gpu > SIM_NODES_MAX_GPUS)
				__builtin_trap();
		sim_nodes_release(&n);
	}
	parse_app(buf, size);
	struct place_models models = {0};
	struct placement_tasks tasks;
	if (placement_tasks_parse(buf, size, "fuzz", &models, &tasks, msg, sizeof(msg)) ==
	    DRAKE_OK) {
		for (size_t i = 0; i < tasks.n; i++)
			if (place_task_check(&tasks.t[i], msg, sizeof(msg)) != DRAKE_OK ||
			    (tasks.t[i].num_gpu == 0 && tasks.t[i].models != PLACE_ANY_MODEL))
				__builtin_trap();
		placement_tasks_release(&tasks);
	}
	return 0;
}
