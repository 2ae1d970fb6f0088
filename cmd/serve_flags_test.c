/* serve_flags_test.c - drake serve's flag table: one name, one variable and
 * one field per flag, the options it parses to by default, and the checks
 * serve_flags_finish makes. */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cmd/serve_flags.h"
#include "gang/round.h"

/* Parses argv into o with no DRAKE_* variable set, then finishes it. */
static drake_err parse(struct serve_opts *o, int argc, char **argv, char *msg, size_t len)
{
	struct flag f[SERVE_FLAGS_N];
	serve_flags(o, f);
	for (size_t i = 0; i < SERVE_FLAGS_N; i++)
		if (f[i].env)
			unsetenv(f[i].env);
	enum flags_outcome oc;
	drake_err e = flags_parse(f, SERVE_FLAGS_N, argc, argv, &oc, msg, len);
	return e ? e : serve_flags_finish(o, msg, len);
}

#define PARSE(o, msg, ...)                                                                         \
	parse((o), (int)(sizeof((char *[]){"serve", __VA_ARGS__}) / sizeof(char *)),               \
	      (char *[]){"serve", __VA_ARGS__}, (msg), sizeof(msg))

static void test_each_flag_has_its_own_name_variable_and_field(void **state)
{
	struct serve_opts o;
	struct flag f[SERVE_FLAGS_N];
	serve_flags(&o, f);
	for (size_t i = 0; i < SERVE_FLAGS_N; i++) {
		assert_non_null(f[i].name);
		assert_true(f[i].help && *f[i].help);
		/* --gang-bind-timeout reads DRAKE_GANG_BIND_TIMEOUT */
		char env[80] = "DRAKE_";
		assert_true(strlen(f[i].name) < sizeof(env) - 7);
		for (size_t k = 0; f[i].name[k]; k++)
			env[6 + k] = f[i].name[k] == '-' ? '_' : (char)toupper(f[i].name[k]);
		assert_non_null(f[i].env);
		assert_string_equal(f[i].env, env);
		/* it writes into the options, not elsewhere */
		assert_true((char *)f[i].dest >= (char *)&o &&
		            (char *)f[i].dest < (char *)&o + sizeof(o));
		for (size_t j = 0; j < i; j++) {
			if (!strcmp(f[i].name, f[j].name) || f[i].dest == f[j].dest)
				fail_msg("--%s and --%s share a name or a field", f[j].name,
				         f[i].name);
		}
	}
}

static void test_defaults(void **state)
{
	struct serve_opts o;
	char msg[512];
	assert_int_equal(parse(&o, 1, (char *[]){"serve"}, msg, sizeof(msg)), DRAKE_OK);
	assert_string_equal(o.srv.address, "127.0.0.1");
	assert_int_equal(o.srv.port, 8443);
	assert_string_equal(o.srv.prefix, "/scheduler");
	assert_null(o.srv.cert_file);
	assert_int_equal(o.api_max_body, 64u << 20);
	assert_int_equal(o.srv.max_headers, 16u << 10);
	assert_int_equal(o.srv.limits.max_nodes, 50000);
	assert_int_equal(o.srv.limits.max_victims, 10000);
	assert_true(o.gang && o.gang_pin && o.gang_watch_claims && o.srv.http2);
	assert_false(o.reconcile || o.strict_fifo || o.migrate || o.leader_elect);
	assert_true(o.gang_backoff_min == 5 && o.gang_backoff_max == 300);
	assert_true(o.lease.lease_duration == 15 && o.lease.renew_deadline == 10 &&
	            o.lease.retry_period == 2);
	assert_string_equal(o.lease.ns, "kube-system");
	assert_int_equal(o.prioritize_window, 4096);
	/* the shared tables' defaults */
	assert_true(o.scale.opts.starve_after == 30 && o.scale.opts.idle_after == 60);
	assert_int_equal(o.mig.opts.cap, 3);
	assert_int_equal(o.mig.progress.window, 10);
	/* what serve_flags_finish works out */
	assert_int_equal(o.policy_id, DRAKE_POLICY_DRAKE);
	assert_int_equal(o.las.n_queues, 2); /* --las-threshold 57600 */
	assert_true(o.las.threshold[0] == 57600 && o.las_interval == 60);
	assert_false(o.prioritize_on); /* auto, without --reconcile */
	assert_int_equal(o.log_lvl, DRAKE_LOG_INFO);
}

