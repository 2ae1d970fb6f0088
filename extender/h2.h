/*
 * h2.h - HTTP/2 connections (internal to extender/), with nghttp2.
 *
 * Why: kube-scheduler's extender client offers h2, and over HTTP/1.1 Go keeps
 * only two idle connections per host. Every bind drake holds at a gang
 * barrier occupies a connection, so the filter calls made meanwhile open new
 * ones, each a TLS handshake inside kube-scheduler's serial scheduling cycle.
 * Over h2 all of them are streams of one connection.
 *
 * A connection whose TLS handshake selected h2 (ALPN) is taken from evhttp
 * the moment the handshake completes, before evhttp has read a byte: its
 * bufferevent gets this module's callbacks, and evhttp's are kept. When the
 * session ends they are put back and evhttp is told of an EOF, so evhttp
 * frees the connection by its usual path (an idle client that went away).
 *
 * Each stream's request, once whole, goes to the request callback; the
 * server answers it, now or later, through h2_stream_reply().
 *
 * Ownership: a connection's state is freed by h2_conn_free(), which the
 * connection table calls when libevent frees the TLS state. A stream lives
 * until nghttp2 closes it; whoever holds a stream (the call answering it)
 * registers where its pointer is kept, and that pointer is set to NULL when
 * the stream goes before it was answered (reset, connection lost).
 */
#ifndef DRAKE_EXTENDER_H2_H
#define DRAKE_EXTENDER_H2_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bufferevent;
struct evbuffer;
struct h2_conn;
struct h2_stream;

struct h2_limits {
	size_t max_body;      /* per stream; larger bodies get 413 */
	size_t max_headers;   /* per stream header block; larger gets 431 */
	uint32_t max_streams; /* concurrent streams a client may open (SETTINGS) */
};

/* A whole request: method and path as sent, the body contiguous (valid until
 * the stream is answered or gone). */
typedef void (*h2_request_fn)(void *arg, struct h2_stream *st, const char *method, const char *path,
                              const char *body, size_t body_len);
/* n replies were written out to the socket (for the server's drain). */
typedef void (*h2_flushed_fn)(void *arg, size_t n);

struct h2_handler {
	h2_request_fn request;
	h2_flushed_fn flushed;
	void *arg;
	struct h2_limits limits;
};

/* Whether ssl's handshake selected h2. */
bool h2_selected(const void *ssl);

/* Takes bev (its TLS handshake just selected h2) from evhttp and starts the
 * server session. NULL when out of memory: the connection is then closed. */
struct h2_conn *h2_conn_start(struct bufferevent *bev, const struct h2_handler *h);
/* Says GOAWAY (no error) and closes the connection once it is written: the
 * client sends its next requests on a new connection. */
void h2_conn_goaway(struct h2_conn *c);
/* The handler is going away (the server is freed while libevent still holds
 * the connection): nothing more is reported to it, and requests completed
 * from now on are answered 503. */
void h2_conn_detach(struct h2_conn *c);
/* Frees the session and detaches its streams (their holders read NULL). */
void h2_conn_free(struct h2_conn *c);

/* Where the stream's holder keeps its pointer: cleared if the stream goes
 * first. */
void h2_stream_hold(struct h2_stream *st, struct h2_stream **holder);
/* A request header (name case-insensitive), or NULL. */
const char *h2_stream_header(const struct h2_stream *st, const char *name);
/* Adds a header to the reply. */
void h2_stream_add_header(struct h2_stream *st, const char *name, const char *value);
/* The connection's TLS state. */
void *h2_stream_ssl(const struct h2_stream *st);
/* Answers the stream (body may be NULL; its bytes are taken), reported to
 * the handler's flushed() once written out (or once the connection is gone).
 * After this the holder's pointer is cleared: the stream is no longer the
 * caller's. */
void h2_stream_reply(struct h2_stream *st, int code, const char *content_type,
                     struct evbuffer *body);
/* Answers {"Error": why} (why needs no JSON escaping) without the server: no
 * flush report. Logged as request_refused. */
void h2_stream_refuse(struct h2_stream *st, int code, const char *why);

#endif
