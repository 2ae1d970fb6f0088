/*
 * limits_test.c - each connection-level limit of the real drake binary
 * exceeded by one client while another, connected before, keeps being
 * served on its own connection: the body size (--max-body), the header
 * block (--max-headers), the connection count (--max-connections), and the
 * request deadline (--request-timeout) for a client that stalls in its
 * header, stalls in its body, or trickles its header a byte at a time.
 *
 * DRAKE_BIN names the binary (the Makefile sets it). Every drake started
 * here is stopped by its PID.
 */
#include "tests/integration/harness.h"

/* Two drakes with the same small limits: --max-body 1Mi from the harness,
 * plus these. The deadline's tests run on one with --request-timeout 1s;
 * the others on one that waits 10 s, so that their kept client, idle
 * while the test's slow work runs (a 1 MiB body on a loaded machine under
 * ASan takes about a second), is not closed by a deadline those tests are
 * not about. */
#define MAX_CONNS   "3"
#define MAX_HEADERS "4Ki"

static struct drake patient, strict;
static struct drake *g = &patient; /* the drake the running test talks to */

/* One of the two, serving; its --request-timeout is given after the
 * harness's, and the last one given wins. */
static void start_limited(struct drake *d, const char *tag, const char *request_timeout)
{
	start_drake(d, tag, CERTS "/server.crt", CERTS "/server.key", CERTS "/ca.crt",
	            "--max-connections", MAX_CONNS, "--max-headers", MAX_HEADERS,
	            "--request-timeout", request_timeout, NULL);
	wait_healthy(d, &good);
}

static int group_setup(void **state)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	mkdir("build", 0755);
	mkdir(DIR, 0755);
	if (system("hack/gen-certs.sh " CERTS " >/dev/null") != 0)
		return -1;
	start_limited(&patient, "limits", "10s");
	start_limited(&strict, "limits-deadline", "1s");
	return 0;
}

static int group_teardown(void **state)
{
	int rc = stop_drake(&patient);
	int rc2 = stop_drake(&strict);
	stop_leftover_drakes();
	curl_global_cleanup();
	return rc == 0 && rc2 == 0 ? 0 : -1;
}

static int on_patient(void **state)
{
	g = &patient;
	return 0;
}

static int on_strict(void **state)
{
	g = &strict;
	return 0;
}

/* The client served throughout: one curl handle, one keep-alive connection. */
static CURL *kept_open(void)
{
	CURL *h = curl_easy_init();
	struct resp r;
	request_on(h, g->port, "GET", "/healthz", NULL, 0, &good, &r);
	assert_int_equal(r.code, 200);
	return h;
}

/* It is served again, on the connection it had. */
static void still_served(CURL *h)
{
	struct resp r;
	request_on(h, g->port, "GET", "/readyz", NULL, 0, &good, &r);
	assert_int_equal(r.rc, CURLE_OK);
	assert_int_equal(r.code, 200);
	long connects = -1;
	curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &connects);
	assert_int_equal(connects, 0);
}

/* A raw TLS client with the good certificate, for what curl will not send. */
struct raw {
	SSL_CTX *ctx;
	SSL *ssl;
	int fd;
};

static void raw_open(struct raw *c)
{
	c->ctx = SSL_CTX_new(TLS_client_method());
	SSL_CTX_use_certificate_file(c->ctx, CERTS "/client.crt", SSL_FILETYPE_PEM);
	SSL_CTX_use_PrivateKey_file(c->ctx, CERTS "/client.key", SSL_FILETYPE_PEM);
	c->fd = tcp_connect(g->port);
	c->ssl = SSL_new(c->ctx);
	SSL_set_fd(c->ssl, c->fd);
	assert_int_equal(SSL_connect(c->ssl), 1);
}

static void raw_send(struct raw *c, const char *s, size_t n)
{
	assert_int_equal(SSL_write(c->ssl, s, (int)n), (int)n);
}

/* Reads until the server closes or seconds pass; returns what came, or
 * NULL on timeout. The buffer is static. */