static void test_worked_out_values(void **state)
{
	struct serve_opts o;
	char msg[512];
	assert_int_equal(PARSE(&o, msg, "--reconcile"), DRAKE_OK);
	assert_true(o.prioritize_on); /* auto: simple mode with the controller's caches */
	assert_int_equal(PARSE(&o, msg, "--reconcile", "--gang-resource", "drake.dev/gang"),
	                 DRAKE_OK);
	assert_false(o.prioritize_on); /* auto: gang-only mode */
	assert_int_equal(PARSE(&o, msg, "--reconcile", "--no-gang"), DRAKE_OK);
	assert_false(o.prioritize_on);
	assert_int_equal(PARSE(&o, msg, "--reconcile", "--prioritize=false"), DRAKE_OK);
	assert_false(o.prioritize_on);
	assert_int_equal(PARSE(&o, msg, "--reconcile", "--gang-resource=x", "--prioritize=true"),
	                 DRAKE_OK);
	assert_true(o.prioritize_on);
	assert_int_equal(PARSE(&o, msg, "--policy", "dragon", "--log-level=debug"), DRAKE_OK);
	assert_int_equal(o.policy_id, DRAKE_POLICY_DRAGON);
	assert_int_equal(o.log_lvl, DRAKE_LOG_DEBUG);
	assert_int_equal(PARSE(&o, msg, "--policy=tiresias", "--las-threshold", "60,3600.5"),
	                 DRAKE_OK);
	assert_int_equal(o.policy_id, DRAKE_POLICY_TIRESIAS);
	assert_int_equal(o.las.n_queues, 3);
	assert_true(o.las.threshold[0] == 60 && o.las.threshold[1] == 3600.5);
	assert_int_equal(PARSE(&o, msg, "--port", "0", "--port=65535"), DRAKE_OK);
	assert_int_equal(o.srv.port, 65535);
	/* each kind's measured cost of a resize, or --resize-cost's */
	const struct job_kind *pt = job_kind_lookup("pytorchjobs"), *tf = job_kind_lookup("tfjobs");
	assert_true(job_resize_cost_of(&o.resize_costs, pt).shrink_s == 18.1 &&
	            job_resize_cost_of(&o.resize_costs, tf).grow_s == 2.3);
	assert_int_equal(PARSE(&o, msg, "--resize-cost", "pytorchjobs=20s/5s"), DRAKE_OK);
	assert_true(job_resize_cost_of(&o.resize_costs, pt).shrink_s == 20 &&
	            job_resize_cost_of(&o.resize_costs, pt).grow_s == 5 &&
	            job_resize_cost_of(&o.resize_costs, tf).shrink_s == 1.9);
}

/* The message a user sees after "drake serve: ", for the first bad value. */
static void test_refusals(void **state)
{
	static const struct {
		const char *args[3];
		const char *msg;
	} cases[] = {
	    {{"--policy", "fifo"}, "--policy must be drake, dragon or tiresias, not \"fifo\""},
	    {{"--las-threshold", "3600,60"},
	     "--las-threshold must be 1 to 7 ascending GPU-second values above 0, "
	     "comma-separated, not \"3600,60\""},
	    {{"--las-threshold", "1h"},
	     "--las-threshold must be 1 to 7 ascending GPU-second values above 0, "
	     "comma-separated, not \"1h\""},
	    {{"--las-threshold", "0"},
	     "--las-threshold must be 1 to 7 ascending GPU-second values above 0, "
	     "comma-separated, not \"0\""},
	    {{"--las-threshold="}, "--las-threshold must name at least one GPU-second value"},
	    {{"--las-interval", "0s"}, "--las-interval must be 1s..24h"},
	    {{"--prioritize", "maybe"}, "--prioritize must be auto, true or false"},
	    {{"--prioritize=true"},
	     "--prioritize=true needs --reconcile and --gang (the controller's node and pod "
	     "caches)"},
	    {{"--prioritize=true", "--reconcile", "--no-gang"},
	     "--prioritize=true needs --reconcile and --gang (the controller's node and pod "
	     "caches)"},
	    {{"--prioritize-window", "0"}, "--prioritize-window must be 1..1048576"},
	    {{"--prioritize-window", "1048577"}, "--prioritize-window must be 1..1048576"},
	    {{"--log-level", "loud"}, "--log-level must be debug, info, warn or error"},
	    {{"--port", "65536"}, "--port must be 0..65535"},
	    {{"--resize-cost", "mpijobs=2s"},
	     "--resize-cost: \"mpijobs\" is not a job kind drake knows"},
	    {{"--port", "-1"}, "--port must be 0..65535"},
	    {{"--scheduler-name", "Not_A_Name"}, "--scheduler-name must be a DNS-1123 subdomain"},
	    {{"--gang-backoff-min", "0"},
	     "--gang-backoff-min must be above 0 and at most --gang-backoff-max, which is at "
	     "most 24h"},
	    {{"--gang-backoff-min", "10m", "--gang-backoff-max=5m"},
	     "--gang-backoff-min must be above 0 and at most --gang-backoff-max, which is at "
	     "most 24h"},
	    {{"--gang-backoff-max", "25h"},
	     "--gang-backoff-min must be above 0 and at most --gang-backoff-max, which is at "
	     "most 24h"},
	    {{"--node-metrics-interval", "25h"},
	     "--node-metrics-interval must be between 0 and 24h"},
	    {{"--victim-order", "sideways"},
	     "--victim-order must be newest, oldest, least-progress, most-service or most-left"},
	    /* the first check in serve's order wins */
	    {{"--policy", "x", "--port=70000"},
	     "--policy must be drake, dragon or tiresias, not \"x\""},
	    {{"--scheduler-name=A", "--port=70000"}, "--port must be 0..65535"},
	    {{"--victim-order=x", "--policy=x"},
	     "--victim-order must be newest, oldest, least-progress, most-service or most-left"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *argv[4] = {"serve"};
		int argc = 1;
		for (size_t k = 0; k < 3 && cases[i].args[k]; k++)
			argv[argc++] = (char *)cases[i].args[k];
		struct serve_opts o;
		char msg[512] = "";
		drake_err e = parse(&o, argc, argv, msg, sizeof(msg));
		if (e != DRAKE_EINVAL || strcmp(msg, cases[i].msg) != 0)
			fail_msg("case %zu (%s): got %d \"%s\"", i, cases[i].args[0], (int)e, msg);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_each_flag_has_its_own_name_variable_and_field),
	    cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_worked_out_values),
	    cmocka_unit_test(test_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
