/*
 * informer.c - the list+watch state machine behind each cache:
 *
 *   LIST (pages) --done--> WATCH --stream ends (200)--> WATCH again
 *     ^                      |
 *     +-- 410 Gone, undecodable event, failed or broken watch, failed list --+
 *                     (at once after events, else after backoff)
 *
 * A watch that breaks may have lost events, and a cache behind a 410 holds
 * the world as it was: from the break until a relist completes the informer
 * is stale, kube_informer_synced() is false and says why, and nothing
 * should decide on what it holds.
 *
 * A relist bumps a generation; every listed object is stored with it and
 * whatever the list no longer has is swept out as deletes, so handlers see
 * the difference, not the whole world again.
 *
 * Ownership: the informer owns its cache, stream and timers. A list request
 * cannot be cancelled, so it carries a small ticket; freeing the informer
 * detaches the ticket and the late callback frees only the ticket.
 */
#include "kube/informer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <event2/event_struct.h>

#include "common/log.h"
#include "kube/client.h"
#include "kube/object.h"
#include "kube/watch_parse.h"

/* Longest list continue token kept. */
#define KUBE_CONTINUE_MAX 4096

struct ticket {
	struct kube_informer *inf; /* NULL once the informer is gone */
};

struct kube_informer {
	struct event_base *base;
	struct kube_client *client;
	struct kube_informer_options opts;
	struct kube_informer_handlers h;
	char *name, *path;
	struct kube_cache cache;
	struct kube_watch_parser parser;
	struct kube_stream *stream;
	struct ticket *list_ticket;
	struct event retry;
	bool retry_relist; /* what the retry timer starts */
	bool synced;
	bool stale;         /* a watch broke: the cache may lag until the next list */
	bool relist_needed; /* set while a watch is being torn down */
	char stale_why[160];
	unsigned gen, lists;
	struct timespec list_start; /* when the current fresh list began */
	long backoff_ms;
	unsigned events_since_connect;
	char rv[KUBE_RV_MAX];
	char cont[KUBE_CONTINUE_MAX];
};

static void start_list(struct kube_informer *inf);
static void start_watch(struct kube_informer *inf);

/* Percent-encodes s (opaque tokens may hold '+', '/', '='). */
static void escape(char *out, size_t len, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;
	for (; *s && o + 4 < len; s++) {
		unsigned char ch = (unsigned char)*s;
		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' || ch == '.' || ch == '~') {
			out[o++] = (char)ch;
		} else {
			out[o++] = '%';
			out[o++] = hex[ch >> 4];
			out[o++] = hex[ch & 15];
		}
	}
	out[o] = '\0';
}

static void schedule(struct kube_informer *inf, bool relist)
{
	inf->retry_relist = relist;
	long ms = inf->backoff_ms;
	struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
	evtimer_add(&inf->retry, &tv);
	inf->backoff_ms *= 2;
	if (inf->backoff_ms > inf->opts.backoff_max_ms)
		inf->backoff_ms = inf->opts.backoff_max_ms;
	log_info("informer_retry", "informer=%s in_ms=%ld relist=%d", inf->name, ms, relist);
}

/* The cache stops being trusted until a list completes. */
static void go_stale(struct kube_informer *inf, const char *what, long status, const char *error)
{
	if (status)
		snprintf(inf->stale_why, sizeof(inf->stale_why), "%s (HTTP %ld), relisting", what,
		         status);
	else
		snprintf(inf->stale_why, sizeof(inf->stale_why), "%s (%s), relisting", what,
		         error ? error : "no answer");
	if (!inf->stale && inf->synced) {
		char q[200];
		log_warn("informer_stale", "informer=%s why=%s", inf->name,
		         drake_log_quote(inf->stale_why, q, sizeof(q)));
	}
	inf->stale = true;
}

static void on_retry(evutil_socket_t fd, short what, void *arg)
{
	struct kube_informer *inf = arg;
	if (inf->retry_relist)
		start_list(inf);
	else
		start_watch(inf);
}

/* ---- applying objects ---- */

