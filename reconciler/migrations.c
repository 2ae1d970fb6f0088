/*
 * migrations.c - migration, the adapter side: what replicas report about
 * their progress (kept per job in migrate/progress.h's ring), the moves the
 * policy (migrate/migrate.h) or an explicit request decides, and carrying
 * each out from its record on the job (reconciler/migration.h).
 *
 * Each pass builds the world migrate/step.h's round reads (the pass's
 * snapshot and decoded jobs, pass_world.h, shared with admission; every
 * bound replica with its job's progress class, the waiting jobs, whether a
 * move is in flight or a record has not settled) and starts the move it
 * returns; when to move, and what, is the round's alone. A move is in
 * flight from its record until its replacement is bound.
 *
 * A move is started by writing its record; each pass then makes the
 * cluster match the record: the pod with the recorded uid is deleted,
 * admission plans its replacement onto the target (admit.c reads the
 * record), and once a pod of another uid is bound the record is cleared.
 * Nothing of a move lives only in memory.
 */
#include "reconciler/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "gang/protocol.h"
#include "kube/api.h"
#include "kube/cache.h"
#include "kube/informer.h"
#include "kube/object.h"
#include "kube/pod.h"
#include "migrate/migrate.h"
#include "migrate/progress.h"
#include "migrate/step.h"
#include "reconciler/migration.h"
#include "reconciler/pass_world.h"
#include "kind/pod_codec.h"

/* A move that has not finished this long after it started is given up
 * (its replica stays wherever it is now). */
#define MOVE_TIMEOUT_S 300.0

/* ---- progress ---- */

struct rec_progress {
	char key[KEY_MAX]; /* "ns/job" */
	char uid[64];      /* the job's uid: a new job of the same name starts afresh */
	struct mig_progress p;
};

static struct rec_progress *progress_of(const struct reconciler *r, const char *key,
                                        const char *uid)
{
	for (size_t i = 0; i < r->nprogress; i++)
		if (!strcmp(r->progress[i].key, key) && !strcmp(r->progress[i].uid, uid))
			return &r->progress[i];
	return NULL;
}

/* The job drake manages that controls pod (its key and uid), or false. */
static bool owner_job(const struct reconciler *r, const struct kube_pod *pod, struct job *job,
                      struct json_t **job_obj)
{
	struct kube_meta m;
	if (!pod)
		return false;
	kube_pod_meta(pod, &m);
	if (!m.owner_uid)
		return false;
	const char *name = kube_pod_label(pod, "training.kubeflow.org/job-name");
	if (!name)
		return false;
	const struct job_kind *kind;
	struct json_t *obj = rec_job_get(r, m.ns, name, &kind);
	bool managed;
	char why[DRAKE_WHY_MAX];
	if (!obj || job_decode(kind, obj, job, &managed, why, sizeof(why)) != DRAKE_OK ||
	    !managed || strcmp(job->uid, m.owner_uid) != 0)
		return false;
	if (job_obj)
		*job_obj = obj;
	return true;
}

const char *reconciler_pod_resource(const struct reconciler *r, const char *ns,
                                    const char *pod_name)
{
	struct job job;
	if (!owner_job(r, kube_pods_get(kube_informer_cache(r->pods), ns, pod_name), &job, NULL))
		return NULL;
	return job.kind->plural;
}

