/* kinds_test.c - a job's kind in drake sim: a trace's optional "kind"
 * column, --kind-mix's deterministic shares, each resize charged the
 * job's kind's cost, and drake's policy told that cost (or blind to it). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kind/registry.h"
#include "sim/kind_mix.h"
#include "sim/sim.h"

/* t from text, as drake sim loads it: parsed, its kinds looked up. */
static void load(const char *text, const char *file, struct sim_trace *t)
{
	char msg[256];
	assert_int_equal(sim_trace_parse(text, strlen(text), file, t, msg, sizeof(msg)), DRAKE_OK);
	if (sim_kind_resolve(t, file, msg, sizeof(msg)))
		fail_msg("%s", msg);
}

static const char *plural(const struct sim_trace_job *j)
{
	return j->kind ? j->kind->plural : "-";
}

static void a_trace_may_name_each_jobs_kind_in_a_last_column(void **state)
{
	(void)state;
	static const char text[] = "job_id,submission_time,duration,num_gpu,kind\n"
	                           "a,0,100,8,pytorchjobs\nb,5,100,4,TFJob\nc,9,100,1,\n";
	struct sim_trace t;
	load(text, "k.csv", &t);
	assert_int_equal(t.n, 3);
	assert_string_equal(plural(&t.jobs[0]), "pytorchjobs");
	assert_string_equal(plural(&t.jobs[1]), "tfjobs");
	assert_string_equal(plural(&t.jobs[2]), "-");
	sim_trace_release(&t);
	/* without the column no job has a kind */
	static const char plain[] = "name,time,application,num_replicas,batch_size\n"
	                            "x-1,0,cifar10,2,128\n";
	load(plain, "p.csv", &t);
	assert_null(t.jobs[0].kind);
	sim_trace_release(&t);
}

static void an_unknown_kind_is_refused_naming_its_row(void **state)
{
	(void)state;
	static const char text[] = "name,time,application,num_replicas,batch_size,kind\n"
	                           "x-1,0,cifar10,2,128,tfjobs\nx-2,3,cifar10,2,128,mpijobs\n";
	struct sim_trace t;
	char msg[256];
	assert_int_equal(sim_trace_parse(text, strlen(text), "p.csv", &t, msg, sizeof(msg)),
	                 DRAKE_OK);
	assert_int_equal(sim_kind_resolve(&t, "p.csv", msg, sizeof(msg)), DRAKE_EINVAL);
	assert_string_equal(msg, "p.csv:3: kind \"mpijobs\" is not a job kind drake knows");
	sim_trace_release(&t);
	static const char short_row[] = "job_id,submission_time,duration,num_gpu,kind\na,0,1,1\n";
	assert_int_equal(
	    sim_trace_parse(short_row, strlen(short_row), "s.csv", &t, msg, sizeof(msg)),
	    DRAKE_EINVAL);
	assert_string_equal(msg, "s.csv:2: 4 fields, want 5");
	static const char long_kind[] = "job_id,submission_time,duration,num_gpu,kind\n"
	                                "a,0,1,1,abcdefghijklmnopqrstuvwxyz012345\n";
	assert_int_equal(
	    sim_trace_parse(long_kind, strlen(long_kind), "l.csv", &t, msg, sizeof(msg)),
	    DRAKE_ELIMIT);
	assert_string_equal(msg, "l.csv:2: kind longer than 31 characters");
}

/* n ITP jobs, "j0".."j<n-1>", the first `kinded` of them TFJobs. */
static void itp_jobs(struct sim_trace *t, int n, int kinded)
{
	char text[4096] = "job_id,submission_time,duration,num_gpu,kind\n";
	for (int i = 0; i < n; i++)
		snprintf(text + strlen(text), sizeof(text) - strlen(text), "j%d,%d,10,1,%s\n", i, i,
		         i < kinded ? "tfjobs" : "");
	load(text, "m.csv", t);
}

