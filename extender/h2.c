/*
 * h2.c - HTTP/2 connections on nghttp2; see h2.h.
 *
 * The session reads from and writes to the connection's TLS bufferevent
 * directly: input is fed to nghttp2_session_mem_recv() as it arrives, and
 * frames nghttp2 emits are appended to the output buffer (nghttp2 sends DATA
 * only within the client's flow-control window, so a client that does not
 * read cannot make drake buffer more than that).
 */
#include "extender/h2.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <ctype.h>
#include <nghttp2/nghttp2.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/queue.h>

#include "common/log.h"
#include "extender/conns.h"

/* Request bodies are read in large windows: a filter of 15,000 node names is
 * a few hundred KB, which the default 64 KB window would take in many round
 * trips. The bodies stay bounded by h2_limits.max_body. */
#define H2_STREAM_WINDOW (1 << 20)
#define H2_CONN_WINDOW   (16 << 20)

struct h2_header {
	char *name, *value;
};

struct h2_stream {
	struct h2_conn *conn;
	int32_t id;
	char method[16];
	char *path;
	struct h2_header *in, *out; /* request headers; reply headers added */
	size_t n_in, n_out;
	size_t header_bytes;
	struct evbuffer *body;  /* the request body */
	struct evbuffer *reply; /* the reply body, read by nghttp2 */
	int refused;            /* 413 or 431: answered here, never dispatched */
	bool head;              /* a HEAD: the reply carries no body */
	bool uncounted;         /* answered here, not by the server: no flush report */
	bool working;           /* dispatched and not yet answered */
	struct h2_stream **holder;
	LIST_ENTRY(h2_stream) link;
};

struct h2_conn {
	struct bufferevent *bev;
	nghttp2_session *session;
	struct h2_handler h;
	/* evhttp's callbacks, put back when the session ends */
	bufferevent_data_cb ev_read, ev_write;
	bufferevent_event_cb ev_event;
	void *ev_arg;
	size_t body_bytes; /* request body bytes held across the streams */
	size_t working;    /* streams dispatched and not answered */
	size_t unflushed;  /* replies whose last frame is in the output buffer */
	size_t owed;       /* the server's replies not yet reported flushed */
	bool in_recv;      /* inside nghttp2_session_mem_recv: no sending now */
	bool ended;
	LIST_HEAD(, h2_stream) streams;
};

bool h2_selected(const void *ssl)
{
	const unsigned char *p = NULL;
	unsigned int n = 0;
	if (!ssl)
		return false;
	SSL_get0_alpn_selected(ssl, &p, &n);
	return n == 2 && memcmp(p, "h2", 2) == 0;
}

static void headers_free(struct h2_header *h, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(h[i].name);
		free(h[i].value);
	}
	free(h);
}

static void stream_free(struct h2_stream *st)
{
	if (st->holder)
		*st->holder = NULL;
	LIST_REMOVE(st, link);
	free(st->path);
	headers_free(st->in, st->n_in);
	headers_free(st->out, st->n_out);
	if (st->body)
		evbuffer_free(st->body);
	if (st->reply)
		evbuffer_free(st->reply);
	free(st);
}

/* The connection has nothing in flight: its request deadline runs again. */
static void work_done(struct h2_conn *c, struct h2_stream *st)
{
	if (!st->working)
		return;
	st->working = false;
	if (--c->working == 0)
		conns_reply_flushed(c->bev);
}

/* Hands the connection back to evhttp as a client that went away; evhttp
 * frees it, and with it the TLS state and this session (h2_conn_free). c
 * must not be touched after this. */
static void end(struct h2_conn *c)
{
	if (c->ended)
		return;
	c->ended = true;
	struct bufferevent *bev = c->bev;
	bufferevent_setcb(bev, c->ev_read, c->ev_write, c->ev_event, c->ev_arg);
	if (c->ev_event)
		c->ev_event(bev, BEV_EVENT_EOF | BEV_EVENT_READING, c->ev_arg);
}

/* Sends what nghttp2 has queued; ends the connection when the session is
 * over or broken. Returns false when it ended. */
static bool flush(struct h2_conn *c)
{
	if (c->ended)
		return false;
	int rv = nghttp2_session_send(c->session);
	if (rv != 0) {
		log_info("h2_connection_closed", "error=\"%s\"", nghttp2_strerror(rv));
		end(c);
		return false;
	}
	if (!nghttp2_session_want_read(c->session) && !nghttp2_session_want_write(c->session) &&
	    evbuffer_get_length(bufferevent_get_output(c->bev)) == 0) {
		end(c);
		return false;
	}
	return true;
}

