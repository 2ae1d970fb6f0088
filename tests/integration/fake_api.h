/*
 * fake_api.h - a scripted stand-in for the API server in integration tests
 * (the e2e suite uses the real one). It accepts any number of HTTP/1.1
 * connections on loopback, parses each request, records it, and passes it
 * to the test's handler, which answers at once or holds it to answer later:
 * enough to control exactly when drake's Binding POSTs complete.
 */
#ifndef DRAKE_TESTS_FAKE_API_H
#define DRAKE_TESTS_FAKE_API_H

#include "tests/integration/harness.h"

#define FAKE_MAX_CONNS 32
#define FAKE_MAX_REQS  256
#define FAKE_BUF       (1 << 16)

struct fake_req {
	char method[16];
	char path[512];
	char *body;
	int conn;
	bool bearer; /* carried "Authorization: Bearer t0ken" */
	bool answered;
	int code; /* what it was answered with */
};

struct fake_api;
/* Answers r with fake_api_reply() (returning true), or returns false to hold it. */
typedef bool (*fake_handler)(struct fake_api *f, struct fake_req *r, void *arg);

struct fake_api {
	int lfd, port;
	int conns[FAKE_MAX_CONNS];
	char *in[FAKE_MAX_CONNS];
	size_t in_len[FAKE_MAX_CONNS];
	int n_conns;
	struct fake_req reqs[FAKE_MAX_REQS];
	size_t n_reqs;
	fake_handler handler;
	void *arg;
};

static inline void fake_api_start(struct fake_api *f, fake_handler h, void *arg)
{
	memset(f, 0, sizeof(*f));
	f->handler = h;
	f->arg = arg;
	f->lfd = socket(AF_INET, SOCK_STREAM, 0);
	int one = 1;
	setsockopt(f->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t l = sizeof(a);
	if (bind(f->lfd, (struct sockaddr *)&a, sizeof(a)) || listen(f->lfd, 16) ||
	    getsockname(f->lfd, (struct sockaddr *)&a, &l))
		fail_msg("fake api: listen: %s", strerror(errno));
	f->port = ntohs(a.sin_port);
}

/* A kubeconfig pointing at the fake API server (plain HTTP, a token). */
static inline void fake_api_kubeconfig(const struct fake_api *f, const char *path)
{
	FILE *k = fopen(path, "w");
	if (!k)
		fail_msg("cannot write %s", path);
	fprintf(k,
	        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
	        "clusters:\n- name: k\n  cluster:\n    server: http://127.0.0.1:%d\n"
	        "users:\n- name: u\n  user:\n    token: t0ken\n"
	        "contexts:\n- name: c\n  context:\n    cluster: k\n    user: u\n",
	        f->port);
	fclose(k);
}

static inline void fake_api_reply(struct fake_api *f, struct fake_req *r, int code,
                                  const char *body)
{
	char head[256];
	int n = snprintf(head, sizeof(head),
	                 "HTTP/1.1 %d X\r\nContent-Type: application/json\r\n"
	                 "Content-Length: %zu\r\n\r\n",
	                 code, strlen(body));
	if (write(r->conn, head, (size_t)n) != n ||
	    write(r->conn, body, strlen(body)) != (ssize_t)strlen(body))
		fail_msg("fake api: write: %s", strerror(errno));
	r->answered = true;
	r->code = code;
}

/* Takes every complete request buffered on connection i. */
static inline void fake_api_parse(struct fake_api *f, int i)
{
	for (;;) {
		char *buf = f->in[i];
		char *end = buf ? memmem(buf, f->in_len[i], "\r\n\r\n", 4) : NULL;
		if (!end)
			return;
		size_t hlen = (size_t)(end - buf) + 4;
		size_t clen = 0;
		char *cl = memmem(buf, hlen, "Content-Length: ", 16);
		if (cl)
			clen = strtoul(cl + 16, NULL, 10);
		if (f->in_len[i] < hlen + clen)
			return;
		if (f->n_reqs == FAKE_MAX_REQS)
			fail_msg("fake api: too many requests");
		struct fake_req *r = &f->reqs[f->n_reqs++];
		sscanf(buf, "%15s %511s", r->method, r->path);
		r->body = strndup(buf + hlen, clen);
		r->bearer = memmem(buf, hlen, "Authorization: Bearer t0ken\r\n", 29) != NULL;
		r->conn = f->conns[i];
		memmove(buf, buf + hlen + clen, f->in_len[i] - hlen - clen);
		f->in_len[i] -= hlen + clen;
		if (f->handler(f, r, f->arg))
			r->answered = true;
	}
}

/* Serves (and drives m, if given) until until(arg) or the deadline; false
 * on timeout. */
static inline bool fake_api_pump(struct fake_api *f, CURLM *m, double seconds,
                                 bool (*until)(struct fake_api *, void *), void *arg)
{
	double deadline = now() + seconds;
	while (!until(f, arg)) {
		if (now() > deadline)
			return false;
		int running;
		if (m)
			curl_multi_perform(m, &running);
		struct pollfd p[FAKE_MAX_CONNS + 1];
		p[0] = (struct pollfd){.fd = f->lfd, .events = POLLIN};
		for (int i = 0; i < f->n_conns; i++)
			p[i + 1] = (struct pollfd){.fd = f->conns[i], .events = POLLIN};
		if (poll(p, (nfds_t)f->n_conns + 1, 10) <= 0)
			continue;
		if ((p[0].revents & POLLIN) && f->n_conns < FAKE_MAX_CONNS) {
			int c = accept(f->lfd, NULL, NULL);
			if (c >= 0) {
				f->conns[f->n_conns] = c;
				f->in[f->n_conns] = malloc(FAKE_BUF);
				f->in_len[f->n_conns++] = 0;
			}
		}
		for (int i = 0; i < f->n_conns; i++) {
			if (!(p[i + 1].revents & POLLIN) || f->conns[i] < 0)
				continue;
			ssize_t n =
			    read(f->conns[i], f->in[i] + f->in_len[i], FAKE_BUF - f->in_len[i]);
			if (n <= 0) {
				close(f->conns[i]);
				f->conns[i] = -1;
				continue;
			}
			f->in_len[i] += (size_t)n;
			fake_api_parse(f, i);
		}
	}
	return true;
}

static inline size_t fake_api_count(const struct fake_api *f, const char *method,
                                    const char *path_part)
{
	size_t n = 0;
	for (size_t i = 0; i < f->n_reqs; i++)
		if (strcmp(f->reqs[i].method, method) == 0 && strstr(f->reqs[i].path, path_part))
			n++;
	return n;
}

static inline void fake_api_stop(struct fake_api *f)
{
	for (int i = 0; i < f->n_conns; i++) {
		if (f->conns[i] >= 0)
			close(f->conns[i]);
		free(f->in[i]);
	}
	for (size_t i = 0; i < f->n_reqs; i++)
		free(f->reqs[i].body);
	close(f->lfd);
}

/* Runs the transfers on m to completion (bounded). */
static inline bool fake_api_finish(struct fake_api *f, CURLM *m, double seconds);

struct multi_idle {
	CURLM *m;
};

static inline bool multi_done(struct fake_api *f, void *arg)
{
	struct multi_idle *mi = arg;
	int running = 0;
	curl_multi_perform(mi->m, &running);
	return running == 0;
}

static inline bool fake_api_finish(struct fake_api *f, CURLM *m, double seconds)
{
	struct multi_idle mi = {m};
	return fake_api_pump(f, m, seconds, multi_done, &mi);
}

#endif
