/*
 * replan.c - the filter verb's re-plan of one admitted member whose planned
 * node kube-scheduler no longer offers (admit.h: admit_replan).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gang/protocol.h"
#include "gang/replan.h"
#include "gang/vgpu.h"
#include "kube/cache.h"
#include "kube/object.h"
#include "kube/pod.h"
#include "reconciler/admit.h"

struct near_ctx {
	const char *self;
	const char *const *cand;
	size_t n;
	int *members; /* per candidate: pods of the job bound or planned there */
};

static bool count_near(const struct kube_pod *pod, void *arg)
{
	struct near_ctx *x = arg;
	if (!strcmp(pod->name, x->self))
		return true;
	const char *node = pod->node_name;
	if (!node || !*node)
		node = kube_pod_annotation(pod, DRAKE_ANNOTATION_PLANNED_NODE);
	for (size_t i = 0; node && i < x->n; i++)
		if (!strcmp(x->cand[i], node))
			x->members[i]++;
	return true;
}

drake_err admit_replan(const struct kube_cache *nodes, const struct kube_cache *pods,
                       const char *ns, const char *name, const char *const *candidates, size_t n,
                       char *node, size_t nodelen, char *why, size_t whylen)
{
	const struct kube_pod *pod = kube_pods_get(pods, ns, name);
	if (!pod)
		return drake_errorf(DRAKE_EINVAL, why, whylen, "pod %s/%s is not in the cache", ns,
		                    name);
	struct kube_meta m;
	kube_pod_meta(pod, &m);
	if (kube_pod_annotation(pod, DRAKE_KUBESHARE_GPU_REQUEST))
		return drake_errorf(DRAKE_ESTATE, why, whylen,
		                    "a KubeShare share is not re-planned onto another node");
	struct drake_cluster c;
	drake_cluster_init(&c);
	struct drake_res req;
	int *members = calloc(n ? n : 1, sizeof(*members));
	drake_err e =
	    members ? admit_snapshot(nodes, pods, NULL, &c, NULL, why, whylen) : DRAKE_ENOMEM;
	if (!e)
		e = admit_pod_requests(pod, &c.names, &req, why, whylen);
	if (!e && m.owner_uid) {
		struct near_ctx x = {name, candidates, n, members};
		kube_pods_by_owner(pods, m.owner_uid, count_near, &x);
	}
	int best = e ? -1 : drake_replan_pick(&c, &req, candidates, members, n);
	if (!e && best < 0)
		e = drake_errorf(DRAKE_ESTATE, why, whylen,
		                 "none of the %zu candidate nodes has room for it beside the other "
		                 "gangs' reservations",
		                 n);
	if (!e)
		snprintf(node, nodelen, "%s", candidates[best]);
	free(members);
	drake_cluster_release(&c);
	return e;
}
