/* scale_pack_test.c - drake's default queue order (scale.h,
 * DRAKE_QUEUE_PACK): jobs that waited age_after first in FIFO order, then
 * the set of the others that fills the GPUs they left best, most jobs
 * among equal fills (gang/pack.h), then the rest in FIFO order. Each row
 * is one cmocka case named by its sentence: one node of 4 GPUs, rigid
 * waiting jobs of one-GPU workers, one call of drake_scale_step(); the
 * jobs that start, and when the step looks again. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
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
	int gpus; /* workers of one GPU it asks for, min as many */
};

struct row {
	const char *sentence;
	enum drake_queue_order queue;
	double now;
	struct waiting w[MAXW];
	const char *starts; /* the names of the jobs that start, in FIFO order, space-separated */
	double next;        /* when the step looks again; 0: not checked */
};

static const struct row rows[] = {
    {"the set that fills the free gpus starts where fifo would start the first job and leave "
     "gpus idle",
     DRAKE_QUEUE_PACK,
     10,
     {{"three", 0, 3}, {"two-a", 1, 2}, {"two-b", 2, 2}},
     "two-a two-b",
     0},
    {"the fifo queue starts the first job that fits and backfills behind it",
     DRAKE_QUEUE_FIFO,
     10,
     {{"three", 0, 3}, {"two-a", 1, 2}, {"two-b", 2, 2}},
     "three",
     0},
    {"among sets that fill the gpus alike the one of more jobs starts",
     DRAKE_QUEUE_PACK,
     10,
     {{"four", 0, 4}, {"two", 1, 2}, {"one-a", 2, 1}, {"one-b", 3, 1}},
     "two one-a one-b",
     0},
    {"a job that waited age_after starts before a set that fills the gpus better",
     DRAKE_QUEUE_PACK,
     700,
     {{"aged-three", 0, 3}, {"two-a", 650, 2}, {"two-b", 660, 2}},
     "aged-three",
     0},
    {"the set is chosen for the gpus the aged jobs leave",
     DRAKE_QUEUE_PACK,
     700,
     {{"aged-one", 0, 1}, {"three", 650, 3}, {"two", 660, 2}, {"one", 670, 1}},
     "aged-one two one",
     0},
    {"the step looks again when a job passed over will have waited age_after",
     DRAKE_QUEUE_PACK,
     10,
     {{"three", 5, 3}, {"two-a", 6, 2}, {"two-b", 7, 2}},
     "two-a two-b",
     605},
};

static void run_row(void **state)
{
	const struct row *r = *state;
	struct drake_cluster c;
	assert_int_equal(cluster_from(&c, "a:4:0"), 0);
	struct drake_admission_entry w[MAXW] = {0};
	size_t nw = 0;
	for (; nw < MAXW && r->w[nw].name; nw++)
		w[nw] = (struct drake_admission_entry){.name = r->w[nw].name,
		                                       .created = r->w[nw].created,
		                                       .req = {.worker = res_of(4, 32, 1),
		                                               .min_workers = r->w[nw].gpus,
		                                               .want_workers = r->w[nw].gpus}};
	struct drake_scale_opts o;
	drake_scale_defaults(&o);
	o.queue = r->queue;
	o.starve_after = 1e9; /* the order alone, not the starvation rule */
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
