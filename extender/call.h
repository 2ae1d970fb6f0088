/*
 * call.h - one received request while drake works on it (internal to
 * extender/). The call owns everything that lives as long as the request;
 * call_reply*() answers it, records its metrics and frees it, so after a
 * reply the call pointer is gone.
 */
#ifndef DRAKE_EXTENDER_CALL_H
#define DRAKE_EXTENDER_CALL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/queue.h>
#include <time.h>

#include "common/err.h"
#include "extender/codec.h"
#include "extender/metrics.h"
#include "extender/server.h"

struct evhttp_request;
struct ext_server;
struct kube_client;
struct kube_informer;
struct bind_service;
struct access_service;

struct h2_stream;

struct ext_call {
	struct ext_server *srv;
	struct evhttp_request *req; /* HTTP/1.1; NULL for an h2 stream */
	struct h2_stream *h2;       /* HTTP/2; NULL once the stream is gone (reset) */
	char uri[300];              /* as requested, for log lines (truncated) */
	enum ext_verb verb;
	struct timespec start;
	const char *body; /* the request body, contiguous; valid until the reply */
	size_t body_len;
	void *verb_state; /* owned by the verb; freed by verb_state_free */
	void (*verb_state_free)(void *);
	TAILQ_ENTRY(ext_call) link;
};

/* Answers with a JSON body (taken over and freed). NULL json means the
 * encoder ran out of memory: answered with 500. error marks a reply that
 * carries an Error for the metrics. */
void call_reply_json(struct ext_call *call, int code, char *json, bool error);

/* Answers {"Error": "..."} with the given status, and counts it as an error. */
void call_reply_error(struct ext_call *call, int code, const char *fmt, ...) DRAKE_PRINTF(3, 4);

/* Plain-text reply (health endpoints, metrics). */
void call_reply_text(struct ext_call *call, int code, const char *content_type, const char *text,
                     size_t len);

const struct ext_limits *call_limits(const struct ext_call *call);
struct kube_client *call_kube(const struct ext_call *call);
struct kube_informer *call_pods(const struct ext_call *call);
struct bind_service *call_binds(const struct ext_call *call);
/* The controller's re-plan (controller.h); false with why when it has none. */
bool call_replan(const struct ext_call *call, const char *ns, const char *pod,
                 const char *const *candidates, size_t n, char *node, size_t nodelen, char *why,
                 size_t whylen);
struct metrics *call_metrics(const struct ext_call *call);
/* The prioritize scorer (ext_server_set_scoring), or NULL. */
struct ext_scorer *call_scorer(const struct ext_call *call);

/* A request header's value, or NULL. */
const char *call_header(const struct ext_call *call, const char *name);
/* Adds a header to the reply (before call_reply_*). */
void call_add_header(struct ext_call *call, const char *name, const char *value);
/* Whether the connection presented a client certificate that verified
 * against drake's client CA (always false without --client-ca). */
bool call_client_verified(const struct ext_call *call);

/* The progress and migration API's tokens, reviews and rate limits (access.h). */
struct access_service *call_access(const struct ext_call *call);
/* The controller's operations (controller.h; every one NULL when none is
 * installed), and in *arg the argument they take. */
const struct ext_controller *call_controller(const struct ext_call *call, void **arg);

/* The verbs (verbs.c). Each answers its call exactly once, now or later. */
void verb_filter(struct ext_call *call);
void verb_prioritize(struct ext_call *call);
void verb_bind(struct ext_call *call);
void verb_preempt(struct ext_call *call);
/* The progress and migration API (progress.c, migrations.c). */
void verb_progress(struct ext_call *call);
void verb_migrations_post(struct ext_call *call);
void verb_migrations_get(struct ext_call *call);

#endif
