/*
 * step.c - one migration round (the rules and their order are in step.h).
 */
#include "migrate/step.h"

#include <stdlib.h>

const char *mig_held_name(enum mig_held h)
{
	switch (h) {
	case MIG_MOVED: return "moved";
	case MIG_HELD_SCALING: return "scaling";
	case MIG_HELD_MOVING: return "moving";
	case MIG_HELD_QUIET: return "quiet";
	case MIG_HELD_NONE: return "none";
	}
	return "?";
}

static bool any_overloaded(const struct drake_cluster *c, double k)
{
	struct mig_spread sp;
	mig_spread(c, &sp);
	for (size_t i = 0; i < c->n; i++)
		if (mig_overloaded(c, i, &sp, k))
			return true;
	return false;
}

/* A worker of a slow job, which may yield to a waiting one. */
static bool any_slow_worker(const struct mig_replica *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (r[i].role == DRAKE_ROLE_WORKER && mig_class_slow(r[i].cls))
			return true;
	return false;
}

drake_err mig_step(const struct mig_world *w, double now, const struct mig_opts *o,
                   struct mig_step_out *out)
{
	struct mig_opts def;
	if (!o) {
		mig_defaults(&def);
		o = &def;
	}
	*out = (struct mig_step_out){.held = MIG_HELD_NONE};
	if (w->scaling) {
		out->held = MIG_HELD_SCALING;
		return DRAKE_OK;
	}
	if (w->moving) {
		out->held = MIG_HELD_MOVING;
		return DRAKE_OK;
	}
	bool yield = w->nwait > 0 && o->better_placement && any_slow_worker(w->r, w->nr);
	if (!yield && !any_overloaded(w->c, o->k)) {
		out->held = MIG_HELD_QUIET;
		return DRAKE_OK;
	}
	struct mig_decision *d = NULL;
	size_t n = 0;
	drake_err err = mig_decide_all(w->c, w->r, w->nr, yield ? w->wait : NULL,
	                               yield ? w->nwait : 0, now, o, &d, &n);
	if (!err && n > 0) {
		out->held = MIG_MOVED;
		out->move = d[0];
	}
	free(d);
	return err;
}
