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
	VERB_OTHER, /* unknown paths and refused methods */
	VERB_COUNT,
};

const char *metrics_verb_name(enum ext_verb v);

#define METRICS_N_BUCKETS 17
#define METRICS_N_CODES   10

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
};

void metrics_observe(struct metrics *m, enum ext_verb v, int code, double seconds, int error);

/* Appends the whole exposition to buf; version is the build's version string. */
void metrics_render(const struct metrics *m, const char *version, struct evbuffer *buf);

#endif
