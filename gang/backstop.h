/*
 * backstop.h - the gang invariant's backstop: what to do with a running
 * job whose gang is below its per-role minimum.
 *
 * The bind barrier never binds part of a wave, but some losses ask nobody:
 * a member preempted by a pod drake was not asked about (gang-only mode),
 * evicted, drained, lost with its node, or a drake killed while posting a
 * wave's Bindings. The controller counts the job's members per role and
 * asks drake_backstop_judge():
 *
 *   OK        every role has its minimum, counting Succeeded members as done
 *             (a job that is finishing is whole), or nothing of it runs
 *             and nothing is admitted (it simply waits in the queue);
 *   WAIT      a wave is admitted and nothing of it is bound yet, within
 *             DRAKE_BACKSTOP_STUCK_TIMEOUTS barrier timeouts;
 *   REPAIR    some members run and a role is short, within
 *             DRAKE_BACKSTOP_PARTIAL_TIMEOUTS barrier timeouts: the lost
 *             members are recreated and admission plans them ahead of the
 *             queue (a repair wave), so the gang may still be made whole;
 *   ROLL_BACK the same past that deadline: every live member is deleted, the
 *             job is recreated gated and admitted again whole;
 *   RELEASE   an admitted wave with nothing bound past its deadline (its
 *             plan no longer fits): its pods are recreated behind the gate
 *             and planned again;
 *   REFUSED   an admitted wave with nothing bound, a member of which
 *             kube-scheduler refused for a reason outside the planner's
 *             model (gang/refusal.h): released at once, not at the
 *             deadline, so nothing is held while the job cannot run; why
 *             names the member and kube-scheduler's message, and the caller
 *             backs the job off.
 *
 * The deadline of an admitted wave with nothing bound is
 * DRAKE_BACKSTOP_STUCK_TIMEOUTS barrier timeouts, or the job's own
 * (stuck_s: Kubeflow's schedulingPolicy.scheduleTimeoutSeconds).
 *
 * The clock of a shortfall comes from the pods where they can tell it
 * (since_s: when the gang's members were bound, when the lost member was
 * deleted or recreated), so a restarted drake neither resets nor extends
 * it; first_seen_s, this process's own first sighting, covers the rest.
 * A member stuck Terminating on a node that is not Ready blocks its own
 * recreation; past the stuck deadline the verdict asks for it to be
 * deleted at once (force_delete).
 *
 * So no gang runs below its per-role minimum for longer than
 * DRAKE_BACKSTOP_PARTIAL_TIMEOUTS x the barrier timeout after its loss
 * (plus the time the API server takes to delete the pods).
 *
 * Pure: the caller passes the counts and the clock.
 */
#ifndef DRAKE_GANG_BACKSTOP_H
#define DRAKE_GANG_BACKSTOP_H

#include <stdbool.h>
#include <stddef.h>

#include "gang/roles.h"

#define DRAKE_BACKSTOP_PARTIAL_TIMEOUTS 2
#define DRAKE_BACKSTOP_STUCK_TIMEOUTS   4
#define DRAKE_BACKSTOP_WHY_MAX          640

enum drake_backstop_verdict {
	DRAKE_BACKSTOP_OK,
	DRAKE_BACKSTOP_WAIT,
	DRAKE_BACKSTOP_REPAIR,
	DRAKE_BACKSTOP_ROLL_BACK,
	DRAKE_BACKSTOP_RELEASE,
	DRAKE_BACKSTOP_REFUSED,
};

struct drake_backstop_in {
	struct drake_roles min;      /* every PS, the chief, min-instances workers */
	struct drake_roles bound;    /* live and bound to a node */
	struct drake_roles done;     /* Succeeded: count toward the minimum */
	struct drake_roles admitted; /* ungated with a plan, not bound yet */
	double since_s;              /* when the pods say the shortfall began; 0 unknown */
	double first_seen_s;         /* when this process first saw it; 0 not yet */
	double admitted_at_s;        /* with nothing bound: when the wave was admitted; 0 unknown */
	double stuck_terminating_s;  /* earliest deletion of a member still Terminating on a
	                                node that is not Ready; 0 none */
	double timeout_s;            /* the bind barrier's timeout */
	double stuck_s;              /* an admitted wave's deadline; 0: the stuck timeouts */
	int refused;                 /* admitted members refused outside the model */
	const char *refused_pod;     /* with refused: the first such member */
	const char *refused_msg;     /* and kube-scheduler's message for it */
};

struct drake_backstop_out {
	enum drake_backstop_verdict verdict;
	int short_role;    /* with REPAIR / ROLL_BACK: the first role below its minimum */
	double deadline_s; /* with WAIT / REPAIR: when the verdict turns (look again then) */
	bool force_delete; /* delete the stuck Terminating members at once */
	char why[DRAKE_BACKSTOP_WHY_MAX];
};

/* Judges one job at now_s. first_seen_s of 0 is read as now. */
void drake_backstop_judge(const struct drake_backstop_in *in, double now_s,
                          struct drake_backstop_out *out);

/* "ok", "wait", "repair", "roll back", "release", "refused". */
const char *drake_backstop_name(enum drake_backstop_verdict v);

#endif