static void apply_put(struct kube_informer *inf, struct json_t *obj)
{
	void *old = NULL, *now = NULL;
	bool changed = false;
	drake_err e = kube_cache_put(&inf->cache, obj, inf->gen, &now, &old, &changed);
	if (e != DRAKE_OK) {
		log_warn("informer_drop", "informer=%s err=%s", inf->name, drake_strerror(e));
		return;
	}
	if (!changed)
		return;
	if (!old) {
		if (inf->h.on_add)
			inf->h.on_add(now, inf->h.arg);
	} else if (inf->h.on_update) {
		inf->h.on_update(old, now, inf->h.arg);
	}
	kube_cache_drop(&inf->cache, old);
}

static void apply_delete(struct kube_informer *inf, struct json_t *obj)
{
	struct kube_meta m;
	if (kube_obj_meta(obj, &m) != DRAKE_OK)
		return;
	void *gone = kube_cache_remove(&inf->cache, m.ns, m.name), *final = NULL;
	char msg[160];
	/* the event's copy is the final state; report that one */
	if (kube_cache_decode(&inf->cache, obj, &final, msg, sizeof(msg)) != DRAKE_OK) {
		log_warn("informer_drop", "informer=%s err=%s", inf->name, msg);
		final = NULL;
	}
	if (inf->h.on_delete && (final || gone))
		inf->h.on_delete(final ? final : gone, inf->h.arg);
	kube_cache_drop(&inf->cache, final);
	kube_cache_drop(&inf->cache, gone);
}

static bool on_swept(void *obj, void *arg)
{
	struct kube_informer *inf = arg;
	if (inf->h.on_delete)
		inf->h.on_delete(obj, inf->h.arg);
	return true;
}

/* ---- list ---- */

static void on_list_item(const struct kube_watch_event *ev, void *arg)
{
	apply_put(arg, ev->object);
}

static void on_list(const struct kube_response *resp, void *arg)
{
	struct ticket *t = arg;
	struct kube_informer *inf = t->inf;
	free(t);
	if (!inf)
		return;
	inf->list_ticket = NULL;
	if (resp->status == 410 && inf->cont[0]) {
		/* the continue token expired mid-list: start the list over */
		inf->cont[0] = '\0';
		start_list(inf);
		return;
	}
	if (resp->status != 200) {
		log_warn("informer_list_failed", "informer=%s status=%ld error=%s", inf->name,
		         resp->status, resp->error ? resp->error : "-");
		go_stale(inf, "list failed", resp->status, resp->error);
		inf->cont[0] = '\0';
		schedule(inf, true);
		return;
	}
	char msg[256], rv[KUBE_RV_MAX];
	drake_err e = kube_list_decode(resp->body, resp->body_len, on_list_item, inf, rv, inf->cont,
	                               sizeof(inf->cont), msg, sizeof(msg));
	if (e != DRAKE_OK) {
		log_warn("informer_list_bad", "informer=%s err=%s", inf->name, msg);
		inf->cont[0] = '\0';
		schedule(inf, true);
		return;
	}
	if (inf->cont[0]) {
		start_list(inf); /* next page */
		return;
	}
	kube_cache_sweep(&inf->cache, inf->gen, on_swept, inf);
	snprintf(inf->rv, sizeof(inf->rv), "%s", rv);
	inf->lists++;
	struct timespec end;
	clock_gettime(CLOCK_MONOTONIC, &end);
	double took = (double)(end.tv_sec - inf->list_start.tv_sec) +
	              (double)(end.tv_nsec - inf->list_start.tv_nsec) / 1e9;
	/* Every completed list says how long it took: a relist after 410 Gone
	 * at 50,000 pods is the cost an outage of the watch has. */
	log_info(inf->synced ? "informer_resynced" : "informer_synced",
	         "informer=%s objects=%zu rv=%s lists=%u seconds=%.3f", inf->name,
	         kube_cache_count(&inf->cache), inf->rv, inf->lists, took);
	inf->synced = true;
	inf->stale = false;
	inf->backoff_ms = inf->opts.backoff_min_ms;
	start_watch(inf);
}

