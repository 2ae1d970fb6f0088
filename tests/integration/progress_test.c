/*
 * progress_test.c - `drake progress`, the real binary, as a replica's pod
 * runs it: what it sends (against a one-shot HTTPS responder here, which
 * records the request and answers as told), what it prints and exits with
 * for each answer, and its refusals of bad usage before anything is sent.
 * Against a real `drake serve` without the controller it is refused with
 * drake's own 503 message.
 *
 * DRAKE_BIN names the binary. Certificates come from hack/gen-certs.sh
 * under build/itest/.
 */
#include "tests/integration/harness.h"

#include "extender/api_codec.h"

#define TOKEN DIR "/progress-token"

struct run {
	int rc;
	char out[4096], err[4096];
};

static void read_file(const char *path, char *buf, size_t len)
{
	buf[0] = '\0';
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	size_t n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
}

/* Starts drake progress with args (NULL-terminated) and env (NULL or one
 * "NAME=value" added to a clean environment). */
static pid_t spawn_cli(const char *env, const char *const *args)
{
	const char *bin = getenv("DRAKE_BIN");
	if (!bin)
		fail_msg("DRAKE_BIN is not set");
	const char *argv[32] = {bin, "progress"};
	size_t n = 2;
	for (; args[n - 2] && n < 31; n++)
		argv[n] = args[n - 2];
	argv[n] = NULL;
	char *envp[4] = {"PATH=/usr/bin:/bin", (char *)env, NULL};
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, DIR "/progress.out", O_WRONLY | O_CREAT | O_TRUNC,
	                                 0644);
	posix_spawn_file_actions_addopen(&fa, 2, DIR "/progress.err", O_WRONLY | O_CREAT | O_TRUNC,
	                                 0644);
	pid_t pid;
	if (posix_spawn(&pid, bin, &fa, NULL, (char *const *)argv, envp) != 0)
		fail_msg("cannot start %s", bin);
	posix_spawn_file_actions_destroy(&fa);
	return pid;
}

static void wait_cli(pid_t pid, struct run *r)
{
	int status = 0;
	waitpid(pid, &status, 0);
	r->rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	read_file(DIR "/progress.out", r->out, sizeof(r->out));
	read_file(DIR "/progress.err", r->err, sizeof(r->err));
}

static void run_cli(const char *env, const char *const *args, struct run *r)
{
	wait_cli(spawn_cli(env, args), r);
}

/* ---- a one-shot HTTPS responder ---- */

struct responder {
	int lfd, port;
	SSL_CTX *ctx;
	char request[8192]; /* head and body as received */
};

static void responder_start(struct responder *s)
{
	memset(s, 0, sizeof(*s));
	s->ctx = SSL_CTX_new(TLS_server_method());
	if (SSL_CTX_use_certificate_chain_file(s->ctx, CERTS "/server.crt") != 1 ||
	    SSL_CTX_use_PrivateKey_file(s->ctx, CERTS "/server.key", SSL_FILETYPE_PEM) != 1)
		fail_msg("responder: cannot load the server certificate");
	s->lfd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t l = sizeof(a);
	if (bind(s->lfd, (struct sockaddr *)&a, sizeof(a)) || listen(s->lfd, 4) ||
	    getsockname(s->lfd, (struct sockaddr *)&a, &l))
		fail_msg("responder: listen: %s", strerror(errno));
	s->port = ntohs(a.sin_port);
}

/* Accepts one connection, reads one request, answers it with code, extra
 * header lines (each ending in \r\n) and body. */
static void responder_answer(struct responder *s, int code, const char *headers, const char *body)
{
	struct pollfd p = {.fd = s->lfd, .events = POLLIN};
	if (poll(&p, 1, 10000) != 1)
		fail_msg("responder: no connection within 10 s");
	int fd = accept(s->lfd, NULL, NULL);
	SSL *ssl = SSL_new(s->ctx);
	SSL_set_fd(ssl, fd);
	if (SSL_accept(ssl) != 1)
		fail_msg("responder: TLS handshake failed");
	size_t n = 0;
	for (;;) {
		int k = SSL_read(ssl, s->request + n, (int)(sizeof(s->request) - 1 - n));
		if (k <= 0)
			break;
		n += (size_t)k;
		s->request[n] = '\0';
		char *end = strstr(s->request, "\r\n\r\n");
		char *cl = strcasestr(s->request, "Content-Length: ");
		if (end && (!cl || strlen(end + 4) >= strtoul(cl + 16, NULL, 10)))
			break;
	}
	char out[1024];
	int len = snprintf(out, sizeof(out),
	                   "HTTP/1.1 %d X\r\nContent-Type: application/json\r\n%s"
	                   "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
	                   code, headers, strlen(body), body);
	SSL_write(ssl, out, len);
	SSL_shutdown(ssl);
	SSL_free(ssl);
	close(fd);
}

