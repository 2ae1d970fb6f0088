/* trace_test.c - the trace parsers accept the real formats and refuse bad
 * rows, unsorted times, zero GPUs and huge values, naming file:line; a
 * user's named-column trace skips bad rows and counts them per reason. */
#include <setjmp.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sim/trace.h"

#define ITP    "job_id,submission_time,duration,num_gpu\n"
#define GANG   "job_id,submit_order,replicas,gpus_per_pod,duration_s\n"
#define NODES  "sn,cpu_milli,memory_mib,gpu,model\n"
#define POLLUX "name,time,application,num_replicas,batch_size\n"

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
    {"a Pollux workload parses", POLLUX "cifar10-0,107,cifar10,6,2048\nncf-2,135,ncf,1,32768\n",
     DRAKE_OK, 2, NULL},
    {"a Pollux row without its batch size names its line", POLLUX "a,1,ncf,1\n", DRAKE_EINVAL, 0,
     "t.csv:2: 4 fields, want 5"},
    {"a Pollux job of zero replicas is refused", POLLUX "a,1,ncf,0,32768\n", DRAKE_EINVAL, 0,
     "t.csv:2: num_replicas must be at least 1"},
    {"a Pollux batch size over the limit is refused", POLLUX "a,1,ncf,1,99999999\n", DRAKE_ELIMIT,
     0, "batch_size 99999999 exceeds"},
    {"a fractional Pollux time is refused", POLLUX "a,1.5,ncf,1,32\n", DRAKE_EINVAL, 0,
     "t.csv:2: time \"1.5\" is not an integer"},
    {"an empty Pollux application is refused", POLLUX "a,1,,1,32\n", DRAKE_EINVAL, 0,
     "t.csv:2: empty application"},
    {"a Pollux application over 31 characters is refused",
     POLLUX "a,1,abcdefghijabcdefghijabcdefghijab,1,32\n", DRAKE_ELIMIT, 0,
     "application longer than 31"},
    {"unsorted Pollux times are refused", POLLUX "a,10,ncf,1,32\nb,9,ncf,1,32\n", DRAKE_EINVAL, 0,
     "t.csv:3: time 9 is before"},
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

/* A user's trace read with the column list `columns`. */
struct ccase {
	const char *name;
	const char *columns;
	const char *text;
	drake_err err;
	size_t rows, skipped;
	size_t counts[SIM_SKIP_NREASONS];
	const char *msg_has; /* the error, or else the first skipped row's example */
};

#define MINE "name,user,num_gpus,run_s,queue,start_ts\n"
#define COLS "submit=start_ts,duration=run_s,gpus=num_gpus,id=name"

