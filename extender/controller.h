/*
 * controller.h - everything the extender asks of drake's TFJob controller,
 * as one table of operations the controller side fills: `drake serve`
 * wires the reconciler in (cmd/serve.c), unit tests put fakes in. The
 * extender includes nothing of the reconciler; this table is the whole
 * seam, and the extender owns it.
 *
 * Every operation runs on the loop, is given the argument installed with
 * the table, and returns at once. Any operation may be NULL; the extender
 * then answers as it does with no controller at all (extender-only mode,
 * `drake serve` without --reconcile):
 *   ready            /readyz answers 200 (standby and shutdown aside)
 *   jobs_json        GET /v1/jobs answers {"jobs":[]}
 *   progress         POST /v1/progress answers 503
 *   migrate          POST /v1/migrations answers 503
 *   migrations_json  GET /v1/migrations answers 503
 *   replan           filter refuses every node for a gang member whose
 *                    planned node is not a candidate
 *   place_view       prioritize cannot be given drake's score
 *                    (ext_server_set_scoring refuses): non-members score 0
 *
 * Ownership: the table and its argument are borrowed; both must outlive
 * the server, or be replaced first.
 */
#ifndef DRAKE_EXTENDER_CONTROLLER_H
#define DRAKE_EXTENDER_CONTROLLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "kube/object.h"
#include "place/place.h"

/* A progress report from a replica, after authentication. */
struct ext_progress {
	/* Who: from the caller's verified bearer token, never from the body. A
	 * caller with a client certificate (a trusted in-cluster agent; a
	 * certificate names no pod) names ns and pod in the body, and pod_uid
	 * is then "". */
	char ns[64], pod[KUBE_NAME_MAX + 1], pod_uid[64];
	int64_t step; /* global step, >= 0 */
	double value; /* metric value, finite */
	bool loss;    /* metric kind: true = loss-like (lower is better), false = accuracy-like */
	int64_t total_steps; /* 0 when not given */
	double t;            /* server receive time, seconds since the epoch */
};

/* An explicit migration request, after authentication and authorisation. */
struct ext_migration_req {
	char ns[64], pod[KUBE_NAME_MAX + 1];
	char away[KUBE_NAME_MAX + 1]; /* "" = from wherever it is */
	char onto[KUBE_NAME_MAX + 1]; /* "" = the policy picks */
	bool pause_job; /* a PS or chief may move (the job stops training meanwhile) */
	char user[256]; /* the authorised caller (TokenReview username), for the record */
};

/* For drake's score on prioritize (extender/score.h): the pod ns/pod's
 * shape into task and each candidate's state into nodes[i], in place/'s
 * terms, known[i] false for a candidate it cannot say; GPU models are
 * named in models. An error (why filled) makes every node score 0. */
typedef drake_err (*ext_place_fn)(void *arg, const char *ns, const char *pod,
                                  const char *const *candidates, size_t n,
                                  struct place_models *models, struct place_task *task,
                                  struct place_node *nodes, bool *known, char *why, size_t whylen);

struct ext_controller {
	/* /readyz answers 200 only when this returns true; it may write a
	 * reason for the 503 into why. */
	bool (*ready)(void *arg, char *why, size_t whylen);
	/* DRAKE_OK: accepted, 202; DRAKE_EINVAL: rejected, 403 (why, e.g.
	 * "pod ml/x is not a replica of a job drake manages"); other errors
	 * 500. why is NUL-terminated and empty on entry. */
	drake_err (*progress)(void *arg, const struct ext_progress *p, char *why, size_t len);
	/* DRAKE_OK: accepted, 202 (id filled, e.g. "ml/job-worker-1@1763880000");
	 * DRAKE_ESTATE: refused by policy, 409 (why); DRAKE_EINVAL: no such
	 * replica, 404 (why); other errors 500. */
	drake_err (*migrate)(void *arg, const struct ext_migration_req *r, char *id, size_t idlen,
	                     char *why, size_t len);
	/* The resource of the job whose replica pod ns/pod is ("tfjobs",
	 * "pytorchjobs"; a static string), NULL when drake manages none: a
	 * migration is authorised against <resource>/migrations. NULL
	 * function: "tfjobs". */
	const char *(*resource_of)(void *arg, const char *ns, const char *pod);
	/* GET /v1/migrations and GET /v1/jobs: a malloc'd JSON document (the
	 * recent migrations; what each waiting gang waits for), NULL when out
	 * of memory (500). */
	char *(*migrations_json)(void *arg);
	char *(*jobs_json)(void *arg);
	ext_place_fn place_view;
	/* Another node among candidates for a gang member whose planned node
	 * kube-scheduler no longer offers: fills node and returns true, or
	 * fills why and returns false (filter then refuses every node). */
	bool (*replan)(void *arg, const char *ns, const char *pod, const char *const *candidates,
	               size_t n, char *node, size_t nodelen, char *why, size_t whylen);
};

#endif
