/*
 * trace_internal.h - shared by trace.c (the fixed layouts, node lists),
 * trace_columns.c (a user's named-column CSV) and placement_tasks.c (the
 * placement study's task lists) only: the line reader and the field
 * checks, whose messages name file:line and the field.
 */
#ifndef DRAKE_SIM_TRACE_INTERNAL_H
#define DRAKE_SIM_TRACE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "sim/trace.h"

struct trace_lines {
	const char *p, *end;
	const char *file;
	size_t lineno;
};

/* Next line into buf (without \r\n); 0 at end, -1 when too long or a NUL
 * (the line is passed over, so a caller may go on). */
int trace_next_line(struct trace_lines *l, char *buf, size_t cap);

/* Splits line at its commas, in place, into at most max fields of f (f
 * has room for max); returns the count, or max + 1 when there are more. */
int trace_split(char *line, char **f, int max);

/* A decimal integer field in [min, max] (min 0 or 1). On failure fills msg
 * and, when why is not NULL, the reason a lenient reader skips the row for. */
drake_err trace_field_int(const struct trace_lines *l, const char *name, const char *s, int64_t min,
                          int64_t max, int64_t *out, enum sim_trace_skip *why, char *msg,
                          size_t mlen) DRAKE_MUST_CHECK;

/* A printable, non-empty id without spaces or quotes, copied into dst. */
drake_err trace_field_id(const struct trace_lines *l, const char *what, const char *s, char *dst,
                         size_t cap, char *msg, size_t mlen) DRAKE_MUST_CHECK;

/* Room for row n in *arr (doubling), at most SIM_TRACE_MAX_ROWS rows. */
drake_err trace_grow(void **arr, size_t *cap, size_t n, size_t elem, const struct trace_lines *l,
                     char *msg, size_t mlen) DRAKE_MUST_CHECK;

/* The named-column reader; the header line was read into header. */
drake_err trace_columns_parse(struct trace_lines *l, char *header, const struct sim_trace_format *f,
                              struct sim_trace *out, char *msg, size_t mlen) DRAKE_MUST_CHECK;

#endif