static const struct ccase columns_cases[] = {
    {"named columns in another order, among others, parse",
     COLS,
     MINE "j1,alice,8,100,q,50\nj2,bob,1,10,q,60\n",
     DRAKE_OK,
     2,
     0,
     {0},
     NULL},
    {"the id column is optional",
     "gpus=num_gpus,submit=start_ts,duration=run_s",
     MINE "j1,alice,8,100,q,50\n",
     DRAKE_OK,
     1,
     0,
     {0},
     NULL},
    {"CRLF, a byte order mark and blank lines are fine",
     COLS,
     "\xef\xbb\xbf" MINE "j1,a,8,100,q,50\r\n\r\nj2,b,1,10,q,60\r\n",
     DRAKE_OK,
     2,
     0,
     {0},
     NULL},
    {"quoted fields lose their quotes; commas and doubled quotes inside are text",
     COLS,
     "\"name\",user,num_gpus,\"run_s\",queue,start_ts\n"
     "\"j,1\",\"say \"\"hi\"\"\",\"8\",100,\"\",50\n",
     DRAKE_OK,
     1,
     0,
     {0},
     NULL},
    {"a named column missing from the header is an error listing the header",
     "submit=start_ts,duration=runtime,gpus=num_gpus",
     MINE "j1,a,8,100,q,50\n",
     DRAKE_EINVAL,
     0,
     0,
     {0},
     "t.csv:1: no column \"runtime\" (duration) in the header; it has \"name\", \"user\", "
     "\"num_gpus\", \"run_s\", \"queue\", \"start_ts\""},
    {"a named column twice in the header is an error",
     COLS,
     "name,num_gpus,run_s,start_ts,name\n",
     DRAKE_EINVAL,
     0,
     0,
     {0},
     "t.csv:1: column \"name\" appears twice"},
    {"a badly quoted header is an error",
     COLS,
     "\"name,num_gpus\n",
     DRAKE_EINVAL,
     0,
     0,
     {0},
     "t.csv:1: bad quoting"},
    {"a header alone is an error", COLS, MINE, DRAKE_EINVAL, 0, 0, {0}, "t.csv: no jobs"},
    {"bad rows are skipped, counted per reason and quoted with file:line",
     COLS,
     MINE "j1,a,8,100,q,50\n"
          "j2,a,1.5,100,q,50\n"     /* not an integer */
          "j3,a,x,100,q,50\n"       /* not an integer */
          "j4,a,8,-100,q,50\n"      /* negative */
          "j5,a,0,100,q,50\n"       /* zero GPUs */
          "j6,a,8,0,q,50\n"         /* zero duration */
          "j7,a,5000,100,q,50\n"    /* over SIM_TRACE_MAX_GPUS */
          "j8,a,8,100,q\n"          /* a field short */
          "j9,a,8,100,q,50,extra\n" /* a field over */
          "j 10,a,8,100,q,50\n"     /* a space in the id */
          ",a,8,100,q,50\n"         /* an empty id */
          "j12,a\"b,8,100,q,50\n"   /* a quote in an unquoted field */
          "\"j13,a,8,100,q,50\n"    /* an unterminated quote */
          "j14,a,8,100,q,50\n",
     DRAKE_OK,
     2,
     12,
     {[SIM_SKIP_SYNTAX] = 2,
      [SIM_SKIP_NEGATIVE] = 1,
      [SIM_SKIP_ZERO] = 2,
      [SIM_SKIP_RANGE] = 1,
      [SIM_SKIP_FIELDS] = 2,
      [SIM_SKIP_ID] = 2,
      [SIM_SKIP_QUOTE] = 2},
     "t.csv:3: num_gpus \"1.5\" is not an integer"},
    {"a negative number is skipped as negative",
     COLS,
     MINE "j1,a,8,-1,q,50\nj2,a,8,1,q,50\n",
     DRAKE_OK,
     1,
     1,
     {[SIM_SKIP_NEGATIVE] = 1},
     "t.csv:2: run_s \"-1\" is not an integer >= 0"},
    {"a zero GPU count is skipped as zero",
     COLS,
     MINE "j1,a,0,1,q,50\nj2,a,8,1,q,50\n",
     DRAKE_OK,
     1,
     1,
     {[SIM_SKIP_ZERO] = 1},
     "t.csv:2: num_gpus must be at least 1"},
    {"a wrong field count is skipped",
     COLS,
     MINE "j1,a,8,1,q\nj2,a,8,1,q,50\n",
     DRAKE_OK,
     1,
     1,
     {[SIM_SKIP_FIELDS] = 1},
     "t.csv:2: 5 fields, want 6 as the header"},
    {"a line over the limit is skipped and the next one read",
     COLS,
     MINE "j1,a,8,1,q,50"
          "                                                                                "
          "                                                                                "
          "                                                                                "
          "                                                                                "
          "                                                                                "
          "                                                                                "
          "                                                                                "
          "                                                                                "
          "                                                                                "
          "                                                                                "
          "                                                                                "
          "                                                                                "
          "                                                                                "
          "\nj2,a,8,1,q,50\n",
     DRAKE_OK,
     1,
     1,
     {[SIM_SKIP_LINE] = 1},
     "t.csv:2: longer than 1024 bytes"},
    {"a duration over the limit in minutes is skipped",
     "submit=start_ts,duration=run_s:m,gpus=num_gpus",
     MINE "j1,a,8,1666667,q,50\nj2,a,8,1666666,q,50\n",
     DRAKE_OK,
     1,
     1,
     {[SIM_SKIP_RANGE] = 1},
     "t.csv:2: run_s 1666667 exceeds 1666666"},
    {"a trace with no usable row is an error quoting the first",
     COLS,
     MINE "j1,a,0,1,q,50\nj2,a,x,1,q,50\n",
     DRAKE_EINVAL,
     0,
     0,
     {0},
     "t.csv: no usable rows, 2 skipped; the first: t.csv:2: num_gpus must be at least 1"},
    {"submit times spanning more than the limit are an error",
     COLS,
     MINE "j1,a,8,1,q,0\nj2,a,8,1,q,100000001\n",
     DRAKE_ELIMIT,
     0,
     0,
     {0},
     "t.csv: submit times (start_ts) span 100000001 s, more than 100000000"},
};

