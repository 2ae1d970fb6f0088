/* admission_test.c - FIFO admission with backfill, and jobs that never fit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gang/admission.h"
#include "gang/gang_testutil.h"

#define MAXJ 6

struct acase {
	const char *name;
	const char *cluster;
	int n;
	struct {
		const char *name;
		double created;
		int min, want;
		int chief_gpu; /* 0: no chief; else a chief with that many GPUs */
	} jobs[MAXJ];
	bool backfill;
	/* expected status per job, in the order given (S started, W waiting,
	 * N never, - not tried) and workers granted per started job */
	const char *expect;
	int workers[MAXJ];
};

static const struct acase cases[] = {
    {"the earlier job starts first when only one fits",
     "a:8:0",
     2,
     {{"late", 20, 6, 6, 0}, {"early", 10, 6, 6, 0}},
     true,
     "WS",
     {0, 6}},
    {"a small job behind a blocked big one starts (backfill)",
     "a:8:4",
     2,
     {{"big", 1, 8, 8, 0}, {"small", 2, 2, 2, 0}},
     true,
     "WS",
     {0, 2}},
    {"without backfill the queue stops at the first job that waits",
     "a:8:4",
     3,
     {{"big", 1, 8, 8, 0}, {"small", 2, 2, 2, 0}, {"tiny", 3, 1, 1, 0}},
     false,
     "W--",
     {0}},
    {"a job that can never fit does not block the queue without backfill",
     "a:8:0",
     2,
     {{"huge", 1, 64, 64, 0}, {"small", 2, 2, 2, 0}},
     false,
     "NS",
     {0, 2}},
    {"admission charges the snapshot so two jobs never share a GPU",
     "a:8:0",
     3,
     {{"j1", 1, 4, 4, 0}, {"j2", 2, 4, 4, 0}, {"j3", 3, 1, 1, 0}},
     true,
     "SSW",
     {4, 4, 0}},
    {"a job starts with what fits between min and desired",
     "a:8:3",
     2,
     {{"elastic", 1, 2, 8, 0}, {"next", 2, 1, 1, 0}},
     true,
     "SW",
     {5, 0}},
    {"a job whose chief does not fit waits though its PS and workers would",
     "a:8:0",
     2,
     {{"first", 1, 4, 4, 0}, {"with-chief", 2, 4, 4, 1}},
     true,
     "SW",
     {4, 0}},
    {"admission charges the chief so later jobs see its GPU taken",
     "a:8:0",
     3,
     {{"with-chief", 1, 3, 3, 1}, {"next", 2, 4, 4, 0}, {"last", 3, 1, 1, 0}},
     true,
     "SSW",
     {3, 4, 0}},
    {"an elastic job with a chief starts with the workers left beside it",
     "a:8:3",
     2,
     {{"elastic", 1, 2, 8, 1}, {"next", 2, 1, 1, 0}},
     true,
     "SW",
     {4, 0}},
    {"equal creation times are ordered by name",
     "a:8:4",
     2,
     {{"b", 5, 4, 4, 0}, {"a", 5, 4, 4, 0}},
     true,
     "WS",
     {0, 4}},
};

static char status_char(enum drake_admit_status s)
{
	switch (s) {
	case DRAKE_ADMIT_STARTED: return 'S';
	case DRAKE_ADMIT_WAITING: return 'W';
	case DRAKE_ADMIT_NEVER: return 'N';
	case DRAKE_ADMIT_INVALID: return 'I';
	case DRAKE_ADMIT_NOT_TRIED: return '-';
	}
	return '?';
}

static void run_case(void **state)
{
	const struct acase *c = *state;
	struct drake_cluster cl;
	assert_int_equal(cluster_from(&cl, c->cluster), 0);
	struct drake_admission_entry e[MAXJ];
	memset(e, 0, sizeof(e));
	for (int i = 0; i < c->n; i++) {
		e[i].name = c->jobs[i].name;
		e[i].created = c->jobs[i].created;
		e[i].req = gpu_job(1, c->jobs[i].min, c->jobs[i].want);
		if (c->jobs[i].chief_gpu)
			e[i].req = with_chief(e[i].req, c->jobs[i].chief_gpu);
	}
	drake_admission_sort(e, (size_t)c->n);
	struct drake_admission_opts o = {c->backfill, 0};
	size_t started = 0;
	assert_int_equal(drake_admit(&cl, e, (size_t)c->n, &o, &started), DRAKE_OK);
	size_t want_started = 0;
	for (int i = 0; i < c->n; i++) {
		/* find the entry for the i-th job as given */
		struct drake_admission_entry *x = NULL;
		for (int k = 0; k < c->n; k++)
			if (strcmp(e[k].name, c->jobs[i].name) == 0)
				x = &e[k];
		assert_non_null(x);
		if (status_char(x->status) != c->expect[i])
			print_error("job %s: %c (%s), want %c\n", x->name, status_char(x->status),
			            x->why, c->expect[i]);
		assert_int_equal(status_char(x->status), c->expect[i]);
		if (x->status == DRAKE_ADMIT_STARTED) {
			want_started++;
			assert_int_equal(x->plan.n_workers, c->workers[i]);
			assert_int_equal(x->plan.n_chief, c->jobs[i].chief_gpu ? 1 : 0);
		}
		if (x->status == DRAKE_ADMIT_WAITING || x->status == DRAKE_ADMIT_NEVER)
			assert_true(x->why[0] != '\0');
	}
	assert_int_equal(started, want_started);
	for (size_t i = 0; i < cl.n; i++)
		assert_true(drake_res_fits(&cl.nodes[i].used, &cl.nodes[i].alloc));
	drake_admission_release(e, (size_t)c->n);
	drake_cluster_release(&cl);
}

static void max_admits_caps_a_round(void **state)
{
	(void)state;
	struct drake_cluster cl;
	assert_int_equal(cluster_from(&cl, "a:8:0"), 0);
	struct drake_admission_entry e[3];
	memset(e, 0, sizeof(e));
	const char *names[] = {"x", "y", "z"};
	for (int i = 0; i < 3; i++) {
		e[i].name = names[i];
		e[i].created = i;
		e[i].req = gpu_job(1, 1, 1);
	}
	struct drake_admission_opts o = {true, 1};
	size_t started;
	assert_int_equal(drake_admit(&cl, e, 3, &o, &started), DRAKE_OK);
	assert_int_equal(started, 1);
	assert_int_equal(e[0].status, DRAKE_ADMIT_STARTED);
	assert_int_equal(e[1].status, DRAKE_ADMIT_NOT_TRIED);
	drake_admission_release(e, 3);
	drake_cluster_release(&cl);
}

int main(void)
{
	size_t n = sizeof(cases) / sizeof(cases[0]);
	struct CMUnitTest tests[sizeof(cases) / sizeof(cases[0]) + 1];
	for (size_t i = 0; i < n; i++)
		tests[i] =
		    (struct CMUnitTest){cases[i].name, run_case, NULL, NULL, (void *)&cases[i]};
	tests[n] = (struct CMUnitTest)cmocka_unit_test(max_admits_caps_a_round);
	return _cmocka_run_group_tests("admission", tests, n + 1, NULL, NULL);
}
