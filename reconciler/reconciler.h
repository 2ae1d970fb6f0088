/*
 * reconciler.h - drake's job controller: watches jobs, their pods and
 * services, and keeps each job's services, gated pods, TF_CONFIG, status
 * and Events right. Level-triggered: every pass recomputes from the caches
 * and the API server, so killing drake at any point and restarting it
 * neither recreates healthy pods nor loses services.
 *
 * Ownership: the reconciler owns its informers and timers; the base and the
 * client must outlive it. reconciler_free() is safe on NULL and while writes
 * are in flight (their late callbacks are detached).
 */
#ifndef DRAKE_RECONCILER_RECONCILER_H
#define DRAKE_RECONCILER_RECONCILER_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include "common/err.h"
#include "place/place.h"

struct job_kind;
struct job_resize_costs;

struct event_base;
struct kube_client;
struct kube_informer;
struct drake_las_opts;

/* Most keys waiting in the work queue (jobs are deduplicated). */
#define RECONCILER_QUEUE_MAX 100000
/* Most pods one job may own that a pass looks at. */
#define RECONCILER_MAX_PODS 4096

struct reconciler_options {
	/* The job kinds served (kind/job.h), at most JOB_KINDS_MAX: one
	 * queue over all of them. Borrowed: they must outlive the reconciler. */
	const struct job_kind *const *kinds;
	size_t nkinds;
	const char *cluster_domain; /* appended to TF_CONFIG hosts, or NULL */
	int resync_s;               /* full pass over every job; 0 = 30 */
	long requeue_ms; /* a job with writes just done, a deadline or a TTL is looked at again
	                    after this; 0 = 1000 */
	const char *gang_resource;        /* requested by gang pods (gang-only mode), or NULL */
	bool gang;                        /* admission plans PS + workers before ungating them;
	                                     false ungates them all at once */
	bool strict_fifo;                 /* with gang: no backfill past a job that waits */
	int policy;                       /* with gang: whose rules admit and scale (enum
	                                     drake_round_policy: 0 drake's, 1 DRAGON's, 2
	                                     Tiresias') */
	const struct drake_las_opts *las; /* tiresias: its thresholds; NULL: the artifact's */
	double las_interval;              /* tiresias: seconds between decisions; 0 = 60 */
	double gang_bind_timeout_s;       /* the extender's bind barrier timeout; 0 = 15. Pacing
	                                     admits what kube-scheduler binds in half of it */
	long gang_max_unbound;            /* admitted gang pods waiting for kube-scheduler at
	                                     once; 0 = adaptive (see gang/pace.h) */
	bool gang_pin;                    /* with gang: ungate members with a node affinity on
	                                     their planned node (admit_ungate_patch) */
	/* With gang: a job whose wave kube-scheduler refused for a reason
	 * outside the planner's model backs off from backoff_min_s, doubling,
	 * up to backoff_max_s (gang/refusal.h); 0 = 5 and 300. */
	double backoff_min_s, backoff_max_s;
	/* With gang: watch PersistentVolumeClaims, so a job waiting for a claim
	 * is tried again the moment one in its namespace appears or changes. */
	bool watch_claims;
	/* With gang: each admission round's inputs and outputs as JSON lines
	 * appended to this file (decision_log.h: rotated past decision_log_max
	 * bytes; 0: never), or NULL. */
	const char *decision_log;
	size_t decision_log_max;
	/* Scaling: thresholds and the speed model of gang/scale.h (NULL: its
	 * defaults, those of drake serve's flags). */
	const struct drake_scale_opts *scale;
	/* What a resize costs a job of each kind (kind/registry.h), which the
	 * policy weighs a change by; NULL: each kind's measured cost. */
	const struct job_resize_costs *resize_costs;
	bool migrate; /* with gang: the migration policy moves replicas off overloaded nodes */
	const struct mig_opts *mig;               /* its thresholds; NULL: migrate/'s defaults */
	const struct mig_progress_opts *progress; /* progress classes; NULL: defaults */
	const char *progress_url;                 /* DRAKE_PROGRESS_URL in job pods, or NULL */
	/* With progress_url: DRAKE_PROGRESS_CA_PEM in job pods (PEM of the CA
	 * that signed drake's serving certificate), or NULL. Borrowed: it must
	 * outlive the reconciler. */
	const char *progress_ca_pem;
	/* With progress_url: the audience of the projected token job pods
	 * report with (job_pod_opts), or NULL: their service-account token. */
	const char *progress_audience;
	/* With migrate: seconds between lists of the metrics API's node usage,
	 * which the migration rule's load then counts (migrate/migrate.h,
	 * "Load"); 0: requests alone. */
	int node_metrics_s;
	/* The controller's clock: wall-clock seconds. NULL: the system's.
	 * Tests pass their own, so deadlines need no real-time waits. */
	double (*clock)(void *arg);
	void *clock_arg;
	/* drake serve --scheduler-name: spec.schedulerName of every pod the
	 * controller creates whose template names no scheduler (a template's
	 * own is kept); see job_pod_json. NULL or "": templates as they are.
	 * Borrowed, not copied: it must outlive the reconciler. */
	const char *scheduler_name;
	/* A warm standby (drake serve --leader-elect): the informers list and
	 * watch, so the caches are synced when this replica starts to lead,
	 * but nothing is decided or written until reconciler_lead(). */
	bool standby;
};

