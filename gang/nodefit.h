/*
 * nodefit.h - which nodes a replica may go to by the rules kube-scheduler
 * applies before any resource: its node selector, its required node
 * affinity and its tolerations of the node's taints. The planner takes the
 * answer as a mask per role (drake_gang_req), so a gang is planned only
 * onto nodes kube-scheduler will accept for it.
 *
 * Kubernetes' semantics (k8s.io/component-helpers/scheduling/corev1):
 *   - spec.nodeSelector: every pair equals a node label;
 *   - requiredDuringSchedulingIgnoredDuringExecution: the node matches one
 *     of its terms; a term's expressions all hold (an empty term matches
 *     nothing). In (the label is one of the values), NotIn (absent or none
 *     of them), Exists, DoesNotExist, Gt and Lt (the label and the one
 *     value are integers, compared); matchFields name metadata.name only;
 *   - a taint with effect NoSchedule or NoExecute keeps the replica off
 *     the node unless a toleration matches it: the effect when one is
 *     given, the key when one is given (no key with Exists: every taint),
 *     and with Equal (or no operator) the value. PreferNoSchedule never
 *     keeps a pod off.
 *
 * Pure; borrows every string, allocates nothing.
 */
#ifndef DRAKE_GANG_NODEFIT_H
#define DRAKE_GANG_NODEFIT_H

#include <stdbool.h>
#include <stddef.h>

struct drake_kv {
	const char *key, *value;
};

enum drake_sel_op {
	DRAKE_SEL_IN,
	DRAKE_SEL_NOT_IN,
	DRAKE_SEL_EXISTS,
	DRAKE_SEL_DOES_NOT_EXIST,
	DRAKE_SEL_GT,
	DRAKE_SEL_LT,
};

struct drake_sel_expr {
	const char *key;
	enum drake_sel_op op;
	const char *const *values;
	size_t n_values;
	bool field; /* a matchFields entry: key is metadata.name */
};

struct drake_sel_term {
	const struct drake_sel_expr *exprs;
	size_t n;
};

struct drake_node_sel {
	const struct drake_kv *selector; /* spec.nodeSelector */
	size_t n_selector;
	bool affinity; /* a required node affinity is given */
	const struct drake_sel_term *terms;
	size_t n_terms;
};

struct drake_taint {
	const char *key, *value, *effect; /* NULL read as "" */
};

struct drake_toleration {
	const char *key, *op, *value, *effect; /* NULL read as "" */
};

/* The node named name, with labels[0..n), satisfies s (NULL: no rule). */
bool drake_node_sel_matches(const struct drake_node_sel *s, const char *name,
                            const struct drake_kv *labels, size_t n);

/* Every NoSchedule and NoExecute taint of taints[0..n) is tolerated by one
 * of t[0..nt). */
bool drake_tolerates(const struct drake_toleration *t, size_t nt, const struct drake_taint *taints,
                     size_t n);

#endif
