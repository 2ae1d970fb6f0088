/*
 * kind_mix.h - `drake sim --kind-mix`: each job kind's share of a trace's
 * jobs, given to the jobs whose rows name no kind, deterministically, so
 * one trace replays as all TFJobs, all PyTorchJobs or any mix. A job's
 * kind is what its change of size costs it (kind/registry.h); the
 * simulator names no kind itself.
 *
 * Ownership: plain values; the kinds are the registry's (static).
 */
#ifndef DRAKE_SIM_KIND_MIX_H
#define DRAKE_SIM_KIND_MIX_H

#include <stddef.h>

#include "common/err.h"
#include "kind/job.h"
#include "sim/trace.h"

struct sim_kind_mix {
	const struct job_kind *kind[JOB_KINDS_MAX];
	double share[JOB_KINDS_MAX]; /* each in (0, 1], summing to at most 1 */
	size_t n;
};

/* Looks up each job's kind_name (a trace's "kind" column) among the kinds
 * drake knows (any case, resource or Kind) into its kind; EINVAL naming
 * file:line of the first that is none. */
drake_err sim_kind_resolve(struct sim_trace *t, const char *file, char *msg,
                           size_t mlen) DRAKE_MUST_CHECK;

/* Parses "KIND=SHARE,..." (KIND as the registry reads it, SHARE a
 * fraction in (0, 1], the shares summing to at most 1; the rest of the
 * jobs keep no kind); "" is no mix. EINVAL with msg naming the bad part. */
drake_err sim_kind_mix_parse(const char *s, struct sim_kind_mix *m, char *msg,
                             size_t mlen) DRAKE_MUST_CHECK;

/*
 * Gives each job of t whose row names no kind one by m, in trace order:
 * the m-th such job goes to the kind (or to none, whose share is what the
 * kinds leave) furthest behind its share of the first m, the first listed
 * on a tie. So the kinds interleave over time, and of n jobs a kind with
 * share p gets p * n of them, rounded. Returns how many jobs it gave a
 * kind.
 */
size_t sim_kind_mix_apply(const struct sim_kind_mix *m, struct sim_trace *t);

#endif
