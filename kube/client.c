/*
 * client.c - drake's API-server client: libcurl's multi interface on the
 * caller's libevent loop (curl's hiperfifo pattern: curl tells us which
 * sockets and which timeout to watch; libevent tells curl when they fire),
 * with a token-bucket rate limit that queues requests instead of failing them.
 *
 * Ownership: the client owns every request from kube_request() or
 * kube_stream_start() until its callback has returned; then it frees it.
 * New requests never start inside a curl callback (libcurl forbids adding
 * handles there): they are queued and a "kick" event starts them on the next
 * loop turn. Cancelled streams are removed the same way.
 */
#include "kube/client.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>
#include <event2/event.h>
#include <event2/event_struct.h>

#include "common/log.h"
#include "kube/kubeconfig.h"

/* Longest request path accepted (paths carry names and label selectors). */
#define KUBE_PATH_MAX 8192
/* Error bodies of streams are kept only this far, for the message. */
#define KUBE_STREAM_ERR_BODY_MAX (64 * 1024)

enum req_state { REQ_QUEUED, REQ_ACTIVE };

struct kube_stream {
	struct kube_client *client;
	struct kube_stream *prev, *next; /* in c->queued or c->active */
	enum req_state state;
	CURL *easy;
	struct curl_slist *headers;
	char *method, *url, *content_type, *body;
	size_t body_len;
	long timeout_ms;
	kube_response_cb cb;
	kube_data_cb on_data; /* non-NULL for streams */
	void *arg;
	bool cancelled;
	bool first; /* queued ahead of the others (kube_request_first) */
	char *resp; /* buffered response body */
	size_t resp_len, resp_cap, resp_max;
	const char *fail; /* our own reason to fail the transfer, or NULL */
	char errbuf[CURL_ERROR_SIZE];
};

struct list {
	struct kube_stream *head, *tail;
	size_t n;
};

struct sock_ctx {
	struct event ev;
	struct sock_ctx *prev, *next;
};

struct kube_client {
	struct event_base *base;
	CURLM *multi;
	struct event timer;   /* curl's timeout */
	struct event kick;    /* start queued requests, reap cancelled ones */
	struct event limiter; /* wakes when the bucket has a token again */
	struct kube_config cfg;
	struct kube_client_options opts;
	char *user_agent;
	struct list queued, active;
	size_t active_unary; /* active requests that are not streams */
	struct sock_ctx *socks;
	double tokens;
	struct timespec last_refill;
	int in_curl; /* > 0 while curl_multi_socket_action runs */
	bool closing;
};

static void list_push(struct list *l, struct kube_stream *r)
{
	r->prev = l->tail;
	r->next = NULL;
	if (l->tail)
		l->tail->next = r;
	else
		l->head = r;
	l->tail = r;
	l->n++;
}

/* Inserts r after `after`, or at the head when after is NULL. */
static void list_insert_after(struct list *l, struct kube_stream *after, struct kube_stream *r)
{
	r->prev = after;
	r->next = after ? after->next : l->head;
	if (r->next)
		r->next->prev = r;
	else
		l->tail = r;
	if (after)
		after->next = r;
	else
		l->head = r;
	l->n++;
}

/* Queues r: behind every request, or, for a first one, behind the first
 * ones already queued and ahead of the rest. */
static void queue_push(struct list *q, struct kube_stream *r)
{
	if (!r->first) {
		list_push(q, r);
		return;
	}
	struct kube_stream *after = NULL;
	for (struct kube_stream *x = q->head; x && x->first; x = x->next)
		after = x;
	list_insert_after(q, after, r);
}

static void list_unlink(struct list *l, struct kube_stream *r)
{
	if (r->prev)
		r->prev->next = r->next;
	else
		l->head = r->next;
	if (r->next)
		r->next->prev = r->prev;
	else
		l->tail = r->prev;
	r->prev = r->next = NULL;
	l->n--;
}

