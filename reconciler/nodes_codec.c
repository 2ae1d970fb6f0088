/*
 * nodes_codec.c - a replica template's node rules (spec.nodeSelector, the
 * required node affinity, spec.tolerations) decoded for gang/nodefit.h,
 * and the node mask they give a role over admission's snapshot (see
 * admit.h). A codec file: jansson lives here.
 *
 * Ownership: the rules borrow their strings from the template (the job
 * in the cache) and own one block of arrays, freed by
 * admit_node_rules_release().
 */
#include "reconciler/admit.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/cache.h"
#include "kube/node.h"

static const struct {
	const char *name;
	enum drake_sel_op op;
} OPS[] = {{"In", DRAKE_SEL_IN},         {"NotIn", DRAKE_SEL_NOT_IN},
           {"Exists", DRAKE_SEL_EXISTS}, {"DoesNotExist", DRAKE_SEL_DOES_NOT_EXIST},
           {"Gt", DRAKE_SEL_GT},         {"Lt", DRAKE_SEL_LT}};

void admit_node_rules_release(struct admit_node_rules *r)
{
	if (!r)
		return;
	free(r->kv);
	free(r->terms);
	free(r->exprs);
	free(r->values);
	free(r->tol);
	memset(r, 0, sizeof(*r));
}

static const json_t *terms_of(const json_t *spec)
{
	return json_object_get(
	    json_object_get(json_object_get(json_object_get(spec, "affinity"), "nodeAffinity"),
	                    "requiredDuringSchedulingIgnoredDuringExecution"),
	    "nodeSelectorTerms");
}

/* One matchExpressions or matchFields entry into e (its values from *v). */
static drake_err expr(const json_t *x, bool field, struct drake_sel_expr *e, const char ***v,
                      char *msg, size_t msglen)
{
	const char *key = json_string_value(json_object_get(x, "key"));
	const char *op = json_string_value(json_object_get(x, "operator"));
	size_t k = 0;
	while (op && k < sizeof(OPS) / sizeof(OPS[0]) && strcmp(OPS[k].name, op) != 0)
		k++;
	if (!key || !op || k == sizeof(OPS) / sizeof(OPS[0]))
		return drake_errorf(DRAKE_EINVAL, msg, msglen,
		                    "node affinity: a requirement needs a key and an operator of "
		                    "In, NotIn, Exists, DoesNotExist, Gt or Lt");
	*e = (struct drake_sel_expr){.key = key, .op = OPS[k].op, .values = *v, .field = field};
	size_t i;
	const json_t *s;
	json_array_foreach (json_object_get(x, "values"), i, s) {
		if (!json_is_string(s))
			return drake_errorf(DRAKE_EINVAL, msg, msglen,
			                    "node affinity: %s's values must be strings", key);
		(*v)[e->n_values++] = json_string_value(s);
	}
	*v += e->n_values;
	return DRAKE_OK;
}

drake_err admit_template_node_rules(const struct json_t *tmpl, struct admit_node_rules *out,
                                    char *msg, size_t msglen)
{
	memset(out, 0, sizeof(*out));
	const json_t *spec = json_object_get(tmpl, "spec");
	const json_t *sel = json_object_get(spec, "nodeSelector");
	const json_t *terms = terms_of(spec);
	const json_t *tols = json_object_get(spec, "tolerations");
	size_t n_exprs = 0, n_values = 0, i, j;
	const json_t *t, *x;
	json_array_foreach (terms, i, t) {
		const char *lists[] = {"matchExpressions", "matchFields"};
		for (size_t l = 0; l < 2; l++)
			json_array_foreach (json_object_get(t, lists[l]), j, x) {
				n_exprs++;
				n_values += json_array_size(json_object_get(x, "values"));
			}
	}
	out->kv = calloc(json_object_size(sel) + 1, sizeof(*out->kv));
	out->terms = calloc(json_array_size(terms) + 1, sizeof(*out->terms));
	out->exprs = calloc(n_exprs + 1, sizeof(*out->exprs));
	out->values = calloc(n_values + 1, sizeof(*out->values));
	out->tol = calloc(json_array_size(tols) + 1, sizeof(*out->tol));
	if (!out->kv || !out->terms || !out->exprs || !out->values || !out->tol) {
		admit_node_rules_release(out);
		return drake_errorf(DRAKE_ENOMEM, msg, msglen, "out of memory");
	}
	const char *key;
	const json_t *v;
	json_object_foreach ((json_t *)sel, key, v) {
		if (!json_is_string(v)) {
			admit_node_rules_release(out);
			return drake_errorf(DRAKE_EINVAL, msg, msglen,
			                    "nodeSelector %s must be a string", key);
		}
		out->kv[out->sel.n_selector++] = (struct drake_kv){key, json_string_value(v)};
	}
	out->sel.selector = out->kv;
	out->sel.affinity = json_is_array(terms);
	out->sel.terms = out->terms;
	struct drake_sel_expr *e = out->exprs;
	const char **vals = out->values;
	json_array_foreach (terms, i, t) {
		struct drake_sel_term *term = &out->terms[out->sel.n_terms++];
		term->exprs = e;
		const char *lists[] = {"matchExpressions", "matchFields"};
		for (size_t l = 0; l < 2; l++)
			json_array_foreach (json_object_get(t, lists[l]), j, x) {
				drake_err err = expr(x, l == 1, e, &vals, msg, msglen);
				if (err) {
					admit_node_rules_release(out);
					return err;
				}
				e++;
				term->n++;
			}
	}
	json_array_foreach (tols, i, t) {
		struct drake_toleration *to = &out->tol[out->n_tol++];
		to->key = json_string_value(json_object_get(t, "key"));
		to->op = json_string_value(json_object_get(t, "operator"));
		to->value = json_string_value(json_object_get(t, "value"));
		to->effect = json_string_value(json_object_get(t, "effect"));
	}
	out->any = out->sel.n_selector > 0 || out->sel.affinity || out->n_tol > 0;
	return DRAKE_OK;
}

drake_err admit_node_mask(const struct admit_node_rules *r, const struct drake_cluster *c,
                          const struct kube_cache *nodes, unsigned char *mask)
{
	size_t cap = 0;
	struct drake_kv *labels = NULL;
	struct drake_taint *taints = NULL;
	drake_err err = DRAKE_OK;
	for (size_t i = 0; i < c->n; i++) {
		const struct kube_node *nd = kube_nodes_get(nodes, c->nodes[i].name);
		mask[i] = 0;
		if (!nd)
			continue;
		size_t need = nd->n_labels > nd->n_taints ? nd->n_labels : nd->n_taints;
		if (need > cap) {
			struct drake_kv *l = realloc(labels, need * sizeof(*l));
			if (l)
				labels = l;
			struct drake_taint *t = realloc(taints, need * sizeof(*t));
			if (t)
				taints = t;
			if (!l || !t) {
				err = DRAKE_ENOMEM;
				break;
			}
			cap = need;
		}
		for (size_t k = 0; k < nd->n_labels; k++)
			labels[k] = (struct drake_kv){nd->labels[k].key, nd->labels[k].value};
		for (size_t k = 0; k < nd->n_taints; k++)
			taints[k] = (struct drake_taint){nd->taints[k].key, nd->taints[k].value,
			                                 nd->taints[k].effect};
		mask[i] = drake_node_sel_matches(&r->sel, nd->name, labels, nd->n_labels) &&
		          drake_tolerates(r->tol, r->n_tol, taints, nd->n_taints);
	}
	free(labels);
	free(taints);
	return err;
}
