/*
 * server.c - the HTTPS listener, routing, and the life of a request.
 *
 * Path of a request: evhttp reads it over a TLS bufferevent made in
 * on_new_connection(), or, when the handshake chose h2, nghttp2 does (h2.h);
 * on_request() and on_h2_request() wrap it in an ext_call and dispatch()
 * finds its route, checks the client certificate when mTLS is on, and hands
 * it to a verb; the verb answers through call_reply_*(), which records
 * metrics and frees the call. Calls not yet answered sit on srv->calls, so
 * shutdown can wait for them and answer stragglers.
 */
#include "extender/server.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <openssl/ssl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "extender/access.h"
#include "extender/bind.h"
#include "extender/call.h"
#include "extender/conns.h"
#include "extender/h2.h"
#include "extender/score.h"
#include "extender/tls.h"

#ifndef DRAKE_VERSION
#define DRAKE_VERSION "unknown"
#endif

TAILQ_HEAD(call_list, ext_call);

struct ext_server {
	struct event_base *base;
	struct evhttp *http;
	struct evhttp_bound_socket *bound;
	SSL_CTX *ctx;
	struct ext_server_config cfg;
	char *prefix; /* normalised: "" or "/x" without a trailing slash */
	char *cert_file, *key_file, *client_ca_file;
	bool client_auth; /* a client CA is set: requests need a verified certificate */
	struct kube_client *kube;
	struct kube_informer *pods;
	struct bind_service *binds;
	struct access_service *access;
	struct conns *conns;
	const struct ext_controller *ctl; /* never NULL: no_controller when none is set */
	void *ctl_arg;
	struct metrics metrics;
	struct call_list calls;
	size_t n_calls;
	size_t n_writing;          /* replies handed to evhttp and not yet flushed */
	struct ext_scorer *scorer; /* NULL: prioritize scores 0 */
	int port;
	bool draining;
	char standby[300]; /* why this replica does not act; "" when it does */
	struct event *grace_timer;
	struct event *done_event;
	void (*done)(void *);
	void *done_arg;
};

static void on_healthz(struct ext_call *call);
static void on_readyz(struct ext_call *call);
static void on_metrics(struct ext_call *call);
static void on_jobs(struct ext_call *call);

/* Who may reach a route under mTLS. */
enum route_auth {
	/* a verified client certificate, checked before routing */
	AUTH_CERT,
	/* anyone, for GET and HEAD: the kubelet's probes present no
	 * certificate, and liveness and readiness reveal nothing else */
	AUTH_PROBE,
	/* the handler decides: a bearer token reviewed by the API server, or a
	 * verified certificate where that names enough (access.h) */
	AUTH_TOKEN,
};

/* The route table: the four verbs live under the prefix, the rest at the
 * root. A path may have a route per method. */
static const struct route {
	const char *path;
	bool prefixed;
	enum evhttp_cmd_type method;
	enum ext_verb verb;
	enum route_auth auth;
	void (*handle)(struct ext_call *);
} routes[] = {
    {"/filter", true, EVHTTP_REQ_POST, VERB_FILTER, AUTH_CERT, verb_filter},
    {"/prioritize", true, EVHTTP_REQ_POST, VERB_PRIORITIZE, AUTH_CERT, verb_prioritize},
    {"/bind", true, EVHTTP_REQ_POST, VERB_BIND, AUTH_CERT, verb_bind},
    {"/preempt", true, EVHTTP_REQ_POST, VERB_PREEMPT, AUTH_CERT, verb_preempt},
    {"/healthz", false, EVHTTP_REQ_GET, VERB_HEALTHZ, AUTH_PROBE, on_healthz},
    {"/readyz", false, EVHTTP_REQ_GET, VERB_READYZ, AUTH_PROBE, on_readyz},
    {"/metrics", false, EVHTTP_REQ_GET, VERB_METRICS, AUTH_CERT, on_metrics},
    {"/v1/jobs", false, EVHTTP_REQ_GET, VERB_OTHER, AUTH_CERT, on_jobs},
    {"/v1/progress", false, EVHTTP_REQ_POST, VERB_PROGRESS, AUTH_TOKEN, verb_progress},
    {"/v1/migrations", false, EVHTTP_REQ_POST, VERB_MIGRATIONS, AUTH_TOKEN, verb_migrations_post},
    {"/v1/migrations", false, EVHTTP_REQ_GET, VERB_MIGRATIONS, AUTH_CERT, verb_migrations_get},
};

