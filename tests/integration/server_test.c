/*
 * server_test.c - the real drake binary on a loopback port, spoken to over
 * TLS and mTLS with libcurl (and raw OpenSSL where curl is too polite):
 * every route, every bad-input case, what a client without a certificate
 * gets under mTLS, certificate reload on SIGHUP, and SIGTERM with a bind in
 * flight.
 *
 * DRAKE_BIN names the binary (the Makefile sets it). Certificates come from
 * hack/gen-certs.sh under build/itest/. Every drake started here is stopped
 * by its PID.
 */
#include "tests/integration/fake_api.h"

#define ALT  DIR "/alt-certs"
#define LIVE DIR "/live" /* the files the reload test rewrites */

static struct drake g; /* the shared instance most tests use */

static int group_setup(void **state)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	mkdir("build", 0755);
	mkdir(DIR, 0755);
	if (system("hack/gen-certs.sh " CERTS " >/dev/null") != 0 ||
	    system("hack/gen-certs.sh " ALT " drake-alt >/dev/null") != 0)
		return -1;
	start_drake(&g, "shared", CERTS "/server.crt", CERTS "/server.key", CERTS "/ca.crt", NULL);
	wait_healthy(&g, &good);
	return 0;
}

static int group_teardown(void **state)
{
	int rc = stop_drake(&g);
	stop_leftover_drakes(); /* those a failed test left behind */
	curl_global_cleanup();
	return rc == 0 ? 0 : -1;
}

static void assert_golden(const char *verb, const char *name)
{
	char path[256], url[64];
	snprintf(path, sizeof(path), "tests/golden/%s.request.json", name);
	char *body = slurp(path);
	snprintf(path, sizeof(path), "tests/golden/%s.response.json", name);
	char *want = slurp(path);
	want[strcspn(want, "\n")] = '\0';
	snprintf(url, sizeof(url), "/scheduler/%s", verb);
	struct resp r;
	request(g.port, "POST", url, body, &good, &r);
	assert_int_equal(r.rc, CURLE_OK);
	assert_int_equal(r.code, 200);
	if (strcmp(r.body, want) != 0)
		fail_msg("%s: got %s\nwant %s", name, r.body, want);
	free(body);
	free(want);
}

static void test_filter_prioritize_and_preempt_answer_like_the_goldens(void **state)
{
	assert_golden("filter", "filter-node-names");
	assert_golden("filter", "filter-full-nodes");
	assert_golden("filter", "filter-lower-case");
	assert_golden("prioritize", "prioritize-node-names");
	assert_golden("prioritize", "prioritize-full-nodes");
}

static void test_preempt_answers_with_meta_victims(void **state)
{
	char *body = slurp("tests/golden/preempt-full.request.json");
	struct resp r;
	request(g.port, "POST", "/scheduler/preempt", body, &good, &r);
	assert_int_equal(r.code, 200);
	assert_string_equal(r.body, "{\"NodeNameToMetaVictims\":{\"gpu-a\":{\"Pods\":[{\"UID\":"
	                            "\"11aa\"}],\"NumPDBViolations\":1}}}");
	free(body);
}

static void test_bind_without_api_credentials_answers_an_error_the_scheduler_sees(void **state)
{
	char *body = slurp("tests/golden/bind.request.json");
	struct resp r;
	request(g.port, "POST", "/scheduler/bind", body, &good, &r);
	assert_int_equal(r.code, 200);
	assert_non_null(strstr(r.body, "\"Error\":\"drake has no API-server credentials"));
	free(body);
}

static void test_health_readiness_and_metrics_are_served(void **state)
{
	struct resp r;
	request(g.port, "GET", "/healthz", NULL, &good, &r);
	assert_int_equal(r.code, 200);
	request(g.port, "GET", "/readyz", NULL, &good, &r);
	assert_int_equal(r.code, 200);
	request(g.port, "POST", "/scheduler/filter",
	        "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"NodeNames\":[\"a\"]}", &good, &r);
	request(g.port, "GET", "/metrics", NULL, &good, &r);
	assert_int_equal(r.code, 200);
	assert_non_null(strstr(r.body, "drake_build_info{version="));
	assert_non_null(strstr(r.body, "drake_requests_total{verb=\"filter\",code=\"200\"}"));
	assert_non_null(strstr(r.body, "drake_request_duration_seconds_bucket{verb=\"filter\""));
	assert_non_null(strstr(r.body, "drake_inflight_binds 0"));
	/* Without the TFJob controller nothing waits. */
	request(g.port, "GET", "/v1/jobs", NULL, &good, &r);
	assert_int_equal(r.code, 200);
	assert_string_equal(r.body, "{\"jobs\":[]}");
}

