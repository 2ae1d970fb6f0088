/*
 * status_test.c - cmocka tests for the controller's decisions: job_judge()
 * (success rules, restart policies, exit codes, backoff, deadline), the pod
 * and service builders, reading pods back, the ungate patch, and the status
 * patch (conditions order, no-op when unchanged, validation failure).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "kube/pod.h"
#include "kube/strpool.h"
#include "kind/job_codec.h"
#include "kind/pod_codec.h"
#include "kind/status.h"
#include "kind/job.h"
#include "tfjob/tfjob.h"

static struct job job(int ps, int workers, int max, enum job_restart rp)
{
	struct job j = {.kind = &tfjob_kind, .ns = "ml", .name = "job1", .uid = "u-1"};
	j.rs[JOB_PS] = (struct job_replica_spec){ps > 0, ps, rp, 2222, NULL};
	j.rs[JOB_WORKER] = (struct job_replica_spec){true, workers, rp, 2222, NULL};
	j.min_instances = 1;
	j.max_instances = max;
	j.ttl_s = j.deadline_s = -1;
	j.backoff_limit = -1;
	return j;
}

static struct job_pod_obs pod(enum job_rtype t, int i, enum job_phase ph, int code)
{
	return (struct job_pod_obs){.type = t, .index = i, .phase = ph, .exit_code = code};
}

static void test_worker0_success_ends_the_job_even_after_other_failures(void **state)
{
	struct job j = job(1, 2, 2, JOB_RESTART_NEVER);
	struct job_pod_obs p[] = {pod(JOB_PS, 0, JOB_POD_RUNNING, -1),
	                          pod(JOB_WORKER, 0, JOB_POD_SUCCEEDED, 0),
	                          pod(JOB_WORKER, 1, JOB_POD_FAILED, 1)};
	struct job_verdict v;
	job_judge(&j, p, 3, 0, 10, &v);
	assert_int_equal(v.state, JOB_STATE_SUCCEEDED);
	assert_string_equal(v.reason, "TFJobSucceeded");
	assert_string_equal(v.message, "TFJob ml/job1 successfully completed.");
	assert_int_equal(v.rs[JOB_WORKER].succeeded, 1);
	assert_int_equal(v.rs[JOB_WORKER].failed, 1);
	/* a finished job has no active replica: the running PS counts as done */
	assert_int_equal(v.rs[JOB_PS].active, 0);
	assert_int_equal(v.rs[JOB_PS].succeeded, 1);
	assert_false(p[2].recreate);
}

static void test_dragons_readme_job_shows_no_running_workers_once_it_succeeded(void **state)
{
	/* 1 PS and 4 workers; worker 0 finished first, the others still run */
	struct job j = job(1, 4, 4, JOB_RESTART_ON_FAILURE);
	struct job_pod_obs p[] = {
	    pod(JOB_PS, 0, JOB_POD_RUNNING, -1), pod(JOB_WORKER, 0, JOB_POD_SUCCEEDED, 0),
	    pod(JOB_WORKER, 1, JOB_POD_RUNNING, -1), pod(JOB_WORKER, 2, JOB_POD_RUNNING, -1),
	    pod(JOB_WORKER, 3, JOB_POD_RUNNING, -1)};
	struct job_verdict v;
	job_judge(&j, p, 5, 0, 10, &v);
	assert_int_equal(v.state, JOB_STATE_SUCCEEDED);
	assert_int_equal(v.rs[JOB_WORKER].active, 0); /* kubectl's Workers column */
	assert_int_equal(v.rs[JOB_WORKER].succeeded, 4);
	/* while it runs, running workers are active */
	p[1].phase = JOB_POD_RUNNING;
	job_judge(&j, p, 5, 0, 10, &v);
	assert_int_equal(v.state, JOB_STATE_RUNNING);
	assert_int_equal(v.rs[JOB_WORKER].active, 4);
}

static void test_all_workers_policy_and_chief_rule(void **state)
{
	struct job j = job(0, 2, 2, JOB_RESTART_NEVER);
	j.success = JOB_SUCCESS_ALL_WORKERS;
	struct job_pod_obs p[] = {pod(JOB_WORKER, 0, JOB_POD_SUCCEEDED, 0),
	                          pod(JOB_WORKER, 1, JOB_POD_RUNNING, -1)};
	struct job_verdict v;
	job_judge(&j, p, 2, 0, 10, &v);
	assert_int_equal(v.state, JOB_STATE_RUNNING);
	p[1].phase = JOB_POD_SUCCEEDED;
	job_judge(&j, p, 2, 0, 10, &v);
	assert_int_equal(v.state, JOB_STATE_SUCCEEDED);
	/* with a chief, only the chief's success counts */
	j.success = JOB_SUCCESS_WORKER0;
	j.rs[JOB_CHIEF] = (struct job_replica_spec){true, 1, JOB_RESTART_NEVER, 2222, NULL};
	job_judge(&j, p, 2, 0, 10, &v);
	assert_int_equal(v.state, JOB_STATE_CREATED);
	assert_string_equal(v.reason, "TFJobCreated");
}