static ssize_t on_send(nghttp2_session *s, const uint8_t *data, size_t len, int flags, void *arg)
{
	struct h2_conn *c = arg;
	if (evbuffer_add(bufferevent_get_output(c->bev), data, len) != 0)
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	return (ssize_t)len;
}

static int on_begin_headers(nghttp2_session *s, const nghttp2_frame *frame, void *arg)
{
	struct h2_conn *c = arg;
	if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	struct h2_stream *st = calloc(1, sizeof(*st));
	if (!st || !(st->body = evbuffer_new())) {
		free(st);
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE; /* resets this stream only */
	}
	st->conn = c;
	st->id = frame->hd.stream_id;
	LIST_INSERT_HEAD(&c->streams, st, link);
	nghttp2_session_set_stream_user_data(s, st->id, st);
	return 0;
}

static int add_header(struct h2_header **v, size_t *n, const char *name, size_t nlen,
                      const char *value, size_t vlen)
{
	struct h2_header *g = realloc(*v, (*n + 1) * sizeof(**v));
	if (!g)
		return -1;
	*v = g;
	g[*n].name = strndup(name, nlen);
	g[*n].value = strndup(value, vlen);
	if (!g[*n].name || !g[*n].value) {
		free(g[*n].name);
		free(g[*n].value);
		return -1;
	}
	(*n)++;
	return 0;
}

static int on_header(nghttp2_session *s, const nghttp2_frame *frame, const uint8_t *name,
                     size_t nlen, const uint8_t *value, size_t vlen, uint8_t flags, void *arg)
{
	struct h2_conn *c = arg;
	struct h2_stream *st = nghttp2_session_get_stream_user_data(s, frame->hd.stream_id);
	if (!st || st->refused)
		return 0;
	/* the size HTTP/2 counts a header list in (RFC 9113 section 6.5.2) */
	st->header_bytes += nlen + vlen + 32;
	if (st->header_bytes > c->h.limits.max_headers) {
		st->refused = 431;
		return 0;
	}
	const char *n = (const char *)name, *v = (const char *)value;
	if (nlen == 7 && !memcmp(n, ":method", 7)) {
		snprintf(st->method, sizeof(st->method), "%.*s", (int)vlen, v);
		st->head = !strcmp(st->method, "HEAD");
		return 0;
	}
	if (nlen == 5 && !memcmp(n, ":path", 5)) {
		free(st->path);
		st->path = strndup(v, vlen);
		return st->path ? 0 : NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	}
	if (nlen && n[0] == ':')
		return 0; /* :scheme, :authority */
	return add_header(&st->in, &st->n_in, n, nlen, v, vlen)
	           ? NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE
	           : 0;
}

static int on_data(nghttp2_session *s, uint8_t flags, int32_t id, const uint8_t *data, size_t len,
                   void *arg)
{
	struct h2_conn *c = arg;
	struct h2_stream *st = nghttp2_session_get_stream_user_data(s, id);
	if (!st || st->refused)
		return 0;
	size_t have = evbuffer_get_length(st->body);
	if (have + len > c->h.limits.max_body || c->body_bytes + len > c->h.limits.max_body) {
		st->refused = 413;
		c->body_bytes -= have;
		evbuffer_drain(st->body, have);
		return 0;
	}
	if (evbuffer_add(st->body, data, len) != 0)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	c->body_bytes += len;
	return 0;
}

static ssize_t on_read_reply(nghttp2_session *s, int32_t id, uint8_t *buf, size_t len,
                             uint32_t *flags, nghttp2_data_source *src, void *arg)
{
	struct h2_conn *c = arg;
	struct h2_stream *st = src->ptr;
	int n = evbuffer_remove(st->reply, buf, len);
	if (n < 0)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	if (evbuffer_get_length(st->reply) == 0) {
		*flags |= NGHTTP2_DATA_FLAG_EOF;
		if (!st->uncounted)
			c->unflushed++; /* its last bytes go out with this frame */
	}
	return n;
}

void h2_stream_refuse(struct h2_stream *st, int code, const char *why)
{
	log_info("request_refused", "protocol=h2 code=%d why=\"%s\"", code, why);
	struct evbuffer *b = evbuffer_new();
	if (b)
		evbuffer_add_printf(b, "{\"Error\":\"%s\"}", why);
	st->uncounted = true;
	h2_stream_reply(st, code, "application/json", b);
	if (b)
		evbuffer_free(b);
}

