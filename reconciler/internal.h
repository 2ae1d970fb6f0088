/*
 * internal.h - what the reconciler's files share (internal to reconciler/):
 * the controller's state and the functions one part offers the others.
 *
 *   reconciler.c  informer callbacks, the drain and tick events, lifecycle
 *   queue.c       the work queue (dirty job keys) and per-job write backoff
 *   writes.c      writes to the API server and Events, each tied to its job
 *   sync.c        one pass over one job: services, pods, status
 *   backstop.c    the gang invariant's backstop: a gang below its per-role
 *                 minimum is repaired or rolled back (gang/backstop.h decides)
 *   waves.c       the admission loop: rounds, pacing, waves in flight
 *   pass_world.c  one round's snapshot and decoded jobs (pass_world.h),
 *                 lent to admission and migration
 *   views.c       what the extender asks of the controller
 *
 * Ownership: struct reconciler owns everything below; reconciler_free()
 * releases it. Strings in keys are copies.
 */
#ifndef DRAKE_RECONCILER_INTERNAL_H
#define DRAKE_RECONCILER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include <event2/event_struct.h>

#include "common/err.h"
#include "gang/admission.h"
#include "gang/pace.h"
#include "gang/scale.h"
#include "migrate/migrate.h"
#include "migrate/progress.h"
#include "reconciler/admit.h"
#include "reconciler/decision_log.h"
#include "reconciler/migration.h"
#include "reconciler/place_view.h"
#include "reconciler/wave_room.h"
#include "reconciler/reconciler.h"
#include "kind/status.h"
#include "kind/job.h"
#include "kind/registry.h"

struct json_t;
struct kube_pod;
struct kube_resource;
struct write_ctx;

#define KEY_MAX (64 + 254 + 2)

#define RECONCILER_MAX_PROGRESS 4096 /* jobs whose progress is kept */
#define RECONCILER_MOVES_KEPT   64   /* decisions GET /v1/migrations lists */

struct rec_progress;
struct rec_observed;
struct drake_round_job;
struct drake_las_state;
struct mig_progress;
struct rec_usage;

struct keyset {
	char (*keys)[KEY_MAX];
	size_t n, cap;
};

/* Per job: writes in flight, and a backoff after failed ones so a job whose
 * writes keep failing (RBAC, quota, admission) is not retried every second. */
struct inflight {
	char key[KEY_MAX];
	int n;
	int failures;       /* consecutive passes with a failed write */
	bool failed;        /* a write of the current pass failed */
	long long retry_ms; /* no pass before this (clock ms) */
	/* Creates the caches have not seen yet (the expectations of
	 * Kubernetes' controllers): until the informers have delivered an add
	 * for every slot in expect[], or until expect_ms, a pass creates
	 * nothing, so a cache that lags the API server never makes it create a
	 * pod twice (409 AlreadyExists, a wasted write). Adds seen, not the
	 * cache's contents: members that vanish meanwhile (a roll back's
	 * deletions, a created pod deleted again at once) must not hold the
	 * expectation open. */
	struct rec_slot *expect;
	size_t nexpect;
	long long expect_ms; /* 0: nothing expected */
};

/* A replica slot whose pod or service a pass created. */
struct rec_slot {
	unsigned short index;
	unsigned char type; /* enum job_rtype */
	bool svc;
};

/* A wave whose patches were sent. Admission holds further rounds until the
 * cache shows every pod of it planned (so the next snapshot charges it), or
 * until the wave is old enough to have failed. Pacing then follows it until
 * kube-scheduler has bound it: its unbound pods count against the budget and
 * its binds measure kube-scheduler's rate. A wave still unbound after
 * DRAKE_BACKSTOP_STUCK_TIMEOUTS barrier timeouts stops counting: the
 * backstop releases it. */
#define WAVE_SETTLE_MS 30000
#define PACE_FLOOR     64 /* pods; the budget before any rate is measured */
struct pending_wave {
	struct admit_wave w;
	long long sent_ms;
	int bound; /* members seen bound at the last scan */
};

