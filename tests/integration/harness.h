/*
 * harness.h - what the integration tests share: starting the real drake
 * binary on a free loopback port with throwaway certificates, talking to it
 * with libcurl over mTLS, and stopping it by its PID. Header-only (static
 * inline), because each test file is its own program.
 */
#ifndef DRAKE_TESTS_HARNESS_H
#define DRAKE_TESTS_HARNESS_H

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

struct drake {
	pid_t pid;
	int port;
	char log[256];
};

static inline double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline int free_port(void)
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

/* A plain TCP connection to drake's port on loopback. */
static inline int tcp_connect(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET,
	                        .sin_port = htons((uint16_t)port),
	                        .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0)
		fail_msg("connect: %s", strerror(errno));
	return fd;
}

static inline size_t on_body(char *p, size_t sz, size_t n, void *arg)
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

static inline void setup_easy(CURL *h, int port, const char *method, const char *path,
                              const char *body, size_t len, const struct tls *t, struct resp *r)
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
	/* libcurl offers h2 over TLS and drake takes it; DRAKE_TEST_HTTP=1.1
	 * runs a suite over HTTP/1.1 instead (make itest runs both) */
	const char *proto = getenv("DRAKE_TEST_HTTP");
	curl_easy_setopt(h, CURLOPT_HTTP_VERSION,
	                 proto && !strcmp(proto, "1.1") ? CURL_HTTP_VERSION_1_1
	                                                : CURL_HTTP_VERSION_2TLS);
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

static inline void request_on(CURL *h, int port, const char *method, const char *path,
                              const char *body, size_t len, const struct tls *t, struct resp *r)
{
	setup_easy(h, port, method, path, body, len, t, r);
	r->rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->code);
}

static inline void request(int port, const char *method, const char *path, const char *body,
                           const struct tls *t, struct resp *r)
{
	CURL *h = curl_easy_init();
	request_on(h, port, method, path, body, body ? strlen(body) : 0, t, r);
	curl_easy_cleanup(h);
}

static inline char *slurp(const char *path)
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

static inline void wait_healthy(const struct drake *d, const struct tls *t)
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

/* Every drake started and not yet stopped. A failed assertion makes cmocka
 * leave the test midway, past its stop_drake(): the group teardown (and, if
 * the program dies, atexit) stops what is left, by PID. */
static pid_t harness_pids[64];
static size_t harness_npids;

static inline void stop_leftover_drakes(void)
{
	for (size_t i = 0; i < harness_npids; i++) {
		kill(harness_pids[i], SIGKILL);
		waitpid(harness_pids[i], NULL, 0);
	}
	harness_npids = 0;
}

static inline void track_drake(pid_t pid)
{
	static bool registered;
	if (!registered)
		registered = atexit(stop_leftover_drakes) == 0;
	if (harness_npids < sizeof(harness_pids) / sizeof(harness_pids[0]))
		harness_pids[harness_npids++] = pid;
}

/* Starts drake with the common flags plus extra ones (NULL-terminated). */
static inline void start_drake(struct drake *d, const char *tag, const char *cert, const char *key,
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
	track_drake(d->pid);
	posix_spawn_file_actions_destroy(&fa);
}

static inline int stop_drake(struct drake *d)
{
	if (d->pid <= 0)
		return -1;
	kill(d->pid, SIGTERM);
	int status = 0;
	waitpid(d->pid, &status, 0);
	for (size_t i = 0; i < harness_npids; i++)
		if (harness_pids[i] == d->pid)
			harness_pids[i] = harness_pids[--harness_npids];
	d->pid = 0;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

#endif
