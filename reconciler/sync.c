/*
 * sync.c - one pass over one job, from the caches: a finished job gets
 * cleanPodPolicy and its TTL; a live one any missing service and (gated)
 * pod, failed pods recreated per restart policy, started pods ungated when
 * gang admission is off, the backstop's check when it is on, and a status
 * patch when the verdict changed. Every write is idempotent (fixed names,
 * preconditions, test ops), and a job with writes in flight is skipped: the
 * write callbacks requeue it, so a pass never races its own earlier writes.
 */
#include "reconciler/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "kube/api.h"
#include "kube/cache.h"
#include "kube/informer.h"
#include "kube/object.h"
#include "kube/pod.h"
#include "kind/pod_codec.h"

static bool collect_pod(const struct kube_pod *pod, void *arg)
{
	struct owned *o = arg;
	if (o->n == RECONCILER_MAX_PODS) {
		o->truncated = true;
		return false;
	}
	if (job_pod_observe(pod, o->container, &o->obs[o->n])) {
		o->obj[o->n] = pod;
		o->n++;
	}
	return true;
}

static const struct kube_pod *find(const struct owned *o, enum job_rtype t, int index)
{
	for (size_t i = 0; i < o->n; i++)
		if (o->obs[i].type == t && o->obs[i].index == index)
			return o->obj[i];
	return NULL;
}

static bool collect_svc(struct json_t *svc, void *arg)
{
	struct svc_seen *s = arg;
	enum job_rtype t;
	int i;
	if (job_replica_of(svc, &t, &i))
		s->have[t][i] = 1;
	return true;
}

static void finish_job(struct reconciler *r, const struct job *job, struct owned *o,
                       long since_done)
{
	for (size_t i = 0; i < o->n; i++) {
		struct job_pod_obs *p = &o->obs[i];
		bool live = p->phase == JOB_POD_RUNNING || p->phase == JOB_POD_PENDING ||
		            p->phase == JOB_POD_UNKNOWN;
		if (p->deleting || job->clean == JOB_CLEAN_NONE ||
		    (job->clean == JOB_CLEAN_RUNNING && !live))
			continue;
		struct kube_meta m;
		kube_pod_meta(o->obj[i], &m);
		struct kube_resource res;
		rec_pod_res(job, m.name, &res);
		rec_write(r, job, OP_DELETE, &res, NULL, m.uid, "cleanup pod");
	}
	if (job->ttl_s < 0)
		return;
	if (since_done >= job->ttl_s) {
		struct kube_resource res;
		rec_job_res(job, NULL, &res);
		rec_event(r, job, "Normal", "TTLExpired",
		          "ttlSecondsAfterFinished passed; deleting");
		rec_write(r, job, OP_DELETE, &res, NULL, job->uid, "ttl delete");
	} else {
		rec_enqueue(r, &r->later, job->ns, job->name); /* look again in a second */
	}
}

/* How long a pass waits for the caches to show what it created before it
 * looks again (a create answered but never seen: deleted at once). */
#define EXPECT_MS 30000LL

/* What one pass created. */
struct slot_list {
	struct rec_slot *v;
	size_t n, cap;
	int pods;
};

/* Notes that a pass created slot's pod or service, for the expectation. */
static void note_created(struct slot_list *l, enum job_rtype t, int index, bool svc)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 8;
		struct rec_slot *p = realloc(l->v, cap * sizeof(*p));
		if (!p)
			return; /* out of memory: at worst a 409 on the next pass */
		l->v = p;
		l->cap = cap;
	}
	l->v[l->n++] =
	    (struct rec_slot){.index = (unsigned short)index, .type = (unsigned char)t, .svc = svc};
}

static void create_missing(struct reconciler *r, const struct job *job, const struct owned *o,
                           const struct svc_seen *svcs, struct slot_list *made)
{
	for (int t = 0; t < JOB_NTYPES; t++) {
		int slots = job_replica_slots(job, (enum job_rtype)t);
		for (int i = 0; i < slots; i++) {
			char name[JOB_SERVICE_NAME_MAX + 1], msg[160];
			if (job_replica_name(job, (enum job_rtype)t, i, name, sizeof(name)) !=
			    DRAKE_OK)
				continue;
			if (!svcs->have[t][i]) {
				struct kube_resource res = {
				    .version = "v1", .plural = "services", .ns = job->ns};
				char *body = job_service_json(job, (enum job_rtype)t, i);
				rec_write(r, job, OP_CREATE, &res, body, NULL, "create service");
				free(body);
				note_created(made, (enum job_rtype)t, i, true);
			}
			if (!find(o, (enum job_rtype)t, i)) {
				struct kube_resource res = {
				    .version = "v1", .plural = "pods", .ns = job->ns};
				struct job_pod_opts po = {
				    .domain = r->domain,
				    .gang_resource = r->gang_resource,
				    .scheduler_name = r->opts.scheduler_name,
				    .progress_url = r->opts.progress_url,
				    .progress_ca_pem = r->opts.progress_ca_pem,
				    .progress_audience = r->opts.progress_audience};
				char *body =
				    job_pod_json(job, (enum job_rtype)t, i, &po, msg, sizeof(msg));
				if (!body)
					log_warn("reconciler_pod_build", "job=%s/%s err=%s",
					         job->ns, job->name, msg);
				rec_write(r, job, OP_CREATE, &res, body, NULL, "create pod");
				free(body);
				note_created(made, (enum job_rtype)t, i, false);
				made->pods++;
			}
		}
	}
}

