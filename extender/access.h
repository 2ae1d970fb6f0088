/*
 * access.h - who is calling the progress and migration API, and what they
 * may do (internal to extender/; the handlers are progress.c and
 * migrations.c).
 *
 * A caller proves who it is with a bearer token, which the API server
 * checks in a TokenReview (POST /apis/authentication.k8s.io/v1/tokenreviews);
 * a pod's projected service-account token names the pod it is bound to. What
 * a user may do is asked in a SubjectAccessReview (POST
 * /apis/authorization.k8s.io/v1/subjectaccessreviews). Both go through the
 * extender's API client, asynchronously. Tokens bound to a pod are cached
 * (tokencache.h) for ACCESS_TOKEN_TTL seconds, and at most
 * ACCESS_MAX_REVIEWS reviews are in flight at once, so a flood of bad tokens
 * costs the API server a bounded amount and never starves the Bindings that
 * share the client.
 *
 * Every answer of these endpoints goes through access_refuse() or
 * access_accept(), which count it by outcome (metrics.h) and reply.
 *
 * Ownership: an access_req belongs to its call and to the review in flight
 * for it; whichever lets go last frees it. When the call is answered early
 * (shutdown), the request is detached (call == NULL), and the review's
 * answer is then dropped without touching the server, which may be gone.
 * The server owns the access_service.
 */
#ifndef DRAKE_EXTENDER_ACCESS_H
#define DRAKE_EXTENDER_ACCESS_H

#include <stdbool.h>
#include <stddef.h>

#include "extender/api_codec.h"
#include "extender/metrics.h"

struct ext_call;
struct kube_response;

#define ACCESS_TOKEN_TTL       60.0 /* seconds a reviewed pod token is trusted */
#define ACCESS_TOKEN_CACHE     1024 /* tokens remembered */
#define ACCESS_MAX_REVIEWS     32   /* TokenReviews and SubjectAccessReviews in flight */
#define ACCESS_MAX_TOKEN       8192 /* longest bearer token accepted (bytes) */
#define ACCESS_PROGRESS_RATE   1.0  /* progress reports a pod may make per second ... */
#define ACCESS_PROGRESS_BURST  5.0  /* ... after a burst of this many */
#define ACCESS_PROGRESS_LIMITS 4096 /* pods the rate limiter tracks */

struct access_service;

/* pod_audience: the audience a pod's progress token must carry (drake
 * serve --progress-audience); NULL or "": the API server's own. Copied.
 * clock: seconds on a monotonic clock for the rate limit; NULL: the
 * system's. */
struct access_service *access_service_new(const char *pod_audience, double (*clock)(void));
void access_service_free(struct access_service *svc);

/* Spends one of the pod's progress tokens; false with *retry_after (whole
 * seconds, >= 1) when it has none. */
bool access_progress_allowed(struct access_service *svc, const char *ns, const char *pod,
                             int *retry_after);

/* One request to the API while drake finds out who is calling. */
/* Whose token: a pod's (reviewed for the service's pod audience; cached),
 * or a user's (the API server's audience, reviewed on every request). */
enum access_token_kind { ACCESS_POD_TOKEN, ACCESS_USER_TOKEN };

struct access_req {
	struct ext_call *call; /* NULL once the call has been answered */
	struct access_service *svc;
	enum api_kind kind;
	int refs;
	bool holds_slot;      /* one of ACCESS_MAX_REVIEWS */
	char *token;          /* the bearer token until it has been reviewed */
	bool pod_token;       /* reviewed as a pod's (ACCESS_POD_TOKEN) */
	const char *audience; /* the review's, or NULL: the API server's */
	struct api_token_review who;
	double t; /* when the request arrived, seconds since the epoch */
	union {
		struct api_progress_body progress;
		struct api_migration_body migration;
	} body;
	char asked[400]; /* what access_authorize() asked, for a 403 */
	void (*then)(struct access_req *r);
};

/* A new request owned by call (its verb state). NULL when out of memory. */
struct access_req *access_req_new(struct ext_call *call, enum api_kind kind);

enum access_bearer {
	BEARER_NONE,      /* no Authorization header */
	BEARER_TOKEN,     /* "Bearer <token>" */
	BEARER_MALFORMED, /* another scheme, an empty or over-long token */
};
/* The call's bearer token (pointing into its headers) in *token. */
enum access_bearer access_bearer(struct ext_call *call, const char **token);

/* Reviews token and calls then(r) with r->who authenticated. A token the
 * API server does not accept (for the audience asked) is answered 401, an
 * API server drake cannot use 503 or 500; then is not called. */
void access_authenticate(struct access_req *r, const char *token, enum access_token_kind kind,
                         void (*then)(struct access_req *r));

/* Asks whether r->who may do a, and calls then(r) when allowed; denied is
 * answered 403 naming what is needed. */
void access_authorize(struct access_req *r, const struct api_access *a,
                      void (*then)(struct access_req *r));

/* Answers {"Error": ...} with code and counts outcome for kind. 401 carries
 * WWW-Authenticate; retry_after > 0 adds Retry-After. */
void access_refuse(struct ext_call *call, enum api_kind kind, int code, enum api_outcome outcome,
                   int retry_after, const char *fmt, ...) DRAKE_PRINTF(6, 7);

/* Answers 202 with json (taken over) and counts it accepted. */
void access_accept(struct ext_call *call, enum api_kind kind, char *json);

#endif
