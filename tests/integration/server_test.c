/*
 * server_test.c - the real drake binary on a loopback port, spoken to over
 * TLS and mTLS with libcurl (and raw OpenSSL where curl is too polite):
 * every route, every bad-input case, certificate reload on SIGHUP, and
 * SIGTERM with a bind in flight.
 *
 * DRAKE_BIN names the binary (the Makefile sets it). Certificates come from
 * hack/gen-certs.sh under build/itest/. Every drake started here is stopped
 * by its PID.
 */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

extern char **environ;

#define DIR   "build/itest"
#define CERTS DIR "/certs"
#define ALT   DIR "/alt-certs"
#define LIVE  DIR "/live" /* the files the reload test rewrites */

struct drake {
	pid_t pid;
	int port;
	char log[256];
};

static struct drake g; /* the shared instance most tests use */

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t l = sizeof(a);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(fd, (struct sockaddr *)&a, &l))
		fail_msg("cannot find a free port: %s", strerror(errno));
	close(fd);
	return ntohs(a.sin_port);
}

struct resp {
	long code;
	char body[1 << 16];
	size_t len;
	CURLcode rc;
};

static size_t on_body(char *p, size_t sz, size_t n, void *arg)
{
	struct resp *r = arg;
	size_t take = sz * n;
	if (take > sizeof(r->body) - 1 - r->len)
		take = sizeof(r->body) - 1 - r->len;
	memcpy(r->body + r->len, p, take);
	r->len += take;
	r->body[r->len] = '\0';
	return sz * n;
}

/* TLS options: which CA to trust and which client identity to present. */
struct tls {
	const char *ca;
	const char *cert; /* NULL: no client certificate */
	const char *key;
	long max_version; /* 0 or CURL_SSLVERSION_MAX_* */
};

static const struct tls good = {CERTS "/ca.crt", CERTS "/client.crt", CERTS "/client.key", 0};

static void setup_easy(CURL *h, int port, const char *method, const char *path, const char *body,
                       size_t len, const struct tls *t, struct resp *r)
{
	char url[512];
	snprintf(url, sizeof(url), "https://127.0.0.1:%d%s", port, path);
	memset(r, 0, sizeof(*r));
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(h, CURLOPT_CAINFO, t->ca);
	curl_easy_setopt(h, CURLOPT_SSLCERT, t->cert);
	curl_easy_setopt(h, CURLOPT_SSLKEY, t->key);
	curl_easy_setopt(h, CURLOPT_SSLVERSION, t->max_version ? t->max_version : 0L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 10L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
	if (body) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	} else {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, NULL);
		curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	}
}

static void request_on(CURL *h, int port, const char *method, const char *path, const char *body,
                       size_t len, const struct tls *t, struct resp *r)
{
	setup_easy(h, port, method, path, body, len, t, r);
	r->rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->code);
}

