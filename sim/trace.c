/*
 * trace.c - the fixed trace layouts (ITP, gang) and the node-list parser:
 * one line at a time, every field checked, the first error reported as
 * file:line: what. A user's named-column CSV is trace_columns.c's.
 */
#include "sim/trace.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/trace_internal.h"

#define MAX_FIELDS 8

#define ITP_HEADER    "job_id,submission_time,duration,num_gpu"
#define GANG_HEADER   "job_id,submit_order,replicas,gpus_per_pod,duration_s"
#define POLLUX_HEADER "name,time,application,num_replicas,batch_size"

int trace_next_line(struct trace_lines *l, char *buf, size_t cap)
{
	if (l->p >= l->end)
		return 0;
	const char *start = l->p;
	const char *nl = memchr(start, '\n', (size_t)(l->end - start));
	size_t n = (size_t)((nl ? nl : l->end) - start);
	l->lineno++;
	l->p = nl ? nl + 1 : l->end;
	if (n > 0 && start[n - 1] == '\r')
		n--;
	if (n >= cap || memchr(start, '\0', n))
		return -1;
	memcpy(buf, start, n);
	buf[n] = '\0';
	return 1;
}

int trace_split(char *line, char **f, int max)
{
	int n = 0;
	f[n++] = line;
	for (char *c = line; *c; c++) {
		if (*c == ',') {
			if (n == max)
				return max + 1;
			*c = '\0';
			f[n++] = c + 1;
		}
	}
	return n;
}

/* A non-negative decimal integer, no sign, no spaces, at most max. */
static int parse_int(const char *s, int64_t max, int64_t *out)
{
	if (!*s)
		return -1;
	int64_t v = 0;
	for (const char *c = s; *c; c++) {
		if (*c < '0' || *c > '9')
			return -1;
		if (v > (max - (*c - '0')) / 10)
			return -2;
		v = v * 10 + (*c - '0');
	}
	*out = v;
	return 0;
}

drake_err trace_field_int(const struct trace_lines *l, const char *name, const char *s, int64_t min,
                          int64_t max, int64_t *out, enum sim_trace_skip *why, char *msg,
                          size_t mlen)
{
	enum sim_trace_skip dummy;
	if (!why)
		why = &dummy;
	int r = parse_int(s, max, out);
	if (r == -1 && s[0] == '-' && s[1] && strspn(s + 1, "0123456789") == strlen(s + 1)) {
		*why = SIM_SKIP_NEGATIVE;
		return drake_errorf(DRAKE_EINVAL, msg, mlen,
		                    "%s:%zu: %s \"%.32s\" is not an integer >= 0", l->file,
		                    l->lineno, name, s);
	}
	if (r == -1) {
		*why = SIM_SKIP_SYNTAX;
		return drake_errorf(DRAKE_EINVAL, msg, mlen,
		                    "%s:%zu: %s \"%.32s\" is not an integer", l->file, l->lineno,
		                    name, s);
	}
	if (r == -2 || *out > max) {
		*why = SIM_SKIP_RANGE;
		return drake_errorf(DRAKE_ELIMIT, msg, mlen, "%s:%zu: %s %.32s exceeds %lld",
		                    l->file, l->lineno, name, s, (long long)max);
	}
	if (*out < min) {
		*why = SIM_SKIP_ZERO;
		return drake_errorf(DRAKE_EINVAL, msg, mlen, "%s:%zu: %s must be at least %lld",
		                    l->file, l->lineno, name, (long long)min);
	}
	return DRAKE_OK;
}

drake_err trace_field_id(const struct trace_lines *l, const char *what, const char *s, char *dst,
                         size_t cap, char *msg, size_t mlen)
{
	size_t n = strlen(s);
	if (n == 0)
		return drake_errorf(DRAKE_EINVAL, msg, mlen, "%s:%zu: empty %s", l->file, l->lineno,
		                    what);
	if (n >= cap)
		return drake_errorf(DRAKE_ELIMIT, msg, mlen,
		                    "%s:%zu: %s longer than %zu characters", l->file, l->lineno,
		                    what, cap - 1);
	for (const char *c = s; *c; c++)
		if ((unsigned char)*c < 0x21 || (unsigned char)*c > 0x7e || *c == '"')
			return drake_errorf(DRAKE_EINVAL, msg, mlen,
			                    "%s:%zu: %s has a space, quote or control character",
			                    l->file, l->lineno, what);
	memcpy(dst, s, n + 1);
	return DRAKE_OK;
}

