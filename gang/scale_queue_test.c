/* scale_queue_test.c - the orders waiting jobs are tried in (scale.h,
 * enum drake_queue_order):
 * - pack, the default: jobs that waited age_after first in FIFO order,
 *   then the set of the others that fills the GPUs they left best, most
 *   jobs among equal fills (gang/pack.h), then the rest in FIFO order;
 * - the oracle's (DRAKE_QUEUE_SRPT): least remaining work (remaining
 *   seconds at the asked size times the GPUs asked) first, the jobs whose
 *   remaining work is unknown behind in FIFO order, and jobs that waited
 *   age_after ahead of everything in FIFO order.
 * Each row is one cmocka case named by its sentence and one call of
 * drake_scale_step(): waiting jobs of one-GPU workers on a node of 4
 * GPUs, either with one GPU free and each job able to start on one worker
 * (min 1: the job tried first is the one that starts), or all 4 free and
 * each job rigid (pack's rows: the set tried first starts). The last rows
 * have jobs still arriving (opts.arriving_until): the young jobs of the
 * orders that reorder wait for them, at most DRAKE_ARRIVAL_HOLD. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "gang/gang_testutil.h"
#include "gang/scale.h"

#define MAXW 5

struct waiting {
	const char *name;
	double created;
	double remaining; /* seconds at its asked size; <= 0 unknown */
	int want;         /* workers of one GPU it asks for (min: the row's rigid) */
};

struct row {
	const char *sentence;
	enum drake_queue_order queue;
	double now;
	struct waiting w[MAXW];
	const char *starts; /* the jobs that start, in FIFO order, space-separated */
	double next;        /* when the step looks again; 0: not checked */
	bool rigid;         /* 4 GPUs free, jobs of min = want; else 1 free, min 1 */
	double arriving;    /* opts.arriving_until: jobs still arriving until then */
};

static const struct row rows[] = {
    {"the set that fills the free gpus starts where fifo would start the first job and leave "
     "gpus idle",
     DRAKE_QUEUE_PACK,
     10,
     {{"three", 0, 0, 3}, {"two-a", 1, 0, 2}, {"two-b", 2, 0, 2}},
     "two-a two-b",
     0,
     true,
     0},
    {"the fifo queue starts the first job that fits and backfills behind it",
     DRAKE_QUEUE_FIFO,
     10,
     {{"three", 0, 0, 3}, {"two-a", 1, 0, 2}, {"two-b", 2, 0, 2}},
     "three",
     0,
     true,
     0},
    {"among sets that fill the gpus alike the one of more jobs starts",
     DRAKE_QUEUE_PACK,
     10,
     {{"four", 0, 0, 4}, {"two", 1, 0, 2}, {"one-a", 2, 0, 1}, {"one-b", 3, 0, 1}},
     "two one-a one-b",
     0,
     true,
     0},
    {"a job that waited age_after starts before a set that fills the gpus better",
     DRAKE_QUEUE_PACK,
     700,
     {{"aged-three", 0, 0, 3}, {"two-a", 650, 0, 2}, {"two-b", 660, 0, 2}},
     "aged-three",
     0,
     true,
     0},
    {"the set is chosen for the gpus the aged jobs leave",
     DRAKE_QUEUE_PACK,
     700,
     {{"aged-one", 0, 0, 1}, {"three", 650, 0, 3}, {"two", 660, 0, 2}, {"one", 670, 0, 1}},
     "aged-one two one",
     0,
     true,
     0},
    {"the step looks again when a job passed over will have waited age_after",
     DRAKE_QUEUE_PACK,
     10,
     {{"three", 5, 0, 3}, {"two-a", 6, 0, 2}, {"two-b", 7, 0, 2}},
     "two-a two-b",
     605,
     true,
     0},
    {"the_job_with_least_remaining_work_starts_before_one_that_arrived_earlier",
     DRAKE_QUEUE_SRPT,
     100,
     {{"long", 0, 1000, 1}, {"short", 10, 100, 1}},
     "short",
     0,
     false,
     0},
    {"remaining_work_is_remaining_seconds_times_the_gpus_asked",
     DRAKE_QUEUE_SRPT,
     100,
     {{"wide-short", 0, 100, 4}, {"narrow-longer", 10, 300, 1}},
     "narrow-longer",
     0,
     false,
     0},
    {"a_job_whose_remaining_work_is_unknown_goes_behind_the_known_ones",
     DRAKE_QUEUE_SRPT,
     100,
     {{"unknown", 0, 0, 1}, {"negative", 5, -1, 1}, {"known-long", 10, 5000, 1}},
     "known-long",
     0,
     false,
     0},
    {"jobs_whose_remaining_work_is_unknown_keep_fifo_order",
     DRAKE_QUEUE_SRPT,
     100,
     {{"first", 0, 0, 1}, {"second", 10, 0, 1}},
     "first",
     0,
     false,
     0},
    {"equal_remaining_work_keeps_fifo_order",
     DRAKE_QUEUE_SRPT,
     100,
     {{"first-come", 0, 200, 2}, {"same-work", 10, 400, 1}},
     "first-come",
     0,
     false,
     0},
    {"a_job_that_waited_age_after_goes_ahead_of_shorter_ones",
     DRAKE_QUEUE_SRPT,
     601,
     {{"aged-long", 0, 1e6, 1}, {"young-short", 500, 10, 1}},
     "aged-long",
     0,
     false,
     0},
    {"aged_jobs_go_in_fifo_order_whatever_their_remaining_work",
     DRAKE_QUEUE_SRPT,
     1000,
     {{"aged-first", 0, 1e6, 1}, {"aged-shorter", 100, 10, 1}, {"young-shortest", 900, 1, 1}},
     "aged-first",
     0,
     false,
     0},
    {"the_step_looks_again_when_a_waiting_job_will_have_aged",
     DRAKE_QUEUE_SRPT,
     100,
     {{"long", 0, 1000, 1}, {"short", 50, 100, 1}},
     "short",
     600,
     false,
     0},
    {"the_fifo_queue_ignores_remaining_work",
     DRAKE_QUEUE_FIFO,
     100,
     {{"long", 0, 1000, 1}, {"short", 10, 100, 1}},
     "long",
     0,
     false,
     0},
    {"young jobs wait while jobs submitted with them are still arriving",
     DRAKE_QUEUE_PACK,
     10,
     {{"two-a", 9, 0, 2}, {"two-b", 9.5, 0, 2}},
     "",
     15,
     true,
     15},
    {"once nothing arrives any more the set starts",
     DRAKE_QUEUE_PACK,
     15,
     {{"two-a", 9, 0, 2}, {"two-b", 9.5, 0, 2}},
     "two-a two-b",
     0,
     true,
     15},
    {"a job waits for arrivals at most DRAKE_ARRIVAL_HOLD after its creation",
     DRAKE_QUEUE_PACK,
     10,
     {{"old", 0, 0, 2}, {"new", 9, 0, 2}},
     "old",
     9 + DRAKE_ARRIVAL_HOLD,
     true,
     30},
    {"a job that waited age_after does not wait for arrivals",
     DRAKE_QUEUE_PACK,
     700,
     {{"aged", 0, 0, 3}, {"young", 695, 0, 1}},
     "aged",
     705,
     true,
     705},
    {"the narrow queue waits for arrivals too",
     DRAKE_QUEUE_NARROW,
     10,
     {{"two", 9, 0, 2}},
     "",
     12,
     true,
     12},
    {"the fifo queue does not wait for arrivals: they go behind",
     DRAKE_QUEUE_FIFO,
     10,
     {{"three", 9, 0, 3}},
     "three",
     0,
     true,
     15},
};

