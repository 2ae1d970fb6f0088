/*
 * api_codec.h - JSON for the progress and migration API (internal to
 * extender/): the bodies callers POST to /v1/progress and /v1/migrations,
 * and the TokenReview and SubjectAccessReview drake sends to the API server
 * to learn who a caller is and what they may do.
 *
 * The request bodies are strict, unlike the extender verbs': a body over
 * API_MAX_BODY is refused (ELIMIT), every field's type is checked, and an
 * unknown field is refused (EINVAL) rather than ignored, so a misspelt
 * "totalStep" is an error the caller sees instead of a number drake never
 * read. JSON null is treated as an absent field. Duplicate keys are refused.
 *
 * Ownership: decoders fill caller-owned structs; api_token_review_release()
 * frees what a decoded TokenReview holds. Encoders return malloc'd strings,
 * NULL when out of memory.
 */
#ifndef DRAKE_EXTENDER_API_CODEC_H
#define DRAKE_EXTENDER_API_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

/* Largest body accepted on /v1/progress and /v1/migrations. */
#define API_MAX_BODY 4096

/* Field sizes, NUL included: a namespace is a DNS label, a pod or node a
 * DNS subdomain. */
#define API_NS_SIZE   64
#define API_NAME_SIZE 254

/* POST /v1/progress:
 * {"step":123,"value":0.81,"metric":"accuracy","totalSteps":10000}
 * plus "namespace" and "pod", which only a caller with a client
 * certificate needs (a token names its pod itself). */
struct api_progress_body {
	int64_t step;            /* >= 0 */
	double value;            /* finite */
	bool loss;               /* metric "loss" (lower is better), else "accuracy" */
	int64_t total_steps;     /* >= 1, or 0 when absent */
	char ns[API_NS_SIZE];    /* "" when absent */
	char pod[API_NAME_SIZE]; /* "" when absent */
};

drake_err api_progress_decode(const char *body, size_t len, struct api_progress_body *out,
                              char *msg, size_t msglen) DRAKE_MUST_CHECK;

/* POST /v1/migrations:
 * {"namespace":"ml","pod":"job-worker-1","awayFrom":"node-a","onto":"node-b",
 *  "pauseJob":false} */
struct api_migration_body {
	char ns[API_NS_SIZE];     /* required */
	char pod[API_NAME_SIZE];  /* required */
	char away[API_NAME_SIZE]; /* "" when absent */
	char onto[API_NAME_SIZE]; /* "" when absent */
	bool pause_job;           /* "pauseJob": a PS or chief may move; false when absent */
};

drake_err api_migration_decode(const char *body, size_t len, struct api_migration_body *out,
                               char *msg, size_t msglen) DRAKE_MUST_CHECK;

/* Longest user name and uid kept from a TokenReview; longer ones are
 * refused rather than cut. groups and extra are kept as JSON text (each at
 * most API_USER_JSON_MAX bytes) only to be handed back in a
 * SubjectAccessReview. */
#define API_USER_SIZE     256
#define API_UID_SIZE      128
#define API_USER_JSON_MAX 8192

/* What the API server said about a bearer token. */
struct api_token_review {
	bool authenticated;
	char error[256];          /* status.error, when not authenticated */
	char user[API_USER_SIZE]; /* status.user.username */
	char uid[API_UID_SIZE];
	char *groups; /* status.user.groups as JSON, or NULL */
	char *extra;  /* status.user.extra as JSON, or NULL */
	/* A service-account token bound to a pod: the namespace from the
	 * username system:serviceaccount:<ns>:<sa>, the pod from the extra
	 * authentication.kubernetes.io/pod-name and pod-uid. */
	bool bound;
	char ns[API_NS_SIZE];
	char pod[API_NAME_SIZE];
	char pod_uid[64];
};

/* The TokenReview to POST for token: for audience (spec.audiences), or the
 * API server's own audiences when audience is NULL or "". */
char *api_token_review_encode(const char *token, const char *audience);
/* Decodes a TokenReview answer. EINVAL when it is no TokenReview or its user
 * is malformed; an unauthenticated token is DRAKE_OK with authenticated
 * false. With audience (the one the review asked for), a token is
 * authenticated only when status.audiences names it: an authenticator that
 * ignores spec.audiences answers for the API server's own audience, which
 * is not the one asked for. Release out in every case. */
drake_err api_token_review_decode(const char *body, size_t len, const char *audience,
                                  struct api_token_review *out, char *msg,
                                  size_t msglen) DRAKE_MUST_CHECK;
void api_token_review_release(struct api_token_review *r);

/* What a SubjectAccessReview asks: may the user do verb on
 * group/resource/subresource in namespace ns? */
struct api_access {
	const char *verb, *group, *resource, *subresource, *ns;
};

/* The SubjectAccessReview for who (user, uid, groups, extra as reviewed). */
char *api_access_review_encode(const struct api_token_review *who, const struct api_access *a);
/* status.allowed into *allowed, status.reason (or evaluationError) into
 * reason. EINVAL when the body is no SubjectAccessReview. */
drake_err api_access_review_decode(const char *body, size_t len, bool *allowed, char *reason,
                                   size_t reasonlen, char *msg, size_t msglen) DRAKE_MUST_CHECK;

/* {"id":"<id>"}, the answer to an accepted migration. */
char *api_id_encode(const char *id);

/* The "Error" of an answer drake wrote ({"Error": "..."}), copied into buf;
 * "" when the body has none. Never fails. For `drake progress`. */
const char *api_error_message(const char *body, size_t len, char *buf, size_t buflen);

/* True when s is a DNS-1123 label (a namespace name). */
bool api_label_valid(const char *s);

#endif