static int on_frame(nghttp2_session *s, const nghttp2_frame *frame, void *arg)
{
	struct h2_conn *c = arg;
	if ((frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA) ||
	    !(frame->hd.flags & NGHTTP2_FLAG_END_STREAM))
		return 0;
	struct h2_stream *st = nghttp2_session_get_stream_user_data(s, frame->hd.stream_id);
	if (!st || st->working)
		return 0;
	if (!c->h.request) {
		h2_stream_refuse(st, 503, "drake is shutting down");
		return 0;
	}
	if (st->refused) {
		h2_stream_refuse(st, st->refused,
		                 st->refused == 413 ? "request body over --max-body"
		                                    : "request header block over --max-headers");
		return 0;
	}
	size_t len = evbuffer_get_length(st->body);
	const char *body = len ? (const char *)evbuffer_pullup(st->body, -1) : "";
	if (!body)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	/* a whole request: the connection's deadline stops while drake works */
	st->working = true;
	if (c->working++ == 0)
		conns_request_started(c->bev);
	c->h.request(c->h.arg, st, st->method, st->path ? st->path : "/", body, len);
	return 0;
}

static int on_close(nghttp2_session *s, int32_t id, uint32_t code, void *arg)
{
	struct h2_conn *c = arg;
	struct h2_stream *st = nghttp2_session_get_stream_user_data(s, id);
	if (!st)
		return 0;
	nghttp2_session_set_stream_user_data(s, id, NULL);
	c->body_bytes -= evbuffer_get_length(st->body);
	work_done(c, st);
	stream_free(st); /* a call still working on it reads a NULL stream */
	return 0;
}

static void on_read(struct bufferevent *bev, void *arg)
{
	struct h2_conn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	size_t len;
	while (!c->ended && (len = evbuffer_get_contiguous_space(in)) > 0) {
		c->in_recv = true;
		ssize_t n =
		    nghttp2_session_mem_recv(c->session, evbuffer_pullup(in, (ssize_t)len), len);
		c->in_recv = false;
		if (n < 0) {
			log_info("h2_connection_closed", "error=\"%s\"", nghttp2_strerror((int)n));
			nghttp2_session_terminate_session(c->session, NGHTTP2_PROTOCOL_ERROR);
			break;
		}
		evbuffer_drain(in, (size_t)n);
	}
	flush(c);
}

static void on_write(struct bufferevent *bev, void *arg)
{
	struct h2_conn *c = arg;
	if (c->unflushed && evbuffer_get_length(bufferevent_get_output(bev)) == 0) {
		size_t n = c->unflushed;
		c->unflushed = 0;
		c->owed -= n < c->owed ? n : c->owed;
		if (c->h.flushed)
			c->h.flushed(c->h.arg, n);
	}
	flush(c);
}

static void on_event(struct bufferevent *bev, short what, void *arg)
{
	struct h2_conn *c = arg;
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT))
		end(c);
}

struct h2_conn *h2_conn_start(struct bufferevent *bev, const struct h2_handler *h)
{
	struct h2_conn *c = calloc(1, sizeof(*c));
	nghttp2_session_callbacks *cb = NULL;
	if (!c || nghttp2_session_callbacks_new(&cb) != 0) {
		free(c);
		return NULL;
	}
	nghttp2_session_callbacks_set_send_callback(cb, on_send);
	nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
	nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_close);
	int rv = nghttp2_session_server_new(&c->session, cb, c);
	nghttp2_session_callbacks_del(cb);
	if (rv != 0) {
		free(c);
		return NULL;
	}
	c->bev = bev;
	c->h = *h;
	LIST_INIT(&c->streams);
	nghttp2_settings_entry iv[] = {
	    {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, h->limits.max_streams},
	    {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, H2_STREAM_WINDOW},
	    {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, (uint32_t)h->limits.max_headers},
	};
	if (nghttp2_submit_settings(c->session, NGHTTP2_FLAG_NONE, iv,
	                            sizeof(iv) / sizeof(iv[0])) ||
	    nghttp2_session_set_local_window_size(c->session, NGHTTP2_FLAG_NONE, 0,
	                                          H2_CONN_WINDOW)) {
		nghttp2_session_del(c->session);
		free(c);
		return NULL;
	}
	bufferevent_getcb(bev, &c->ev_read, &c->ev_write, &c->ev_event, &c->ev_arg);
	bufferevent_setcb(bev, on_read, on_write, on_event, c);
	/* evhttp's idle timeouts would close a connection whose held binds are
	 * silent; the connection table's request deadline stands in for them. */
	bufferevent_set_timeouts(bev, NULL, NULL);
	bufferevent_enable(bev, EV_READ | EV_WRITE);
	return c;
}