drake_err reconciler_progress(struct reconciler *r, const char *ns, const char *pod_name,
                              const char *pod_uid, int64_t step, double value, bool loss,
                              int64_t total_steps, double t, char *why, size_t len)
{
	const struct kube_pod *pod = kube_pods_get(kube_informer_cache(r->pods), ns, pod_name);
	struct job job;
	/* a pod's token names its uid; a trusted agent (client certificate)
	 * names none */
	if (!pod || (pod_uid && *pod_uid && strcmp(pod->uid, pod_uid) != 0))
		return drake_errorf(DRAKE_EINVAL, why, len,
		                    "pod %s/%s (uid %s) is not in drake's cache", ns, pod_name,
		                    pod_uid);
	if (!owner_job(r, pod, &job, NULL))
		return drake_errorf(DRAKE_EINVAL, why, len,
		                    "pod %s/%s is not a replica of a job drake manages", ns,
		                    pod_name);
	char key[KEY_MAX];
	snprintf(key, sizeof(key), "%s/%s", job.ns, job.name);
	struct rec_progress *e = progress_of(r, key, job.uid);
	if (!e) {
		if (r->nprogress == RECONCILER_MAX_PROGRESS)
			return drake_errorf(DRAKE_ELIMIT, why, len,
			                    "progress of %d jobs is kept already",
			                    RECONCILER_MAX_PROGRESS);
		struct rec_progress *p = realloc(r->progress, (r->nprogress + 1) * sizeof(*p));
		if (!p)
			return drake_errorf(DRAKE_ENOMEM, why, len, "out of memory");
		r->progress = p;
		e = &r->progress[r->nprogress++];
		memset(e, 0, sizeof(*e));
		snprintf(e->key, sizeof(e->key), "%s", key);
		snprintf(e->uid, sizeof(e->uid), "%s", job.uid);
		mig_progress_init(&e->p, loss ? MIG_KIND_LOSS : MIG_KIND_ACCURACY, total_steps);
	}
	if ((e->p.kind == MIG_KIND_LOSS) != loss)
		return drake_errorf(
		    DRAKE_EINVAL, why, len, "job %s reports a %s metric; this report says %s", key,
		    e->p.kind == MIG_KIND_LOSS ? "loss" : "accuracy", loss ? "loss" : "accuracy");
	if (total_steps > 0)
		e->p.total_steps = total_steps;
	struct mig_sample s = {t, step, value};
	drake_err err = mig_progress_add(&e->p, &s, &r->prog, why, len);
	if (!err)
		log_debug("progress", "job=%s pod=%s step=%lld value=%g class=%s", key, pod_name,
		          (long long)step, value, mig_class_name(e->p.cls));
	return err;
}

/* The job's progress class (UNKNOWN when it has reported nothing) and
 * fraction of its steps (-1 unknown). */
static enum mig_class class_of(const struct reconciler *r, const struct job *job, double *frac)
{
	char key[KEY_MAX];
	snprintf(key, sizeof(key), "%s/%s", job->ns, job->name);
	const struct rec_progress *e = progress_of(r, key, job->uid);
	if (frac)
		*frac = e ? mig_progress_fraction(&e->p) : -1;
	return e ? e->p.cls : MIG_CLASS_UNKNOWN;
}

const struct mig_progress *rec_job_samples(const struct reconciler *r, const char *key,
                                           const char *uid)
{
	const struct rec_progress *e = progress_of(r, key, uid);
	return e && e->p.n > 0 ? &e->p : NULL;
}

bool rec_job_slow(const struct reconciler *r, const struct job *job, double *frac)
{
	return mig_class_slow(class_of(r, job, frac));
}

bool rec_job_progress(const struct reconciler *r, const char *key, const char *uid,
                      const char **cls, bool *slow, long long *step, double *value)
{
	const struct rec_progress *e = progress_of(r, key, uid);
	*slow = false;
	if (!e || e->p.n == 0)
		return false;
	const struct mig_sample *s = &e->p.ring[(e->p.head + e->p.n - 1) % MIG_RING];
	*cls = mig_class_name(e->p.cls);
	*slow = mig_class_slow(e->p.cls);
	*step = (long long)s->step;
	*value = s->value;
	return true;
}

/* Forgets the progress of jobs that are gone. */
static void progress_gc(struct reconciler *r)
{
	size_t kept = 0;
	for (size_t i = 0; i < r->nprogress; i++) {
		char ns[64] = "", name[KUBE_NAME_MAX + 1] = "";
		sscanf(r->progress[i].key, "%63[^/]/%253s", ns, name);
		struct json_t *obj = rec_job_get(r, ns, name, NULL);
		struct kube_meta m;
		if (obj && kube_obj_meta(obj, &m) == DRAKE_OK && !strcmp(m.uid, r->progress[i].uid))
			r->progress[kept++] = r->progress[i];
	}
	r->nprogress = kept;
}

/* ---- the recent decisions, for GET /v1/migrations ---- */