drake_err trace_grow(void **arr, size_t *cap, size_t n, size_t elem, const struct trace_lines *l,
                     char *msg, size_t mlen)
{
	if (n < *cap)
		return DRAKE_OK;
	if (n >= SIM_TRACE_MAX_ROWS)
		return drake_errorf(DRAKE_ELIMIT, msg, mlen, "%s:%zu: more than %d rows", l->file,
		                    l->lineno, SIM_TRACE_MAX_ROWS);
	size_t c = *cap ? *cap * 2 : 256;
	void *p = realloc(*arr, c * elem);
	if (!p)
		return drake_errorf(DRAKE_ENOMEM, msg, mlen, "out of memory reading %s", l->file);
	*arr = p;
	*cap = c;
	return DRAKE_OK;
}

/* A Pollux workload's row: the job runs one GPU per replica; its duration
 * and the rest come from its application's measurements (sim_pollux_bind). */
static drake_err parse_pollux(struct trace_lines *l, char **f, struct sim_trace_job *j, char *msg,
                              size_t mlen)
{
	drake_err err;
	int64_t v;
	if ((err = trace_field_int(l, "time", f[1], 0, SIM_TRACE_MAX_SECONDS, &j->submit, NULL, msg,
	                           mlen)) ||
	    (err = trace_field_id(l, "application", f[2], j->app, sizeof(j->app), msg, mlen)) ||
	    (err = trace_field_int(l, "num_replicas", f[3], 1, SIM_TRACE_MAX_REPLICAS, &v, NULL,
	                           msg, mlen)))
		return err;
	j->replicas = j->gpus = (int)v;
	j->gpus_per_pod = 1;
	if ((err = trace_field_int(l, "batch_size", f[4], 1, SIM_TRACE_MAX_BATCH, &v, NULL, msg,
	                           mlen)))
		return err;
	j->batch_size = (int)v;
	j->app_index = -1;
	return DRAKE_OK;
}

/* The row's last field, when the header ends in ",kind": its job's kind
 * as written ("" for none), resolved against the kinds drake knows by
 * sim_kind_resolve (sim/kind_mix.h), so this parser needs no registry. */
static drake_err parse_kind(struct trace_lines *l, const char *f, struct sim_trace_job *j,
                            char *msg, size_t mlen)
{
	if (strlen(f) > SIM_TRACE_MAX_KIND)
		return drake_errorf(DRAKE_ELIMIT, msg, mlen,
		                    "%s:%zu: kind longer than %d characters", l->file, l->lineno,
		                    SIM_TRACE_MAX_KIND);
	strcpy(j->kind_name, f);
	return DRAKE_OK;
}