static void request(int port, const char *method, const char *path, const char *body,
                    const struct tls *t, struct resp *r)
{
	CURL *h = curl_easy_init();
	request_on(h, port, method, path, body, body ? strlen(body) : 0, t, r);
	curl_easy_cleanup(h);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		fail_msg("cannot open %s", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc((size_t)n + 1);
	assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
	b[n] = '\0';
	fclose(f);
	return b;
}

static void wait_healthy(const struct drake *d, const struct tls *t)
{
	double deadline = now() + 15;
	struct resp r;
	for (;;) {
		request(d->port, "GET", "/healthz", NULL, t, &r);
		if (r.rc == CURLE_OK && r.code == 200)
			return;
		int status;
		if (waitpid(d->pid, &status, WNOHANG) == d->pid)
			fail_msg("drake exited before serving; log: %s", d->log);
		if (now() > deadline)
			fail_msg("drake not healthy within 15 s; log: %s", d->log);
		struct timespec ts = {0, 20 * 1000 * 1000}; /* poll interval, bounded by deadline */
		nanosleep(&ts, NULL);
	}
}

/* Starts drake with the common flags plus extra ones (NULL-terminated). */
static void start_drake(struct drake *d, const char *tag, const char *cert, const char *key,
                        const char *ca, ...)
{
	static char port[16];
	d->port = free_port();
	snprintf(port, sizeof(port), "%d", d->port);
	snprintf(d->log, sizeof(d->log), DIR "/drake-%s.log", tag);
	const char *bin = getenv("DRAKE_BIN");
	if (!bin)
		fail_msg("DRAKE_BIN is not set");
	const char *argv[40] = {bin,
	                        "serve",
	                        "--port",
	                        port,
	                        "--tls-cert",
	                        cert,
	                        "--tls-key",
	                        key,
	                        "--client-ca",
	                        ca,
	                        "--max-body",
	                        "1Mi",
	                        "--max-nodes",
	                        "100",
	                        "--request-timeout",
	                        "1s",
	                        "--shutdown-grace",
	                        "5s",
	                        "--log-level",
	                        "debug"};
	size_t n = 20;
	va_list ap;
	va_start(ap, ca);
	for (const char *a; (a = va_arg(ap, const char *)) && n < 38;)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 2, d->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	/* The environment must not hand drake a kubeconfig the test did not ask for. */
	unsetenv("DRAKE_KUBECONFIG");
	unsetenv("KUBERNETES_SERVICE_HOST");
	if (posix_spawn(&d->pid, bin, &fa, NULL, (char *const *)argv, environ) != 0)
		fail_msg("cannot start %s", bin);
	posix_spawn_file_actions_destroy(&fa);
}

static int stop_drake(struct drake *d)
{
	if (d->pid <= 0)
		return -1;
	kill(d->pid, SIGTERM);
	int status = 0;
	waitpid(d->pid, &status, 0);
	d->pid = 0;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

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

static void test_http2_is_not_negotiated(void **state)
{
	CURL *h = curl_easy_init();
	struct resp r;
	setup_easy(h, g.port, "GET", "/healthz", NULL, 0, &good, &r);
	curl_easy_setopt(h, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS);
	assert_int_equal(curl_easy_perform(h), CURLE_OK);
	long v = 0;
	curl_easy_getinfo(h, CURLINFO_HTTP_VERSION, &v);
	assert_int_equal(v, CURL_HTTP_VERSION_1_1);
	curl_easy_cleanup(h);
}

static void test_clients_without_a_trusted_certificate_are_refused(void **state)
{
	const struct tls none = {CERTS "/ca.crt", NULL, NULL, 0};
	const struct tls rogue = {CERTS "/ca.crt", CERTS "/rogue.crt", CERTS "/rogue.key", 0};
	const struct tls old = {CERTS "/ca.crt", CERTS "/client.crt", CERTS "/client.key",
	                        CURL_SSLVERSION_TLSv1_0 | CURL_SSLVERSION_MAX_TLSv1_1};
	struct resp r;
	request(g.port, "GET", "/healthz", NULL, &none, &r);
	assert_int_not_equal(r.rc, CURLE_OK);
	request(g.port, "GET", "/healthz", NULL, &rogue, &r);
	assert_int_not_equal(r.rc, CURLE_OK);
	request(g.port, "GET", "/healthz", NULL, &old, &r);
	assert_int_not_equal(r.rc, CURLE_OK);
	request(g.port, "GET", "/healthz", NULL, &good, &r);
	assert_int_equal(r.code, 200);
}

static int tcp_connect(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET,
	                        .sin_port = htons((uint16_t)port),
	                        .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0)
		fail_msg("connect: %s", strerror(errno));
	return fd;
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
	start_drake(&d, "reload", LIVE "/server.crt", LIVE "/server.key", LIVE "/ca.crt", NULL);
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

/* A one-connection fake API server: enough to hold a Binding POST open. */
static int listen_loopback(int *port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t l = sizeof(a);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 4) ||
	    getsockname(fd, (struct sockaddr *)&a, &l))
		fail_msg("listen: %s", strerror(errno));
	*port = ntohs(a.sin_port);
	return fd;
}

/* Drives the multi handle until fd is readable or the deadline passes. */
static bool pump_until_readable(CURLM *m, int fd, double seconds)
{
	double deadline = now() + seconds;
	int running;
	while (now() < deadline) {
		curl_multi_perform(m, &running);
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, 20) > 0)
			return true;
	}
	return false;
}

