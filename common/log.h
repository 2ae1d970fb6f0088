/*
 * log.h - structured, levelled logging: one line per event on stderr,
 * "time=... level=... msg=... key=value ...". Values that contain spaces,
 * quotes or '=' should be passed through drake_log_quote().
 */
#ifndef DRAKE_COMMON_LOG_H
#define DRAKE_COMMON_LOG_H

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"

enum drake_log_level {
	DRAKE_LOG_DEBUG,
	DRAKE_LOG_INFO,
	DRAKE_LOG_WARN,
	DRAKE_LOG_ERROR,
};

void drake_log_set_level(enum drake_log_level level);
enum drake_log_level drake_log_get_level(void);
/* Accepts debug, info, warn, error. */
drake_err drake_log_parse_level(const char *s, enum drake_log_level *out) DRAKE_MUST_CHECK;

/* msg is a short event name (no spaces); fmt adds key=value pairs. */
void drake_log(enum drake_log_level level, const char *msg, const char *fmt, ...)
    DRAKE_PRINTF(3, 4);

/* Writes s into buf as a logfmt value: bare when safe, else double-quoted
 * with \" and \\ escaped and control characters dropped. Returns buf. */
const char *drake_log_quote(const char *s, char *buf, size_t len);

#define log_debug(msg, ...)                                                                        \
	do {                                                                                       \
		if (drake_log_get_level() <= DRAKE_LOG_DEBUG)                                      \
			drake_log(DRAKE_LOG_DEBUG, msg, __VA_ARGS__);                              \
	} while (0)
#define log_info(msg, ...)  drake_log(DRAKE_LOG_INFO, msg, __VA_ARGS__)
#define log_warn(msg, ...)  drake_log(DRAKE_LOG_WARN, msg, __VA_ARGS__)
#define log_error(msg, ...) drake_log(DRAKE_LOG_ERROR, msg, __VA_ARGS__)

#endif
