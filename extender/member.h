/*
 * member.h - what admission's plan says about a pod, and the filter and
 * prioritize answers for gang members (internal to extender/).
 *
 * Admission plans a wave of a TFJob's pods and writes the plan on each pod
 * (gang/protocol.h). Here: reading it from a decoded request pod or from a
 * cached API object, checking that a pod really is the member it claims to
 * be, pinning a member to its planned node (filter) and scoring that node 10
 * (prioritize, for configurations that name the verb: drake's own entry
 * does not, since with filter's one node kube-scheduler never scores a
 * member). The bind barrier (barrier.h) and the preemption guard
 * (preempt_guard.h) build on these.
 *
 * Ownership: an ext_member borrows every string from the pod or object it
 * was read from, and is valid only as long as that is.
 */
#ifndef DRAKE_EXTENDER_MEMBER_H
#define DRAKE_EXTENDER_MEMBER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "extender/codec.h"
#include "gang/roles.h"

struct kube_pod;

/* What a pod's annotations say; strings are borrowed from the pod. */
struct ext_member {
	const char *planned_node; /* NULL: not a pod drake places */
	const char *gang;         /* wave id "<tfjob uid>.<wave>" */
	const char *job;          /* job-name label, or "" */
	long size;                /* pods in the wave */
	long min;                 /* PS + min workers as a head count, 0 when not given */
	bool has_min_roles;       /* drake.dev/gang-min-roles given (else: head count) */
	struct drake_roles min_roles;
	int role;              /* enum drake_role, or -1 when the pod says none */
	const char *ns, *name; /* the pod's */
	const char *owner_uid; /* its controller owner's uid, "" when none */
};

/* Reads the plan from a decoded pod. Returns DRAKE_OK with planned_node NULL
 * for a pod drake does not place, DRAKE_EINVAL (why filled) when the plan
 * annotations are present but malformed. The role comes from drake.dev/role,
 * else from the replica-type label; the per-role minimum from
 * drake.dev/gang-min-roles (absent on pods an older drake admitted). */
drake_err ext_member_of(const struct ext_pod *pod, struct ext_member *m, char *why,
                        size_t whylen) DRAKE_MUST_CHECK;

/* The same from a pod of the informer cache (its record). */
drake_err ext_member_of_pod(const struct kube_pod *pod, struct ext_member *m, char *why,
                            size_t whylen) DRAKE_MUST_CHECK;

/* Is m the member of its wave it claims to be? Its controller owner is the
 * TFJob whose uid starts the gang id, its role is known, its name is
 * "<job>-<role>-<index>" for that role (a chief may be "<job>-master-<i>"),
 * and, with wave_ns given, it lives in that namespace. A copy of a member
 * (kubectl debug --copy-to, the annotations on a pod elsewhere) is not.
 * DRAKE_EINVAL with why saying what is wrong. m must be a member
 * (planned_node set). */
drake_err ext_member_check(const struct ext_member *m, const char *wave_ns, char *why,
                           size_t whylen) DRAKE_MUST_CHECK;

/* Filter for a member: its planned node passes when it is a candidate; every
 * other candidate fails as unresolvable with a reason naming the job. Every
 * reasons[i] points at buf. */
void ext_member_filter(const struct ext_member *m, const struct ext_pod *pod,
                       const struct ext_args *args, enum ext_verdict *verdicts,
                       const char **reasons, char *buf, size_t buflen);

/* Prioritize for a member: planned node EXT_MAX_SCORE, the rest 0. */
void ext_member_prioritize(const struct ext_member *m, const struct ext_args *args,
                           int64_t *scores);

#endif
