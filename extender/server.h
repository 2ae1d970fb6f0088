/*
 * server.h - drake's HTTPS server: one evhttp on the caller's event_base,
 * TLS through libevent's OpenSSL bufferevents, routes under a prefix for the
 * four extender verbs plus /healthz, /readyz, /metrics, /v1/jobs, and the
 * progress and migration API (/v1/progress, /v1/migrations). With a client
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
#include "kube/object.h"
#include "extender/codec.h"
#include "place/place.h"

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

/* /readyz answers 200 only when fn returns true (fn NULL: always ready).
 * fn may write a reason into why. */
typedef bool (*ext_ready_fn)(void *arg, char *why, size_t whylen);
void ext_server_set_ready(struct ext_server *s, ext_ready_fn fn, void *arg);

/* Marks this replica a standby (why: for the 503s, e.g. "standby: drake-0
 * leads") or, with NULL, one that acts. A standby answers /healthz and
 * /metrics, fails /readyz with why (so a Service sends it nothing), and
 * answers every other route 503 with why: it decides, binds and records
 * nothing. */
void ext_server_set_standby(struct ext_server *s, const char *why);

/* The pod cache the gang verbs read (bind barrier, preemption); NULL for
 * none. The server does not own it; it must outlive the server or be unset. */
void ext_server_set_pods(struct ext_server *s, struct kube_informer *pods);

/* GET /v1/jobs answers with fn(arg): a malloc'd JSON document saying what
 * each waiting gang waits for. Unset: {"jobs":[]}. */
void ext_server_set_jobs(struct ext_server *s, char *(*fn)(void *arg), void *arg);

/* Filter asks fn for another node when a gang member's planned node is not
 * among the candidates: fn fills node and returns true, or fills why and
 * returns false (the filter then refuses every node). Unset: it refuses. */
typedef bool (*ext_replan_fn)(void *arg, const char *ns, const char *pod,
                              const char *const *candidates, size_t n, char *node, size_t nodelen,
                              char *why, size_t whylen);
void ext_server_set_replan(struct ext_server *s, ext_replan_fn fn, void *arg);

/* Prioritize scores every pod that is not a gang member drake planned by
 * drake's fragmentation score (extender/score.h), reading the pod and the
 * candidates through fn (the controller: reconciler_place_view), with the
 * typical task shapes learnt from the last window pods scored. Unset (the
 * default): such pods score 0 on every node. DRAKE_EINVAL or DRAKE_ENOMEM
 * with msg when the learner cannot be made. */
typedef drake_err (*ext_place_fn)(void *arg, const char *ns, const char *pod,
                                  const char *const *candidates, size_t n,
                                  struct place_models *models, struct place_task *task,
                                  struct place_node *nodes, bool *known, char *why, size_t whylen);
drake_err ext_server_set_scoring(struct ext_server *s, ext_place_fn fn, void *arg, size_t window,
                                 char *msg, size_t msglen) DRAKE_MUST_CHECK;

/* ---- The progress and migration API. The controller sets these
 * hooks; unset, the three endpoints answer 503. Each hook runs on the loop,
 * after the caller was authenticated (and, for a migration, authorised), and
 * returns at once. */

/* A progress report from a replica, after authentication. */
struct ext_progress {
	/* Who: from the caller's verified bearer token, never from the body. A
	 * caller with a client certificate (a trusted in-cluster agent; a
	 * certificate names no pod) names ns and pod in the body, and pod_uid
	 * is then "". */
	char ns[64], pod[KUBE_NAME_MAX + 1], pod_uid[64];
	int64_t step; /* global step, >= 0 */
	double value; /* metric value, finite */
	bool loss;    /* metric kind: true = loss-like (lower is better), false = accuracy-like */
	int64_t total_steps; /* 0 when not given */
	double t;            /* server receive time, seconds since the epoch */
};
/* Returns DRAKE_OK (accepted, 202), DRAKE_EINVAL (rejected, 403: why, e.g.
 * "pod ml/x is not a replica of a TFJob drake manages"), other errors as
 * 500. why is NUL-terminated and empty on entry. */
typedef drake_err (*ext_progress_fn)(void *arg, const struct ext_progress *p, char *why,
                                     size_t len);
void ext_server_set_progress(struct ext_server *s, ext_progress_fn fn, void *arg);

struct ext_migration_req {
	char ns[64], pod[KUBE_NAME_MAX + 1];
	char away[KUBE_NAME_MAX + 1]; /* "" = from wherever it is */
	char onto[KUBE_NAME_MAX + 1]; /* "" = the policy picks */
	bool pause_job; /* a PS or chief may move (the job stops training meanwhile) */
	char user[256]; /* the authorised caller (TokenReview username), for the record */
};
/* DRAKE_OK: accepted, 202 (*id filled, e.g. "ml/job-worker-1@1763880000");
 * DRAKE_ESTATE: refused by policy, 409 (why); DRAKE_EINVAL: no such
 * replica, 404 (why); other errors as 500. */
typedef drake_err (*ext_migrate_fn)(void *arg, const struct ext_migration_req *r, char *id,
                                    size_t idlen, char *why, size_t len);
/* GET /v1/migrations: a malloc'd JSON document, like the jobs hook (NULL:
 * out of memory, 500). */
typedef char *(*ext_migrations_fn)(void *arg);
void ext_server_set_migrations(struct ext_server *s, ext_migrate_fn post, ext_migrations_fn list,
                               void *arg);

/* Stops accepting connections; calls done once every received request has
 * been answered, or when shutdown_grace runs out (then the rest get 503). */
void ext_server_shutdown(struct ext_server *s, void (*done)(void *arg), void *arg);

void ext_server_free(struct ext_server *s);

#endif
