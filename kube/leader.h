/*
 * leader.h - leader election on a coordination.k8s.io/v1 Lease, driven by
 * drake's event loop: the way kube-scheduler and kube-controller-manager
 * make sure that of several replicas exactly one acts.
 *
 * Every retry period the elector reads the Lease and applies the rule in
 * leader_rule.h: it creates, takes over or renews the Lease, or waits while
 * another holder's record keeps changing. When it first holds the Lease it
 * calls started(); when it can no longer be sure it holds it (no successful
 * renewal within the renew deadline, or the Lease found in another's hands)
 * it calls lost() once and stops for good: a process that lost the lease
 * restarts as a standby and rebuilds its state from the API server.
 *
 * Ownership: leader_new() copies the options' strings; the client must
 * outlive the elector. No callback may free the elector.
 */
#ifndef DRAKE_KUBE_LEADER_H
#define DRAKE_KUBE_LEADER_H

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"

struct event_base;
struct kube_client;

struct leader_options {
	const char *ns;        /* the Lease's namespace */
	const char *name;      /* the Lease's name */
	const char *identity;  /* this process, unique among the replicas */
	double lease_duration; /* seconds a standby waits on an unchanged record */
	double renew_deadline; /* seconds the holder keeps acting without renewing */
	double retry_period;   /* seconds between tries */
};

struct leader_callbacks {
	void (*started)(void *arg);
	void (*lost)(void *arg, const char *why);
	void *arg;
};

struct leader;

/* Checks the options (renew_deadline < lease_duration, retry_period <
 * renew_deadline, whole-second lease of at least 1 s, names valid); NULL
 * with msg when they are wrong or memory runs out. Nothing is sent yet. */
struct leader *leader_new(struct event_base *base, struct kube_client *kube,
                          const struct leader_options *o, const struct leader_callbacks *cb,
                          char *msg, size_t msglen);
/* Starts trying at once. */
drake_err leader_start(struct leader *l) DRAKE_MUST_CHECK;
bool leader_leading(const struct leader *l);
/* Who holds the Lease as last read ("" when nobody or not read yet). */
const char *leader_holder(const struct leader *l);
/* Stops trying; if this process holds the Lease, hands it back (holder
 * cleared) so a standby takes over at its next try. done(arg) runs once,
 * from the loop, when that is answered or failed. */
void leader_release(struct leader *l, void (*done)(void *arg), void *arg);
/* Stops at once, sending nothing more. NULL is fine. */
void leader_free(struct leader *l);

#endif
