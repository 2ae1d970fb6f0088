/*
 * score.c - prioritize for pods that are not gang members drake planned: the
 * view's pod and nodes, the learnt typical shapes, place_priorities.
 */
#include "extender/score.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "extender/codec.h"
#include "place/score.h"

struct ext_scorer *ext_scorer_new(ext_place_fn view, void *arg, size_t window, char *msg,
                                  size_t msglen)
{
	struct ext_scorer *sc = calloc(1, sizeof(*sc));
	if (!sc) {
		snprintf(msg, msglen, "out of memory");
		return NULL;
	}
	if (place_learner_init(&sc->learner, window, msg, msglen) != DRAKE_OK) {
		free(sc);
		return NULL;
	}
	sc->view = view;
	sc->arg = arg;
	return sc;
}

void ext_scorer_free(struct ext_scorer *sc)
{
	if (!sc)
		return;
	place_learner_release(&sc->learner);
	free(sc);
}

bool ext_scorer_score(struct ext_scorer *sc, const char *ns, const char *name, const char *uid,
                      const char *const *nodes, size_t n, int64_t *scores, char *why, size_t whylen)
{
	memset(scores, 0, n * sizeof(*scores));
	if (!n)
		return true;
	struct place_node *pn = calloc(n, sizeof(*pn));
	bool *known = calloc(n, sizeof(*known));
	struct place_task task;
	bool ok = false, counted;
	if (!pn || !known)
		snprintf(why, whylen, "out of memory");
	else if (sc->view(sc->arg, ns, name, nodes, n, &sc->models, &task, pn, known, why,
	                  whylen) != DRAKE_OK)
		; /* why is filled */
	else if (place_learner_observe(&sc->learner, uid, &task, &counted) != DRAKE_OK)
		snprintf(why, whylen, "out of memory learning the pod's shape");
	else
		ok = true;
	if (ok)
		place_priorities(pn, known, n, &task, place_learner_typical(&sc->learner),
		                 EXT_MAX_SCORE, scores);
	free(pn);
	free(known);
	return ok;
}