/* Patches status when the verdict changed it, with an Event on a new state. */
static void write_status(struct reconciler *r, const struct job *job, struct json_t *obj,
                         const struct job_verdict *v, long now)
{
	const char *was = job_status_current(obj);
	char *patch = job_status_patch(obj, job, v, now);
	if (patch) {
		struct kube_resource res;
		rec_job_res(job, "status", &res);
		rec_write(r, job, OP_MERGE, &res, patch, NULL, "status");
		free(patch);
		const char *state = job_state_name(v->state);
		if (v->state != JOB_STATE_CREATED && (!was || strcmp(was, state) != 0))
			rec_event(r, job,
			          v->state == JOB_STATE_FAILED || v->state == JOB_STATE_RESTARTING
			              ? "Warning"
			              : "Normal",
			          v->reason, v->message);
	}
}

static void suspend_job(struct reconciler *r, const struct job *job, struct json_t *obj,
                        struct owned *o, const struct svc_seen *svcs, long now)
{
	for (size_t i = 0; i < o->n; i++) {
		struct kube_meta m;
		if (o->obs[i].deleting)
			continue;
		kube_pod_meta(o->obj[i], &m);
		struct kube_resource res;
		rec_pod_res(job, m.name, &res);
		rec_write(r, job, OP_DELETE, &res, NULL, m.uid, "suspend pod");
	}
	for (int t = 0; t < JOB_NTYPES; t++) {
		for (int i = 0; i < JOB_MAX_REPLICAS; i++) {
			char name[JOB_SERVICE_NAME_MAX + 1];
			if (!svcs->have[t][i] || job_replica_name(job, (enum job_rtype)t, i, name,
			                                          sizeof(name)) != DRAKE_OK)
				continue;
			struct kube_resource res = {
			    .version = "v1", .plural = "services", .ns = job->ns, .name = name};
			rec_write(r, job, OP_DELETE, &res, NULL, NULL, "suspend service");
		}
	}
	struct job_verdict v = {.state = JOB_STATE_SUSPENDED};
	snprintf(v.reason, sizeof(v.reason), "TFJobSuspended");
	snprintf(v.message, sizeof(v.message), "job %s/%s is suspended.", job->ns, job->name);
	write_status(r, job, obj, &v, now);
}

