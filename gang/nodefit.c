/*
 * nodefit.c - node selectors, required node affinity and tolerations, as
 * kube-scheduler reads them (see nodefit.h).
 */
#include "gang/nodefit.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *str(const char *s)
{
	return s ? s : "";
}

static const char *label(const struct drake_kv *labels, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (labels[i].key && !strcmp(labels[i].key, key))
			return str(labels[i].value);
	return NULL;
}

static bool integer(const char *s, long long *out)
{
	if (!s || !*s)
		return false;
	char *end;
	errno = 0;
	*out = strtoll(s, &end, 10);
	return !*end && errno == 0;
}

static bool one_of(const char *v, const char *const *values, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (values[i] && !strcmp(values[i], v))
			return true;
	return false;
}

static bool expr_holds(const struct drake_sel_expr *e, const char *name,
                       const struct drake_kv *labels, size_t n)
{
	const char *v;
	if (e->field)
		v = e->key && !strcmp(e->key, "metadata.name") ? name : NULL;
	else
		v = e->key ? label(labels, n, e->key) : NULL;
	long long a, b;
	switch (e->op) {
	case DRAKE_SEL_IN: return v && one_of(v, e->values, e->n_values);
	case DRAKE_SEL_NOT_IN: return !v || !one_of(v, e->values, e->n_values);
	case DRAKE_SEL_EXISTS: return v != NULL;
	case DRAKE_SEL_DOES_NOT_EXIST: return v == NULL;
	case DRAKE_SEL_GT:
	case DRAKE_SEL_LT:
		if (e->n_values != 1 || !integer(v, &a) || !integer(e->values[0], &b))
			return false;
		return e->op == DRAKE_SEL_GT ? a > b : a < b;
	}
	return false;
}

bool drake_node_sel_matches(const struct drake_node_sel *s, const char *name,
                            const struct drake_kv *labels, size_t n)
{
	if (!s)
		return true;
	for (size_t i = 0; i < s->n_selector; i++) {
		const char *v = s->selector[i].key ? label(labels, n, s->selector[i].key) : NULL;
		if (!v || strcmp(v, str(s->selector[i].value)) != 0)
			return false;
	}
	if (!s->affinity)
		return true;
	for (size_t t = 0; t < s->n_terms; t++) {
		const struct drake_sel_term *term = &s->terms[t];
		bool all = term->n > 0;
		for (size_t i = 0; all && i < term->n; i++)
			all = expr_holds(&term->exprs[i], str(name), labels, n);
		if (all)
			return true;
	}
	return false;
}

static bool tolerates(const struct drake_toleration *t, const struct drake_taint *taint)
{
	if (*str(t->effect) && strcmp(str(t->effect), str(taint->effect)) != 0)
		return false;
	if (*str(t->key) && strcmp(str(t->key), str(taint->key)) != 0)
		return false;
	const char *op = str(t->op);
	if (!strcmp(op, "Exists"))
		return true;
	if (!*op || !strcmp(op, "Equal"))
		return !strcmp(str(t->value), str(taint->value));
	return false;
}

bool drake_tolerates(const struct drake_toleration *t, size_t nt, const struct drake_taint *taints,
                     size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *effect = str(taints[i].effect);
		if (strcmp(effect, "NoSchedule") != 0 && strcmp(effect, "NoExecute") != 0)
			continue;
		bool ok = false;
		for (size_t j = 0; j < nt && !ok; j++)
			ok = tolerates(&t[j], &taints[i]);
		if (!ok)
			return false;
	}
	return true;
}