static void run_columns_case(void **state)
{
	const struct ccase *c = *state;
	struct sim_trace_format f;
	struct sim_trace t;
	char msg[512] = "";
	assert_int_equal(sim_trace_format_parse(NULL, c->columns, &f, msg, sizeof(msg)), DRAKE_OK);
	drake_err err =
	    sim_trace_parse_as(c->text, strlen(c->text), "t.csv", &f, &t, msg, sizeof(msg));
	if (err != c->err)
		print_error("got %s: %s\n", drake_strerror(err), msg);
	assert_int_equal(err, c->err);
	if (err != DRAKE_OK) {
		assert_null(t.jobs);
		if (!strstr(msg, c->msg_has))
			print_error("message \"%s\" lacks \"%s\"\n", msg, c->msg_has);
		assert_non_null(strstr(msg, c->msg_has));
		return;
	}
	assert_int_equal(t.layout, SIM_LAYOUT_COLUMNS);
	assert_int_equal(t.kind, SIM_TRACE_ITP);
	assert_int_equal(t.n, c->rows);
	assert_int_equal(t.skipped.total, c->skipped);
	size_t sum = 0;
	for (int i = 0; i < SIM_SKIP_NREASONS; i++) {
		if (t.skipped.count[i] != c->counts[i])
			print_error("%s: %zu, want %zu\n", sim_trace_skip_name(i),
			            t.skipped.count[i], c->counts[i]);
		assert_int_equal(t.skipped.count[i], c->counts[i]);
		sum += t.skipped.count[i];
	}
	assert_int_equal(sum, t.skipped.total);
	assert_int_equal(t.skipped.n_examples, c->skipped < SIM_TRACE_SKIP_EXAMPLES
	                                           ? c->skipped
	                                           : SIM_TRACE_SKIP_EXAMPLES);
	if (c->msg_has) {
		if (!strstr(t.skipped.example[0], c->msg_has))
			print_error("example \"%s\" lacks \"%s\"\n", t.skipped.example[0],
			            c->msg_has);
		assert_non_null(strstr(t.skipped.example[0], c->msg_has));
	}
	sim_trace_release(&t);
}

static void named_columns_land_in_their_fields(void **state)
{
	(void)state;
	const char *text = MINE "j1,alice,8,100,q,1700000050\n"
	                        "\"j2\",bob,1,10,q,1700000030\n"
	                        "j3,carol,2,20,q,1700000030\n";
	struct sim_trace_format f;
	struct sim_trace t;
	char msg[256];
	assert_int_equal(sim_trace_format_parse("columns", COLS, &f, msg, sizeof(msg)), DRAKE_OK);
	assert_int_equal(sim_trace_parse_as(text, strlen(text), "t", &f, &t, msg, sizeof(msg)),
	                 DRAKE_OK);
	assert_int_equal(t.n, 3);
	/* sorted by submit time, stably (j2 before j3), shifted to start at 0 */
	assert_string_equal(t.jobs[0].id, "j2");
	assert_int_equal(t.jobs[0].submit, 0);
	assert_int_equal(t.jobs[0].duration, 10);
	assert_int_equal(t.jobs[0].gpus, 1);
	assert_string_equal(t.jobs[1].id, "j3");
	assert_int_equal(t.jobs[1].submit, 0);
	assert_string_equal(t.jobs[2].id, "j1");
	assert_int_equal(t.jobs[2].submit, 20);
	assert_int_equal(t.jobs[2].duration, 100);
	assert_int_equal(t.jobs[2].gpus, 8);
	for (size_t i = 0; i < t.n; i++) {
		assert_int_equal(t.jobs[i].order, i);
		assert_int_equal(t.jobs[i].replicas, 0);
	}
	sim_trace_release(&t);
}

