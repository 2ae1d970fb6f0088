/*
 * decision_log.h - `drake serve --decision-log FILE`: each admission
 * round's inputs and outputs, one JSON line per round (round_codec.h),
 * appended to FILE. Its size is bounded (--decision-log-max, 64 MiB by
 * default): once a line would take FILE past the bound, FILE is renamed
 * FILE.1 (replacing the previous one) and a new FILE is started, so the log
 * never holds more than twice the bound on disk. A bound of 0 keeps every
 * round in FILE, for a benchmark that replays a whole run.
 *
 * Ownership: decision_log_open() fills a log decision_log_close() releases.
 */
#ifndef DRAKE_RECONCILER_DECISION_LOG_H
#define DRAKE_RECONCILER_DECISION_LOG_H

#include <stddef.h>
#include <stdio.h>

#include "common/err.h"

struct decision_log {
	char path[4096];
	FILE *f;
	long size;                     /* bytes in the current file */
	long max;                      /* rotate past this many bytes; 0: never */
	unsigned long written, failed; /* lines */
};

/* Opens (appends to) path, rotating past max bytes (0: never); EIO with
 * msg naming the path and the reason. */
drake_err decision_log_open(struct decision_log *l, const char *path, long max, char *msg,
                            size_t msglen) DRAKE_MUST_CHECK;
/* Appends line and a newline, rotating first when it would not fit. A
 * line that cannot be written is counted in failed and dropped. */
void decision_log_write(struct decision_log *l, const char *line);
void decision_log_close(struct decision_log *l);

#endif
