/*
 * trace_columns.c - a user's own trace CSV, read by naming its columns
 * (`drake sim --trace-columns submit=COL,duration=COL,gpus=COL[,id=COL]`).
 *
 * Unlike the project's fixed traces (trace.c), a user's file is taken as it
 * comes: other columns are ignored, fields may be quoted as RFC 4180 says
 * (within one line), and a bad row is skipped and counted per reason rather
 * than failing the load. What still fails it: a bad header (too long, badly
 * quoted, more than SIM_TRACE_MAX_COLUMNS, a named column missing or there
 * twice), more than SIM_TRACE_MAX_ROWS rows, submit times spanning more
 * than SIM_TRACE_MAX_SECONDS, and no usable row at all. The kept rows are
 * stable-sorted by submit time and shifted so the first submits at 0,
 * which lets epoch timestamps in.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/trace.h"
#include "sim/trace_internal.h"

enum { ROLE_SUBMIT, ROLE_DURATION, ROLE_GPUS, ROLE_ID, NROLES };

static const char *const role_name[NROLES] = {"submit", "duration", "gpus", "id"};

static const char *role_column(const struct sim_trace_format *f, int role)
{
	const char *const cols[NROLES] = {f->submit, f->duration, f->gpus, f->id};
	return cols[role];
}

static const char *const skip_name[SIM_SKIP_NREASONS] = {
    [SIM_SKIP_FIELDS] = "wrong field count",  [SIM_SKIP_QUOTE] = "bad quoting",
    [SIM_SKIP_LINE] = "line too long or NUL", [SIM_SKIP_SYNTAX] = "not an integer",
    [SIM_SKIP_NEGATIVE] = "negative",         [SIM_SKIP_ZERO] = "zero",
    [SIM_SKIP_RANGE] = "over a limit",        [SIM_SKIP_ID] = "bad id",
};

const char *sim_trace_skip_name(enum sim_trace_skip why)
{
	return (unsigned)why < SIM_SKIP_NREASONS ? skip_name[why] : "?";
}

/* One role=column[:unit] item of a column list. */
static drake_err format_item(char *item, struct sim_trace_format *f, bool *seen, char *msg,
                             size_t mlen)
{
	char *eq = strchr(item, '=');
	if (!eq)
		return drake_errorf(DRAKE_EINVAL, msg, mlen,
		                    "trace columns: \"%.64s\" is not role=column", item);
	*eq = '\0';
	int role = 0;
	while (role < NROLES && strcmp(item, role_name[role]) != 0)
		role++;
	if (role == NROLES)
		return drake_errorf(DRAKE_EINVAL, msg, mlen,
		                    "trace columns: unknown role \"%.64s\" (want submit, "
		                    "duration, gpus or id)",
		                    item);
	if (seen[role])
		return drake_errorf(DRAKE_EINVAL, msg, mlen, "trace columns: %s given twice",
		                    role_name[role]);
	seen[role] = true;
	char *col = eq + 1, *colon = strrchr(col, ':');
	if (colon) {
		int64_t *unit = role == ROLE_SUBMIT     ? &f->submit_unit
		                : role == ROLE_DURATION ? &f->duration_unit
		                                        : NULL;
		if (!unit)
			return drake_errorf(DRAKE_EINVAL, msg, mlen,
			                    "trace columns: %s takes no unit", role_name[role]);
		const char *u = colon + 1;
		*unit = strcmp(u, "s") == 0   ? 1
		        : strcmp(u, "m") == 0 ? 60
		        : strcmp(u, "h") == 0 ? 3600
		                              : 0;
		if (!*unit)
			return drake_errorf(DRAKE_EINVAL, msg, mlen,
			                    "trace columns: unit \"%.16s\" of %s is not s, m or h",
			                    u, role_name[role]);
		*colon = '\0';
	}
	if (!*col)
		return drake_errorf(DRAKE_EINVAL, msg, mlen, "trace columns: %s names no column",
		                    role_name[role]);
	if (strlen(col) > SIM_TRACE_MAX_ID)
		return drake_errorf(DRAKE_ELIMIT, msg, mlen,
		                    "trace columns: column name of %s longer than %d characters",
		                    role_name[role], SIM_TRACE_MAX_ID);
	for (int r = 0; r < NROLES; r++)
		if (seen[r] && r != role && strcmp(role_column(f, r), col) == 0)
			return drake_errorf(DRAKE_EINVAL, msg, mlen,
			                    "trace columns: column \"%s\" named for %s and %s", col,
			                    role_name[r], role_name[role]);
	char *const dst[NROLES] = {f->submit, f->duration, f->gpus, f->id};
	strcpy(dst[role], col);
	return DRAKE_OK;
}

