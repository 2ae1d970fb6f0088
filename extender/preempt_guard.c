/*
 * preempt_guard.c - per-job counts from the pod cache for the preemption
 * rule (see preempt_guard.h and gang/preempt.h).
 */
#include "extender/preempt_guard.h"

#include <stdio.h>
#include <string.h>

#include "extender/member.h"
#include "gang/preempt.h"
#include "gang/protocol.h"
#include "gang/refusal.h"
#include "kube/cache.h"
#include "kube/object.h"
#include "kube/pod.h"

static bool in_list(const char *uid, char *const *uids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(uid, uids[i]) == 0)
			return true;
	return false;
}

/* A gang member of pod obj that passes the membership check in ns (ns NULL:
 * its own); false for anything else. */
static bool real_member(const struct kube_pod *obj, const char *ns, struct ext_member *m)
{
	char why[256];
	return kube_pod_annotation(obj, DRAKE_ANNOTATION_GANG) &&
	       ext_member_of_pod(obj, m, why, sizeof(why)) == DRAKE_OK && m->planned_node &&
	       ext_member_check(m, ns ? ns : m->ns, why, sizeof(why)) == DRAKE_OK;
}

/* One job's counts. */
struct job_ctx {
	const char *ns;
	char *const *uids;
	size_t n_uids;
	struct drake_roles live, victims, min;
	bool has_min_roles;
	long min_total;
};

static bool count_member(const struct kube_pod *obj, void *arg)
{
	struct job_ctx *c = arg;
	struct ext_member m;
	struct kube_meta meta;
	kube_pod_meta(obj, &meta);
	if (!real_member(obj, c->ns, &m) || !meta.node_name || meta.deleting)
		return true;
	const char *phase = obj->phase;
	if (phase && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0))
		return true;
	c->live.n[m.role]++;
	if (in_list(meta.uid, c->uids, c->n_uids))
		c->victims.n[m.role]++;
	if (m.has_min_roles) {
		for (int r = 0; r < DRAKE_NROLES; r++)
			if (!c->has_min_roles || m.min_roles.n[r] > c->min.n[r])
				c->min.n[r] = m.min_roles.n[r];
		c->has_min_roles = true;
	}
	if (m.min > c->min_total)
		c->min_total = m.min;
	return true;
}

struct guard_ctx {
	const struct kube_cache *pods;
	char *const *uids;
	size_t n_uids;
	char *why;
	size_t whylen;
	bool allowed;
	/* jobs already checked on this node, by owner uid */
	const char *checked[64];
	size_t n_checked;
};

static bool guard_pod(const struct kube_pod *obj, void *arg)
{
	struct guard_ctx *c = arg;
	struct ext_member m;
	if (!in_list(obj->uid, c->uids, c->n_uids) || !real_member(obj, NULL, &m))
		return true;
	for (size_t i = 0; i < c->n_checked; i++)
		if (strcmp(c->checked[i], m.owner_uid) == 0)
			return true;
	if (c->n_checked < sizeof(c->checked) / sizeof(c->checked[0]))
		c->checked[c->n_checked++] = m.owner_uid;
	struct job_ctx j = {.ns = m.ns, .uids = c->uids, .n_uids = c->n_uids};
	kube_pods_by_owner(c->pods, m.owner_uid, count_member, &j);
	char why[200];
	if (drake_preempt_verdict(&j.live, &j.victims, j.has_min_roles ? &j.min : NULL,
	                          (int)j.min_total, why, sizeof(why)) == DRAKE_PREEMPT_ALLOW)
		return true;
	snprintf(c->why, c->whylen, DRAKE_JOB_REASON "%s/%s %s", m.ns, m.job, why);
	c->allowed = false;
	return false;
}

bool preempt_guard_allows(const struct kube_cache *pods, const char *node, char *const *uids,
                          size_t n_uids, char *why, size_t whylen)
{
	if (whylen > 0)
		why[0] = '\0';
	if (!pods || n_uids == 0)
		return true;
	struct guard_ctx c = {.pods = pods,
	                      .uids = uids,
	                      .n_uids = n_uids,
	                      .why = why,
	                      .whylen = whylen,
	                      .allowed = true};
	kube_pods_by_node(pods, node, guard_pod, &c);
	return c.allowed;
}