static void test_restart_policies(void **state)
{
	static const struct {
		enum job_restart rp;
		int code;
		enum job_state want;
		bool recreate;
	} cases[] = {
	    {JOB_RESTART_NEVER, 1, JOB_STATE_FAILED, false},
	    {JOB_RESTART_ON_FAILURE, 1, JOB_STATE_RESTARTING, true},
	    {JOB_RESTART_ALWAYS, 0, JOB_STATE_RESTARTING, true},
	    {JOB_RESTART_EXIT_CODE, 137, JOB_STATE_RESTARTING, true}, /* 128-255: retryable */
	    {JOB_RESTART_EXIT_CODE, 2, JOB_STATE_FAILED, false},      /* 1-127: permanent */
	    {JOB_RESTART_EXIT_CODE, -1, JOB_STATE_FAILED, false},     /* unknown: permanent */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct job j = job(1, 2, 2, cases[i].rp);
		struct job_pod_obs p[] = {pod(JOB_PS, 0, JOB_POD_RUNNING, -1),
		                          pod(JOB_WORKER, 0, JOB_POD_RUNNING, -1),
		                          pod(JOB_WORKER, 1, JOB_POD_FAILED, cases[i].code)};
		struct job_verdict v;
		job_judge(&j, p, 3, 0, 10, &v);
		if (v.state != cases[i].want || p[2].recreate != cases[i].recreate)
			fail_msg("case %zu: state %s recreate %d", i, job_state_name(v.state),
			         p[2].recreate);
	}
}

static void test_failed_pod_already_deleting_is_not_deleted_again(void **state)
{
	struct job j = job(1, 1, 1, JOB_RESTART_ON_FAILURE);
	struct job_pod_obs p[] = {pod(JOB_WORKER, 0, JOB_POD_FAILED, 1)};
	p[0].deleting = true;
	struct job_verdict v;
	job_judge(&j, p, 1, 0, 10, &v);
	assert_false(p[0].recreate);
	assert_int_equal(v.state, JOB_STATE_CREATED);
}

static void test_backoff_limit_and_deadline_fail_the_job(void **state)
{
	struct job j = job(1, 2, 2, JOB_RESTART_ON_FAILURE);
	j.backoff_limit = 2;
	struct job_pod_obs p[] = {pod(JOB_WORKER, 0, JOB_POD_RUNNING, -1),
	                          pod(JOB_WORKER, 1, JOB_POD_RUNNING, -1)};
	p[0].restarts = 1;
	struct job_verdict v;
	job_judge(&j, p, 2, 1, 10, &v); /* 1 recreation + 1 container restart = 2: at the limit */
	assert_int_equal(v.state, JOB_STATE_RUNNING);
	p[1].phase = JOB_POD_FAILED; /* one more would be the third */
	job_judge(&j, p, 2, 1, 10, &v);
	assert_int_equal(v.state, JOB_STATE_FAILED);
	assert_string_equal(v.reason, "BackoffLimitExceeded");
	assert_false(p[1].recreate); /* a failed job recreates nothing */
	j.backoff_limit = -1;
	j.deadline_s = 60;
	p[1].phase = JOB_POD_RUNNING;
	job_judge(&j, p, 2, 0, 60, &v);
	assert_int_equal(v.state, JOB_STATE_RUNNING);
	job_judge(&j, p, 2, 0, 61, &v);
	assert_int_equal(v.state, JOB_STATE_FAILED);
	assert_string_equal(v.reason, "DeadlineExceeded");
}

/* ---- pod codec ---- */

static json_t *load(const char *s)
{
	json_error_t e;
	json_t *o = json_loads(s, 0, &e);
	if (!o)
		fail_msg("bad JSON: %s", e.text);
	return o;
}

/* The value of env var name in pod p's tensorflow container, or NULL. */
static const char *tf_env(json_t *p, const char *name)
{
	json_t *env = json_object_get(
	    json_array_get(json_object_get(json_object_get(p, "spec"), "containers"), 0), "env");
	for (size_t i = 0; i < json_array_size(env); i++)
		if (!strcmp(json_string_value(json_object_get(json_array_get(env, i), "name")),
		            name))
			return json_string_value(json_object_get(json_array_get(env, i), "value"));
	return NULL;
}

