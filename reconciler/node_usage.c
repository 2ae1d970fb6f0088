/*
 * node_usage.c - what nodes measurably use, for the migration rule's load
 * (migrate/migrate.h, "Load"): with --migrate, the controller lists the
 * metrics API's NodeMetrics every opts.node_metrics_s seconds and lays a
 * fresh answer over the migration snapshot. Where the cluster serves no
 * metrics API (no metrics-server: 404), load is requests alone, said once
 * in the log, and the API is asked again ten intervals later.
 *
 * The state outlives the reconciler when a request is in flight at
 * reconciler_free(): the answer's callback then frees it.
 */
#include "reconciler/internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "gang/cluster.h"
#include "kube/client.h"
#include "reconciler/usage_codec.h"

#define USAGE_PATH "/apis/metrics.k8s.io/v1beta1/nodes"
/* A sample older than this many intervals is not used. */
#define USAGE_STALE_INTERVALS 3
/* Asked again after this many intervals when the API is not served. */
#define USAGE_ABSENT_INTERVALS 10

enum usage_state { USAGE_NONE, USAGE_SERVED, USAGE_ABSENT, USAGE_FORBIDDEN, USAGE_FAILED };

struct rec_usage {
	struct node_usage_row *rows; /* the last good answer, sorted */
	size_t n;
	long long interval_ms;
	long long sent_ms; /* when the request in flight was sent */
	long long got_ms;  /* when the request that gave rows was sent; 0: none */
	long long next_ms; /* the next request is sent at or after this */
	enum usage_state state;
	bool inflight, orphaned;
};

static void usage_release(struct rec_usage *u)
{
	free(u->rows);
	free(u);
}

/* Logs a change of state only, so a cluster without metrics says so once. */
static void set_state(struct rec_usage *u, enum usage_state s, long status, const char *why)
{
	bool changed = s != u->state;
	u->state = s;
	if (!changed)
		return;
	switch (s) {
	case USAGE_SERVED:
		log_info("node_metrics_served", "nodes=%zu path=%s", u->n, USAGE_PATH);
		break;
	case USAGE_ABSENT:
		log_info(
		    "node_metrics_absent",
		    "status=%ld path=%s why=\"the cluster serves no metrics API (metrics-server): "
		    "node load is requests alone\"",
		    status, USAGE_PATH);
		break;
	case USAGE_FORBIDDEN:
		log_warn("node_metrics_forbidden",
		         "status=%ld path=%s why=\"drake may not list metrics.k8s.io nodes (its "
		         "ClusterRole): node load is requests alone\"",
		         status, USAGE_PATH);
		break;
	case USAGE_FAILED:
		log_warn("node_metrics_failed", "status=%ld path=%s why=\"%s\"", status, USAGE_PATH,
		         why ? why : "");
		break;
	case USAGE_NONE: break;
	}
}

static void on_answer(const struct kube_response *resp, void *arg)
{
	struct rec_usage *u = arg;
	u->inflight = false;
	if (u->orphaned) {
		usage_release(u);
		return;
	}
	u->next_ms = u->sent_ms + u->interval_ms;
	if (resp->status == 404) {
		u->next_ms = u->sent_ms + USAGE_ABSENT_INTERVALS * u->interval_ms;
		set_state(u, USAGE_ABSENT, resp->status, NULL);
		return;
	}
	if (resp->status == 401 || resp->status == 403) {
		u->next_ms = u->sent_ms + USAGE_ABSENT_INTERVALS * u->interval_ms;
		set_state(u, USAGE_FORBIDDEN, resp->status, NULL);
		return;
	}
	if (resp->status != 200) {
		/* 503: the APIService is registered and its server is down */
		set_state(u, USAGE_FAILED, resp->status,
		          resp->status == 0 ? resp->error : "the metrics API answered an error");
		return;
	}
	struct node_usage_row *rows;
	size_t n, skipped;
	char why[DRAKE_WHY_MAX];
	if (node_usage_decode(resp->body, resp->body_len, &rows, &n, &skipped, why, sizeof(why)) !=
	    DRAKE_OK) {
		set_state(u, USAGE_FAILED, resp->status, why);
		return;
	}
	if (skipped)
		log_warn("node_metrics_items_skipped", "skipped=%zu kept=%zu", skipped, n);
	free(u->rows);
	u->rows = rows;
	u->n = n;
	u->got_ms = u->sent_ms;
	set_state(u, USAGE_SERVED, resp->status, NULL);
}

void rec_usage_tick(struct reconciler *r)
{
	if (!r->opts.migrate || !r->opts.gang || r->opts.node_metrics_s <= 0)
		return;
	if (!r->usage) {
		r->usage = calloc(1, sizeof(*r->usage));
		if (!r->usage)
			return;
		r->usage->interval_ms = (long long)r->opts.node_metrics_s * 1000;
	}
	struct rec_usage *u = r->usage;
	long long now = rec_now_ms(r);
	if (u->inflight || now < u->next_ms)
		return;
	u->sent_ms = now;
	u->next_ms = now + u->interval_ms; /* also when the request cannot start */
	if (kube_request(r->client, "GET", USAGE_PATH, NULL, NULL, 0, on_answer, u) == DRAKE_OK)
		u->inflight = true;
}

void rec_usage_apply(const struct reconciler *r, struct drake_cluster *c)
{
	const struct rec_usage *u = r->usage;
	if (!u || u->state != USAGE_SERVED || !u->got_ms ||
	    rec_now_ms(r) - u->got_ms > USAGE_STALE_INTERVALS * u->interval_ms)
		return;
	for (size_t i = 0; i < c->n; i++) {
		const struct node_usage_row *row = node_usage_find(u->rows, u->n, c->nodes[i].name);
		if (row)
			c->nodes[i].usage = row->u;
	}
}

void rec_usage_free(struct reconciler *r)
{
	if (!r->usage)
		return;
	if (r->usage->inflight)
		r->usage->orphaned = true; /* on_answer frees it */
	else
		usage_release(r->usage);
	r->usage = NULL;
}
