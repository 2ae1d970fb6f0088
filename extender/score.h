/*
 * score.h - the prioritize verb's answer for a pod that is not a gang
 * member drake planned (plain pods in simple mode, KubeShare shares that
 * are no TFJob's; a planned member keeps its planned node, member.h, and
 * filter leaves it no other): drake's fragmentation score
 * (place/score.h) over the candidates, with the typical task shapes learnt
 * from the pods scored so far (place/learn.h).
 *
 * An adapter: the view function (the controller's caches, translated by
 * reconciler/place_view.h) says what the pod and the nodes are, place/
 * decides. When the view cannot be had (caches not synced, the pod not in
 * the cache yet) every node gets 0 and kube-scheduler's own scores decide.
 *
 * Ownership: a scorer owns its learner and GPU model table; the view's
 * argument is borrowed and must outlive it. internal to extender/.
 */
#ifndef DRAKE_EXTENDER_SCORE_H
#define DRAKE_EXTENDER_SCORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "extender/server.h"
#include "place/learn.h"

struct ext_scorer {
	ext_place_fn view;
	void *arg;
	struct place_models models; /* GPU models, named as nodes are read */
	struct place_learner learner;
};

/* A scorer learning from the last window pods; NULL with msg on a bad
 * window or out of memory. */
struct ext_scorer *ext_scorer_new(ext_place_fn view, void *arg, size_t window, char *msg,
                                  size_t msglen);
void ext_scorer_free(struct ext_scorer *sc);

/*
 * scores[0..n) for pod over nodes[0..n): 0..EXT_MAX_SCORE, the best node
 * EXT_MAX_SCORE. The pod's shape is learnt first (once per UID while it is
 * in the window). False with why when the view failed: scores are all 0.
 * DRAKE_ENOMEM-like failures are reported the same way.
 */
bool ext_scorer_score(struct ext_scorer *sc, const char *ns, const char *name, const char *uid,
                      const char *const *nodes, size_t n, int64_t *scores, char *why,
                      size_t whylen);

#endif
