/*
 * preempt.c - the preemption rule for a running job (see preempt.h).
 */
#include "gang/preempt.h"

#include <stdio.h>

enum drake_preempt_verdict drake_preempt_verdict(const struct drake_roles *live,
                                                 const struct drake_roles *victims,
                                                 const struct drake_roles *min, int min_total,
                                                 char *why, size_t len)
{
	if (len > 0)
		why[0] = '\0';
	if (!min) {
		int left = drake_roles_total(live) - drake_roles_total(victims);
		if (drake_roles_total(victims) == 0 || left >= min_total)
			return DRAKE_PREEMPT_ALLOW;
		snprintf(why, len, "would drop to %d of the %d pods its gang needs", left,
		         min_total);
		return DRAKE_PREEMPT_DENY;
	}
	/* Whatever the minimum says, a PS or chief that runs is part of the
	 * training cluster every worker talks to: losing one stalls them all. */
	if (victims->n[DRAKE_ROLE_PS] > 0) {
		snprintf(why, len, "would lose %d of its %d running PS", victims->n[DRAKE_ROLE_PS],
		         live->n[DRAKE_ROLE_PS]);
		return DRAKE_PREEMPT_DENY;
	}
	if (victims->n[DRAKE_ROLE_CHIEF] > 0) {
		snprintf(why, len, "would lose its chief");
		return DRAKE_PREEMPT_DENY;
	}
	int workers = live->n[DRAKE_ROLE_WORKER] - victims->n[DRAKE_ROLE_WORKER];
	if (victims->n[DRAKE_ROLE_WORKER] > 0 && workers < min->n[DRAKE_ROLE_WORKER]) {
		snprintf(why, len, "would drop to %d of the %d workers it needs", workers,
		         min->n[DRAKE_ROLE_WORKER]);
		return DRAKE_PREEMPT_DENY;
	}
	return DRAKE_PREEMPT_ALLOW;
}