static const char *raw_until_closed(struct raw *c, double seconds)
{
	static char got[8192];
	size_t len = 0;
	double deadline = now() + seconds;
	while (now() < deadline) {
		if (SSL_pending(c->ssl) == 0) {
			struct pollfd p = {.fd = c->fd, .events = POLLIN};
			if (poll(&p, 1, (int)((deadline - now()) * 1000) + 1) <= 0)
				continue;
		}
		int n = SSL_read(c->ssl, got + len, (int)(sizeof(got) - 1 - len));
		if (n <= 0) {
			got[len] = '\0';
			return got;
		}
		len += (size_t)n;
	}
	return NULL;
}

static void raw_close(struct raw *c)
{
	SSL_free(c->ssl);
	close(c->fd);
	SSL_CTX_free(c->ctx);
}

static bool log_has(const char *needle)
{
	char *log = slurp(g->log);
	bool found = strstr(log, needle) != NULL;
	free(log);
	return found;
}

static size_t log_count(const char *needle)
{
	char *log = slurp(g->log);
	size_t n = 0;
	for (const char *p = log; (p = strstr(p, needle)); p++)
		n++;
	free(log);
	return n;
}

static void metrics_have(CURL *h, const char *line)
{
	struct resp r;
	request_on(h, g->port, "GET", "/metrics", NULL, 0, &good, &r);
	assert_int_equal(r.code, 200);
	if (!strstr(r.body, line))
		fail_msg("/metrics lacks \"%s\"", line);
}

/* Until drake has seen every earlier client go: one connection open, the
 * one asking. A test ends with this, so the next starts with free slots. */
static void wait_for_no_other_connections(void)
{
	double deadline = now() + 5;
	struct resp r;
	do
		request(g->port, "GET", "/metrics", NULL, &good, &r);
	while (!(r.code == 200 && strstr(r.body, "drake_connections_open 1\n")) &&
	       now() < deadline);
	if (now() >= deadline)
		fail_msg("drake still counts other connections open");
}

static long long metric(CURL *h, const char *name)
{
	struct resp r;
	request_on(h, g->port, "GET", "/metrics", NULL, 0, &good, &r);
	assert_int_equal(r.code, 200);
	const char *p = strstr(r.body, name);
	if (!p)
		fail_msg("/metrics lacks %s", name);
	return atoll(p + strlen(name));
}

/* metric() on a connection of its own, closed before it returns. */
static long long metric_once(const char *name)
{
	CURL *h = curl_easy_init();
	long long v = metric(h, name);
	curl_easy_cleanup(h);
	return v;
}

static void test_a_body_over_max_body_gets_413_while_another_client_is_served(void **state)
{
	CURL *kept = kept_open();
	size_t n = (1u << 20) + 1;
	char *big = malloc(n);
	memset(big, ' ', n);
	CURL *h = curl_easy_init();
	struct resp r;
	request_on(h, g->port, "POST", "/scheduler/filter", big, n, &good, &r);
	curl_easy_cleanup(h);
	free(big);
	assert_int_equal(r.code, 413);
	still_served(kept);
	curl_easy_cleanup(kept);
}

/* A header block well under the limit is read; one over it gets libevent
 * 2.1's 400 and the connection is closed. (libevent counts the header
 * lines without their line ends, so the exact edge is its business.) */
static void
test_a_header_block_over_max_headers_gets_400_while_another_client_is_served(void **state)
{
	CURL *kept = kept_open();
	char req[8192];
	static const struct {
		int pad;
		const char *want;
	} cases[] = {{3000, "HTTP/1.1 200"}, {4200, "HTTP/1.1 400"}};
	for (size_t i = 0; i < 2; i++) {
		int len = snprintf(
		    req, sizeof(req),
		    "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Pad: %0*d\r\n\r\n",
		    cases[i].pad, 0);
		struct raw c;
		raw_open(&c);
		raw_send(&c, req, (size_t)len);
		const char *got = raw_until_closed(&c, 5);
		raw_close(&c);
		assert_non_null(got);
		if (strncmp(got, cases[i].want, 12) != 0)
			fail_msg("X-Pad of %d bytes: got %.40s; want %s", cases[i].pad, got,
			         cases[i].want);
		still_served(kept);
	}
	curl_easy_cleanup(kept);
}

/* With --max-connections 3: the kept client plus two idle TLS connections
 * fill it; a fourth is closed before TLS and logged; the kept client is
 * served; once one closes, a new client is served again. */
