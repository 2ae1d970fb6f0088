/*
 * client.h - drake's API-server client: libcurl's multi interface driven by
 * drake's libevent loop (the hiperfifo pattern), so requests never block.
 *
 * Ownership: kube_client_new() copies what it needs from the config; the
 * caller frees the config. Every kube_request() callback is called exactly
 * once: with the response, with a transport error (status 0), or from
 * kube_client_free() with status 0 and error "client shut down". The
 * response and its body are owned by the client and valid only during the
 * callback.
 */
#ifndef DRAKE_KUBE_CLIENT_H
#define DRAKE_KUBE_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"

struct event_base;

/* Where the API server is and how to authenticate; from a kubeconfig or the
 * in-cluster service account. Strings are heap-owned; kube_config_release(). */
struct kube_config {
	char *server;           /* https://host:port, no trailing slash */
	char *ca_file;          /* PEM file, or NULL */
	char *ca_data;          /* PEM text (decoded certificate-authority-data), or NULL */
	char *client_cert_file; /* PEM, or NULL */
	char *client_cert_data; /* PEM text, or NULL */
	char *client_key_file;  /* PEM, or NULL */
	char *client_key_data;  /* PEM text, or NULL */
	char *token;            /* bearer token, or NULL */
	char *token_file;       /* re-read on each request when set (projected SA tokens rotate) */
	bool insecure_skip_verify;
};

/* Loads credentials. path: a kubeconfig file; NULL means the in-cluster
 * service account (KUBERNETES_SERVICE_HOST/PORT and
 * /var/run/secrets/kubernetes.io/serviceaccount). Uses current-context. */
drake_err kube_config_load(const char *path, struct kube_config *out, char *msg,
                           size_t msglen) DRAKE_MUST_CHECK;
void kube_config_release(struct kube_config *cfg);

struct kube_client_options {
	double qps;       /* client-side rate limit; <= 0 means unlimited */
	int burst;        /* token-bucket burst */
	long timeout_ms;  /* per-request timeout for non-watch requests, counted from
	                     when the request is sent (not while it waits in the queue) */
	int max_inflight; /* most non-watch requests on the wire at once; <= 0: no cap */
	size_t max_body;  /* largest response body accepted (bytes) */
	const char *user_agent;
};

struct kube_response {
	long status;      /* HTTP status; 0 when the request never got an answer */
	const char *body; /* response body, NUL-terminated, may be "" */
	size_t body_len;
	const char *error; /* transport error text when status == 0, else NULL */
};

typedef void (*kube_response_cb)(const struct kube_response *resp, void *arg);

struct kube_client;

struct kube_client *kube_client_new(struct event_base *base, const struct kube_config *cfg,
                                    const struct kube_client_options *opts, char *msg,
                                    size_t msglen);
/* Fails every outstanding request (callbacks run) and frees. NULL is fine. */
void kube_client_free(struct kube_client *c);

/* Starts METHOD path (e.g. "/api/v1/namespaces/ns/pods/p/binding") with an
 * optional body. content_type may be NULL for "application/json". */
drake_err kube_request(struct kube_client *c, const char *method, const char *path,
                       const char *content_type, const char *body, size_t body_len,
                       kube_response_cb cb, void *arg) DRAKE_MUST_CHECK;

/* Like kube_request, but queued ahead of every request still waiting for a
 * token of the rate limit or a slot under max_inflight (behind the ones
 * queued this way before it); requests already on the wire are not
 * overtaken. For writes that something waits on, such as the patches that
 * release an admitted gang, which must not wait behind a burst of other
 * jobs' creates. */
drake_err kube_request_first(struct kube_client *c, const char *method, const char *path,
                             const char *content_type, const char *body, size_t body_len,
                             kube_response_cb cb, void *arg) DRAKE_MUST_CHECK;

/* Requests started and not yet answered. */
size_t kube_client_inflight(const struct kube_client *c);

/* ---- Streaming requests (watches); added with the informers. ----
 * A stream is a GET whose 2xx body is handed over chunk by chunk as it
 * arrives instead of being buffered. on_data returns false to abort the
 * stream (done then reports status 0, error "aborted by receiver"). A non-2xx
 * answer is buffered (capped at max_body) and handed to on_done. on_done is
 * called exactly once, like a kube_request callback, unless the caller
 * cancels the stream first. timeout_ms 0 means no client-side deadline. */
typedef bool (*kube_data_cb)(const char *data, size_t len, void *arg);
struct kube_stream;

drake_err kube_stream_start(struct kube_client *c, const char *path, long timeout_ms,
                            kube_data_cb on_data, kube_response_cb on_done, void *arg,
                            struct kube_stream **out) DRAKE_MUST_CHECK;
/* Stops a stream; after it returns no callback of that stream runs. Safe on
 * NULL and from inside any callback, including the stream's own on_data.
 * The handle is freed once on_done has run: do not cancel it after that.
 * (No callback may call kube_client_free().) */
void kube_stream_cancel(struct kube_stream *s);

#endif
