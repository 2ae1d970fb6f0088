/*
 * round.h - drake's decision round: everything admission and scaling decide
 * in one controller pass, from what the controller knows, as one pure call.
 * The controller (reconciler/admit.c) and `drake sim`'s drake policy both
 * call drake_round() and nothing else of gang/ decides for them.
 *
 * In: the cluster snapshot, every drake-managed job that is not suspended
 * (waiting or running, in any order) with its members (per role and index:
 * missing, waiting behind its gate, or placed on a node), its drake.dev/scale
 * record, the node a migration in flight moves a member to, its admission
 * time and progress, kube-scheduler's latest refusal; the pacing budget,
 * the finished jobs' attained service (opts.scale.history, gang/history.h)
 * and now.
 *
 * A round, in FIFO order of the jobs (created, then name: the one rule of
 * gang/admission.h):
 *
 *  1. Members. A job's member workers are its record's when the record was
 *     written for the wave its placed pods belong to; else the admitting
 *     wave's (its gang size less PS and chief); else, a new job, the
 *     workers its spec asks for; always clamped to [min, max].
 *  2. A job with a member missing (being created or replaced) is left for
 *     the next round; a new one (no member placed) created within
 *     DRAKE_ARRIVAL_HOLD is still arriving, and the young jobs of the pack
 *     and narrow queues wait for it (gang/scale.h, the queue). Every
 *     member waiting: a new job. Some: a repair. None: a running
 *     ("steady") job.
 *  3. Repairs first (REPAIR): the waiting members of a running job go back
 *     onto the nodes recorded for them (a scale-up's place, a migration's
 *     target) while those have room, else wherever the planner puts them,
 *     alone, ahead of any new job. They join the wave already running.
 *  4. A new job kube-scheduler refused is held while it backs off (HOLD,
 *     BACKOFF), unless something it may wait for changed.
 *  5. The other new jobs and the running ones go through drake_scale_step
 *     (gang/scale.h), or DRAGON's rules (gang/dragon_step.h) with policy
 *     DRAKE_POLICY_DRAGON: ADMIT, SHRINK (GIVE: workers for a waiting job;
 *     FASTER: its reported rates say fewer workers run faster), GROW. The
 *     step tries the new jobs in its own queue order (gang/scale.h) and
 *     reads each running job's attained service and reported rates. A running job is scaled only
 *     when every member is placed and worker 0 is one of them (worker 0 is
 *     slot 0 and is never given away). While a pod of any job is leaving
 *     (deleted, or a worker its record no longer lists, still on its
 *     node: kube-scheduler charges it until it is gone), no job gives
 *     workers (no SHRINK, no DRAGON ScaleDown): the snapshot does not show
 *     yet the room the last change frees, and a shrink decided on it
 *     would take more than the waiting job needs. A pod still there
 *     DRAKE_LEAVING_STUCK seconds past its deletion time (a worker not in
 *     the record: past the record's time, or at once if that is unknown)
 *     is stuck (a lost kubelet, a finalizer) and holds nothing back. A job
 *     some member of which has Succeeded is ending: the step sees its live
 *     members' room as about to free (and never scales it). Growth adds the lowest worker indexes
 *     that are gated and not members.
 *     With policy DRAKE_POLICY_TIRESIAS, step 5 is round_tiresias.c's
 *     instead: 2D-LAS (gang/tiresias.h) over the new and running jobs,
 *     rigid at their asked size, at most every las_interval seconds: ADMIT,
 *     HOLD (LAS_QUEUE, LAS_NEXT, NO_FIT) and PREEMPT (whole jobs).
 *  6. Pacing: repairs always go; a new wave goes while the admitted pods
 *     waiting for kube-scheduler stay within the budget; once one wave is
 *     held (HOLD, PACED), every wave behind it is held too, so pacing never
 *     reorders the queue.
 *  7. Workers still placed that the record no longer lists (their deletion
 *     was lost) are released (RELEASE, STRAY).
 *
 * Pure and deterministic: the snapshot is not modified (repairs charge a
 * clone), now is passed in. Every struct here is plain data (indexes into the
 * snapshot and into the job list, names, numbers) so a round can be written
 * as a JSON line and replayed.
 *
 * Ownership: the caller owns the inputs; drake_round() fills a result the
 * caller frees with drake_round_release().
 */
