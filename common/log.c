/* log.c - logfmt lines on stderr, filtered by level. */
#include "common/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static enum drake_log_level g_level = DRAKE_LOG_INFO;

static const char *const level_names[] = {"debug", "info", "warn", "error"};

void drake_log_set_level(enum drake_log_level level)
{
	g_level = level;
}

enum drake_log_level drake_log_get_level(void)
{
	return g_level;
}

drake_err drake_log_parse_level(const char *s, enum drake_log_level *out)
{
	for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++) {
		if (s && strcmp(s, level_names[i]) == 0) {
			*out = (enum drake_log_level)i;
			return DRAKE_OK;
		}
	}
	return DRAKE_EINVAL;
}

void drake_log(enum drake_log_level level, const char *msg, const char *fmt, ...)
{
	if (level < g_level)
		return;
	struct timespec ts;
	struct tm tm;
	char when[32];
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);

	/* One buffer, one write: lines from one process never interleave. */
	char line[2048];
	int n = snprintf(line, sizeof(line), "time=%s.%03ldZ level=%s msg=%s", when,
	                 ts.tv_nsec / 1000000, level_names[level], msg);
	if (n < 0)
		return;
	if (fmt && *fmt && (size_t)n < sizeof(line) - 1) {
		line[n++] = ' ';
		va_list ap;
		va_start(ap, fmt);
		int m = vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
		va_end(ap);
		if (m > 0)
			n += m;
	}
	if ((size_t)n >= sizeof(line) - 1)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	fwrite(line, 1, (size_t)n, stderr);
}

const char *drake_log_quote(const char *s, char *buf, size_t len)
{
	if (len == 0)
		return buf;
	if (!s)
		s = "";
	bool bare = *s != '\0';
	for (const char *p = s; *p && bare; p++)
		if (*p <= ' ' || *p == '"' || *p == '=' || *p == '\\' || *p == 0x7f)
			bare = false;
	size_t o = 0;
	if (!bare)
		buf[o++] = '"';
	for (const char *p = s; *p && o + 3 < len; p++) {
		unsigned char c = (unsigned char)*p;
		if (!bare && (c == '"' || c == '\\'))
			buf[o++] = '\\';
		else if (c < ' ' || c == 0x7f)
			continue;
		buf[o++] = (char)c;
	}
	if (!bare && o < len - 1)
		buf[o++] = '"';
	buf[o < len ? o : len - 1] = '\0';
	return buf;
}