/* --first-job: the jobs before it are gone, the rest keep their times and
 * order; a first job past the end is refused, naming the trace's length. */
static void skipping_jobs_starts_the_replay_later(void **state)
{
	(void)state;
	const char *text = ITP "a,10,5,1\nb,20,6,2\nc,30,7,4\n";
	struct sim_trace t;
	char msg[256];
	assert_int_equal(sim_trace_parse(text, strlen(text), "t", &t, msg, sizeof(msg)), DRAKE_OK);
	assert_int_equal(sim_trace_skip(&t, 0, msg, sizeof(msg)), DRAKE_OK);
	assert_int_equal(t.n, 3);
	assert_int_equal(sim_trace_skip(&t, 1, msg, sizeof(msg)), DRAKE_OK);
	assert_int_equal(t.n, 2);
	assert_string_equal(t.jobs[0].id, "b");
	assert_int_equal(t.jobs[0].submit, 20);
	assert_int_equal(t.jobs[0].order, 1);
	assert_int_equal(t.jobs[0].gpus, 2);
	assert_string_equal(t.jobs[1].id, "c");
	assert_int_equal(t.jobs[1].duration, 7);
	assert_int_equal(sim_trace_skip(&t, 2, msg, sizeof(msg)), DRAKE_EINVAL);
	assert_non_null(strstr(msg, "it has 2 jobs"));
	assert_int_equal(t.n, 2);
	sim_trace_release(&t);
}

/* glibc's qsort happens to be stable; the parser must not rely on that. */
static void many_ties_keep_file_order(void **state)
{
	(void)state;
	enum { ROWS = 3000 };
	char *text = malloc(ROWS * 16 + 64);
	assert_non_null(text);
	size_t len = (size_t)sprintf(text, "t,d,g\n");
	for (int i = 0; i < ROWS; i++)
		len += (size_t)sprintf(text + len, "%d,%d,1\n", (i * 7) % 3, i + 1);
	struct sim_trace_format f;
	struct sim_trace t;
	char msg[256];
	assert_int_equal(
	    sim_trace_format_parse(NULL, "submit=t,duration=d,gpus=g", &f, msg, sizeof(msg)),
	    DRAKE_OK);
	assert_int_equal(sim_trace_parse_as(text, len, "t", &f, &t, msg, sizeof(msg)), DRAKE_OK);
	assert_int_equal(t.n, ROWS);
	for (size_t i = 1; i < t.n; i++) {
		assert_true(t.jobs[i - 1].submit <= t.jobs[i].submit);
		if (t.jobs[i - 1].submit == t.jobs[i].submit)
			assert_true(t.jobs[i - 1].duration < t.jobs[i].duration);
	}
	sim_trace_release(&t);
	free(text);
}

static void units_and_line_ids(void **state)
{
	(void)state;
	const char *text = "hours,mins,g\n2,3,4\n1,1,1\n";
	struct sim_trace_format f;
	struct sim_trace t;
	char msg[256];
	assert_int_equal(sim_trace_format_parse("auto", "submit=hours:h,duration=mins:m,gpus=g", &f,
	                                        msg, sizeof(msg)),
	                 DRAKE_OK);
	assert_int_equal(f.layout, SIM_LAYOUT_COLUMNS);
	assert_int_equal(sim_trace_parse_as(text, strlen(text), "t", &f, &t, msg, sizeof(msg)),
	                 DRAKE_OK);
	assert_string_equal(t.jobs[0].id, "line-3");
	assert_int_equal(t.jobs[0].duration, 60);
	assert_string_equal(t.jobs[1].id, "line-2");
	assert_int_equal(t.jobs[1].submit, 3600);
	assert_int_equal(t.jobs[1].duration, 180);
	sim_trace_release(&t);
}

