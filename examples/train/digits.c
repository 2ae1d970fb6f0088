/*
 * digits.c - reads digits.h's CSV through zlib, which passes plain text
 * through unchanged, so the same code reads the .gz and a test's .csv.
 */
#include "examples/train/digits.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

void dataset_release(struct dataset *d)
{
	if (!d)
		return;
	free(d->x);
	free(d->y);
	memset(d, 0, sizeof(*d));
}

/* Parses one row into x (DIGITS_FEATURES values) and *label. */
static drake_err parse_row(char *line, double *x, uint8_t *label, const char *where, char *msg,
                           size_t len)
{
	int field = 0;
	char *p = line;
	for (;;) {
		char *end;
		errno = 0;
		long v = *p >= '0' && *p <= '9' ? strtol(p, &end, 10) : -1;
		if (v < 0 || errno || (*end != ',' && *end != '\0')) {
			size_t w = strcspn(p, ",");
			return drake_errorf(DRAKE_EINVAL, msg, len,
			                    "%s: field %d is \"%.*s\", not a whole number >= 0",
			                    where, field + 1, (int)(w > 32 ? 32 : w), p);
		}
		if (field < DIGITS_FEATURES) {
			if (v > 16)
				return drake_errorf(DRAKE_EINVAL, msg, len,
				                    "%s: pixel %d is %ld, outside 0..16", where,
				                    field + 1, v);
			x[field] = (double)v / 16.0;
		} else if (field == DIGITS_FEATURES) {
			if (v > 9)
				return drake_errorf(DRAKE_EINVAL, msg, len,
				                    "%s: the label is %ld, not a digit 0..9", where,
				                    v);
			*label = (uint8_t)v;
		}
		field++;
		if (*end == '\0')
			break;
		p = end + 1;
	}
	if (field != DIGITS_FEATURES + 1)
		return drake_errorf(DRAKE_EINVAL, msg, len,
		                    "%s: %d fields, expected %d (%d pixels, then the digit)", where,
		                    field, DIGITS_FEATURES + 1, DIGITS_FEATURES);
	return DRAKE_OK;
}

/* The stream's error (a truncated or corrupt gzip, a failed read), if any. */
static drake_err read_error(gzFile f, const char *path, char *msg, size_t len)
{
	int zerr;
	const char *zmsg = gzerror(f, &zerr);
	if (zerr == Z_OK || zerr == Z_STREAM_END)
		return DRAKE_OK;
	return drake_errorf(DRAKE_EIO, msg, len, "%s: cannot read it: %s", path,
	                    zerr == Z_ERRNO ? strerror(errno) : zmsg);
}

drake_err digits_load(const char *path, struct dataset *d, char *msg, size_t len)
{
	memset(d, 0, sizeof(*d));
	gzFile f = gzopen(path, "rb");
	if (!f)
		return drake_errorf(DRAKE_EIO, msg, len, "cannot open %s: %s", path,
		                    errno ? strerror(errno) : "out of memory");
	drake_err err = DRAKE_OK;
	size_t cap = 0;
	char line[DIGITS_LINE_MAX + 2], where[512];
	for (long lineno = 1;; lineno++) {
		if (!gzgets(f, line, sizeof(line)))
			break;
		snprintf(where, sizeof(where), "%s:%ld", path, lineno);
		size_t n = strlen(line);
		if ((n == 0 || line[n - 1] != '\n') && (err = read_error(f, path, msg, len)))
			goto out; /* a last row cut short by a broken stream is no row */
		if (n == sizeof(line) - 1 && line[n - 1] != '\n') {
			err = drake_errorf(DRAKE_ELIMIT, msg, len, "%s: a row over %d bytes", where,
			                   DIGITS_LINE_MAX);
			goto out;
		}
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (n == 0)
			continue;
		if (d->n == DIGITS_ROWS_MAX) {
			err = drake_errorf(DRAKE_ELIMIT, msg, len, "%s: over %d rows", where,
			                   DIGITS_ROWS_MAX);
			goto out;
		}
		if (d->n == cap) {
			cap = cap ? 2 * cap : 1024;
			double *x = realloc(d->x, cap * DIGITS_FEATURES * sizeof(double));
			if (x)
				d->x = x;
			uint8_t *y = x ? realloc(d->y, cap) : NULL;
			if (y)
				d->y = y;
			if (!x || !y) {
				err = drake_errorf(DRAKE_ENOMEM, msg, len, "out of memory");
				goto out;
			}
		}
		err = parse_row(line, d->x + d->n * DIGITS_FEATURES, &d->y[d->n], where, msg, len);
		if (err)
			goto out;
		d->n++;
	}
	if ((err = read_error(f, path, msg, len)))
		goto out;
	if (d->n == 0)
		err = drake_errorf(DRAKE_EINVAL, msg, len, "%s: no rows", path);
out:
	gzclose(f);
	if (err)
		dataset_release(d);
	return err;
}

static bool is_test(size_t i, double f)
{
	return floor((double)(i + 1) * f) > floor((double)i * f);
}

drake_err digits_split(const struct dataset *all, double test_fraction, struct dataset *train,
                       struct dataset *test, char *msg, size_t len)
{
	memset(train, 0, sizeof(*train));
	memset(test, 0, sizeof(*test));
	if (all->n < 2)
		return drake_errorf(DRAKE_EINVAL, msg, len,
		                    "%zu row%s: at least one to train on and one to test", all->n,
		                    all->n == 1 ? "" : "s");
	size_t nt = 0;
	for (size_t i = 0; i < all->n; i++)
		nt += is_test(i, test_fraction);
	/* a fraction too small or too large for so few rows: the last row
	 * tests, or only it trains */
	int force = nt == 0 ? 1 : nt == all->n ? -1 : 0;
	if (force)
		nt = force > 0 ? 1 : all->n - 1;
	size_t ntr = all->n - nt;
	train->x = malloc(ntr * DIGITS_FEATURES * sizeof(double));
	train->y = malloc(ntr);
	test->x = malloc(nt * DIGITS_FEATURES * sizeof(double));
	test->y = malloc(nt);
	if (!train->x || !train->y || !test->x || !test->y) {
		dataset_release(train);
		dataset_release(test);
		return drake_errorf(DRAKE_ENOMEM, msg, len, "out of memory");
	}
	for (size_t i = 0; i < all->n; i++) {
		bool t = force > 0   ? i == all->n - 1
		         : force < 0 ? i != all->n - 1
		                     : is_test(i, test_fraction);
		struct dataset *d = t ? test : train;
		memcpy(d->x + d->n * DIGITS_FEATURES, all->x + i * DIGITS_FEATURES,
		       DIGITS_FEATURES * sizeof(double));
		d->y[d->n++] = all->y[i];
	}
	return DRAKE_OK;
}
