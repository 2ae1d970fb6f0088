/* round_codec_test.c - a decision round as a JSON line: what a replay
 * needs of its inputs and outputs is there, by name and by index; decoded,
 * it encodes to the same line; a malformed line is refused naming the field. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "gang/gang_testutil.h"
#include "reconciler/round_codec.h"

static void a_round_is_one_line_with_its_inputs_and_actions(void **state)
{
	(void)state;
	struct drake_cluster c;
	assert_int_equal(cluster_from(&c, "a:8:0 b:8:8"), 0);
	struct drake_round_member m[4];
	for (int i = 0; i < 4; i++)
		m[i] = (struct drake_round_member){.state = DRAKE_MEMBER_WAITING, .node = -1};
	struct drake_round_job j = {.name = "ml/a",
	                            .uid = "u1",
	                            .created = 5,
	                            .req = gpu_job(1, 1, 2),
	                            .max_workers = 3,
	                            .ps = m,
	                            .workers = m + 1,
	                            .progress = -1};
	struct drake_round_opts o = {.pace_budget = 64};
	drake_scale_defaults(&o.scale);
	struct drake_round r;
	assert_int_equal(drake_round(&c, &j, 1, 100, &o, &r), DRAKE_OK);
	char *line = round_log_line(&c, &j, 1, 100, &o, &r);
	assert_non_null(line);
	assert_null(strchr(line, '\n'));
	json_error_t err;
	json_t *v = json_loads(line, 0, &err);
	assert_non_null(v);
	assert_int_equal(json_real_value(json_object_get(v, "now")), 100);
	json_t *in = json_object_get(v, "in"), *out = json_object_get(v, "out");
	assert_string_equal(json_string_value(json_object_get(
	                        json_array_get(json_object_get(in, "nodes"), 1), "name")),
	                    "b");
	json_t *job = json_array_get(json_object_get(in, "jobs"), 0);
	assert_string_equal(json_string_value(json_object_get(job, "name")), "ml/a");
	assert_int_equal(json_array_size(json_object_get(job, "workers")), 3);
	assert_string_equal(json_string_value(json_object_get(
	                        json_array_get(json_object_get(job, "workers"), 2), "state")),
	                    "waiting");
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(in, "opts"), "paceBudget")), 64);
	json_t *a = json_array_get(json_object_get(out, "actions"), 0);
	assert_string_equal(json_string_value(json_object_get(a, "kind")), "admit");
	assert_string_equal(json_string_value(json_object_get(a, "reason")), "fits");
	assert_string_equal(json_string_value(json_object_get(json_object_get(a, "gang"), "id")),
	                    "u1.100");
	json_t *pods = json_object_get(a, "pods");
	assert_int_equal(json_array_size(pods), 3);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(pods, 2), "index")), 1);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(pods, 2), "node")), 0);
	assert_string_equal(json_string_value(json_object_get(
	                        json_array_get(json_object_get(out, "jobs"), 0), "class")),
	                    "new");
	json_decref(v);
	free(line);
	drake_round_release(&r);
	drake_cluster_release(&c);
}

#define MAXW 4

/* A job and the storage its input borrows (as gang/round_test.c builds
 * them): one PS, workers of one GPU. */
struct tj {
	struct drake_round_job j;
	struct drake_round_member m[2 + MAXW];
	unsigned char member[MAXW];
	struct drake_round_place place[2];
};

static void new_job(struct tj *t, const char *name, double created, int min, int want)
{
	memset(t, 0, sizeof(*t));
	t->j.name = name;
	t->j.uid = name + 3;
	t->j.created = created;
	t->j.req = gpu_job(1, min, want);
	t->j.max_workers = MAXW;
	t->j.ps = t->m;
	t->j.workers = t->m + 1;
	t->j.progress = -1;
	for (int i = 0; i < 2 + MAXW; i++)
		t->m[i] = (struct drake_round_member){.state = DRAKE_MEMBER_WAITING, .node = -1};
}

static void running_job(struct tj *t, const char *name, double admitted, const char *gang, int n)
{
	new_job(t, name, admitted, 1, n);
	t->j.admitted = admitted;
	for (int k = 0; k <= n; k++) {
		t->m[k] = (struct drake_round_member){.state = DRAKE_MEMBER_PLACED,
		                                      .node = 0,
		                                      .bound = true,
		                                      .gang = gang,
		                                      .gang_size = 1 + n,
		                                      .name = k ? "w" : "ps"};
		if (k)
			t->member[k - 1] = 1;
	}
	t->j.rec = (struct drake_round_record){
	    .present = true, .gang = gang, .member = t->member, .n = n, .at = admitted};
}