static void test_sigterm_answers_a_bind_in_flight_before_exiting(void **state)
{
	int api_port;
	int lfd = listen_loopback(&api_port);
	char kubeconfig[] = DIR "/fake-api.kubeconfig";
	FILE *f = fopen(kubeconfig, "w");
	fprintf(f,
	        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
	        "clusters:\n- name: k\n  cluster:\n    server: http://127.0.0.1:%d\n"
	        "users:\n- name: u\n  user:\n    token: t0ken\n"
	        "contexts:\n- name: c\n  context:\n    cluster: k\n    user: u\n",
	        api_port);
	fclose(f);
	struct drake d;
	start_drake(&d, "sigterm", CERTS "/server.crt", CERTS "/server.key", CERTS "/ca.crt",
	            "--kubeconfig", kubeconfig, NULL);
	wait_healthy(&d, &good);

	CURLM *m = curl_multi_init();
	CURL *h = curl_easy_init();
	struct resp r;
	char *body = slurp("tests/golden/bind.request.json");
	setup_easy(h, d.port, "POST", "/scheduler/bind", body, strlen(body), &good, &r);
	curl_multi_add_handle(m, h);

	/* drake's Binding POST arrives at the fake API server and is held. */
	assert_true(pump_until_readable(m, lfd, 10));
	int afd = accept(lfd, NULL, NULL);
	assert_true(afd >= 0);
	char req[8192];
	size_t got = 0;
	while (!strstr(req, "\"kind\":\"Binding\"") && got < sizeof(req) - 1) {
		assert_true(pump_until_readable(m, afd, 10));
		ssize_t n = read(afd, req + got, sizeof(req) - 1 - got);
		assert_true(n > 0);
		got += (size_t)n;
		req[got] = '\0';
	}
	assert_non_null(strstr(req, "POST /api/v1/namespaces/ml/pods/mnist-worker-1/binding"));
	assert_non_null(strstr(req, "Authorization: Bearer t0ken"));

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

	const char *ok = "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\n"
	                 "Content-Length: 36\r\n\r\n{\"kind\":\"Status\",\"status\":\"Success\"}";
	assert_int_equal(write(afd, ok, strlen(ok)), (ssize_t)strlen(ok));
	int running = 1;
	deadline = now() + 10;
	while (running && now() < deadline) {
		curl_multi_perform(m, &running);
		curl_multi_poll(m, NULL, 0, 50, NULL);
	}
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r.code);
	assert_int_equal(r.code, 200);
	assert_string_equal(r.body, "{\"Error\":\"\"}");
	int status = 0;
	assert_int_equal(waitpid(d.pid, &status, 0), d.pid);
	d.pid = 0;
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	curl_multi_remove_handle(m, h);
	curl_easy_cleanup(h);
	curl_multi_cleanup(m);
	close(afd);
	close(lfd);
	free(body);
}

static void test_bind_reports_the_api_servers_own_message(void **state)
{
	int api_port;
	int lfd = listen_loopback(&api_port);
	char kubeconfig[] = DIR "/fake-api-404.kubeconfig";
	FILE *f = fopen(kubeconfig, "w");
	fprintf(f,
	        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
	        "clusters:\n- name: k\n  cluster:\n    server: http://127.0.0.1:%d\n"
	        "users:\n- name: u\n  user: {}\n"
	        "contexts:\n- name: c\n  context:\n    cluster: k\n    user: u\n",
	        api_port);
	fclose(f);
	struct drake d;
	start_drake(&d, "bind404", CERTS "/server.crt", CERTS "/server.key", CERTS "/ca.crt",
	            "--kubeconfig", kubeconfig, NULL);
	wait_healthy(&d, &good);
	CURLM *m = curl_multi_init();
	CURL *h = curl_easy_init();
	struct resp r;
	char *body = slurp("tests/golden/bind.request.json");
	setup_easy(h, d.port, "POST", "/scheduler/bind", body, strlen(body), &good, &r);
	curl_multi_add_handle(m, h);
	assert_true(pump_until_readable(m, lfd, 10));
	int afd = accept(lfd, NULL, NULL);
	char req[8192];
	size_t got = 0;
	req[0] = '\0';
	while (!strstr(req, "\"kind\":\"Binding\"") && got < sizeof(req) - 1) {
		assert_true(pump_until_readable(m, afd, 10));
		ssize_t n = read(afd, req + got, sizeof(req) - 1 - got);
		assert_true(n > 0);
		got += (size_t)n;
		req[got] = '\0';
	}
	const char *msg = "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"pods "
	                  "\\\"mnist-worker-1\\\" not found\",\"code\":404}";
	char resp[512];
	snprintf(resp, sizeof(resp),
	         "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\n"
	         "Content-Length: %zu\r\n\r\n%s",
	         strlen(msg), msg);
	assert_int_equal(write(afd, resp, strlen(resp)), (ssize_t)strlen(resp));
	int running = 1;
	double deadline = now() + 10;
	while (running && now() < deadline) {
		curl_multi_perform(m, &running);
		curl_multi_poll(m, NULL, 0, 50, NULL);
	}
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r.code);
	assert_int_equal(r.code, 200);
	assert_string_equal(r.body, "{\"Error\":\"binding ml/mnist-worker-1 to gpu-a: pods "
	                            "\\\"mnist-worker-1\\\" not found (HTTP 404)\"}");
	curl_multi_remove_handle(m, h);
	curl_easy_cleanup(h);
	curl_multi_cleanup(m);
	close(afd);
	close(lfd);
	free(body);
	assert_int_equal(stop_drake(&d), 0);
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
	    cmocka_unit_test(test_http2_is_not_negotiated),
	    cmocka_unit_test(test_clients_without_a_trusted_certificate_are_refused),
	    cmocka_unit_test(test_plain_http_on_the_tls_port_is_refused),
	    cmocka_unit_test(test_a_stalled_client_is_timed_out_without_affecting_others),
	    cmocka_unit_test(test_sighup_reloads_certificates_without_dropping_the_listener),
	    cmocka_unit_test(test_sigterm_answers_a_bind_in_flight_before_exiting),
	    cmocka_unit_test(test_bind_reports_the_api_servers_own_message),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