static void
test_a_connection_past_max_connections_is_closed_while_open_ones_are_served(void **state)
{
	CURL *kept = kept_open();
	struct raw b, c;
	raw_open(&b);
	raw_open(&c);
	metrics_have(kept, "drake_connections_open 3\n");

	int fd = tcp_connect(g->port);
	double t0 = now();
	char buf[64];
	struct pollfd p = {.fd = fd, .events = POLLIN};
	assert_true(poll(&p, 1, 5000) > 0);
	assert_true(read(fd, buf, sizeof(buf)) <= 0); /* closed, no TLS spoken */
	assert_true(now() - t0 < 0.5);                /* at once, not at a timeout */
	close(fd);

	still_served(kept);
	metrics_have(kept, "drake_connections_closed_total{reason=\"max_connections\"} 1\n");
	assert_true(log_has("msg=connection_refused reason=max_connections open=3 max=3"));

	raw_close(&b);
	double deadline = now() + 5;
	struct resp r;
	do /* drake frees the slot when it reads b's close */
		request(g->port, "GET", "/healthz", NULL, &good, &r);
	while (r.code != 200 && now() < deadline);
	assert_int_equal(r.code, 200);
	raw_close(&c);
	curl_easy_cleanup(kept);
	wait_for_no_other_connections();
}

/* Waits up to seconds for drake to close c, serving the kept client on its
 * connection every 0.2 s meanwhile (more often than its 1 s idle limit). */
static bool closed_while_kept_is_served(struct raw *c, CURL *kept, double seconds)
{
	double deadline = now() + seconds;
	while (now() < deadline) {
		struct pollfd p = {.fd = c->fd, .events = POLLIN};
		if (poll(&p, 1, 200) > 0) {
			const char *got = raw_until_closed(c, 1);
			return got && !*got; /* closed, and nothing was answered */
		}
		still_served(kept);
	}
	return false;
}

/* The request deadline, 1 s here: each client is closed by it while the
 * kept one is served; after, /metrics has counted all three. */
static void
test_clients_slow_in_header_or_body_or_trickling_are_closed_at_the_deadline(void **state)
{
	static const char timed_out[] =
	    "drake_connections_closed_total{reason=\"request_timeout\"} ";
	CURL *kept = kept_open();
	long long before = metric(kept, timed_out);
	static const char *const stalls[] = {
	    "POST /scheduler/filter HTTP/1.1\r\nHost: x\r\nContent-Le", /* in the header */
	    "POST /scheduler/filter HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n{\"Pod\"",
	};
	for (size_t i = 0; i < 2; i++) {
		struct raw c;
		double t0 = now(); /* the deadline runs from the accept */
		raw_open(&c);
		raw_send(&c, stalls[i], strlen(stalls[i]));
		bool closed = closed_while_kept_is_served(&c, kept, 5);
		double took = now() - t0;
		raw_close(&c);
		if (!closed)
			fail_msg("stall %zu: not closed within 5 s", i);
		/* raw_until_closed blocks in SSL_read once the socket is
		 * readable (the server's session tickets make it so), so only
		 * the time taken says the deadline closed it */
		if (took > 2.5)
			fail_msg("stall %zu: closed after %.1f s, not at the 1 s deadline", i,
			         took);
	}
	/* One header byte every 0.3 s never leaves the connection idle for the
	 * 1 s libevent waits between reads; the deadline still closes it. */
	struct raw c;
	raw_open(&c);
	double t0 = now();
	const char *line = "GET /healthz HTTP/1.1\r\nX-Slow: ";
	raw_send(&c, line, strlen(line));
	bool closed = false;
	while (!closed && now() - t0 < 5) {
		struct pollfd p = {.fd = c.fd, .events = POLLIN};
		if (poll(&p, 1, 300) > 0) { /* 0.3 s: the client's pace, not a wait for drake */
			const char *got = raw_until_closed(&c, 1);
			closed = got && !*got;
			break;
		}
		still_served(kept);
		if (SSL_write(c.ssl, "a", 1) != 1)
			closed = true;
	}
	double took = now() - t0;
	raw_close(&c);
	assert_true(closed);
	if (took > 2.5)
		fail_msg("the trickling client was closed after %.1f s, not at the 1 s deadline",
		         took);
	assert_true(metric(kept, timed_out) >= before + 3);
	assert_true(log_has("msg=connection_timed_out"));
	curl_easy_cleanup(kept);
}