static drake_err parse_row(struct trace_lines *l, enum sim_trace_kind kind, bool has_kind, char **f,
                           int nf, struct sim_trace_job *j, char *msg, size_t mlen)
{
	drake_err err;
	int64_t v;
	int want = (kind == SIM_TRACE_ITP ? 4 : 5) + has_kind;
	if (nf != want)
		return drake_errorf(DRAKE_EINVAL, msg, mlen, "%s:%zu: %d fields, want %d", l->file,
		                    l->lineno, nf > MAX_FIELDS ? MAX_FIELDS : nf, want);
	memset(j, 0, sizeof(*j));
	j->line = l->lineno;
	if (has_kind && (err = parse_kind(l, f[want - 1], j, msg, mlen)))
		return err;
	if ((err = trace_field_id(l, kind == SIM_TRACE_POLLUX ? "name" : "job_id", f[0], j->id,
	                          sizeof(j->id), msg, mlen)))
		return err;
	if (kind == SIM_TRACE_POLLUX)
		return parse_pollux(l, f, j, msg, mlen);
	if (kind == SIM_TRACE_ITP) {
		if ((err = trace_field_int(l, "submission_time", f[1], 0, SIM_TRACE_MAX_SECONDS,
		                           &j->submit, NULL, msg, mlen)) ||
		    (err = trace_field_int(l, "duration", f[2], 1, SIM_TRACE_MAX_SECONDS,
		                           &j->duration, NULL, msg, mlen)) ||
		    (err = trace_field_int(l, "num_gpu", f[3], 1, SIM_TRACE_MAX_GPUS, &v, NULL, msg,
		                           mlen)))
			return err;
		j->gpus = (int)v;
		return DRAKE_OK;
	}
	if ((err = trace_field_int(l, "submit_order", f[1], 0, SIM_TRACE_MAX_ROWS, &j->order, NULL,
	                           msg, mlen)))
		return err;
	if ((err = trace_field_int(l, "replicas", f[2], 1, SIM_TRACE_MAX_REPLICAS, &v, NULL, msg,
	                           mlen)))
		return err;
	j->replicas = (int)v;
	if ((err = trace_field_int(l, "gpus_per_pod", f[3], 1, SIM_NODES_MAX_GPUS, &v, NULL, msg,
	                           mlen)))
		return err;
	j->gpus_per_pod = (int)v;
	if ((err = trace_field_int(l, "duration_s", f[4], 1, SIM_TRACE_MAX_SECONDS, &j->duration,
	                           NULL, msg, mlen)))
		return err;
	if ((int64_t)j->replicas * j->gpus_per_pod > SIM_TRACE_MAX_GPUS)
		return drake_errorf(DRAKE_ELIMIT, msg, mlen, "%s:%zu: %d x %d GPUs exceeds %d",
		                    l->file, l->lineno, j->replicas, j->gpus_per_pod,
		                    SIM_TRACE_MAX_GPUS);
	j->gpus = j->replicas * j->gpus_per_pod;
	return DRAKE_OK;
}

drake_err sim_trace_parse(const char *buf, size_t len, const char *file, struct sim_trace *out,
                          char *msg, size_t mlen)
{
	return sim_trace_parse_as(buf, len, file, NULL, out, msg, mlen);
}

