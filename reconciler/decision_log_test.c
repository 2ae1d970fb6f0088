/* decision_log_test.c - --decision-log's file: lines appended, rotated to
 * FILE.1 past the bound, never more than the bound per file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reconciler/decision_log.h"

static long size_of(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* A log opened with bound max in a new folder: its FILE and FILE.1. */
struct tmp_log {
	char dir[32], path[256], old[260];
	struct decision_log l;
};

static void tmp_log_open(struct tmp_log *t, long max)
{
	snprintf(t->dir, sizeof(t->dir), "/tmp/decision-log-XXXXXX");
	assert_non_null(mkdtemp(t->dir));
	snprintf(t->path, sizeof(t->path), "%s/rounds.jsonl", t->dir);
	snprintf(t->old, sizeof(t->old), "%s.1", t->path);
	char msg[256];
	assert_int_equal(decision_log_open(&t->l, t->path, max, msg, sizeof(msg)), DRAKE_OK);
}

static void tmp_log_remove(struct tmp_log *t)
{
	decision_log_close(&t->l);
	unlink(t->path);
	unlink(t->old);
	rmdir(t->dir);
}

static void the_log_rotates_past_its_bound_and_keeps_one_old_file(void **state)
{
	(void)state;
	struct tmp_log t = {0};
	tmp_log_open(&t, 100);
	struct decision_log *l = &t.l;
	char line[40];
	memset(line, 'x', 39);
	line[39] = '\0'; /* 40 bytes with its newline */
	decision_log_write(l, line);
	decision_log_write(l, line);
	assert_int_equal(size_of(t.path), 80);
	assert_int_equal(size_of(t.old), -1);
	decision_log_write(l, line); /* 120 > 100: rotate first */
	assert_int_equal(size_of(t.old), 80);
	assert_int_equal(size_of(t.path), 40);
	char big[200];
	memset(big, 'y', 199);
	big[199] = '\0';
	decision_log_write(l, big); /* larger than the bound: dropped */
	assert_int_equal(l->failed, 1);
	assert_int_equal(size_of(t.path), 40);
	assert_int_equal(l->written, 3);
	decision_log_close(l);
	/* reopened, it appends and counts what is there */
	char msg[256];
	assert_int_equal(decision_log_open(l, t.path, 100, msg, sizeof(msg)), DRAKE_OK);
	assert_int_equal(l->size, 40);
	tmp_log_remove(&t);
}

static void a_bound_of_0_keeps_every_line_in_one_file(void **state)
{
	(void)state;
	struct tmp_log t = {0};
	tmp_log_open(&t, 0);
	static char big[70000];
	memset(big, 'z', sizeof(big) - 1);
	for (int i = 0; i < 20; i++)
		decision_log_write(&t.l, big);
	assert_int_equal(t.l.written, 20);
	assert_int_equal(t.l.failed, 0);
	assert_int_equal(size_of(t.path), 20L * (long)sizeof(big));
	assert_int_equal(size_of(t.old), -1);
	tmp_log_remove(&t);
}

static void a_path_that_cannot_be_opened_is_an_error_naming_it(void **state)
{
	(void)state;
	struct decision_log l;
	char msg[256];
	assert_int_equal(decision_log_open(&l, "/nonexistent-dir/x.jsonl", 0, msg, sizeof(msg)),
	                 DRAKE_EIO);
	assert_non_null(strstr(msg, "/nonexistent-dir/x.jsonl"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(the_log_rotates_past_its_bound_and_keeps_one_old_file),
	    cmocka_unit_test(a_bound_of_0_keeps_every_line_in_one_file),
	    cmocka_unit_test(a_path_that_cannot_be_opened_is_an_error_naming_it),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
