/* scale_srpt_test.c - the oracle's queue order (scale.h, DRAKE_QUEUE_SRPT):
 * least remaining work (remaining seconds at the asked size times the GPUs
 * asked) first, the jobs whose remaining work is unknown behind in FIFO
 * order, and jobs that waited age_after ahead of everything in FIFO order.
 * Each row is one cmocka case named by its sentence: a cluster with one
 * free GPU, waiting jobs that each start on one worker (min 1), one call of
 * drake_scale_step(); the job tried first is the one that starts. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gang/gang_testutil.h"
#include "gang/scale.h"

#define MAXW 4

struct waiting {
	const char *name;
	double created;
	double remaining; /* seconds at its asked size; <= 0 unknown */
	int want;         /* workers of one GPU it asks for (min 1) */
};

struct row {
	const char *sentence;
	enum drake_queue_order queue;
	double now;
	struct waiting w[MAXW];
	const char *starts; /* the one job that starts */
	double next;        /* when the step looks again; 0: not checked */
};

static const struct row rows[] = {
    {"the_job_with_least_remaining_work_starts_before_one_that_arrived_earlier",
     DRAKE_QUEUE_SRPT,
     100,
     {{"long", 0, 1000, 1}, {"short", 10, 100, 1}},
     "short",
     0},
    {"remaining_work_is_remaining_seconds_times_the_gpus_asked",
     DRAKE_QUEUE_SRPT,
     100,
     {{"wide-short", 0, 100, 4}, {"narrow-longer", 10, 300, 1}},
     "narrow-longer",
     0},
    {"a_job_whose_remaining_work_is_unknown_goes_behind_the_known_ones",
     DRAKE_QUEUE_SRPT,
     100,
     {{"unknown", 0, 0, 1}, {"negative", 5, -1, 1}, {"known-long", 10, 5000, 1}},
     "known-long",
     0},
    {"jobs_whose_remaining_work_is_unknown_keep_fifo_order",
     DRAKE_QUEUE_SRPT,
     100,
     {{"first", 0, 0, 1}, {"second", 10, 0, 1}},
     "first",
     0},
    {"equal_remaining_work_keeps_fifo_order",
     DRAKE_QUEUE_SRPT,
     100,
     {{"first-come", 0, 200, 2}, {"same-work", 10, 400, 1}},
     "first-come",
     0},
    {"a_job_that_waited_age_after_goes_ahead_of_shorter_ones",
     DRAKE_QUEUE_SRPT,
     601,
     {{"aged-long", 0, 1e6, 1}, {"young-short", 500, 10, 1}},
     "aged-long",
     0},
    {"aged_jobs_go_in_fifo_order_whatever_their_remaining_work",
     DRAKE_QUEUE_SRPT,
     1000,
     {{"aged-first", 0, 1e6, 1}, {"aged-shorter", 100, 10, 1}, {"young-shortest", 900, 1, 1}},
     "aged-first",
     0},
    {"the_step_looks_again_when_a_waiting_job_will_have_aged",
     DRAKE_QUEUE_SRPT,
     100,
     {{"long", 0, 1000, 1}, {"short", 50, 100, 1}},
     "short",
     600},
    {"the_fifo_queue_ignores_remaining_work",
     DRAKE_QUEUE_FIFO,
     100,
     {{"long", 0, 1000, 1}, {"short", 10, 100, 1}},
     "long",
     0},
};

static void run_row(void **state)
{
	const struct row *r = *state;
	struct drake_cluster c;
	assert_int_equal(cluster_from(&c, "a:4:3"), 0);
	struct drake_admission_entry w[MAXW] = {0};
	size_t nw = 0;
	for (; nw < MAXW && r->w[nw].name; nw++)
		w[nw] = (struct drake_admission_entry){.name = r->w[nw].name,
		                                       .created = r->w[nw].created,
		                                       .remaining = r->w[nw].remaining,
		                                       .req = {.worker = res_of(4, 32, 1),
		                                               .min_workers = 1,
		                                               .want_workers = r->w[nw].want}};
	struct drake_scale_opts o;
	drake_scale_defaults(&o);
	o.queue = r->queue;
	o.starve_after = 1e9; /* the order alone, not the starvation rule */
	struct drake_step st = {0};
	assert_int_equal(drake_scale_step(&c, w, nw, NULL, 0, r->now, &o, &st), DRAKE_OK);
	int started = 0;
	for (size_t i = 0; i < nw; i++) {
		if (w[i].status != DRAKE_ADMIT_STARTED)
			continue;
		started++;
		assert_string_equal(w[i].name, r->starts);
	}
	assert_int_equal(started, 1);
	if (r->next > 0)
		assert_true(fabs(st.next - r->next) < 1e-9);
	drake_step_release(&st);
	drake_admission_release(w, nw);
	drake_cluster_release(&c);
}

int main(void)
{
	struct CMUnitTest tests[sizeof(rows) / sizeof(rows[0])];
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		tests[i] =
		    (struct CMUnitTest){rows[i].sentence, run_row, NULL, NULL, (void *)&rows[i]};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
