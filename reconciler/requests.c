/*
 * requests.c - pod specs' resource lists into resource vectors (see
 * requests.h).
 */
#include "reconciler/requests.h"

#include <stdio.h>
#include <string.h>

#include "gang/protocol.h"

bool requests_ext_name(const char *name)
{
	/* drake's own marker resource (gang-only mode) is on no node: it only
	 * routes pods to drake, so it is not capacity. */
	return strncmp(name, DRAKE_ANNOTATION_PREFIX, strlen(DRAKE_ANNOTATION_PREFIX)) != 0 &&
	       !drake_res_builtin(name);
}

/* Skipping an untracked resource unread is what lets a node advertise
 * anything: nobody asks for it, and requests are checked for it first. */
drake_err requests_list(const struct kube_qty *list, size_t n, const struct drake_res_names *names,
                        struct drake_res *r, unsigned *has, char *msg, size_t msglen)
{
	for (size_t i = 0; i < n; i++) {
		const char *k = list[i].name;
		if (requests_ext_name(k) ? drake_res_name_find(names, k) < 0
		                         : !drake_res_builtin(k))
			continue; /* untracked, or a drake.dev/ marker */
		/* A quantity is an int-or-string: YAML's `nvidia.com/gpu: 1`
		 * arrives as a number, which the record holds as text. */
		const char *q = list[i].value;
		if (!q)
			return drake_errorf(DRAKE_EINVAL, msg, msglen,
			                    "resource %.64s: quantity must be a string or a number",
			                    k);
		struct drake_res one = {0};
		unsigned one_has = 0;
		char why[160];
		drake_err e = drake_res_set(&one, &one_has, names, k, q, why, sizeof(why));
		if (e)
			return drake_errorf(e, msg, msglen, "%.64s: %s", k, why);
		drake_res_add(r, &one);
		*has |= one_has;
	}
	return DRAKE_OK;
}

void requests_foreach_list(const struct kube_res_spec *spec,
                           void (*fn)(const struct kube_qty *list, size_t n, void *arg), void *arg)
{
	for (size_t i = 0; i < spec->n_c; i++) {
		fn(spec->c[i].req, spec->c[i].n_req, arg);
		fn(spec->c[i].lim, spec->c[i].n_lim, arg);
	}
	fn(spec->overhead, spec->n_overhead, arg);
}

/* Most distinct extended resources requests_check_tracked counts in one spec. */
#define SPEC_EXT_COUNT_MAX 64

struct tracked_ctx {
	const struct drake_res_names *names;
	const char *seen[SPEC_EXT_COUNT_MAX];
	int n;
	bool more;           /* more than SPEC_EXT_COUNT_MAX */
	const char *missing; /* the first one names does not hold */
};

static void tracked_list(const struct kube_qty *list, size_t n, void *arg)
{
	struct tracked_ctx *x = arg;
	for (size_t q = 0; q < n; q++) {
		const char *k = list[q].name;
		if (!requests_ext_name(k))
			continue;
		bool seen = false;
		for (int i = 0; i < x->n && !seen; i++)
			seen = !strcmp(x->seen[i], k);
		if (!seen && x->n == SPEC_EXT_COUNT_MAX)
			x->more = true;
		else if (!seen)
			x->seen[x->n++] = k;
		if (!x->missing && drake_res_name_find(x->names, k) < 0)
			x->missing = k;
	}
}

/* Planned as if not asked, such a request would put the pod where
 * kube-scheduler cannot. */
drake_err requests_check_tracked(const struct kube_res_spec *spec,
                                 const struct drake_res_names *names, char *msg, size_t msglen)
{
	struct tracked_ctx x = {.names = names};
	requests_foreach_list(spec, tracked_list, &x);
	if (!x.missing)
		return DRAKE_OK;
	if (x.n > DRAKE_RES_MAX_EXT)
		return drake_errorf(DRAKE_ELIMIT, msg, msglen,
		                    "requests %s%d extended resources; drake models at most %d",
		                    x.more ? "more than " : "", x.n, DRAKE_RES_MAX_EXT);
	if (strlen(x.missing) >= DRAKE_RES_NAME_MAX)
		return drake_errorf(DRAKE_ELIMIT, msg, msglen,
		                    "extended resource \"%.64s...\" has a name longer than %d",
		                    x.missing, DRAKE_RES_NAME_MAX - 1);
	return drake_errorf(DRAKE_ELIMIT, msg, msglen,
	                    "requests extended resource \"%.64s\"; drake models at most %d at a "
	                    "time and older requests hold every slot",
	                    x.missing, DRAKE_RES_MAX_EXT);
}

static drake_err container_requests(const struct kube_container_res *c,
                                    const struct drake_res_names *names, struct drake_res *out,
                                    char *msg, size_t msglen)
{
	struct drake_res req = {0}, lim = {0};
	unsigned req_has = 0, lim_has = 0;
	drake_err e = requests_list(c->req, c->n_req, names, &req, &req_has, msg, msglen);
	if (!e)
		e = requests_list(c->lim, c->n_lim, names, &lim, &lim_has, msg, msglen);
	if (e)
		return e;
	drake_res_default_requests(&req, &req_has, &lim, lim_has);
	*out = req;
	return DRAKE_OK;
}

static void res_max(struct drake_res *a, const struct drake_res *b)
{
	a->cpu_milli = a->cpu_milli > b->cpu_milli ? a->cpu_milli : b->cpu_milli;
	a->mem_bytes = a->mem_bytes > b->mem_bytes ? a->mem_bytes : b->mem_bytes;
	a->gpu = a->gpu > b->gpu ? a->gpu : b->gpu;
	for (int i = 0; i < DRAKE_RES_MAX_EXT; i++)
		a->ext[i] = a->ext[i] > b->ext[i] ? a->ext[i] : b->ext[i];
}

/*
 * resource.PodRequests for a pod not yet bound (no status resources): app
 * containers and sidecars run together and are summed; a regular init
 * container runs beside the sidecars started before it, and the largest
 * such moment counts when larger (KEP-753: a sidecar is an init container
 * with restartPolicy Always); spec.overhead comes on top.
 */
drake_err requests_of_spec(const struct kube_res_spec *spec, const struct drake_res_names *names,
                           struct drake_res *out, char *msg, size_t msglen)
{
	struct drake_res sum = {0}, init = {0}, sidecars = {0}, overhead = {0};
	for (size_t i = 0; i < spec->n_c; i++) {
		const struct kube_container_res *c = &spec->c[i];
		if (c->kind != KUBE_APP_CONTAINER)
			continue;
		struct drake_res one;
		drake_err e = container_requests(c, names, &one, msg, msglen);
		if (e)
			return e;
		drake_res_add(&sum, &one);
	}
	for (size_t i = 0; i < spec->n_c; i++) {
		const struct kube_container_res *c = &spec->c[i];
		if (c->kind != KUBE_INIT_CONTAINER)
			continue;
		struct drake_res one;
		drake_err e = container_requests(c, names, &one, msg, msglen);
		if (e)
			return e;
		if (c->sidecar) {
			drake_res_add(&sum, &one);
			drake_res_add(&sidecars, &one);
			one = sidecars;
		} else {
			drake_res_add(&one, &sidecars);
		}
		res_max(&init, &one);
	}
	res_max(&sum, &init);
	unsigned has = 0;
	drake_err e =
	    requests_list(spec->overhead, spec->n_overhead, names, &overhead, &has, msg, msglen);
	if (e)
		return e;
	drake_res_add(&sum, &overhead);
	*out = sum;
	return DRAKE_OK;
}
