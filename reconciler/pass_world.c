/*
 * pass_world.c - one pass's snapshot and decoded jobs (pass_world.h).
 */
#include "reconciler/pass_world.h"

#include <stdlib.h>
#include <string.h>

#include "kube/cache.h"
#include "kube/object.h"

struct decode_ctx {
	struct pass_job *v;
	size_t n, cap;
	drake_err err;
	const struct job_kind *kind; /* of the cache being decoded */
};

static bool decode_one(struct json_t *obj, void *arg)
{
	struct decode_ctx *x = arg;
	if (x->n == x->cap) {
		size_t cap = x->cap ? x->cap * 2 : 16;
		struct pass_job *p = realloc(x->v, cap * sizeof(*p));
		if (!p) {
			x->err = DRAKE_ENOMEM;
			return false;
		}
		x->v = p;
		x->cap = cap;
	}
	struct pass_job *j = &x->v[x->n];
	memset(j, 0, sizeof(*j));
	bool managed;
	char why[DRAKE_WHY_MAX];
	if (job_decode(x->kind, obj, &j->job, &managed, why, sizeof(why)) != DRAKE_OK || !managed)
		return true;
	j->obj = obj;
	j->created = admit_created(obj);
	if (kube_obj_annotation(obj, JOB_ANNOTATION_MIGRATIONS)) {
		j->mg = malloc(sizeof(*j->mg));
		if (!j->mg) {
			x->err = DRAKE_ENOMEM;
			return false;
		}
		if (job_migrations_decode(obj, &j->job, j->mg, j->mg_why, sizeof(j->mg_why)) !=
		    DRAKE_OK) {
			free(j->mg);
			j->mg = NULL;
			j->mg_bad = true;
		}
	}
	x->n++;
	return true;
}

drake_err pass_jobs_decode(const struct job_caches *caches, struct pass_job **jobs, size_t *n)
{
	struct decode_ctx x = {0};
	for (size_t k = 0; k < caches->n && !x.err; k++) {
		x.kind = caches->kind[k];
		kube_cache_foreach(caches->cache[k], decode_one, &x);
	}
	*jobs = x.v;
	*n = x.n;
	return x.err;
}

void pass_jobs_release(struct pass_job *jobs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(jobs[i].mg);
	free(jobs);
}

const struct job_migrations *pass_job_migrations(const struct pass_job *j)
{
	static const struct job_migrations none;
	return j->mg_bad ? NULL : j->mg ? j->mg : &none;
}

drake_err pass_world_build(struct pass_world *w, const struct kube_cache *nodes,
                           const struct kube_cache *pods, const struct job_caches *jobs, char *msg,
                           size_t msglen)
{
	memset(w, 0, sizeof(*w));
	drake_cluster_init(&w->c);
	if (pass_jobs_decode(jobs, &w->jobs, &w->n) != DRAKE_OK)
		return drake_errorf(DRAKE_ENOMEM, msg, msglen, "out of memory decoding jobs");
	return admit_snapshot_jobs(nodes, pods, w->jobs, w->n, &w->c, &w->skipped, msg, msglen);
}

void pass_world_drop_jobs(struct pass_world *w)
{
	pass_jobs_release(w->jobs, w->n);
	w->jobs = NULL;
	w->n = 0;
	admit_skipped_release(&w->skipped);
}

void pass_world_release(struct pass_world *w)
{
	if (!w)
		return;
	pass_world_drop_jobs(w);
	drake_cluster_release(&w->c);
	memset(w, 0, sizeof(*w));
}