drake_err sim_trace_format_parse(const char *layout, const char *columns,
                                 struct sim_trace_format *f, char *msg, size_t mlen)
{
	memset(f, 0, sizeof(*f));
	f->submit_unit = f->duration_unit = 1;
	bool spec = columns && *columns;
	if (!layout || !*layout || strcmp(layout, "auto") == 0)
		f->layout = spec ? SIM_LAYOUT_COLUMNS : SIM_LAYOUT_AUTO;
	else if (strcmp(layout, "itp") == 0)
		f->layout = SIM_LAYOUT_ITP;
	else if (strcmp(layout, "gang") == 0)
		f->layout = SIM_LAYOUT_GANG;
	else if (strcmp(layout, "pollux") == 0)
		f->layout = SIM_LAYOUT_POLLUX;
	else if (strcmp(layout, "columns") == 0)
		f->layout = SIM_LAYOUT_COLUMNS;
	else
		return drake_errorf(
		    DRAKE_EINVAL, msg, mlen,
		    "unknown trace format \"%.32s\" (auto, itp, gang, pollux, columns)", layout);
	if (f->layout == SIM_LAYOUT_COLUMNS && !spec)
		return drake_errorf(DRAKE_EINVAL, msg, mlen,
		                    "trace format columns needs a column list "
		                    "(submit=COL,duration=COL,gpus=COL[,id=COL])");
	if (!spec)
		return DRAKE_OK;
	if (f->layout != SIM_LAYOUT_COLUMNS)
		return drake_errorf(DRAKE_EINVAL, msg, mlen,
		                    "a column list goes with trace format columns, not %s", layout);
	char buf[4 * (SIM_TRACE_MAX_ID + 16)];
	if (strlen(columns) >= sizeof(buf))
		return drake_errorf(DRAKE_ELIMIT, msg, mlen, "trace columns: longer than %zu bytes",
		                    sizeof(buf) - 1);
	strcpy(buf, columns);
	bool seen[NROLES] = {false};
	drake_err err;
	for (char *item = buf, *next; item; item = next) {
		next = strchr(item, ',');
		if (next)
			*next++ = '\0';
		if ((err = format_item(item, f, seen, msg, mlen)))
			return err;
	}
	for (int r = 0; r < ROLE_ID; r++)
		if (!seen[r])
			return drake_errorf(DRAKE_EINVAL, msg, mlen,
			                    "trace columns: %s=COLUMN is missing", role_name[r]);
	return DRAKE_OK;
}

/* Splits a line at commas, RFC 4180 quotes removed in place ("a,b" and
 * "say ""hi"""). Returns the field count (max + 1 when there are more) or
 * -1 for a quote inside an unquoted field, text after a closing quote or an
 * unterminated quote, which is where a quoted line break ends up: lines are
 * read one at a time. */
static int split_quoted(char *line, char **f, int max)
{
	char *r = line, *w = line; /* w never passes r */
	int n = 0;
	for (;;) {
		if (n == max)
			return max + 1;
		f[n++] = w;
		if (*r == '"') {
			for (r++;; *w++ = *r++) {
				if (*r == '\0')
					return -1;
				if (*r == '"' && r[1] != '"')
					break;
				if (*r == '"')
					r++;
			}
			r++;
			if (*r != ',' && *r != '\0')
				return -1;
		} else {
			for (; *r != ',' && *r != '\0'; *w++ = *r++)
				if (*r == '"')
					return -1;
		}
		char sep = *r++;
		*w++ = '\0';
		if (sep == '\0')
			return n;
	}
}

static void skip(struct sim_trace_skips *s, enum sim_trace_skip why, const char *what)
{
	s->total++;
	s->count[why]++;
	if (s->n_examples < SIM_TRACE_SKIP_EXAMPLES)
		snprintf(s->example[s->n_examples++], sizeof(s->example[0]), "%s", what);
}