static void responder_stop(struct responder *s)
{
	close(s->lfd);
	SSL_CTX_free(s->ctx);
}

static int group_setup(void **state)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	mkdir("build", 0755);
	mkdir(DIR, 0755);
	if (system("hack/gen-certs.sh " CERTS " >/dev/null") != 0)
		return -1;
	FILE *f = fopen(TOKEN, "w");
	if (!f)
		return -1;
	fputs("eyJhbGciOiJSUzI1NiJ9.pod-token.sig\n", f); /* as mounted: with a newline */
	fclose(f);
	return 0;
}

static int group_teardown(void **state)
{
	stop_leftover_drakes();
	curl_global_cleanup();
	return 0;
}

/* ---- tests ---- */

static void test_a_report_carries_the_pods_token_and_a_body_drake_accepts(void **state)
{
	struct responder s;
	responder_start(&s);
	char url[128];
	snprintf(url, sizeof(url), "DRAKE_PROGRESS_URL=https://127.0.0.1:%d/v1/progress", s.port);
	const char *args[] = {"--step",
	                      "7",
	                      "--value",
	                      "0.25",
	                      "--metric",
	                      "loss",
	                      "--total-steps",
	                      "100",
	                      "--token-file",
	                      TOKEN,
	                      "--ca-file",
	                      CERTS "/ca.crt",
	                      NULL};
	pid_t pid = spawn_cli(url, args);
	responder_answer(&s, 202, "", "{\"accepted\":true}");
	struct run r;
	wait_cli(pid, &r);
	responder_stop(&s);
	if (r.rc != 0)
		fail_msg("exit %d, stderr: %s", r.rc, r.err);
	assert_string_equal(r.out, "drake accepted step 7\n");
	assert_non_null(strstr(s.request, "POST /v1/progress HTTP/1.1\r\n"));
	assert_non_null(strstr(s.request, "\r\nAuthorization: Bearer "
	                                  "eyJhbGciOiJSUzI1NiJ9.pod-token.sig\r\n"));
	assert_non_null(strstr(s.request, "\r\nContent-Type: application/json\r\n"));
	/* the body is one drake's decoder takes, with the values given */
	const char *body = strstr(s.request, "\r\n\r\n") + 4;
	struct api_progress_body b;
	char msg[256];
	assert_int_equal(api_progress_decode(body, strlen(body), &b, msg, sizeof(msg)), DRAKE_OK);
	assert_int_equal(b.step, 7);
	assert_true(b.value == 0.25);
	assert_true(b.loss);
	assert_int_equal(b.total_steps, 100);
	assert_string_equal(b.pod, ""); /* the token names the pod */
}

static void test_a_refusal_exits_1_with_drakes_reason_and_when_to_retry(void **state)
{
	struct responder s;
	responder_start(&s);
	char url[128];
	snprintf(url, sizeof(url), "https://127.0.0.1:%d/v1/progress", s.port);
	const char *args[] = {"--step",       "1",   "--value",   "0.5",           "--url", url,
	                      "--token-file", TOKEN, "--ca-file", CERTS "/ca.crt", NULL};
	pid_t pid = spawn_cli(NULL, args);
	responder_answer(&s, 429, "Retry-After: 3\r\n",
	                 "{\"Error\":\"pod ml/job-worker-0 reports too often\"}");
	struct run r;
	wait_cli(pid, &r);
	assert_int_equal(r.rc, 1);
	assert_string_equal(r.err,
	                    "drake progress: refused (HTTP 429): pod ml/job-worker-0 reports "
	                    "too often (retry after 3 s)\n");
	pid = spawn_cli(NULL, args);
	responder_answer(&s, 403, "",
	                 "{\"Error\":\"pod ml/x is not a replica of a TFJob drake "
	                 "manages\"}");
	wait_cli(pid, &r);
	responder_stop(&s);
	assert_int_equal(r.rc, 1);
	assert_non_null(strstr(r.err, "refused (HTTP 403): pod ml/x is not a replica"));
	/* the accuracy default went out */
	assert_non_null(strstr(s.request, "\"metric\":\"accuracy\""));
}