/* encode -> decode -> encode gives the same line, and the decoded outputs
 * are the round's. */
static void round_trip(const struct drake_cluster *c, struct tj *t, size_t n, double now,
                       const struct drake_round_opts *o, const char *expect_kinds)
{
	struct drake_round_job jobs[4];
	for (size_t i = 0; i < n; i++)
		jobs[i] = t[i].j;
	struct drake_round r;
	assert_int_equal(drake_round(c, jobs, n, now, o, &r), DRAKE_OK);
	char kinds[128] = "";
	for (size_t i = 0; i < r.n; i++)
		snprintf(kinds + strlen(kinds), sizeof(kinds) - strlen(kinds), "%s%s", i ? " " : "",
		         drake_round_kind_name(r.act[i].kind));
	assert_string_equal(kinds, expect_kinds);
	char *line = round_log_line(c, jobs, n, now, o, &r);
	assert_non_null(line);
	struct round_log_entry e;
	char msg[256];
	assert_int_equal(round_log_decode(line, &e, msg, sizeof(msg)), DRAKE_OK);
	char *again = round_log_line(&e.c, e.jobs, e.n, e.now, &e.opts, &e.out);
	assert_non_null(again);
	assert_string_equal(again, line);
	/* and the round decided again from the decoded inputs is the same */
	struct drake_round r2;
	assert_int_equal(drake_round(&e.c, e.jobs, e.n, e.now, &e.opts, &r2), DRAKE_OK);
	char *third = round_log_line(&e.c, e.jobs, e.n, e.now, &e.opts, &r2);
	assert_string_equal(third, line);
	free(third);
	drake_round_release(&r2);
	free(again);
	round_log_entry_release(&e);
	free(line);
	drake_round_release(&r);
}

static void a_round_decoded_encodes_to_the_same_line(void **state)
{
	(void)state;
	struct drake_cluster c;
	assert_int_equal(cluster_from(&c, "a:4:4 b:8:8 c:2:0!"), 0);
	c.nodes[1].tainted = true;
	c.nodes[1].gpu_mem = 16 * GIB;
	int ext = drake_res_name_index(&c.names, "example.com/fpga", true);
	c.nodes[0].alloc.ext[ext] = 2;
	struct drake_round_opts o = {.pace_budget = 8, .pace_unbound = 1};
	drake_scale_defaults(&o.scale);
	o.scale.starve_after = 30.5;
	o.scale.keep_window = 45;
	struct tj t[3];
	/* a running job on a: a record with a scale-up's place and a give,
	 * a migration in flight, progress */
	running_job(&t[0], "ml/run", 100, "run.100", 4);
	t[0].place[0] = (struct drake_round_place){.index = 3, .node = "a"};
	t[0].j.rec.place = t[0].place;
	t[0].j.rec.n_place = 1;
	t[0].j.rec.gave_to = "ml/old";
	t[0].j.move = (struct drake_round_move){
	    .active = true, .role = DRAKE_ROLE_WORKER, .index = 2, .to = "b"};
	t[0].j.progress = 0.25;
	t[0].j.slow = true;
	/* a starving job with a chief, a node mask, an extended resource,
	 * a kube-scheduler refusal and a change since */
	new_job(&t[1], "ml/starving", 5000 - 100, 2, 2);
	t[1].j.req = with_chief(t[1].j.req, 0);
	t[1].j.req.worker.ext[ext] = 0;
	t[1].j.ps = t[1].m;
	t[1].j.chief = t[1].m + 1;
	t[1].j.workers = t[1].m + 2;
	static const unsigned char mask[3] = {1, 1, 0};
	t[1].j.req.worker_ok = mask;
	t[1].j.refusal = (struct drake_refusal_record){.tries = 2, .at_s = 4000, .until_s = 4010};
	t[1].j.refused_pod = "starving-worker-0";
	t[1].j.refused_why = "0/3 nodes are available";
	t[1].j.changed = 4500;
	t[1].m[0].refused = "Insufficient cpu";
	t[1].j.cost = (struct drake_change_cost){.shrink = 18.1, .grow = 6.5};
	round_trip(&c, t, 2, 5000, &o, "admit shrink");
	/* the same while a worker of the last change is still leaving: it waits */
	drake_cluster_release(&c);
	assert_int_equal(cluster_from(&c, "a:4:4"), 0);
	running_job(&t[0], "ml/run", 100, "run.100", 3);
	t[0].m[4] = (struct drake_round_member){
	    .state = DRAKE_MEMBER_MISSING, .node = 0, .bound = true, .leaving = true, .name = "w"};
	new_job(&t[1], "ml/starving", 5000 - 100, 2, 2);
	round_trip(&c, t, 2, 5000, &o, "hold");
	/* growth into idle GPUs, and a worker the record no longer lists */
	drake_cluster_release(&c);
	assert_int_equal(cluster_from(&c, "a:8:4"), 0);
	running_job(&t[0], "ml/run", 100, "run.100", 3);
	running_job(&t[2], "ml/stray", 200, "stray.200", 3);
	t[2].member[2] = 0;
	t[2].j.rec.n = 2;
	round_trip(&c, t, 1, 5000, &o, "grow");
	round_trip(&c, t + 2, 1, 5000, &o, "grow release");
	/* paced: the second wave held */
	drake_cluster_release(&c);
	assert_int_equal(cluster_from(&c, "a:8:0"), 0);
	new_job(&t[0], "ml/a", 10, 1, 1);
	new_job(&t[1], "ml/b", 20, 1, 1);
	o.pace_budget = 2;
	o.pace_unbound = 0;
	round_trip(&c, t, 2, 5000, &o, "admit hold");
	/* DRAGON's rules decide, with its action timer */
	o.policy = DRAKE_POLICY_DRAGON;
	o.dragon_last_action = 4000;
	o.pace_budget = 0;
	round_trip(&c, t, 2, 5000, &o, "admit hold"); /* one admission a round */
	drake_cluster_release(&c);
	/* Tiresias: a running job past the threshold preempted for a new
	 * one, its 2D-LAS state and the decision timer read and written */
	assert_int_equal(cluster_from(&c, "a:4:4"), 0);
	running_job(&t[0], "ml/long", 100, "long.100", 4);
	t[0].j.las = (struct drake_las_state){
	    .seen = true, .entered = 100, .last_check = 4940.25, .executed = 3000.5};
	new_job(&t[1], "ml/short", 4990, 4, 4);
	o = (struct drake_round_opts){
	    .policy = DRAKE_POLICY_TIRESIAS, .las_interval = 60, .las_decided = 4939.75};
	drake_scale_defaults(&o.scale);
	drake_las_defaults(&o.las);
	o.las.threshold[0] = 3600;
	round_trip(&c, t, 2, 5000, &o, "preempt admit");
	/* between two decisions, nothing */
	o.las_decided = 4990;
	round_trip(&c, t, 2, 5000, &o, "hold");
	drake_cluster_release(&c);
}

