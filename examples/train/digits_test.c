/*
 * digits_test.c - the digits CSV reader: gzip and plain files, every kind
 * of malformed row refused with file:line and what is wrong, a corrupt gzip
 * stream, the row and line limits, and the deterministic train/test split.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "examples/train/digits.h"

static char dir[64];

static int setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/digits_test.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Writes text to dir/name, gzip-compressed when gz; returns the path. */
static const char *write_file(const char *name, const char *text, bool gz)
{
	static char path[128];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (gz) {
		gzFile f = gzopen(path, "wb");
		assert_non_null(f);
		assert_int_equal(gzwrite(f, text, (unsigned)strlen(text)), (int)strlen(text));
		assert_int_equal(gzclose(f), Z_OK);
	} else {
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		fputs(text, f);
		fclose(f);
	}
	return path;
}

/* A row of 64 pixels all `pixel`, then the digit. */
static void row(char *out, size_t len, int pixel, int digit)
{
	size_t at = 0;
	for (int i = 0; i < DIGITS_FEATURES; i++)
		at += (size_t)snprintf(out + at, len - at, "%d,", pixel);
	snprintf(out + at, len - at, "%d\n", digit);
}

static void test_reads_gzip_and_plain_csv(void **state)
{
	char text[2048] = "", r[512];
	for (int d = 0; d < 3; d++) {
		row(r, sizeof(r), d * 8, d + 5);
		strcat(text, r);
	}
	strcat(text, "\n"); /* a trailing blank line is no row */
	for (int gz = 0; gz < 2; gz++) {
		const char *path = write_file(gz ? "ok.csv.gz" : "ok.csv", text, gz);
		struct dataset d;
		char msg[512] = "";
		if (digits_load(path, &d, msg, sizeof(msg)) != DRAKE_OK)
			fail_msg("%s", msg);
		assert_int_equal(d.n, 3);
		assert_int_equal(d.y[0], 5);
		assert_int_equal(d.y[2], 7);
		assert_true(d.x[0] == 0.0);
		assert_true(d.x[DIGITS_FEATURES] == 0.5);          /* 8 / 16 */
		assert_true(d.x[2 * DIGITS_FEATURES + 63] == 1.0); /* 16 / 16 */
		dataset_release(&d);
	}
	/* CRLF line ends */
	row(r, sizeof(r), 1, 1);
	r[strlen(r) - 1] = '\0';
	strcat(r, "\r\n");
	struct dataset d;
	char msg[512];
	assert_int_equal(digits_load(write_file("crlf.csv", r, false), &d, msg, sizeof(msg)),
	                 DRAKE_OK);
	assert_int_equal(d.n, 1);
	dataset_release(&d);
}

static void test_refuses_malformed_rows_with_file_and_line(void **state)
{
	char good[512];
	row(good, sizeof(good), 3, 4);
	const struct {
		const char *bad, *want;
	} cases[] = {
	    {"1,2,3\n", ":2: 3 fields, expected 65 (64 pixels, then the digit)"},
	    {"x\n", ":2: field 1 is \"x\", not a whole number >= 0"},
	    {"0,0,-1\n", ":2: field 3 is \"-1\", not a whole number"},
	    {"0,,1\n", ":2: field 2 is \"\", not a whole number"},
	    {"0,1.5,1\n", ":2: field 2 is \"1.5\""},
	    {"17,0\n", ":2: pixel 1 is 17, outside 0..16"},
	    {"99999999999999999999\n", ":2: field 1 is \"99999999999999999999\""},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[1024];
		snprintf(text, sizeof(text), "%s%s%s", good, cases[i].bad, good);
		const char *path = write_file("bad.csv.gz", text, true);
		struct dataset d;
		char msg[512] = "", want[256];
		snprintf(want, sizeof(want), "%s%s", path, cases[i].want);
		drake_err e = digits_load(path, &d, msg, sizeof(msg));
		if (e != DRAKE_EINVAL || !strstr(msg, want))
			fail_msg("case %zu: got %d \"%s\", want \"%s\"", i, e, msg, want);
	}
	/* a label that is no digit, and 66 fields */
	char text[1024];
	row(text, sizeof(text), 0, 10);
	struct dataset d;
	char msg[512];
	assert_int_equal(digits_load(write_file("label.csv", text, false), &d, msg, sizeof(msg)),
	                 DRAKE_EINVAL);
	assert_non_null(strstr(msg, "label.csv:1: the label is 10, not a digit 0..9"));
	row(text, sizeof(text), 0, 1);
	strcpy(text + strlen(text) - 1, ",1\n");
	assert_int_equal(digits_load(write_file("wide.csv", text, false), &d, msg, sizeof(msg)),
	                 DRAKE_EINVAL);
	assert_non_null(strstr(msg, "wide.csv:1: 66 fields"));
}

