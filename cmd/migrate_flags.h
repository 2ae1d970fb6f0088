/*
 * migrate_flags.h - the flags of migrate/'s thresholds, one table for
 * `drake serve` and `drake sim`, so both take the same names with the same
 * defaults and ranges.
 */
#ifndef DRAKE_CMD_MIGRATE_FLAGS_H
#define DRAKE_CMD_MIGRATE_FLAGS_H

#include <stddef.h>

#include "common/err.h"
#include "common/flags.h"
#include "migrate/migrate.h"
#include "migrate/progress.h"

#define MIGRATE_FLAGS_N 7

struct migrate_flag_vals {
	struct mig_opts opts;
	struct mig_progress_opts progress;
};

/* Fills out[0..MIGRATE_FLAGS_N) with flags writing into v (set to defaults). */
void migrate_flags(struct migrate_flag_vals *v, struct flag *out);

/* Checks ranges; EINVAL with msg. */
drake_err migrate_flags_finish(const struct migrate_flag_vals *v, char *msg,
                               size_t len) DRAKE_MUST_CHECK;

#endif
