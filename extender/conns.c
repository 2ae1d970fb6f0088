/*
 * conns.c - connection cap and request deadline; see conns.h.
 *
 * libevent 2.1's evhttp has no connection count and no hook when it frees a
 * connection, but every connection drake serves has an SSL object that
 * libevent frees with it (BEV_OPT_CLOSE_ON_FREE). The per-connection state
 * is that object's ex_data, whose free callback is the one reliable "this
 * connection is gone".
 */
#include "extender/conns.h"

#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <time.h>

#include "common/log.h"
#include "extender/h2.h"
#include "extender/tls.h"

struct conn {
	struct conns *owner; /* NULL once conns_free() detached it */
	struct bufferevent *bev;
	struct event *deadline;
	struct h2_conn *h2; /* the session, once the handshake chose h2 */
	TAILQ_ENTRY(conn) link;
};

TAILQ_HEAD(conn_list, conn);

struct conns {
	struct event_base *base;
	size_t max, open;
	struct timeval deadline;
	struct conn_list list;
	struct h2_handler h2; /* h2.request NULL: HTTP/1.1 only */
	uint64_t accepted, refused, timed_out, h2_accepted;
	double last_refusal_log; /* monotonic seconds; refusals log at most once a second */
	uint64_t refused_at_log;
};

static int ex_index = -1;

static double mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Runs inside SSL_free(), when libevent frees the connection. */
static void on_ssl_freed(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl,
                         void *argp)
{
	struct conn *k = ptr;
	if (!k)
		return;
	if (k->owner) {
		TAILQ_REMOVE(&k->owner->list, k, link);
		k->owner->open--;
	}
	if (k->deadline)
		event_free(k->deadline);
	h2_conn_free(k->h2);
	free(k);
}

static struct conn *conn_of(struct bufferevent *bev)
{
	SSL *ssl = bev && ex_index >= 0 ? bufferevent_openssl_get_ssl(bev) : NULL;
	return ssl ? SSL_get_ex_data(ssl, ex_index) : NULL;
}

/* Shutting the socket down makes libevent read EOF and free the connection
 * through its usual path, answering nothing (nothing was asked in full). */
static void close_socket(struct bufferevent *bev)
{
	evutil_socket_t fd = bufferevent_getfd(bev);
	if (fd >= 0)
		shutdown(fd, SHUT_RDWR);
}

static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
	struct conn *k = arg;
	if (!k->owner)
		return;
	k->owner->timed_out++;
	log_info("connection_timed_out", "reason=%s seconds=%g",
	         "\"no whole request within --request-timeout\"",
	         (double)k->owner->deadline.tv_sec + (double)k->owner->deadline.tv_usec / 1e6);
	/* An HTTP/2 client told by GOAWAY sends its next request on a new
	 * connection; one cut without it may lose a request sent meanwhile. */
	if (k->h2)
		h2_conn_goaway(k->h2);
	else
		close_socket(k->bev);
}

struct conns *conns_new(struct event_base *base, size_t max, double deadline_s,
                        const struct h2_handler *h2)
{
	if (ex_index < 0)
		ex_index = SSL_get_ex_new_index(0, NULL, NULL, NULL, on_ssl_freed);
	struct conns *c = calloc(1, sizeof(*c));
	if (!c || ex_index < 0) {
		free(c);
		return NULL;
	}
	c->base = base;
	c->max = max;
	if (h2)
		c->h2 = *h2;
	c->deadline.tv_sec = (time_t)deadline_s;
	c->deadline.tv_usec = (suseconds_t)((deadline_s - (double)(time_t)deadline_s) * 1e6);
	TAILQ_INIT(&c->list);
	return c;
}

void conns_free(struct conns *c)
{
	if (!c)
		return;
	struct conn *k;
	while ((k = TAILQ_FIRST(&c->list))) {
		TAILQ_REMOVE(&c->list, k, link);
		if (k->deadline)
			event_free(k->deadline);
		k->deadline = NULL;
		k->owner = NULL;
		h2_conn_detach(k->h2); /* its handler is the server going away */
	}
	free(c);
}

/* An input filter that refuses everything, so the connection fails instead
 * of falling back to plaintext. */
static enum bufferevent_filter_result refuse_all(struct evbuffer *src, struct evbuffer *dst,
                                                 ev_ssize_t lim, enum bufferevent_flush_mode m,
                                                 void *ctx)
{
	return BEV_ERROR;
}