void h2_conn_detach(struct h2_conn *c)
{
	if (!c)
		return;
	c->h.request = NULL;
	c->h.flushed = NULL;
	c->h.arg = NULL;
}

void h2_conn_goaway(struct h2_conn *c)
{
	if (c->ended)
		return;
	nghttp2_session_terminate_session(c->session, NGHTTP2_NO_ERROR);
	flush(c);
}

void h2_conn_free(struct h2_conn *c)
{
	if (!c)
		return;
	struct h2_stream *st;
	while ((st = LIST_FIRST(&c->streams)))
		stream_free(st);
	/* replies that will never be written no longer hold up a drain */
	if (c->owed && c->h.flushed)
		c->h.flushed(c->h.arg, c->owed);
	nghttp2_session_del(c->session);
	free(c);
}

void h2_stream_hold(struct h2_stream *st, struct h2_stream **holder)
{
	st->holder = holder;
	*holder = st;
}

const char *h2_stream_header(const struct h2_stream *st, const char *name)
{
	for (size_t i = 0; i < st->n_in; i++)
		if (!strcasecmp(st->in[i].name, name))
			return st->in[i].value;
	return NULL;
}

void h2_stream_add_header(struct h2_stream *st, const char *name, const char *value)
{
	if (add_header(&st->out, &st->n_out, name, strlen(name), value, strlen(value)) == 0) {
		/* h2 header names are lower case (RFC 9113 section 8.2.1) */
		for (char *p = st->out[st->n_out - 1].name; *p; p++)
			*p = (char)tolower((unsigned char)*p);
	}
}

void *h2_stream_ssl(const struct h2_stream *st)
{
	return bufferevent_openssl_get_ssl(st->conn->bev);
}

#define NV(n, v, vl)                                                                               \
	{                                                                                          \
		(uint8_t *)(n), (uint8_t *)(v), strlen(n), (vl), NGHTTP2_NV_FLAG_NONE              \
	}

/* A reply that cannot be made (out of memory): the stream is reset, and a
 * reply the server counts is reported at once, as nothing will be written. */
static void reply_failed(struct h2_conn *c, struct h2_stream *st)
{
	nghttp2_submit_rst_stream(c->session, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_INTERNAL_ERROR);
	if (!st->uncounted && c->h.flushed)
		c->h.flushed(c->h.arg, 1);
	if (!c->in_recv)
		flush(c);
}

void h2_stream_reply(struct h2_stream *st, int code, const char *content_type,
                     struct evbuffer *body)
{
	struct h2_conn *c = st->conn;
	if (st->holder) {
		*st->holder = NULL;
		st->holder = NULL;
	}
	work_done(c, st);
	char status[8];
	snprintf(status, sizeof(status), "%d", code);
	size_t n = 2 + st->n_out;
	nghttp2_nv *nv = calloc(n, sizeof(*nv));
	if (!nv || (body && !st->reply && !(st->reply = evbuffer_new()))) {
		free(nv);
		reply_failed(c, st);
		return;
	}
	nv[0] = (nghttp2_nv)NV(":status", status, strlen(status));
	nv[1] = (nghttp2_nv)NV("content-type", content_type, strlen(content_type));
	for (size_t i = 0; i < st->n_out; i++)
		nv[2 + i] =
		    (nghttp2_nv)NV(st->out[i].name, st->out[i].value, strlen(st->out[i].value));
	nghttp2_data_provider dp = {.source.ptr = st, .read_callback = on_read_reply};
	bool has_body = !st->head && body && evbuffer_get_length(body) > 0;
	if (has_body)
		evbuffer_add_buffer(st->reply, body);
	int rv = nghttp2_submit_response(c->session, st->id, nv, n, has_body ? &dp : NULL);
	free(nv);
	if (rv != 0) {
		reply_failed(c, st);
		return;
	}
	if (!st->uncounted) {
		c->owed++;
		if (!has_body)
			c->unflushed++; /* the HEADERS frame ends the stream */
	}
	if (!c->in_recv) /* a reply made inside a callback goes out when it returns */
		flush(c);
}
