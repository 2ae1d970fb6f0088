/*
 * tls.h - the OpenSSL server context for drake's HTTPS endpoint: TLS 1.2+,
 * ALPN that picks http/1.1 and never h2 (libevent's evhttp speaks HTTP/1.1
 * only; Go clients fall back cleanly), an optional client CA that makes a
 * client certificate mandatory (mTLS).
 *
 * Ownership: tls_context_new() returns a context with one reference, the
 * caller's; SSL objects made from it hold their own, so a reload may drop the
 * old context while connections made from it are still open.
 */
#ifndef DRAKE_EXTENDER_TLS_H
#define DRAKE_EXTENDER_TLS_H

#include <openssl/ssl.h>
#include <stddef.h>

#include "common/err.h"

struct tls_files {
	const char *cert_file;      /* PEM chain, leaf first */
	const char *key_file;       /* PEM private key matching the leaf */
	const char *client_ca_file; /* PEM CA bundle; NULL or "" disables mTLS */
};

drake_err tls_context_new(const struct tls_files *files, SSL_CTX **out, char *msg,
                          size_t msglen) DRAKE_MUST_CHECK;

#endif
