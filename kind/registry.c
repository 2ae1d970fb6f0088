/*
 * registry.c - the job kinds drake is built with (registry.h).
 */
#include "kind/registry.h"

#include <strings.h>

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