/* The header's columns as "a, b, c" for an error message. */
static void list_columns(char **h, int nh, char *buf, size_t cap)
{
	size_t used = 0;
	buf[0] = '\0';
	for (int i = 0; i < nh && used < cap; i++) {
		int k = snprintf(buf + used, cap - used, "%s\"%s\"", i ? ", " : "", h[i]);
		used += k > 0 ? (size_t)k : 0;
	}
}

/* Which field holds each role; -1 for an id not named. */
static drake_err find_columns(const struct trace_lines *l, char *header,
                              const struct sim_trace_format *f, int *col, int *nh, char *msg,
                              size_t mlen)
{
	char *h[SIM_TRACE_MAX_COLUMNS + 1];
	if (strncmp(header, "\xef\xbb\xbf", 3) == 0) /* a UTF-8 byte order mark */
		header += 3;
	*nh = split_quoted(header, h, SIM_TRACE_MAX_COLUMNS);
	if (*nh < 0)
		return drake_errorf(DRAKE_EINVAL, msg, mlen, "%s:1: bad quoting in the header",
		                    l->file);
	if (*nh > SIM_TRACE_MAX_COLUMNS)
		return drake_errorf(DRAKE_ELIMIT, msg, mlen, "%s:1: more than %d columns", l->file,
		                    SIM_TRACE_MAX_COLUMNS);
	for (int r = 0; r < NROLES; r++) {
		const char *name = role_column(f, r);
		col[r] = -1;
		for (int i = 0; *name && i < *nh; i++) {
			if (strcmp(h[i], name) != 0)
				continue;
			if (col[r] >= 0)
				return drake_errorf(
				    DRAKE_EINVAL, msg, mlen,
				    "%s:1: column \"%s\" appears twice in the header", l->file,
				    name);
			col[r] = i;
		}
		if (*name && col[r] < 0) {
			char list[256];
			list_columns(h, *nh, list, sizeof(list));
			return drake_errorf(
			    DRAKE_EINVAL, msg, mlen,
			    "%s:1: no column \"%s\" (%s) in the header; it has %.256s", l->file,
			    name, role_name[r], list);
		}
	}
	return DRAKE_OK;
}

/* One row into j; on failure the reason, and what into msg. */
static drake_err parse_row(const struct trace_lines *l, const struct sim_trace_format *f,
                           const int *col, char **fld, struct sim_trace_job *j,
                           enum sim_trace_skip *why, char *msg, size_t mlen)
{
	drake_err err;
	int64_t v;
	memset(j, 0, sizeof(*j));
	j->line = l->lineno;
	if ((err = trace_field_int(l, f->submit, fld[col[ROLE_SUBMIT]], 0,
	                           SIM_TRACE_MAX_TIMESTAMP / f->submit_unit, &v, why, msg, mlen)))
		return err;
	j->submit = v * f->submit_unit;
	if ((err = trace_field_int(l, f->duration, fld[col[ROLE_DURATION]], 1,
	                           SIM_TRACE_MAX_SECONDS / f->duration_unit, &v, why, msg, mlen)))
		return err;
	j->duration = v * f->duration_unit;
	if ((err = trace_field_int(l, f->gpus, fld[col[ROLE_GPUS]], 1, SIM_TRACE_MAX_GPUS, &v, why,
	                           msg, mlen)))
		return err;
	j->gpus = (int)v;
	if (col[ROLE_ID] < 0) {
		snprintf(j->id, sizeof(j->id), "line-%zu", l->lineno);
	} else if ((err = trace_field_id(l, f->id, fld[col[ROLE_ID]], j->id, sizeof(j->id), msg,
	                                 mlen))) {
		*why = SIM_SKIP_ID;
		return err;
	}
	return DRAKE_OK;
}