static void test_a_drake_without_the_controller_refuses_with_503(void **state)
{
	struct drake d;
	start_drake(&d, "progress", CERTS "/server.crt", CERTS "/server.key", CERTS "/ca.crt",
	            NULL);
	wait_healthy(&d, &good);
	char url[128];
	snprintf(url, sizeof(url), "https://127.0.0.1:%d/v1/progress", d.port);
	const char *args[] = {"--step",       "1",   "--value",   "0.5",           "--url", url,
	                      "--token-file", TOKEN, "--ca-file", CERTS "/ca.crt", NULL};
	struct run r;
	run_cli(NULL, args, &r);
	assert_int_equal(stop_drake(&d), 0);
	assert_int_equal(r.rc, 1);
	assert_non_null(strstr(r.err, "drake progress: refused (HTTP 503): progress reports need "
	                              "drake's TFJob controller"));
}

static void test_bad_usage_and_missing_pieces_are_refused_before_sending(void **state)
{
	const char *ca = CERTS "/ca.crt";
	const struct {
		const char *name;
		const char *env;
		const char *args[12];
		int rc;
		const char *err;
	} cases[] = {
	    {"no url", NULL, {"--step", "1", "--value", "1", NULL}, 2, "set DRAKE_PROGRESS_URL"},
	    {"plain http",
	     "DRAKE_PROGRESS_URL=http://127.0.0.1:1/v1/progress",
	     {"--step", "1", "--value", "1", NULL},
	     2,
	     "must be https://"},
	    {"no step",
	     "DRAKE_PROGRESS_URL=https://127.0.0.1:1/v1/progress",
	     {"--value", "1", NULL},
	     2,
	     "--step: a whole number >= 0 is required"},
	    {"a negative step",
	     "DRAKE_PROGRESS_URL=https://127.0.0.1:1/v1/progress",
	     {"--step", "-1", "--value", "1", NULL},
	     2,
	     "--step"},
	    {"a value that is no number",
	     "DRAKE_PROGRESS_URL=https://127.0.0.1:1/v1/progress",
	     {"--step", "1", "--value", "high", NULL},
	     2,
	     "--value: a finite number"},
	    {"an infinite value",
	     "DRAKE_PROGRESS_URL=https://127.0.0.1:1/v1/progress",
	     {"--step", "1", "--value", "inf", NULL},
	     2,
	     "--value: a finite number"},
	    {"an unknown metric",
	     "DRAKE_PROGRESS_URL=https://127.0.0.1:1/v1/progress",
	     {"--step", "1", "--value", "1", "--metric", "f1", NULL},
	     2,
	     "accuracy or loss"},
	    {"zero total steps",
	     "DRAKE_PROGRESS_URL=https://127.0.0.1:1/v1/progress",
	     {"--step", "1", "--value", "1", "--total-steps", "0", NULL},
	     2,
	     "--total-steps"},
	    {"no token mounted",
	     "DRAKE_PROGRESS_URL=https://127.0.0.1:1/v1/progress",
	     {"--step", "1", "--value", "1", "--token-file", DIR "/no-such-token", NULL},
	     1,
	     "automountServiceAccountToken"},
	    {"nobody listening",
	     "DRAKE_PROGRESS_URL=https://127.0.0.1:1/v1/progress",
	     {"--step", "1", "--value", "1", "--token-file", TOKEN, "--ca-file", ca, NULL},
	     1,
	     "could not reach drake at https://127.0.0.1:1/v1/progress"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct run r;
		run_cli(cases[i].env, cases[i].args, &r);
		if (r.rc != cases[i].rc || !strstr(r.err, cases[i].err))
			fail_msg("%s: exit %d, stderr %s; want %d with \"%s\"", cases[i].name, r.rc,
			         r.err, cases[i].rc, cases[i].err);
	}
	struct run r;
	const char *help[] = {"--help", NULL};
	run_cli(NULL, help, &r);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "usage: drake progress --step N --value X"));
	assert_non_null(strstr(r.out, "env: DRAKE_PROGRESS_URL"));
}

