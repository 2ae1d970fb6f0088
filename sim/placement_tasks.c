/*
 * placement_tasks.c - the placement study's inputs: the task list (columns
 * found by header name, every field checked, the first bad row reported
 * as file:line: what) and the cluster built from a node list.
 */
#include <stdlib.h>
#include <string.h>

#include "sim/placement.h"
#include "sim/trace_internal.h"

enum { COL_CPU, COL_MEM, COL_NGPU, COL_MILLI, COL_SPEC, NCOLS };
static const char *const col_names[NCOLS] = {"cpu_milli", "memory_mib", "num_gpu", "gpu_milli",
                                             "gpu_spec"};

/* Splits at commas in place; at most max fields (more: returns max + 1). */
static int split(char *line, char **f, int max)
{
	int n = 0;
	f[n++] = line;
	for (char *c = line; *c; c++) {
		if (*c != ',')
			continue;
		if (n == max)
			return max + 1;
		*c = '\0';
		f[n++] = c + 1;
	}
	return n;
}

static drake_err read_header(struct trace_lines *l, char *line, int col[NCOLS], int *nfields,
                             char *msg, size_t mlen)
{
	char *f[SIM_TRACE_MAX_COLUMNS + 1];
	int r = trace_next_line(l, line, SIM_TRACE_MAX_LINE + 1);
	if (r == 0)
		return drake_errorf(DRAKE_EINVAL, msg, mlen, "%s: empty file", l->file);
	if (r < 0)
		return drake_errorf(DRAKE_ELIMIT, msg, mlen, "%s:1: header too long or binary",
		                    l->file);
	char *h = line;
	if (strncmp(h, "\xef\xbb\xbf", 3) == 0) /* a UTF-8 byte order mark */
		h += 3;
	int n = split(h, f, SIM_TRACE_MAX_COLUMNS);
	if (n > SIM_TRACE_MAX_COLUMNS)
		return drake_errorf(DRAKE_ELIMIT, msg, mlen, "%s:1: more than %d columns", l->file,
		                    SIM_TRACE_MAX_COLUMNS);
	for (int c = 0; c < NCOLS; c++)
		col[c] = -1;
	for (int i = 0; i < n; i++)
		for (int c = 0; c < NCOLS; c++) {
			if (strcmp(f[i], col_names[c]) != 0)
				continue;
			if (col[c] >= 0)
				return drake_errorf(DRAKE_EINVAL, msg, mlen,
				                    "%s:1: column %s appears twice", l->file,
				                    col_names[c]);
			col[c] = i;
		}
	for (int c = 0; c < COL_SPEC; c++)
		if (col[c] < 0)
			return drake_errorf(DRAKE_EINVAL, msg, mlen,
			                    "%s:1: no column %s (a task list needs cpu_milli, "
			                    "memory_mib, num_gpu, gpu_milli; gpu_spec is optional)",
			                    l->file, col_names[c]);
	*nfields = n;
	return DRAKE_OK;
}

static drake_err read_row(struct trace_lines *l, char **f, const int col[NCOLS],
                          struct place_models *models, struct place_task *t, char *msg, size_t mlen)
{
	int64_t cpu, mem, ngpu, milli;
	drake_err err;
	if ((err = trace_field_int(l, "cpu_milli", f[col[COL_CPU]], 0, PLACE_MAX_CPU_MILLI, &cpu,
	                           NULL, msg, mlen)) ||
	    (err = trace_field_int(l, "memory_mib", f[col[COL_MEM]], 0, PLACE_MAX_MEM_MIB, &mem,
	                           NULL, msg, mlen)) ||
	    (err = trace_field_int(l, "num_gpu", f[col[COL_NGPU]], 0, PLACE_MAX_GPUS, &ngpu, NULL,
	                           msg, mlen)) ||
	    (err = trace_field_int(l, "gpu_milli", f[col[COL_MILLI]], 0, PLACE_GPU_MILLI, &milli,
	                           NULL, msg, mlen)))
		return err;
	*t = (struct place_task){cpu, mem, (int32_t)ngpu, (int32_t)milli, PLACE_ANY_MODEL};
	char why[200];
	if ((err = place_task_check(t, why, sizeof(why))))
		return drake_errorf(err, msg, mlen, "%s:%zu: %s", l->file, l->lineno, why);
	/* A task without GPUs has no model to be restricted to (the study drops
	 * its gpu_spec too). */
	if (col[COL_SPEC] >= 0 && ngpu > 0) {
		const char *spec = f[col[COL_SPEC]];
		for (const char *c = spec; *c; c++)
			if ((unsigned char)*c < 0x21 || (unsigned char)*c > 0x7e || *c == '"')
				return drake_errorf(
				    DRAKE_EINVAL, msg, mlen,
				    "%s:%zu: gpu_spec has a space, quote or control "
				    "character",
				    l->file, l->lineno);
		if ((err = place_models_mask(models, spec, &t->models, why, sizeof(why))))
			return drake_errorf(err, msg, mlen, "%s:%zu: gpu_spec: %s", l->file,
			                    l->lineno, why);
	}
	return DRAKE_OK;
}