static void on_refused_turn(evutil_socket_t fd, short what, void *arg)
{
	struct bufferevent *raw = arg;
	close_socket(raw);
	bufferevent_decref(raw);
}

/* evhttp sets the socket after this returns; the one-shot event then closes
 * it on the next loop turn, so a refused client costs no descriptor for
 * longer than that. Until then the filter refuses whatever it sends. */
static struct bufferevent *refusing_bufferevent(struct event_base *base)
{
	struct bufferevent *raw = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
	struct bufferevent *f = raw ? bufferevent_filter_new(raw, refuse_all, refuse_all,
	                                                     BEV_OPT_CLOSE_ON_FREE, NULL, NULL)
	                            : NULL;
	if (!f) {
		if (raw)
			bufferevent_free(raw);
		return NULL;
	}
	struct timeval zero = {0, 0};
	bufferevent_incref(raw);
	if (event_base_once(base, -1, EV_TIMEOUT, on_refused_turn, raw, &zero) != 0)
		bufferevent_decref(raw); /* the filter still refuses on the first byte */
	return f;
}

/* The handshake is done, inside SSL_do_handshake and before libevent reads
 * a byte of application data: a connection that chose h2 is taken from
 * evhttp now (h2.h). */
static void on_ssl_info(const SSL *ssl, int where, int ret)
{
	if (!(where & SSL_CB_HANDSHAKE_DONE) || !h2_selected(ssl))
		return;
	struct conn *k = SSL_get_ex_data(ssl, ex_index);
	if (!k || !k->owner || k->h2 || !k->owner->h2.request)
		return;
	k->h2 = h2_conn_start(k->bev, &k->owner->h2);
	if (k->h2)
		k->owner->h2_accepted++;
	else {
		log_error("h2_connection_failed", "error=%s", "out of memory starting the session");
		close_socket(k->bev);
	}
}

struct bufferevent *conns_accept(struct conns *c, SSL_CTX *ctx)
{
	if (c->max && c->open >= c->max) {
		c->refused++;
		double t = mono();
		if (t - c->last_refusal_log >= 1.0) {
			log_warn("connection_refused",
			         "reason=max_connections open=%zu max=%zu "
			         "refused_since_last_line=%llu",
			         c->open, c->max,
			         (unsigned long long)(c->refused - c->refused_at_log));
			c->last_refusal_log = t;
			c->refused_at_log = c->refused;
		}
		return refusing_bufferevent(c->base);
	}
	struct conn *k = calloc(1, sizeof(*k));
	struct bufferevent *bev =
	    k ? tls_server_bufferevent(c->base, ctx, BUFFEREVENT_SSL_ACCEPTING) : NULL;
	if (k && bev)
		k->deadline = evtimer_new(c->base, on_deadline, k);
	if (!bev || !k || !k->deadline ||
	    !SSL_set_ex_data(bufferevent_openssl_get_ssl(bev), ex_index, k)) {
		if (k && k->deadline)
			event_free(k->deadline);
		free(k);
		if (bev)
			bufferevent_free(bev);
		log_error("tls_connection_failed", "error=%s", "out of memory creating TLS state");
		return refusing_bufferevent(c->base);
	}
	k->owner = c;
	k->bev = bev;
	SSL_set_info_callback(bufferevent_openssl_get_ssl(bev), on_ssl_info);
	TAILQ_INSERT_TAIL(&c->list, k, link);
	c->open++;
	c->accepted++;
	evtimer_add(k->deadline, &c->deadline);
	return bev;
}

void conns_request_started(struct bufferevent *bev)
{
	struct conn *k = conn_of(bev);
	if (k && k->deadline)
		evtimer_del(k->deadline);
}

void conns_reply_flushed(struct bufferevent *bev)
{
	struct conn *k = conn_of(bev);
	if (k && k->owner && k->deadline)
		evtimer_add(k->deadline, &k->owner->deadline);
}

size_t conns_open(const struct conns *c)
{
	return c ? c->open : 0;
}

uint64_t conns_accepted(const struct conns *c)
{
	return c ? c->accepted : 0;
}

uint64_t conns_h2_accepted(const struct conns *c)
{
	return c ? c->h2_accepted : 0;
}

uint64_t conns_refused(const struct conns *c)
{
	return c ? c->refused : 0;
}

uint64_t conns_timed_out(const struct conns *c)
{
	return c ? c->timed_out : 0;
}
