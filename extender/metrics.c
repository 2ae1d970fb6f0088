/* metrics.c - Prometheus text for the extender's counters; see metrics.h. */
#include "extender/metrics.h"

#include <event2/buffer.h>

static const char *const verb_names[VERB_COUNT] = {
    "filter", "prioritize", "bind",     "preempt",    "healthz",
    "readyz", "metrics",    "progress", "migrations", "other",
};

static const char *const outcome_names[API_OUTCOME_COUNT] = {
    "accepted",          "bad_request",  "unauthenticated", "forbidden", "unknown_replica",
    "refused_by_policy", "rate_limited", "unavailable",     "error",
};

static const char *const token_names[TOKEN_RESULT_COUNT] = {
    "cached",
    "authenticated",
    "rejected",
    "failed",
};

/* Upper bounds in seconds; the last bucket is +Inf. */
static const double bucket_le[METRICS_N_BUCKETS - 1] = {
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
    0.025,   0.05,   0.1,     0.25,   0.5,   1,      2.5,   10,
};

/* Status codes drake answers with; anything else is counted as "other". */
static const int codes[METRICS_N_CODES - 1] = {200, 202, 400, 401, 403, 404, 405,
                                               409, 413, 429, 500, 503, 504};

const char *metrics_verb_name(enum ext_verb v)
{
	return v < VERB_COUNT ? verb_names[v] : "other";
}

const char *api_outcome_name(enum api_outcome o)
{
	return o < API_OUTCOME_COUNT ? outcome_names[o] : "error";
}

static size_t code_index(int code)
{
	for (size_t i = 0; i < METRICS_N_CODES - 1; i++)
		if (codes[i] == code)
			return i;
	return METRICS_N_CODES - 1;
}

void metrics_observe(struct metrics *m, enum ext_verb v, int code, double seconds, int error)
{
	if (v >= VERB_COUNT)
		v = VERB_OTHER;
	m->requests[v][code_index(code)]++;
	if (error)
		m->errors[v]++;
	size_t b = 0;
	while (b < METRICS_N_BUCKETS - 1 && seconds > bucket_le[b])
		b++;
	m->buckets[v][b]++;
	m->latency_count[v]++;
	m->latency_sum[v] += seconds;
}

/* Progress reports and migration requests by outcome; each lists only the
 * outcomes its endpoint can have. */
static void render_api(const struct metrics *m, struct evbuffer *buf)
{
	static const struct {
		const char *name, *help;
		unsigned skip; /* bit per outcome that cannot happen */
	} kinds[API_KIND_COUNT] = {
	    {"drake_progress_reports_total", "Progress reports (POST /v1/progress), by outcome.",
	     1u << API_REFUSED_BY_POLICY},
	    {"drake_migration_requests_total",
	     "Migration requests (POST /v1/migrations), by outcome.", 1u << API_RATE_LIMITED},
	};
	for (int k = 0; k < API_KIND_COUNT; k++) {
		evbuffer_add_printf(buf, "# HELP %s %s\n# TYPE %s counter\n", kinds[k].name,
		                    kinds[k].help, kinds[k].name);
		for (int o = 0; o < API_OUTCOME_COUNT; o++)
			if (!(kinds[k].skip & (1u << o)))
				evbuffer_add_printf(buf, "%s{outcome=\"%s\"} %llu\n", kinds[k].name,
				                    outcome_names[o],
				                    (unsigned long long)m->api_outcomes[k][o]);
	}
	evbuffer_add_printf(buf, "# HELP drake_token_reviews_total Bearer tokens checked, by "
	                         "result (cached: a TokenReview under a minute old said yes).\n"
	                         "# TYPE drake_token_reviews_total counter\n");
	for (int r = 0; r < TOKEN_RESULT_COUNT; r++)
		evbuffer_add_printf(buf, "drake_token_reviews_total{result=\"%s\"} %llu\n",
		                    token_names[r], (unsigned long long)m->token_reviews[r]);
}

