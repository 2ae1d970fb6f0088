/*
 * migrate_flags.c - the migration flags shared by drake serve and drake sim.
 */
#include "cmd/migrate_flags.h"

void migrate_flags(struct migrate_flag_vals *v, struct flag *out)
{
	mig_defaults(&v->opts);
	mig_progress_defaults(&v->progress);
	const struct flag f[MIGRATE_FLAGS_N] = {
	    {"overload-stddevs", "DRAKE_OVERLOAD_STDDEVS", FLAG_DOUBLE, &v->opts.k, "1",
	     "migration: a node whose load exceeds the mean by more than this many standard "
	     "deviations sheds a worker"},
	    {"migrate-cooldown", "DRAKE_MIGRATE_COOLDOWN", FLAG_DURATION, &v->opts.cooldown, "30s",
	     "migration: a replica moved is not moved again for this long"},
	    {"migrate-cap", "DRAKE_MIGRATE_CAP", FLAG_INT, &v->opts.cap, "3",
	     "migration: most moves of one replica"},
	    {"migrate-tail", "DRAKE_MIGRATE_TAIL", FLAG_DOUBLE, &v->opts.tail, "0.05",
	     "migration: nothing moves in this last fraction of a job's steps"},
	    {"migrate-placement", "DRAKE_MIGRATE_PLACEMENT", FLAG_BOOL, &v->opts.better_placement,
	     "true",
	     "migration: a slow job's worker moves onto another of its nodes when that lets the "
	     "first waiting job start (SpeCon)"},
	    {"progress-alpha", "DRAKE_PROGRESS_ALPHA", FLAG_DOUBLE, &v->progress.alpha, "0.1",
	     "progress: a rate below this fraction of the fitted expectation counts as slow"},
	    {"progress-window", "DRAKE_PROGRESS_WINDOW", FLAG_INT, &v->progress.window, "10",
	     "progress: slow samples in a row that make a job slowing"},
	};
	for (size_t i = 0; i < MIGRATE_FLAGS_N; i++)
		out[i] = f[i];
}

drake_err migrate_flags_finish(const struct migrate_flag_vals *v, char *msg, size_t len)
{
	drake_err e = mig_opts_check(&v->opts, msg, len);
	if (!e)
		e = mig_progress_opts_check(&v->progress, msg, len);
	return e;
}
