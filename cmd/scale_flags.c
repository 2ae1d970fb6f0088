/*
 * scale_flags.c - the scaling flags shared by drake serve and drake sim.
 */
#include "cmd/scale_flags.h"

void scale_flags(struct scale_flag_vals *v, struct flag *out)
{
	drake_scale_defaults(&v->opts);
	struct drake_scale_opts *o = &v->opts;
	const struct flag f[SCALE_FLAGS_N] = {
	    {"starve-after", "DRAKE_STARVE_AFTER", FLAG_DURATION, &o->starve_after, "30s",
	     "a job waiting this long may take workers from running jobs to start"},
	    {"start-narrow", "DRAKE_START_NARROW", FLAG_BOOL, &o->start_narrow, "true",
	     "a new job starts with fewer workers than it asks for (down to its min) at once; "
	     "false: it waits for room for the workers it asks for until it has waited "
	     "--starve-after"},
	    {"idle-after", "DRAKE_IDLE_AFTER", FLAG_DURATION, &o->idle_after, "60s",
	     "running jobs grow past the workers they ask for only after this long without an "
	     "admission or scaling (below it, at once)"},
	    {"victim-order", "DRAKE_VICTIM_ORDER", FLAG_STRING, &v->victim, "most-left",
	     "jobs give workers in this order: newest, oldest, least-progress, most-service "
	     "(most attained GPU-seconds first), most-left (most GPU-seconds expected left "
	     "first: attained service * (1 - progress) / progress, progress at least 0.1; "
	     "attained service for a job that reports none)"},
	    {"queue-order", "DRAKE_QUEUE_ORDER", FLAG_STRING, &v->queue, "pack",
	     "waiting jobs are tried in this order: fifo; narrow (fewest GPUs asked first); or "
	     "pack (first the set of the first 64 whose GPUs asked fill the free GPUs best, most "
	     "jobs among equal fills, then the rest FIFO); with narrow and pack a job waiting "
	     "--age-after or longer goes ahead of them"},
	    {"service-threshold", "DRAKE_SERVICE_THRESHOLD", FLAG_DOUBLE, &o->service_threshold,
	     "14400",
	     "GPU-seconds a running job has run past which it gives workers down to its minimum "
	     "to a new job that cannot start at the size it asks (below it: only workers lent "
	     "beyond its size); 0 never"},
	    {"age-after", "DRAKE_AGE_AFTER", FLAG_DURATION, &o->age_after, "10m",
	     "--queue-order narrow or pack: a job waiting this long goes ahead of the others (FIFO "
	     "among such jobs)"},
	    {"lonely-first", "DRAKE_LONELY_FIRST", FLAG_BOOL, &o->shrink.lonely_first, "true",
	     "workers off their PS's node (worker 0's in a job without a PS) are given first"},
	    {"shrink-tries", "DRAKE_SHRINK_TRIES", FLAG_INT, &o->shrink_tries, "4",
	     "starving jobs that may take workers per decision"},
	    {"scaling-loss", "DRAKE_SCALING_LOSS", FLAG_DOUBLE, &o->speed.scaling_loss, "0.05",
	     "speed model: throughput of w workers = w / (1 + this * (w - 1))"},
	    {"locality-penalty", "DRAKE_LOCALITY_PENALTY", FLAG_DOUBLE, &o->speed.locality_penalty,
	     "0.15",
	     "speed model: throughput divided by 1 + this per node spanned beyond the fewest"},
	    {"rescale-pause", "DRAKE_RESCALE_PAUSE", FLAG_DURATION, &o->speed.rescale_pause, "10s",
	     "speed model: progress a job loses on a change of its worker count when its kind "
	     "names no cost of its own (drake serve: every job has one, --resize-cost; drake sim: "
	     "a "
	     "job the trace or --kind-mix gives no kind), and on a worker's move"},
	};
	for (size_t i = 0; i < SCALE_FLAGS_N; i++)
		out[i] = f[i];
}

drake_err scale_flags_finish(struct scale_flag_vals *v, char *msg, size_t len)
{
	struct drake_scale_opts *o = &v->opts;
	if (drake_victim_order_parse(v->victim, &o->shrink.order))
		return drake_errorf(DRAKE_EINVAL, msg, len,
		                    "--victim-order must be newest, oldest, least-progress, "
		                    "most-service or most-left");
	if (drake_queue_order_parse(v->queue, &o->queue))
		return drake_errorf(DRAKE_EINVAL, msg, len,
		                    "--queue-order must be fifo, narrow or pack");
	if (o->starve_after < 0 || o->idle_after < 0 || o->age_after < 0 || o->shrink_tries < 0 ||
	    o->speed.scaling_loss < 0 || o->speed.locality_penalty < 0 ||
	    o->speed.rescale_pause < 0)
		return drake_errorf(
		    DRAKE_EINVAL, msg, len,
		    "--starve-after, --idle-after, --age-after, --shrink-tries, --scaling-loss, "
		    "--locality-penalty and --rescale-pause cannot be negative");
	return DRAKE_OK;
}
