/*
 * access.c - bearer tokens, TokenReviews, SubjectAccessReviews, and the one
 * place the progress and migration API answers and counts; see access.h.
 */
#include "extender/access.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "common/log.h"
#include "extender/call.h"
#include "extender/codec.h"
#include "extender/ratelimit.h"
#include "extender/tokencache.h"
#include "kube/client.h"

#define TOKEN_REVIEWS_PATH  "/apis/authentication.k8s.io/v1/tokenreviews"
#define ACCESS_REVIEWS_PATH "/apis/authorization.k8s.io/v1/subjectaccessreviews"

struct access_service {
	char *pod_audience; /* NULL: the API server's */
	struct tokencache *tokens;
	struct ratelimit *progress;
	double (*clock)(void);
	size_t reviews; /* in flight, at most ACCESS_MAX_REVIEWS */
};

static double monotonic(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

struct access_service *access_service_new(const char *pod_audience, double (*clock)(void))
{
	struct access_service *svc = calloc(1, sizeof(*svc));
	if (!svc)
		return NULL;
	svc->clock = clock ? clock : monotonic;
	if (pod_audience && *pod_audience && !(svc->pod_audience = strdup(pod_audience))) {
		free(svc);
		return NULL;
	}
	svc->tokens = tokencache_new(ACCESS_TOKEN_CACHE, ACCESS_TOKEN_TTL);
	svc->progress =
	    ratelimit_new(ACCESS_PROGRESS_RATE, ACCESS_PROGRESS_BURST, ACCESS_PROGRESS_LIMITS);
	if (!svc->tokens || !svc->progress) {
		access_service_free(svc);
		return NULL;
	}
	return svc;
}

void access_service_free(struct access_service *svc)
{
	if (!svc)
		return;
	tokencache_free(svc->tokens);
	ratelimit_free(svc->progress);
	free(svc->pod_audience);
	free(svc);
}

bool access_progress_allowed(struct access_service *svc, const char *ns, const char *pod,
                             int *retry_after)
{
	char key[RATELIMIT_KEY_MAX];
	snprintf(key, sizeof(key), "%s/%s", ns, pod);
	double wait = 0;
	if (ratelimit_take(svc->progress, key, svc->clock(), &wait))
		return true;
	*retry_after = wait < 1 ? 1 : (int)(wait + 0.999);
	return false;
}

/* ---- answers ---- */

void access_refuse(struct ext_call *call, enum api_kind kind, int code, enum api_outcome outcome,
                   int retry_after, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (kind < API_KIND_COUNT && outcome < API_OUTCOME_COUNT)
		call_metrics(call)->api_outcomes[kind][outcome]++;
	if (code == 401)
		call_add_header(call, "WWW-Authenticate", "Bearer realm=\"drake\"");
	if (retry_after > 0) {
		char s[16];
		snprintf(s, sizeof(s), "%d", retry_after);
		call_add_header(call, "Retry-After", s);
	}
	call_reply_error(call, code, "%s", msg);
}

void access_accept(struct ext_call *call, enum api_kind kind, char *json)
{
	if (json)
		call_metrics(call)->api_outcomes[kind][API_ACCEPTED]++;
	else
		call_metrics(call)->api_outcomes[kind][API_ERROR]++;
	call_reply_json(call, 202, json, false);
}

/* ---- the request's life ---- */

static void req_unref(struct access_req *r)
{
	if (--r->refs > 0)
		return;
	if (r->token) {
		memset(r->token, 0, strlen(r->token));
		free(r->token);
	}
	api_token_review_release(&r->who);
	free(r);
}

static void release_slot(struct access_req *r)
{
	if (r->holds_slot) {
		r->svc->reviews--;
		r->holds_slot = false;
	}
}

/* verb_state_free: the call is being answered, now or at shutdown. */
static void req_detach(void *arg)
{
	struct access_req *r = arg;
	release_slot(r); /* while the server, and so svc, still exists */
	r->call = NULL;
	req_unref(r);
}

struct access_req *access_req_new(struct ext_call *call, enum api_kind kind)
{
	struct access_req *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->call = call;
	r->svc = call_access(call);
	r->kind = kind;
	r->refs = 1;
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	r->t = (double)t.tv_sec + (double)t.tv_nsec / 1e9;
	call->verb_state = r;
	call->verb_state_free = req_detach;
	return r;
}

enum access_bearer access_bearer(struct ext_call *call, const char **token)
{
	*token = NULL;
	const char *h = call_header(call, "Authorization");
	if (!h)
		return BEARER_NONE;
	if (strncasecmp(h, "Bearer ", 7) != 0)
		return BEARER_MALFORMED;
	h += 7;
	while (*h == ' ')
		h++;
	size_t n = strlen(h);
	if (n == 0 || n > ACCESS_MAX_TOKEN || strcspn(h, " \t\r\n") != n)
		return BEARER_MALFORMED;
	*token = h;
	return BEARER_TOKEN;
}

/* The API server's answer to a review, for a message. */
static void api_said(const struct kube_response *resp, char *buf, size_t len)
{
	if (resp->status == 0) {
		snprintf(buf, len, "the API server did not answer: %s",
		         resp->error ? resp->error : "no answer");
		return;
	}
	char *m = ext_status_message(resp->body, resp->body_len);
	snprintf(buf, len, "%s (HTTP %ld)", m && *m ? m : "no message", resp->status);
	free(m);
}

typedef void (*on_answer_fn)(struct access_req *r, const struct kube_response *resp);

struct review {
	struct access_req *r;
	on_answer_fn on_answer;
};

static void on_review(const struct kube_response *resp, void *arg)
{
	struct review *rv = arg;
	struct access_req *r = rv->r;
	on_answer_fn on_answer = rv->on_answer;
	free(rv);
	if (r->call) { /* else answered at shutdown: drop the answer */
		release_slot(r);
		on_answer(r, resp);
	}
	req_unref(r);
}

/* Posts a review body (taken over); on_answer runs only while the call
 * waits. Answers the call itself when the review cannot be sent. */
static void send_review(struct access_req *r, const char *path, char *body, on_answer_fn on_answer)
{
	struct kube_client *kube = call_kube(r->call);
	const char *what = r->kind == API_PROGRESS ? "progress" : "migration";
	if (!kube) {
		free(body);
		access_refuse(r->call, r->kind, 503, API_UNAVAILABLE, 0,
		              "drake has no API-server credentials to check who is calling "
		              "(--kubeconfig or in-cluster)");
		return;
	}
	if (r->svc->reviews >= ACCESS_MAX_REVIEWS) {
		free(body);
		access_refuse(r->call, r->kind, 503, API_UNAVAILABLE, 1,
		              "too many callers being checked at once (%d); retry the %s request",
		              ACCESS_MAX_REVIEWS, what);
		return;
	}
	struct review *rv = body ? calloc(1, sizeof(*rv)) : NULL;
	if (!rv ||
	    kube_request(kube, "POST", path, NULL, body, strlen(body), on_review, rv) != DRAKE_OK) {
		free(body);
		free(rv);
		access_refuse(r->call, r->kind, 500, API_ERROR, 0,
		              "cannot start the API-server request that checks the caller");
		return;
	}
	free(body);
	rv->r = r;
	rv->on_answer = on_answer;
	r->refs++;
	r->svc->reviews++;
	r->holds_slot = true;
}

/* ---- authentication ---- */

static void on_token_reviewed(struct access_req *r, const struct kube_response *resp)
{
	struct metrics *m = call_metrics(r->call);
	char why[512], msg[256];
	if (resp->status != 200 && resp->status != 201) {
		m->token_reviews[TOKEN_FAILED]++;
		api_said(resp, why, sizeof(why));
		access_refuse(r->call, r->kind, resp->status == 0 ? 503 : 500,
		              resp->status == 0 ? API_UNAVAILABLE : API_ERROR, 0,
		              "cannot check the bearer token: TokenReview: %s", why);
		return;
	}
	if (api_token_review_decode(resp->body, resp->body_len, r->audience, &r->who, msg,
	                            sizeof(msg))) {
		m->token_reviews[TOKEN_FAILED]++;
		access_refuse(r->call, r->kind, 500, API_ERROR, 0,
		              "cannot check the bearer token: %s", msg);
		return;
	}
	if (!r->who.authenticated) {
		m->token_reviews[TOKEN_REJECTED]++;
		access_refuse(r->call, r->kind, 401, API_UNAUTHENTICATED, 0,
		              "the bearer token was not accepted by the API server%s%s",
		              r->who.error[0] ? ": " : "", r->who.error);
		return;
	}
	m->token_reviews[TOKEN_AUTHENTICATED]++;
	if (r->who.bound && r->pod_token) { /* only what a pod's review established */
		struct token_pod p = {0};
		memcpy(p.user, r->who.user, sizeof(p.user));
		memcpy(p.ns, r->who.ns, sizeof(p.ns));
		memcpy(p.pod, r->who.pod, sizeof(p.pod));
		memcpy(p.pod_uid, r->who.pod_uid, sizeof(p.pod_uid));
		tokencache_put(r->svc->tokens, r->token, &p, monotonic());
	}
	memset(r->token, 0, strlen(r->token));
	free(r->token);
	r->token = NULL;
	r->then(r);
}

void access_authenticate(struct access_req *r, const char *token, enum access_token_kind kind,
                         void (*then)(struct access_req *r))
{
	struct token_pod p;
	r->then = then;
	r->pod_token = kind == ACCESS_POD_TOKEN;
	r->audience = r->pod_token ? r->svc->pod_audience : NULL;
	if (kind == ACCESS_POD_TOKEN && tokencache_get(r->svc->tokens, token, monotonic(), &p)) {
		call_metrics(r->call)->token_reviews[TOKEN_CACHED]++;
		r->who.authenticated = r->who.bound = true;
		memcpy(r->who.user, p.user, sizeof(p.user));
		memcpy(r->who.ns, p.ns, sizeof(p.ns));
		memcpy(r->who.pod, p.pod, sizeof(p.pod));
		memcpy(r->who.pod_uid, p.pod_uid, sizeof(p.pod_uid));
		then(r);
		return;
	}
	r->token = strdup(token);
	char *body = r->token ? api_token_review_encode(token, r->audience) : NULL;
	if (!body) {
		access_refuse(r->call, r->kind, 500, API_ERROR, 0, "out of memory");
		return;
	}
	send_review(r, TOKEN_REVIEWS_PATH, body, on_token_reviewed);
	/* the body held the token too; the client has its own copy */
}

/* ---- authorisation ---- */

static void on_access_reviewed(struct access_req *r, const struct kube_response *resp)
{
	char why[512], reason[256], msg[256];
	bool allowed;
	if (resp->status != 200 && resp->status != 201) {
		api_said(resp, why, sizeof(why));
		access_refuse(r->call, r->kind, resp->status == 0 ? 503 : 500,
		              resp->status == 0 ? API_UNAVAILABLE : API_ERROR, 0,
		              "cannot check what the caller may do: SubjectAccessReview: %s", why);
		return;
	}
	if (api_access_review_decode(resp->body, resp->body_len, &allowed, reason, sizeof(reason),
	                             msg, sizeof(msg))) {
		access_refuse(r->call, r->kind, 500, API_ERROR, 0,
		              "cannot check what the caller may do: %s", msg);
		return;
	}
	if (!allowed) {
		access_refuse(r->call, r->kind, 403, API_FORBIDDEN, 0, "user \"%s\" may not %s%s%s",
		              r->who.user, r->asked, reason[0] ? "; the API server said: " : "",
		              reason);
		return;
	}
	r->then(r);
}

void access_authorize(struct access_req *r, const struct api_access *a,
                      void (*then)(struct access_req *r))
{
	r->then = then;
	snprintf(r->asked, sizeof(r->asked),
	         "%s %s/%s (group %s) in namespace %s: that needs verb %s on that resource, "
	         "e.g. from the drake-migrator ClusterRole",
	         a->verb, a->resource, a->subresource, a->group, a->ns, a->verb);
	char *body = api_access_review_encode(&r->who, a);
	if (!body) {
		access_refuse(r->call, r->kind, 500, API_ERROR, 0, "out of memory");
		return;
	}
	send_review(r, ACCESS_REVIEWS_PATH, body, on_access_reviewed);
}
