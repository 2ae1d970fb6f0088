/*
 * refusal.h - a gang kube-scheduler will not place: whether its refusal is
 * one drake's planner answers for, and when admission tries the job again.
 *
 * drake admits a wave onto nodes its snapshot says have room; kube-scheduler
 * then places each member and may refuse it (the pod's PodScheduled
 * condition turns False with reason Unschedulable and a message such as
 * "0/7 nodes are available: 1 Insufficient cpu, 6 node(s) didn't match
 * Pod's node affinity/selector."). Two kinds of refusal:
 *
 *   MODELLED  every reason named is one the planner itself weighs: too
 *             little of a resource ("Insufficient ..."), a cordoned node,
 *             an untolerated taint, drake's own filter (DRAKE_JOB_REASON), and
 *             for a pod drake pinned to its wave's nodes, "didn't match
 *             Pod's node affinity/selector" or "didn't satisfy plugin(s)
 *             [NodeAffinity]" (that affinity is drake's).
 *             The snapshot was behind kube-scheduler's (a pod drake had
 *             not seen yet, a node cordoned after admission): the wave
 *             waits as before, and kube-scheduler retries it when the
 *             cluster changes.
 *   OUTSIDE   a reason the planner cannot see: a PersistentVolumeClaim
 *             that does not exist or cannot bind (a PreFilter message, with
 *             no node count), a node selector or affinity of the pod's own,
 *             host ports, the pods limit, anything unknown. Planning again
 *             would choose the same nodes, so the wave gives its
 *             reservation back at once and the job backs off.
 *
 * Backing off: after the n-th refusal in a row a job is not admitted for
 * min_s x 2^(n-1), at most max_s, unless something it may have waited for
 * changed where drake can see it (a node's labels, taints, cordon or
 * allocatable; a PersistentVolumeClaim in its namespace) after the refusal:
 * then it is tried at the next round.
 *
 * Pure: no clock, no I/O; times are seconds on the caller's clock.
 */
#ifndef DRAKE_GANG_REFUSAL_H
#define DRAKE_GANG_REFUSAL_H

#include <stdbool.h>

/* How every reason drake's extender gives about a gang member begins,
 * whatever the job's kind: "job ml/mnist: planned node ...". */
#define DRAKE_JOB_REASON "job "

enum drake_refusal_kind {
	DRAKE_REFUSAL_MODELLED,
	DRAKE_REFUSAL_OUTSIDE,
};

/* Classifies kube-scheduler's message for a pod it found unschedulable.
 * pinned: the pod's only node constraint is drake's required affinity on
 * metadata.name. A NULL or empty message is OUTSIDE: nothing says the
 * planner could answer it. */
enum drake_refusal_kind drake_refusal_classify(const char *message, bool pinned);

/* How much of message to show a user: up to the end of kube-scheduler's
 * histogram of reasons (its first ". ", the period kept), leaving out what
 * preemption and other post-filters added; all of it without one. */
int drake_refusal_summary_len(const char *message);

/* "modelled", "outside". */
const char *drake_refusal_kind_name(enum drake_refusal_kind k);

struct drake_backoff_opts {
	double min_s; /* the delay after the first refusal (> 0) */
	double max_s; /* the longest delay (>= min_s) */
};

/* The delay after the tries-th refusal in a row (tries >= 1; below 1 is
 * read as 1): min_s x 2^(tries-1), at most max_s. */
double drake_refusal_delay(const struct drake_backoff_opts *o, int tries);

/* A job's refusal record: tries in a row, when the last one was (at_s) and
 * when the delay it earned ends (until_s). */
struct drake_refusal_record {
	int tries;
	double at_s;
	double until_s;
};

/* The record after one more refusal at now_s. */
struct drake_refusal_record drake_refusal_next(const struct drake_refusal_record *prev,
                                               const struct drake_backoff_opts *o, double now_s);

/* Whether admission may try the job at now_s: no record (tries 0), its
 * delay is over, or something it may have waited for changed after the
 * refusal (changed_s > at_s; changed_s 0: nothing seen). */
bool drake_refusal_may_retry(const struct drake_refusal_record *r, double now_s, double changed_s);

#endif