drake_err placement_tasks_parse(const char *buf, size_t len, const char *file,
                                struct place_models *models, struct placement_tasks *out, char *msg,
                                size_t mlen)
{
	struct trace_lines l = {buf, buf + len, file ? file : "<tasks>", 0};
	char line[SIM_TRACE_MAX_LINE + 1];
	char *f[SIM_TRACE_MAX_COLUMNS + 1];
	int col[NCOLS], nfields = 0;
	memset(out, 0, sizeof(*out));
	drake_err err = read_header(&l, line, col, &nfields, msg, mlen);
	if (err)
		return err;
	size_t cap = 0;
	int r;
	while ((r = trace_next_line(&l, line, sizeof(line))) != 0) {
		if (r < 0) {
			err = drake_errorf(DRAKE_ELIMIT, msg, mlen,
			                   "%s:%zu: line longer than %d bytes or binary", l.file,
			                   l.lineno, SIM_TRACE_MAX_LINE);
			goto fail;
		}
		if (line[0] == '\0')
			continue;
		if (strchr(line, '"')) {
			err =
			    drake_errorf(DRAKE_EINVAL, msg, mlen,
			                 "%s:%zu: a double quote (quoted fields are not read here)",
			                 l.file, l.lineno);
			goto fail;
		}
		int n = split(line, f, SIM_TRACE_MAX_COLUMNS);
		if (n != nfields) {
			err = drake_errorf(
			    DRAKE_EINVAL, msg, mlen, "%s:%zu: %s%d fields, the header has %d",
			    l.file, l.lineno, n > SIM_TRACE_MAX_COLUMNS ? "over " : "",
			    n > SIM_TRACE_MAX_COLUMNS ? SIM_TRACE_MAX_COLUMNS : n, nfields);
			goto fail;
		}
		if ((err = trace_grow((void **)&out->t, &cap, out->n, sizeof(*out->t), &l, msg,
		                      mlen)) ||
		    (err = read_row(&l, f, col, models, &out->t[out->n], msg, mlen)))
			goto fail;
		out->n++;
	}
	if (out->n == 0) {
		err =
		    drake_errorf(DRAKE_EINVAL, msg, mlen, "%s: no tasks after the header", l.file);
		goto fail;
	}
	return DRAKE_OK;
fail:
	placement_tasks_release(out);
	return err;
}

drake_err placement_tasks_load(const char *path, struct place_models *models,
                               struct placement_tasks *out, char *msg, size_t mlen)
{
	char *b;
	size_t n;
	drake_err err = sim_read_file(path, SIM_TRACE_MAX_BYTES, &b, &n, msg, mlen);
	if (err)
		return err;
	err = placement_tasks_parse(b, n, path, models, out, msg, mlen);
	free(b);
	return err;
}

void placement_tasks_release(struct placement_tasks *t)
{
	if (!t)
		return;
	free(t->t);
	memset(t, 0, sizeof(*t));
}

drake_err placement_cluster_build(const struct sim_nodes *rows, const char *file,
                                  struct placement_cluster *out, char *msg, size_t mlen)
{
	memset(out, 0, sizeof(*out));
	out->nodes = calloc(rows->n ? rows->n : 1, sizeof(*out->nodes));
	if (!out->nodes)
		return drake_errorf(DRAKE_ENOMEM, msg, mlen, "out of memory for %zu nodes",
		                    rows->n);
	for (size_t i = 0; i < rows->n; i++) {
		const struct sim_node_row *r = &rows->rows[i];
		if (r->gpu > PLACE_MAX_GPUS) {
			placement_cluster_release(out);
			return drake_errorf(
			    DRAKE_ELIMIT, msg, mlen,
			    "%s:%zu: node %s has %d GPUs; the placement study takes "
			    "at most %d per node",
			    file, r->line, r->name, r->gpu, PLACE_MAX_GPUS);
		}
		int model = -1;
		if (r->model[0] && (model = place_model_index(&out->models, r->model, true)) < 0) {
			placement_cluster_release(out);
			return drake_errorf(
			    DRAKE_ELIMIT, msg, mlen,
			    "%s:%zu: GPU model %s: more than %d models, or a name of "
			    "%d characters or more",
			    file, r->line, r->model, PLACE_MAX_MODELS, PLACE_MODEL_MAX);
		}
		place_node_init(&out->nodes[i], r->cpu_milli, r->memory_mib, r->gpu, model);
		out->gpu_milli += (int64_t)r->gpu * PLACE_GPU_MILLI;
		if (r->cpu_milli > out->max_cpu_milli)
			out->max_cpu_milli = r->cpu_milli;
		if ((int64_t)r->gpu * PLACE_GPU_MILLI > out->max_gpu_milli)
			out->max_gpu_milli = (int64_t)r->gpu * PLACE_GPU_MILLI;
	}
	out->n = rows->n;
	if (out->gpu_milli == 0) {
		placement_cluster_release(out);
		return drake_errorf(DRAKE_EINVAL, msg, mlen, "%s: no node has a GPU", file);
	}
	return DRAKE_OK;
}

void placement_cluster_release(struct placement_cluster *c)
{
	if (!c)
		return;
	free(c->nodes);
	memset(c, 0, sizeof(*c));
}