static void req_free(struct kube_stream *r)
{
	if (r->easy)
		curl_easy_cleanup(r->easy);
	curl_slist_free_all(r->headers);
	free(r->method);
	free(r->url);
	free(r->content_type);
	free(r->body);
	free(r->resp);
	free(r);
}

/* Takes the request out of whichever list holds it, answers it once, frees it. */
static void finish(struct kube_stream *r, long status, const char *error)
{
	struct kube_client *c = r->client;
	if (r->state == REQ_ACTIVE) {
		curl_multi_remove_handle(c->multi, r->easy);
		list_unlink(&c->active, r);
		if (!r->on_data) {
			c->active_unary--;
			if (c->queued.head && !c->closing)
				event_active(&c->kick, 0, 0); /* a slot is free */
		}
	} else {
		list_unlink(&c->queued, r);
	}
	if (!r->cancelled && r->cb) {
		struct kube_response resp = {
		    .status = status,
		    .body = r->resp ? r->resp : "",
		    .body_len = r->resp ? r->resp_len : 0,
		    .error = status == 0 ? (error ? error : "unknown transport error") : NULL,
		};
		r->cb(&resp, r->arg);
	}
	req_free(r);
}

static bool append(struct kube_stream *r, const char *data, size_t n, bool truncate)
{
	if (n > r->resp_max - r->resp_len) {
		if (!truncate)
			return false;
		n = r->resp_max - r->resp_len;
	}
	if (r->resp_len + n + 1 > r->resp_cap) {
		size_t cap = r->resp_cap ? r->resp_cap : 4096;
		while (cap < r->resp_len + n + 1)
			cap *= 2;
		char *p = realloc(r->resp, cap);
		if (!p)
			return false;
		r->resp = p;
		r->resp_cap = cap;
	}
	memcpy(r->resp + r->resp_len, data, n);
	r->resp_len += n;
	r->resp[r->resp_len] = '\0';
	return true;
}

static size_t on_write(char *data, size_t size, size_t nmemb, void *arg)
{
	struct kube_stream *r = arg;
	size_t n = size * nmemb;
	if (r->cancelled)
		return 0;
	if (r->on_data) {
		long code = 0;
		curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &code);
		if (code >= 200 && code < 300) {
			if (!r->on_data(data, n, r->arg)) {
				r->fail = "aborted by receiver";
				return 0;
			}
			return n;
		}
		append(r, data, n, true); /* keep the start of an error body */
		return n;
	}
	if (!append(r, data, n, false)) {
		r->fail = r->resp_len + n > r->resp_max
		              ? "response body exceeds the client's max_body"
		              : "out of memory buffering the response";
		return 0;
	}
	return n;
}

static void check_multi_info(struct kube_client *c)
{
	CURLMsg *m;
	int left;
	while ((m = curl_multi_info_read(c->multi, &left))) {
		if (m->msg != CURLMSG_DONE)
			continue;
		struct kube_stream *r = NULL;
		curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&r);
		CURLcode res = m->data.result;
		if (res == CURLE_OK) {
			long code = 0;
			curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &code);
			finish(r, code, NULL);
		} else {
			const char *why = r->fail        ? r->fail
			                  : r->errbuf[0] ? r->errbuf
			                                 : curl_easy_strerror(res);
			finish(r, 0, why);
		}
	}
}

static void socket_action(struct kube_client *c, curl_socket_t fd, int flags)
{
	int running = 0;
	c->in_curl++;
	curl_multi_socket_action(c->multi, fd, flags, &running);
	c->in_curl--;
	check_multi_info(c);
}

static void on_sock_event(evutil_socket_t fd, short what, void *arg)
{
	int flags =
	    (what & EV_READ ? CURL_CSELECT_IN : 0) | (what & EV_WRITE ? CURL_CSELECT_OUT : 0);
	socket_action(arg, fd, flags);
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	socket_action(arg, CURL_SOCKET_TIMEOUT, 0);
}

