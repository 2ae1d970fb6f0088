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

static void the_log_rotates_past_its_bound_and_keeps_one_old_file(void **state)
{
	(void)state;
	char dir[] = "/tmp/decision-log-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[256], old[260];
	snprintf(path, sizeof(path), "%s/rounds.jsonl", dir);
	snprintf(old, sizeof(old), "%s.1", path);
	struct decision_log l;
	char msg[256];
	assert_int_equal(decision_log_open(&l, path, 100, msg, sizeof(msg)), DRAKE_OK);
	char line[40];
	memset(line, 'x', 39);
	line[39] = '\0'; /* 40 bytes with its newline */
	decision_log_write(&l, line);
	decision_log_write(&l, line);
	assert_int_equal(size_of(path), 80);
	assert_int_equal(size_of(old), -1);
	decision_log_write(&l, line); /* 120 > 100: rotate first */
	assert_int_equal(size_of(old), 80);
	assert_int_equal(size_of(path), 40);
	char big[200];
	memset(big, 'y', 199);
	big[199] = '\0';
	decision_log_write(&l, big); /* larger than the bound: dropped */
	assert_int_equal(l.failed, 1);
	assert_int_equal(size_of(path), 40);
	assert_int_equal(l.written, 3);
	decision_log_close(&l);
	/* reopened, it appends and counts what is there */
	assert_int_equal(decision_log_open(&l, path, 100, msg, sizeof(msg)), DRAKE_OK);
	assert_int_equal(l.size, 40);
	decision_log_close(&l);
	unlink(path);
	unlink(old);
	rmdir(dir);
}

static void a_bound_of_0_keeps_every_line_in_one_file(void **state)
{
	(void)state;
	char dir[] = "/tmp/decision-log-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[256], old[260];
	snprintf(path, sizeof(path), "%s/rounds.jsonl", dir);
	snprintf(old, sizeof(old), "%s.1", path);
	struct decision_log l;
	char msg[256];
	assert_int_equal(decision_log_open(&l, path, 0, msg, sizeof(msg)), DRAKE_OK);
	static char big[70000];
	memset(big, 'z', sizeof(big) - 1);
	for (int i = 0; i < 20; i++)
		decision_log_write(&l, big);
	assert_int_equal(l.written, 20);
	assert_int_equal(l.failed, 0);
	assert_int_equal(size_of(path), 20L * (long)sizeof(big));
	assert_int_equal(size_of(old), -1);
	decision_log_close(&l);
	unlink(path);
	rmdir(dir);
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
