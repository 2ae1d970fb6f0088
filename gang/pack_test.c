/* pack_test.c - the set of waiting jobs that fills the free GPUs best
 * (gang/pack.h): the fullest sum at or below the room, most jobs among
 * equal sums, the earliest jobs among equal counts, jobs asking no GPU
 * always in, nothing past the window. Each row is one cmocka case named by
 * its sentence: the GPUs each job asks (in queue order), the room, and the
 * jobs chosen. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "gang/pack.h"

#define MAXJ 12

struct row {
	const char *sentence;
	int64_t room;
	int64_t gpus[MAXJ]; /* -1 ends the list (0 is a job asking no GPU) */
	const char *chosen; /* one character per job: 'x' chosen, '.' not */
};

static const struct row rows[] = {
    {"when every job fits all are chosen", 10, {3, 2, 4, -1}, "xxx"},
    {"the set that fills the room beats the first job in the queue that leaves GPUs idle",
     4,
     {3, 2, 2, -1},
     ".xx"},
    {"among sets that fill the room alike the one with more jobs wins", 4, {4, 2, 2, -1}, ".xx"},
    {"among sets of as many jobs that fill the room alike the earlier jobs win",
     4,
     {2, 2, 2, -1},
     "xx."},
    {"among sets of as many jobs that fill the room alike the one holding the earliest job "
     "wins however late its others come",
     4,
     {3, 2, 2, 9, 1, -1},
     "x...x"},
    {"a fuller set beats a set of more jobs", 5, {5, 1, 1, -1}, "x.."},
    {"when nothing fills the room exactly the fullest set is chosen", 7, {4, 4, 6, -1}, "..x"},
    {"a job wider than the room is never chosen", 4, {8, 1, -1}, ".x"},
    {"a job asking no gpu is always chosen", 3, {0, 5, 3, -1}, "x.x"},
    {"with no room only the jobs asking no gpu are chosen", 0, {2, 0, 1, -1}, ".x."},
    {"negative room chooses as no room does", -3, {2, 0, 1, -1}, ".x."},
    {"the widest job is left for a wave of its own while narrower ones fill the room",
     8,
     {8, 4, 4, 2, 2, 2, 2, -1},
     "...xxxx"},
};

static void run_row(void **state)
{
	const struct row *r = *state;
	size_t n = 0;
	while (n < MAXJ && r->gpus[n] >= 0)
		n++;
	bool chosen[MAXJ];
	assert_int_equal(drake_pack_choose(r->gpus, n, r->room, chosen), DRAKE_OK);
	char got[MAXJ + 1];
	for (size_t i = 0; i < n; i++)
		got[i] = chosen[i] ? 'x' : '.';
	got[n] = '\0';
	assert_string_equal(got, r->chosen);
}

/* The window: jobs past the first DRAKE_PACK_WINDOW are never chosen, even
 * when the room would take them. */
static void jobs_past_the_window_are_never_chosen(void **state)
{
	(void)state;
	enum { N = DRAKE_PACK_WINDOW + 2 };
	int64_t gpus[N];
	bool chosen[N];
	for (size_t i = 0; i < N; i++)
		gpus[i] = 1;
	gpus[0] = 3; /* the window's sum (66) passes the room: the knapsack runs */
	assert_int_equal(drake_pack_choose(gpus, N, 64, chosen), DRAKE_OK);
	int64_t fill = 0;
	for (size_t i = 0; i < N; i++)
		fill += chosen[i] ? gpus[i] : 0;
	assert_int_equal(fill, 64); /* job 0 and 61 of the window's 63 others */
	assert_false(chosen[DRAKE_PACK_WINDOW]);
	assert_false(chosen[DRAKE_PACK_WINDOW + 1]);
	/* the window fits whole: its jobs are chosen, the later ones not */
	gpus[0] = 1;
	assert_int_equal(drake_pack_choose(gpus, N, 1000, chosen), DRAKE_OK);
	assert_true(chosen[DRAKE_PACK_WINDOW - 1]);
	assert_false(chosen[DRAKE_PACK_WINDOW]);
}

/* gang53's waves (traces/knavigator_gang53.csv: 53 gangs of 1 to 32 nodes,
 * 288 nodes in all, 32 nodes free per wave): choosing wave after wave
 * fills every one of the 9 waves (the 270 s makespan) and starts 14, 8,
 * 8, 7, 5, 4, 4, 2 and 1 jobs (hack/wave-bound.py's bound, mean 104.2 s),
 * the 32-node job alone in the last. */
static void gang53_fills_nine_waves_with_the_most_jobs_first(void **state)
{
	(void)state;
	static const int64_t sizes[] = {32, 16, 16, 10, 10, 10, 2, 8, 8, 8, 8, 6, 6, 6, 6, 6, 1, 1,
	                                5,  5,  5,  5,  5,  5,  2, 4, 4, 4, 4, 4, 4, 4, 2, 1, 1, 4,
	                                4,  4,  4,  4,  4,  4,  4, 3, 3, 3, 3, 3, 3, 3, 3, 3, 5};
	enum { N = sizeof(sizes) / sizeof(sizes[0]) };
	static const int want[] = {14, 8, 8, 7, 5, 4, 4, 2, 1};
	int64_t left[N];
	size_t n = N;
	memcpy(left, sizes, sizeof(left));
	bool chosen[N];
	for (size_t wave = 0; wave < sizeof(want) / sizeof(want[0]); wave++) {
		assert_int_equal(drake_pack_choose(left, n, 32, chosen), DRAKE_OK);
		int64_t fill = 0;
		int jobs = 0;
		size_t m = 0;
		for (size_t i = 0; i < n; i++) {
			if (chosen[i]) {
				fill += left[i];
				jobs++;
			} else {
				left[m++] = left[i];
			}
		}
		n = m;
		assert_int_equal(fill, 32);
		assert_int_equal(jobs, want[wave]);
	}
	assert_int_equal(n, 0);
}

int main(void)
{
	struct CMUnitTest tests[sizeof(rows) / sizeof(rows[0]) + 2];
	size_t n = 0;
	for (; n < sizeof(rows) / sizeof(rows[0]); n++)
		tests[n] =
		    (struct CMUnitTest){rows[n].sentence, run_row, NULL, NULL, (void *)&rows[n]};
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(jobs_past_the_window_are_never_chosen);
	tests[n++] =
	    (struct CMUnitTest)cmocka_unit_test(gang53_fills_nine_waves_with_the_most_jobs_first);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