static void only_the_first_examples_are_kept(void **state)
{
	(void)state;
	char text[1024] = MINE;
	for (int i = 0; i < SIM_TRACE_SKIP_EXAMPLES + 3; i++)
		strcat(text, "j,a,0,1,q,1\n");
	strcat(text, "j,a,1,1,q,1\n");
	struct sim_trace_format f;
	struct sim_trace t;
	char msg[256];
	assert_int_equal(sim_trace_format_parse(NULL, COLS, &f, msg, sizeof(msg)), DRAKE_OK);
	assert_int_equal(sim_trace_parse_as(text, strlen(text), "t", &f, &t, msg, sizeof(msg)),
	                 DRAKE_OK);
	assert_int_equal(t.skipped.total, SIM_TRACE_SKIP_EXAMPLES + 3);
	assert_int_equal(t.skipped.count[SIM_SKIP_ZERO], SIM_TRACE_SKIP_EXAMPLES + 3);
	assert_int_equal(t.skipped.n_examples, SIM_TRACE_SKIP_EXAMPLES);
	assert_string_equal(t.skipped.example[SIM_TRACE_SKIP_EXAMPLES - 1],
	                    "t:6: num_gpus must be at least 1");
	sim_trace_release(&t);
}

static void a_header_over_the_column_limit_is_refused(void **state)
{
	(void)state;
	char text[2048] = "";
	for (int i = 0; i <= SIM_TRACE_MAX_COLUMNS; i++)
		snprintf(text + strlen(text), sizeof(text) - strlen(text), "c%d,", i);
	strcat(text, "start_ts,run_s,num_gpus\n1,1,1\n");
	struct sim_trace_format f;
	struct sim_trace t;
	char msg[256];
	assert_int_equal(sim_trace_format_parse(NULL, COLS, &f, msg, sizeof(msg)), DRAKE_OK);
	assert_int_equal(sim_trace_parse_as(text, strlen(text), "t", &f, &t, msg, sizeof(msg)),
	                 DRAKE_ELIMIT);
	assert_non_null(strstr(msg, "t:1: more than 64 columns"));
}

/* --trace-format and --trace-columns as sim_trace_format_parse reads them. */
struct fcase {
	const char *name;
	const char *layout, *columns;
	drake_err err;
	enum sim_trace_layout want;
	const char *msg_has;
};

static const struct fcase format_cases[] = {
    {"no flags mean auto", NULL, NULL, DRAKE_OK, SIM_LAYOUT_AUTO, NULL},
    {"itp and gang name the presets", "gang", "", DRAKE_OK, SIM_LAYOUT_GANG, NULL},
    {"pollux names its preset", "pollux", "", DRAKE_OK, SIM_LAYOUT_POLLUX, NULL},
    {"a column list makes auto columns", "auto", "submit=a,duration=b,gpus=c", DRAKE_OK,
     SIM_LAYOUT_COLUMNS, NULL},
    {"an unknown format is refused", "philly", NULL, DRAKE_EINVAL, 0,
     "unknown trace format \"philly\""},
    {"columns without a list is refused", "columns", NULL, DRAKE_EINVAL, 0, "needs a column list"},
    {"a list with a preset is refused", "itp", "submit=a,duration=b,gpus=c", DRAKE_EINVAL, 0,
     "not itp"},
    {"a missing role is refused", NULL, "submit=a,duration=b", DRAKE_EINVAL, 0,
     "gpus=COLUMN is missing"},
    {"an unknown role is refused", NULL, "submit=a,duration=b,gpus=c,user=d", DRAKE_EINVAL, 0,
     "unknown role \"user\""},
    {"an item without = is refused", NULL, "submit=a,duration=b,gpus", DRAKE_EINVAL, 0,
     "\"gpus\" is not role=column"},
    {"a role given twice is refused", NULL, "submit=a,duration=b,gpus=c,gpus=d", DRAKE_EINVAL, 0,
     "gpus given twice"},
    {"one column for two roles is refused", NULL, "submit=a,duration=a,gpus=c", DRAKE_EINVAL, 0,
     "column \"a\" named for submit and duration"},
    {"a unit on the GPU count is refused", NULL, "submit=a,duration=b,gpus=c:m", DRAKE_EINVAL, 0,
     "gpus takes no unit"},
    {"an unknown unit is refused", NULL, "submit=a:ms,duration=b,gpus=c", DRAKE_EINVAL, 0,
     "unit \"ms\" of submit is not s, m or h"},
    {"an empty column name is refused", NULL, "submit=,duration=b,gpus=c", DRAKE_EINVAL, 0,
     "submit names no column"},
    {"a column name over the id limit is refused", NULL,
     "submit=a,duration=b,gpus=cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc",
     DRAKE_ELIMIT, 0, "longer than 63 characters"},
};