void metrics_render(const struct metrics *m, const char *version, struct evbuffer *buf)
{
	evbuffer_add_printf(buf,
	                    "# HELP drake_build_info drake's version.\n"
	                    "# TYPE drake_build_info gauge\n"
	                    "drake_build_info{version=\"%s\"} 1\n",
	                    version);
	evbuffer_add_printf(buf, "# HELP drake_requests_total HTTP requests answered, by verb "
	                         "and status code.\n# TYPE drake_requests_total counter\n");
	for (int v = 0; v < VERB_COUNT; v++)
		for (size_t c = 0; c < METRICS_N_CODES; c++) {
			if (!m->requests[v][c])
				continue;
			if (c < METRICS_N_CODES - 1)
				evbuffer_add_printf(buf,
				                    "drake_requests_total{verb=\"%s\",code=\"%d\"} "
				                    "%llu\n",
				                    verb_names[v], codes[c],
				                    (unsigned long long)m->requests[v][c]);
			else
				evbuffer_add_printf(
				    buf, "drake_requests_total{verb=\"%s\",code=\"other\"} %llu\n",
				    verb_names[v], (unsigned long long)m->requests[v][c]);
		}
	evbuffer_add_printf(buf, "# HELP drake_request_errors_total Requests answered with an "
	                         "error (HTTP or an Error field), by verb.\n"
	                         "# TYPE drake_request_errors_total counter\n");
	for (int v = 0; v < VERB_COUNT; v++)
		evbuffer_add_printf(buf, "drake_request_errors_total{verb=\"%s\"} %llu\n",
		                    verb_names[v], (unsigned long long)m->errors[v]);
	evbuffer_add_printf(buf, "# HELP drake_request_duration_seconds Time from a complete "
	                         "request to its reply, by verb.\n"
	                         "# TYPE drake_request_duration_seconds histogram\n");
	for (int v = 0; v <= VERB_PREEMPT; v++) {
		uint64_t cum = 0;
		for (size_t b = 0; b < METRICS_N_BUCKETS; b++) {
			cum += m->buckets[v][b];
			if (b < METRICS_N_BUCKETS - 1)
				evbuffer_add_printf(
				    buf,
				    "drake_request_duration_seconds_bucket{verb=\"%s\","
				    "le=\"%g\"} %llu\n",
				    verb_names[v], bucket_le[b], (unsigned long long)cum);
			else
				evbuffer_add_printf(
				    buf,
				    "drake_request_duration_seconds_bucket{verb=\"%s\","
				    "le=\"+Inf\"} %llu\n",
				    verb_names[v], (unsigned long long)cum);
		}
		evbuffer_add_printf(buf,
		                    "drake_request_duration_seconds_sum{verb=\"%s\"} %.9f\n"
		                    "drake_request_duration_seconds_count{verb=\"%s\"} %llu\n",
		                    verb_names[v], m->latency_sum[v], verb_names[v],
		                    (unsigned long long)m->latency_count[v]);
	}
	evbuffer_add_printf(
	    buf,
	    "# HELP drake_inflight_binds Bind requests received and not yet "
	    "answered.\n# TYPE drake_inflight_binds gauge\ndrake_inflight_binds %lld\n"
	    "# HELP drake_gang_binds_waiting Bind requests held at a gang barrier.\n"
	    "# TYPE drake_gang_binds_waiting gauge\ndrake_gang_binds_waiting %lld\n"
	    "# HELP drake_gang_members_bound_total Pods bound by a complete gang wave.\n"
	    "# TYPE drake_gang_members_bound_total counter\ndrake_gang_members_bound_total %llu\n"
	    "# HELP drake_gang_waves_total Gang waves that did not bind, by outcome.\n"
	    "# TYPE drake_gang_waves_total counter\n"
	    "drake_gang_waves_total{outcome=\"timed_out\"} %llu\n"
	    "drake_gang_waves_total{outcome=\"rolled_back\"} %llu\n"
	    "# HELP drake_gang_joins_refused_total Bind requests refused by a gang barrier: "
	    "the pod was not the member it claimed to be.\n"
	    "# TYPE drake_gang_joins_refused_total counter\ndrake_gang_joins_refused_total %llu\n"
	    "# HELP drake_tls_reloads_total Certificate reloads (SIGHUP), by result.\n"
	    "# TYPE drake_tls_reloads_total counter\n"
	    "drake_tls_reloads_total{result=\"ok\"} %llu\n"
	    "drake_tls_reloads_total{result=\"error\"} %llu\n",
	    (long long)m->inflight_binds, (long long)m->gang_binds_waiting,
	    (unsigned long long)m->gang_members_bound, (unsigned long long)m->gang_waves_timed_out,
	    (unsigned long long)m->gang_waves_rolled_back,
	    (unsigned long long)m->gang_joins_refused, (unsigned long long)m->tls_reloads,
	    (unsigned long long)m->tls_reload_failures);
	evbuffer_add_printf(
	    buf,
	    "# HELP drake_connections_open HTTPS connections open now.\n"
	    "# TYPE drake_connections_open gauge\ndrake_connections_open %lld\n"
	    "# HELP drake_connections_accepted_total HTTPS connections accepted (each a TLS "
	    "handshake).\n"
	    "# TYPE drake_connections_accepted_total counter\n"
	    "drake_connections_accepted_total %llu\n"
	    "# HELP drake_connections_http2_total Accepted connections that speak HTTP/2.\n"
	    "# TYPE drake_connections_http2_total counter\n"
	    "drake_connections_http2_total %llu\n"
	    "# HELP drake_connections_closed_total Connections drake closed, by reason: "
	    "max_connections (refused past the cap), request_timeout (no whole request in time).\n"
	    "# TYPE drake_connections_closed_total counter\n"
	    "drake_connections_closed_total{reason=\"max_connections\"} %llu\n"
	    "drake_connections_closed_total{reason=\"request_timeout\"} %llu\n",
	    (long long)m->connections_open, (unsigned long long)m->connections_accepted,
	    (unsigned long long)m->connections_h2, (unsigned long long)m->connections_refused,
	    (unsigned long long)m->connections_timed_out);
	render_api(m, buf);
}