static void a_kind_mix_gives_each_kind_its_share_interleaved(void **state)
{
	(void)state;
	struct sim_kind_mix m;
	char msg[256];
	assert_int_equal(sim_kind_mix_parse("pytorchjobs=0.5,tfjobs=0.25", &m, msg, sizeof(msg)),
	                 DRAKE_OK);
	struct sim_trace t;
	itp_jobs(&t, 8, 0);
	assert_int_equal(sim_kind_mix_apply(&m, &t), 6);
	char got[64] = "";
	for (size_t i = 0; i < t.n; i++)
		strcat(got, t.jobs[i].kind ? (t.jobs[i].kind->plural[0] == 'p' ? "P" : "T") : "-");
	assert_string_equal(got, "PT-PPT-P"); /* 4, 2 and 2 of 8 */
	sim_trace_release(&t);
	/* a job whose row names its kind keeps it, and the mix counts the rest */
	assert_int_equal(sim_kind_mix_parse("pytorchjobs=1", &m, msg, sizeof(msg)), DRAKE_OK);
	itp_jobs(&t, 4, 2);
	assert_int_equal(sim_kind_mix_apply(&m, &t), 2);
	assert_string_equal(plural(&t.jobs[1]), "tfjobs");
	assert_string_equal(plural(&t.jobs[2]), "pytorchjobs");
	sim_trace_release(&t);
	/* no mix, no change */
	assert_int_equal(sim_kind_mix_parse("", &m, msg, sizeof(msg)), DRAKE_OK);
	itp_jobs(&t, 2, 0);
	assert_int_equal(sim_kind_mix_apply(&m, &t), 0);
	assert_null(t.jobs[0].kind);
	sim_trace_release(&t);
}

