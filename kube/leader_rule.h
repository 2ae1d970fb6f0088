/*
 * leader_rule.h - who may hold a coordination.k8s.io Lease, decided from what
 * one candidate has seen of it: the rule client-go's leader election follows,
 * as a pure function with the clocks passed in.
 *
 * A holder keeps the lease by renewing it; a candidate takes it when it is
 * free, or when its record has not changed for the record's own lease
 * duration as measured on the candidate's clock (never by comparing the
 * holder's timestamps with the local wall clock, so clock skew between
 * machines cannot hand the lease to two processes). A holder that cannot
 * renew within its renew deadline, which is shorter than the lease duration,
 * stops acting before anyone else may take over.
 *
 * Ownership: plain values; nothing is allocated.
 */
#ifndef DRAKE_KUBE_LEADER_RULE_H
#define DRAKE_KUBE_LEADER_RULE_H

#include <stdbool.h>

/* Longest holder identity kept (longer ones are refused at start-up). */
#define LEASE_HOLDER_MAX 256

/* The Lease's spec, as drake reads and writes it. Times are Unix seconds
 * (wall clock), 0 when unset. */
struct lease_record {
	char holder[LEASE_HOLDER_MAX]; /* spec.holderIdentity; "" when free */
	double acquire_time;
	double renew_time;
	int duration_s; /* spec.leaseDurationSeconds */
	int transitions;
};

/* What a candidate knows of the Lease. */
struct lease_seen {
	bool exists;
	struct lease_record rec;
	double observed_at; /* monotonic seconds when rec last changed */
};

enum leader_act {
	LEADER_WAIT,   /* someone else holds a live lease */
	LEADER_CREATE, /* no Lease yet: create it holding it */
	LEADER_TAKE,   /* free or expired: take it over */
	LEADER_RENEW,  /* it is ours: renew it */
};

/* What me should do now. mono is the monotonic clock, wall the wall clock
 * (what is written), duration_s the lease duration me asks for. For every
 * act but LEADER_WAIT, *write is the record to send. */
enum leader_act leader_decide(const struct lease_seen *seen, const char *me, double mono,
                              double wall, int duration_s, struct lease_record *write);

/* Whether rec differs from what was seen (so observed_at moves). */
bool leader_record_changed(const struct lease_record *seen, const struct lease_record *rec);

/* Whether a holder whose last successful renewal was at last_ok (monotonic)
 * must stop acting: more than renew_deadline has passed. */
bool leader_overdue(double last_ok, double mono, double renew_deadline);

/* Whether a holder whose own node has not been Ready since not_ready_since
 * (monotonic seconds; negative: Ready, or not known) must hand the lease
 * back: kube-scheduler reaches the leader through its Service, and a pod on
 * a node that is not Ready is no endpoint of it, while the process itself
 * may still renew. grace <= 0 never yields. */
bool leader_node_yield(double not_ready_since, double mono, double grace);

/* The record that gives the lease up: holder cleared, so a candidate takes
 * it at its next try instead of after the lease duration. */
void leader_release_record(const struct lease_record *held, double wall,
                           struct lease_record *write);

const char *leader_act_name(enum leader_act a);

#endif
