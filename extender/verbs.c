/*
 * verbs.c - filter, prioritize, preempt and bind.
 *
 * Pods that carry admission's plan (gang/protocol.h) are pinned to their
 * planned node (member.h); a node whose victims include a running job's PS or
 * chief, or would take its workers below their minimum, is dropped from the
 * preempt answer (preempt_guard.h). Every other pod passes through filter
 * (all candidates) and preempt (victims as given), and is scored by
 * drake's fragmentation score when scoring is on (score.h), else 0. Bind
 * lives in bind.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "extender/call.h"
#include "extender/member.h"
#include "extender/preempt_guard.h"
#include "extender/score.h"
#include "kube/informer.h"

static int decode_status(drake_err e)
{
	return e == DRAKE_ENOMEM ? 500 : 400;
}

/* Decodes ExtenderArgs and the pod's gang plan; on failure answers the call
 * and returns false. The caller releases args either way. */
static bool decode_member(struct ext_call *call, struct ext_args *args, struct ext_member *m)
{
	char msg[512];
	*m = (struct ext_member){0};
	drake_err e =
	    ext_args_decode(call->body, call->body_len, call_limits(call), args, msg, sizeof(msg));
	if (!e)
		e = ext_member_of(&args->pod, m, msg, sizeof(msg));
	if (e)
		call_reply_error(call, decode_status(e), "%s", msg);
	return e == DRAKE_OK;
}

/*
 * A gang member whose planned node kube-scheduler no longer offers (the
 * node was cordoned or tainted, or a pod drake did not count took it) is
 * re-planned among the candidates when the controller finds one with room
 * that takes no other gang's reservation; m then names that node. The bind
 * barrier keys on the gang, not the node, so the wave completes there.
 */
static void replan_if_gone(struct ext_call *call, const struct ext_args *args, struct ext_member *m,
                           char *node, size_t len)
{
	for (size_t i = 0; i < args->n_nodes; i++)
		if (!strcmp(args->node_names[i], m->planned_node))
			return;
	char why[256], q[300];
	if (!args->n_nodes ||
	    !call_replan(call, args->pod.ns, args->pod.name, (const char *const *)args->node_names,
	                 args->n_nodes, node, len, why, sizeof(why))) {
		log_info("gang_replan_failed", "pod=%s/%s planned=%s gang=%s why=%s", args->pod.ns,
		         args->pod.name, m->planned_node, m->gang,
		         drake_log_quote(why, q, sizeof(q)));
		return;
	}
	log_info("gang_replanned", "pod=%s/%s from=%s to=%s gang=%s", args->pod.ns, args->pod.name,
	         m->planned_node, node, m->gang);
	m->planned_node = node;
}

void verb_filter(struct ext_call *call)
{
	struct ext_args args;
	struct ext_member m;
	if (!decode_member(call, &args, &m)) {
		ext_args_release(&args);
		return;
	}
	size_t n = args.n_nodes ? args.n_nodes : 1;
	enum ext_verdict *verdicts = calloc(n, sizeof(*verdicts));
	const char **reasons = calloc(n, sizeof(*reasons));
	char why[512];
	if (!verdicts || !reasons) {
		call_reply_error(call, 500, "out of memory");
	} else {
		char moved[256];
		if (m.planned_node) {
			replan_if_gone(call, &args, &m, moved, sizeof(moved));
			ext_member_filter(&m, &args.pod, &args, verdicts, reasons, why,
			                  sizeof(why));
		}
		struct ext_filter_result res = {.verdicts = verdicts, .reasons = reasons};
		call_reply_json(call, 200, ext_filter_encode(&args, &res), false);
	}
	free(verdicts);
	free(reasons);
	ext_args_release(&args);
}

void verb_prioritize(struct ext_call *call)
{
	struct ext_args args;
	struct ext_member m;
	if (!decode_member(call, &args, &m)) {
		ext_args_release(&args);
		return;
	}
	struct ext_scorer *sc = call_scorer(call);
	int64_t *scores = NULL;
	if ((m.planned_node || sc) &&
	    !(scores = calloc(args.n_nodes ? args.n_nodes : 1, sizeof(*scores)))) {
		call_reply_error(call, 500, "out of memory");
		ext_args_release(&args);
		return;
	}
	char why[256], q[300];
	if (m.planned_node)
		ext_member_prioritize(&m, &args, scores);
	else if (sc && !ext_scorer_score(sc, args.pod.ns, args.pod.name, args.pod.uid,
	                                 (const char *const *)args.node_names, args.n_nodes, scores,
	                                 why, sizeof(why)))
		log_debug("prioritize_unscored", "pod=%s/%s why=%s", args.pod.ns, args.pod.name,
		          drake_log_quote(why, q, sizeof(q)));
	call_reply_json(call, 200, ext_prioritize_encode(&args, scores), false);
	free(scores);
	ext_args_release(&args);
}

void verb_preempt(struct ext_call *call)
{
	struct ext_preempt_args args;
	char msg[512];
	drake_err e = ext_preempt_decode(call->body, call->body_len, call_limits(call), &args, msg,
	                                 sizeof(msg));
	if (e) {
		ext_preempt_release(&args);
		call_reply_error(call, decode_status(e), "%s", msg);
		return;
	}
	bool *keep = calloc(args.n_nodes ? args.n_nodes : 1, sizeof(*keep));
	if (!keep) {
		ext_preempt_release(&args);
		call_reply_error(call, 500, "out of memory");
		return;
	}
	/* A node whose victims would break a running gang is dropped (a node
	 * left out of NodeNameToMetaVictims is one preemption may not use):
	 * the scheduler then looks for another node, or none. */
	struct kube_informer *pods = call_pods(call);
	/* A stale cache may not hold a PS placed since: offer no victims. */
	const char *stale =
	    pods && !kube_informer_synced(pods) ? kube_informer_unsynced_why(pods) : NULL;
	for (size_t i = 0; i < args.n_nodes; i++) {
		char why[256];
		if (stale) {
			snprintf(why, sizeof(why), "drake's pod cache is not synced: %s", stale);
			keep[i] = false;
		} else {
			keep[i] = preempt_guard_allows(pods ? kube_informer_cache(pods) : NULL,
			                               args.nodes[i].node, args.nodes[i].uids,
			                               args.nodes[i].n_uids, why, sizeof(why));
		}
		char q[300];
		if (!keep[i])
			log_info("preempt_refused", "pod=%s/%s node=%s reason=%s", args.pod.ns,
			         args.pod.name, args.nodes[i].node,
			         drake_log_quote(why, q, sizeof(q)));
	}
	call_reply_json(call, 200, ext_preempt_encode(&args, keep), false);
	free(keep);
	ext_preempt_release(&args);
}