/* Over HTTP/2 the same limits answer on the stream, and the connection's
 * other streams, and other clients, go on. */
static void test_over_http2_limits_answer_431_and_413_on_the_stream(void **state)
{
	CURL *kept = kept_open();
	CURL *h = curl_easy_init();
	char pad[5000 + 8];
	snprintf(pad, sizeof(pad), "X-Pad: %0*d", 5000, 0);
	struct curl_slist *hdr = curl_slist_append(NULL, pad);
	struct resp r;
	setup_easy(h, g->port, "GET", "/healthz", NULL, 0, &good, &r);
	curl_easy_setopt(h, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	assert_int_equal(curl_easy_perform(h), CURLE_OK);
	long code = 0, v = 0;
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_getinfo(h, CURLINFO_HTTP_VERSION, &v);
	assert_int_equal(v, CURL_HTTP_VERSION_2_0);
	assert_int_equal(code, 431);
	assert_non_null(strstr(r.body, "--max-headers"));
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(hdr);

	size_t n = (1u << 20) + 1; /* the suite's --max-body is 1Mi */
	char *big = malloc(n);
	memset(big, ' ', n);
	setup_easy(h, g->port, "POST", "/scheduler/filter", big, n, &good, &r);
	curl_easy_setopt(h, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS);
	assert_int_equal(curl_easy_perform(h), CURLE_OK);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	assert_int_equal(code, 413);
	free(big);

	/* the same connection serves the next request */
	setup_easy(h, g->port, "GET", "/healthz", NULL, 0, &good, &r);
	curl_easy_setopt(h, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS);
	assert_int_equal(curl_easy_perform(h), CURLE_OK);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	assert_int_equal(code, 200);
	long connects = -1;
	curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &connects);
	assert_int_equal(connects, 0);
	still_served(kept);
	assert_true(log_has("msg=request_refused protocol=h2 code=431"));
	assert_true(log_has("msg=request_refused protocol=h2 code=413"));
	curl_easy_cleanup(h);
	curl_easy_cleanup(kept);
	wait_for_no_other_connections();
}

/* An HTTP/2 connection idle past the deadline is closed (GOAWAY first: below);
 * the client's next request goes on a new connection and is served. */
static void test_after_an_idle_http2_connection_is_closed_the_next_request_is_served(void **state)
{
	static const char closed[] =
	    "\ndrake_connections_closed_total{reason=\"request_timeout\"} ";
	/* Read on a connection of its own, closed at once: the HTTP/2 one
	 * below must be the only one left to time out. (On h, under
	 * DRAKE_TEST_HTTP=1.1, the read would open a second, HTTP/1.1
	 * connection timing out a little after the first, and a request sent
	 * between the two deadlines would go on it.) */
	long long before = metric_once(closed);
	CURL *h = curl_easy_init();
	struct resp r;
	setup_easy(h, g->port, "GET", "/healthz", NULL, 0, &good, &r);
	curl_easy_setopt(h, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS);
	assert_int_equal(curl_easy_perform(h), CURLE_OK);
	size_t lines = log_count("msg=connection_timed_out");
	double deadline = now() + 5; /* this drake's --request-timeout is 1s */
	while (log_count("msg=connection_timed_out") == lines && now() < deadline)
		usleep(50000);
	assert_true(log_count("msg=connection_timed_out") > lines);
	setup_easy(h, g->port, "GET", "/healthz", NULL, 0, &good, &r);
	curl_easy_setopt(h, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS);
	assert_int_equal(curl_easy_perform(h), CURLE_OK);
	long code = 0, connects = -1;
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &connects);
	assert_int_equal(code, 200);
	assert_int_equal(connects, 1); /* a new connection */
	curl_easy_cleanup(h);
	assert_true(metric_once(closed) > before);
	wait_for_no_other_connections();
}

/* What drake sends an HTTP/2 client that says nothing after its preface:
 * its SETTINGS, then, at the deadline, GOAWAY (no error) and the close. */
