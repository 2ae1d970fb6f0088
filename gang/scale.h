/*
 * scale.h - drake's one decision step: which waiting gangs start, which
 * running gangs give workers to a starving one, which grow into idle
 * capacity. It runs inside drake_round() (gang/round.h), which the
 * controller and `drake sim`'s drake policy both call and nothing else to
 * decide, so what the simulator measures is what the cluster runs.
 *
 * One step, the waiting jobs in the queue's order (opts.queue):
 *  - pack, the default: the jobs that waited age_after or longer first,
 *    in FIFO order; then, on the GPUs they left (and those of ending
 *    jobs, held for the queue: rule 1), the set of the others that fills
 *    them best, most jobs among equal fills (gang/pack.h: a subset-sum
 *    over the first DRAKE_PACK_WINDOW in FIFO order; no run times), in
 *    FIFO order; then the rest in FIFO order. Without backfill, FIFO.
 *  - fifo; narrow: fewest GPUs asked first, aged jobs ahead as for pack;
 *    or, for the simulator's oracle bound only, least remaining work
 *    first with the same aging, from a remaining time the caller knows.
 *  While new jobs are still arriving (their pods being created: the round
 *  sees them incomplete, gang/round.h step 2; opts.arriving_until), the
 *  young jobs of pack and narrow wait for them, so that the set chosen
 *  for the free GPUs is chosen among the whole burst: a user's script
 *  that submits 50 jobs, or a controller that creates them, takes a second
 *  or more, and the first jobs whose pods exist would otherwise take the
 *  cluster on a partial view of the queue. A job waits for arrivals at
 *  most DRAKE_ARRIVAL_HOLD seconds after its own creation, and a job whose
 *  pods are not all created DRAKE_ARRIVAL_HOLD seconds after its creation
 *  (a quota, a webhook refusing them) is no longer waited for. FIFO and the
 *  aged jobs do not wait: later arrivals cannot go ahead of them.
 * The longest wait under pack and narrow: younger jobs pass a job over
 * only until it has waited age_after. From then on only jobs that waited
 * longer go before it, and the first of those that cannot start takes
 * workers (rule 2) or is given nodes (rule 3), so a job starts within
 * age_after plus what rules 2 and 3 take to start the aged jobs ahead of
 * it and it (for rigid jobs: the remaining run of the jobs on their
 * nodes).
 *
 *  0. A running job whose own rates (gang/speed_fit.h: two sizes or
 *     spreads seen) say it runs faster with fewer workers gives them back
 *     (SHRINK for no waiting job): workers come off one at a time, each
 *     time the one whose removal leaves it fastest, never worker 0 nor
 *     below min, and the count that is fastest is kept when it beats the
 *     current one by 5 % and saves more than the job's cost of a
 *     shrink (below) over its expected remaining time E (rule 4).
 *  1. A job whose PS, chief and min workers fit starts (with start_narrow,
 *     the default; without it, until it has waited starve_after, only
 *     when the workers it asks for fit, so that it does not take the last
 *     free GPUs at a fraction of its size while whole jobs behind it wait,
 *     unless its asked size never fits) (best-fit packing,
 *     gang/planner.h, keeping room for the shapes of the waiting jobs and
 *     of those admitted within keep_window: planner.h, "Room for the
 *     queue"). Smaller jobs behind one that does not fit may start
 *     (backfill), except on the room of a job that is ending: once a
 *     running job's first member has ended, for ending_hold seconds its
 *     room belongs to the waiting jobs, in the queue's order, that fit once
 *     it is free. Each of them is planned on the cluster without the ending jobs
 *     and the nodes of that plan are held for it, so a small job does not
 *     take a node a job ahead of it is about to get. (A job's members end
 *     within moments of each other; planning on the first ones' room alone
 *     would let backfill split what the queue's head needs.) For the same
 *     reason a job that fits now with fewer workers than it asks for, and
 *     with more once the ending jobs are gone, waits for that room too
 *     rather than start narrow.
 * 1b. A job that does not fit at the size its spec asks for (want) takes
 *     workers back at once, without waiting to starve, so that it starts
 *     at that size: the workers running jobs hold beyond the size their
 *     own specs ask for (lent from idle GPUs by rule 4), and, from a job
 *     whose attained service (GPU-seconds run) passed service_threshold,
 *     down to its min unless its progress says it is about to end (its
 *     expected remaining GPU-seconds below the threshold). The fewest
 *     removals, in the victim order (by default the job expected to need
 *     the most GPU-seconds still gives first, read from its progress
 *     where it reports it, else from its attained service: least
 *     attained service, as Tiresias orders jobs, without stopping any;
 *     gang/elastic.h, most-left). When no such set of removals is
 *     enough, nothing changes and rules 1 to 3 go on.
 *  2. A job that has waited starve_after or longer and does not fit takes
 *     workers from running jobs (drake_shrink_for: never below min, never a
 *     PS or worker 0, never from a job whose wave kube-scheduler has not
 *     bound in full, lonely workers first, only if the whole job then
 *     fits, fewest removals) and starts. At most shrink_tries jobs try per
 *     step (the controller runs another round after its own changes, and
 *     `drake sim` decides again at the same instant, so the next ones try
 *     then). The jobs started so in one step are then planned again
 *     together, widest first, on the room they had (the same removals):
 *     each was planned on what those before it left, and one that took a
 *     worker's room on the node freed for the next spread them both; the
 *     new plans are kept when they span fewer nodes in all. Not while
 *     shrinks_wait: pods of the last change still hold
 *     their nodes. The victims' cost of a change plays no part in rules
 *     1b and 2: a shrink for a job that cannot start is not a bet that
 *     the change pays (the waiting job's gain is its start, which no
 *     pause of a victim outweighs), and ordering victims by cost would
 *     undo the victim order (most GPU-seconds expected left first).
 *  3. The first starving job that cannot start even so is given the nodes
 *     it will run on: its plan on the cluster with every running gang taken
 *     away. Nothing behind it, and no growth, may place a pod on those
 *     nodes, so they drain toward it as running jobs finish; it cannot be
 *     starved forever by backfill. (Under the pack queue the set chosen
 *     for the free GPUs is ahead of it until it has waited age_after.)
 * 4a. A running job below the size its spec asks for (it started narrow,
 *     or gave workers to a job that has since started or ended) grows back
 *     to that size at once when nobody waits who could ever fit: rule 4's
 *     batch and payback test, capped at the asked size, without waiting
 *     for idle_after.
 *  4. Growth, only when nothing else happened for idle_after (the newest
 *     admission or scaling of any running job), nobody waits who could ever
 *     fit, and the job did not just give workers to a job that still
 *     waits. For each job, the batch of k new
 * workers (1 <= k <= max - w; on its PS's node, then on nodes it uses, then on the node with most
 *     room) that maximises its modelled speed T (gang/speed.h) is worth it
 *     when
 *
 *         E * (1 - T(w, n) / T(w + k, n')) > pause
 *
 *     pause is the job's own cost of a grow (drake_running_job.cost,
 *     gang/speed.h: what its kind's trainer stops for), else
 *     speed.rescale_pause. A job whose change costs more than the batch
 *     saves is not grown.
 *     E is the job's expected remaining time: from its progress p when
 *     known, E = age * (1 - p) / p; else, when the finished jobs' service
 *     tells (opts.history, gang/history.h), the mean residual service of
 *     those that ran longer than its attained service s, over its GPUs
 *     now, R(s) / G; else its age since admission (for the heavy-tailed
 *     run times of training jobs, a job that has run for t is expected to
 *     run about t more). Jobs are served in order of relative
 *     speed-up per GPU added, T(w + k, n') / T(w, n) - 1 over k's GPUs
 *     (the time a GPU saves per second it is held), jobs whose progress
 *     is slowing or converged after every other, each re-planned on
 *     what the previous ones left. A batch that does not pay yet is
 *     looked at again when the job is old enough for it to (E its age),
 *     or when it outlives the finished job past which it does (E from
 *     history: R(s) falls between samples and jumps there), or past
 *     which too few are left to tell.
 *
 * Pure and deterministic: the snapshot is cloned inside, now is passed in.
 */