/* The client pid aborts the TLS handshake with s and exits 1 saying so. */
static void expect_aborted_handshake(struct responder *s, pid_t pid)
{
	struct pollfd p = {.fd = s->lfd, .events = POLLIN};
	assert_int_equal(poll(&p, 1, 10000), 1);
	int fd = accept(s->lfd, NULL, NULL);
	SSL *ssl = SSL_new(s->ctx);
	SSL_set_fd(ssl, fd);
	assert_int_not_equal(SSL_accept(ssl), 1); /* the client aborts the handshake */
	SSL_free(ssl);
	close(fd);
	struct run r;
	wait_cli(pid, &r);
	assert_int_equal(r.rc, 1);
	assert_non_null(strstr(r.err, "could not reach drake"));
}

/* drake's certificate must verify against the CA given: a pod never sends
 * its token to a server it cannot authenticate. */
static void test_a_server_the_ca_does_not_vouch_for_gets_no_token(void **state)
{
	struct responder s;
	responder_start(&s);
	char url[128];
	snprintf(url, sizeof(url), "https://127.0.0.1:%d/v1/progress", s.port);
	const char *args[] = {"--step",
	                      "1",
	                      "--value",
	                      "0.5",
	                      "--url",
	                      url,
	                      "--token-file",
	                      TOKEN,
	                      "--ca-file",
	                      CERTS "/other-ca.crt",
	                      NULL};
	pid_t pid = spawn_cli(NULL, args);
	expect_aborted_handshake(&s, pid);
	responder_stop(&s);
}

/* DRAKE_PROGRESS_CA_PEM=<the PEM of file>, for spawn_cli's env. */
static char *ca_pem_env(const char *file)
{
	static char env[16384];
	char pem[16000];
	read_file(file, pem, sizeof(pem));
	snprintf(env, sizeof(env), "DRAKE_PROGRESS_CA_PEM=%s", pem);
	return env;
}

/* The controller writes drake's CA into each pod as DRAKE_PROGRESS_CA_PEM;
 * it verifies drake in place of --ca-file (the cluster's CA by default). */
static void test_the_ca_pem_from_the_pods_environment_is_the_one_that_verifies(void **state)
{
	struct responder s;
	responder_start(&s);
	char url[128];
	snprintf(url, sizeof(url), "https://127.0.0.1:%d/v1/progress", s.port);
	const char *args[] = {"--step",       "3",   "--value",   "0.5",
	                      "--url",        url,   "--ca-file", CERTS "/other-ca.crt",
	                      "--token-file", TOKEN, NULL};
	pid_t pid = spawn_cli(ca_pem_env(CERTS "/ca.crt"), args);
	responder_answer(&s, 202, "", "{\"accepted\":true}");
	struct run r;
	wait_cli(pid, &r);
	if (r.rc != 0)
		fail_msg("exit %d, stderr: %s", r.rc, r.err);
	assert_string_equal(r.out, "drake accepted step 3\n");
	/* and a PEM of another CA is not rescued by a --ca-file that would do */
	const char *good_file[] = {"--step",       "3",   "--value",   "0.5",
	                           "--url",        url,   "--ca-file", CERTS "/ca.crt",
	                           "--token-file", TOKEN, NULL};
	pid = spawn_cli(ca_pem_env(CERTS "/other-ca.crt"), good_file);
	expect_aborted_handshake(&s, pid);
	responder_stop(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_a_report_carries_the_pods_token_and_a_body_drake_accepts),
	    cmocka_unit_test(test_a_refusal_exits_1_with_drakes_reason_and_when_to_retry),
	    cmocka_unit_test(test_a_drake_without_the_controller_refuses_with_503),
	    cmocka_unit_test(test_bad_usage_and_missing_pieces_are_refused_before_sending),
	    cmocka_unit_test(test_a_server_the_ca_does_not_vouch_for_gets_no_token),
	    cmocka_unit_test(test_the_ca_pem_from_the_pods_environment_is_the_one_that_verifies),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