static void run_format_case(void **state)
{
	const struct fcase *c = *state;
	struct sim_trace_format f;
	char msg[256] = "";
	drake_err err = sim_trace_format_parse(c->layout, c->columns, &f, msg, sizeof(msg));
	if (err != c->err)
		print_error("got %s: %s\n", drake_strerror(err), msg);
	assert_int_equal(err, c->err);
	if (err == DRAKE_OK) {
		assert_int_equal(f.layout, c->want);
	} else {
		if (!strstr(msg, c->msg_has))
			print_error("message \"%s\" lacks \"%s\"\n", msg, c->msg_has);
		assert_non_null(strstr(msg, c->msg_has));
	}
}

static void presets_are_selected_by_name_and_stay_strict(void **state)
{
	(void)state;
	const char *gang = GANG "kn-00,0,32,8,30\n";
	const char *itp_bad = ITP "a,1,1,1\nb,2,1,0\n";
	struct sim_trace_format f;
	struct sim_trace t;
	char msg[256];
	assert_int_equal(sim_trace_format_parse("gang", NULL, &f, msg, sizeof(msg)), DRAKE_OK);
	assert_int_equal(sim_trace_parse_as(gang, strlen(gang), "g", &f, &t, msg, sizeof(msg)),
	                 DRAKE_OK);
	assert_int_equal(t.layout, SIM_LAYOUT_GANG);
	assert_int_equal(t.skipped.total, 0);
	sim_trace_release(&t);
	assert_int_equal(sim_trace_format_parse("itp", NULL, &f, msg, sizeof(msg)), DRAKE_OK);
	assert_int_equal(sim_trace_parse_as(gang, strlen(gang), "g", &f, &t, msg, sizeof(msg)),
	                 DRAKE_EINVAL);
	assert_non_null(strstr(msg, "g:1: header \"job_id,submit_order"));
	assert_non_null(strstr(msg, "is not job_id,submission_time,duration,num_gpu"));
	/* a preset's bad row still fails the whole load */
	assert_int_equal(
	    sim_trace_parse_as(itp_bad, strlen(itp_bad), "i", &f, &t, msg, sizeof(msg)),
	    DRAKE_EINVAL);
	assert_non_null(strstr(msg, "i:3: num_gpu must be at least 1"));
	assert_null(t.jobs);
	/* pollux insists on its header, and names it */
	assert_int_equal(sim_trace_format_parse("pollux", NULL, &f, msg, sizeof(msg)), DRAKE_OK);
	assert_int_equal(sim_trace_parse_as(gang, strlen(gang), "g", &f, &t, msg, sizeof(msg)),
	                 DRAKE_EINVAL);
	assert_non_null(strstr(msg, "is not name,time,application,num_replicas,batch_size"));
}

