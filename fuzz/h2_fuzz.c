/*
 * h2_fuzz.c - libFuzzer target for drake's HTTP/2 connections (h2.c): the
 * input, after the client preface, is what a client sends on a connection
 * whose handshake chose h2. nghttp2 parses the frames; this drives drake's
 * callbacks (headers and their limit, bodies and theirs, whole requests,
 * resets, replies made at once and held to the end) over a bufferevent
 * pair standing in for the TLS connection.
 */
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/log.h"
#include "extender/h2.h"

static const char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/* Requests on odd streams are answered at once; the others are held, like
 * binds at a barrier, and answered (or found gone) at the end. */
static struct h2_stream *held[64];
static size_t n_held;

static void on_request(void *arg, struct h2_stream *st, const char *method, const char *path,
                       const char *body, size_t len)
{
	(void)h2_stream_header(st, "content-type");
	if (n_held < sizeof(held) / sizeof(held[0]) && (len & 1) == 0) {
		h2_stream_hold(st, &held[n_held++]);
		return;
	}
	h2_stream_add_header(st, "X-Seen", method);
	struct evbuffer *b = evbuffer_new();
	if (b)
		evbuffer_add_printf(b, "{\"path\":\"%.40s\",\"len\":%zu}", path, len);
	h2_stream_reply(st, 200, "application/json", b);
	if (b)
		evbuffer_free(b);
}

static void on_flushed(void *arg, size_t n) {}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct event_base *base;
	if (!base) {
		drake_log_set_level(DRAKE_LOG_ERROR);
		base = event_base_new();
	}
	struct bufferevent *pair[2];
	if (bufferevent_pair_new(base, BEV_OPT_CLOSE_ON_FREE, pair) != 0)
		return 0;
	struct h2_handler h = {
	    .request = on_request,
	    .flushed = on_flushed,
	    .limits = {.max_body = 4096, .max_headers = 1024, .max_streams = 16}};
	n_held = 0;
	struct h2_conn *c = h2_conn_start(pair[0], &h);
	if (c) {
		bufferevent_enable(pair[1], EV_READ | EV_WRITE);
		bufferevent_write(pair[1], preface, sizeof(preface) - 1);
		bufferevent_write(pair[1], data, size);
		for (int i = 0; i < 4; i++)
			event_base_loop(base, EVLOOP_NONBLOCK);
		for (size_t i = 0; i < n_held; i++)
			if (held[i])
				h2_stream_reply(held[i], 503, "text/plain", NULL);
		event_base_loop(base, EVLOOP_NONBLOCK);
		h2_conn_free(c);
	}
	bufferevent_free(pair[0]);
	bufferevent_free(pair[1]);
	return 0;
}
