/*
 * conns.h - the extender's accepted connections (internal to extender/): how
 * many are open, the cap on them (--max-connections), and each one's request
 * deadline (--request-timeout).
 *
 * A connection accepted while the cap is reached is closed at once, before
 * TLS, and logged; the open ones keep being served. Every open connection
 * must deliver a whole request (TLS handshake, headers and body) within the
 * deadline of being accepted or of its previous reply being flushed, or it
 * is closed: libevent's own timeout restarts on every byte read, so without
 * this a client trickling a header one byte a second would hold its slot for
 * hours. The clock stops while drake works on a request (a bind held at a
 * gang barrier is drake's wait, not the client's); on an HTTP/2 connection,
 * while it works on any of its streams.
 *
 * A connection whose handshake chose h2 is handed to h2.h the moment the
 * handshake completes; its session hangs on the same state and is freed
 * with it.
 *
 * Ownership: conns_new() returns a table conns_free() frees. Each
 * connection's state hangs on its SSL object and is freed with it, so it
 * lives exactly as long as libevent keeps the connection; conns_free()
 * detaches the ones still open.
 */
#ifndef DRAKE_EXTENDER_CONNS_H
#define DRAKE_EXTENDER_CONNS_H

#include <openssl/ssl.h>
#include <stddef.h>
#include <stdint.h>

struct bufferevent;
struct event_base;
struct conns;
struct h2_handler;

/* max: most connections open at once (0: no cap); deadline_s: seconds a
 * connection has to deliver each whole request; h2: where the requests of
 * connections whose handshake chose h2 go (NULL: the TLS context never
 * offers it). NULL when out of memory. */
struct conns *conns_new(struct event_base *base, size_t max, double deadline_s,
                        const struct h2_handler *h2);
void conns_free(struct conns *c);

/* The bufferevent evhttp uses for a connection it has just accepted (it sets
 * the socket afterwards): TLS from ctx, or, past the cap or out of memory,
 * one that refuses every byte and closes the socket on the next loop turn.
 * NULL only when not even that can be made (libevent then speaks plain HTTP
 * on the socket, so the caller must treat NULL as fatal for the socket). */
struct bufferevent *conns_accept(struct conns *c, SSL_CTX *ctx);

/* A whole request arrived on bev: the deadline stops. */
void conns_request_started(struct bufferevent *bev);
/* A reply on bev was flushed: the deadline for the next request starts. */
void conns_reply_flushed(struct bufferevent *bev);

size_t conns_open(const struct conns *c);
/* Connections taken (TLS state made), each a TLS handshake: against the
 * requests served, how often clients reconnect rather than reuse one. */
uint64_t conns_accepted(const struct conns *c);
/* Of those, the ones that speak HTTP/2. */
uint64_t conns_h2_accepted(const struct conns *c);
uint64_t conns_refused(const struct conns *c);   /* closed for the cap */
uint64_t conns_timed_out(const struct conns *c); /* closed at the request deadline */

#endif
