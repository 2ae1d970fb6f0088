/* scale_keep_test.c - the decision step keeps room for the queue: the
 * shapes of the waiting jobs, and of the jobs admitted within keep_window,
 * go to the planner with each admission (planner.h, "Room for the queue"). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gang/gang_testutil.h"
#include "gang/scale.h"

struct kcase {
	const char *name;
	double keep_window;
	double running_admitted; /* the running job of one 8-GPU worker on d; NAN: none */
	bool whole_job_waits;    /* a job of one 8-GPU worker waits behind the first */
	const char *started;     /* per waiting job: S started, W waiting */
	const char *first_on;    /* the first job's workers' nodes, sorted */
};

/* The first waiting job asks for 5 workers of 2 GPUs on a cluster whose
 * only empty node is a: best fit takes a and one more; keeping a whole
 * takes b and c. */
static const struct kcase cases[] = {
    {"a job waiting for a whole node starts beside the job ahead of it, which leaves it the "
     "empty node",
     60, NAN, true, "SS", "bbbcc"},
    {"the shape of a job admitted within keep_window counts as the queue's", 60, 5, false, "S",
     "bbbcc"},
    {"a job admitted longer ago than keep_window does not", 60, -60, false, "S", "aaaab"},
    {"a negative keep_window packs as before and the whole-node job waits", -1, NAN, true, "SW",
     "aaaab"},
};

static void sort_chars(char *s)
{
	for (size_t i = 1; s[i]; i++)
		for (size_t j = i; j > 0 && s[j - 1] > s[j]; j--) {
			char t = s[j];
			s[j] = s[j - 1];
			s[j - 1] = t;
		}
}

static void run_case(void **state)
{
	const struct kcase *k = *state;
	struct drake_cluster c;
	assert_int_equal(cluster_from(&c, "a:8:0 b:8:2 c:8:2 d:8:0"), 0);
	int d = drake_cluster_find(&c, "d");
	struct drake_gang_req g = gpu_job(1, 1, 1);
	g.worker = res_of(4, 32, 8);
	int ps_node = d, w_node = d;
	struct drake_running_job r = {.name = "big",
	                              .admitted = k->running_admitted,
	                              .progress = -1,
	                              .min_workers = 1,
	                              .max_workers = 1,
	                              .ps = g.ps,
	                              .worker = g.worker,
	                              .n_ps = 1,
	                              .ps_node = &ps_node,
	                              .n_workers = 1,
	                              .worker_node = &w_node,
	                              .last_scaled = k->running_admitted};
	/* d is always full: the running job, or as much used by others */
	drake_cluster_charge(&c, (size_t)d, &g.worker, 1);
	drake_cluster_charge(&c, (size_t)d, &g.ps, 1);
	size_t nr = isnan(k->running_admitted) ? 0 : 1;

	struct drake_admission_entry w[2] = {{0}};
	w[0].name = "wide";
	w[0].created = 0;
	w[0].req = gpu_job(1, 5, 5);
	w[0].req.worker = res_of(4, 32, 2);
	w[1].name = "whole";
	w[1].created = 1;
	w[1].req = g;
	size_t nw = k->whole_job_waits ? 2 : 1;

	struct drake_scale_opts o;
	drake_scale_defaults(&o);
	o.keep_window = k->keep_window;
	struct drake_step st;
	assert_int_equal(drake_scale_step(&c, w, nw, &r, nr, 10, &o, &st), DRAKE_OK);
	for (size_t i = 0; i < nw; i++) {
		char got = w[i].status == DRAKE_ADMIT_STARTED   ? 'S'
		           : w[i].status == DRAKE_ADMIT_WAITING ? 'W'
		                                                : '?';
		if (got != k->started[i])
			fail_msg("job %s: %c, want %c (%s)", w[i].name, got, k->started[i],
			         w[i].why);
	}
	char on[16] = "";
	for (int i = 0; i < w[0].plan.n_workers && i < 15; i++)
		on[i] = c.nodes[w[0].plan.worker_node[i]].name[0];
	sort_chars(on);
	assert_string_equal(on, k->first_on);
	/* the caller's requests are handed back as they came */
	assert_null(w[0].req.keep);
	assert_int_equal(w[0].req.n_keep, 0);
	drake_step_release(&st);
	drake_admission_release(w, nw);
	drake_cluster_release(&c);
}

int main(void)
{
	size_t n = sizeof(cases) / sizeof(cases[0]);
	struct CMUnitTest tests[sizeof(cases) / sizeof(cases[0])];
	for (size_t i = 0; i < n; i++)
		tests[i] =
		    (struct CMUnitTest){cases[i].name, run_case, NULL, NULL, (void *)&cases[i]};
	return _cmocka_run_group_tests("scale_keep", tests, n, NULL, NULL);
}
