/*
 * preempt.h - may preemption evict these pods of a running job?
 *
 * kube-scheduler proposes victims on a node for a pod it cannot place; the
 * extender may refuse them. A running job is its parameter servers, its
 * chief and its workers, and it makes progress only with every PS, its
 * chief and min-instances workers (gang/roles.h). So the rule, per job:
 * never a live PS, never a live chief, and workers never below their
 * minimum. A job admitted by an older drake carries no per-role minimum,
 * only a head count: then the head count is all there is to keep.
 *
 * Pure: counts in, a verdict and a sentence out.
 */
#ifndef DRAKE_GANG_PREEMPT_H
#define DRAKE_GANG_PREEMPT_H

#include <stddef.h>

#include "gang/roles.h"

enum drake_preempt_verdict {
	DRAKE_PREEMPT_ALLOW,
	DRAKE_PREEMPT_DENY, /* why says which member the job cannot lose */
};

/*
 * live: the job's members running now (bound to a node, not being deleted,
 * not finished), per role. victims: those of them proposed for eviction
 * (a victim that is not live is not counted by the caller). min: the job's
 * per-role minimum, or NULL when it has none; then min_total (PS + chief +
 * min workers as a head count, 0 for none) is kept instead:
 * live - victims >= min_total over all roles. On DENY, why (always
 * terminated when len > 0) reads as the end of "the job ...": "would lose
 * its PS".
 */
enum drake_preempt_verdict drake_preempt_verdict(const struct drake_roles *live,
                                                 const struct drake_roles *victims,
                                                 const struct drake_roles *min, int min_total,
                                                 char *why, size_t len);

#endif
