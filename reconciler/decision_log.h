/*
 * decision_log.h - `drake serve --decision-log FILE`: each admission
 * round's inputs and outputs, one JSON line per round (round_codec.h),
 * appended to FILE. Its size is bounded: once a line would take FILE past
 * DECISION_LOG_MAX_BYTES, FILE is renamed FILE.1 (replacing the previous
 * one) and a new FILE is started, so the log never holds more than twice
 * the bound on disk.
 *
 * Ownership: decision_log_open() fills a log decision_log_close() releases.
 */
#ifndef DRAKE_RECONCILER_DECISION_LOG_H
#define DRAKE_RECONCILER_DECISION_LOG_H

#include <stddef.h>
#include <stdio.h>

#include "common/err.h"

#define DECISION_LOG_MAX_BYTES (64L * 1024 * 1024)

struct decision_log {
	char path[4096];
	FILE *f;
	long size; /* bytes in the current file */
	long max;  /* rotate past this; DECISION_LOG_MAX_BYTES unless a test sets it */
	unsigned long written, failed; /* lines */
};

/* Opens (appends to) path; EIO with msg naming the path and the reason. */
drake_err decision_log_open(struct decision_log *l, const char *path, char *msg,
                            size_t msglen) DRAKE_MUST_CHECK;
/* Appends line and a newline, rotating first when it would not fit. A
 * line that cannot be written is counted in failed and dropped. */
void decision_log_write(struct decision_log *l, const char *line);
void decision_log_close(struct decision_log *l);

#endif