static void start_list(struct kube_informer *inf)
{
	if (!inf->cont[0]) {
		inf->gen++; /* a fresh list: what it does not return is gone */
		clock_gettime(CLOCK_MONOTONIC, &inf->list_start);
	}
	char cont[3 * KUBE_CONTINUE_MAX + 1] = "";
	escape(cont, sizeof(cont), inf->cont);
	size_t plen = strlen(inf->path) + sizeof(cont) + 64;
	char *path = malloc(plen);
	struct ticket *t = calloc(1, sizeof(*t));
	if (!path || !t) {
		free(path);
		free(t);
		schedule(inf, true);
		return;
	}
	snprintf(path, plen, "%s?limit=%d%s%s", inf->path, inf->opts.page_size,
	         cont[0] ? "&continue=" : "", cont);
	t->inf = inf;
	drake_err e = kube_request(inf->client, "GET", path, NULL, NULL, 0, on_list, t);
	free(path);
	if (e != DRAKE_OK) {
		free(t);
		log_warn("informer_list_failed", "informer=%s err=%s", inf->name,
		         drake_strerror(e));
		schedule(inf, true);
		return;
	}
	inf->list_ticket = t;
}

/* ---- watch ---- */

static void on_watch_event(const struct kube_watch_event *ev, void *arg)
{
	struct kube_informer *inf = arg;
	if (inf->relist_needed)
		return;
	inf->events_since_connect++;
	switch (ev->type) {
	case KUBE_EVENT_ADDED:
	case KUBE_EVENT_MODIFIED: apply_put(inf, ev->object); break;
	case KUBE_EVENT_DELETED: apply_delete(inf, ev->object); break;
	case KUBE_EVENT_BOOKMARK: break;
	case KUBE_EVENT_ERROR:
		log_info("informer_watch_error", "informer=%s code=%ld", inf->name, ev->error_code);
		if (ev->error_code == 410) {
			inf->relist_needed = true;
			go_stale(inf, "watch expired", 410, NULL);
		}
		return;
	}
	if (ev->resource_version[0])
		snprintf(inf->rv, sizeof(inf->rv), "%s", ev->resource_version);
}

static bool on_watch_data(const char *data, size_t len, void *arg)
{
	struct kube_informer *inf = arg;
	char msg[256];
	drake_err e =
	    kube_watch_parser_feed(&inf->parser, data, len, on_watch_event, inf, msg, sizeof(msg));
	if (e != DRAKE_OK) {
		/* a skipped event would leave the cache wrong: relist */
		log_warn("informer_bad_event", "informer=%s err=%s", inf->name, msg);
		inf->relist_needed = true;
		go_stale(inf, "undecodable watch event", 0, msg);
	}
	return !inf->relist_needed;
}

static void on_watch_done(const struct kube_response *resp, void *arg)
{
	struct kube_informer *inf = arg;
	inf->stream = NULL;
	if (kube_watch_parser_pending(&inf->parser))
		log_warn("informer_truncated_event", "informer=%s bytes=%zu", inf->name,
		         kube_watch_parser_pending(&inf->parser));
	kube_watch_parser_reset(&inf->parser);
	if (inf->relist_needed || resp->status == 410) {
		if (resp->status == 410)
			go_stale(inf, "watch expired", 410, NULL);
		inf->relist_needed = false;
		if (inf->events_since_connect > 0 || resp->status == 410)
			start_list(inf); /* stale resourceVersion: relist at once */
		else
			schedule(inf, true);
		return;
	}
	if (resp->status == 200 && inf->events_since_connect > 0) {
		/* the server's timeoutSeconds ended a healthy watch */
		inf->backoff_ms = inf->opts.backoff_min_ms;
		start_watch(inf);
		return;
	}
	if (resp->status != 200) {
		/* a broken watch may have lost events: relist */
		log_warn("informer_watch_failed", "informer=%s status=%ld error=%s", inf->name,
		         resp->status, resp->error ? resp->error : "-");
		go_stale(inf, "watch failed", resp->status, resp->error);
		schedule(inf, true);
		return;
	}
	schedule(inf, false); /* an empty watch ended: watch again, not at once */
}

