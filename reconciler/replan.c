/*
 * replan.c - the filter verb's re-plan of one admitted member whose planned
 * node kube-scheduler no longer offers (admit.h: admit_replan), on a
 * snapshot of its own or on one already built (admit_replan_on).
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

/* The pod to re-plan, or NULL with why (EINVAL or ESTATE in *e). */
static const struct kube_pod *replanned_pod(const struct kube_cache *pods, const char *ns,
                                            const char *name, drake_err *e, char *why,
                                            size_t whylen)
{
	const struct kube_pod *pod = kube_pods_get(pods, ns, name);
	if (!pod) {
		*e = drake_errorf(DRAKE_EINVAL, why, whylen, "pod %s/%s is not in the cache", ns,
		                  name);
		return NULL;
	}
	if (kube_pod_annotation(pod, DRAKE_KUBESHARE_GPU_REQUEST)) {
		*e = drake_errorf(DRAKE_ESTATE, why, whylen,
		                  "a KubeShare share is not re-planned onto another node");
		return NULL;
	}
	*e = DRAKE_OK;
	return pod;
}

/* Picks pod's node among the candidates on c. */
static drake_err pick(const struct drake_cluster *c, const struct kube_cache *pods,
                      const struct kube_pod *pod, const char *const *candidates, size_t n,
                      char *node, size_t nodelen, char *why, size_t whylen)
{
	struct kube_meta m;
	kube_pod_meta(pod, &m);
	struct drake_res req;
	int *members = calloc(n ? n : 1, sizeof(*members));
	drake_err e = members ? admit_pod_requests(pod, &c->names, &req, why, whylen)
	                      : drake_errorf(DRAKE_ENOMEM, why, whylen, "out of memory");
	if (!e && m.owner_uid) {
		struct near_ctx x = {pod->name, candidates, n, members};
		kube_pods_by_owner(pods, m.owner_uid, count_near, &x);
	}
	int best = e ? -1 : drake_replan_pick(c, &req, candidates, members, n);
	if (!e && best < 0)
		e = drake_errorf(DRAKE_ESTATE, why, whylen,
		                 "none of the %zu candidate nodes has room for it beside the other "
		                 "gangs' reservations",
		                 n);
	if (!e)
		snprintf(node, nodelen, "%s", candidates[best]);
	free(members);
	return e;
}

drake_err admit_replan(const struct kube_cache *nodes, const struct kube_cache *pods,
                       const char *ns, const char *name, const char *const *candidates, size_t n,
                       char *node, size_t nodelen, char *why, size_t whylen)
{
	drake_err e;
	const struct kube_pod *pod = replanned_pod(pods, ns, name, &e, why, whylen);
	if (!pod)
		return e;
	struct drake_cluster c;
	drake_cluster_init(&c);
	e = admit_snapshot(nodes, pods, NULL, &c, NULL, why, whylen);
	if (!e)
		e = pick(&c, pods, pod, candidates, n, node, nodelen, why, whylen);
	drake_cluster_release(&c);
	return e;
}

drake_err admit_replan_on(const struct drake_cluster *c, const struct kube_cache *pods,
                          const char *ns, const char *name, const char *const *candidates, size_t n,
                          char *node, size_t nodelen, char *why, size_t whylen)
{
	drake_err e;
	const struct kube_pod *pod = replanned_pod(pods, ns, name, &e, why, whylen);
	if (!pod)
		return e;
	if (!admit_pod_names_known(pod, &c->names))
		return drake_errorf(DRAKE_ENOTFOUND, why, whylen,
		                    "pod %s/%s requests a resource the snapshot does not count", ns,
		                    name);
	return pick(c, pods, pod, candidates, n, node, nodelen, why, whylen);
}
