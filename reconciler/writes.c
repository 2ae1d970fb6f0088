/*
 * writes.c - the controller's writes to the API server and its Events. Each
 * write carries a small context on r->writes that names its job: when the
 * last write of a pass completes, the job's backoff is settled and the job
 * is looked at again. Freeing the reconciler detaches the contexts, and
 * their late callbacks free only themselves.
 */
#include "reconciler/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "kube/api.h"
#include "kube/client.h"
#include "kube/object.h"

struct write_ctx {
	struct reconciler *r; /* NULL once the reconciler is gone */
	struct write_ctx *prev, *next;
	char key[KEY_MAX];
	char what[96];
};

static void on_write_done(const struct kube_response *resp, void *arg)
{
	struct write_ctx *w = arg;
	struct reconciler *r = w->r;
	if (r) {
		if (w->prev)
			w->prev->next = w->next;
		else
			r->writes = w->next;
		if (w->next)
			w->next->prev = w->prev;
		struct inflight *f = rec_inflight_of(r, w->key, false);
		bool ok = resp->status >= 200 && resp->status < 300;
		if (f && f->n > 0)
			f->n--;
		if (f && !ok && resp->status != 409 && resp->status != 404) {
			f->failed = true;
			rec_expect_clear(f); /* a create may have failed: look again */
		}
		if (f && f->n == 0) { /* the pass's last write: settle the backoff */
			f->failures = f->failed ? (f->failures < 6 ? f->failures + 1 : 6) : 0;
			f->retry_ms = f->failures ? rec_now_ms(r) + (1000LL << f->failures) : 0;
			f->failed = false;
		}
		/* 409 on create means it exists; 404 on delete means it is gone; 409/422 on
		 * a patch means a stale view: all settle on the next pass */
		if (!ok && resp->status != 409 && resp->status != 404) {
			char why[200], q[256];
			if (resp->status)
				kube_status_message(resp->body, resp->body_len, why, sizeof(why));
			else
				snprintf(why, sizeof(why), "%s", resp->error ? resp->error : "-");
			log_warn("reconciler_write_failed", "job=%s what=%s status=%ld error=%s",
			         w->key, w->what, resp->status, drake_log_quote(why, q, sizeof(q)));
		}
		char ns[64] = "", name[KUBE_NAME_MAX + 1] = "";
		sscanf(w->key, "%63[^/]/%253s", ns, name);
		rec_enqueue(r, &r->later, ns, name);
	}
	free(w);
}

static struct write_ctx *write_ctx(struct reconciler *r, const struct job *job, const char *what)
{
	struct write_ctx *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->r = r;
	snprintf(w->key, sizeof(w->key), "%s/%s", job->ns, job->name);
	snprintf(w->what, sizeof(w->what), "%s", what);
	w->next = r->writes;
	if (r->writes)
		r->writes->prev = w;
	r->writes = w;
	struct inflight *f = rec_inflight_of(r, w->key, true);
	if (f)
		f->n++;
	return w;
}

/* Undoes write_ctx() when the request never started. */
static void write_failed(struct reconciler *r, struct write_ctx *w, drake_err e)
{
	log_warn("reconciler_write_failed", "job=%s what=%s err=%s", w->key, w->what,
	         drake_strerror(e));
	struct kube_response resp = {.status = 0, .body = "", .error = drake_strerror(e)};
	on_write_done(&resp, w);
}

void rec_write(struct reconciler *r, const struct job *job, enum rec_op op,
               const struct kube_resource *res, const char *body, const char *uid, const char *what)
{
	struct write_ctx *w = write_ctx(r, job, what);
	if (!w)
		return;
	drake_err e = DRAKE_EINVAL;
	switch (op) {
	case OP_CREATE: e = body ? kube_create(r->client, res, body, on_write_done, w) : e; break;
	case OP_DELETE: e = kube_delete(r->client, res, uid, NULL, on_write_done, w); break;
	case OP_MERGE:
		e = body ? kube_merge_patch(r->client, res, body, on_write_done, w) : e;
		break;
	case OP_JSONPATCH:
		e = body ? kube_json_patch(r->client, res, body, on_write_done, w) : e;
		break;
	case OP_ADMIT:
		e = body ? kube_json_patch_first(r->client, res, body, on_write_done, w) : e;
		break;
	}
	if (e != DRAKE_OK)
		write_failed(r, w, e);
}

void rec_force_delete(struct reconciler *r, const struct job *job, const char *pod, const char *uid,
                      const char *what)
{
	struct write_ctx *w = write_ctx(r, job, what);
	if (!w)
		return;
	struct kube_resource res;
	rec_pod_res(job, pod, &res);
	drake_err e = kube_delete_now(r->client, &res, uid, on_write_done, w);
	if (e != DRAKE_OK)
		write_failed(r, w, e);
}

void rec_event(struct reconciler *r, const struct job *job, const char *type, const char *reason,
               const char *message)
{
	char api[128];
	snprintf(api, sizeof(api), "%s/%s", job->kind->group, job->kind->version);
	log_info("job_event", "kind=%s job=%s/%s type=%s reason=%s", job->kind->kind, job->ns,
	         job->name, type, reason);
	drake_err e = kube_record_event(r->client, job->ns, api, job->kind->kind, job->name,
	                                job->uid, type, reason, message, NULL, NULL);
	if (e != DRAKE_OK)
		log_warn("event_post_failed", "job=%s/%s err=%s", job->ns, job->name,
		         drake_strerror(e));
}

void rec_writes_detach(struct reconciler *r)
{
	for (struct write_ctx *w = r->writes; w; w = w->next)
		w->r = NULL;
	r->writes = NULL;
}

void rec_pod_res(const struct job *job, const char *name, struct kube_resource *res)
{
	*res =
	    (struct kube_resource){.version = "v1", .plural = "pods", .ns = job->ns, .name = name};
}

void rec_job_res(const struct job *job, const char *sub, struct kube_resource *res)
{
	*res = (struct kube_resource){.group = job->kind->group,
	                              .version = job->kind->version,
	                              .plural = job->kind->plural,
	                              .ns = job->ns,
	                              .name = job->name,
	                              .subresource = sub};
}

void rec_job_ref(const struct reconciler *r, struct job *job, const char *ns, const char *name,
                 const char *uid)
{
	memset(job, 0, sizeof(*job));
	/* a job gone from the caches: its writes fail as they would anyway */
	if (!rec_job_get(r, ns, name, &job->kind))
		job->kind = r->kinds[0];
	snprintf(job->ns, sizeof(job->ns), "%s", ns);
	snprintf(job->name, sizeof(job->name), "%s", name);
	snprintf(job->uid, sizeof(job->uid), "%s", uid);
}