/* Bad requests: each gets its status and, where the body is drake's, a JSON
 * Error naming the problem. The server keeps serving throughout. */
static void test_bad_requests_get_clear_errors_and_the_server_keeps_serving(void **state)
{
	char many[4096] = "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"NodeNames\":[";
	for (int i = 0; i < 101; i++)
		snprintf(many + strlen(many), sizeof(many) - strlen(many), "%s\"n%d\"",
		         i ? "," : "", i);
	strcat(many, "]}");
	char longname[600];
	snprintf(longname, sizeof(longname),
	         "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"NodeNames\":[\"%0300d\"]}", 0);
	const struct {
		const char *method, *path, *body;
		long code;
		const char *error;
	} cases[] = {
	    {"GET", "/scheduler/filter", NULL, 405, "accepts only POST"},
	    {"PUT", "/scheduler/bind", "{}", 405, "accepts only POST"},
	    {"POST", "/healthz", "{}", 405, "accepts only GET"},
	    {"POST", "/scheduler/nope", "{}", 404, "no such path"},
	    {"POST", "/filter", "{}", 404, "no such path"},
	    {"POST", "/scheduler/filter", "{\"Pod\":", 400, "malformed JSON"},
	    {"POST", "/scheduler/filter", "", 400, "malformed JSON"},
	    {"POST", "/scheduler/filter",
	     "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"NodeNames\":7}", 400,
	     "NodeNames: expected array of strings, got number"},
	    {"POST", "/scheduler/prioritize", "{\"NodeNames\":[]}", 400, "Pod: required"},
	    {"POST", "/scheduler/bind", "{\"PodName\":\"p\"}", 400, "PodNamespace: required"},
	    {"POST", "/scheduler/bind",
	     "{\"PodName\":\"../x\",\"PodNamespace\":\"n\",\"Node\":\"a\"}", 400,
	     "must be Kubernetes names"},
	    {"POST", "/scheduler/preempt",
	     "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},"
	     "\"NodeNameToMetaVictims\":{\"a\":{\"Pods\":7}}}",
	     400, "Pods: expected array"},
	    {"POST", "/scheduler/filter", many, 400, "101 nodes exceeds the limit of 100"},
	    {"POST", "/scheduler/filter", longname, 400, "exceeds the limit of 253"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct resp r;
		request(g.port, cases[i].method, cases[i].path, cases[i].body, &good, &r);
		if (r.rc != CURLE_OK || r.code != cases[i].code ||
		    !strstr(r.body, "{\"Error\":\"") || !strstr(r.body, cases[i].error))
			fail_msg("case %zu %s %s: got rc=%d %ld %s; want %ld with \"%s\"", i,
			         cases[i].method, cases[i].path, r.rc, r.code, r.body,
			         cases[i].code, cases[i].error);
	}
	struct resp r;
	request(g.port, "GET", "/healthz", NULL, &good, &r);
	assert_int_equal(r.code, 200);
}

static void test_a_body_over_the_limit_gets_413(void **state)
{
	size_t n = (1u << 20) + 1;
	char *big = malloc(n);
	memset(big, ' ', n);
	CURL *h = curl_easy_init();
	struct resp r;
	request_on(h, g.port, "POST", "/scheduler/filter", big, n, &good, &r);
	curl_easy_cleanup(h);
	free(big);
	assert_int_equal(r.code, 413);
	request(g.port, "GET", "/healthz", NULL, &good, &r);
	assert_int_equal(r.code, 200);
}

static void test_keep_alive_reuses_the_connection(void **state)
{
	CURL *h = curl_easy_init();
	struct resp r;
	request_on(h, g.port, "GET", "/healthz", NULL, 0, &good, &r);
	assert_int_equal(r.code, 200);
	request_on(h, g.port, "GET", "/readyz", NULL, 0, &good, &r);
	assert_int_equal(r.code, 200);
	long connects = -1;
	curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &connects);
	assert_int_equal(connects, 0);
	curl_easy_cleanup(h);
}