void rec_sync_job(struct reconciler *r, const char *ns, const char *name)
{
	const struct job_kind *kind;
	struct json_t *obj = rec_job_get(r, ns, name, &kind);
	struct kube_meta m;
	char key[KEY_MAX];
	snprintf(key, sizeof(key), "%s/%s", ns, name);
	if (!obj || kube_obj_meta(obj, &m) != DRAKE_OK || m.deleting) {
		rec_backstop_forget(r, key);
		return;
	}
	struct inflight *f = rec_inflight_of(r, key, false);
	if (f && f->n > 0)
		return; /* the write callbacks requeue it */
	if (f && f->retry_ms > rec_now_ms(r)) {
		rec_enqueue(r, &r->later, ns, name); /* backing off after failed writes */
		return;
	}
	struct job job;
	bool managed;
	char msg[256];
	long now = (long)rec_now_s(r);
	if (job_decode(kind, obj, &job, &managed, msg, sizeof(msg)) != DRAKE_OK) {
		char *patch = job_status_invalid_patch(obj, kind, msg, now);
		if (patch && m.uid[0] && strlen(ns) < sizeof(job.ns) &&
		    strlen(name) < sizeof(job.name)) {
			rec_job_ref(r, &job, ns, name, m.uid);
			struct kube_resource res;
			rec_job_res(&job, "status", &res);
			char reason[64];
			snprintf(reason, sizeof(reason), "%sFailedValidation", kind->kind);
			rec_event(r, &job, "Warning", reason, msg);
			rec_write(r, &job, OP_MERGE, &res, patch, NULL, "invalid status");
		} else if (patch) {
			log_warn("job_invalid", "kind=%s job=%s err=%s", kind->kind, key, msg);
		}
		free(patch);
		return;
	}
	if (!managed)
		return; /* runPolicy.managedBy names another controller */
	bool final;
	long since_start, since_done;
	job_status_read(obj, now, &final, &since_start, &since_done);
	struct owned *o = r->owned;
	o->n = 0;
	o->truncated = false;
	o->container = job.kind->container;
	kube_pods_by_owner(kube_informer_cache(r->pods), job.uid, collect_pod, o);
	if (o->truncated) { /* acting on part of the pods would recreate the rest */
		log_warn("reconciler_too_many_pods", "job=%s limit=%d action=skip", key,
		         RECONCILER_MAX_PODS);
		return;
	}
	if (final) {
		rec_backstop_forget(r, key);
		finish_job(r, &job, o, since_done);
		return;
	}
	struct svc_seen *svcs = r->svcs;
	memset(svcs, 0, sizeof(*svcs));
	kube_cache_by_owner(kube_informer_cache(r->services), job.uid, collect_svc, svcs);
	if (job.suspend) {
		suspend_job(r, &job, obj, o, svcs, now);
		return;
	}
	long long now_ms = rec_now_ms(r);
	if (f && f->expect_ms && (now_ms >= f->expect_ms || f->nexpect == 0))
		rec_expect_clear(f);
	bool expecting = f && f->expect_ms;
	struct slot_list made = {0};
	if (!expecting)
		create_missing(r, &job, o, svcs, &made);
	int created = made.pods;
	if (made.n) {
		f = rec_inflight_of(r, key, true);
		if (f) {
			rec_expect(f, made.v, made.n, now_ms + EXPECT_MS);
			made.v = NULL;
		}
	}
	free(made.v);
	char reserved[300];
	if (created && job_template_reserved(&job, reserved, sizeof(reserved))) {
		char why[400];
		snprintf(why, sizeof(why),
		         "pod templates carry annotations only drake writes (%s): they were left "
		         "out of the pods",
		         reserved);
		rec_event(r, &job, "Warning", "TemplateAnnotationsStripped", why);
	}
	if (created && job.notice[0]) /* a field drake accepts but does not act on */
		rec_event(r, &job, "Warning", "FieldNotHonoured", job.notice);
	struct job_verdict v;
	int prior = job_restart_count(obj);
	job_judge(&job, o->obs, o->n, prior, since_start, &v);
	int recreated = 0;
	for (size_t i = 0; i < o->n; i++) {
		struct kube_meta pm;
		kube_pod_meta(o->obj[i], &pm);
		struct kube_resource res;
		rec_pod_res(&job, pm.name, &res);
		if (o->obs[i].recreate) {
			rec_write(r, &job, OP_DELETE, &res, NULL, pm.uid, "recreate failed pod");
			recreated++;
		} else if (o->obs[i].gated && !o->obs[i].deleting && !job_state_final(v.state) &&
		           job_replica_starts(&job, o->obs[i].type, o->obs[i].index) &&
		           !(r->opts.gang && o->obs[i].type != JOB_EVALUATOR)) {
			/* With gang admission, PS, chief and workers wait for a
			 * plan (admit_pass): they train together, so they start
			 * together. An evaluator is no part of the training
			 * cluster (TensorFlow leaves it out, though TF_CONFIG
			 * lists it as Kubeflow's does): it only reads the
			 * checkpoints, training never waits for it, and it
			 * starts at once. */
			char *patch = job_pod_ungate_patch(o->obj[i]);
			rec_write(r, &job, OP_JSONPATCH, &res, patch, NULL, "ungate pod");
			free(patch);
		}
	}
	/* the backstop judges members lost, not in the pass that deletes or
	 * creates some. A view that lags this job's creates still counts its
	 * bound members right (a pod just created is gated), so expectations
	 * never hold its deadline back. */
	if (r->opts.gang && !recreated && !created && !job_state_final(v.state))
		rec_backstop(r, &job, o, key);
	if (recreated) {
		char *patch = job_restarts_patch(prior + recreated);
		struct kube_resource res;
		rec_job_res(&job, NULL, &res);
		rec_write(r, &job, OP_MERGE, &res, patch, NULL, "count restarts");
		free(patch);
	}
	write_status(r, &job, obj, &v, now);
	if (created)
		log_info("job_created_pods", "kind=%s job=%s pods=%d", kind->kind, key, created);
	if (job.deadline_s >= 0)
		rec_enqueue(r, &r->later, ns, name); /* the deadline is checked every second */
}