static void remember(struct reconciler *r, const char *job, const char *replica, const char *from,
                     const char *to, const char *by, const char *what)
{
	struct job_move_note *n = &r->moves[r->moves_head];
	r->moves_head = (r->moves_head + 1) % RECONCILER_MOVES_KEPT;
	if (r->nmoves < RECONCILER_MOVES_KEPT)
		r->nmoves++;
	memset(n, 0, sizeof(*n));
	n->at = rec_now_s(r);
	snprintf(n->job, sizeof(n->job), "%s", job);
	snprintf(n->replica, sizeof(n->replica), "%s", replica);
	snprintf(n->from, sizeof(n->from), "%s", from);
	snprintf(n->to, sizeof(n->to), "%s", to);
	snprintf(n->by, sizeof(n->by), "%s", by);
	snprintf(n->what, sizeof(n->what), "%s", what);
}

/* ---- building the policy's inputs ---- */

/* What the controller keeps of a replica beside the policy's view of it. */
struct replica_of {
	char pod[KUBE_NAME_MAX + 1];
	char job[KEY_MAX];       /* "ns/name" */
	const struct job *tfjob; /* the pass world's */
	enum job_rtype type;
	int index;
};

/* A job waiting for admission, for the better-placement rule. */
struct waiting_of {
	double created;
	char job[KEY_MAX];
	struct drake_gang_req req;
};

/* The world migrate/step.h reads, and what the controller keeps beside
 * it to carry a move out. */
struct rec_world {
	const struct drake_cluster *c; /* the pass world's snapshot */
	struct mig_replica *r;         /* what migrate/ reads, contiguous */
	struct replica_of *of;         /* the same replicas, index for index */
	size_t n, cap;
	bool any_moving;
	struct waiting_of *wof; /* the waiting jobs, oldest first once built */
	size_t nwof, capwof;
	struct mig_waiting *wait; /* the same, as migrate/ reads them */
};

static void world_release(struct rec_world *w)
{
	free(w->r);
	free(w->of);
	free(w->wof);
	free(w->wait);
}

static bool grow_world(struct rec_world *w)
{
	if (w->n < w->cap)
		return true;
	size_t cap = w->cap ? w->cap * 2 : 64;
	struct mig_replica *r = realloc(w->r, cap * sizeof(*r));
	if (r)
		w->r = r;
	struct replica_of *of = realloc(w->of, cap * sizeof(*of));
	if (of)
		w->of = of;
	if (!r || !of)
		return false;
	w->cap = cap;
	return true;
}

struct add_ctx {
	struct reconciler *r;
	struct rec_world *w;
	drake_err err;
};

/* The requests of replica type t's template; false when it has none or
 * asks for a KubeShare share (the rule leaves such jobs alone). */
static bool type_req(const struct rec_world *w, const struct job *job, enum job_rtype t,
                     struct drake_res *out)
{
	char why[DRAKE_WHY_MAX];
	struct drake_share sh;
	const struct json_t *tmpl = job->rs[t].tmpl;
	return tmpl &&
	       admit_template_requests(tmpl, &w->c->names, out, why, sizeof(why)) == DRAKE_OK &&
	       admit_template_share(tmpl, &sh, why, sizeof(why)) == DRAKE_OK && sh.milli == 0;
}

/* A job whose pods all still carry drake's gate waits for admission (as
 * admit.h has it): its gang, as the planner sees it, is kept for the
 * better-placement rule. */
static drake_err add_waiting(struct rec_world *w, const struct pass_job *pj)
{
	const struct job *job = &pj->job;
	struct waiting_of x = {.created = pj->created};
	struct drake_gang_req *q = &x.req;
	snprintf(x.job, sizeof(x.job), "%s/%s", job->ns, job->name);
	if (!job->rs[JOB_WORKER].present || !type_req(w, job, JOB_WORKER, &q->worker))
		return DRAKE_OK;
	if (job->rs[JOB_PS].present && job->rs[JOB_PS].replicas > 0) {
		if (!type_req(w, job, JOB_PS, &q->ps))
			return DRAKE_OK;
		q->n_ps = job->rs[JOB_PS].replicas;
	}
	if (job->rs[JOB_CHIEF].present && job->rs[JOB_CHIEF].replicas > 0) {
		if (!type_req(w, job, JOB_CHIEF, &q->chief))
			return DRAKE_OK;
		q->n_chief = 1;
	}
	q->min_workers = job->min_instances;
	q->want_workers = job->rs[JOB_WORKER].replicas;
	if (w->nwof == w->capwof) {
		size_t cap = w->capwof ? w->capwof * 2 : 16;
		struct waiting_of *p = realloc(w->wof, cap * sizeof(*p));
		if (!p)
			return DRAKE_ENOMEM;
		w->wof = p;
		w->capwof = cap;
	}
	w->wof[w->nwof++] = x;
	return DRAKE_OK;
}

