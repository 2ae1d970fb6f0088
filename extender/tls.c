/* tls.c - build an SSL_CTX from certificate files; see tls.h. */
#include "extender/tls.h"

#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>

#include <openssl/err.h>
#include <string.h>

/* Appends OpenSSL's error queue to a message, then clears the queue. */
static drake_err tls_fail(char *msg, size_t msglen, const char *what, const char *path)
{
	char detail[256] = "no detail from OpenSSL";
	unsigned long e = ERR_get_error();
	if (e)
		ERR_error_string_n(e, detail, sizeof(detail));
	ERR_clear_error();
	return drake_errorf(DRAKE_ETLS, msg, msglen, "%s %s: %s", what, path ? path : "", detail);
}

/* The client's offer of proto (ALPN wire format), or NULL. */
static const unsigned char *offered(const unsigned char *in, unsigned int inlen, const char *proto)
{
	size_t plen = strlen(proto);
	for (unsigned int i = 0; i < inlen;) {
		unsigned int n = in[i];
		if (i + 1 + n > inlen)
			break;
		if (n == plen && memcmp(in + i + 1, proto, plen) == 0)
			return in + i + 1;
		i += 1 + n;
	}
	return NULL;
}

/* h2 when it is on and offered (a client offering both would rather have
 * it), else http/1.1; without a match, no ALPN at all, which clients treat
 * as HTTP/1.1. */
static int on_alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                          const unsigned char *in, unsigned int inlen, void *arg)
{
	const unsigned char *p = arg ? offered(in, inlen, "h2") : NULL;
	if (p) {
		*out = p;
		*outlen = 2;
		return SSL_TLSEXT_ERR_OK;
	}
	if ((p = offered(in, inlen, "http/1.1"))) {
		*out = p;
		*outlen = 8;
		return SSL_TLSEXT_ERR_OK;
	}
	return SSL_TLSEXT_ERR_NOACK;
}

drake_err tls_context_new(const struct tls_files *files, SSL_CTX **out, char *msg, size_t msglen)
{
	*out = NULL;
	if (!files->cert_file || !*files->cert_file || !files->key_file || !*files->key_file)
		return drake_errorf(
		    DRAKE_EINVAL, msg, msglen,
		    "a TLS certificate and key are required (--tls-cert, --tls-key)");
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
	if (!ctx)
		return tls_fail(msg, msglen, "creating TLS context", NULL);
	drake_err e = DRAKE_OK;
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION |
	                             SSL_OP_CIPHER_SERVER_PREFERENCE);
	SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
	/* a non-NULL argument means h2 may be chosen */
	SSL_CTX_set_alpn_select_cb(ctx, on_alpn_select, files->h2 ? (void *)ctx : NULL);
	static const unsigned char sid[] = "drake";
	SSL_CTX_set_session_id_context(ctx, sid, sizeof(sid) - 1);

	if (SSL_CTX_use_certificate_chain_file(ctx, files->cert_file) != 1) {
		e = tls_fail(msg, msglen, "loading certificate", files->cert_file);
		goto out;
	}
	if (SSL_CTX_use_PrivateKey_file(ctx, files->key_file, SSL_FILETYPE_PEM) != 1) {
		e = tls_fail(msg, msglen, "loading private key", files->key_file);
		goto out;
	}
	if (SSL_CTX_check_private_key(ctx) != 1) {
		e = tls_fail(msg, msglen, "key does not match certificate", files->key_file);
		goto out;
	}
	if (files->client_ca_file && *files->client_ca_file) {
		if (SSL_CTX_load_verify_locations(ctx, files->client_ca_file, NULL) != 1) {
			e = tls_fail(msg, msglen, "loading client CA", files->client_ca_file);
			goto out;
		}
		STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(files->client_ca_file);
		if (!names) {
			e = tls_fail(msg, msglen, "reading client CA names", files->client_ca_file);
			goto out;
		}
		SSL_CTX_set_client_CA_list(ctx, names);
		/* Ask every client for a certificate and fail the handshake on one
		 * that does not verify, but let a client without one in: the
		 * kubelet's probes present none. The server refuses such a
		 * client per request (tls_client_verified), on every path but
		 * the probes'. */
		SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	}
out:
	if (e) {
		SSL_CTX_free(ctx);
		return e;
	}
	*out = ctx;
	return DRAKE_OK;
}

bool tls_client_verified(const SSL *ssl)
{
	/* SSL_get_verify_result() says X509_V_OK when no certificate was sent,
	 * so the certificate's presence is checked first. */
	return ssl && SSL_get0_peer_certificate(ssl) && SSL_get_verify_result(ssl) == X509_V_OK;
}

struct bufferevent *tls_server_bufferevent(struct event_base *base, SSL_CTX *ctx, int state)
{
	SSL *ssl = SSL_new(ctx);
	if (!ssl)
		return NULL;
	/* On failure libevent has freed ssl already (BEV_OPT_CLOSE_ON_FREE). */
	struct bufferevent *bev = bufferevent_openssl_socket_new(
	    base, -1, ssl, (enum bufferevent_ssl_state)state, BEV_OPT_CLOSE_ON_FREE);
	if (bev) /* Go's client may close without close_notify; that is not an error. */
		bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
	return bev;
}