static int on_curl_socket(CURL *e, curl_socket_t s, int what, void *cbp, void *sockp)
{
	struct kube_client *c = cbp;
	struct sock_ctx *sc = sockp;
	if (what == CURL_POLL_REMOVE) {
		if (sc) {
			event_del(&sc->ev);
			if (sc->prev)
				sc->prev->next = sc->next;
			else
				c->socks = sc->next;
			if (sc->next)
				sc->next->prev = sc->prev;
			free(sc);
			curl_multi_assign(c->multi, s, NULL);
		}
		return 0;
	}
	if (!sc) {
		sc = calloc(1, sizeof(*sc));
		if (!sc)
			return -1;
		sc->next = c->socks;
		if (c->socks)
			c->socks->prev = sc;
		c->socks = sc;
		curl_multi_assign(c->multi, s, sc);
	} else {
		event_del(&sc->ev);
	}
	short kind = EV_PERSIST | (what & CURL_POLL_IN ? EV_READ : 0) |
	             (what & CURL_POLL_OUT ? EV_WRITE : 0);
	event_assign(&sc->ev, c->base, s, kind, on_sock_event, c);
	event_add(&sc->ev, NULL);
	return 0;
}

static int on_curl_timer(CURLM *m, long timeout_ms, void *arg)
{
	struct kube_client *c = arg;
	if (timeout_ms < 0) {
		evtimer_del(&c->timer);
		return 0;
	}
	struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
	evtimer_add(&c->timer, &tv);
	return 0;
}

/* ---- rate limit ---- */

static void refill(struct kube_client *c)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	double dt = (double)(now.tv_sec - c->last_refill.tv_sec) +
	            (double)(now.tv_nsec - c->last_refill.tv_nsec) / 1e9;
	c->last_refill = now;
	c->tokens += dt * c->opts.qps;
	if (c->tokens > c->opts.burst)
		c->tokens = c->opts.burst;
}

static bool take_token(struct kube_client *c)
{
	if (c->opts.qps <= 0)
		return true;
	refill(c);
	if (c->tokens >= 1.0) {
		c->tokens -= 1.0;
		return true;
	}
	return false;
}

static drake_err set_auth(struct kube_stream *r, char *err, size_t errlen)
{
	struct kube_client *c = r->client;
	const char *tok = c->cfg.token;
	char *fresh = NULL;
	if (!tok && c->cfg.token_file) {
		drake_err e = kube_token_read(c->cfg.token_file, &fresh, err, errlen);
		if (e != DRAKE_OK)
			return e;
		tok = fresh;
	}
	if (tok) {
		char *h;
		if (asprintf(&h, "Authorization: Bearer %s", tok) < 0) {
			free(fresh);
			return DRAKE_ENOMEM;
		}
		struct curl_slist *l = curl_slist_append(r->headers, h);
		free(h);
		free(fresh);
		if (!l)
			return DRAKE_ENOMEM;
		r->headers = l;
	}
	return DRAKE_OK;
}