static void test_refuses_missing_empty_corrupt_and_oversized_files(void **state)
{
	struct dataset d;
	char msg[512], path[128];
	snprintf(path, sizeof(path), "%s/none.csv.gz", dir);
	assert_int_equal(digits_load(path, &d, msg, sizeof(msg)), DRAKE_EIO);
	assert_non_null(strstr(msg, "cannot open"));
	assert_non_null(strstr(msg, "No such file"));
	assert_int_equal(digits_load(write_file("empty.csv", "\n\n", false), &d, msg, sizeof(msg)),
	                 DRAKE_EINVAL);
	assert_non_null(strstr(msg, "empty.csv: no rows"));
	/* a gzip stream cut short */
	char text[8192] = "", r[512];
	for (int i = 0; i < 10; i++) {
		row(r, sizeof(r), i, i);
		strcat(text, r);
	}
	const char *gz = write_file("cut.csv.gz", text, true);
	FILE *f = fopen(gz, "r+");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	long size = ftell(f);
	fclose(f);
	assert_int_equal(truncate(gz, size - 12), 0);
	assert_int_equal(digits_load(gz, &d, msg, sizeof(msg)), DRAKE_EIO);
	assert_non_null(strstr(msg, "cut.csv.gz: cannot read it"));
	/* a row over DIGITS_LINE_MAX bytes */
	char *longrow = malloc(DIGITS_LINE_MAX + 64);
	assert_non_null(longrow);
	memset(longrow, '0', DIGITS_LINE_MAX + 10);
	strcpy(longrow + DIGITS_LINE_MAX + 10, "\n");
	assert_int_equal(digits_load(write_file("long.csv", longrow, false), &d, msg, sizeof(msg)),
	                 DRAKE_ELIMIT);
	assert_non_null(strstr(msg, "long.csv:1: a row over 1024 bytes"));
	free(longrow);
	/* over DIGITS_ROWS_MAX rows */
	snprintf(path, sizeof(path), "%s/many.csv.gz", dir);
	gzFile w = gzopen(path, "wb1");
	assert_non_null(w);
	row(r, sizeof(r), 0, 0);
	for (int i = 0; i <= DIGITS_ROWS_MAX; i++)
		gzputs(w, r);
	gzclose(w);
	assert_int_equal(digits_load(path, &d, msg, sizeof(msg)), DRAKE_ELIMIT);
	assert_non_null(strstr(msg, "many.csv.gz:100001: over 100000 rows"));
}

static void test_split_is_even_and_deterministic(void **state)
{
	char text[8192] = "", r[512];
	for (int i = 0; i < 10; i++) {
		row(r, sizeof(r), i, i);
		strcat(text, r);
	}
	struct dataset all, train, test;
	char msg[512];
	assert_int_equal(digits_load(write_file("ten.csv", text, false), &all, msg, sizeof(msg)),
	                 DRAKE_OK);
	assert_int_equal(digits_split(&all, 0.2, &train, &test, msg, sizeof(msg)), DRAKE_OK);
	assert_int_equal(train.n, 8);
	assert_int_equal(test.n, 2);
	assert_int_equal(test.y[0], 4); /* rows 4 and 9 */
	assert_int_equal(test.y[1], 9);
	const int want_train[] = {0, 1, 2, 3, 5, 6, 7, 8};
	for (int i = 0; i < 8; i++)
		assert_int_equal(train.y[i], want_train[i]);
	assert_true(test.x[DIGITS_FEATURES] == 9.0 / 16);
	dataset_release(&train);
	dataset_release(&test);
	/* 1,797 rows at 0.2: 359 test rows, the same every time */
	size_t n = 0;
	for (size_t i = 0; i < 1797; i++)
		n += (size_t)((double)(i + 1) * 0.2) > (size_t)((double)i * 0.2);
	assert_int_equal(n, 359);
	/* fractions too small or too large for the rows still leave one a side */
	assert_int_equal(digits_split(&all, 0.01, &train, &test, msg, sizeof(msg)), DRAKE_OK);
	assert_int_equal(test.n, 1);
	assert_int_equal(test.y[0], 9);
	dataset_release(&train);
	dataset_release(&test);
	assert_int_equal(digits_split(&all, 0.999, &train, &test, msg, sizeof(msg)), DRAKE_OK);
	assert_int_equal(train.n, 1);
	assert_int_equal(test.n, 9);
	dataset_release(&train);
	dataset_release(&test);
	all.n = 1;
	assert_int_equal(digits_split(&all, 0.2, &train, &test, msg, sizeof(msg)), DRAKE_EINVAL);
	assert_non_null(strstr(msg, "1 row: at least one to train on and one to test"));
	dataset_release(&all);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_reads_gzip_and_plain_csv),
	    cmocka_unit_test(test_refuses_malformed_rows_with_file_and_line),
	    cmocka_unit_test(test_refuses_missing_empty_corrupt_and_oversized_files),
	    cmocka_unit_test(test_split_is_even_and_deterministic),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