void ext_server_config_default(struct ext_server_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->address = "127.0.0.1";
	cfg->port = 8443;
	cfg->prefix = "/scheduler";
	cfg->max_body = 32u << 20;
	cfg->max_headers = 16u << 10;
	cfg->max_connections = 1000;
	cfg->request_timeout = 30;
	cfg->shutdown_grace = 20;
	cfg->gang_bind_timeout = 15;
	cfg->http2 = true;
	ext_limits_default(&cfg->limits);
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

static const char *reason_phrase(int code)
{
	switch (code) {
	case 200: return "OK";
	case 202: return "Accepted";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 409: return "Conflict";
	case 413: return "Payload Too Large";
	case 429: return "Too Many Requests";
	case 500: return "Internal Server Error";
	case 503: return "Service Unavailable";
	default: return "Error";
	}
}

static void schedule_done(struct ext_server *s);

static void maybe_drained(struct ext_server *s)
{
	if (s->draining && s->n_calls == 0 && s->n_writing == 0)
		schedule_done(s);
}

static void on_reply_flushed(struct evhttp_request *req, void *arg)
{
	struct ext_server *s = arg;
	struct evhttp_connection *conn = evhttp_request_get_connection(req);
	if (conn)
		conns_reply_flushed(evhttp_connection_get_bufferevent(conn));
	if (s->n_writing > 0)
		s->n_writing--;
	maybe_drained(s);
}

/* An HTTP/1.1 call has its evhttp request from the start; an h2 one never. */
static bool over_h2(const struct ext_call *call)
{
	return !call->req;
}

/* The single exit of every call. */
static void call_finish(struct ext_call *call, int code, const char *ctype, struct evbuffer *body,
                        bool error)
{
	struct ext_server *s = call->srv;
	metrics_observe(&s->metrics, call->verb, code, seconds_since(&call->start), error);
	if (over_h2(call)) {
		/* a stream the client reset, or whose connection went, has no
		 * one to answer */
		if (call->h2) {
			s->n_writing++; /* until on_h2_flushed */
			h2_stream_reply(call->h2, code, ctype, body);
		}
	} else {
		struct evkeyvalq *h = evhttp_request_get_output_headers(call->req);
		evhttp_add_header(h, "Content-Type", ctype);
		if (evhttp_request_get_connection(call->req)) {
			/* Count the reply until evhttp has flushed it, so a drain
			 * that ends the loop never cuts a reply short. */
			s->n_writing++;
			evhttp_request_set_on_complete_cb(call->req, on_reply_flushed, s);
		}
		evhttp_send_reply(call->req, code, reason_phrase(code), body);
	}
	TAILQ_REMOVE(&s->calls, call, link);
	s->n_calls--;
	if (call->verb_state_free)
		call->verb_state_free(call->verb_state);
	free(call);
	maybe_drained(s);
}

static void free_json(const void *data, size_t len, void *arg)
{
	free((void *)data);
}

void call_reply_json(struct ext_call *call, int code, char *json, bool error)
{
	if (!json) {
		call_reply_error(call, 500, "out of memory encoding the response");
		return;
	}
	/* The buffer takes the string without copying; evhttp moves the chain
	 * into the connection, and free_json runs once it has been written. */
	struct evbuffer *buf = evbuffer_new();
	if (!buf || evbuffer_add_reference(buf, json, strlen(json), free_json, NULL) != 0) {
		if (buf)
			evbuffer_free(buf);
		free(json);
		call_finish(call, 500, "text/plain", NULL, true);
		return;
	}
	call_finish(call, code, "application/json", buf, error || code < 200 || code >= 300);
	evbuffer_free(buf);
}

void call_reply_error(struct ext_call *call, int code, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	char q[800];
	char quri[300];
	log_info("request_error", "verb=%s code=%d uri=%s error=%s", metrics_verb_name(call->verb),
	         code, drake_log_quote(call->uri, quri, sizeof(quri)),
	         drake_log_quote(msg, q, sizeof(q)));
	char *json = ext_error_encode(msg);
	if (!json) {
		call_finish(call, code, "text/plain", NULL, true);
		return;
	}
	call_reply_json(call, code, json, true);
}

void call_reply_text(struct ext_call *call, int code, const char *content_type, const char *text,
                     size_t len)
{
	struct evbuffer *buf = evbuffer_new();
	if (buf)
		evbuffer_add(buf, text, len);
	call_finish(call, code, content_type, buf, code < 200 || code >= 300);
	if (buf)
		evbuffer_free(buf);
}

const struct ext_limits *call_limits(const struct ext_call *call)
{
	return &call->srv->cfg.limits;
}

struct kube_client *call_kube(const struct ext_call *call)
{
	return call->srv->kube;
}

struct kube_informer *call_pods(const struct ext_call *call)
{
	return call->srv->pods;
}

struct bind_service *call_binds(const struct ext_call *call)
{
	return call->srv->binds;
}

bool call_replan(const struct ext_call *call, const char *ns, const char *pod,
                 const char *const *candidates, size_t n, char *node, size_t nodelen, char *why,
                 size_t whylen)
{
	const struct ext_server *s = call->srv;
	if (!s->ctl->replan) {
		snprintf(why, whylen, "no controller to re-plan it");
		return false;
	}
	return s->ctl->replan(s->ctl_arg, ns, pod, candidates, n, node, nodelen, why, whylen);
}

drake_err ext_server_set_scoring(struct ext_server *s, size_t window, char *msg, size_t msglen)
{
	if (!s->ctl->place_view)
		return drake_errorf(DRAKE_EINVAL, msg, msglen,
		                    "drake's score needs the TFJob controller's view of the "
		                    "cluster (drake serve --reconcile)");
	struct ext_scorer *sc = ext_scorer_new(s->ctl->place_view, s->ctl_arg, window, msg, msglen);
	if (!sc)
		return window >= 1 && window <= PLACE_LEARN_WINDOW_MAX ? DRAKE_ENOMEM
		                                                       : DRAKE_EINVAL;
	ext_scorer_free(s->scorer);
	s->scorer = sc;
	return DRAKE_OK;
}

struct ext_scorer *call_scorer(const struct ext_call *call)
{
	return call->srv->scorer;
}

void ext_server_set_pods(struct ext_server *s, struct kube_informer *pods)
{
	s->pods = pods;
}

struct metrics *call_metrics(const struct ext_call *call)
{
	return &call->srv->metrics;
}

const char *call_header(const struct ext_call *call, const char *name)
{
	if (over_h2(call))
		return call->h2 ? h2_stream_header(call->h2, name) : NULL;
	return evhttp_find_header(evhttp_request_get_input_headers(call->req), name);
}

void call_add_header(struct ext_call *call, const char *name, const char *value)
{
	if (over_h2(call)) {
		if (call->h2)
			h2_stream_add_header(call->h2, name, value);
		return;
	}
	evhttp_add_header(evhttp_request_get_output_headers(call->req), name, value);
}

struct access_service *call_access(const struct ext_call *call)
{
	return call->srv->access;
}

const struct ext_controller *call_controller(const struct ext_call *call, void **arg)
{
	*arg = call->srv->ctl_arg;
	return call->srv->ctl;
}

/* Where a server starts, and what NULL installs: every answer the
 * extender gives alone (controller.h). */
static const struct ext_controller no_controller;

void ext_server_set_controller(struct ext_server *s, const struct ext_controller *ops, void *arg)
{
	s->ctl = ops ? ops : &no_controller;
	s->ctl_arg = ops ? arg : NULL;
	if (s->scorer && s->ctl->place_view) {
		s->scorer->view = s->ctl->place_view;
		s->scorer->arg = s->ctl_arg;
	} else if (s->scorer) {
		ext_scorer_free(s->scorer);
		s->scorer = NULL;
	}
}

static void on_healthz(struct ext_call *call)
{
	call_reply_text(call, 200, "text/plain", "ok\n", 3);
}

static void on_readyz(struct ext_call *call)
{
	struct ext_server *s = call->srv;
	char why[300] = "not ready";
	if (s->draining) {
		call_reply_text(call, 503, "text/plain", "shutting down\n", 14);
		return;
	}
	if (s->standby[0])
		snprintf(why, sizeof(why), "%s", s->standby);
	if (s->standby[0] || (s->ctl->ready && !s->ctl->ready(s->ctl_arg, why, sizeof(why)))) {
		char line[310];
		int n = snprintf(line, sizeof(line), "%s\n", why);
		call_reply_text(call, 503, "text/plain", line,
		                (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
		return;
	}
	call_reply_text(call, 200, "text/plain", "ok\n", 3);
}

static void on_metrics(struct ext_call *call)
{
	struct evbuffer *buf = evbuffer_new();
	if (!buf) {
		call_finish(call, 500, "text/plain", NULL, true);
		return;
	}
	bind_service_metrics(call->srv->binds, &call->srv->metrics);
	call->srv->metrics.connections_open = (int64_t)conns_open(call->srv->conns);
	call->srv->metrics.connections_accepted = conns_accepted(call->srv->conns);
	call->srv->metrics.connections_h2 = conns_h2_accepted(call->srv->conns);
	call->srv->metrics.connections_refused = conns_refused(call->srv->conns);
	call->srv->metrics.connections_timed_out = conns_timed_out(call->srv->conns);
	metrics_render(&call->srv->metrics, DRAKE_VERSION, buf);
	call_finish(call, 200, "text/plain; version=0.0.4", buf, false);
	evbuffer_free(buf);
}

/* What each waiting gang waits for, from the controller's last round. */
static void on_jobs(struct ext_call *call)
{
	struct ext_server *s = call->srv;
	char *json = s->ctl->jobs_json ? s->ctl->jobs_json(s->ctl_arg) : strdup("{\"jobs\":[]}");
	call_reply_json(call, 200, json, false);
}

/* The route of path and method (HEAD finds GET). NULL when there is none;
 * *allow then lists the methods the path has, "" for an unknown path. */
static const struct route *find_route(const struct ext_server *s, const char *path,
                                      enum evhttp_cmd_type m, char *allow, size_t allowlen)
{
	size_t plen = strlen(s->prefix);
	allow[0] = '\0';
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		const char *p = path;
		if (routes[i].prefixed) {
			if (strncmp(p, s->prefix, plen) != 0)
				continue;
			p += plen;
		}
		if (strcmp(p, routes[i].path) != 0)
			continue;
		if (m == routes[i].method ||
		    (m == EVHTTP_REQ_HEAD && routes[i].method == EVHTTP_REQ_GET))
			return &routes[i];
		size_t n = strlen(allow);
		snprintf(allow + n, allowlen - n, "%s%s", n ? ", " : "",
		         routes[i].method == EVHTTP_REQ_POST ? "POST" : "GET, HEAD");
	}
	return NULL;
}

/* Whether the request's connection presented a client certificate that
 * verified against the client CA. A connection without TLS state (the
 * refuse_all fallback) has none. */
static bool client_verified(struct evhttp_request *req)
{
	struct evhttp_connection *conn = evhttp_request_get_connection(req);
	struct bufferevent *bev = conn ? evhttp_connection_get_bufferevent(conn) : NULL;
	return bev && tls_client_verified(bufferevent_openssl_get_ssl(bev));
}

static bool verified(const struct ext_call *call)
{
	if (over_h2(call))
		return call->h2 && tls_client_verified(h2_stream_ssl(call->h2));
	return client_verified(call->req);
}

bool call_client_verified(const struct ext_call *call)
{
	return call->srv->client_auth && verified(call);
}

/* A new call on s's list, its clock started; NULL when out of memory. */
static struct ext_call *call_new(struct ext_server *s, const char *uri)
{
	struct ext_call *call = calloc(1, sizeof(*call));
	if (!call)
		return NULL;
	call->srv = s;
	call->verb = VERB_OTHER;
	snprintf(call->uri, sizeof(call->uri), "%s", uri ? uri : "");
	clock_gettime(CLOCK_MONOTONIC, &call->start);
	TAILQ_INSERT_TAIL(&s->calls, call, link);
	s->n_calls++;
	return call;
}

/* Routes a call, whichever protocol brought it: method m on path (no
 * query), with its body. */
static void dispatch(struct ext_server *s, struct ext_call *call, enum evhttp_cmd_type m,
                     const char *path, const char *body, size_t body_len)
{
	char allow[64];
	const struct route *r = find_route(s, path, m, allow, sizeof(allow));
	if (r)
		call->verb = r->verb;
	/* Under mTLS a client without a verified certificate gets only the
	 * probes and the routes that take a bearer token instead; anything
	 * else, unknown paths too, is refused before routing, so it learns
	 * nothing and changes nothing. 403, not 401: there is no
	 * WWW-Authenticate challenge for a TLS client certificate. */
	if (s->client_auth && !(r && r->auth != AUTH_CERT) && !verified(call)) {
		call_reply_error(call, 403,
		                 "a client certificate signed by drake's client CA is required "
		                 "(without one, only GET /healthz and /readyz are answered, and "
		                 "POST /v1/progress and /v1/migrations with a bearer token)");
		return;
	}
	if (!r && !allow[0]) {
		call_reply_error(call, 404, "no such path: %.200s", path);
		return;
	}
	if (!r) {
		call_add_header(call, "Allow", allow);
		call_reply_error(call, 405, "%.200s accepts only %s", path, allow);
		return;
	}
	if (s->draining && (r->prefixed || r->auth == AUTH_TOKEN)) {
		call_reply_error(call, 503, "drake is shutting down");
		return;
	}
	/* A standby decides nothing: only the probes and metrics answer. */
	if (s->standby[0] && r->verb != VERB_HEALTHZ && r->verb != VERB_READYZ &&
	    r->verb != VERB_METRICS) {
		call_reply_error(call, 503, "%s", s->standby);
		return;
	}
	call->body = body;
	call->body_len = body_len;
	r->handle(call);
}

static void on_request(struct evhttp_request *req, void *arg)
{
	struct ext_server *s = arg;
	struct ext_call *call = call_new(s, evhttp_request_get_uri(req));
	if (!call) {
		evhttp_send_error(req, 500, "out of memory");
		return;
	}
	call->req = req;
	struct evhttp_connection *conn = evhttp_request_get_connection(req);
	if (conn) /* a whole request arrived: its deadline stops while drake works */
		conns_request_started(evhttp_connection_get_bufferevent(conn));
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	const char *path = uri ? evhttp_uri_get_path(uri) : NULL;
	if (!path || !*path)
		path = "/";
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	size_t len = evbuffer_get_length(in);
	const char *body = len ? (const char *)evbuffer_pullup(in, -1) : "";
	if (!body) {
		call_reply_error(call, 500, "out of memory reading the request body");
		return;
	}
	dispatch(s, call, evhttp_request_get_command(req), path, body, len);
}

/* The methods drake's routes know; any other is 0, which matches none (so
 * 405 on a known path, as over HTTP/1.1). */
static enum evhttp_cmd_type h2_method(const char *m)
{
	static const struct {
		const char *name;
		enum evhttp_cmd_type cmd;
	} methods[] = {{"GET", EVHTTP_REQ_GET},        {"POST", EVHTTP_REQ_POST},
	               {"HEAD", EVHTTP_REQ_HEAD},      {"PUT", EVHTTP_REQ_PUT},
	               {"DELETE", EVHTTP_REQ_DELETE},  {"PATCH", EVHTTP_REQ_PATCH},
	               {"OPTIONS", EVHTTP_REQ_OPTIONS}};
	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		if (!strcmp(m, methods[i].name))
			return methods[i].cmd;
	return 0;
}

static void on_h2_request(void *arg, struct h2_stream *st, const char *method, const char *uri,
                          const char *body, size_t body_len)
{
	struct ext_server *s = arg;
	struct ext_call *call = call_new(s, uri);
	if (!call) {
		h2_stream_refuse(st, 500, "out of memory");
		return;
	}
	h2_stream_hold(st, &call->h2);
	char path[sizeof(call->uri)];
	snprintf(path, sizeof(path), "%.*s", (int)strcspn(uri, "?#"), uri);
	dispatch(s, call, h2_method(method), *path ? path : "/", body, body_len);
}

static void on_h2_flushed(void *arg, size_t n)
{
	struct ext_server *s = arg;
	s->n_writing = s->n_writing > n ? s->n_writing - n : 0;
	maybe_drained(s);
}

static struct bufferevent *on_new_connection(struct event_base *base, void *arg)
{
	struct ext_server *s = arg;
	return conns_accept(s->conns, s->ctx);
}

static char *normalise_prefix(const char *p)
{
	if (!p)
		p = "";
	while (*p == '/' && p[1] == '/')
		p++;
	size_t n = strlen(p);
	while (n > 0 && p[n - 1] == '/')
		n--;
	char *out = malloc(n + 2);
	if (!out)
		return NULL;
	if (n == 0) {
		out[0] = '\0';
	} else if (p[0] != '/') {
		out[0] = '/';
		memcpy(out + 1, p, n);
		out[n + 1] = '\0';
	} else {
		memcpy(out, p, n);
		out[n] = '\0';
	}
	return out;
}

static char *dup_or_null(const char *s)
{
	return s && *s ? strdup(s) : NULL;
}

struct ext_server *ext_server_new(struct event_base *base, const struct ext_server_config *cfg,
                                  struct kube_client *kube, char *msg, size_t msglen)
{
	struct ext_server *s = calloc(1, sizeof(*s));
	if (!s) {
		drake_errorf(DRAKE_ENOMEM, msg, msglen, "out of memory");
		return NULL;
	}
	TAILQ_INIT(&s->calls);
	s->base = base;
	s->cfg = *cfg;
	s->kube = kube;
	s->ctl = &no_controller;
	s->prefix = normalise_prefix(cfg->prefix);
	s->cert_file = dup_or_null(cfg->cert_file);
	s->key_file = dup_or_null(cfg->key_file);
	s->client_ca_file = dup_or_null(cfg->client_ca_file);
	/* From the flag, not the copy: a failed strdup must not turn mTLS off. */
	s->client_auth = cfg->client_ca_file && *cfg->client_ca_file;
	s->cfg.cert_file = s->cert_file;
	s->cfg.key_file = s->key_file;
	s->cfg.client_ca_file = s->client_ca_file;
	s->cfg.prefix = s->prefix;
	s->cfg.address = NULL; /* not kept; only used below */
	if (!s->prefix || (s->client_auth && !s->client_ca_file)) {
		drake_errorf(DRAKE_ENOMEM, msg, msglen, "out of memory");
		goto fail;
	}
	struct tls_files files = {s->cert_file, s->key_file, s->client_ca_file, cfg->http2};
	if (tls_context_new(&files, &s->ctx, msg, msglen))
		goto fail;
	s->binds = bind_service_new(base, cfg->gang_bind_timeout);
	s->access = access_service_new(cfg->progress_audience, cfg->clock);
	/* Streams kube-scheduler may hold open at once on one connection (one
	 * per held bind); past it, its client opens another connection. */
	struct h2_handler h2 = {.request = on_h2_request,
	                        .flushed = on_h2_flushed,
	                        .arg = s,
	                        .limits = {.max_body = cfg->max_body,
	                                   .max_headers = cfg->max_headers,
	                                   .max_streams = 256}};
	s->conns =
	    conns_new(base, cfg->max_connections, cfg->request_timeout, cfg->http2 ? &h2 : NULL);
	if (!s->binds || !s->access || !s->conns) {
		drake_errorf(DRAKE_ENOMEM, msg, msglen, "out of memory");
		goto fail;
	}
	s->http = evhttp_new(base);
	if (!s->http) {
		drake_errorf(DRAKE_ENOMEM, msg, msglen, "cannot create the HTTP server");
		goto fail;
	}
	evhttp_set_bevcb(s->http, on_new_connection, s);
	evhttp_set_gencb(s->http, on_request, s);
	evhttp_set_max_body_size(s->http, (ev_ssize_t)cfg->max_body);
	evhttp_set_max_headers_size(s->http, (ev_ssize_t)cfg->max_headers);
	struct timeval tv = {
	    (time_t)cfg->request_timeout,
	    (suseconds_t)((cfg->request_timeout - (double)(time_t)cfg->request_timeout) * 1e6)};
	evhttp_set_timeout_tv(s->http, &tv);
	/* Accept every method at the HTTP layer so a wrong one on a known path
	 * gets drake's 405 rather than libevent's 501. */
	evhttp_set_allowed_methods(s->http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD |
	                                        EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE |
	                                        EVHTTP_REQ_PATCH | EVHTTP_REQ_OPTIONS);
	s->bound = evhttp_bind_socket_with_handle(s->http, cfg->address, (ev_uint16_t)cfg->port);
	if (!s->bound) {
		drake_errorf(DRAKE_EIO, msg, msglen, "cannot listen on %s:%d: %s", cfg->address,
		             cfg->port, strerror(errno));
		goto fail;
	}
	/* Replies go out as headers then body; without TCP_NODELAY the second
	 * write waits for the client's delayed ACK (40 ms on Linux). Accepted
	 * sockets inherit the option from the listener. */
	int one = 1;
	setsockopt(evhttp_bound_socket_get_fd(s->bound), IPPROTO_TCP, TCP_NODELAY, &one,
	           sizeof(one));
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	evutil_socket_t fd = evhttp_bound_socket_get_fd(s->bound);
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
		s->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
		                                         : ((struct sockaddr_in *)&ss)->sin_port);
	return s;
fail:
	ext_server_free(s);
	return NULL;
}

int ext_server_port(const struct ext_server *s)
{
	return s->port;
}

drake_err ext_server_reload_tls(struct ext_server *s, char *msg, size_t msglen)
{
	struct tls_files files = {s->cert_file, s->key_file, s->client_ca_file, s->cfg.http2};
	SSL_CTX *ctx;
	drake_err e = tls_context_new(&files, &ctx, msg, msglen);
	if (e) {
		s->metrics.tls_reload_failures++;
		return e;
	}
	SSL_CTX_free(s->ctx); /* open connections hold their own references */
	s->ctx = ctx;
	s->metrics.tls_reloads++;
	return DRAKE_OK;
}

void ext_server_set_standby(struct ext_server *s, const char *why)
{
	snprintf(s->standby, sizeof(s->standby), "%s", why ? why : "");
}

static void answer_all(struct ext_server *s, int code, const char *why)
{
	struct ext_call *call;
	while ((call = TAILQ_FIRST(&s->calls)))
		call_reply_error(call, code, "%s", why);
}

static void on_done(evutil_socket_t fd, short what, void *arg)
{
	struct ext_server *s = arg;
	if (s->done) {
		void (*done)(void *) = s->done;
		s->done = NULL;
		done(s->done_arg);
	}
}

static void schedule_done(struct ext_server *s)
{
	if (!s->done || !s->done_event)
		return;
	struct timeval now = {0, 0};
	event_add(s->done_event, &now);
}

static void on_grace_expired(evutil_socket_t fd, short what, void *arg)
{
	struct ext_server *s = arg;
	log_warn("shutdown_grace_expired", "unanswered=%zu unflushed=%zu", s->n_calls,
	         s->n_writing);
	answer_all(s, 503, "drake is shutting down");
	s->n_writing = 0;
	on_done(-1, 0, s);
}

void ext_server_shutdown(struct ext_server *s, void (*done)(void *arg), void *arg)
{
	if (s->draining)
		return;
	s->draining = true;
	s->done = done;
	s->done_arg = arg;
	if (s->bound) {
		evhttp_del_accept_socket(s->http, s->bound);
		s->bound = NULL;
	}
	log_info("shutdown", "unanswered=%zu grace_seconds=%g", s->n_calls, s->cfg.shutdown_grace);
	s->done_event = evtimer_new(s->base, on_done, s);
	s->grace_timer = evtimer_new(s->base, on_grace_expired, s);
	if (s->grace_timer) {
		double g = s->cfg.shutdown_grace;
		struct timeval tv = {(time_t)g, (suseconds_t)((g - (double)(time_t)g) * 1e6)};
		evtimer_add(s->grace_timer, &tv);
	}
	maybe_drained(s);
}

void ext_server_free(struct ext_server *s)
{
	if (!s)
		return;
	bind_service_free(s->binds); /* answers held gang binds */
	answer_all(s, 503, "drake is shutting down");
	access_service_free(s->access); /* the calls that used it are answered */
	if (s->http)
		evhttp_free(s->http);
	conns_free(s->conns); /* after evhttp: connections it has not yet freed are detached */
	if (s->grace_timer)
		event_free(s->grace_timer);
	if (s->done_event)
		event_free(s->done_event);
	SSL_CTX_free(s->ctx);
	free(s->prefix);
	free(s->cert_file);
	free(s->key_file);
	free(s->client_ca_file);
	ext_scorer_free(s->scorer);
	free(s);
}