/* A wave the round admitted into room it freed itself (a shrink, a
 * preemption), kept back with its pods gated until the pods the round
 * deleted on its nodes are gone (wave_room.h). Admission holds further
 * rounds meanwhile, as for a wave settling. */
struct deferred_wave {
	struct admit_wave w;
	struct room_pod *waits;
	size_t nwaits;
	long long since_ms;
};

/* A scale record written to a job. Admission holds further rounds until
 * the cache shows it (a round before would see the old membership and
 * re-admit the workers just given away), or until it is old enough to have
 * failed. */
struct pending_scale {
	char ns[64], job[KUBE_NAME_MAX + 1];
	const char *annotation; /* drake.dev/scale or drake.dev/migrations */
	char *value;
	long long sent_ms;
};

/* When the backstop first saw a job below its minimum (clock ms). The
 * verdict prefers the durable times the pods carry; this only covers what
 * they cannot say. */
/* When this process first saw a job short, and in which state: a wave
 * admitted with nothing bound yet (waiting) or some members bound
 * (partial). The clocks of the two are separate: a wave that waited long
 * in kube-scheduler's queue is not partial for that long once it starts to
 * bind. */
struct partial_note {
	char key[KEY_MAX];
	long long since_ms;
	bool partial;
};

/* The last reason each waiting job was given, so an Event is posted only
 * when it changes. */
struct wait_note {
	char key[KEY_MAX];
	char why[DRAKE_WHY_MAX];
	int status;
	bool seen; /* still waiting in the latest round */
};

/* A job's pods as one pass sees them. */
struct owned {
	const struct kube_pod *obj[RECONCILER_MAX_PODS]; /* borrowed from the pod cache */
	struct job_pod_obs obs[RECONCILER_MAX_PODS];
	size_t n;
	bool truncated;
	const char *container; /* the kind's, whose exit code counts */
};

struct svc_seen {
	unsigned char have[JOB_NTYPES][JOB_MAX_REPLICAS];
};

/* When a PersistentVolumeClaim of a namespace last appeared or changed. */
#define RECONCILER_CLAIM_NOTES 256
struct claim_note {
	char ns[64];
	double at_s;
};

struct reconciler {
	struct event_base *base;
	struct kube_client *client;
	struct reconciler_options opts;
	struct drake_scale_opts scale;        /* opts.scale points here */
	struct job_resize_costs resize_costs; /* opts.resize_costs points here */
	struct mig_opts mig;                  /* opts.mig points here */
	struct mig_progress_opts prog;        /* opts.progress points here */
	char *domain, *gang_resource;
	/* The kinds served, and one informer over each kind's jobs. */
	const struct job_kind *kinds[JOB_KINDS_MAX];
	size_t nkinds;
	struct kube_informer *jobs[JOB_KINDS_MAX];
	char job_paths[JOB_KINDS_MAX][128];
	struct kube_informer *pods, *services, *nodes;
	struct kube_informer *claims; /* with gang and watch_claims; never gates readiness */
	/* Node states prioritize read, forgotten as pods and nodes change. */
	struct place_view_memo place_memo;
	/* What a refused job may wait for (gang/refusal.h): the last change of
	 * a node that placement reads, and per namespace of a claim (a ring). */
	double nodes_changed_s;
	struct claim_note claim_notes[RECONCILER_CLAIM_NOTES];
	size_t nclaim_notes, claim_head;
	struct pending_wave *pending;
	size_t npending;
	struct deferred_wave *deferred;
	size_t ndeferred;
	struct pending_scale *scaling;
	size_t nscaling;
	double admit_at; /* a round the decision step's timers ask for (wall s) */
	struct drake_pace pace;
	double dragon_last_action; /* with --policy dragon: DRAGON's action timer */
	double las_decided;        /* with --policy tiresias: the last 2D-LAS decision */
	struct decision_log *dlog; /* --decision-log, or NULL */
	struct wait_note *waits;
	size_t nwaits;
	struct partial_note *partials;
	size_t npartials;
	bool admit_dirty;
	struct keyset now, later;
	struct inflight *inflight;
	size_t ninflight, capinflight;
	struct write_ctx *writes;
	struct admit_skipped_list skipped; /* nodes the last round left out */
	struct admit_running *running;     /* the last round's running jobs */
	size_t nrunning;
	struct rec_progress *progress; /* per job, what its replicas report */
	size_t nprogress;
	/* per job, its service and rates (observed.c); each entry allocated
	 * alone, so that a round input pointing into one (obs) stays valid
	 * while later jobs of the pass are added */
	struct rec_observed **observed;
	size_t nobserved;
	unsigned long observe_pass;        /* admission passes that observed jobs */
	struct drake_history_ring history; /* finished jobs' attained service (observed.c) */
	struct job_move_note moves[RECONCILER_MOVES_KEPT]; /* a ring, newest at moves_head - 1 */
	struct rec_usage *usage; /* node_usage.c; NULL until the first poll */
	/* The last admission round's snapshot, for the filter's re-plan
	 * (views.c), with this round's waves charged where they are planned;
	 * NULL until the first round; rounds counts them. */
	struct pass_world *world;
	unsigned long rounds;
	size_t moves_head, nmoves;
	struct owned *owned;   /* scratch for one pass (large) */
	struct svc_seen *svcs; /* the same */
	struct event drain, tick;
	struct event timer; /* a decision step's timer (admit_at): a round when it is due */
	long long last_resync_ms;
	long long last_requeue_ms;
	bool was_synced, events_ready;
};