static void test_pods_report_with_a_projected_token_for_drakes_audience(void **state)
{
	/* the user's template has a volume of drake's name: replaced */
	json_t *tmpl = load("{\"spec\":{\"volumes\":[{\"name\":\"data\",\"emptyDir\":{}},{"
	                    "\"name\":\"" JOB_PROGRESS_TOKEN_VOLUME "\",\"emptyDir\":{}}],"
	                    "\"containers\":[{\"name\":\"tensorflow\",\"volumeMounts\":[{"
	                    "\"name\":\"data\",\"mountPath\":\"/data\"}]},{\"name\":\"side\"}]}}");
	struct job j = job(1, 2, 4, JOB_RESTART_EXIT_CODE);
	j.rs[JOB_PS].tmpl = j.rs[JOB_WORKER].tmpl = tmpl;
	char msg[128];
	struct job_pod_opts po = {.progress_url = "https://drake.example:8443/v1/progress",
	                          .progress_audience = "drake"};
	char *s = job_pod_json(&j, JOB_WORKER, 1, &po, msg, sizeof(msg));
	assert_non_null(s);
	json_t *p = load(s);
	free(s);
	json_t *spec = json_object_get(p, "spec");
	json_t *vols = json_object_get(spec, "volumes");
	assert_int_equal(json_array_size(vols), 2);
	json_t *v = json_array_get(vols, 1);
	assert_string_equal(json_string_value(json_object_get(v, "name")),
	                    JOB_PROGRESS_TOKEN_VOLUME);
	json_t *sat = json_object_get(
	    json_array_get(json_object_get(json_object_get(v, "projected"), "sources"), 0),
	    "serviceAccountToken");
	assert_string_equal(json_string_value(json_object_get(sat, "audience")), "drake");
	assert_string_equal(json_string_value(json_object_get(sat, "path")), "token");
	assert_int_equal(json_integer_value(json_object_get(sat, "expirationSeconds")), 3600);
	json_t *tf = json_array_get(json_object_get(spec, "containers"), 0);
	json_t *mounts = json_object_get(tf, "volumeMounts");
	assert_int_equal(json_array_size(mounts), 2); /* the user's, then drake's */
	assert_string_equal(
	    json_string_value(json_object_get(json_array_get(mounts, 1), "mountPath")),
	    JOB_PROGRESS_TOKEN_DIR);
	assert_true(json_is_true(json_object_get(json_array_get(mounts, 1), "readOnly")));
	assert_string_equal(tf_env(p, "DRAKE_PROGRESS_TOKEN_FILE"),
	                    JOB_PROGRESS_TOKEN_DIR "/token");
	/* only the tensorflow container reports */
	assert_null(json_object_get(json_array_get(json_object_get(spec, "containers"), 1),
	                            "volumeMounts"));
	json_decref(p);
	/* no audience: the pod's own service-account token, nothing added */
	po.progress_audience = NULL;
	s = job_pod_json(&j, JOB_WORKER, 1, &po, msg, sizeof(msg));
	p = load(s);
	free(s);
	assert_int_equal(json_array_size(json_object_get(json_object_get(p, "spec"), "volumes")),
	                 2);
	assert_null(tf_env(p, "DRAKE_PROGRESS_TOKEN_FILE"));
	json_decref(p);
	json_decref(tmpl);
}

static void test_pods_carry_the_ca_that_verifies_drake_beside_its_url(void **state)
{
	static const char pem[] = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
	json_t *tmpl = load("{\"spec\":{\"containers\":[{\"name\":\"tensorflow\"}]}}");
	struct job j = job(1, 2, 4, JOB_RESTART_EXIT_CODE);
	j.rs[JOB_PS].tmpl = j.rs[JOB_WORKER].tmpl = tmpl;
	char msg[128];
	static const struct {
		const char *url, *pem;
		bool want_url, want_pem;
	} cases[] = {
	    {"https://drake.example:8443/v1/progress", pem, true, true},
	    {"https://drake.example:8443/v1/progress", NULL, true, false},
	    {NULL, pem, false, false}, /* no URL: nothing to verify */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct job_pod_opts po = {.progress_url = cases[i].url,
		                          .progress_ca_pem = cases[i].pem};
		char *s = job_pod_json(&j, JOB_WORKER, 0, &po, msg, sizeof(msg));
		assert_non_null(s);
		json_t *p = load(s);
		free(s);
		assert_int_equal(tf_env(p, "DRAKE_PROGRESS_URL") != NULL, cases[i].want_url);
		const char *got = tf_env(p, "DRAKE_PROGRESS_CA_PEM");
		assert_int_equal(got != NULL, cases[i].want_pem);
		if (got)
			assert_string_equal(got, pem);
		json_decref(p);
	}
	json_decref(tmpl);
}