static drake_err setup_easy(struct kube_stream *r, char *err, size_t errlen)
{
	struct kube_client *c = r->client;
	const struct kube_config *k = &c->cfg;
	CURL *e = curl_easy_init();
	if (!e)
		return drake_errorf(DRAKE_ENOMEM, err, errlen, "curl_easy_init failed");
	r->easy = e;
	char ct[300];
	snprintf(ct, sizeof(ct), "Content-Type: %s",
	         r->content_type ? r->content_type : "application/json");
	struct curl_slist *h = r->headers;
	const char *std[] = {"Accept: application/json", "Expect:", r->body ? ct : NULL};
	for (size_t i = 0; i < sizeof(std) / sizeof(std[0]); i++) {
		if (!std[i])
			continue;
		struct curl_slist *n = curl_slist_append(h, std[i]);
		if (!n)
			return drake_errorf(DRAKE_ENOMEM, err, errlen, "out of memory");
		r->headers = h = n;
	}
	drake_err de = set_auth(r, err, errlen);
	if (de != DRAKE_OK)
		return de;
	curl_easy_setopt(e, CURLOPT_URL, r->url);
	curl_easy_setopt(e, CURLOPT_PRIVATE, r);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, r->errbuf);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, r->headers);
	curl_easy_setopt(e, CURLOPT_USERAGENT, c->user_agent);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
	if (r->timeout_ms > 0)
		curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, r->timeout_ms);
	if (strcmp(r->method, "GET") != 0)
		curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, r->method);
	if (r->body) {
		curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)r->body_len);
		curl_easy_setopt(e, CURLOPT_POSTFIELDS, r->body);
	}
	if (k->ca_data) {
		struct curl_blob b = {k->ca_data, strlen(k->ca_data), CURL_BLOB_NOCOPY};
		curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &b);
	} else if (k->ca_file) {
		curl_easy_setopt(e, CURLOPT_CAINFO, k->ca_file);
	}
	if (k->client_cert_data) {
		struct curl_blob b = {k->client_cert_data, strlen(k->client_cert_data),
		                      CURL_BLOB_NOCOPY};
		curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, &b);
		curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
	} else if (k->client_cert_file) {
		curl_easy_setopt(e, CURLOPT_SSLCERT, k->client_cert_file);
	}
	if (k->client_key_data) {
		struct curl_blob b = {k->client_key_data, strlen(k->client_key_data),
		                      CURL_BLOB_NOCOPY};
		curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, &b);
		curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
	} else if (k->client_key_file) {
		curl_easy_setopt(e, CURLOPT_SSLKEY, k->client_key_file);
	}
	if (k->insecure_skip_verify) {
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	return DRAKE_OK;
}

/* The first queued request that may start now: streams always may; a
 * request only while fewer than max_inflight are active, so the rest wait
 * in the queue, where their timeout has not started. */
static struct kube_stream *next_startable(struct kube_client *c)
{
	bool full = c->opts.max_inflight > 0 && c->active_unary >= (size_t)c->opts.max_inflight;
	for (struct kube_stream *r = c->queued.head; r; r = r->next)
		if (r->on_data || !full)
			return r;
	return NULL;
}

/* Starts queued requests while the bucket and the in-flight cap allow;
 * re-arms the limiter. */
static void pump(struct kube_client *c)
{
	while (next_startable(c) && !c->closing) {
		if (!take_token(c)) {
			double wait = (1.0 - c->tokens) / c->opts.qps;
			struct timeval tv = {(time_t)wait,
			                     (suseconds_t)((wait - (long)wait) * 1e6) + 1};
			evtimer_add(&c->limiter, &tv);
			return;
		}
		struct kube_stream *r = next_startable(c);
		char err[256] = "";
		drake_err e = setup_easy(r, err, sizeof(err));
		if (e == DRAKE_OK && curl_multi_add_handle(c->multi, r->easy) != CURLM_OK)
			e = drake_errorf(DRAKE_EIO, err, sizeof(err),
			                 "curl_multi_add_handle failed");
		if (e != DRAKE_OK) {
			if (!err[0])
				snprintf(err, sizeof(err), "%s", drake_strerror(e));
			finish(r, 0, err);
			continue;
		}
		list_unlink(&c->queued, r);
		r->state = REQ_ACTIVE;
		list_push(&c->active, r);
		if (!r->on_data)
			c->active_unary++;
	}
}

static void on_kick(evutil_socket_t fd, short what, void *arg)
{
	struct kube_client *c = arg;
	struct kube_stream *r = c->active.head;
	while (r) { /* reap streams cancelled inside curl callbacks */
		struct kube_stream *next = r->next;
		if (r->cancelled)
			finish(r, 0, "cancelled");
		r = next;
	}
	pump(c);
}