/* kube-scheduler's client offers h2 and takes it: its calls, binds held at
 * a barrier among them, are streams of one connection. */
static void test_http2_carries_concurrent_requests_on_one_connection(void **state)
{
	CURL *probe = curl_easy_init();
	struct resp r;
	request_on(probe, g.port, "GET", "/metrics", NULL, 0, &good, &r);
	const char *p = strstr(r.body, "\ndrake_connections_http2_total ");
	assert_non_null(p);
	long long before = atoll(p + strlen("\ndrake_connections_http2_total "));

	CURLM *m = curl_multi_init();
	curl_multi_setopt(m, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
	enum { N = 8 };
	CURL *h[N];
	struct resp rs[N];
	for (int i = 0; i < N; i++) {
		h[i] = curl_easy_init();
		if (i % 2)
			setup_easy(h[i], g.port, "GET", "/healthz", NULL, 0, &good, &rs[i]);
		else
			setup_easy(h[i], g.port, "POST", "/scheduler/filter", "{bad", 4, &good,
			           &rs[i]);
		curl_easy_setopt(h[i], CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS);
		curl_easy_setopt(h[i], CURLOPT_PIPEWAIT, 1L); /* wait for the h2 connection */
		curl_multi_add_handle(m, h[i]);
	}
	int running = 1;
	double deadline = now() + 10;
	while (running && now() < deadline) {
		curl_multi_perform(m, &running);
		curl_multi_poll(m, NULL, 0, 100, NULL);
	}
	assert_int_equal(running, 0);
	for (int i = 0; i < N; i++) {
		long code = 0, v = 0;
		curl_easy_getinfo(h[i], CURLINFO_RESPONSE_CODE, &code);
		curl_easy_getinfo(h[i], CURLINFO_HTTP_VERSION, &v);
		assert_int_equal(v, CURL_HTTP_VERSION_2_0);
		assert_int_equal(code, i % 2 ? 200 : 400);
		if (i % 2 == 0)
			assert_non_null(strstr(rs[i].body, "malformed JSON"));
		curl_multi_remove_handle(m, h[i]);
		curl_easy_cleanup(h[i]);
	}
	curl_multi_cleanup(m);
	request_on(probe, g.port, "GET", "/metrics", NULL, 0, &good, &r);
	p = strstr(r.body, "\ndrake_connections_http2_total ");
	assert_non_null(p);
	/* the probe's own connection (h2 too) was counted in before */
	assert_int_equal(atoll(p + strlen("\ndrake_connections_http2_total ")), before + 1);
	curl_easy_cleanup(probe);
}

/* With --http2=false only HTTP/1.1 is offered, whatever the client asks. */
static void test_http2_off_offers_only_http_1_1(void **state)
{
	struct drake d;
	start_drake(&d, "http1", CERTS "/server.crt", CERTS "/server.key", CERTS "/ca.crt",
	            "--http2=false", NULL);
	wait_healthy(&d, &good);
	CURL *h = curl_easy_init();
	struct resp r;
	setup_easy(h, d.port, "GET", "/healthz", NULL, 0, &good, &r);
	curl_easy_setopt(h, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS);
	assert_int_equal(curl_easy_perform(h), CURLE_OK);
	long v = 0;
	curl_easy_getinfo(h, CURLINFO_HTTP_VERSION, &v);
	assert_int_equal(v, CURL_HTTP_VERSION_1_1);
	curl_easy_cleanup(h);
	assert_int_equal(stop_drake(&d), 0);
}

static const struct tls none = {CERTS "/ca.crt", NULL, NULL, 0};

/* Under mTLS a certificate that does not verify, or TLS below 1.2, fails
 * the handshake: no HTTP answer at all, even on the probes' paths. */
static void test_clients_with_an_untrusted_certificate_fail_the_handshake(void **state)
{
	const struct tls rogue = {CERTS "/ca.crt", CERTS "/rogue.crt", CERTS "/rogue.key", 0};
	const struct tls old = {CERTS "/ca.crt", CERTS "/client.crt", CERTS "/client.key",
	                        CURL_SSLVERSION_TLSv1_0 | CURL_SSLVERSION_MAX_TLSv1_1};
	struct resp r;
	request(g.port, "GET", "/healthz", NULL, &rogue, &r);
	assert_int_not_equal(r.rc, CURLE_OK);
	assert_int_equal(r.code, 0);
	request(g.port, "POST", "/scheduler/filter", "{}", &rogue, &r);
	assert_int_not_equal(r.rc, CURLE_OK);
	assert_int_equal(r.code, 0);
	request(g.port, "GET", "/healthz", NULL, &old, &r);
	assert_int_not_equal(r.rc, CURLE_OK);
	assert_int_equal(r.code, 0);
	request(g.port, "GET", "/healthz", NULL, &good, &r);
	assert_int_equal(r.code, 200);
}

/* A client without a certificate (the kubelet's probes) completes the
 * handshake and gets GET /healthz and /readyz; every other request, on any
 * path and with any method, is refused with 403 and counted. */
static void test_a_client_without_a_certificate_gets_only_the_probes(void **state)
{
	const struct {
		const char *method, *path, *body;
		long code;
	} cases[] = {
	    {"GET", "/healthz", NULL, 200},
	    {"GET", "/readyz", NULL, 200},
	    {"HEAD", "/healthz", NULL, 200},
	    {"POST", "/scheduler/filter",
	     "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"NodeNames\":[\"a\"]}", 403},
	    {"POST", "/scheduler/prioritize", "{}", 403},
	    {"POST", "/scheduler/bind", "{}", 403},
	    {"POST", "/scheduler/preempt", "{}", 403},
	    {"GET", "/metrics", NULL, 403},
	    {"GET", "/v1/jobs", NULL, 403},
	    {"GET", "/v1/migrations", NULL, 403},
	    {"POST", "/healthz", "{}", 403}, /* not a GET: not a probe */
	    {"GET", "/nope", NULL, 403},     /* refused before routing: no 404 */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct resp r;
		CURL *h = curl_easy_init();
		setup_easy(h, g.port, cases[i].method, cases[i].path, cases[i].body,
		           cases[i].body ? strlen(cases[i].body) : 0, &none, &r);
		if (!strcmp(cases[i].method, "HEAD"))
			curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
		r.rc = curl_easy_perform(h);
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r.code);
		curl_easy_cleanup(h);
		bool ok = r.rc == CURLE_OK && r.code == cases[i].code;
		if (ok && cases[i].code == 403)
			ok = strstr(r.body, "{\"Error\":\"a client certificate signed by drake's "
			                    "client CA is required") != NULL;
		if (!ok)
			fail_msg("case %zu %s %s without a certificate: got rc=%d %ld %s; want %ld",
			         i, cases[i].method, cases[i].path, r.rc, r.code, r.body,
			         cases[i].code);
	}
	struct resp r;
	request(g.port, "GET", "/metrics", NULL, &good, &r);
	assert_int_equal(r.code, 200);
	assert_non_null(strstr(r.body, "drake_requests_total{verb=\"filter\",code=\"403\"} 1\n"));
	assert_non_null(strstr(r.body, "drake_requests_total{verb=\"metrics\",code=\"403\"} 1\n"));
}

