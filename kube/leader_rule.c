/*
 * leader_rule.c - the lease rule (see leader_rule.h).
 */
#include "kube/leader_rule.h"

#include <stdio.h>
#include <string.h>

enum leader_act leader_decide(const struct lease_seen *seen, const char *me, double mono,
                              double wall, int duration_s, struct lease_record *write)
{
	memset(write, 0, sizeof(*write));
	snprintf(write->holder, sizeof(write->holder), "%s", me);
	write->duration_s = duration_s;
	write->renew_time = wall;
	if (!seen->exists) {
		write->acquire_time = wall;
		return LEADER_CREATE;
	}
	const struct lease_record *r = &seen->rec;
	write->transitions = r->transitions;
	if (!strcmp(r->holder, me)) {
		write->acquire_time = r->acquire_time ? r->acquire_time : wall;
		return LEADER_RENEW;
	}
	/* A record without a duration never expires on its own: treat it
	 * as the shortest lease rather than as a lease held forever. */
	int held_for = r->duration_s > 0 ? r->duration_s : 1;
	bool free = !r->holder[0];
	if (!free && mono - seen->observed_at < held_for)
		return LEADER_WAIT;
	write->acquire_time = wall;
	write->transitions = r->transitions + 1;
	return LEADER_TAKE;
}

bool leader_record_changed(const struct lease_record *seen, const struct lease_record *rec)
{
	return strcmp(seen->holder, rec->holder) || seen->acquire_time != rec->acquire_time ||
	       seen->renew_time != rec->renew_time || seen->duration_s != rec->duration_s ||
	       seen->transitions != rec->transitions;
}

bool leader_overdue(double last_ok, double mono, double renew_deadline)
{
	return mono - last_ok > renew_deadline;
}

bool leader_node_yield(double not_ready_since, double mono, double grace)
{
	return grace > 0 && not_ready_since >= 0 && mono - not_ready_since >= grace;
}

void leader_release_record(const struct lease_record *held, double wall, struct lease_record *write)
{
	*write = *held;
	write->holder[0] = '\0';
	write->renew_time = wall;
	write->duration_s = 1;
}

const char *leader_act_name(enum leader_act a)
{
	switch (a) {
	case LEADER_WAIT: return "wait";
	case LEADER_CREATE: return "create";
	case LEADER_TAKE: return "take";
	case LEADER_RENEW: return "renew";
	}
	return "?";
}