static void on_limiter(evutil_socket_t fd, short what, void *arg)
{
	pump(arg);
}

static drake_err enqueue(struct kube_client *c, const char *method, const char *path,
                         const char *content_type, const char *body, size_t body_len,
                         long timeout_ms, bool first, kube_response_cb cb, kube_data_cb on_data,
                         void *arg, struct kube_stream **out)
{
	if (!c || !method || !path || !cb)
		return DRAKE_EINVAL;
	if (c->closing)
		return DRAKE_ESTATE;
	size_t plen = strnlen(path, KUBE_PATH_MAX + 1);
	if (path[0] != '/' || plen > KUBE_PATH_MAX)
		return plen > KUBE_PATH_MAX ? DRAKE_ELIMIT : DRAKE_EINVAL;
	for (size_t i = 0; i < plen; i++)
		if ((unsigned char)path[i] <= ' ' || path[i] == 0x7f)
			return DRAKE_EINVAL; /* callers escape; a raw space or CR is a bug */
	struct kube_stream *r = calloc(1, sizeof(*r));
	if (!r)
		return DRAKE_ENOMEM;
	r->client = c;
	r->cb = cb;
	r->on_data = on_data;
	r->arg = arg;
	r->timeout_ms = timeout_ms;
	r->first = first;
	r->resp_max = on_data ? KUBE_STREAM_ERR_BODY_MAX : c->opts.max_body;
	r->method = strdup(method);
	r->content_type = content_type ? strdup(content_type) : NULL;
	if (asprintf(&r->url, "%s%s", c->cfg.server, path) < 0)
		r->url = NULL;
	if (body) {
		r->body = malloc(body_len + 1);
		if (r->body) {
			memcpy(r->body, body, body_len);
			r->body[body_len] = '\0';
		}
		r->body_len = body_len;
	}
	if (!r->method || !r->url || (body && !r->body) || (content_type && !r->content_type)) {
		req_free(r);
		return DRAKE_ENOMEM;
	}
	r->state = REQ_QUEUED;
	queue_push(&c->queued, r);
	event_active(&c->kick, 0, 0);
	if (out)
		*out = r;
	return DRAKE_OK;
}

drake_err kube_request(struct kube_client *c, const char *method, const char *path,
                       const char *content_type, const char *body, size_t body_len,
                       kube_response_cb cb, void *arg)
{
	return enqueue(c, method, path, content_type, body, body_len, c ? c->opts.timeout_ms : 0,
	               false, cb, NULL, arg, NULL);
}

drake_err kube_request_first(struct kube_client *c, const char *method, const char *path,
                             const char *content_type, const char *body, size_t body_len,
                             kube_response_cb cb, void *arg)
{
	return enqueue(c, method, path, content_type, body, body_len, c ? c->opts.timeout_ms : 0,
	               true, cb, NULL, arg, NULL);
}

drake_err kube_stream_start(struct kube_client *c, const char *path, long timeout_ms,
                            kube_data_cb on_data, kube_response_cb on_done, void *arg,
                            struct kube_stream **out)
{
	if (!on_data || !out)
		return DRAKE_EINVAL;
	return enqueue(c, "GET", path, NULL, NULL, 0, timeout_ms, false, on_done, on_data, arg,
	               out);
}

void kube_stream_cancel(struct kube_stream *s)
{
	if (!s || s->cancelled)
		return;
	s->cancelled = true;
	s->cb = NULL;
	s->on_data = NULL;
	struct kube_client *c = s->client;
	if (c->in_curl > 0) {
		event_active(&c->kick, 0, 0); /* curl forbids removing handles here */
		return;
	}
	finish(s, 0, "cancelled");
}

size_t kube_client_inflight(const struct kube_client *c)
{
	return c ? c->queued.n + c->active.n : 0;
}

static drake_err copy_str(char **dst, const char *src)
{
	*dst = NULL;
	if (src && !(*dst = strdup(src)))
		return DRAKE_ENOMEM;
	return DRAKE_OK;
}