/* drake serve without --reconcile sets no progress or migration hooks: the
 * API answers 503 saying why, also to a client that has only a bearer
 * token (those routes take one instead of a certificate), and looks at no
 * token. The listing needs a certificate, like /v1/jobs. */
static void test_the_progress_and_migration_api_answers_503_without_the_controller(void **state)
{
	const struct {
		const char *method, *path, *body;
		const struct tls *t;
		bool bearer;
		long code;
		const char *error;
	} cases[] = {
	    {"POST", "/v1/progress", "{\"step\":1,\"value\":1,\"metric\":\"loss\"}", &none, true,
	     503,
	     "progress reports need drake's TFJob controller (drake serve --reconcile), "
	     "and none has registered for them"},
	    {"POST", "/v1/progress", "{}", &good, false, 503, "progress reports need"},
	    {"POST", "/v1/progress", "not json", &none, false, 503, "progress reports need"},
	    {"POST", "/v1/migrations", "{\"namespace\":\"ml\",\"pod\":\"p\"}", &none, true, 503,
	     "migrations need drake's TFJob controller"},
	    {"GET", "/v1/migrations", NULL, &good, false, 503, "migrations need"},
	    {"GET", "/v1/migrations", NULL, &none, true, 403, "a client certificate"},
	    {"PUT", "/v1/progress", "{}", &good, false, 405, "accepts only POST"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct resp r;
		CURL *h = curl_easy_init();
		setup_easy(h, g.port, cases[i].method, cases[i].path, cases[i].body,
		           cases[i].body ? strlen(cases[i].body) : 0, cases[i].t, &r);
		struct curl_slist *hdrs =
		    cases[i].bearer ? curl_slist_append(NULL, "Authorization: Bearer some-token")
		                    : NULL;
		curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
		r.rc = curl_easy_perform(h);
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r.code);
		curl_easy_cleanup(h);
		curl_slist_free_all(hdrs);
		if (r.rc != CURLE_OK || r.code != cases[i].code || !strstr(r.body, cases[i].error))
			fail_msg("case %zu %s %s: got rc=%d %ld %s; want %ld with \"%s\"", i,
			         cases[i].method, cases[i].path, r.rc, r.code, r.body,
			         cases[i].code, cases[i].error);
	}
	struct resp r;
	request(g.port, "GET", "/metrics", NULL, &good, &r);
	assert_non_null(
	    strstr(r.body, "drake_progress_reports_total{outcome=\"unavailable\"} 3\n"));
	assert_non_null(
	    strstr(r.body, "drake_migration_requests_total{outcome=\"unavailable\"} 1\n"));
	assert_non_null(strstr(r.body, "drake_token_reviews_total{result=\"authenticated\"} 0\n"));
}