/* A valid line with one substring replaced. */
static char *mutate(const char *line, const char *from, const char *to)
{
	const char *at = strstr(line, from);
	assert_non_null(at);
	char *s = malloc(strlen(line) + strlen(to) + 1);
	assert_non_null(s);
	memcpy(s, line, (size_t)(at - line));
	strcpy(s + (at - line), to);
	strcat(s, at + strlen(from));
	return s;
}

/* The line of a round that admits one new job "ml/a" on node a (b is
 * full), with the default options; the caller frees it and releases r
 * and c. */
static char *one_job_line(struct drake_cluster *c, struct tj *t, struct drake_round *r)
{
	assert_int_equal(cluster_from(c, "a:8:0 b:8:8"), 0);
	new_job(t, "ml/a", 5, 1, 2);
	struct drake_round_opts o = {.pace_budget = 64};
	drake_scale_defaults(&o.scale);
	assert_int_equal(drake_round(c, &t->j, 1, 100, &o, r), DRAKE_OK);
	char *line = round_log_line(c, &t->j, 1, 100, &o, r);
	assert_non_null(line);
	return line;
}

static void a_malformed_line_is_refused_naming_the_field(void **state)
{
	(void)state;
	struct drake_cluster c;
	struct tj t;
	struct drake_round r;
	char *line = one_job_line(&c, &t, &r);
	static const struct {
		const char *from, *to, *msg;
	} cases[] = {
	    {"{\"now\":100.0,", "{", "now: missing"},
	    {"\"state\":\"waiting\"", "\"state\":\"gone\"",
	     "in.jobs[0].ps[0].state: unknown value \"gone\""},
	    {"\"maxWorkers\":4", "\"maxWorkers\":3",
	     "in.jobs[0].workers: expected 3 entries, found 4"},
	    {"\"kind\":\"admit\"", "\"kind\":7", "out.actions[0].kind: expected a string"},
	    {"\"node\":0", "\"node\":9", "out.actions[0].pods[0].node: out of range"},
	    {"\"paceBudget\":64", "\"paceBudget\":\"64\"",
	     "in.opts.paceBudget: expected an integer"},
	    {"\"gpu\":8}", "\"gpu\":8,\"x\":1}",
	     "in.nodes[0].alloc: a resource not named in in.resources"},
	    {"\"class\":\"new\"", "\"class\":\"old\"", "out.jobs[0].class: unknown value"},
	};
	char msg[256];
	struct round_log_entry e;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *bad = mutate(line, cases[i].from, cases[i].to);
		assert_int_equal(round_log_decode(bad, &e, msg, sizeof(msg)), DRAKE_EINVAL);
		if (!strstr(msg, cases[i].msg))
			fail_msg("case %zu: \"%s\" does not say \"%s\"", i, msg, cases[i].msg);
		free(bad);
	}
	/* cut mid-line, as rotation or a crash leaves it */
	line[strlen(line) / 2] = 0;
	assert_int_equal(round_log_decode(line, &e, msg, sizeof(msg)), DRAKE_EINVAL);
	assert_non_null(strstr(msg, "not JSON"));
	assert_int_equal(round_log_decode("[]", &e, msg, sizeof(msg)), DRAKE_EINVAL);
	assert_string_equal(msg, "line: expected an object");
	free(line);
	drake_round_release(&r);
	drake_cluster_release(&c);
}

