/*
 * gang_test.c - the bind barrier of the real drake binary, against a
 * scripted API server: a wave binds only when every member has reached
 * bind; an incomplete wave times out with no Binding posted; a wave whose
 * Bindings fail in part is rolled back; filter pins a member to its plan.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "tests/integration/fake_api.h"

/* Pods w-0 and w-1 of TFJob ml/mnist, one wave of two planned on gpu-a. */
static const char *pod_json(const char *name, char *buf, size_t len)
{
	snprintf(buf, len,
	         "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ml\",\"uid\":\"uid-%s\","
	         "\"labels\":{\"training.kubeflow.org/job-name\":\"mnist\"},"
	         "\"annotations\":{\"drake.dev/planned-node\":\"gpu-a\",\"drake.dev/gang\":"
	         "\"job-uid.1\",\"drake.dev/gang-size\":\"2\",\"drake.dev/gang-min\":\"2\"}},"
	         "\"spec\":{}}",
	         name, name);
	return buf;
}

struct script {
	int fail_binding_of_w1; /* HTTP code for w-1's Binding, 0: 201 */
};

static bool on_api(struct fake_api *f, struct fake_req *r, void *arg)
{
	struct script *sc = arg;
	char buf[1024];
	if (strcmp(r->method, "GET") == 0) {
		const char *name = strrchr(r->path, '/') + 1;
		fake_api_reply(f, r, 200, pod_json(name, buf, sizeof(buf)));
	} else if (strcmp(r->method, "POST") == 0 && strstr(r->path, "/w-1/binding") &&
	           sc->fail_binding_of_w1) {
		fake_api_reply(f, r, sc->fail_binding_of_w1,
		               "{\"kind\":\"Status\",\"message\":\"node gpu-a is gone\"}");
	} else if (strcmp(r->method, "POST") == 0 && strstr(r->path, "/binding")) {
		fake_api_reply(f, r, 201, "{\"kind\":\"Status\",\"status\":\"Success\"}");
	} else if (strcmp(r->method, "DELETE") == 0) {
		fake_api_reply(f, r, 200, "{\"kind\":\"Pod\"}");
	} else {
		fake_api_reply(f, r, 404, "{\"kind\":\"Status\",\"message\":\"not here\"}");
	}
	return true;
}

struct bind_call {
	CURL *h;
	struct resp r;
	char body[256];
};

static void start_bind(CURLM *m, struct bind_call *c, int port, const char *pod)
{
	snprintf(c->body, sizeof(c->body),
	         "{\"PodName\":\"%s\",\"PodNamespace\":\"ml\",\"PodUID\":\"uid-%s\","
	         "\"Node\":\"gpu-a\"}",
	         pod, pod);
	c->h = curl_easy_init();
	setup_easy(c->h, port, "POST", "/scheduler/bind", c->body, strlen(c->body), &good, &c->r);
	curl_easy_setopt(c->h, CURLOPT_TIMEOUT, 30L);
	curl_multi_add_handle(m, c->h);
}

static void end_bind(CURLM *m, struct bind_call *c)
{
	curl_multi_remove_handle(m, c->h);
	curl_easy_cleanup(c->h);
}

struct waiting {
	int port;
	long want;
};

/* drake's own gauge says how many binds sit at a barrier. */
static bool barrier_holds(struct fake_api *f, void *arg)
{
	struct waiting *w = arg;
	struct resp r;
	request(w->port, "GET", "/metrics", NULL, &good, &r);
	char line[64];
	snprintf(line, sizeof(line), "drake_gang_binds_waiting %ld\n", w->want);
	return strstr(r.body, line) != NULL;
}

static void with_drake(struct drake *d, struct fake_api *api, struct script *sc, const char *tag,
                       const char *timeout)
{
	fake_api_start(api, on_api, sc);
	char kc[256];
	snprintf(kc, sizeof(kc), DIR "/gang-%s.kubeconfig", tag);
	fake_api_kubeconfig(api, kc);
	start_drake(d, tag, CERTS "/server.crt", CERTS "/server.key", CERTS "/ca.crt",
	            "--kubeconfig", kc, "--gang-bind-timeout", timeout, NULL);
	/* The fake API must answer while drake starts: pump until healthy. */
	wait_healthy(d, &good);
}

static int group_setup(void **state)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	mkdir("build", 0755);
	mkdir(DIR, 0755);
	return system("hack/gen-certs.sh " CERTS " >/dev/null") == 0 ? 0 : -1;
}

static int group_teardown(void **state)
{
	stop_leftover_drakes(); /* those a failed test left behind */
	curl_global_cleanup();
	return 0;
}

static void test_a_wave_binds_only_when_every_member_has_arrived(void **state)
{
	struct script sc = {0};
	struct fake_api api;
	struct drake d;
	with_drake(&d, &api, &sc, "complete", "20s");
	CURLM *m = curl_multi_init();
	struct bind_call a, b;

	start_bind(m, &a, d.port, "w-0");
	struct waiting one = {d.port, 1};
	assert_true(fake_api_pump(&api, m, 10, barrier_holds, &one));
	assert_int_equal(fake_api_count(&api, "POST", "/binding"), 0); /* held, nothing posted */

	start_bind(m, &b, d.port, "w-1");
	assert_true(fake_api_finish(&api, m, 10));
	assert_int_equal(fake_api_count(&api, "POST", "/pods/w-0/binding"), 1);
	assert_int_equal(fake_api_count(&api, "POST", "/pods/w-1/binding"), 1);
	assert_string_equal(a.r.body, "{\"Error\":\"\"}");
	assert_string_equal(b.r.body, "{\"Error\":\"\"}");
	struct resp r;
	request(d.port, "GET", "/metrics", NULL, &good, &r);
	assert_non_null(strstr(r.body, "drake_gang_members_bound_total 2\n"));
	end_bind(m, &a);
	end_bind(m, &b);
	curl_multi_cleanup(m);
	assert_int_equal(stop_drake(&d), 0);
	fake_api_stop(&api);
}