/* Waits until the peer closes fd (read returns 0 or an error); false on timeout. */
static bool closed_within(int fd, double seconds)
{
	double deadline = now() + seconds;
	char buf[4096];
	while (now() < deadline) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, (int)((deadline - now()) * 1000) + 1) <= 0)
			continue;
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n <= 0)
			return true;
	}
	return false;
}

static void test_plain_http_on_the_tls_port_is_refused(void **state)
{
	int fd = tcp_connect(g.port);
	const char *req = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
	assert_int_equal(write(fd, req, strlen(req)), (ssize_t)strlen(req));
	char buf[512];
	ssize_t n;
	/* Whatever comes back (a TLS alert or nothing), it is not an HTTP reply. */
	struct pollfd p = {.fd = fd, .events = POLLIN};
	assert_true(poll(&p, 1, 5000) > 0);
	n = read(fd, buf, sizeof(buf) - 1);
	assert_true(n <= 0 || memcmp(buf, "HTTP/", 5) != 0);
	close(fd);
	struct resp r;
	request(g.port, "GET", "/healthz", NULL, &good, &r);
	assert_int_equal(r.code, 200);
}

/* A client that sends half a request and stalls is timed out (drake runs
 * with --request-timeout 1s here), while another client is served. */
static void test_a_stalled_client_is_timed_out_without_affecting_others(void **state)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	SSL_CTX_use_certificate_file(ctx, CERTS "/client.crt", SSL_FILETYPE_PEM);
	SSL_CTX_use_PrivateKey_file(ctx, CERTS "/client.key", SSL_FILETYPE_PEM);
	int fd = tcp_connect(g.port);
	SSL *ssl = SSL_new(ctx);
	SSL_set_fd(ssl, fd);
	assert_int_equal(SSL_connect(ssl), 1);
	const char *half =
	    "POST /scheduler/filter HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n{\"Pod\"";
	assert_int_equal(SSL_write(ssl, half, (int)strlen(half)), (int)strlen(half));

	double t0 = now();
	struct resp r;
	request(g.port, "GET", "/healthz", NULL, &good, &r);
	assert_int_equal(r.code, 200);
	assert_true(now() - t0 < 1.0); /* served while the other one stalls */

	char buf[256];
	double deadline = now() + 5;
	int n = 1;
	while (n > 0 && now() < deadline) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		poll(&p, 1, 500);
		if (p.revents)
			n = SSL_read(ssl, buf, sizeof(buf));
	}
	assert_true(n <= 0); /* the server closed it */
	SSL_free(ssl);
	close(fd);
	SSL_CTX_free(ctx);
	/* A bare TCP connection that never starts TLS is closed as well. */
	fd = tcp_connect(g.port);
	assert_true(closed_within(fd, 5));
	close(fd);
}

static void copy_file(const char *from, const char *to)
{
	char *b = slurp(from);
	FILE *f = fopen(to, "wb");
	assert_non_null(f);
	fputs(b, f);
	fclose(f);
	free(b);
}