struct drake_scale_opts;
struct mig_opts;
struct mig_progress_opts;
struct reconciler;

struct reconciler *reconciler_new(struct event_base *base, struct kube_client *client,
                                  const struct reconciler_options *opts, char *msg, size_t msglen);
/* Starts the informers; jobs are reconciled once all have synced (and,
 * with opts.standby, once reconciler_lead() has been called). */
drake_err reconciler_start(struct reconciler *r) DRAKE_MUST_CHECK;
/* Ends standby: the controller acts from now on, on the caches it holds. */
void reconciler_lead(struct reconciler *r);
void reconciler_free(struct reconciler *r);
/* True while the job, pod, service (and node) caches are synced: not
 * before their first lists, nor after a watch broke until they relisted. */
bool reconciler_synced(const struct reconciler *r);
/* The same for /readyz: false with why naming the first cache not synced and
 * its reason ("pods cache not synced: watch failed (...), relisting"). */
bool reconciler_ready(const struct reconciler *r, char *why, size_t whylen);
/* Whether node name is Ready in the node cache: 1 Ready, 0 its Ready
 * condition is False or Unknown, -1 not known (no node cache, not synced,
 * no such node, no Ready condition). */
int reconciler_node_ready(const struct reconciler *r, const char *name);
/* The pod informer, so the extender can share the cache (may be NULL). */
struct kube_informer *reconciler_pods(const struct reconciler *r);
/* For the extender's filter: another node among candidates for an admitted
 * pod whose planned node kube-scheduler no longer offers (admit_replan).
 * False, with why, when none fits or the caches cannot say. */
bool reconciler_replan(const struct reconciler *r, const char *ns, const char *pod,
                       const char *const *candidates, size_t n, char *node, size_t nodelen,
                       char *why, size_t whylen);
/* For the extender's prioritize verb: the pod ns/pod's shape and each
 * candidate's state from the caches (place_view.h), node states kept
 * between calls until a pod on the node or the node changes. EINVAL with why when
 * the caches are not synced, there is no node cache (--gang=false) or the
 * pod cannot be read. */
drake_err reconciler_place_view(struct reconciler *r, const char *ns, const char *pod,
                                const char *const *candidates, size_t n,
                                struct place_models *models, struct place_task *task,
                                struct place_node *nodes, bool *known, char *why,
                                size_t whylen) DRAKE_MUST_CHECK;
/* What each waiting gang waits for, as JSON ({"jobs":[...]}); caller frees. */
char *reconciler_jobs_json(const struct reconciler *r);

/* A progress report from pod ns/pod (uid pod_uid, as its token names it;
 * "" from a trusted agent, which names no uid):
 * EINVAL with why when the pod is not a replica of a job drake manages
 * or the sample does not fit the job's series; nothing is kept then. */
drake_err reconciler_progress(struct reconciler *r, const char *ns, const char *pod,
                              const char *pod_uid, int64_t step, double value, bool loss,
                              int64_t total_steps, double t, char *why,
                              size_t len) DRAKE_MUST_CHECK;
/* An explicit request to move replica ns/pod (away from node away and/or
 * onto node onto; "" or NULL for either: the policy picks); a PS or chief
 * only with pause_job. DRAKE_OK: the move is recorded (id names it);
 * ESTATE: refused, why says by which rule; EINVAL: no such replica. */
/* The resource ("tfjobs", "pytorchjobs") of the job drake manages whose
 * replica pod ns/pod is, or NULL: what a migration request for it is
 * authorised against (a static string). */
const char *reconciler_pod_resource(const struct reconciler *r, const char *ns, const char *pod);

drake_err reconciler_migrate(struct reconciler *r, const char *ns, const char *pod,
                             const char *away, const char *onto, bool pause_job, const char *user,
                             char *id, size_t idlen, char *why, size_t len) DRAKE_MUST_CHECK;
/* The recent migration decisions, outcomes and refusals, newest first. */
char *reconciler_migrations_json(const struct reconciler *r);

#endif