drake_err sim_trace_parse_as(const char *buf, size_t len, const char *file,
                             const struct sim_trace_format *fmt, struct sim_trace *out, char *msg,
                             size_t mlen)
{
	struct trace_lines l = {buf, buf + len, file ? file : "<trace>", 0};
	char line[SIM_TRACE_MAX_LINE + 1];
	char *f[MAX_FIELDS + 1];
	enum sim_trace_layout want = fmt ? fmt->layout : SIM_LAYOUT_AUTO;
	memset(out, 0, sizeof(*out));
	int r = trace_next_line(&l, line, sizeof(line));
	if (r == 0)
		return drake_errorf(DRAKE_EINVAL, msg, mlen, "%s: empty file", l.file);
	if (r < 0)
		return drake_errorf(DRAKE_EINVAL, msg, mlen, "%s:1: header too long or binary",
		                    l.file);
	if (want == SIM_LAYOUT_COLUMNS)
		return trace_columns_parse(&l, line, fmt, out, msg, mlen);
	static const struct {
		enum sim_trace_layout layout;
		enum sim_trace_kind kind;
		const char *header;
	} fixed[] = {{SIM_LAYOUT_ITP, SIM_TRACE_ITP, ITP_HEADER},
	             {SIM_LAYOUT_GANG, SIM_TRACE_GANG, GANG_HEADER},
	             {SIM_LAYOUT_POLLUX, SIM_TRACE_POLLUX, POLLUX_HEADER}};
	size_t k = 0, nfixed = sizeof(fixed) / sizeof(fixed[0]);
	/* a fixed layout's header may end in ",kind": each row then says its
	 * job's kind last */
	size_t hl = strlen(line);
	bool has_kind = hl > 5 && strcmp(line + hl - 5, ",kind") == 0;
	if (has_kind)
		line[hl - 5] = '\0';
	while (k < nfixed && (strcmp(line, fixed[k].header) != 0 ||
	                      (want != SIM_LAYOUT_AUTO && want != fixed[k].layout)))
		k++;
	if (k == nfixed && want == SIM_LAYOUT_AUTO)
		return drake_errorf(DRAKE_EINVAL, msg, mlen,
		                    "%s:1: unknown header \"%.80s\" (want an ITP, gang or Pollux "
		                    "trace, or name its columns with --trace-columns)",
		                    l.file, line);
	if (k == nfixed) {
		while (--k > 0 && fixed[k].layout != want)
			;
		return drake_errorf(DRAKE_EINVAL, msg, mlen, "%s:1: header \"%.80s\" is not %s",
		                    l.file, line, fixed[k].header);
	}
	out->layout = fixed[k].layout;
	out->kind = fixed[k].kind;
	size_t cap = 0;
	drake_err err = DRAKE_OK;
	int saw_blank = 0;
	while ((r = trace_next_line(&l, line, sizeof(line))) != 0) {
		if (r < 0) {
			err = drake_errorf(DRAKE_ELIMIT, msg, mlen,
			                   "%s:%zu: line longer than %d bytes or has a NUL", l.file,
			                   l.lineno, SIM_TRACE_MAX_LINE);
			goto fail;
		}
		if (line[0] == '\0') {
			saw_blank = 1;
			continue;
		}
		if (saw_blank) {
			err = drake_errorf(DRAKE_EINVAL, msg, mlen,
			                   "%s:%zu: row after a blank line", l.file, l.lineno);
			goto fail;
		}
		if ((err = trace_grow((void **)&out->jobs, &cap, out->n, sizeof(*out->jobs), &l,
		                      msg, mlen)))
			goto fail;
		struct sim_trace_job *j = &out->jobs[out->n];
		if ((err = parse_row(&l, out->kind, has_kind, f, trace_split(line, f, MAX_FIELDS),
		                     j, msg, mlen)))
			goto fail;
		if (out->kind != SIM_TRACE_GANG) {
			j->order = (int64_t)out->n;
			if (out->n > 0 && j->submit < out->jobs[out->n - 1].submit) {
				err = drake_errorf(
				    DRAKE_EINVAL, msg, mlen,
				    "%s:%zu: %s %lld is before the "
				    "previous row's %lld (rows must be sorted)",
				    l.file, l.lineno,
				    out->kind == SIM_TRACE_ITP ? "submission_time" : "time",
				    (long long)j->submit, (long long)out->jobs[out->n - 1].submit);
				goto fail;
			}
		} else if (out->n > 0 && j->order <= out->jobs[out->n - 1].order) {
			err = drake_errorf(DRAKE_EINVAL, msg, mlen,
			                   "%s:%zu: submit_order %lld does not increase", l.file,
			                   l.lineno, (long long)j->order);
			goto fail;
		}
		out->n++;
	}
	if (out->n == 0) {
		err = drake_errorf(DRAKE_EINVAL, msg, mlen, "%s: no jobs after the header", l.file);
		goto fail;
	}
	return DRAKE_OK;
fail:
	sim_trace_release(out);
	return err;
}

void sim_trace_release(struct sim_trace *t)
{
	if (!t)
		return;
	free(t->jobs);
	memset(t, 0, sizeof(*t));
}

drake_err sim_trace_skip(struct sim_trace *t, size_t first, char *msg, size_t mlen)
{
	if (first == 0)
		return DRAKE_OK;
	if (first >= t->n)
		return drake_errorf(DRAKE_EINVAL, msg, mlen,
		                    "first job %zu is past the trace's last (it has %zu jobs)",
		                    first, t->n);
	memmove(t->jobs, t->jobs + first, (t->n - first) * sizeof(*t->jobs));
	t->n -= first;
	return DRAKE_OK;
}