static int by_submit(const void *a, const void *b)
{
	const struct sim_trace_job *x = a, *y = b;
	if (x->submit != y->submit)
		return x->submit < y->submit ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

drake_err trace_columns_parse(struct trace_lines *l, char *header, const struct sim_trace_format *f,
                              struct sim_trace *out, char *msg, size_t mlen)
{
	char line[SIM_TRACE_MAX_LINE + 1];
	char *fld[SIM_TRACE_MAX_COLUMNS + 1];
	char what[sizeof(out->skipped.example[0])];
	int col[NROLES], nh, r;
	size_t cap = 0;
	drake_err err;
	out->layout = SIM_LAYOUT_COLUMNS;
	out->kind = SIM_TRACE_ITP;
	if ((err = find_columns(l, header, f, col, &nh, msg, mlen)))
		return err;
	while ((r = trace_next_line(l, line, sizeof(line))) != 0) {
		if (r < 0) {
			snprintf(what, sizeof(what), "%s:%zu: longer than %d bytes or has a NUL",
			         l->file, l->lineno, SIM_TRACE_MAX_LINE);
			skip(&out->skipped, SIM_SKIP_LINE, what);
			continue;
		}
		if (line[0] == '\0')
			continue;
		int nf = split_quoted(line, fld, SIM_TRACE_MAX_COLUMNS);
		if (nf < 0) {
			snprintf(
			    what, sizeof(what),
			    "%s:%zu: stray or unterminated quote (a quoted field ends on its line)",
			    l->file, l->lineno);
			skip(&out->skipped, SIM_SKIP_QUOTE, what);
			continue;
		}
		if (nf != nh) {
			snprintf(what, sizeof(what), "%s:%zu: %s%d fields, want %d as the header",
			         l->file, l->lineno, nf > SIM_TRACE_MAX_COLUMNS ? "over " : "",
			         nf > SIM_TRACE_MAX_COLUMNS ? SIM_TRACE_MAX_COLUMNS : nf, nh);
			skip(&out->skipped, SIM_SKIP_FIELDS, what);
			continue;
		}
		if ((err = trace_grow((void **)&out->jobs, &cap, out->n, sizeof(*out->jobs), l, msg,
		                      mlen)))
			goto fail;
		struct sim_trace_job *j = &out->jobs[out->n];
		enum sim_trace_skip why;
		if (parse_row(l, f, col, fld, j, &why, what, sizeof(what))) {
			skip(&out->skipped, why, what);
			continue;
		}
		j->order = (int64_t)out->n++;
	}
	if (out->n == 0) {
		if (out->skipped.total == 0)
			err = drake_errorf(DRAKE_EINVAL, msg, mlen, "%s: no jobs after the header",
			                   l->file);
		else
			err = drake_errorf(DRAKE_EINVAL, msg, mlen,
			                   "%s: no usable rows, %zu skipped; the first: %s",
			                   l->file, out->skipped.total, out->skipped.example[0]);
		goto fail;
	}
	qsort(out->jobs, out->n, sizeof(*out->jobs), by_submit);
	int64_t first = out->jobs[0].submit, span = out->jobs[out->n - 1].submit - first;
	if (span > SIM_TRACE_MAX_SECONDS) {
		err = drake_errorf(DRAKE_ELIMIT, msg, mlen,
		                   "%s: submit times (%s) span %lld s, more than %d", l->file,
		                   f->submit, (long long)span, SIM_TRACE_MAX_SECONDS);
		goto fail;
	}
	for (size_t i = 0; i < out->n; i++) {
		out->jobs[i].submit -= first;
		out->jobs[i].order = (int64_t)i;
	}
	return DRAKE_OK;
fail:
	sim_trace_release(out);
	return err;
}

void sim_trace_skips_print(FILE *out, const char *file, const struct sim_trace *t)
{
	const struct sim_trace_skips *s = &t->skipped;
	if (s->total == 0)
		return;
	fprintf(out, "drake sim: %s: skipped %zu of %zu rows:", file, s->total, s->total + t->n);
	for (int i = 0, sep = 0; i < SIM_SKIP_NREASONS; i++)
		if (s->count[i])
			fprintf(out, "%s %zu %s", sep++ ? "," : "", s->count[i], skip_name[i]);
	fputc('\n', out);
	for (size_t i = 0; i < s->n_examples; i++)
		fprintf(out, "drake sim:   %s\n", s->example[i]);
	if (s->total > s->n_examples)
		fprintf(out, "drake sim:   (%zu more not shown)\n", s->total - s->n_examples);
}
