/*
 * gang_test.c - the bind barrier of the real drake binary, against a
 * scripted API server: a wave binds only when every member has reached
 * bind; an incomplete wave times out with no Binding posted; a wave whose
 * Bindings fail in part is rolled back; the PS is bound before any worker,
 * and a PS that cannot be bound takes no worker with it; a pod that is not
 * the member it claims to be is refused; filter pins a member to its plan.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "tests/integration/fake_api.h"

struct script {
	const char *fail_binding_of; /* pod whose Binding fails, or NULL */
	int fail_code;               /* with this HTTP code */
	const char *hold_binding_of; /* pod whose Binding the test answers later */
	/* The pods: TFJob ml/mnist (uid job-uid), one wave planned on gpu-a. With
	 * roles, they carry what today's admission writes (drake.dev/role and
	 * drake.dev/gang-min-roles); without, what an older drake wrote. */
	bool roles;
	const char *size, *min_roles;
	const char *owner; /* of every pod: NULL for job-uid, "" for none */
};

static const char *pod_json(const struct script *sc, const char *ns, const char *name, char *buf,
                            size_t len)
{
	const char *type = strstr(name, "-ps-") ? "ps" : "worker";
	char owner[128] = "";
	if (!sc->owner || *sc->owner)
		snprintf(owner, sizeof(owner),
		         ",\"ownerReferences\":[{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":"
		         "\"TFJob\",\"name\":\"mnist\",\"uid\":\"%s\",\"controller\":true}]",
		         sc->owner ? sc->owner : "job-uid");
	char roles[160] = "";
	if (sc->roles)
		snprintf(roles, sizeof(roles),
		         ",\"drake.dev/role\":\"%s\",\"drake.dev/gang-min-roles\":\"%s\"", type,
		         sc->min_roles ? sc->min_roles : "ps=1,chief=0,worker=1");
	snprintf(buf, len,
	         "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\",\"uid\":\"uid-%s\"%s,"
	         "\"labels\":{\"training.kubeflow.org/job-name\":\"mnist\","
	         "\"training.kubeflow.org/replica-type\":\"%s\"},"
	         "\"annotations\":{\"drake.dev/planned-node\":\"gpu-a\",\"drake.dev/gang\":"
	         "\"job-uid.1\",\"drake.dev/gang-size\":\"%s\",\"drake.dev/gang-min\":\"2\"%s}},"
	         "\"spec\":{}}",
	         name, ns, name, owner, type, sc->size ? sc->size : "2", roles);
	return buf;
}

