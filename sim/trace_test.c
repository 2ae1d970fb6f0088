/* trace_test.c - the trace parsers accept the real formats and refuse bad
 * rows, unsorted times, zero GPUs and huge values, naming file:line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sim/trace.h"

#define ITP   "job_id,submission_time,duration,num_gpu\n"
#define GANG  "job_id,submit_order,replicas,gpus_per_pod,duration_s\n"
#define NODES "sn,cpu_milli,memory_mib,gpu,model\n"

struct tcase {
	const char *name;
	const char *text;
	drake_err err;
	size_t rows;
	const char *msg_has;
};

static const struct tcase trace_cases[] = {
    {"a well-formed ITP trace parses", ITP "a,10,100,8\nb,10,5,1\nc,20,7,64\n", DRAKE_OK, 3, NULL},
    {"CRLF line endings are accepted", ITP "a,10,100,8\r\nb,11,5,1\r\n", DRAKE_OK, 2, NULL},
    {"a well-formed gang trace parses", GANG "kn-00,0,32,8,30\nkn-01,1,16,8,30\n", DRAKE_OK, 2,
     NULL},
    {"an unknown header is refused", "id,when\n", DRAKE_EINVAL, 0, "t.csv:1: unknown header"},
    {"an empty file is refused", "", DRAKE_EINVAL, 0, "empty file"},
    {"a header without rows is refused", ITP, DRAKE_EINVAL, 0, "no jobs"},
    {"a short row names its line", ITP "a,10,100,8\nb,11,5\n", DRAKE_EINVAL, 0,
     "t.csv:3: 3 fields, want 4"},
    {"a non-numeric field names the field", ITP "a,1x,100,8\n", DRAKE_EINVAL, 0,
     "t.csv:2: submission_time \"1x\" is not an integer"},
    {"negative numbers are refused", ITP "a,-1,100,8\n", DRAKE_EINVAL, 0, "not an integer"},
    {"zero GPUs are refused", ITP "a,1,100,0\n", DRAKE_EINVAL, 0,
     "t.csv:2: num_gpu must be at least 1"},
    {"zero duration is refused", ITP "a,1,0,1\n", DRAKE_EINVAL, 0, "duration must be at least 1"},
    {"unsorted submission times are refused", ITP "a,10,1,1\nb,9,1,1\n", DRAKE_EINVAL, 0,
     "t.csv:3: submission_time 9 is before"},
    {"huge GPU counts are a limit error", ITP "a,1,1,5000\n", DRAKE_ELIMIT, 0,
     "num_gpu 5000 exceeds 4096"},
    {"values that overflow int64 are a limit error", ITP "a,99999999999999999999999,1,1\n",
     DRAKE_ELIMIT, 0, "exceeds"},
    {"huge durations are a limit error", ITP "a,1,100000001,1\n", DRAKE_ELIMIT, 0, "exceeds"},
    {"an empty job id is refused", ITP ",1,1,1\n", DRAKE_EINVAL, 0, "empty job_id"},
    {"a job id with a space is refused", ITP "a b,1,1,1\n", DRAKE_EINVAL, 0, "space"},
    {"a row after a blank line is refused", ITP "a,1,1,1\n\nb,2,1,1\n", DRAKE_EINVAL, 0,
     "t.csv:4: row after a blank line"},
    {"gang replicas times GPUs over the limit is refused", GANG "x,0,1000,64,30\n", DRAKE_ELIMIT, 0,
     "exceeds 4096"},
    {"gang submit order must increase", GANG "x,1,1,8,30\ny,1,1,8,30\n", DRAKE_EINVAL, 0,
     "t.csv:3: submit_order 1 does not increase"},
    {"too many fields are refused", ITP "a,1,1,1,1,1,1,1,1,1\n", DRAKE_EINVAL, 0, "want 4"},
};

static void run_trace_case(void **state)
{
	const struct tcase *c = *state;
	struct sim_trace t;
	char msg[256] = "";
	drake_err err = sim_trace_parse(c->text, strlen(c->text), "t.csv", &t, msg, sizeof(msg));
	if (err != c->err)
		print_error("got %s: %s\n", drake_strerror(err), msg);
	assert_int_equal(err, c->err);
	if (err == DRAKE_OK) {
		assert_int_equal(t.n, c->rows);
		sim_trace_release(&t);
	} else {
		assert_null(t.jobs);
		if (!strstr(msg, c->msg_has))
			print_error("message \"%s\" lacks \"%s\"\n", msg, c->msg_has);
		assert_non_null(strstr(msg, c->msg_has));
	}
}

static void gang_rows_carry_their_shape(void **state)
{
	(void)state;
	const char *text = GANG "kn-00,0,32,8,30\n";
	struct sim_trace t;
	assert_int_equal(sim_trace_parse(text, strlen(text), "g", &t, NULL, 0), DRAKE_OK);
	assert_int_equal(t.kind, SIM_TRACE_GANG);
	assert_int_equal(t.jobs[0].replicas, 32);
	assert_int_equal(t.jobs[0].gpus_per_pod, 8);
	assert_int_equal(t.jobs[0].gpus, 256);
	assert_int_equal(t.jobs[0].duration, 30);
	sim_trace_release(&t);
}

static void node_lists_parse_and_refuse_garbage(void **state)
{
	(void)state;
	const char *good = NODES "n0,32000,262144,0,\nn1,96000,393216,8,V100\n";
	struct sim_nodes n;
	char msg[256];
	assert_int_equal(sim_nodes_parse(good, strlen(good), "n", &n, msg, sizeof(msg)), DRAKE_OK);
	assert_int_equal(n.n, 2);
	assert_int_equal(n.rows[1].gpu, 8);
	assert_string_equal(n.rows[1].model, "V100");
	sim_nodes_release(&n);
	const char *bad = NODES "n0,32000,262144,99,\n";
	assert_int_equal(sim_nodes_parse(bad, strlen(bad), "n", &n, msg, sizeof(msg)),
	                 DRAKE_ELIMIT);
	assert_non_null(strstr(msg, "n:2: gpu"));
	const char *zero = NODES "n0,0,262144,1,\n";
	assert_int_equal(sim_nodes_parse(zero, strlen(zero), "n", &n, msg, sizeof(msg)),
	                 DRAKE_EINVAL);
}

static void the_shipped_traces_parse(void **state)
{
	(void)state;
	struct sim_trace t;
	char msg[256];
	const char *dir = "../shared/traces";
	char path[256];
	snprintf(path, sizeof(path), "%s/ms_itp_cluster03.csv", dir);
	if (sim_trace_load(path, &t, msg, sizeof(msg)) == DRAKE_EIO)
		skip(); /* not checked out beside the repo */
	assert_int_equal(t.n, 3011);
	sim_trace_release(&t);
	snprintf(path, sizeof(path), "%s/knavigator_gang53.csv", dir);
	assert_int_equal(sim_trace_load(path, &t, msg, sizeof(msg)), DRAKE_OK);
	assert_int_equal(t.n, 53);
	sim_trace_release(&t);
	struct sim_nodes n;
	snprintf(path, sizeof(path), "%s/alibaba2023_openb_nodes.csv", dir);
	assert_int_equal(sim_nodes_load(path, &n, msg, sizeof(msg)), DRAKE_OK);
	assert_int_equal(n.n, 1523);
	sim_nodes_release(&n);
}

int main(void)
{
	size_t n = sizeof(trace_cases) / sizeof(trace_cases[0]);
	struct CMUnitTest tests[sizeof(trace_cases) / sizeof(trace_cases[0]) + 3];
	for (size_t i = 0; i < n; i++)
		tests[i] = (struct CMUnitTest){trace_cases[i].name, run_trace_case, NULL, NULL,
		                               (void *)&trace_cases[i]};
	tests[n] = (struct CMUnitTest)cmocka_unit_test(gang_rows_carry_their_shape);
	tests[n + 1] = (struct CMUnitTest)cmocka_unit_test(node_lists_parse_and_refuse_garbage);
	tests[n + 2] = (struct CMUnitTest)cmocka_unit_test(the_shipped_traces_parse);
	return _cmocka_run_group_tests("trace", tests, n + 3, NULL, NULL);
}