/* SIGHUP swaps certificate, key and client CA without dropping the listener
 * or open connections; a broken certificate on reload keeps the old one. */
static void test_sighup_reloads_certificates_without_dropping_the_listener(void **state)
{
	mkdir(LIVE, 0755);
	copy_file(CERTS "/server.crt", LIVE "/server.crt");
	copy_file(CERTS "/server.key", LIVE "/server.key");
	copy_file(CERTS "/ca.crt", LIVE "/ca.crt");
	struct drake d;
	/* The connection opened before the reload must stay idle through it:
	 * a long idle timeout here, not the suite's 1 s. */
	start_drake(&d, "reload", LIVE "/server.crt", LIVE "/server.key", LIVE "/ca.crt",
	            "--request-timeout", "60s", NULL);
	wait_healthy(&d, &good);

	CURL *kept = curl_easy_init(); /* a connection opened before the reload */
	struct resp r;
	request_on(kept, d.port, "GET", "/healthz", NULL, 0, &good, &r);
	assert_int_equal(r.code, 200);

	copy_file(ALT "/server.crt", LIVE "/server.crt");
	copy_file(ALT "/server.key", LIVE "/server.key");
	copy_file(ALT "/ca.crt", LIVE "/ca.crt");
	kill(d.pid, SIGHUP);
	const struct tls alt = {ALT "/ca.crt", ALT "/client.crt", ALT "/client.key", 0};
	double deadline = now() + 5;
	do
		request(d.port, "GET", "/healthz", NULL, &alt, &r);
	while (r.code != 200 && now() < deadline);
	assert_int_equal(r.code, 200);
	request(d.port, "GET", "/healthz", NULL, &good, &r); /* old CA: new connections fail */
	assert_int_not_equal(r.rc, CURLE_OK);
	request_on(kept, d.port, "GET", "/readyz", NULL, 0, &good, &r);
	assert_int_equal(r.code, 200); /* the old connection still works */
	long connects = -1;
	curl_easy_getinfo(kept, CURLINFO_NUM_CONNECTS, &connects);
	assert_int_equal(connects, 0);
	curl_easy_cleanup(kept);

	FILE *f = fopen(LIVE "/server.crt", "w");
	fputs("-----BEGIN CERTIFICATE-----\nbroken\n-----END CERTIFICATE-----\n", f);
	fclose(f);
	kill(d.pid, SIGHUP);
	deadline = now() + 5;
	bool seen = false;
	while (!seen && now() < deadline) {
		request(d.port, "GET", "/metrics", NULL, &alt, &r);
		seen = strstr(r.body, "drake_tls_reloads_total{result=\"error\"} 1") != NULL;
	}
	assert_true(seen);
	request(d.port, "GET", "/healthz", NULL, &alt, &r);
	assert_int_equal(r.code, 200);
	assert_int_equal(stop_drake(&d), 0);
}

/* The pod drake reads before binding (no drake.dev/ plan: a plain pod). */
static const char plain_pod[] = "{\"metadata\":{\"name\":\"mnist-worker-1\",\"namespace\":\"ml\","
                                "\"uid\":\"5b9c0d2e-0000-4000-8000-000000000001\"},\"spec\":{}}";

struct hold {
	int binding_code; /* 0: hold Binding POSTs */
	const char *binding_body;
};

static bool on_api(struct fake_api *f, struct fake_req *r, void *arg)
{
	struct hold *h = arg;
	if (strcmp(r->method, "GET") == 0 && strstr(r->path, "/pods/mnist-worker-1")) {
		fake_api_reply(f, r, 200, plain_pod);
		return true;
	}
	if (strcmp(r->method, "POST") == 0 && strstr(r->path, "/binding")) {
		if (!h->binding_code)
			return false;
		fake_api_reply(f, r, h->binding_code, h->binding_body);
		return true;
	}
	fake_api_reply(f, r, 404, "{\"kind\":\"Status\",\"message\":\"not here\"}");
	return true;
}

static bool binding_seen(struct fake_api *f, void *arg)
{
	return fake_api_count(f, "POST", "/pods/mnist-worker-1/binding") > 0;
}