#ifndef DRAKE_GANG_ROUND_H
#define DRAKE_GANG_ROUND_H

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"
#include "gang/admission.h"
#include "gang/cluster.h"
#include "gang/planner.h"
#include "gang/protocol.h"
#include "gang/refusal.h"
#include "gang/roles.h"
#include "gang/scale.h"
#include "gang/tiresias.h"
#include "gang/vgpu.h"

enum drake_member_state {
	DRAKE_MEMBER_MISSING, /* no pod of this job (being created, replaced, deleted) */
	DRAKE_MEMBER_WAITING, /* behind its gate, no plan */
	DRAKE_MEMBER_PLACED,  /* bound, or ungated with a planned node */
};

/* One pod of a job. */
struct drake_round_member {
	enum drake_member_state state;
	int node;            /* PLACED: snapshot index bound to or planned on; -1 unknown */
	bool bound;          /* it has a node */
	bool finished;       /* Succeeded or Failed */
	bool leaving;        /* being deleted and still on its node (state MISSING) */
	double leaving_by;   /* leaving: its deletionTimestamp, when it should be gone; 0 unknown */
	double ended;        /* when it Succeeded (s); 0: it has not, or when is not known */
	const char *gang;    /* its drake.dev/gang with a gang size, NULL none */
	int gang_size;       /* its drake.dev/gang-size */
	const char *name;    /* pod name, for messages; may be NULL */
	const char *refused; /* kube-scheduler's Unschedulable message, NULL none */
};

/* A worker a scale-up placed: index -> node name. */
struct drake_round_place {
	int index;
	const char *node;
};

/* The job's drake.dev/scale record, as decoded (valid or absent). */
struct drake_round_record {
	bool present;
	const char *gang;            /* the wave it was written for */
	const unsigned char *member; /* max_workers entries: 1 for a member index */
	int n;                       /* members */
	double at;                   /* when written; 0 unknown */
	const char *gave_to;         /* the job its latest scale-down gave to, NULL none */
	const struct drake_round_place *place;
	int n_place;
};

/* A migration in flight moves member (role, index) to node. */
struct drake_round_move {
	bool active;
	enum drake_role role;
	int index;
	const char *to;
};

struct drake_round_job {
	const char *name; /* "ns/name", unique */
	const char *uid;  /* new waves are "<uid>.<now>" */
	double created;
	/* What the spec asks: n_ps, n_chief, min_workers, want_workers (the
	 * replicas asked, clamped here), requests, shares, node masks. */
	struct drake_gang_req req;
	int max_workers;
	struct drake_round_member *ps;      /* req.n_ps */
	struct drake_round_member *chief;   /* req.n_chief */
	struct drake_round_member *workers; /* max_workers, by index */
	struct drake_round_record rec;
	struct drake_round_move move;
	double admitted; /* its wave's time (from the wave id), 0 unknown: created */
	double progress; /* fraction of steps done, negative unknown */
	bool slow;       /* its progress is slowing or converged */
	struct drake_refusal_record refusal; /* tries 0: never refused */
	const char *refused_pod, *refused_why;
	double changed; /* when what it may wait for last changed; 0 never */
	double service; /* attained service: GPU-seconds its members ran, 0 unknown */
	/* the rates it reported per size and spread (gang/speed_fit.h), NULL none */
	const struct drake_speed_obs *obs;
	int n_obs;
	/* DRAKE_POLICY_TIRESIAS: its 2D-LAS state as the last round left it
	 * (drake_round_status.las); unseen: none kept (a new job, or a
	 * controller that restarted: rebuilt from service, gang/tiresias.h) */
	struct drake_las_state las;
	/* seconds of work it has left at the size its spec asks for, <= 0
	 * unknown; only `drake sim`'s oracle bound fills it, for the queue
	 * order DRAKE_QUEUE_SRPT (gang/scale.h): a cluster cannot know it */
	double remaining_hint;
	/* what a change of its worker count costs it (its kind's, which the
	 * caller fills: gang/ names no kind); zero: speed.rescale_pause */
	struct drake_change_cost cost;
};