static void start_watch(struct kube_informer *inf)
{
	char rv[3 * KUBE_RV_MAX + 1];
	escape(rv, sizeof(rv), inf->rv);
	char path[8192];
	snprintf(path, sizeof(path),
	         "%s?watch=1&allowWatchBookmarks=true&resourceVersion=%s&timeoutSeconds=%d",
	         inf->path, rv, inf->opts.watch_timeout_s);
	inf->events_since_connect = 0;
	inf->relist_needed = false;
	long deadline_ms = (inf->opts.watch_timeout_s + 30) * 1000L;
	drake_err e = kube_stream_start(inf->client, path, deadline_ms, on_watch_data,
	                                on_watch_done, inf, &inf->stream);
	if (e != DRAKE_OK) {
		inf->stream = NULL;
		log_warn("informer_watch_failed", "informer=%s err=%s", inf->name,
		         drake_strerror(e));
		go_stale(inf, "watch not started", 0, drake_strerror(e));
		schedule(inf, true);
	}
}

/* ---- lifecycle ---- */

struct kube_informer *kube_informer_new(struct event_base *base, struct kube_client *client,
                                        const struct kube_informer_options *opts,
                                        const struct kube_informer_handlers *handlers, char *msg,
                                        size_t msglen)
{
	if (!base || !client || !opts || !opts->path || opts->path[0] != '/' ||
	    strlen(opts->path) > 1024) {
		drake_errorf(DRAKE_EINVAL, msg, msglen,
		             "informer needs a base, a client and a path");
		return NULL;
	}
	struct kube_informer *inf = calloc(1, sizeof(*inf));
	if (!inf || !(inf->path = strdup(opts->path)) ||
	    !(inf->name = strdup(opts->name ? opts->name : opts->path))) {
		if (inf)
			free(inf->path);
		free(inf);
		drake_errorf(DRAKE_ENOMEM, msg, msglen, "out of memory");
		return NULL;
	}
	inf->base = base;
	inf->client = client;
	inf->opts = *opts;
	if (inf->opts.page_size <= 0)
		inf->opts.page_size = 500;
	if (inf->opts.watch_timeout_s <= 0)
		inf->opts.watch_timeout_s = 300;
	if (inf->opts.backoff_min_ms <= 0)
		inf->opts.backoff_min_ms = 500;
	if (inf->opts.backoff_max_ms < inf->opts.backoff_min_ms)
		inf->opts.backoff_max_ms =
		    inf->opts.backoff_min_ms > 30000 ? inf->opts.backoff_min_ms : 30000;
	inf->backoff_ms = inf->opts.backoff_min_ms;
	if (handlers)
		inf->h = *handlers;
	kube_cache_init_codec(&inf->cache, opts->codec);
	kube_watch_parser_init(&inf->parser, opts->max_event);
	evtimer_assign(&inf->retry, base, on_retry, inf);
	return inf;
}

drake_err kube_informer_start(struct kube_informer *inf)
{
	if (!inf)
		return DRAKE_EINVAL;
	if (inf->list_ticket || inf->stream || inf->lists)
		return DRAKE_ESTATE;
	start_list(inf);
	return DRAKE_OK;
}

void kube_informer_free(struct kube_informer *inf)
{
	if (!inf)
		return;
	if (inf->list_ticket)
		inf->list_ticket->inf = NULL;
	kube_stream_cancel(inf->stream);
	event_del(&inf->retry);
	kube_cache_release(&inf->cache);
	kube_watch_parser_release(&inf->parser);
	free(inf->name);
	free(inf->path);
	free(inf);
}

bool kube_informer_synced(const struct kube_informer *inf)
{
	return inf && inf->synced && !inf->stale;
}

const char *kube_informer_unsynced_why(const struct kube_informer *inf)
{
	if (!inf)
		return "no cache";
	if (!inf->synced)
		return "first list not complete";
	return inf->stale ? inf->stale_why : NULL;
}

bool kube_informers_synced(struct kube_informer *const *infs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!kube_informer_synced(infs[i]))
			return false;
	return true;
}

const char *kube_informer_name(const struct kube_informer *inf)
{
	return inf->name;
}

const char *kube_informer_resource_version(const struct kube_informer *inf)
{
	return inf->rv;
}

unsigned kube_informer_list_count(const struct kube_informer *inf)
{
	return inf->lists;
}

const struct kube_cache *kube_informer_cache(const struct kube_informer *inf)
{
	return &inf->cache;
}

void *kube_informer_get(const struct kube_informer *inf, const char *ns, const char *name)
{
	return kube_cache_lookup(&inf->cache, ns, name);
}
