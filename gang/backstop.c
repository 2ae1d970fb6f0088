/*
 * backstop.c - the backstop's verdict (see backstop.h).
 */
#include "gang/backstop.h"

#include <stdio.h>

const char *drake_backstop_name(enum drake_backstop_verdict v)
{
	switch (v) {
	case DRAKE_BACKSTOP_OK: return "ok";
	case DRAKE_BACKSTOP_WAIT: return "wait";
	case DRAKE_BACKSTOP_REPAIR: return "repair";
	case DRAKE_BACKSTOP_ROLL_BACK: return "roll back";
	case DRAKE_BACKSTOP_RELEASE: return "release";
	case DRAKE_BACKSTOP_REFUSED: return "refused";
	}
	return "?";
}

/* The earlier of two times, 0 meaning unknown. */
static double earliest(double a, double b)
{
	if (a <= 0)
		return b;
	if (b <= 0)
		return a;
	return a < b ? a : b;
}

void drake_backstop_judge(const struct drake_backstop_in *in, double now_s,
                          struct drake_backstop_out *out)
{
	*out = (struct drake_backstop_out){.verdict = DRAKE_BACKSTOP_OK, .short_role = -1};
	double stuck = DRAKE_BACKSTOP_STUCK_TIMEOUTS * in->timeout_s;
	double partial = DRAKE_BACKSTOP_PARTIAL_TIMEOUTS * in->timeout_s;
	out->force_delete = in->stuck_terminating_s > 0 && now_s - in->stuck_terminating_s >= stuck;

	struct drake_roles have = in->bound;
	for (int r = 0; r < DRAKE_NROLES; r++)
		have.n[r] += in->done.n[r];
	int short_role = drake_roles_short(&have, &in->min);
	if (short_role < 0)
		return; /* whole, or finishing: done members count */
	int bound = drake_roles_total(&in->bound), admitted = drake_roles_total(&in->admitted);
	double first = in->first_seen_s > 0 ? in->first_seen_s : now_s;

	if (bound == 0) {
		if (admitted == 0)
			return; /* waiting in the queue, for as long as it takes */
		if (in->refused > 0) {
			out->verdict = DRAKE_BACKSTOP_REFUSED;
			snprintf(out->why, sizeof(out->why),
			         "kube-scheduler cannot place %s: %s; the %d admitted members give "
			         "their reservation back and the job waits",
			         in->refused_pod ? in->refused_pod : "a member",
			         in->refused_msg && *in->refused_msg ? in->refused_msg
			                                             : "no reason given",
			         admitted);
			return;
		}
		double since = earliest(in->admitted_at_s, first);
		if (in->stuck_s > 0)
			stuck = in->stuck_s;
		out->deadline_s = since + stuck;
		if (now_s < out->deadline_s) {
			out->verdict = DRAKE_BACKSTOP_WAIT;
			snprintf(out->why, sizeof(out->why),
			         "%d admitted members wait for kube-scheduler", admitted);
			return;
		}
		out->verdict = DRAKE_BACKSTOP_RELEASE;
		snprintf(out->why, sizeof(out->why),
		         "none of the %d admitted members was bound in %.0fs%s%s; deleting them so "
		         "that the job is planned again",
		         admitted, now_s - since, in->refused_msg ? ": kube-scheduler says " : "",
		         in->refused_msg ? in->refused_msg : "");
		return;
	}

	out->short_role = short_role;
	double since = earliest(in->since_s, first);
	out->deadline_s = since + partial;
	const char *role = drake_role_name((enum drake_role)short_role);
	if (now_s < out->deadline_s) {
		out->verdict = DRAKE_BACKSTOP_REPAIR;
		snprintf(out->why, sizeof(out->why),
		         "has %d of the %d %s it needs: the lost members are recreated and "
		         "planned ahead of the queue; rolled back after %.0fs below its minimum",
		         have.n[short_role], in->min.n[short_role], role, partial);
		return;
	}
	out->verdict = DRAKE_BACKSTOP_ROLL_BACK;
	snprintf(out->why, sizeof(out->why),
	         "had %d of the %d %s it needs for %.0fs (%d members bound): deleting its "
	         "gang's pods so that it is admitted again whole",
	         have.n[short_role], in->min.n[short_role], role, now_s - since, bound);
}