static void run_row(void **state)
{
	const struct row *r = *state;
	struct drake_cluster c;
	assert_int_equal(cluster_from(&c, r->rigid ? "a:4:0" : "a:4:3"), 0);
	struct drake_admission_entry w[MAXW] = {0};
	size_t nw = 0;
	for (; nw < MAXW && r->w[nw].name; nw++)
		w[nw] = (struct drake_admission_entry){
		    .name = r->w[nw].name,
		    .created = r->w[nw].created,
		    .remaining = r->w[nw].remaining,
		    .req = {.worker = res_of(4, 32, 1),
		            .min_workers = r->rigid ? r->w[nw].want : 1,
		            .want_workers = r->w[nw].want}};
	struct drake_scale_opts o;
	drake_scale_defaults(&o);
	o.queue = r->queue;
	o.starve_after = 1e9; /* the order alone, not the starvation rule */
	o.arriving_until = r->arriving;
	struct drake_step st = {0};
	assert_int_equal(drake_scale_step(&c, w, nw, NULL, 0, r->now, &o, &st), DRAKE_OK);
	char got[256] = "";
	for (size_t i = 0; i < nw; i++) {
		if (w[i].status != DRAKE_ADMIT_STARTED)
			continue;
		size_t l = strlen(got);
		snprintf(got + l, sizeof(got) - l, "%s%s", l ? " " : "", w[i].name);
	}
	assert_string_equal(got, r->starts);
	if (r->next > 0)
		assert_true(fabs(st.next - r->next) < 1e-9);
	drake_step_release(&st);
	drake_admission_release(w, nw);
	drake_cluster_release(&c);
}

/* "pack" names the order on the command line; the default is it. */
static void pack_is_parsed_named_and_the_default(void **state)
{
	(void)state;
	enum drake_queue_order q = DRAKE_QUEUE_FIFO;
	assert_int_equal(drake_queue_order_parse("pack", &q), DRAKE_OK);
	assert_int_equal(q, DRAKE_QUEUE_PACK);
	assert_string_equal(drake_queue_order_name(DRAKE_QUEUE_PACK), "pack");
	struct drake_scale_opts o;
	drake_scale_defaults(&o);
	assert_int_equal(o.queue, DRAKE_QUEUE_PACK);
}

int main(void)
{
	struct CMUnitTest tests[sizeof(rows) / sizeof(rows[0]) + 1];
	size_t n = 0;
	for (; n < sizeof(rows) / sizeof(rows[0]); n++)
		tests[n] =
		    (struct CMUnitTest){rows[n].sentence, run_row, NULL, NULL, (void *)&rows[n]};
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(pack_is_parsed_named_and_the_default);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
