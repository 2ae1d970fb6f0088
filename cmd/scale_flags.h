/*
 * scale_flags.h - the flags of gang/scale.h's thresholds and speed model,
 * one table for `drake serve` and `drake sim`, so both take the same names
 * with the same defaults and ranges.
 */
#ifndef DRAKE_CMD_SCALE_FLAGS_H
#define DRAKE_CMD_SCALE_FLAGS_H

#include <stddef.h>

#include "common/err.h"
#include "common/flags.h"
#include "gang/scale.h"

#define SCALE_FLAGS_N 12

/* What the flags parse into before scale_flags_finish checks it. */
struct scale_flag_vals {
	struct drake_scale_opts opts;
	const char *victim;
	const char *queue;
};

/* Fills out[0..SCALE_FLAGS_N) with flags writing into v. */
void scale_flags(struct scale_flag_vals *v, struct flag *out);

/* Checks ranges and parses the victim order into v->opts; EINVAL with msg. */
drake_err scale_flags_finish(struct scale_flag_vals *v, char *msg, size_t len) DRAKE_MUST_CHECK;

#endif