static int by_created(const void *a, const void *b)
{
	const struct waiting_of *x = a, *y = b;
	if (x->created != y->created)
		return x->created < y->created ? -1 : 1;
	return strcmp(x->job, y->job);
}

/* The bound, live members of one running job, as the policy sees them. */
static bool add_job(const struct pass_job *pj, struct add_ctx *x)
{
	const struct job *job = &pj->job;
	char why[DRAKE_WHY_MAX];
	if (job->suspend)
		return true;
	const struct job_migrations *mg = pass_job_migrations(pj);
	if (!mg)
		return true; /* a broken record: no move until it is fixed */
	if (mg->moving.active)
		x->w->any_moving = true;
	double frac;
	enum mig_class cls = class_of(x->r, job, &frac);
	double admitted = pj->created, waved = 0; /* waved: its first wave */
	int live[DRAKE_NROLES] = {0}, seen = 0, gated = 0, done = 0;
	size_t first = x->w->n;
	const enum job_rtype types[] = {JOB_PS, JOB_CHIEF, JOB_WORKER};
	for (size_t k = 0; k < 3; k++) {
		enum job_rtype t = types[k];
		for (int i = 0; i < job_replica_slots(job, t); i++) {
			char name[KUBE_NAME_MAX + 1];
			if (job_replica_name(job, t, i, name, sizeof(name)) != DRAKE_OK)
				continue;
			const struct kube_pod *pod =
			    kube_pods_get(kube_informer_cache(x->r->pods), job->ns, name);
			struct kube_meta m = {0};
			const char *phase = pod ? pod->phase : NULL;
			seen += pod != NULL;
			gated += pod && job_gang_gate_index(pod) >= 0;
			done += kube_pod_phase_done(phase);
			if (pod)
				kube_pod_meta(pod, &m);
			if (!pod || m.deleting || !m.node_name || !*m.node_name || !m.owner_uid ||
			    strcmp(m.owner_uid, job->uid) || kube_pod_phase_done(phase))
				continue;
			int node = drake_cluster_find(x->w->c, m.node_name);
			struct drake_res req;
			if (node < 0 || admit_pod_requests(pod, &x->w->c->names, &req, why,
			                                   sizeof(why)) != DRAKE_OK)
				continue;
			if (!grow_world(x->w)) {
				x->err = DRAKE_ENOMEM;
				return false;
			}
			size_t n = x->w->n++;
			/* the types walked are the gang's roles */
			enum drake_role role = (enum drake_role)job_role_of(t);
			live[role]++;
			double last;
			int count = job_migrations_count(mg, t, i, &last);
			struct drake_gang_id g; /* its wave: the second admission made it */
			double at =
			    drake_gang_id_parse(kube_pod_annotation(pod, DRAKE_ANNOTATION_GANG), &g,
			                        NULL, 0) == DRAKE_OK
			        ? (double)g.wave
			        : 0;
			if (at > 0 && (waved == 0 || at < waved))
				waved = at;
			struct replica_of *of = &x->w->of[n];
			snprintf(of->pod, sizeof(of->pod), "%s", name);
			snprintf(of->job, sizeof(of->job), "%s/%s", job->ns, job->name);
			of->tfjob = job;
			of->type = t;
			of->index = i;
			x->w->r[n] = (struct mig_replica){
			    .job = NULL, /* set once the arrays stop moving */
			    .pod = NULL,
			    .role = role,
			    .node = node,
			    .req = req,
			    .migrations = count,
			    .last_migrated = last,
			    .progress = frac,
			    .cls = cls,
			};
		}
	}
	int min[DRAKE_NROLES] = {0};
	min[DRAKE_ROLE_PS] = job->rs[JOB_PS].present ? job->rs[JOB_PS].replicas : 0;
	min[DRAKE_ROLE_CHIEF] = job->rs[JOB_CHIEF].present && job->rs[JOB_CHIEF].replicas > 0;
	min[DRAKE_ROLE_WORKER] = job->min_instances;
	for (size_t i = first; i < x->w->n; i++) {
		x->w->r[i].role_live = live[x->w->r[i].role];
		x->w->r[i].role_min = min[x->w->r[i].role];
		x->w->r[i].admitted = waved > 0 ? waved : admitted;
	}
	if (x->w->n == first && seen > 0 && gated == seen && done == 0 &&
	    (x->err = add_waiting(x->w, pj)) != DRAKE_OK)
		return false;
	return true;
}

