/*
 * tls.h - the OpenSSL server context for drake's HTTPS endpoint: TLS 1.2+,
 * ALPN that picks http/1.1 and never h2 (libevent's evhttp speaks HTTP/1.1
 * only; Go clients fall back cleanly), an optional client CA (mTLS): every
 * client is asked for a certificate, one that does not verify against the CA
 * fails the handshake, and a client that sends none is let in so that the
 * server can answer it per path (the kubelet's probes have no certificate;
 * everything else needs one, see server.c).
 *
 * Ownership: tls_context_new() returns a context with one reference, the
 * caller's; SSL objects made from it hold their own, so a reload may drop the
 * old context while connections made from it are still open.
 */
#ifndef DRAKE_EXTENDER_TLS_H
#define DRAKE_EXTENDER_TLS_H

#include <openssl/ssl.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"

struct tls_files {
	const char *cert_file;      /* PEM chain, leaf first */
	const char *key_file;       /* PEM private key matching the leaf */
	const char *client_ca_file; /* PEM CA bundle; NULL or "" disables mTLS */
	bool h2;                    /* offer h2 by ALPN (else http/1.1 only) */
};

drake_err tls_context_new(const struct tls_files *files, SSL_CTX **out, char *msg,
                          size_t msglen) DRAKE_MUST_CHECK;

struct bufferevent;
struct event_base;

/* A bufferevent for one accepted connection (evhttp sets its socket later)
 * speaking TLS as the server from ctx, in the given state (drake's:
 * BUFFEREVENT_SSL_ACCEPTING; the parameter exists so a test can make
 * libevent fail), freeing the SSL object and socket with itself. NULL when
 * it cannot be made; nothing is left to free then: libevent 2.1 frees the
 * SSL object itself when it fails with BEV_OPT_CLOSE_ON_FREE, so freeing it
 * again would be a double free. */
struct bufferevent *tls_server_bufferevent(struct event_base *base, SSL_CTX *ctx, int state);

/* True when the connection's client presented a certificate and it verified
 * against the client CA. False for NULL (no TLS) and for no certificate. */
bool tls_client_verified(const SSL *ssl);

#endif