drake_err sim_nodes_parse(const char *buf, size_t len, const char *file, struct sim_nodes *out,
                          char *msg, size_t mlen)
{
	struct trace_lines l = {buf, buf + len, file ? file : "<nodes>", 0};
	char line[SIM_TRACE_MAX_LINE + 1];
	char *f[MAX_FIELDS + 1];
	memset(out, 0, sizeof(*out));
	int r = trace_next_line(&l, line, sizeof(line));
	if (r <= 0 || strcmp(line, "sn,cpu_milli,memory_mib,gpu,model") != 0)
		return drake_errorf(DRAKE_EINVAL, msg, mlen,
		                    "%s:1: want header sn,cpu_milli,memory_mib,gpu,model", l.file);
	size_t cap = 0;
	drake_err err = DRAKE_OK;
	while ((r = trace_next_line(&l, line, sizeof(line))) != 0) {
		if (r < 0) {
			err = drake_errorf(DRAKE_ELIMIT, msg, mlen,
			                   "%s:%zu: line too long or binary", l.file, l.lineno);
			goto fail;
		}
		if (line[0] == '\0')
			continue;
		if ((err = trace_grow((void **)&out->rows, &cap, out->n, sizeof(*out->rows), &l,
		                      msg, mlen)))
			goto fail;
		struct sim_node_row *n = &out->rows[out->n];
		memset(n, 0, sizeof(*n));
		int nf = trace_split(line, f, MAX_FIELDS);
		int64_t v;
		if (nf != 5) {
			err = drake_errorf(DRAKE_EINVAL, msg, mlen, "%s:%zu: %d fields, want 5",
			                   l.file, l.lineno, nf > MAX_FIELDS ? MAX_FIELDS : nf);
			goto fail;
		}
		if ((err = trace_field_id(&l, "sn", f[0], n->name, sizeof(n->name), msg, mlen)) ||
		    (err = trace_field_int(&l, "cpu_milli", f[1], 1, SIM_NODES_MAX_CPU_MILLI,
		                           &n->cpu_milli, NULL, msg, mlen)) ||
		    (err = trace_field_int(&l, "memory_mib", f[2], 1, SIM_NODES_MAX_MEM_MIB,
		                           &n->memory_mib, NULL, msg, mlen)) ||
		    (err = trace_field_int(&l, "gpu", f[3], 0, SIM_NODES_MAX_GPUS, &v, NULL, msg,
		                           mlen)))
			goto fail;
		n->gpu = (int)v;
		n->line = l.lineno;
		if (f[4][0] && (err = trace_field_id(&l, "model", f[4], n->model, sizeof(n->model),
		                                     msg, mlen)))
			goto fail;
		out->n++;
	}
	if (out->n == 0) {
		err =
		    drake_errorf(DRAKE_EINVAL, msg, mlen, "%s: no nodes after the header", l.file);
		goto fail;
	}
	return DRAKE_OK;
fail:
	sim_nodes_release(out);
	return err;
}

void sim_nodes_release(struct sim_nodes *n)
{
	if (!n)
		return;
	free(n->rows);
	memset(n, 0, sizeof(*n));
}

drake_err sim_read_file(const char *path, size_t max, char **buf, size_t *len, char *msg,
                        size_t mlen)
{
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return drake_errorf(DRAKE_EIO, msg, mlen, "%s: %s", path, strerror(errno));
	char *b = malloc(max + 1);
	if (!b) {
		fclose(fp);
		return drake_errorf(DRAKE_ENOMEM, msg, mlen, "out of memory reading %s", path);
	}
	size_t n = fread(b, 1, max + 1, fp);
	int bad = ferror(fp);
	fclose(fp);
	if (bad) {
		free(b);
		return drake_errorf(DRAKE_EIO, msg, mlen, "%s: read error", path);
	}
	if (n > max) {
		free(b);
		return drake_errorf(DRAKE_ELIMIT, msg, mlen, "%s: larger than %zu bytes", path,
		                    max);
	}
	b[n] = '\0';
	*buf = b;
	*len = n;
	return DRAKE_OK;
}

drake_err sim_trace_load(const char *path, struct sim_trace *out, char *msg, size_t mlen)
{
	return sim_trace_load_as(path, NULL, out, msg, mlen);
}

drake_err sim_trace_load_as(const char *path, const struct sim_trace_format *f,
                            struct sim_trace *out, char *msg, size_t mlen)
{
	char *b;
	size_t n;
	drake_err err = sim_read_file(path, SIM_TRACE_MAX_BYTES, &b, &n, msg, mlen);
	if (err)
		return err;
	err = sim_trace_parse_as(b, n, path, f, out, msg, mlen);
	free(b);
	return err;
}

drake_err sim_nodes_load(const char *path, struct sim_nodes *out, char *msg, size_t mlen)
{
	char *b;
	size_t n;
	drake_err err = sim_read_file(path, SIM_TRACE_MAX_BYTES, &b, &n, msg, mlen);
	if (err)
		return err;
	err = sim_nodes_parse(b, n, path, out, msg, mlen);
	free(b);
	return err;
}