static void test_an_idle_http2_connection_is_told_goaway_before_it_is_closed(void **state)
{
	struct raw c;
	c.ctx = SSL_CTX_new(TLS_client_method());
	SSL_CTX_use_certificate_file(c.ctx, CERTS "/client.crt", SSL_FILETYPE_PEM);
	SSL_CTX_use_PrivateKey_file(c.ctx, CERTS "/client.key", SSL_FILETYPE_PEM);
	static const unsigned char h2[] = {2, 'h', '2'};
	SSL_CTX_set_alpn_protos(c.ctx, h2, sizeof(h2));
	c.fd = tcp_connect(g->port);
	c.ssl = SSL_new(c.ctx);
	SSL_set_fd(c.ssl, c.fd);
	assert_int_equal(SSL_connect(c.ssl), 1);
	const unsigned char *alpn;
	unsigned int alpn_len;
	SSL_get0_alpn_selected(c.ssl, &alpn, &alpn_len);
	assert_int_equal(alpn_len, 2);
	static const char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
	                              "\0\0\0\4\0\0\0\0\0"; /* and an empty SETTINGS */
	raw_send(&c, preface, sizeof(preface) - 1);
	unsigned char got[4096];
	size_t len = 0;
	double t0 = now();
	for (;;) { /* until the server closes */
		struct pollfd p = {.fd = c.fd, .events = POLLIN};
		if (SSL_pending(c.ssl) == 0 && poll(&p, 1, 5000) <= 0)
			break;
		int n = SSL_read(c.ssl, got + len, (int)(sizeof(got) - len));
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	double took = now() - t0;
	raw_close(&c);
	bool settings = false, goaway = false;
	for (size_t i = 0; i + 9 <= len;) { /* 9-byte frame headers */
		size_t flen = (size_t)got[i] << 16 | (size_t)got[i + 1] << 8 | got[i + 2];
		if (got[i + 3] == 4)
			settings = true;
		if (got[i + 3] == 7 && i + 9 + 8 <= len)
			goaway = got[i + 13] == 0 && got[i + 14] == 0 && got[i + 15] == 0 &&
			         got[i + 16] == 0; /* error code NO_ERROR */
		i += 9 + flen;
	}
	assert_true(settings);
	assert_true(goaway);
	if (took < 0.8 || took > 3)
		fail_msg("closed after %.1f s, not at the 1 s deadline", took);
	wait_for_no_other_connections();
}

/* Each accepted connection is counted once, at accept (refused ones not at
 * all), and requests on a kept-alive connection add nothing: the count
 * against the requests served says how often clients reconnect, each time
 * paying a TLS handshake. */
static void test_connections_accepted_count_handshakes_not_requests(void **state)
{
	const char *accepted = "\ndrake_connections_accepted_total "; /* not the HELP line */
	CURL *kept = kept_open();
	long long before = metric(kept, accepted);
	for (int i = 0; i < 5; i++)
		still_served(kept);
	assert_int_equal(metric(kept, accepted), before);
	struct raw b, c;
	raw_open(&b);
	raw_open(&c);
	assert_int_equal(metric(kept, accepted), before + 2);
	raw_close(&b);
	raw_close(&c);
	curl_easy_cleanup(kept);
	wait_for_no_other_connections();
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup(
	        test_a_body_over_max_body_gets_413_while_another_client_is_served, on_patient),
	    cmocka_unit_test_setup(
	        test_a_header_block_over_max_headers_gets_400_while_another_client_is_served,
	        on_patient),
	    cmocka_unit_test_setup(
	        test_a_connection_past_max_connections_is_closed_while_open_ones_are_served,
	        on_patient),
	    cmocka_unit_test_setup(
	        test_clients_slow_in_header_or_body_or_trickling_are_closed_at_the_deadline,
	        on_strict),
	    cmocka_unit_test_setup(test_connections_accepted_count_handshakes_not_requests,
	                           on_patient),
	    cmocka_unit_test_setup(test_over_http2_limits_answer_431_and_413_on_the_stream,
	                           on_patient),
	    cmocka_unit_test_setup(
	        test_after_an_idle_http2_connection_is_closed_the_next_request_is_served,
	        on_strict),
	    cmocka_unit_test_setup(test_an_idle_http2_connection_is_told_goaway_before_it_is_closed,
	                           on_strict),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