/* Seconds past its deletion time after which a leaving pod is stuck. */
#define DRAKE_LEAVING_STUCK 30.0

/* Whose rules decide step 5. */
enum drake_round_policy {
	DRAKE_POLICY_DRAKE,    /* gang/scale.h's step */
	DRAKE_POLICY_DRAGON,   /* DRAGON's (gang/dragon_step.h): first fit over the nodes in name
	                          order, one admission per round, ScaleDown for a starving head,
	                          ScaleUp after idle_after; starve_after and idle_after from scale */
	DRAKE_POLICY_TIRESIAS, /* 2D-LAS (gang/tiresias.h), rigid, whole-job preemption, a
	                          decision every las_interval seconds (round_tiresias.c) */
};

struct drake_round_opts {
	enum drake_round_policy policy;
	double dragon_last_action; /* DRAGON's action timer, as the last round left it */
	struct drake_las_opts las; /* tiresias: its queues' thresholds (GPU-seconds) */
	double las_interval;       /* tiresias: seconds between decisions */
	double las_decided;        /* tiresias: the last decision's time, as the last round left it;
	                              negative: none yet (the round decides); a controller's 0 is
	                              due at its first round, its clock being epoch seconds */
	struct drake_scale_opts scale;
	long pace_budget;  /* admitted pods that may wait for kube-scheduler; <= 0: unpaced */
	long pace_unbound; /* admitted pods waiting for it now */
};

enum drake_round_kind {
	DRAKE_ROUND_REPAIR,
	DRAKE_ROUND_ADMIT,
	DRAKE_ROUND_HOLD,
	DRAKE_ROUND_SHRINK,
	DRAKE_ROUND_GROW,
	DRAKE_ROUND_RELEASE,
	DRAKE_ROUND_PREEMPT, /* tiresias: stop the whole job; it waits to be admitted again */
};

enum drake_round_reason {
	DRAKE_REASON_LOST_MEMBERS, /* REPAIR: members of a running wave came back */
	DRAKE_REASON_HINTED,       /* REPAIR: onto the nodes recorded for them */
	DRAKE_REASON_FITS,         /* ADMIT: its PS, chief and min workers fit */
	DRAKE_REASON_STARVED,      /* ADMIT: it starved and running jobs gave it workers */
	DRAKE_REASON_NO_FIT,       /* HOLD: does not fit now (status WAITING) */
	DRAKE_REASON_NEVER,        /* HOLD: cannot fit this cluster (status NEVER) */
	DRAKE_REASON_FIFO,         /* HOLD: behind a job that waits, strict FIFO */
	DRAKE_REASON_PACED,        /* HOLD: admitted, but kube-scheduler is behind */
	DRAKE_REASON_BACKOFF,      /* HOLD: kube-scheduler refused it, backing off */
	DRAKE_REASON_UNBOUND,      /* HOLD: admitted, nothing bound yet */
	DRAKE_REASON_REPAIR_WAITS, /* HOLD: its lost members do not fit now */
	DRAKE_REASON_GIVE,         /* SHRINK: workers for a starving job */
	DRAKE_REASON_SPEEDUP,      /* GROW: idle capacity pays for itself */
	DRAKE_REASON_FASTER,       /* SHRINK: its measured rates say fewer workers run faster */
	DRAKE_REASON_STRAY,        /* RELEASE: the record no longer lists them */
	DRAKE_REASON_LAS_QUEUE,    /* HOLD: 2D-LAS runs the jobs ahead of it on the GPUs */
	DRAKE_REASON_LAS_NEXT,     /* HOLD: it waits for the next 2D-LAS decision */
	DRAKE_REASON_LAS_PREEMPT,  /* PREEMPT: jobs ahead of it in 2D-LAS take its GPUs */
	DRAKE_NREASONS
};