static void a_bad_kind_mix_is_refused_naming_what_is_wrong(void **state)
{
	(void)state;
	static const struct {
		const char *in, *says;
	} bad[] = {
	    {"mpijobs=0.5", "\"mpijobs\" is not a job kind drake knows"},
	    {"tfjobs", "\"tfjobs\" is not KIND=SHARE"},
	    {"tfjobs=half", "the share of tfjobs, \"half\", is not a fraction in (0, 1]"},
	    {"tfjobs=0", "the share of tfjobs, \"0\", is not a fraction in (0, 1]"},
	    {"tfjobs=0.5,TFJob=0.5", "tfjobs is named twice"},
	    {"tfjobs=0.6,pytorchjobs=0.6", "the shares add up to 1.2, more than 1"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sim_kind_mix m;
		char msg[256] = "";
		assert_int_equal(sim_kind_mix_parse(bad[i].in, &m, msg, sizeof(msg)), DRAKE_EINVAL);
		if (strcmp(msg, bad[i].says))
			fail_msg("%s: %s", bad[i].in, msg);
	}
}

/* A policy that starts its one job's 8 workers on node 0 and at 100 s
 * takes 3 away, in one change. */
static drake_err shrink3_init(struct sim *s, void **state)
{
	*state = NULL;
	return sim_wake_at(s, 100);
}

static void shrink3_release(void *state)
{
	(void)state;
}

static drake_err shrink3_decide(struct sim *s, void *state)
{
	(void)state;
	size_t nw;
	const int *w = sim_waiting(s, &nw);
	if (nw) {
		int ps[1] = {0}, wk[8] = {0};
		struct drake_plan plan = {
		    .n_ps = 1, .n_workers = 8, .ps_node = ps, .worker_node = wk};
		return sim_start(s, w[0], &plan);
	}
	struct sim_job *j = sim_job(s, 0);
	if (sim_now(s) < 100 || j->n_workers < 8 || j->state != SIM_JOB_RUNNING)
		return DRAKE_OK;
	struct drake_scale_op ops[3];
	int ids[1] = {0};
	for (int k = 0; k < 3; k++)
		ops[k] = (struct drake_scale_op){.job = 0, .slot = 7 - k, .node = 0};
	return sim_apply_removals(s, ids, ops, 3);
}

static const struct sim_policy shrink3 = {"shrink3", shrink3_init, shrink3_release, shrink3_decide};

/* The one 8-GPU job of kind `kind` ("" none), shrunk once at 100 s under
 * the costs `costs` (NULL: each kind's own): when it finishes. */
static double shrunk_once(const char *kind, const struct job_resize_costs *costs)
{
	char text[128];
	snprintf(text, sizeof(text),
	         "job_id,submission_time,duration,num_gpu,kind\na,0,1000,8,%s\n", kind);
	struct sim_trace t;
	struct sim_result r;
	char msg[256];
	load(text, "one", &t);
	struct sim_config cfg;
	sim_config_defaults(&cfg);
	cfg.nodes = 1;
	cfg.resize_costs = costs;
	assert_int_equal(sim_run(&cfg, &t, &shrink3, NULL, &r, msg, sizeof(msg)), DRAKE_OK);
	assert_int_equal(r.scale_down_events, 3); /* workers */
	double finish = r.makespan;
	sim_result_release(&r);
	sim_trace_release(&t);
	return finish;
}

/* A pause stops the job for its length: the finish moves by the
 * difference of the kinds' costs, and a kind whose cost is the global
 * pause finishes with no kind. */
static void each_resize_costs_the_job_its_kinds_pause(void **state)
{
	(void)state;
	double none = shrunk_once("", NULL);             /* rescale_pause: 10 s */
	double tf = shrunk_once("tfjobs", NULL);         /* 1.9 s */
	double torch = shrunk_once("pytorchjobs", NULL); /* 18.1 s */
	assert_true(tf < none && none < torch);
	assert_float_equal(torch - tf, 18.1 - 1.9, 1e-3);
	struct job_resize_costs c;
	char msg[256];
	job_resize_costs_default(&c);
	assert_int_equal(job_resize_costs_parse("pytorchjobs=10s/1s", &c, msg, sizeof(msg)),
	                 DRAKE_OK);
	assert_float_equal(shrunk_once("pytorchjobs", &c), none, 1e-3);
}

/* drake's policy and one TFJob of 2 GPUs (max 4) alone on an idle
 * cluster, for 600 s: doubling it saves 45 % of its expected remaining
 * time (its age), more than a 10 s pause within a minute of idling, never
 * an hour's within its run. Told its resize costs an hour, drake leaves
 * it at 2; blind to that (believing 10 s), it grows it. */
static void drakes_policy_weighs_a_resize_by_the_jobs_cost(void **state)
{
	(void)state;
	static const char text[] = "job_id,submission_time,duration,num_gpu,kind\n"
	                           "a,0,600,2,tfjobs\n";
	struct job_resize_costs c;
	char msg[256];
	job_resize_costs_default(&c);
	assert_int_equal(job_resize_costs_parse("tfjobs=1h", &c, msg, sizeof(msg)), DRAKE_OK);
	size_t up[2];
	for (int blind = 0; blind < 2; blind++) {
		struct sim_trace t;
		struct sim_result r;
		load(text, "h", &t);
		struct sim_config cfg;
		sim_config_defaults(&cfg);
		cfg.nodes = 3;
		cfg.resize_costs = &c;
		cfg.policy_blind = blind;
		assert_int_equal(sim_run(&cfg, &t, &sim_policy_drake, NULL, &r, msg, sizeof(msg)),
		                 DRAKE_OK);
		assert_int_equal(r.finished, 1);
		up[blind] = r.scale_up_events;
		sim_result_release(&r);
		sim_trace_release(&t);
	}
	assert_int_equal(up[0], 0);
	assert_int_equal(up[1], 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(a_trace_may_name_each_jobs_kind_in_a_last_column),
	    cmocka_unit_test(an_unknown_kind_is_refused_naming_its_row),
	    cmocka_unit_test(a_kind_mix_gives_each_kind_its_share_interleaved),
	    cmocka_unit_test(a_bad_kind_mix_is_refused_naming_what_is_wrong),
	    cmocka_unit_test(each_resize_costs_the_job_its_kinds_pause),
	    cmocka_unit_test(drakes_policy_weighs_a_resize_by_the_jobs_cost),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