static drake_err copy_config(struct kube_config *d, const struct kube_config *s)
{
	drake_err e = DRAKE_OK;
	memset(d, 0, sizeof(*d));
	e |= copy_str(&d->server, s->server);
	e |= copy_str(&d->ca_file, s->ca_file);
	e |= copy_str(&d->ca_data, s->ca_data);
	e |= copy_str(&d->client_cert_file, s->client_cert_file);
	e |= copy_str(&d->client_cert_data, s->client_cert_data);
	e |= copy_str(&d->client_key_file, s->client_key_file);
	e |= copy_str(&d->client_key_data, s->client_key_data);
	e |= copy_str(&d->token, s->token);
	e |= copy_str(&d->token_file, s->token_file);
	d->insecure_skip_verify = s->insecure_skip_verify;
	return e ? DRAKE_ENOMEM : DRAKE_OK;
}

struct kube_client *kube_client_new(struct event_base *base, const struct kube_config *cfg,
                                    const struct kube_client_options *opts, char *msg,
                                    size_t msglen)
{
	if (!base || !cfg || !cfg->server || !opts) {
		drake_errorf(DRAKE_EINVAL, msg, msglen,
		             "kube_client_new: missing base, server or options");
		return NULL;
	}
	if (opts->max_body == 0 || (opts->qps > 0 && opts->burst < 1)) {
		drake_errorf(DRAKE_EINVAL, msg, msglen,
		             "kube_client_new: max_body must be > 0 and burst >= 1 when qps > 0");
		return NULL;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		drake_errorf(DRAKE_EIO, msg, msglen, "curl_global_init failed");
		return NULL;
	}
	struct kube_client *c = calloc(1, sizeof(*c));
	if (!c || copy_config(&c->cfg, cfg) != DRAKE_OK ||
	    !(c->user_agent = strdup(opts->user_agent ? opts->user_agent : "drake")) ||
	    !(c->multi = curl_multi_init())) {
		if (c) {
			kube_config_release(&c->cfg);
			free(c->user_agent);
			free(c);
		}
		curl_global_cleanup();
		drake_errorf(DRAKE_ENOMEM, msg, msglen, "out of memory creating the API client");
		return NULL;
	}
	c->base = base;
	c->opts = *opts;
	c->opts.user_agent = c->user_agent;
	c->tokens = opts->burst;
	clock_gettime(CLOCK_MONOTONIC, &c->last_refill);
	evtimer_assign(&c->timer, base, on_timer, c);
	evtimer_assign(&c->limiter, base, on_limiter, c);
	event_assign(&c->kick, base, -1, 0, on_kick, c);
	curl_multi_setopt(c->multi, CURLMOPT_SOCKETFUNCTION, on_curl_socket);
	curl_multi_setopt(c->multi, CURLMOPT_SOCKETDATA, c);
	curl_multi_setopt(c->multi, CURLMOPT_TIMERFUNCTION, on_curl_timer);
	curl_multi_setopt(c->multi, CURLMOPT_TIMERDATA, c);
	return c;
}

void kube_client_free(struct kube_client *c)
{
	if (!c)
		return;
	c->closing = true;
	while (c->active.head)
		finish(c->active.head, 0,
		       c->active.head->cancelled ? "cancelled" : "client shut down");
	while (c->queued.head)
		finish(c->queued.head, 0, "client shut down");
	curl_multi_cleanup(c->multi);
	while (c->socks) { /* sockets curl did not report as removed */
		struct sock_ctx *sc = c->socks;
		c->socks = sc->next;
		event_del(&sc->ev);
		free(sc);
	}
	event_del(&c->timer);
	event_del(&c->kick);
	event_del(&c->limiter);
	kube_config_release(&c->cfg);
	free(c->user_agent);
	free(c);
	curl_global_cleanup();
}