static void pollux_rows_carry_application_and_batch(void **state)
{
	(void)state;
	const char *text = POLLUX "cifar10-0,107,cifar10,6,2048\nncf-2,135,ncf,1,32768\n";
	struct sim_trace t;
	char msg[256];
	assert_int_equal(sim_trace_parse(text, strlen(text), "w", &t, msg, sizeof(msg)), DRAKE_OK);
	assert_int_equal(t.kind, SIM_TRACE_POLLUX);
	assert_int_equal(t.layout, SIM_LAYOUT_POLLUX);
	assert_string_equal(t.jobs[0].id, "cifar10-0");
	assert_string_equal(t.jobs[0].app, "cifar10");
	assert_int_equal(t.jobs[0].submit, 107);
	assert_int_equal(t.jobs[0].replicas, 6);
	assert_int_equal(t.jobs[0].gpus, 6);
	assert_int_equal(t.jobs[0].batch_size, 2048);
	assert_int_equal(t.jobs[0].app_index, -1); /* not bound yet */
	assert_int_equal(t.jobs[1].line, 3);
	assert_int_equal(t.jobs[1].order, 1);
	sim_trace_release(&t);
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
	const char *dir = "traces"; /* the repository's, from its root */
	char path[256];
	snprintf(path, sizeof(path), "%s/ms_itp_cluster03.csv", dir);
	if (sim_trace_load(path, &t, msg, sizeof(msg)) != DRAKE_OK)
		fail_msg("%s (run from the repository root)", msg);
	assert_int_equal(t.n, 3011);
	sim_trace_release(&t);
	snprintf(path, sizeof(path), "%s/knavigator_gang53.csv", dir);
	assert_int_equal(sim_trace_load(path, &t, msg, sizeof(msg)), DRAKE_OK);
	assert_int_equal(t.n, 53);
	sim_trace_release(&t);
	struct sim_nodes n;
	for (int w = 1; w <= 6; w++) {
		snprintf(path, sizeof(path), "%s/pollux/workloads-1.0/workload-%d.csv", dir, w);
		if (sim_trace_load(path, &t, msg, sizeof(msg)) != DRAKE_OK)
			fail_msg("%s", msg);
		assert_int_equal(t.kind, SIM_TRACE_POLLUX);
		assert_int_equal(t.n, 160);
		sim_trace_release(&t);
	}
	snprintf(path, sizeof(path), "%s/alibaba2023_openb_nodes.csv", dir);
	assert_int_equal(sim_nodes_load(path, &n, msg, sizeof(msg)), DRAKE_OK);
	assert_int_equal(n.n, 1523);
	sim_nodes_release(&n);
}

#define NCASES(a) (sizeof(a) / sizeof((a)[0]))

int main(void)
{
	static const struct CMUnitTest fixed[] = {
	    cmocka_unit_test(named_columns_land_in_their_fields),
	    cmocka_unit_test(many_ties_keep_file_order),
	    cmocka_unit_test(units_and_line_ids),
	    cmocka_unit_test(only_the_first_examples_are_kept),
	    cmocka_unit_test(a_header_over_the_column_limit_is_refused),
	    cmocka_unit_test(presets_are_selected_by_name_and_stay_strict),
	    cmocka_unit_test(gang_rows_carry_their_shape),
	    cmocka_unit_test(pollux_rows_carry_application_and_batch),
	    cmocka_unit_test(node_lists_parse_and_refuse_garbage),
	    cmocka_unit_test(the_shipped_traces_parse),
	    cmocka_unit_test(skipping_jobs_starts_the_replay_later),
	};
	struct CMUnitTest tests[NCASES(trace_cases) + NCASES(columns_cases) + NCASES(format_cases) +
	                        NCASES(fixed)];
	size_t n = 0;
	for (size_t i = 0; i < NCASES(trace_cases); i++)
		tests[n++] = (struct CMUnitTest){trace_cases[i].name, run_trace_case, NULL, NULL,
		                                 (void *)&trace_cases[i]};
	for (size_t i = 0; i < NCASES(columns_cases); i++)
		tests[n++] = (struct CMUnitTest){columns_cases[i].name, run_columns_case, NULL,
		                                 NULL, (void *)&columns_cases[i]};
	for (size_t i = 0; i < NCASES(format_cases); i++)
		tests[n++] = (struct CMUnitTest){format_cases[i].name, run_format_case, NULL, NULL,
		                                 (void *)&format_cases[i]};
	for (size_t i = 0; i < NCASES(fixed); i++)
		tests[n++] = fixed[i];
	return _cmocka_run_group_tests("trace", tests, n, NULL, NULL);
}