static void test_pod_has_labels_owner_gate_port_and_tf_config(void **state)
{
	json_t *tmpl =
	    load("{\"metadata\":{\"labels\":{\"team\":\"a\"}},\"spec\":{\"restartPolicy\":"
	         "\"Always\",\"containers\":[{\"name\":\"tensorflow\",\"env\":[{\"name\":"
	         "\"TF_CONFIG\",\"value\":\"user\"}]},{\"name\":\"side\"}]}}");
	struct job j = job(1, 2, 4, JOB_RESTART_EXIT_CODE);
	j.rs[JOB_PS].tmpl = j.rs[JOB_WORKER].tmpl = tmpl;
	char msg[128];
	struct job_pod_opts po = {.gang_resource = "drake.dev/gang",
	                          .progress_url = "https://drake.example:8443/v1/progress"};
	char *s = job_pod_json(&j, JOB_WORKER, 0, &po, msg, sizeof(msg));
	assert_non_null(s);
	json_t *p = load(s);
	free(s);
	json_t *lab = json_object_get(json_object_get(p, "metadata"), "labels");
	assert_string_equal(json_string_value(json_object_get(lab, JOB_LABEL_JOB)), "job1");
	assert_string_equal(json_string_value(json_object_get(lab, JOB_LABEL_TYPE)), "worker");
	assert_string_equal(json_string_value(json_object_get(lab, JOB_LABEL_INDEX)), "0");
	assert_string_equal(json_string_value(json_object_get(lab, JOB_LABEL_ROLE)), "master");
	assert_string_equal(json_string_value(json_object_get(lab, "team")), "a");
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(p, "metadata"), "name")),
	    "job1-worker-0");
	json_t *owner =
	    json_array_get(json_object_get(json_object_get(p, "metadata"), "ownerReferences"), 0);
	assert_string_equal(json_string_value(json_object_get(owner, "uid")), "u-1");
	assert_true(json_is_true(json_object_get(owner, "controller")));
	json_t *spec = json_object_get(p, "spec");
	assert_string_equal(json_string_value(json_object_get(spec, "restartPolicy")), "Never");
	assert_string_equal(
	    json_string_value(json_object_get(
	        json_array_get(json_object_get(spec, "schedulingGates"), 0), "name")),
	    JOB_GANG_GATE);
	json_t *tf = json_array_get(json_object_get(spec, "containers"), 0);
	json_t *port = json_array_get(json_object_get(tf, "ports"), 0);
	assert_int_equal(json_integer_value(json_object_get(port, "containerPort")), 2222);
	json_t *res = json_object_get(tf, "resources");
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(res, "requests"), "drake.dev/gang")),
	    "1");
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(res, "limits"), "drake.dev/gang")),
	    "1");
	json_t *env = json_object_get(tf, "env");
	/* DRAKE_PROGRESS_URL, then TF_CONFIG, the user's replaced */
	assert_int_equal(json_array_size(env), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(env, 0), "name")),
	                    "DRAKE_PROGRESS_URL");
	assert_string_equal(json_string_value(json_object_get(json_array_get(env, 0), "value")),
	                    "https://drake.example:8443/v1/progress");
	assert_string_equal(json_string_value(json_object_get(json_array_get(env, 1), "name")),
	                    "TF_CONFIG");
	assert_non_null(strstr(json_string_value(json_object_get(json_array_get(env, 1), "value")),
	                       "job1-worker-3.ml.svc:2222"));
	assert_null(json_object_get(json_array_get(json_object_get(spec, "containers"), 1), "env"));
	/* the template is not modified */
	assert_int_equal(
	    json_array_size(json_object_get(json_object_get(tmpl, "spec"), "containers")), 2);
	assert_null(json_object_get(json_object_get(tmpl, "spec"), "schedulingGates"));

	struct job_pod_obs obs;
	json_object_set_new(
	    p, "status",
	    load("{\"phase\":\"Failed\",\"containerStatuses\":[{\"name\":\"tensorflow\","
	         "\"restartCount\":2,\"state\":{\"terminated\":{\"exitCode\":137}}}]}"));
	/* the pod as the pod cache holds it (kube/pod.h) */
	struct kube_strpool pool;
	kube_strpool_init(&pool);
	struct kube_pod *rec;
	assert_int_equal(kube_pod_decode(p, &pool, &rec, NULL, 0), DRAKE_OK);
	assert_true(job_pod_observe(rec, TF_CONTAINER, &obs));
	assert_int_equal(obs.type, JOB_WORKER);
	assert_int_equal(obs.phase, JOB_POD_FAILED);
	assert_int_equal(obs.exit_code, 137);
	assert_int_equal(obs.restarts, 2);
	assert_true(obs.gated);
	char *patch = job_pod_ungate_patch(rec);
	assert_string_equal(patch, "[{\"op\":\"test\",\"path\":\"/spec/schedulingGates/0/name\","
	                           "\"value\":\"" JOB_GANG_GATE "\"},{\"op\":\"remove\",\"path\":"
	                           "\"/spec/schedulingGates/0\"}]");
	free(patch);
	kube_pod_free(rec, &pool);
	json_object_set_new(spec, "schedulingGates", json_array());
	assert_int_equal(kube_pod_decode(p, &pool, &rec, NULL, 0), DRAKE_OK);
	assert_null(job_pod_ungate_patch(rec));
	kube_pod_free(rec, &pool);
	assert_int_equal(kube_strpool_count(&pool), 0);
	kube_strpool_release(&pool);
	json_decref(p);
	json_decref(tmpl);
}