/* ---- reconciler.c ---- */

/* The job ns/name of the first kind (in r->kinds order) that has one, and
 * that kind; NULL when none has. Two jobs of different kinds with one name
 * would own the same pod and Service names, so only the first is served. */
struct json_t *rec_job_get(const struct reconciler *r, const char *ns, const char *name,
                           const struct job_kind **kind);
/* The job caches of every kind served, for a pass. */
void rec_job_caches(const struct reconciler *r, struct job_caches *jc);

/* ---- queue.c ---- */

/* The controller's clock (reconciler_options.clock), in ms and in s. */
long long rec_now_ms(const struct reconciler *r);
double rec_now_s(const struct reconciler *r);
drake_err rec_keyset_add(struct keyset *s, const char *key) DRAKE_MUST_CHECK;
struct inflight *rec_inflight_of(struct reconciler *r, const char *key, bool create);
/* Expects slots[0..n) (taking the array) until until_ms; replaces any earlier. */
void rec_expect(struct inflight *f, struct rec_slot *slots, size_t n, long long until_ms);
/* Expects nothing. */
void rec_expect_clear(struct inflight *f);
/* The caches saw slot (t, index)'s pod, or its service with svc. */
void rec_expect_seen(struct inflight *f, enum job_rtype t, int index, bool svc);
/* Marks ns/name dirty in s; r->now is drained at once, r->later on the tick. */
void rec_enqueue(struct reconciler *r, struct keyset *s, const char *ns, const char *name);

/* ---- writes.c ---- */

/* OP_ADMIT: the JSON patch that ungates an admitted member, sent ahead of
 * the controller's other waiting writes (kube_json_patch_first): a gang's
 * barrier waits for it, and with many jobs submitted at once it would
 * otherwise queue behind their pods' and services' creates at --api-qps. */
enum rec_op { OP_CREATE, OP_DELETE, OP_MERGE, OP_JSONPATCH, OP_ADMIT };

/* One write for job; its completion requeues the job and settles backoff. */
void rec_write(struct reconciler *r, const struct job *job, enum rec_op op,
               const struct kube_resource *res, const char *body, const char *uid,
               const char *what);
/* A DELETE with gracePeriodSeconds=0 (a pod stuck Terminating on a lost node). */
void rec_force_delete(struct reconciler *r, const struct job *job, const char *pod, const char *uid,
                      const char *what);
void rec_event(struct reconciler *r, const struct job *job, const char *type, const char *reason,
               const char *message);
void rec_pod_res(const struct job *job, const char *name, struct kube_resource *res);
/* job as the writes and Events above need it, from ns, name and uid alone
 * (when no decoded job is at hand). */
void rec_job_ref(const struct reconciler *r, struct job *job, const char *ns, const char *name,
                 const char *uid);
