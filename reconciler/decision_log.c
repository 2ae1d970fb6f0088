/*
 * decision_log.c - the bounded, rotated JSON-lines file of --decision-log
 * (see decision_log.h).
 */
#include "reconciler/decision_log.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

drake_err decision_log_open(struct decision_log *l, const char *path, long max, char *msg,
                            size_t msglen)
{
	memset(l, 0, sizeof(*l));
	l->max = max > 0 ? max : 0;
	if (strlen(path) + 3 > sizeof(l->path))
		return drake_errorf(DRAKE_ELIMIT, msg, msglen, "--decision-log: path too long");
	snprintf(l->path, sizeof(l->path), "%s", path);
	l->f = fopen(path, "a");
	if (!l->f)
		return drake_errorf(DRAKE_EIO, msg, msglen, "--decision-log %s: %s", path,
		                    strerror(errno));
	struct stat st;
	l->size = fstat(fileno(l->f), &st) == 0 ? (long)st.st_size : 0;
	return DRAKE_OK;
}

/* FILE -> FILE.1, and a new FILE. */
static void rotate(struct decision_log *l)
{
	char old[sizeof(l->path) + 2];
	snprintf(old, sizeof(old), "%s.1", l->path);
	fclose(l->f);
	rename(l->path, old); /* on failure the next fopen truncates FILE instead */
	l->f = fopen(l->path, "w");
	l->size = 0;
}

void decision_log_write(struct decision_log *l, const char *line)
{
	if (!l || !line)
		return;
	long n = (long)strlen(line) + 1;
	if (l->max && n > l->max) { /* larger than the whole bound: not written */
		l->failed++;
		return;
	}
	if (l->max && l->f && l->size > 0 && l->size + n > l->max)
		rotate(l);
	if (!l->f || fputs(line, l->f) < 0 || fputc('\n', l->f) == EOF || fflush(l->f) != 0) {
		l->failed++;
		return;
	}
	l->size += n;
	l->written++;
}

void decision_log_close(struct decision_log *l)
{
	if (l && l->f)
		fclose(l->f);
	if (l)
		l->f = NULL;
}