/* --scheduler-name fills in a scheduler only where the template names none. */
static void test_pod_gets_the_scheduler_name_unless_its_template_names_one(void **state)
{
	const struct {
		const char *name, *tmpl_spec, *flag, *want; /* want NULL: no schedulerName */
	} cases[] = {
	    {"a template without one gets the flag's", "{}", "drake-scheduler", "drake-scheduler"},
	    {"an empty one counts as none", "{\"schedulerName\":\"\"}", "drake-scheduler",
	     "drake-scheduler"},
	    {"a null one counts as none", "{\"schedulerName\":null}", "drake-scheduler",
	     "drake-scheduler"},
	    {"the template's own name is kept", "{\"schedulerName\":\"volcano\"}",
	     "drake-scheduler", "volcano"},
	    {"default-scheduler named in the template is kept",
	     "{\"schedulerName\":\"default-scheduler\"}", "drake-scheduler", "default-scheduler"},
	    {"no flag leaves a template without one alone", "{}", NULL, NULL},
	    {"an empty flag leaves a template without one alone", "{}", "", NULL},
	    {"no flag keeps the template's", "{\"schedulerName\":\"volcano\"}", NULL, "volcano"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *tmpl = json_pack("{s:o}", "spec", load(cases[i].tmpl_spec));
		json_t *before = json_deep_copy(tmpl);
		struct job j = job(1, 1, 1, JOB_RESTART_NEVER);
		j.rs[JOB_PS].tmpl = j.rs[JOB_WORKER].tmpl = tmpl;
		char msg[128];
		struct job_pod_opts po = {.scheduler_name = cases[i].flag};
		char *s = job_pod_json(&j, JOB_PS, 0, &po, msg, sizeof(msg));
		assert_non_null(s);
		json_t *p = load(s);
		free(s);
		const char *got =
		    json_string_value(json_object_get(json_object_get(p, "spec"), "schedulerName"));
		if (cases[i].want ? !got || strcmp(got, cases[i].want) : got != NULL)
			fail_msg("%s: schedulerName %s, want %s", cases[i].name,
			         got ? got : "(none)", cases[i].want ? cases[i].want : "(none)");
		assert_true(json_equal(tmpl, before)); /* the cached template is not modified */
		json_decref(p);
		json_decref(before);
		json_decref(tmpl);
	}
}

static void test_service_is_headless_and_selects_its_replica(void **state)
{
	struct job j = job(1, 2, 2, JOB_RESTART_NEVER);
	char *s = job_service_json(&j, JOB_PS, 0);
	json_t *o = load(s);
	free(s);
	json_t *spec = json_object_get(o, "spec");
	assert_string_equal(json_string_value(json_object_get(spec, "clusterIP")), "None");
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(spec, "selector"), JOB_LABEL_TYPE)),
	    "ps");
	assert_int_equal(json_integer_value(json_object_get(
	                     json_array_get(json_object_get(spec, "ports"), 0), "port")),
	                 2222);
	enum job_rtype t;
	int i;
	assert_true(job_replica_of(o, &t, &i));
	assert_int_equal(t, JOB_PS);
	json_decref(o);
	json_t *bad = load("{\"metadata\":{\"labels\":{\"" JOB_LABEL_TYPE
	                   "\":\"worker\",\"" JOB_LABEL_INDEX "\":\"-1\"}}}");
	assert_false(job_replica_of(bad, &t, &i));
	json_decref(bad);
}