static void test_sigterm_answers_a_bind_in_flight_before_exiting(void **state)
{
	struct hold h = {0, NULL};
	struct fake_api api;
	fake_api_start(&api, on_api, &h);
	fake_api_kubeconfig(&api, DIR "/fake-api.kubeconfig");
	struct drake d;
	start_drake(&d, "sigterm", CERTS "/server.crt", CERTS "/server.key", CERTS "/ca.crt",
	            "--kubeconfig", DIR "/fake-api.kubeconfig", NULL);
	wait_healthy(&d, &good);

	CURLM *m = curl_multi_init();
	CURL *hd = curl_easy_init();
	struct resp r;
	char *body = slurp("tests/golden/bind.request.json");
	setup_easy(hd, d.port, "POST", "/scheduler/bind", body, strlen(body), &good, &r);
	curl_multi_add_handle(m, hd);

	/* drake's Binding POST arrives at the API server and is held there. */
	assert_true(fake_api_pump(&api, m, 10, binding_seen, NULL));
	struct fake_req *post = &api.reqs[api.n_reqs - 1];
	assert_string_equal(post->path, "/api/v1/namespaces/ml/pods/mnist-worker-1/binding");
	assert_non_null(strstr(post->body, "\"kind\":\"Binding\""));

	kill(d.pid, SIGTERM);
	/* Draining: the listener is closed, so a new connection is refused... */
	double deadline = now() + 5;
	struct resp r2;
	do
		request(d.port, "GET", "/healthz", NULL, &good, &r2);
	while (r2.rc == CURLE_OK && now() < deadline);
	assert_int_not_equal(r2.rc, CURLE_OK);
	/* ...but drake is still running, holding the bind. */
	assert_int_equal(waitpid(d.pid, NULL, WNOHANG), 0);

	fake_api_reply(&api, post, 201, "{\"kind\":\"Status\",\"status\":\"Success\"}");
	assert_true(fake_api_finish(&api, m, 10));
	curl_easy_getinfo(hd, CURLINFO_RESPONSE_CODE, &r.code);
	assert_int_equal(r.code, 200);
	assert_string_equal(r.body, "{\"Error\":\"\"}");
	int status = 0;
	assert_int_equal(waitpid(d.pid, &status, 0), d.pid);
	d.pid = 0;
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	curl_multi_remove_handle(m, hd);
	curl_easy_cleanup(hd);
	curl_multi_cleanup(m);
	fake_api_stop(&api);
	free(body);
}

static void test_bind_reports_the_api_servers_own_message(void **state)
{
	struct hold h = {404, "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"pods "
	                      "\\\"mnist-worker-1\\\" not found\",\"code\":404}"};
	struct fake_api api;
	fake_api_start(&api, on_api, &h);
	fake_api_kubeconfig(&api, DIR "/fake-api-404.kubeconfig");
	struct drake d;
	start_drake(&d, "bind404", CERTS "/server.crt", CERTS "/server.key", CERTS "/ca.crt",
	            "--kubeconfig", DIR "/fake-api-404.kubeconfig", NULL);
	wait_healthy(&d, &good);
	CURLM *m = curl_multi_init();
	CURL *hd = curl_easy_init();
	struct resp r;
	char *body = slurp("tests/golden/bind.request.json");
	setup_easy(hd, d.port, "POST", "/scheduler/bind", body, strlen(body), &good, &r);
	curl_multi_add_handle(m, hd);
	assert_true(fake_api_finish(&api, m, 10));
	curl_easy_getinfo(hd, CURLINFO_RESPONSE_CODE, &r.code);
	assert_int_equal(r.code, 200);
	assert_string_equal(r.body, "{\"Error\":\"binding ml/mnist-worker-1 to gpu-a: pods "
	                            "\\\"mnist-worker-1\\\" not found (HTTP 404)\"}");
	assert_int_equal(fake_api_count(&api, "POST", "/binding"), 1);
	for (size_t i = 0; i < api.n_reqs; i++) /* the kubeconfig's bearer token */
		assert_true(api.reqs[i].bearer);
	curl_multi_remove_handle(m, hd);
	curl_easy_cleanup(hd);
	curl_multi_cleanup(m);
	fake_api_stop(&api);
	free(body);
	assert_int_equal(stop_drake(&d), 0);
}