static drake_err build_world(struct reconciler *r, const struct pass_world *pw, struct rec_world *w,
                             char *why, size_t len)
{
	memset(w, 0, sizeof(*w));
	w->c = &pw->c;
	struct add_ctx x = {r, w, DRAKE_OK};
	for (size_t i = 0; i < pw->n; i++)
		if (!add_job(&pw->jobs[i], &x))
			break;
	for (size_t i = 0; i < w->n; i++) {
		w->r[i].job = w->of[i].job;
		w->r[i].pod = w->of[i].pod;
	}
	if (w->nwof > 1)
		qsort(w->wof, w->nwof, sizeof(w->wof[0]), by_created);
	if (!x.err && w->nwof > 0 && !(w->wait = malloc(w->nwof * sizeof(*w->wait))))
		x.err = DRAKE_ENOMEM;
	for (size_t i = 0; !x.err && i < w->nwof; i++)
		w->wait[i] = (struct mig_waiting){w->wof[i].job, &w->wof[i].req};
	return x.err ? drake_errorf(x.err, why, len, "out of memory") : DRAKE_OK;
}

/* ---- starting and carrying out a move ---- */

/* Writes mg on the job and holds admission until the cache shows it. */
static drake_err write_record(struct reconciler *r, const struct job *job,
                              const struct job_migrations *mg, const char *what)
{
	char *value = job_migrations_value(mg);
	char *patch = value ? job_migrations_patch(value) : NULL;
	if (!patch) {
		free(value);
		free(patch);
		return DRAKE_ENOMEM;
	}
	struct pending_scale *p = realloc(r->scaling, (r->nscaling + 1) * sizeof(*p));
	if (!p) {
		free(value);
		free(patch);
		return DRAKE_ENOMEM;
	}
	r->scaling = p;
	p = &r->scaling[r->nscaling++];
	memset(p, 0, sizeof(*p));
	snprintf(p->ns, sizeof(p->ns), "%s", job->ns);
	snprintf(p->job, sizeof(p->job), "%s", job->name);
	p->annotation = JOB_ANNOTATION_MIGRATIONS;
	p->value = value;
	p->sent_ms = rec_now_ms(r);
	struct kube_resource res;
	rec_job_res(job, NULL, &res);
	rec_write(r, job, OP_MERGE, &res, patch, NULL, what);
	free(patch);
	return DRAKE_OK;
}

static drake_err start_move(struct reconciler *r, const struct rec_world *w,
                            const struct mig_decision *d, const char *by, char *id, size_t idlen,
                            char *why, size_t len)
{
	const struct replica_of *of = &w->of[d->replica];
	const struct job *job = of->tfjob;
	struct json_t *obj = rec_job_get(r, job->ns, job->name, NULL);
	const struct kube_pod *pod = kube_pods_get(kube_informer_cache(r->pods), job->ns, of->pod);
	struct job_migrations mg;
	struct kube_meta m;
	if (!obj || !pod || job_migrations_decode(obj, job, &mg, why, len) != DRAKE_OK)
		return drake_errorf(DRAKE_ESTATE, why, len, "the job or pod changed; ask again");
	kube_pod_meta(pod, &m);
	if (mg.moving.active) {
		char k[32];
		job_replica_key(mg.moving.type, mg.moving.index, k, sizeof(k));
		return drake_errorf(DRAKE_ESTATE, why, len, "a move of its %s is in flight", k);
	}
	enum job_rtype t = of->type;
	int index = of->index;
	double now = rec_now_s(r);
	if (job_migrations_bump(&mg, t, index, now) != DRAKE_OK)
		return drake_errorf(DRAKE_ESTATE, why, len, "the job's migration record is full");
	struct job_move *mv = &mg.moving;
	*mv = (struct job_move){.active = true, .type = t, .index = index, .at = now};
	snprintf(mv->from, sizeof(mv->from), "%s", w->c->nodes[d->from].name);
	snprintf(mv->to, sizeof(mv->to), "%s", w->c->nodes[d->to].name);
	snprintf(mv->uid, sizeof(mv->uid), "%s", m.uid);
	snprintf(mv->reason, sizeof(mv->reason), "%s", d->why);
	snprintf(mv->by, sizeof(mv->by), "%s", by);
	drake_err e = write_record(r, job, &mg, "record migration");
	if (e)
		return drake_errorf(e, why, len, "out of memory");
	char k[32], msg[1024];
	job_replica_key(t, index, k, sizeof(k));
	snprintf(msg, sizeof(msg), "moving %s from %s to %s (%s; by %s)", k, mv->from, mv->to,
	         d->why, by);
	rec_event(r, job, "Normal", "MigrationStarted", msg);
	log_info("migration_started", "job=%s/%s replica=%s from=%s to=%s by=%s why=\"%s\"",
	         job->ns, job->name, k, mv->from, mv->to, by, d->why);
	char key[KEY_MAX];
	snprintf(key, sizeof(key), "%s/%s", job->ns, job->name);
	remember(r, key, k, mv->from, mv->to, by, d->why);
	if (id)
		snprintf(id, idlen, "%s/%s@%.0f", job->ns, of->pod, now);
	return DRAKE_OK;
}