static bool on_api(struct fake_api *f, struct fake_req *r, void *arg)
{
	struct script *sc = arg;
	char buf[2048], want[256];
	if (sc->fail_binding_of)
		snprintf(want, sizeof(want), "/%s/binding", sc->fail_binding_of);
	if (strcmp(r->method, "GET") == 0) {
		/* /api/v1/namespaces/<ns>/pods/<name> */
		char ns[64] = "", name[128] = "";
		sscanf(r->path, "/api/v1/namespaces/%63[^/]/pods/%127s", ns, name);
		fake_api_reply(f, r, 200, pod_json(sc, ns, name, buf, sizeof(buf)));
	} else if (strcmp(r->method, "POST") == 0 && sc->hold_binding_of &&
	           strstr(r->path, sc->hold_binding_of)) {
		return false;
	} else if (strcmp(r->method, "POST") == 0 && sc->fail_binding_of && strstr(r->path, want)) {
		fake_api_reply(f, r, sc->fail_code,
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

static void start_bind_in(CURLM *m, struct bind_call *c, int port, const char *ns, const char *pod)
{
	snprintf(c->body, sizeof(c->body),
	         "{\"PodName\":\"%s\",\"PodNamespace\":\"%s\",\"PodUID\":\"uid-%s\","
	         "\"Node\":\"gpu-a\"}",
	         pod, ns, pod);
	c->h = curl_easy_init();
	setup_easy(c->h, port, "POST", "/scheduler/bind", c->body, strlen(c->body), &good, &c->r);
	curl_easy_setopt(c->h, CURLOPT_TIMEOUT, 30L);
	curl_multi_add_handle(m, c->h);
}

static void start_bind(CURLM *m, struct bind_call *c, int port, const char *pod)
{
	start_bind_in(m, c, port, "ml", pod);
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

	start_bind(m, &a, d.port, "mnist-worker-0");
	struct waiting one = {d.port, 1};
	assert_true(fake_api_pump(&api, m, 10, barrier_holds, &one));
	assert_int_equal(fake_api_count(&api, "POST", "/binding"), 0); /* held, nothing posted */

	start_bind(m, &b, d.port, "mnist-worker-1");
	assert_true(fake_api_finish(&api, m, 10));
	assert_int_equal(fake_api_count(&api, "POST", "/pods/mnist-worker-0/binding"), 1);
	assert_int_equal(fake_api_count(&api, "POST", "/pods/mnist-worker-1/binding"), 1);
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
	start_bind(m, &a, d.port, "mnist-worker-0");
	assert_true(fake_api_finish(&api, m, 10));
	assert_non_null(strstr(a.r.body, "job ml/mnist: gang job-uid.1: 1 of 2 members reached "
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
	return fake_api_count(f, "DELETE", "/api/v1/namespaces/ml/pods/mnist-worker-0") > 0;
}

static void test_a_wave_whose_bindings_fail_in_part_is_rolled_back(void **state)
{
	struct script sc = {.fail_binding_of = "mnist-worker-1", .fail_code = 500};
	struct fake_api api;
	struct drake d;
	with_drake(&d, &api, &sc, "rollback", "20s");
	CURLM *m = curl_multi_init();
	struct bind_call a, b;
	start_bind(m, &a, d.port, "mnist-worker-0");
	start_bind(m, &b, d.port, "mnist-worker-1");
	assert_true(fake_api_finish(&api, m, 10));
	assert_string_equal(a.r.body, "{\"Error\":\"\"}");
	assert_non_null(strstr(b.r.body, "node gpu-a is gone (HTTP 500)"));
	/* worker-0 was bound and must not run without worker-1: it is deleted, with its
	 * UID as precondition so a recreated pod is never hit. */
	assert_true(fake_api_pump(&api, NULL, 10, rollback_seen, NULL));
	struct fake_req *del = NULL;
	for (size_t i = 0; i < api.n_reqs; i++)
		if (strcmp(api.reqs[i].method, "DELETE") == 0)
			del = &api.reqs[i];
	assert_non_null(strstr(del->body, "\"uid\":\"uid-mnist-worker-0\""));
	assert_int_equal(fake_api_count(&api, "DELETE", "/pods/mnist-worker-1"), 0);
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
	char pod[2048], body[2600];
	snprintf(body, sizeof(body), "{\"Pod\":%s,\"NodeNames\":[\"gpu-b\",\"gpu-a\"]}",
	         pod_json(&sc, "ml", "mnist-worker-0", pod, sizeof(pod)));
	struct resp r;
	request(d.port, "POST", "/scheduler/filter", body, &good, &r);
	assert_int_equal(r.code, 200);
	assert_non_null(strstr(r.body, "\"NodeNames\":[\"gpu-a\"]"));
	assert_non_null(strstr(r.body,
	                       "\"FailedAndUnresolvableNodes\":{\"gpu-b\":\"job "
	                       "ml/mnist: gang job-uid.1 reserves gpu-a for mnist-worker-0\"}"));
	request(d.port, "POST", "/scheduler/prioritize", body, &good, &r);
	assert_string_equal(r.body, "[{\"Host\":\"gpu-b\",\"Score\":0},{\"Host\":\"gpu-a\","
	                            "\"Score\":10}]");
	assert_int_equal(stop_drake(&d), 0);
	fake_api_stop(&api);
}

static bool fake_never(struct fake_api *f, void *arg)
{
	return false;
}

static bool binding_of_ps_seen(struct fake_api *f, void *arg)
{
	return fake_api_count(f, "POST", "/pods/mnist-ps-0/binding") > 0;
}

static void test_the_ps_is_bound_before_any_worker(void **state)
{
	struct script sc = {.roles = true, .size = "3", .hold_binding_of = "/mnist-ps-0/"};
	struct fake_api api;
	struct drake d;
	with_drake(&d, &api, &sc, "ps-first", "20s");
	CURLM *m = curl_multi_init();
	struct bind_call w0, w1, ps;
	start_bind(m, &w0, d.port, "mnist-worker-0");
	start_bind(m, &w1, d.port, "mnist-worker-1");
	start_bind(m, &ps, d.port, "mnist-ps-0");
	assert_true(fake_api_pump(&api, m, 10, binding_of_ps_seen, NULL));
	/* The PS Binding is in flight (held by the fake API): no worker yet. */
	fake_api_pump(&api, m, 0.3, fake_never, NULL);
	assert_int_equal(fake_api_count(&api, "POST", "/binding"), 1);
	struct fake_req *held = NULL;
	for (size_t i = 0; i < api.n_reqs; i++)
		if (strstr(api.reqs[i].path, "/mnist-ps-0/binding"))
			held = &api.reqs[i];
	fake_api_reply(&api, held, 201, "{\"kind\":\"Status\",\"status\":\"Success\"}");
	assert_true(fake_api_finish(&api, m, 10));
	assert_int_equal(fake_api_count(&api, "POST", "/pods/mnist-worker-0/binding"), 1);
	assert_int_equal(fake_api_count(&api, "POST", "/pods/mnist-worker-1/binding"), 1);
	assert_string_equal(ps.r.body, "{\"Error\":\"\"}");
	assert_string_equal(w0.r.body, "{\"Error\":\"\"}");
	assert_string_equal(w1.r.body, "{\"Error\":\"\"}");
	end_bind(m, &w0);
	end_bind(m, &w1);
	end_bind(m, &ps);
	curl_multi_cleanup(m);
	assert_int_equal(stop_drake(&d), 0);
	fake_api_stop(&api);
}

static void test_a_ps_that_cannot_be_bound_takes_no_worker_with_it(void **state)
{
	struct script sc = {
	    .roles = true, .size = "3", .fail_binding_of = "mnist-ps-0", .fail_code = 500};
	struct fake_api api;
	struct drake d;
	with_drake(&d, &api, &sc, "ps-fails", "20s");
	CURLM *m = curl_multi_init();
	struct bind_call w0, w1, ps;
	start_bind(m, &w0, d.port, "mnist-worker-0");
	start_bind(m, &ps, d.port, "mnist-ps-0");
	start_bind(m, &w1, d.port, "mnist-worker-1");
	assert_true(fake_api_finish(&api, m, 10));
	assert_non_null(strstr(ps.r.body, "node gpu-a is gone (HTTP 500)"));
	assert_non_null(strstr(w0.r.body, "job ml/mnist: gang job-uid.1: not bound because the "
	                                  "Binding of mnist-ps-0 failed"));
	assert_non_null(strstr(w1.r.body, "not bound because the Binding of mnist-ps-0 failed"));
	assert_int_equal(fake_api_count(&api, "POST", "/pods/mnist-worker-"), 0);
	assert_int_equal(fake_api_count(&api, "DELETE", "/pods/"), 0);
	end_bind(m, &w0);
	end_bind(m, &w1);
	end_bind(m, &ps);
	curl_multi_cleanup(m);
	assert_int_equal(stop_drake(&d), 0);
	fake_api_stop(&api);
}

static void test_a_wave_of_workers_without_its_ps_never_binds(void **state)
{
	/* Three workers reach bind, which is the wave's size: without the PS
	 * the job needs, they wait and time out. */
	struct script sc = {.roles = true, .size = "3"};
	struct fake_api api;
	struct drake d;
	with_drake(&d, &api, &sc, "no-ps", "1s");
	CURLM *m = curl_multi_init();
	struct bind_call w[3];
	start_bind(m, &w[0], d.port, "mnist-worker-0");
	start_bind(m, &w[1], d.port, "mnist-worker-1");
	start_bind(m, &w[2], d.port, "mnist-worker-2");
	assert_true(fake_api_finish(&api, m, 10));
	for (int i = 0; i < 3; i++) {
		assert_non_null(strstr(w[i].r.body, "3 of 3 members reached bind within 1s, with 0 "
		                                    "of the 1 ps the job needs; none was bound"));
		end_bind(m, &w[i]);
	}
	assert_int_equal(fake_api_count(&api, "POST", "/binding"), 0);
	curl_multi_cleanup(m);
	assert_int_equal(stop_drake(&d), 0);
	fake_api_stop(&api);
}

static void refused_as(struct fake_api *api, struct script *sc, int port, const char *owner,
                       const char *ns, const char *pod, const char *why)
{
	sc->owner = owner;
	CURLM *m = curl_multi_init();
	struct bind_call c;
	start_bind_in(m, &c, port, ns, pod);
	/* Answered at once, while the real member stays held. */
	assert_true(fake_api_finish(api, m, 10));
	if (!strstr(c.r.body, why) || !strstr(c.r.body, "it is not bound and does not count"))
		fail_msg("%s/%s: %s", ns, pod, c.r.body);
	end_bind(m, &c);
	curl_multi_cleanup(m);
	sc->owner = NULL;
}

static void test_pods_that_are_not_members_of_the_wave_are_refused_and_do_not_count(void **state)
{
	struct script sc = {.roles = true, .size = "2"};
	struct fake_api api;
	struct drake d;
	with_drake(&d, &api, &sc, "refused", "20s");
	CURLM *m = curl_multi_init();
	struct bind_call ps, w0;
	start_bind(m, &ps, d.port, "mnist-ps-0");
	struct waiting one = {d.port, 1};
	assert_true(fake_api_pump(&api, m, 10, barrier_holds, &one));
	refused_as(
	    &api, &sc, d.port, NULL, "other", "mnist-worker-0",
	    "pod other/mnist-worker-0 is in namespace other, but gang job-uid.1 waits in ml");
	refused_as(&api, &sc, d.port, "someone-else", "ml", "mnist-worker-0",
	           "pod ml/mnist-worker-0 is owned by someone-else, not by the job job-uid");
	refused_as(&api, &sc, d.port, "", "ml", "mnist-worker-0",
	           "pod ml/mnist-worker-0 has no controller owner");
	refused_as(&api, &sc, d.port, NULL, "ml", "mnist-worker-0-debug",
	           "pod ml/mnist-worker-0-debug is not named like the worker of job");
	assert_true(barrier_holds(&api, &one));
	assert_int_equal(fake_api_count(&api, "POST", "/binding"), 0);
	struct resp r;
	request(d.port, "GET", "/metrics", NULL, &good, &r);
	assert_non_null(strstr(r.body, "drake_gang_joins_refused_total 4\n"));
	start_bind(m, &w0, d.port, "mnist-worker-0");
	assert_true(fake_api_finish(&api, m, 10));
	assert_string_equal(ps.r.body, "{\"Error\":\"\"}");
	assert_string_equal(w0.r.body, "{\"Error\":\"\"}");
	end_bind(m, &ps);
	end_bind(m, &w0);
	curl_multi_cleanup(m);
	assert_int_equal(stop_drake(&d), 0);
	fake_api_stop(&api);
}

/* One HTTP/2 connection, as kube-scheduler keeps it: the prefix's filter
 * and prioritize are answered while a bind on the same connection is held
 * at the barrier, and the wave still binds when its last member comes. */
static bool multi_has_body(struct fake_api *f, void *arg)
{
	return ((struct resp *)arg)->len > 0;
}

static void test_a_held_bind_does_not_block_other_calls_on_its_http2_connection(void **state)
{
	struct script sc = {0};
	struct fake_api api;
	struct drake d;
	with_drake(&d, &api, &sc, "h2held", "20s");
	CURLM *m = curl_multi_init();
	curl_multi_setopt(m, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
	struct bind_call a, b;
	start_bind(m, &a, d.port, "mnist-worker-0");
	curl_easy_setopt(a.h, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS);
	struct waiting one = {d.port, 1};
	assert_true(fake_api_pump(&api, m, 10, barrier_holds, &one));

	char pod[2048], body[2600];
	snprintf(body, sizeof(body), "{\"Pod\":%s,\"NodeNames\":[\"gpu-b\",\"gpu-a\"]}",
	         pod_json(&sc, "ml", "mnist-worker-1", pod, sizeof(pod)));
	CURL *f = curl_easy_init();
	struct resp fr;
	setup_easy(f, d.port, "POST", "/scheduler/filter", body, strlen(body), &good, &fr);
	curl_easy_setopt(f, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS);
	curl_easy_setopt(f, CURLOPT_PIPEWAIT, 1L);
	curl_multi_add_handle(m, f);
	assert_true(fake_api_pump(&api, m, 10, multi_has_body, &fr));
	assert_non_null(strstr(fr.body, "\"NodeNames\":[\"gpu-a\"]"));
	long reused = -1, v = 0;
	curl_easy_getinfo(f, CURLINFO_NUM_CONNECTS, &reused);
	curl_easy_getinfo(f, CURLINFO_HTTP_VERSION, &v);
	assert_int_equal(v, CURL_HTTP_VERSION_2_0);
	assert_int_equal(reused, 0); /* a stream of the bind's connection */
	assert_int_equal(fake_api_count(&api, "POST", "/binding"), 0); /* a still held */

	start_bind(m, &b, d.port, "mnist-worker-1");
	curl_easy_setopt(b.h, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS);
	assert_true(fake_api_finish(&api, m, 10));
	assert_int_equal(fake_api_count(&api, "POST", "/pods/mnist-worker-0/binding"), 1);
	assert_int_equal(fake_api_count(&api, "POST", "/pods/mnist-worker-1/binding"), 1);
	assert_string_equal(a.r.body, "{\"Error\":\"\"}");
	assert_string_equal(b.r.body, "{\"Error\":\"\"}");
	curl_multi_remove_handle(m, f);
	curl_easy_cleanup(f);
	end_bind(m, &a);
	end_bind(m, &b);
	curl_multi_cleanup(m);
	assert_int_equal(stop_drake(&d), 0);
	fake_api_stop(&api);
}

/* kube-scheduler gives up on a held bind (its timeout, a restart): the
 * stream is reset, the connection stays, drake keeps serving, and the wave's
 * outcome is answered to whoever is still there. */
static void test_a_held_http2_bind_whose_stream_is_reset_leaves_drake_serving(void **state)
{
	struct script sc = {0};
	struct fake_api api;
	struct drake d;
	with_drake(&d, &api, &sc, "h2reset", "20s");
	CURLM *m = curl_multi_init();
	struct bind_call a, b;
	start_bind(m, &a, d.port, "mnist-worker-0");
	curl_easy_setopt(a.h, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS);
	struct waiting one = {d.port, 1};
	assert_true(fake_api_pump(&api, m, 10, barrier_holds, &one));
	end_bind(m, &a); /* curl resets the stream */

	start_bind(m, &b, d.port, "mnist-worker-1");
	curl_easy_setopt(b.h, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS);
	assert_true(fake_api_finish(&api, m, 10));
	assert_string_equal(b.r.body, "{\"Error\":\"\"}");
	assert_int_equal(fake_api_count(&api, "POST", "/pods/mnist-worker-0/binding"), 1);
	assert_int_equal(fake_api_count(&api, "POST", "/pods/mnist-worker-1/binding"), 1);
	struct resp r;
	request(d.port, "GET", "/healthz", NULL, &good, &r);
	assert_int_equal(r.code, 200);
	end_bind(m, &b);
	curl_multi_cleanup(m);
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
	    cmocka_unit_test(test_the_ps_is_bound_before_any_worker),
	    cmocka_unit_test(test_a_ps_that_cannot_be_bound_takes_no_worker_with_it),
	    cmocka_unit_test(test_a_wave_of_workers_without_its_ps_never_binds),
	    cmocka_unit_test(
	        test_pods_that_are_not_members_of_the_wave_are_refused_and_do_not_count),
	    cmocka_unit_test(test_a_held_bind_does_not_block_other_calls_on_its_http2_connection),
	    cmocka_unit_test(test_a_held_http2_bind_whose_stream_is_reset_leaves_drake_serving),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