/* The actions of the round line decodes to, decided again. */
static size_t replayed_actions(const char *line)
{
	struct round_log_entry e;
	char msg[256];
	assert_int_equal(round_log_decode(line, &e, msg, sizeof(msg)), DRAKE_OK);
	struct drake_round r;
	assert_int_equal(drake_round(&e.c, e.jobs, e.n, e.now, &e.opts, &r), DRAKE_OK);
	size_t n = r.n;
	drake_round_release(&r);
	round_log_entry_release(&e);
	return n;
}

/* line with from replaced by to is refused, its message saying says. */
static void refused(const char *line, const char *from, const char *to, const char *says)
{
	char *bad = mutate(line, from, to);
	struct round_log_entry e;
	char msg[256];
	assert_int_equal(round_log_decode(bad, &e, msg, sizeof(msg)), DRAKE_EINVAL);
	if (!strstr(msg, says))
		fail_msg("\"%s\" does not say \"%s\"", msg, says);
	free(bad);
}

/* A line a drake wrote before jobs carried their kind's cost of a change
 * replays as it ran: every job at the global pause. A job 20 s old whose
 * one-worker batch (3 -> 4 on one node) saves about 4.3 s grows at a cost
 * of 2 s and not at 18 s; without "cost" it is decided at rescale_pause
 * (10 s): not grown either, and the decoded job has no cost of its own. */
static void a_line_without_costs_replays_every_job_at_the_global_pause(void **state)
{
	(void)state;
	struct drake_cluster c;
	struct tj t;
	assert_int_equal(cluster_from(&c, "a:4:3"), 0);
	running_job(&t, "ml/young", 0, "young.0", 3);
	struct drake_round_opts o = {.pace_budget = 64};
	drake_scale_defaults(&o.scale);
	o.scale.idle_after = 10;
	const double grow[] = {2, 18};
	const char *kinds[] = {"grow", ""};
	for (int i = 0; i < 2; i++) {
		t.j.cost = (struct drake_change_cost){.shrink = 1, .grow = grow[i]};
		round_trip(&c, &t, 1, 20, &o, kinds[i]);
	}
	struct drake_round r;
	t.j.cost = (struct drake_change_cost){.shrink = 1.5, .grow = 2.5};
	assert_int_equal(drake_round(&c, &t.j, 1, 20, &o, &r), DRAKE_OK);
	char *line = round_log_line(&c, &t.j, 1, 20, &o, &r);
	assert_non_null(line);
	char *old = mutate(line, ",\"cost\":{\"shrink\":1.5,\"grow\":2.5}", "");
	struct round_log_entry e;
	char msg[256];
	assert_int_equal(round_log_decode(old, &e, msg, sizeof(msg)), DRAKE_OK);
	assert_true(e.jobs[0].cost.shrink == 0 && e.jobs[0].cost.grow == 0);
	round_log_entry_release(&e);
	assert_int_equal(replayed_actions(old), 0); /* 4.3 s saved < 10 s */
	refused(line, "\"shrink\":1.5", "\"shrink\":\"1.5\"", "in.jobs[0].cost.shrink");
	free(old);
	free(line);
	drake_round_release(&r);
	drake_cluster_release(&c);
}