/* Clears the move of job, with an Event saying how it ended. */
static void end_move(struct reconciler *r, const struct job *job, struct job_migrations *mg,
                     const char *reason, const char *type, const char *msg)
{
	char k[32];
	job_replica_key(mg->moving.type, mg->moving.index, k, sizeof(k));
	char key[KEY_MAX];
	snprintf(key, sizeof(key), "%s/%s", job->ns, job->name);
	remember(r, key, k, mg->moving.from, mg->moving.to, mg->moving.by, msg);
	mg->moving.active = false;
	if (write_record(r, job, mg, "clear migration") != DRAKE_OK)
		return;
	rec_event(r, job, type, reason, msg);
	log_info("migration_ended", "job=%s/%s replica=%s how=%s msg=\"%s\"", job->ns, job->name, k,
	         reason, msg);
}

/* One job's move in flight, carried one step further. */
static void carry(struct reconciler *r, const struct pass_job *pj)
{
	const struct job_migrations *rec = pass_job_migrations(pj);
	if (!rec || !rec->moving.active)
		return;
	const struct job *job = &pj->job;
	struct job_migrations mg = *rec; /* end_move writes it back changed */
	const struct job_move *mv = &mg.moving;
	char name[KUBE_NAME_MAX + 1], k[32], msg[1024];
	job_replica_key(mv->type, mv->index, k, sizeof(k));
	if (job_replica_name(job, mv->type, mv->index, name, sizeof(name)) != DRAKE_OK)
		return;
	const struct kube_pod *pod = kube_pods_get(kube_informer_cache(r->pods), job->ns, name);
	struct kube_meta m = {0};
	bool have = pod != NULL;
	if (pod)
		kube_pod_meta(pod, &m);
	if (have && !strcmp(m.uid, mv->uid)) {
		if (!m.deleting) {
			struct kube_resource res;
			rec_pod_res(job, name, &res);
			rec_write(r, job, OP_DELETE, &res, NULL, mv->uid, "migrate");
		}
		return;
	}
	if (have && m.node_name && *m.node_name && !m.deleting) {
		snprintf(msg, sizeof(msg), "%s moved from %s to %s%s%s", k, mv->from, m.node_name,
		         strcmp(m.node_name, mv->to) ? " (planned: " : "",
		         strcmp(m.node_name, mv->to) ? mv->to : "");
		if (strcmp(m.node_name, mv->to))
			strncat(msg, ")", sizeof(msg) - strlen(msg) - 1);
		end_move(r, job, &mg, "Migrated", "Normal", msg);
		return;
	}
	if (rec_now_s(r) - mv->at > MOVE_TIMEOUT_S) {
		snprintf(msg, sizeof(msg), "%s: gave up moving it from %s to %s after %.0f s", k,
		         mv->from, mv->to, MOVE_TIMEOUT_S);
		end_move(r, job, &mg, "MigrationAbandoned", "Warning", msg);
	}
}

