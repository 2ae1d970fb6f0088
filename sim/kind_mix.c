/*
 * kind_mix.c - `drake sim --kind-mix` (kind_mix.h).
 */
#include "sim/kind_mix.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kind/registry.h"

drake_err sim_kind_mix_parse(const char *s, struct sim_kind_mix *m, char *msg, size_t mlen)
{
	*m = (struct sim_kind_mix){0};
	double sum = 0;
	while (s && *s) {
		size_t n = strcspn(s, ",");
		char item[96];
		if (n >= sizeof(item))
			return drake_errorf(DRAKE_EINVAL, msg, mlen, "\"%.32s...\" is too long", s);
		memcpy(item, s, n);
		item[n] = '\0';
		s += n + (s[n] == ',');
		char *eq = strchr(item, '=');
		if (!eq)
			return drake_errorf(DRAKE_EINVAL, msg, mlen, "\"%s\" is not KIND=SHARE",
			                    item);
		*eq = '\0';
		const struct job_kind *k = job_kind_lookup(item);
		if (!k)
			return drake_errorf(DRAKE_EINVAL, msg, mlen,
			                    "\"%s\" is not a job kind drake knows", item);
		for (size_t i = 0; i < m->n; i++)
			if (m->kind[i] == k)
				return drake_errorf(DRAKE_EINVAL, msg, mlen, "%s is named twice",
				                    k->plural);
		char *end;
		double p = strtod(eq + 1, &end);
		if (end == eq + 1 || *end || !(p > 0 && p <= 1))
			return drake_errorf(DRAKE_EINVAL, msg, mlen,
			                    "the share of %s, \"%s\", is not a fraction in "
			                    "(0, 1]",
			                    item, eq + 1);
		if (m->n == JOB_KINDS_MAX)
			return drake_errorf(DRAKE_EINVAL, msg, mlen, "too many kinds");
		sum += p;
		m->kind[m->n] = k;
		m->share[m->n++] = p;
	}
	if (sum > 1 + 1e-9)
		return drake_errorf(DRAKE_EINVAL, msg, mlen,
		                    "the shares add up to %.4g, more than 1", sum);
	return DRAKE_OK;
}

drake_err sim_kind_resolve(struct sim_trace *t, const char *file, char *msg, size_t mlen)
{
	for (size_t i = 0; i < t->n; i++) {
		struct sim_trace_job *j = &t->jobs[i];
		if (!j->kind_name[0])
			continue;
		if (!(j->kind = job_kind_lookup(j->kind_name)))
			return drake_errorf(DRAKE_EINVAL, msg, mlen,
			                    "%s:%zu: kind \"%s\" is not a job kind drake knows",
			                    file, j->line, j->kind_name);
	}
	return DRAKE_OK;
}

size_t sim_kind_mix_apply(const struct sim_kind_mix *m, struct sim_trace *t)
{
	if (m->n == 0)
		return 0;
	/* bucket m->n: no kind, with what the kinds leave */
	double share[JOB_KINDS_MAX + 1];
	size_t got[JOB_KINDS_MAX + 1] = {0};
	double rest = 1;
	for (size_t b = 0; b < m->n; b++) {
		share[b] = m->share[b];
		rest -= share[b];
	}
	share[m->n] = rest > 0 ? rest : 0;
	size_t seen = 0, given = 0;
	for (size_t i = 0; i < t->n; i++) {
		if (t->jobs[i].kind)
			continue;
		seen++;
		size_t best = 0;
		double lag = -INFINITY;
		for (size_t b = 0; b <= m->n; b++) {
			double d = (double)seen * share[b] - (double)got[b];
			if (d > lag + 1e-9) {
				lag = d;
				best = b;
			}
		}
		got[best]++;
		if (best < m->n) {
			t->jobs[i].kind = m->kind[best];
			given++;
		}
	}
	return given;
}
