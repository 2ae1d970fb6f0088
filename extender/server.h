/*
 * server.h - drake's HTTPS server: one evhttp on the caller's event_base,
 * TLS through libevent's OpenSSL bufferevents, routes under a prefix for the
 * four extender verbs plus /healthz, /readyz, /metrics, /v1/jobs, and the
 * progress and migration API (/v1/progress, /v1/migrations). What only the
 * TFJob controller can say (readiness of its caches, /v1/jobs, the progress
 * and migration API, a member's re-plan, the view drake's score reads)
 * comes through the one table it installs (controller.h). With a client
 * CA (mTLS), every request needs a verified client certificate except
 * GET /healthz and GET /readyz, which the kubelet's probes make without one,
 * and POST /v1/progress and /v1/migrations, whose callers may prove who they
 * are with a bearer token instead (access.h); the others get 403.
 *
 * Every request is answered exactly once, including requests held open (a
 * bind waiting on the API server or, later, on its gang) when the server
 * shuts down: those get 503. ext_server_free() answers anything still open.
 */
#ifndef DRAKE_EXTENDER_SERVER_H
#define DRAKE_EXTENDER_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "extender/codec.h"
#include "extender/controller.h"

struct event_base;
struct kube_client;
struct kube_informer;
struct ext_server;

struct ext_server_config {
	const char *address; /* listen address, e.g. 127.0.0.1 or 0.0.0.0 */
	int port;            /* 0 picks a free port (see ext_server_port) */
	const char *prefix;  /* e.g. "/scheduler"; "" or "/" for none */
	const char *cert_file;
	const char *key_file;
	const char *client_ca_file; /* NULL or "": no client certificate asked for */
	size_t max_body;            /* request bodies above this get 413 */
	size_t max_headers;         /* request line and header block limit (larger: 413) */
	size_t max_connections;     /* most open connections; more are closed at once (0: no cap) */
	double request_timeout;     /* seconds a connection has to send each whole request */
	double shutdown_grace;      /* seconds held requests get on shutdown */
	double gang_bind_timeout;   /* seconds a gang's binds wait for the whole wave */
	bool http2;                 /* offer h2 by ALPN (kube-scheduler's client takes it) */
	/* The audience POST /v1/progress tokens must carry (their TokenReview
	 * asks for it); NULL or "": the API server's own. */
	const char *progress_audience;
	/* Seconds on a monotonic clock for the progress rate limit; NULL: the
	 * system's (tests pass a clock that stands still). */
	double (*clock)(void);
	struct ext_limits limits;
};

void ext_server_config_default(struct ext_server_config *cfg);

/* kube may be NULL: bind then answers with an error naming the missing
 * credentials. The server does not own kube. */
struct ext_server *ext_server_new(struct event_base *base, const struct ext_server_config *cfg,
                                  struct kube_client *kube, char *msg, size_t msglen);

/* The port actually bound. */
int ext_server_port(const struct ext_server *s);

/* Re-reads certificate, key and client CA; on failure the old ones stay. New
 * connections use the new context; open ones keep theirs. */
drake_err ext_server_reload_tls(struct ext_server *s, char *msg, size_t msglen) DRAKE_MUST_CHECK;

/* Installs the controller (controller.h): ops and arg are borrowed and
 * must outlive the server; NULL ops for none, which is also where a new
 * server starts (the extender-only answers listed there). */
void ext_server_set_controller(struct ext_server *s, const struct ext_controller *ops, void *arg);

/* Marks this replica a standby (why: for the 503s, e.g. "standby: drake-0
 * leads") or, with NULL, one that acts. A standby answers /healthz and
 * /metrics, fails /readyz with why (so a Service sends it nothing), and
 * answers every other route 503 with why: it decides, binds and records
 * nothing. */
void ext_server_set_standby(struct ext_server *s, const char *why);

/* The pod cache the gang verbs read (bind barrier, preemption); NULL for
 * none. The server does not own it; it must outlive the server or be unset. */
void ext_server_set_pods(struct ext_server *s, struct kube_informer *pods);

/* Turns drake's fragmentation score on for prioritize (extender/score.h):
 * every pod that is not a gang member drake planned is scored over the
 * candidates the controller's place_view describes, with the typical task
 * shapes learnt from the last window pods scored. Off (the default): such
 * pods score 0 on every node. DRAKE_EINVAL with msg when the controller
 * has no place_view or window is out of range, DRAKE_ENOMEM with msg. A
 * controller installed later without place_view turns the score off. */
drake_err ext_server_set_scoring(struct ext_server *s, size_t window, char *msg,
                                 size_t msglen) DRAKE_MUST_CHECK;

/* Stops accepting connections; calls done once every received request has
 * been answered, or when shutdown_grace runs out (then the rest get 503). */
void ext_server_shutdown(struct ext_server *s, void (*done)(void *arg), void *arg);

void ext_server_free(struct ext_server *s);

#endif