void rec_migrate_pass(struct reconciler *r, const struct pass_world *pw)
{
	if (!r->opts.gang)
		return;
	progress_gc(r);
	for (size_t i = 0; i < pw->n; i++)
		carry(r, &pw->jobs[i]);
	if (!r->opts.migrate)
		return;
	struct rec_world w;
	char why[DRAKE_WHY_MAX];
	if (build_world(r, pw, &w, why, sizeof(why)) != DRAKE_OK) {
		world_release(&w);
		return;
	}
	const struct mig_world in = {.c = w.c,
	                             .r = w.r,
	                             .nr = w.n,
	                             .wait = w.wait,
	                             .nwait = w.nwof,
	                             .moving = w.any_moving,
	                             .scaling = r->nscaling > 0};
	struct mig_opts o = r->mig;
	o.speed = r->scale.speed; /* the model the scaling step runs */
	struct mig_step_out out;
	if (mig_step(&in, rec_now_s(r), &o, &out) == DRAKE_OK && out.held == MIG_MOVED &&
	    start_move(r, &w, &out.move, "policy", NULL, 0, why, sizeof(why)) != DRAKE_OK)
		log_warn("migration_not_started", "why=\"%s\"", why);
	world_release(&w);
}

static void worlds_release(struct rec_world *w, struct pass_world *pw)
{
	world_release(w);
	pass_world_release(pw);
}

drake_err reconciler_migrate(struct reconciler *r, const char *ns, const char *pod_name,
                             const char *away, const char *onto, bool pause_job, const char *user,
                             char *id, size_t idlen, char *why, size_t len)
{
	if (!r->opts.gang)
		return drake_errorf(DRAKE_ESTATE, why, len, "migration needs --gang");
	for (size_t k = 0; k < r->nscaling; k++) /* a record on its way: decide on it */
		if (!strcmp(r->scaling[k].ns, ns) && r->scaling[k].annotation &&
		    !strcmp(r->scaling[k].annotation, JOB_ANNOTATION_MIGRATIONS))
			return drake_errorf(
			    DRAKE_ESTATE, why, len,
			    "a migration in %s was just recorded and is not in drake's "
			    "cache yet; ask again in a moment",
			    ns);
	struct pass_world pw;
	struct rec_world w = {0};
	drake_err e = rec_pass_world(r, &pw, why, len);
	if (!e)
		e = build_world(r, &pw, &w, why, len);
	if (e) {
		worlds_release(&w, &pw);
		return e == DRAKE_ENOMEM ? e : DRAKE_ESTATE; /* why says what */
	}
	size_t i = 0;
	char key[KEY_MAX];
	while (i < w.n && !(strcmp(w.of[i].pod, pod_name) == 0 && !strcmp(w.of[i].tfjob->ns, ns)))
		i++;
	if (i == w.n) {
		worlds_release(&w, &pw);
		return drake_errorf(DRAKE_EINVAL, why, len,
		                    "%s/%s is no bound replica of a running job drake manages", ns,
		                    pod_name);
	}
	snprintf(key, sizeof(key), "%s", w.of[i].job);
	int away_i = away && *away ? drake_cluster_find(w.c, away) : -1;
	int onto_i = onto && *onto ? drake_cluster_find(w.c, onto) : -1;
	if ((away && *away && away_i < 0) || (onto && *onto && onto_i < 0)) {
		worlds_release(&w, &pw);
		return drake_errorf(DRAKE_ESTATE, why, len, "no node %s in drake's snapshot",
		                    away_i < 0 && away && *away ? away : onto);
	}
	struct mig_decision d;
	e = mig_explicit(w.c, w.r, w.n, i, away_i, onto_i, pause_job, rec_now_s(r), &r->mig, &d,
	                 why, len);
	if (!e)
		e = start_move(r, &w, &d, user && *user ? user : "request", id, idlen, why, len);
	if (e == DRAKE_ESTATE) {
		char replica[32];
		job_replica_key(w.of[i].type, w.of[i].index, replica, sizeof(replica));
		remember(r, key, replica, w.c->nodes[w.r[i].node].name, onto ? onto : "",
		         user && *user ? user : "request", why);
	}
	worlds_release(&w, &pw);
	return e;
}

char *reconciler_migrations_json(const struct reconciler *r)
{
	size_t n = r ? r->nmoves : 0;
	struct job_move_note *v = calloc(n + 1, sizeof(*v));
	if (!v)
		return NULL;
	/* newest first */
	for (size_t i = 0; i < n; i++)
		v[i] = r->moves[(r->moves_head + RECONCILER_MOVES_KEPT - 1 - i) %
		                RECONCILER_MOVES_KEPT];
	char *out = job_moves_json(v, n);
	free(v);
	return out;
}
