/*
 * gang.h - the extender's side of gang scheduling (internal to extender/).
 *
 * Admission plans a wave of a TFJob's pods and writes the plan on each pod
 * (gang/protocol.h). Here: filter pins a member to its planned node,
 * prioritize scores that node 10, bind holds each member's request until the
 * whole wave has reached bind and then posts every Binding (the barrier),
 * and preempt refuses victims that would take a running gang below its
 * minimum.
 *
 * Ownership: the barrier registry belongs to the server; each barrier owns
 * its waiters' references to their bind states and is freed when the wave
 * has been answered.
 */
#ifndef DRAKE_EXTENDER_GANG_H
#define DRAKE_EXTENDER_GANG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "extender/codec.h"

struct event_base;
struct kube_informer;
struct bind_state;

/* What a pod's annotations say; strings are borrowed from the pod. */
struct gang_member {
	const char *planned_node; /* NULL: not a pod drake places */
	const char *gang;         /* wave id "<tfjob uid>.<wave>" */
	const char *job;          /* job-name label, or "" */
	long size;                /* pods in the wave */
	long min;                 /* PS + min workers, 0 when not given */
};

/* Reads the plan from a decoded pod. Returns DRAKE_OK with planned_node NULL
 * for a pod drake does not place, DRAKE_EINVAL (why filled) when the plan
 * annotations are present but malformed. */
drake_err gang_member_of(const struct ext_pod *pod, struct gang_member *m, char *why,
                         size_t whylen) DRAKE_MUST_CHECK;

/* Filter for a member: its planned node passes when it is a candidate; every
 * other candidate fails as unresolvable with a reason naming the job. Every
 * reasons[i] points at buf. */
void gang_filter(const struct gang_member *m, const struct ext_pod *pod,
                 const struct ext_args *args, enum ext_verdict *verdicts, const char **reasons,
                 char *buf, size_t buflen);

/* Prioritize for a member: planned node EXT_MAX_SCORE, the rest 0. */
void gang_prioritize(const struct gang_member *m, const struct ext_args *args, int64_t *scores);

/* The barrier registry. */
struct gang_barriers;

struct gang_barriers *gang_barriers_new(struct event_base *base, double timeout_s);
/* Answers every held bind with an error and frees. NULL is fine. */
void gang_barriers_free(struct gang_barriers *g);
size_t gang_barriers_waiting(const struct gang_barriers *g);
void gang_barriers_stats(const struct gang_barriers *g, uint64_t *bound, uint64_t *timed_out,
                         uint64_t *rolled_back);

/* Holds b until its wave is complete. pods (may be NULL) is the pod cache,
 * used to count members bound before (a wave cut short by a restart). */
void gang_join(struct gang_barriers *g, struct kube_informer *pods, const struct gang_member *m,
               struct bind_state *b);

/* Of the victims on one node, may preemption take them? False when taking
 * them would leave a running gang below its minimum; why names the job. */
bool gang_preempt_allowed(struct kube_informer *pods, const char *node, char *const *uids,
                          size_t n_uids, char *why, size_t whylen);

#endif