/* A bind from a client without a certificate never reaches the API server. */
static void test_a_bind_without_a_client_certificate_posts_nothing(void **state)
{
	struct hold h = {201, "{\"kind\":\"Status\",\"status\":\"Success\"}"};
	struct fake_api api;
	fake_api_start(&api, on_api, &h);
	fake_api_kubeconfig(&api, DIR "/fake-api-nocert.kubeconfig");
	struct drake d;
	start_drake(&d, "nocert", CERTS "/server.crt", CERTS "/server.key", CERTS "/ca.crt",
	            "--kubeconfig", DIR "/fake-api-nocert.kubeconfig", NULL);
	wait_healthy(&d, &none);
	CURLM *m = curl_multi_init();
	CURL *hd = curl_easy_init();
	struct resp r;
	char *body = slurp("tests/golden/bind.request.json");
	setup_easy(hd, d.port, "POST", "/scheduler/bind", body, strlen(body), &none, &r);
	curl_multi_add_handle(m, hd);
	assert_true(fake_api_finish(&api, m, 10));
	curl_easy_getinfo(hd, CURLINFO_RESPONSE_CODE, &r.code);
	assert_int_equal(r.code, 403);
	assert_int_equal(api.n_reqs, 0); /* not even the pod was read */
	curl_multi_remove_handle(m, hd);
	curl_easy_cleanup(hd);
	curl_multi_cleanup(m);
	fake_api_stop(&api);
	free(body);
	assert_int_equal(stop_drake(&d), 0);
}

/* drake's score on prioritize reads the controller's caches: asked for
 * without them, drake refuses to start and says why, as it does a value
 * that is none of auto, true, false. Without the flag (auto, no
 * controller) prioritize answers 0 for every node (the goldens above). */
static void test_prioritize_without_the_controller_is_refused_at_start(void **state)
{
	(void)state;
	static const struct {
		const char *value, *says;
	} cases[] = {{"true", "needs --reconcile and --gang"},
	             {"maybe", "must be auto, true or false"}};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct drake d;
		start_drake(&d, "prioritize", CERTS "/server.crt", CERTS "/server.key",
		            CERTS "/ca.crt", "--prioritize", cases[i].value, NULL);
		int status = 0;
		pid_t done = 0;
		for (int k = 0; k < 100 && !done; k++) { /* 5 s to exit */
			done = waitpid(d.pid, &status, WNOHANG);
			if (!done)
				usleep(50000);
		}
		if (!done) {
			stop_drake(&d);
			fail_msg("--prioritize=%s: drake started instead of refusing",
			         cases[i].value);
		}
		d.pid = 0;
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 2);
		char *log = slurp(d.log);
		if (!strstr(log, cases[i].says))
			fail_msg("--prioritize=%s: the log does not say %s: %s", cases[i].value,
			         cases[i].says, log);
		free(log);
	}
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_filter_prioritize_and_preempt_answer_like_the_goldens),
	    cmocka_unit_test(test_preempt_answers_with_meta_victims),
	    cmocka_unit_test(test_bind_without_api_credentials_answers_an_error_the_scheduler_sees),
	    cmocka_unit_test(test_health_readiness_and_metrics_are_served),
	    cmocka_unit_test(test_bad_requests_get_clear_errors_and_the_server_keeps_serving),
	    cmocka_unit_test(test_a_body_over_the_limit_gets_413),
	    cmocka_unit_test(test_keep_alive_reuses_the_connection),
	    cmocka_unit_test(test_http2_carries_concurrent_requests_on_one_connection),
	    cmocka_unit_test(test_http2_off_offers_only_http_1_1),
	    cmocka_unit_test(test_clients_with_an_untrusted_certificate_fail_the_handshake),
	    cmocka_unit_test(test_a_client_without_a_certificate_gets_only_the_probes),
	    cmocka_unit_test(
	        test_the_progress_and_migration_api_answers_503_without_the_controller),
	    cmocka_unit_test(test_a_bind_without_a_client_certificate_posts_nothing),
	    cmocka_unit_test(test_plain_http_on_the_tls_port_is_refused),
	    cmocka_unit_test(test_a_stalled_client_is_timed_out_without_affecting_others),
	    cmocka_unit_test(test_sighup_reloads_certificates_without_dropping_the_listener),
	    cmocka_unit_test(test_sigterm_answers_a_bind_in_flight_before_exiting),
	    cmocka_unit_test(test_bind_reports_the_api_servers_own_message),
	    cmocka_unit_test(test_prioritize_without_the_controller_is_refused_at_start),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
