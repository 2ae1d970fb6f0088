/*
 * metrics.h - counters and latency histograms for /metrics, rendered in the
 * Prometheus text exposition format (version 0.0.4).
 *
 * One struct metrics lives in the server; everything is a plain integer
 * updated on the loop thread, so nothing here locks.
 */
#ifndef DRAKE_EXTENDER_METRICS_H
#define DRAKE_EXTENDER_METRICS_H

#include <stddef.h>
#include <stdint.h>

struct evbuffer;

enum ext_verb {
	VERB_FILTER,
	VERB_PRIORITIZE,
	VERB_BIND,
	VERB_PREEMPT,
	VERB_HEALTHZ,
	VERB_READYZ,
	VERB_METRICS,
	VERB_PROGRESS,   /* POST /v1/progress */
	VERB_MIGRATIONS, /* GET and POST /v1/migrations */
	VERB_OTHER,      /* unknown paths and refused methods */
	VERB_COUNT,
};

const char *metrics_verb_name(enum ext_verb v);

#define METRICS_N_BUCKETS 17
#define METRICS_N_CODES   14

/* How a progress report or a migration request ended (api_outcome_name()
 * gives the label). */
enum api_outcome {
	API_ACCEPTED,
	API_BAD_REQUEST,       /* 400, 413 */
	API_UNAUTHENTICATED,   /* 401 */
	API_FORBIDDEN,         /* 403: no pod in the token, another pod, access denied */
	API_UNKNOWN_REPLICA,   /* the controller knows no such replica of a TFJob it runs */
	API_REFUSED_BY_POLICY, /* 409, migrations only */
	API_RATE_LIMITED,      /* 429, progress only */
	API_UNAVAILABLE,       /* 503: no controller, no API server, shutting down */
	API_ERROR,             /* 500 */
	API_OUTCOME_COUNT,
};

enum api_kind { API_PROGRESS, API_MIGRATION, API_KIND_COUNT };

/* What became of a bearer token drake had to check. */
enum token_result {
	TOKEN_CACHED,        /* a TokenReview from less than a minute ago said yes */
	TOKEN_AUTHENTICATED, /* a TokenReview said yes */
	TOKEN_REJECTED,      /* a TokenReview said no */
	TOKEN_FAILED,        /* no answer drake could use */
	TOKEN_RESULT_COUNT,
};

const char *api_outcome_name(enum api_outcome o);

struct metrics {
	uint64_t requests[VERB_COUNT][METRICS_N_CODES];
	uint64_t errors[VERB_COUNT]; /* any reply that is not a clean success */
	uint64_t buckets[VERB_COUNT][METRICS_N_BUCKETS];
	uint64_t latency_count[VERB_COUNT];
	double latency_sum[VERB_COUNT];
	int64_t inflight_binds;
	int64_t gang_binds_waiting; /* the gang_ ones: set by the server just before rendering */
	uint64_t gang_members_bound;
	uint64_t gang_waves_timed_out;
	uint64_t gang_waves_rolled_back;
	uint64_t gang_joins_refused;
	uint64_t tls_reloads;
	uint64_t tls_reload_failures;
	int64_t
	    connections_open; /* the connection_ ones: set by the server just before rendering */
	uint64_t connections_accepted;
	uint64_t connections_h2;
	uint64_t connections_refused;
	uint64_t connections_timed_out;
	uint64_t api_outcomes[API_KIND_COUNT][API_OUTCOME_COUNT];
	uint64_t token_reviews[TOKEN_RESULT_COUNT];
};

void metrics_observe(struct metrics *m, enum ext_verb v, int code, double seconds, int error);

/* Appends the whole exposition to buf; version is the build's version string. */
void metrics_render(const struct metrics *m, const char *version, struct evbuffer *buf);

#endif