static void test_an_incomplete_wave_times_out_and_binds_nothing(void **state)
{
	struct script sc = {0};
	struct fake_api api;
	struct drake d;
	with_drake(&d, &api, &sc, "timeout", "1s");
	CURLM *m = curl_multi_init();
	struct bind_call a;
	start_bind(m, &a, d.port, "w-0");
	assert_true(fake_api_finish(&api, m, 10));
	assert_non_null(strstr(a.r.body, "tfjob ml/mnist: gang job-uid.1: 1 of 2 members reached "
	                                 "bind within 1s; none was bound"));
	assert_int_equal(fake_api_count(&api, "POST", "/binding"), 0);
	struct waiting none = {d.port, 0};
	assert_true(barrier_holds(&api, &none));
	struct resp r;
	request(d.port, "GET", "/metrics", NULL, &good, &r);
	assert_non_null(strstr(r.body, "drake_gang_waves_total{outcome=\"timed_out\"} 1\n"));
	end_bind(m, &a);
	curl_multi_cleanup(m);
	assert_int_equal(stop_drake(&d), 0);
	fake_api_stop(&api);
}

static bool rollback_seen(struct fake_api *f, void *arg)
{
	return fake_api_count(f, "DELETE", "/api/v1/namespaces/ml/pods/w-0") > 0;
}

static void test_a_wave_whose_bindings_fail_in_part_is_rolled_back(void **state)
{
	struct script sc = {.fail_binding_of_w1 = 500};
	struct fake_api api;
	struct drake d;
	with_drake(&d, &api, &sc, "rollback", "20s");
	CURLM *m = curl_multi_init();
	struct bind_call a, b;
	start_bind(m, &a, d.port, "w-0");
	start_bind(m, &b, d.port, "w-1");
	assert_true(fake_api_finish(&api, m, 10));
	assert_string_equal(a.r.body, "{\"Error\":\"\"}");
	assert_non_null(strstr(b.r.body, "node gpu-a is gone (HTTP 500)"));
	/* w-0 was bound and must not run without w-1: it is deleted, with its
	 * UID as precondition so a recreated pod is never hit. */
	assert_true(fake_api_pump(&api, NULL, 10, rollback_seen, NULL));
	struct fake_req *del = NULL;
	for (size_t i = 0; i < api.n_reqs; i++)
		if (strcmp(api.reqs[i].method, "DELETE") == 0)
			del = &api.reqs[i];
	assert_non_null(strstr(del->body, "\"uid\":\"uid-w-0\""));
	assert_int_equal(fake_api_count(&api, "DELETE", "/pods/w-1"), 0);
	struct resp r;
	request(d.port, "GET", "/metrics", NULL, &good, &r);
	assert_non_null(strstr(r.body, "drake_gang_waves_total{outcome=\"rolled_back\"} 1\n"));
	end_bind(m, &a);
	end_bind(m, &b);
	curl_multi_cleanup(m);
	assert_int_equal(stop_drake(&d), 0);
	fake_api_stop(&api);
}

static void test_filter_pins_a_member_to_its_planned_node(void **state)
{
	struct script sc = {0};
	struct fake_api api;
	struct drake d;
	with_drake(&d, &api, &sc, "filter", "20s");
	char pod[1024], body[1400];
	snprintf(body, sizeof(body), "{\"Pod\":%s,\"NodeNames\":[\"gpu-b\",\"gpu-a\"]}",
	         pod_json("w-0", pod, sizeof(pod)));
	struct resp r;
	request(d.port, "POST", "/scheduler/filter", body, &good, &r);
	assert_int_equal(r.code, 200);
	assert_non_null(strstr(r.body, "\"NodeNames\":[\"gpu-a\"]"));
	assert_non_null(strstr(r.body, "\"FailedAndUnresolvableNodes\":{\"gpu-b\":\"tfjob "
	                               "ml/mnist: gang job-uid.1 reserves gpu-a for w-0\"}"));
	request(d.port, "POST", "/scheduler/prioritize", body, &good, &r);
	assert_string_equal(r.body, "[{\"Host\":\"gpu-b\",\"Score\":0},{\"Host\":\"gpu-a\","
	                            "\"Score\":10}]");
	assert_int_equal(stop_drake(&d), 0);
	fake_api_stop(&api);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_a_wave_binds_only_when_every_member_has_arrived),
	    cmocka_unit_test(test_an_incomplete_wave_times_out_and_binds_nothing),
	    cmocka_unit_test(test_a_wave_whose_bindings_fail_in_part_is_rolled_back),
	    cmocka_unit_test(test_filter_pins_a_member_to_its_planned_node),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
