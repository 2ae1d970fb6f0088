/*
 * registry.c - the job kinds drake is built with (registry.h).
 */
#include "kind/registry.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/flags.h"

#include "pytorchjob/pytorchjob.h"
#include "tfjob/tfjob.h"

const struct job_kind *const job_kinds[] = {&tfjob_kind, &pytorchjob_kind};
const size_t job_nkinds = sizeof(job_kinds) / sizeof(job_kinds[0]);

const struct job_kind *job_kind_lookup(const char *name)
{
	for (size_t i = 0; name && i < job_nkinds; i++)
		if (!strcasecmp(name, job_kinds[i]->plural) ||
		    !strcasecmp(name, job_kinds[i]->kind))
			return job_kinds[i];
	return NULL;
}

_Static_assert(sizeof(job_kinds) / sizeof(job_kinds[0]) <= JOB_KINDS_MAX,
               "struct job_resize_costs holds every kind");

static int kind_index(const struct job_kind *k)
{
	for (size_t i = 0; k && i < job_nkinds; i++)
		if (job_kinds[i] == k)
			return (int)i;
	return -1;
}

void job_resize_costs_default(struct job_resize_costs *c)
{
	*c = (struct job_resize_costs){0};
	for (size_t i = 0; i < job_nkinds; i++)
		c->k[i] = (struct job_resize_cost){job_kinds[i]->resize_shrink_s,
		                                   job_kinds[i]->resize_grow_s};
}

/* One duration of --resize-cost: above 0, at most an hour. */
static bool cost_ok(const char *s, double *out)
{
	return flags_parse_duration(s, out) == DRAKE_OK && *out > 0 && *out <= 3600;
}

drake_err job_resize_costs_parse(const char *s, struct job_resize_costs *c, char *msg, size_t len)
{
	while (s && *s) {
		size_t n = strcspn(s, ",");
		char item[128];
		if (n >= sizeof(item))
			return drake_errorf(DRAKE_EINVAL, msg, len, "\"%.*s...\" is too long", 32,
			                    s);
		memcpy(item, s, n);
		item[n] = '\0';
		s += n + (s[n] == ',');
		char *eq = strchr(item, '=');
		if (!eq)
			return drake_errorf(DRAKE_EINVAL, msg, len,
			                    "\"%s\" is not KIND=SHRINK[/GROW]", item);
		*eq = '\0';
		int i = kind_index(job_kind_lookup(item));
		if (i < 0)
			return drake_errorf(DRAKE_EINVAL, msg, len,
			                    "\"%s\" is not a job kind drake knows", item);
		char *slash = strchr(eq + 1, '/');
		if (slash)
			*slash = '\0';
		struct job_resize_cost v;
		if (!cost_ok(eq + 1, &v.shrink_s) ||
		    !cost_ok(slash ? slash + 1 : eq + 1, &v.grow_s))
			return drake_errorf(DRAKE_EINVAL, msg, len,
			                    "%s: \"%s%s%s\" is not a duration above 0 "
			                    "and at most 1h (or two, SHRINK/GROW)",
			                    item, eq + 1, slash ? "/" : "", slash ? slash + 1 : "");
		c->k[i] = v;
	}
	return DRAKE_OK;
}

struct job_resize_cost job_resize_cost_of(const struct job_resize_costs *c,
                                          const struct job_kind *k)
{
	int i = kind_index(k);
	if (i < 0)
		return (struct job_resize_cost){0};
	return c ? c->k[i] : (struct job_resize_cost){k->resize_shrink_s, k->resize_grow_s};
}
