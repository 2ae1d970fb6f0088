/*
 * refusal.c - kube-scheduler's refusals, classified, and the backoff of the
 * jobs they concern (see refusal.h).
 */
#include "gang/refusal.h"

#include <ctype.h>
#include <string.h>

const char *drake_refusal_kind_name(enum drake_refusal_kind k)
{
	return k == DRAKE_REFUSAL_MODELLED ? "modelled" : "outside";
}

static bool starts(const char *s, size_t n, const char *prefix)
{
	size_t p = strlen(prefix);
	return n >= p && !memcmp(s, prefix, p);
}

/* One "<count> <reason>" of kube-scheduler's histogram, s[0..n). */
static bool reason_modelled(const char *s, size_t n, bool pinned)
{
	size_t i = 0;
	while (i < n && isdigit((unsigned char)s[i]))
		i++;
	if (i == 0 || i >= n || s[i] != ' ')
		return false; /* no node count: a PreFilter plugin's message */
	s += i + 1;
	n -= i + 1;
	if (starts(s, n, "Insufficient ") || starts(s, n, "node(s) were unschedulable") ||
	    starts(s, n, "node(s) had untolerated taint") || starts(s, n, DRAKE_JOB_REASON))
		return true;
	return pinned && (starts(s, n, "node(s) didn't match Pod's node affinity/selector") ||
	                  starts(s, n, "node(s) didn't satisfy plugin(s) [NodeAffinity]"));
}

int drake_refusal_summary_len(const char *message)
{
	if (!message)
		return 0;
	const char *s = strstr(message, "are available: ");
	const char *end = s ? strstr(s, ". ") : NULL;
	return end ? (int)(end - message) + 1 : (int)strlen(message);
}

enum drake_refusal_kind drake_refusal_classify(const char *message, bool pinned)
{
	static const char AVAILABLE[] = "are available: ";
	const char *s = message ? strstr(message, AVAILABLE) : NULL;
	if (!s)
		return DRAKE_REFUSAL_OUTSIDE;
	s += sizeof(AVAILABLE) - 1;
	/* The histogram ends at its first ". ": what preemption and other
	 * post-filters found follows, and it names no new reason. */
	const char *end = strstr(s, ". ");
	if (!end)
		end = s + strlen(s);
	while (end > s && (end[-1] == '.' || end[-1] == ' '))
		end--;
	if (end == s)
		return DRAKE_REFUSAL_OUTSIDE;
	while (s < end) {
		const char *comma = s;
		while (comma < end && !(comma[0] == ',' && comma + 1 < end && comma[1] == ' '))
			comma++;
		if (!reason_modelled(s, (size_t)(comma - s), pinned))
			return DRAKE_REFUSAL_OUTSIDE;
		s = comma < end ? comma + 2 : end;
	}
	return DRAKE_REFUSAL_MODELLED;
}

double drake_refusal_delay(const struct drake_backoff_opts *o, int tries)
{
	double d = o->min_s;
	for (int i = 1; i < tries && d < o->max_s; i++)
		d *= 2;
	return d < o->max_s ? d : o->max_s;
}

struct drake_refusal_record drake_refusal_next(const struct drake_refusal_record *prev,
                                               const struct drake_backoff_opts *o, double now_s)
{
	struct drake_refusal_record r = {.tries = (prev && prev->tries > 0 ? prev->tries : 0) + 1,
	                                 .at_s = now_s};
	r.until_s = now_s + drake_refusal_delay(o, r.tries);
	return r;
}

bool drake_refusal_may_retry(const struct drake_refusal_record *r, double now_s, double changed_s)
{
	if (!r || r->tries <= 0)
		return true;
	return now_s >= r->until_s || changed_s > r->at_s;
}