void rec_job_res(const struct job *job, const char *sub, struct kube_resource *res);
/* Detaches every write still in flight (their callbacks free only themselves). */
void rec_writes_detach(struct reconciler *r);

/* ---- sync.c ---- */

void rec_sync_job(struct reconciler *r, const char *ns, const char *name);

/* ---- node_usage.c ---- */

struct drake_cluster;
/* With migrate and gang and opts.node_metrics_s > 0: lists the metrics
 * API's node usage when the last answer is an interval old. */
void rec_usage_tick(struct reconciler *r);
/* Lays the last answer, when fresh, over c's nodes (drake_node.usage). */
void rec_usage_apply(const struct reconciler *r, struct drake_cluster *c);
void rec_usage_free(struct reconciler *r);

/* ---- backstop.c ---- */

/* When something a job refused by kube-scheduler may wait for last changed
 * where drake can see it: a node, or a claim in namespace ns (wall s, 0:
 * nothing seen). */
double rec_changed_s(const struct reconciler *r, const char *ns);

/* Checks a live gang job against its per-role minimum and repairs or rolls
 * it back when the verdict says so. */
void rec_backstop(struct reconciler *r, const struct job *job, const struct owned *o,
                  const char *key);
void rec_backstop_forget(struct reconciler *r, const char *key);

/* ---- migrations.c ---- */

/* Carries out moves in flight; starts one the policy decides (--migrate).
 * pw is the pass's world, the one admission read. */
struct pass_world;
void rec_migrate_pass(struct reconciler *r, const struct pass_world *pw);
/* The job's replicas report it slowing or converged; *frac its fraction of
 * steps (-1 unknown). */
bool rec_job_slow(const struct reconciler *r, const struct job *job, double *frac);

/* The progress samples kept for job key (uid), or NULL when none came. */
const struct mig_progress *rec_job_samples(const struct reconciler *r, const char *key,
                                           const char *uid);

/* ---- observed.c ---- */

/* Fills in's service and obs (gang/round.h) from what was seen of job key
 * up to now, and remembers this pass's size and GPUs. */
void rec_observe(struct reconciler *r, const char *key, struct drake_round_job *in, double now);

/* Keeps job uid's 2D-LAS state after the round, for its next round
 * (rec_observe gives it back; a job not kept, as after a restart, gets an
 * unseen state, which the round rebuilds from its service). */
void rec_observed_keep_las(struct reconciler *r, const char *uid, const struct drake_las_state *st);

/* Forgets the jobs this pass's round did not see. */
void rec_observed_gc(struct reconciler *r);

/* Forgets every job (the reconciler's end). */
void rec_observed_free(struct reconciler *r);

/* The attained service of the latest DRAKE_HISTORY_MAX jobs seen to end
 * (gang/history.h), for the round's drake_scale_opts.history; borrowed. */
struct drake_history rec_history(const struct reconciler *r);
/* The class and latest sample of job key (uid) for GET /v1/jobs, and
 * whether that class is slow (what the next round will read); false, and
 * not slow, when none of its replicas has reported. */
bool rec_job_progress(const struct reconciler *r, const char *key, const char *uid,
                      const char **cls, bool *slow, long long *step, double *value);

/* ---- waves.c ---- */

/* One pass's world from the caches (pass_world.h), with the measured node
 * usage laid over its snapshot (only migration reads it). */
drake_err rec_pass_world(struct reconciler *r, struct pass_world *w, char *msg,
                         size_t msglen) DRAKE_MUST_CHECK;
/* Builds the pass's world, runs the admission round and the migration
 * step over it, and keeps its snapshot in r->world for the re-plan. */
void rec_admit_pass(struct reconciler *r);
/* Arms r->timer for r->admit_at (the step's next timer), so that the round
 * it asks for runs when it is due, not at the next one-second tick. */
void rec_arm_timer(struct reconciler *r);
/* Stops following job ns/name's waves in flight: the backstop deleted their
 * pods (refused, released or rolled back), so their replacements, gated
 * again, are no wave to wait for. */
void rec_waves_forget(struct reconciler *r, const char *ns, const char *name);

#endif