/* One pod an action names. */
struct drake_round_pod {
	enum drake_role role;
	int index;
	int node;                      /* snapshot index; -1: none (RELEASE) */
	struct drake_share share;      /* milli 0: the pod shares no GPU */
	char gpuid[DRAKE_VGPU_ID_MAX]; /* with a share: its vGPU on node */
};

struct drake_round_action {
	enum drake_round_kind kind;
	enum drake_round_reason reason;
	int job; /* index into the jobs passed in */
	/* REPAIR, ADMIT, HOLD PACED: the wave. size counts every pod of the wave
	 * (a repair: the whole wave it rejoins), pods only those it ungates. */
	char gang[DRAKE_GANG_ID_MAX];
	int size;
	struct drake_roles min;
	/* the wave's pods (PS, chief, workers); SHRINK, RELEASE: the workers
	 * removed, highest index first; GROW: the workers added, lowest first;
	 * PREEMPT: every pod of the job that is placed (PS, chief, workers) */
	struct drake_round_pod *pods;
	int n_pods;
	/* SHRINK, GROW: the member workers after it (max_workers entries) */
	unsigned char *member;
	int members_before, members_after;
	int for_job;                    /* SHRINK: the job given to; else -1 */
	double gain;                    /* GROW: modelled speed after / before - 1 */
	double since;                   /* SHRINK: how long the job given to has waited */
	enum drake_admit_status status; /* HOLD: as gang/admission.h says */
	bool quiet;                     /* HOLD: a status to list, not an Event */
	double until;                   /* HOLD BACKOFF: end of the backoff */
	char why[DRAKE_WHY_MAX];
};

enum drake_round_class {
	DRAKE_CLASS_INCOMPLETE, /* a member missing: next round */
	DRAKE_CLASS_NEW,
	DRAKE_CLASS_REPAIR,
	DRAKE_CLASS_RUNNING,
};

/* What the round made of each job (for GET /v1/jobs and the log). */
struct drake_round_status {
	enum drake_round_class cls;
	int members;        /* member workers */
	bool scalable;      /* RUNNING, every member placed, worker 0 a member */
	bool running;       /* scalable and some member bound */
	double last_scaled; /* scalable: its latest admission or scaling */
	bool gave_to_waiting;
	bool record;                  /* its drake.dev/scale record applies to its wave */
	char gang[DRAKE_GANG_ID_MAX]; /* REPAIR, RUNNING: the wave its pods belong to */
	struct drake_las_state las;   /* tiresias: its 2D-LAS state after the round (the job's
	                                 own when no decision saw it) */
};

struct drake_round {
	struct drake_round_action *act; /* repairs, admits, holds, shrinks, grows, releases */
	size_t n;
	struct drake_round_status *jobs; /* one per job passed in */
	size_t n_jobs;
	double next;               /* the round would decide differently then; INFINITY: never */
	size_t held;               /* waves held by pacing */
	int reserved_for;          /* the starving job whose nodes are held for it, -1 none */
	double dragon_last_action; /* DRAGON's action timer after the round (opts' otherwise) */
	double las_decided;        /* tiresias: the last decision's time after the round */
};

/* One round over c and jobs[0..n) at now. Fails only on DRAKE_ENOMEM. */
drake_err drake_round(const struct drake_cluster *c, const struct drake_round_job *jobs, size_t n,
                      double now, const struct drake_round_opts *o,
                      struct drake_round *out) DRAKE_MUST_CHECK;

void drake_round_release(struct drake_round *r);

const char *drake_round_kind_name(enum drake_round_kind k);
const char *drake_round_reason_name(enum drake_round_reason r);

#endif