/* A line carries the finished jobs' service the round read, and replays
 * it: a job 20 s old that reports no progress, whose one-worker batch
 * saves about 4.3 s of its age at a 10 s pause, grows when sixteen
 * finished jobs of an hour's GPU-time say it has about 20 minutes left
 * on its 3 GPUs. A line without them (a drake before them, or one that
 * has seen no job end) replays with none: not grown. */
static void a_line_replays_the_finished_jobs_service_it_names(void **state)
{
	(void)state;
	struct drake_cluster c;
	struct tj t;
	assert_int_equal(cluster_from(&c, "a:4:3"), 0);
	running_job(&t, "ml/young", 0, "young.0", 3);
	t.j.service = 60;
	struct drake_round_opts o = {.pace_budget = 64};
	drake_scale_defaults(&o.scale);
	o.scale.idle_after = 10;
	round_trip(&c, &t, 1, 20, &o, "");
	double hour[DRAKE_HISTORY_MIN];
	char list[DRAKE_HISTORY_MIN * 8 + 16] = "";
	for (int i = 0; i < DRAKE_HISTORY_MIN; i++) {
		hour[i] = 3600;
		strcat(list, i ? ",3600.0" : ",\"history\":[3600.0");
	}
	strcat(list, "]");
	o.scale.history = (struct drake_history){hour, DRAKE_HISTORY_MIN};
	round_trip(&c, &t, 1, 20, &o, "grow");
	struct drake_round r;
	assert_int_equal(drake_round(&c, &t.j, 1, 20, &o, &r), DRAKE_OK);
	char *line = round_log_line(&c, &t.j, 1, 20, &o, &r);
	assert_non_null(line);
	char *old = mutate(line, list, "");
	struct round_log_entry e;
	char msg[256];
	assert_int_equal(round_log_decode(old, &e, msg, sizeof(msg)), DRAKE_OK);
	assert_int_equal(e.opts.scale.history.n, 0);
	round_log_entry_release(&e);
	assert_int_equal(replayed_actions(old), 0);
	refused(line, "[3600.0,", "[\"3600\",", "in.opts.history: expected finite numbers");
	free(old);
	free(line);
	drake_round_release(&r);
	drake_cluster_release(&c);
}

/* The scaling options of line decoded with from replaced by to. */
static struct drake_scale_opts scale_decoded(const char *line, const char *from, const char *to)
{
	char *s = mutate(line, from, to);
	struct round_log_entry e;
	char msg[256];
	assert_int_equal(round_log_decode(s, &e, msg, sizeof(msg)), DRAKE_OK);
	struct drake_scale_opts o = e.opts.scale;
	round_log_entry_release(&e);
	free(s);
	return o;
}

/* A line replays the start rule and queue order it names; a line a drake
 * wrote before startNarrow existed decodes as the rule it ran (every job
 * started with what fit), and one from before queueOrder as FIFO. */
static void a_line_replays_the_start_rule_and_queue_order_it_names_or_the_old_ones(void **state)
{
	(void)state;
	struct drake_cluster c;
	struct tj t;
	struct drake_round r;
	char *line = one_job_line(&c, &t, &r);
	assert_false(
	    scale_decoded(line, "\"startNarrow\":true", "\"startNarrow\":false").start_narrow);
	assert_true(scale_decoded(line, ",\"startNarrow\":true", "").start_narrow);
	static const struct {
		const char *name;
		enum drake_queue_order q;
	} names[] = {
	    {"pack", DRAKE_QUEUE_PACK}, {"narrow", DRAKE_QUEUE_NARROW}, {"fifo", DRAKE_QUEUE_FIFO}};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char to[64];
		snprintf(to, sizeof(to), "\"queueOrder\":\"%s\"", names[i].name);
		assert_int_equal(scale_decoded(line, "\"queueOrder\":\"pack\"", to).queue,
		                 names[i].q);
	}
	assert_int_equal(scale_decoded(line, ",\"queueOrder\":\"pack\"", "").queue,
	                 DRAKE_QUEUE_FIFO);
	free(line);
	drake_round_release(&r);
	drake_cluster_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(a_round_is_one_line_with_its_inputs_and_actions),
	    cmocka_unit_test(a_round_decoded_encodes_to_the_same_line),
	    cmocka_unit_test(a_malformed_line_is_refused_naming_the_field),
	    cmocka_unit_test(
	        a_line_replays_the_start_rule_and_queue_order_it_names_or_the_old_ones),
	    cmocka_unit_test(a_line_without_costs_replays_every_job_at_the_global_pause),
	    cmocka_unit_test(a_line_replays_the_finished_jobs_service_it_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