static void test_status_patch_orders_conditions_and_is_quiet_when_unchanged(void **state)
{
	struct job j = job(1, 1, 1, JOB_RESTART_NEVER);
	json_t *obj = load("{\"metadata\":{\"name\":\"job1\"}}");
	struct job_verdict v = {
	    .state = JOB_STATE_RUNNING, .reason = "TFJobRunning", .message = "m"};
	v.rs[JOB_WORKER].active = 1;
	char *p = job_status_patch(obj, &j, &v, 1000);
	json_t *patch = load(p);
	free(p);
	json_t *st = json_object_get(patch, "status");
	json_t *conds = json_object_get(st, "conditions");
	assert_int_equal(json_array_size(conds), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(conds, 0), "type")),
	                    "Created");
	assert_string_equal(json_string_value(json_object_get(json_array_get(conds, 1), "type")),
	                    "Running");
	assert_string_equal(json_string_value(json_object_get(st, "startTime")),
	                    "1970-01-01T00:16:40Z");
	assert_null(json_object_get(st, "completionTime"));
	/* the API server now holds that status: the same verdict writes nothing */
	json_object_set(obj, "status", st);
	assert_null(job_status_patch(obj, &j, &v, 2000));
	assert_string_equal(job_status_current(obj), "Running");
	/* success: Running turns False, Succeeded is last, completionTime set */
	v.state = JOB_STATE_SUCCEEDED;
	snprintf(v.reason, sizeof(v.reason), "TFJobSucceeded");
	p = job_status_patch(obj, &j, &v, 3000);
	json_t *done = load(p);
	free(p);
	json_t *dst = json_object_get(done, "status");
	conds = json_object_get(dst, "conditions");
	assert_int_equal(json_array_size(conds), 3);
	assert_string_equal(json_string_value(json_object_get(json_array_get(conds, 1), "status")),
	                    "False");
	assert_string_equal(json_string_value(json_object_get(json_array_get(conds, 2), "type")),
	                    "Succeeded");
	assert_non_null(json_object_get(dst, "completionTime"));
	json_object_set(obj, "status", dst);
	bool final;
	long since_start, since_done;
	job_status_read(obj, 3010, &final, &since_start, &since_done);
	assert_true(final);
	assert_int_equal(since_start, 2010);
	assert_int_equal(since_done, 10);
	json_decref(done);
	json_decref(patch);
	json_decref(obj);
}

static void test_invalid_patch_is_written_once(void **state)
{
	json_t *obj = load("{\"metadata\":{\"name\":\"x\"}}");
	char *p = job_status_invalid_patch(obj, &tfjob_kind, "spec.tfReplicaSpecs is missing", 5);
	assert_non_null(strstr(p, "\"reason\":\"TFJobFailedValidation\""));
	json_t *patch = load(p);
	free(p);
	json_object_set(obj, "status", json_object_get(patch, "status"));
	assert_null(
	    job_status_invalid_patch(obj, &tfjob_kind, "spec.tfReplicaSpecs is missing", 6));
	p = job_status_invalid_patch(obj, &tfjob_kind, "another problem", 7);
	assert_non_null(p);
	free(p);
	assert_int_equal(job_restart_count(obj), 0);
	p = job_restarts_patch(3);
	assert_string_equal(p, "{\"metadata\":{\"annotations\":{\"" JOB_ANNOTATION_RESTARTS
	                       "\":\"3\"}}}");
	free(p);
	json_decref(patch);
	json_decref(obj);
}

static void test_suspend_and_resume_conditions(void **state)
{
	struct job j = job(1, 1, 1, JOB_RESTART_NEVER);
	json_t *obj = load("{\"metadata\":{\"name\":\"job1\"},\"status\":{\"startTime\":"
	                   "\"1970-01-01T00:00:10Z\",\"conditions\":[{\"type\":\"Created\","
	                   "\"status\":\"True\"},{\"type\":\"Running\",\"status\":\"True\","
	                   "\"reason\":\"TFJobRunning\"}]}}");
	struct job_verdict v = {
	    .state = JOB_STATE_SUSPENDED, .reason = "TFJobSuspended", .message = "s"};
	char *p = job_status_patch(obj, &j, &v, 100);
	json_t *patch = load(p);
	free(p);
	json_t *st = json_object_get(patch, "status");
	json_t *conds = json_object_get(st, "conditions");
	assert_string_equal(json_string_value(json_object_get(json_array_get(conds, 1), "status")),
	                    "False"); /* Running */
	assert_string_equal(json_string_value(json_object_get(json_array_get(conds, 2), "type")),
	                    "Suspended");
	assert_false(job_state_final(JOB_STATE_SUSPENDED));
	json_object_set(obj, "status", st);
	assert_string_equal(job_status_current(obj), "Suspended");
	/* resumed: pods not yet running (Created), Suspended turns False, clock restarts */
	v = (struct job_verdict){.state = JOB_STATE_CREATED, .reason = "TFJobCreated"};
	p = job_status_patch(obj, &j, &v, 200);
	json_t *res = load(p);
	free(p);
	json_t *rst = json_object_get(res, "status");
	json_t *susp = json_array_get(json_object_get(rst, "conditions"), 2);
	assert_string_equal(json_string_value(json_object_get(susp, "status")), "False");
	assert_string_equal(json_string_value(json_object_get(susp, "reason")), "TFJobResumed");
	assert_string_equal(json_string_value(json_object_get(rst, "startTime")),
	                    "1970-01-01T00:03:20Z");
	json_decref(res);
	json_decref(patch);
	json_decref(obj);
}