#ifndef DRAKE_GANG_SCALE_H
#define DRAKE_GANG_SCALE_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"
#include "gang/admission.h"
#include "gang/cluster.h"
#include "gang/elastic.h"
#include "gang/history.h"
#include "gang/speed.h"

/* The order waiting jobs are tried in. */
enum drake_queue_order {
	DRAKE_QUEUE_FIFO,   /* created, then name */
	DRAKE_QUEUE_NARROW, /* jobs waiting age_after or longer first (FIFO among them), then
	                       fewest GPUs asked (the workers the spec asks for), then FIFO */
	/* The default: jobs waiting age_after or longer first (FIFO among
	 * them); then, once they were tried, the set of the others that fills
	 * the GPUs then free (and those of jobs ending, held for the queue)
	 * best, with most jobs among equal fills (gang/pack.h: the first
	 * DRAKE_PACK_WINDOW in FIFO order, GPUs asked as for NARROW), in FIFO
	 * order; then the rest in FIFO order. Without backfill (strict
	 * FIFO), FIFO. */
	DRAKE_QUEUE_PACK,
	/* The oracle's order, a bound and not a policy (`drake sim --policies
	 * oracle`): jobs waiting age_after or longer first (FIFO among them),
	 * then least remaining work first, the entry's remaining seconds at the
	 * size its spec asks for times the GPUs asked (remaining GPU-seconds:
	 * shortest remaining service first, ties FIFO), then the jobs whose
	 * remaining work is unknown (<= 0) in FIFO order. A cluster never knows
	 * a job's run time, so neither the parser nor `drake serve` offers it. */
	DRAKE_QUEUE_SRPT,
};

