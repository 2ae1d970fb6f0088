/*
 * roles.h - a gang's members by role, and the minimum of each role a job
 * cannot run without.
 *
 * A job's training cluster is its parameter servers, its chief (the
 * kind's coordinating replica, kind/job.h) and its workers. The gang
 * invariant is per role: a job runs only with every PS, its chief (if it
 * has one) and min-instances workers. A head count cannot say that: four
 * workers without their PS are four pods, and none of them can make
 * progress.
 *
 * On the wire (gang/protocol.h) a minimum is written "ps=1,chief=1,worker=2"
 * (drake.dev/gang-min-roles) and a member's role as "ps", "chief" or
 * "worker" (drake.dev/role).
 *
 * Pure: plain structs, no allocation.
 */
#ifndef DRAKE_GANG_ROLES_H
#define DRAKE_GANG_ROLES_H

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"

enum drake_role { DRAKE_ROLE_PS, DRAKE_ROLE_CHIEF, DRAKE_ROLE_WORKER, DRAKE_NROLES };

/* A count per role: members present, required, lost, ... */
struct drake_roles {
	int n[DRAKE_NROLES];
};

/* "ps", "chief", "worker". */
const char *drake_role_name(enum drake_role r);

/* The role called s (as drake_role_name writes it); false for anything else. */
bool drake_role_parse(const char *s, enum drake_role *out);

/* "ps=1,chief=0,worker=2": every role once, in any order, each a count from
 * 0 to max. EINVAL with msg naming the problem otherwise. */
drake_err drake_roles_parse(const char *s, int max, struct drake_roles *out, char *msg,
                            size_t len) DRAKE_MUST_CHECK;

/* "ps=1,chief=0,worker=2" into buf (always terminated); returns buf. */
const char *drake_roles_format(const struct drake_roles *r, char *buf, size_t len);

int drake_roles_total(const struct drake_roles *r);

/* The first role, in PS, chief, worker order, of which have holds fewer than
 * min; -1 when have covers min in every role. */
int drake_roles_short(const struct drake_roles *have, const struct drake_roles *min);

#endif