static void test_a_preempted_job_shows_preempted_until_it_runs_again(void **state)
{
	struct job j = job(1, 1, 1, JOB_RESTART_NEVER);
	char *note = job_preempted_value(500, 7200.5, "preempted by 2D-LAS: queue 1");
	assert_true(job_preempted_decode(note, &j));
	free(note);
	assert_true(j.preempted_at == 500 && j.preempted_service == 7200.5);
	json_t *obj = load("{\"metadata\":{\"name\":\"job1\"},\"status\":{\"startTime\":"
	                   "\"1970-01-01T00:00:10Z\",\"conditions\":[{\"type\":\"Created\","
	                   "\"status\":\"True\"},{\"type\":\"Running\",\"status\":\"True\","
	                   "\"reason\":\"TFJobRunning\"}]}}");
	struct job_pod_obs p[] = {pod(JOB_PS, 0, JOB_POD_PENDING, -1),
	                          pod(JOB_WORKER, 0, JOB_POD_PENDING, -1)};
	struct job_verdict v;
	job_judge(&j, p, 2, 0, 10, &v);
	assert_int_equal(v.state, JOB_STATE_CREATED);
	assert_true(v.preempted);
	assert_string_equal(v.preempted_msg,
	                    "TFJob ml/job1 waits to run again: preempted by 2D-LAS: queue 1");
	char *s = job_status_patch(obj, &j, &v, 600);
	json_t *patch = load(s);
	free(s);
	json_t *st = json_object_get(patch, "status");
	json_t *conds = json_object_get(st, "conditions");
	assert_string_equal(json_string_value(json_object_get(json_array_get(conds, 1), "status")),
	                    "False"); /* Running */
	assert_string_equal(json_string_value(json_object_get(json_array_get(conds, 2), "type")),
	                    "Preempted");
	json_object_set(obj, "status", st);
	assert_string_equal(job_status_current(obj), "Preempted");
	/* readmitted, its note cleared: Running again, Preempted gone */
	assert_false(job_preempted_decode(NULL, &j));
	p[1].phase = JOB_POD_RUNNING;
	job_judge(&j, p, 2, 0, 10, &v);
	s = job_status_patch(obj, &j, &v, 700);
	json_t *back = load(s);
	free(s);
	conds = json_object_get(json_object_get(back, "status"), "conditions");
	assert_int_equal(json_array_size(conds), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(conds, 1), "type")),
	                    "Running");
	assert_string_equal(json_string_value(json_object_get(json_array_get(conds, 1), "status")),
	                    "True");
	json_decref(back);
	json_decref(patch);
	json_decref(obj);
}

static void test_pods_get_the_jobs_priority_class_unless_their_template_names_one(void **state)
{
	const struct {
		const char *tmpl_spec, *job_class, *want; /* want NULL: none */
	} cases[] = {
	    {"{}", "high", "high"},
	    {"{\"priorityClassName\":\"\"}", "high", "high"},
	    {"{\"priorityClassName\":\"low\"}", "high", "low"},
	    {"{}", "", NULL},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *tmpl = json_pack("{s:o}", "spec", load(cases[i].tmpl_spec));
		struct job j = job(1, 1, 1, JOB_RESTART_NEVER);
		snprintf(j.priority_class, sizeof(j.priority_class), "%s", cases[i].job_class);
		j.rs[JOB_PS].tmpl = j.rs[JOB_WORKER].tmpl = tmpl;
		char msg[128];
		struct job_pod_opts po = {0};
		char *s = job_pod_json(&j, JOB_WORKER, 0, &po, msg, sizeof(msg));
		json_t *p = load(s);
		free(s);
		const char *got = json_string_value(
		    json_object_get(json_object_get(p, "spec"), "priorityClassName"));
		if (cases[i].want ? !got || strcmp(got, cases[i].want) : got && *got)
			fail_msg("case %zu: priorityClassName %s, want %s", i, got ? got : "(none)",
			         cases[i].want ? cases[i].want : "(none)");
		json_decref(p);
		json_decref(tmpl);
	}
}