/* Parses "fifo", "narrow", "pack" (not the oracle's order). */
drake_err drake_queue_order_parse(const char *s, enum drake_queue_order *out) DRAKE_MUST_CHECK;
const char *drake_queue_order_name(enum drake_queue_order o);

struct drake_scale_opts {
	bool backfill;
	enum drake_queue_order queue;
	double age_after; /* QUEUE_NARROW, QUEUE_SRPT: seconds after which a job goes ahead of
	                     narrower (shorter) ones */
	/* GPU-seconds of attained service past which a running job gives
	 * workers down to its min to a new job that cannot start at the size it
	 * asks (rule 1b); below it, only what it was lent. <= 0: never. */
	double service_threshold;
	double starve_after; /* seconds a job waits before it may take workers */
	/* A new job starts with fewer workers than it asks for (down to its
	 * min) at once (the default); false: only once it waited starve_after
	 * (rule 1). */
	bool start_narrow;
	double idle_after; /* seconds without admission or scaling before growth */
	int shrink_tries;  /* starving jobs that may take workers per step */
	struct drake_shrink_opts shrink;
	struct drake_speed speed; /* node_gpus is taken from the snapshot */
	double ending_hold;       /* seconds an ending job's room is held for the queue; 0: never */
	/* Admission plans keep room for the queue's shapes (planner.h): the
	 * waiting jobs' and those of the jobs admitted within keep_window
	 * seconds; negative: no preference. */
	double keep_window;
	/* This step only (the round sets it): pods a change removed are still
	 * leaving their nodes, so no job gives workers (a starving job still
	 * gets its nodes held, rule 3). */
	bool shrinks_wait;
	/* This step only (the round sets it): until this time some new job
	 * created within DRAKE_ARRIVAL_HOLD is still arriving (its pods being
	 * created), and young jobs of the pack and narrow queues wait for it;
	 * 0: none is. */
	double arriving_until;
	/* The attained service of jobs that finished (gang/history.h), for
	 * the remaining time of a job that reports no progress; the caller's
	 * array, read only. Empty: such a job's remaining time is its age. */
	struct drake_history history;
};

/* Seconds a new job waits at most for jobs still arriving, and a job still
 * arriving is waited for at most after its creation (scale.h, the queue). */
#define DRAKE_ARRIVAL_HOLD 10.0

/* scale_opts of `drake serve` and `drake sim` alike: backfill, the pack
 * queue with age_after 10 min, 30 s, 60 s, 4 tries, most GPU-seconds
 * expected left first, lonely first, the default speed model, an ending job's room held
 * 10 s, room kept for the shapes of the queue and of the jobs admitted in
 * the last 60 s. */
void drake_scale_defaults(struct drake_scale_opts *o);

enum drake_act_kind { DRAKE_ACT_ADMIT, DRAKE_ACT_SHRINK, DRAKE_ACT_GROW };

/* One action. Running jobs lose (SHRINK) or gain (GROW) one worker per
 * action. A job may give workers to two starving jobs in one step: its
 * SHRINK actions are then split by the first one's ADMIT. */
struct drake_action {
	enum drake_act_kind kind;
	int job;     /* ADMIT: index of the waiting entry; else of the running job */
	int slot;    /* SHRINK: the worker slot removed (never 0); else -1 */
	int node;    /* SHRINK: node freed; GROW: node used; ADMIT: -1 */
	int for_job; /* SHRINK: waiting entry the workers go to; else -1 */
	double gain; /* GROW: T after / T before - 1 for the job's whole batch */
};

struct drake_step {
	struct drake_action *act; /* caller frees (free()) */
	size_t n;
	/* Without any event, the step would decide differently at this time
	 * (a waiting job starts starving, the idle timer expires); INFINITY
	 * if never. */
	double next;
	/* The starving job whose nodes are held for it (-1: none), and how
	 * many nodes. */
	int reserved_for;
	int reserved_nodes;
};

/*
 * One step at time now over the snapshot c (not modified), the waiting
 * jobs w[0..nw) in FIFO order (their status, plan and why are filled as
 * drake_admit does; the caller releases plans with drake_admission_release)
 * and the running jobs r[0..nr) (the newest of their admitted and
 * last_scaled times is when each last acted). Fails only on DRAKE_ENOMEM.
 */
drake_err drake_scale_step(const struct drake_cluster *c, struct drake_admission_entry *w,
                           size_t nw, const struct drake_running_job *r, size_t nr, double now,
                           const struct drake_scale_opts *o,
                           struct drake_step *out) DRAKE_MUST_CHECK;

void drake_step_release(struct drake_step *s);

#endif
