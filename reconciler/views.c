/*
 * views.c - what the extender asks of the controller: a new node for a
 * gang member whose planned node kube-scheduler no longer offers (on the
 * last admission round's snapshot, kept by waves.c), the
 * candidates' placement state for prioritize (place_view.h), and what
 * each waiting gang waits for (GET /v1/jobs).
 */
#include "reconciler/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/informer.h"
#include "reconciler/pass_world.h"
#include "reconciler/place_view.h"

bool reconciler_replan(const struct reconciler *r, const char *ns, const char *pod,
                       const char *const *candidates, size_t n, char *node, size_t nodelen,
                       char *why, size_t whylen)
{
	if (!r || !r->nodes || !kube_informer_synced(r->nodes) || !kube_informer_synced(r->pods)) {
		snprintf(why, whylen, "the controller's caches are not synced");
		return false;
	}
	const struct kube_cache *pods = kube_informer_cache(r->pods);
	if (r->world) { /* the last round's snapshot: see waves.c */
		drake_err e = admit_replan_on(&r->world->c, pods, ns, pod, candidates, n, node,
		                              nodelen, why, whylen);
		if (e == DRAKE_OK)
			return true;
		if (e != DRAKE_ENOTFOUND) {
			size_t len = strlen(why);
			snprintf(why + len, whylen - len, " (snapshot of round %lu, %.0f s old)",
			         r->world->gen, rec_now_s(r) - r->world->built_s);
			return false;
		}
	}
	return admit_replan(kube_informer_cache(r->nodes), pods, ns, pod, candidates, n, node,
	                    nodelen, why, whylen) == DRAKE_OK;
}

drake_err reconciler_place_view(struct reconciler *r, const char *ns, const char *pod,
                                const char *const *candidates, size_t n,
                                struct place_models *models, struct place_task *task,
                                struct place_node *nodes, bool *known, char *why, size_t whylen)
{
	if (!r || !r->nodes) {
		snprintf(why, whylen, "no node cache (drake runs with --gang=false)");
		return DRAKE_EINVAL;
	}
	if (!kube_informer_synced(r->nodes) || !kube_informer_synced(r->pods)) {
		snprintf(why, whylen, "the controller's caches are not synced");
		return DRAKE_EINVAL;
	}
	return place_view_build_memo(kube_informer_cache(r->nodes), kube_informer_cache(r->pods),
	                             &r->place_memo, ns, pod, candidates, n, models, task, nodes,
	                             known, why, whylen);
}

char *reconciler_jobs_json(const struct reconciler *r)
{
	size_t n = r ? r->nwaits : 0;
	struct admit_note *notes = calloc(n ? n : 1, sizeof(*notes));
	if (!notes)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (!strncmp(r->waits[i].key, "scale:", 6))
			continue; /* an ignored scale record, not a waiting job */
		notes[k].key = r->waits[i].key;
		notes[k].status =
		    drake_admit_status_name((enum drake_admit_status)r->waits[i].status);
		notes[k].why = r->waits[i].why;
		char ns[64] = "", name[KUBE_NAME_MAX + 1] = "";
		const struct job_kind *kind = NULL;
		if (sscanf(r->waits[i].key, "%63[^/]/%253s", ns, name) == 2 &&
		    rec_job_get(r, ns, name, &kind))
			notes[k].kind = kind->kind;
		k++;
	}
	/* the running jobs with their progress as reported by now: the class
	 * and "slow" both from the latest report, not "slow" from the last
	 * round (a report that changes the class starts no round, so the two
	 * would disagree until something else did) */
	size_t nr = r ? r->nrunning : 0;
	struct admit_running *run = nr ? malloc(nr * sizeof(*run)) : NULL;
	if (nr && !run) {
		free(notes);
		return NULL;
	}
	for (size_t i = 0; i < nr; i++) {
		run[i] = r->running[i];
		if (!rec_job_progress(r, run[i].key, run[i].uid, &run[i].progress, &run[i].slow,
		                      &run[i].step, &run[i].value))
			run[i].progress = NULL;
	}
	char *out = admit_waiting_json(notes, k, r ? &r->skipped : NULL, run, nr);
	free(run);
	free(notes);
	return out;
}