static void test_a_refused_job_says_so_in_its_last_condition_until_it_is_placed(void **state)
{
	struct job j = job(1, 2, 2, JOB_RESTART_NEVER);
	j.refusal = (struct job_refusal){.tries = 2, .at_s = 10, .until_s = 20};
	snprintf(j.refusal.pod, sizeof(j.refusal.pod), "job1-worker-0");
	snprintf(j.refusal.why, sizeof(j.refusal.why),
	         "0/7 nodes are available: persistentvolumeclaim \"data\" not found.");
	struct job_pod_obs pods[] = {pod(JOB_PS, 0, JOB_POD_PENDING, -1),
	                             pod(JOB_WORKER, 0, JOB_POD_PENDING, -1)};
	struct job_verdict v;
	job_judge(&j, pods, 2, 0, -1, &v);
	assert_int_equal(v.state, JOB_STATE_CREATED);
	assert_true(v.unschedulable);
	json_t *obj = load("{\"metadata\":{\"name\":\"job1\"}}");
	char *p = job_status_patch(obj, &j, &v, 100);
	json_t *patch = load(p);
	free(p);
	json_t *st = json_object_get(patch, "status");
	json_t *conds = json_object_get(st, "conditions");
	assert_int_equal(json_array_size(conds), 2);
	json_t *last = json_array_get(conds, 1);
	assert_string_equal(json_string_value(json_object_get(last, "type")), "Unschedulable");
	assert_string_equal(json_string_value(json_object_get(last, "status")), "True");
	assert_string_equal(json_string_value(json_object_get(last, "reason")),
	                    "GangUnschedulable");
	assert_non_null(strstr(json_string_value(json_object_get(last, "message")),
	                       "kube-scheduler cannot place job1-worker-0: 0/7 nodes are "
	                       "available: persistentvolumeclaim \"data\" not found. (refused 2 "
	                       "times in a row)"));
	json_object_set(obj, "status", st);
	assert_string_equal(job_status_current(obj), "Unschedulable");
	assert_null(job_status_patch(obj, &j, &v, 200)); /* unchanged: nothing written */
	/* placed and running: the condition goes, Running is last */
	j.refusal.tries = 0;
	pods[0].phase = pods[1].phase = JOB_POD_RUNNING;
	job_judge(&j, pods, 2, 0, -1, &v);
	assert_false(v.unschedulable);
	p = job_status_patch(obj, &j, &v, 300);
	json_t *run = load(p);
	free(p);
	conds = json_object_get(json_object_get(run, "status"), "conditions");
	assert_int_equal(json_array_size(conds), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(conds, 1), "type")),
	                    "Running");
	json_decref(run);
	json_decref(patch);
	json_decref(obj);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_worker0_success_ends_the_job_even_after_other_failures),
	    cmocka_unit_test(test_dragons_readme_job_shows_no_running_workers_once_it_succeeded),
	    cmocka_unit_test(test_all_workers_policy_and_chief_rule),
	    cmocka_unit_test(test_restart_policies),
	    cmocka_unit_test(test_failed_pod_already_deleting_is_not_deleted_again),
	    cmocka_unit_test(test_backoff_limit_and_deadline_fail_the_job),
	    cmocka_unit_test(test_pod_has_labels_owner_gate_port_and_tf_config),
	    cmocka_unit_test(test_pods_carry_the_ca_that_verifies_drake_beside_its_url),
	    cmocka_unit_test(test_pods_report_with_a_projected_token_for_drakes_audience),
	    cmocka_unit_test(test_pod_gets_the_scheduler_name_unless_its_template_names_one),
	    cmocka_unit_test(test_service_is_headless_and_selects_its_replica),
	    cmocka_unit_test(test_status_patch_orders_conditions_and_is_quiet_when_unchanged),
	    cmocka_unit_test(test_invalid_patch_is_written_once),
	    cmocka_unit_test(test_suspend_and_resume_conditions),
	    cmocka_unit_test(test_a_preempted_job_shows_preempted_until_it_runs_again),
	    cmocka_unit_test(test_pods_get_the_jobs_priority_class_unless_their_template_names_one),
	    cmocka_unit_test(test_a_refused_job_says_so_in_its_last_condition_until_it_is_placed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
