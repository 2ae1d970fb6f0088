/*
 * member.c - reading admission's plan from a pod, checking that a pod is the
 * member it claims to be, and filter and prioritize for members (see
 * member.h and gang/protocol.h).
 */
#include "extender/member.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gang/protocol.h"
#include "gang/refusal.h"
#include "kube/pod.h"
#include "kind/job.h"

static drake_err parse_count(const char *s, long max, long *out)
{
	if (!s)
		return DRAKE_EINVAL;
	errno = 0;
	char *end;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > max)
		return DRAKE_EINVAL;
	*out = v;
	return DRAKE_OK;
}

drake_err ext_member_of(const struct ext_pod *pod, struct ext_member *m, char *why, size_t whylen)
{
	*m = (struct ext_member){.role = -1};
	const char *planned = ext_pod_annotation(pod, DRAKE_ANNOTATION_PLANNED_NODE);
	if (!planned)
		return DRAKE_OK;
	m->ns = pod->ns;
	m->name = pod->name;
	m->owner_uid = pod->owner_uid ? pod->owner_uid : "";
	m->gang = ext_pod_annotation(pod, DRAKE_ANNOTATION_GANG);
	m->job = ext_pod_label(pod, DRAKE_LABEL_JOB_NAME);
	if (!m->job)
		m->job = "";
	struct drake_gang_id id;
	char msg[200];
	if (!*planned || !m->gang)
		return drake_errorf(DRAKE_EINVAL, why, whylen,
		                    "pod %s/%s: %s needs a non-empty %s of the form <uid>.<wave>",
		                    pod->ns, pod->name, DRAKE_ANNOTATION_PLANNED_NODE,
		                    DRAKE_ANNOTATION_GANG);
	if (drake_gang_id_parse(m->gang, &id, msg, sizeof(msg)))
		return drake_errorf(DRAKE_EINVAL, why, whylen, "pod %s/%s: %s: %s", pod->ns,
		                    pod->name, DRAKE_ANNOTATION_GANG, msg);
	if (parse_count(ext_pod_annotation(pod, DRAKE_ANNOTATION_GANG_SIZE), DRAKE_GANG_SIZE_MAX,
	                &m->size) ||
	    m->size < 1)
		return drake_errorf(DRAKE_EINVAL, why, whylen,
		                    "pod %s/%s: %s must be an integer from 1 to %d", pod->ns,
		                    pod->name, DRAKE_ANNOTATION_GANG_SIZE, DRAKE_GANG_SIZE_MAX);
	const char *min = ext_pod_annotation(pod, DRAKE_ANNOTATION_GANG_MIN);
	if (min && parse_count(min, DRAKE_GANG_SIZE_MAX, &m->min))
		return drake_errorf(DRAKE_EINVAL, why, whylen,
		                    "pod %s/%s: %s must be an integer from 0 to %d", pod->ns,
		                    pod->name, DRAKE_ANNOTATION_GANG_MIN, DRAKE_GANG_SIZE_MAX);
	const char *roles = ext_pod_annotation(pod, DRAKE_ANNOTATION_GANG_ROLES);
	if (roles) {
		if (drake_roles_parse(roles, DRAKE_GANG_SIZE_MAX, &m->min_roles, msg, sizeof(msg)))
			return drake_errorf(DRAKE_EINVAL, why, whylen, "pod %s/%s: %s: %s", pod->ns,
			                    pod->name, DRAKE_ANNOTATION_GANG_ROLES, msg);
		m->has_min_roles = true;
	}
	const char *role = ext_pod_annotation(pod, DRAKE_ANNOTATION_ROLE);
	enum drake_role r;
	if (role && !drake_role_parse(role, &r))
		return drake_errorf(DRAKE_EINVAL, why, whylen,
		                    "pod %s/%s: %s must be ps, chief or worker, not \"%.32s\"",
		                    pod->ns, pod->name, DRAKE_ANNOTATION_ROLE, role);
	m->role = role ? (int)r : job_role_of_type_name(ext_pod_label(pod, JOB_LABEL_TYPE));
	m->planned_node = planned;
	return DRAKE_OK;
}

drake_err ext_member_of_pod(const struct kube_pod *obj, struct ext_member *m, char *why,
                            size_t whylen)
{
	struct kube_meta meta;
	kube_pod_meta(obj, &meta);
	static const char *const keys[] = {
	    DRAKE_ANNOTATION_PLANNED_NODE, DRAKE_ANNOTATION_GANG,       DRAKE_ANNOTATION_GANG_SIZE,
	    DRAKE_ANNOTATION_GANG_MIN,     DRAKE_ANNOTATION_GANG_ROLES, DRAKE_ANNOTATION_ROLE,
	};
	struct ext_label ann[sizeof(keys) / sizeof(keys[0])];
	size_t n = 0;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *v = kube_pod_annotation(obj, keys[i]);
		if (v)
			ann[n++] = (struct ext_label){(char *)keys[i], (char *)v};
	}
	struct ext_label lab[2];
	size_t nl = 0;
	const char *job = kube_pod_label(obj, DRAKE_LABEL_JOB_NAME);
	const char *type = kube_pod_label(obj, JOB_LABEL_TYPE);
	if (job)
		lab[nl++] = (struct ext_label){DRAKE_LABEL_JOB_NAME, (char *)job};
	if (type)
		lab[nl++] = (struct ext_label){JOB_LABEL_TYPE, (char *)type};
	/* A view: the strings stay the record's, so m may borrow them. */
	struct ext_pod view = {.name = (char *)meta.name,
	                       .ns = (char *)meta.ns,
	                       .uid = (char *)meta.uid,
	                       .owner_uid = (char *)(meta.owner_uid ? meta.owner_uid : ""),
	                       .labels = lab,
	                       .n_labels = nl,
	                       .annotations = ann,
	                       .n_annotations = n};
	return ext_member_of(&view, m, why, whylen);
}

/* "<job>-<word>-<index>", index a decimal without leading zeros. */
static bool named_as(const char *name, const char *job, const char *word)
{
	size_t jl = strlen(job), wl = strlen(word);
	if (strncmp(name, job, jl) != 0 || name[jl] != '-' ||
	    strncmp(name + jl + 1, word, wl) != 0 || name[jl + 1 + wl] != '-')
		return false;
	const char *d = name + jl + wl + 2;
	size_t nd = strspn(d, "0123456789");
	return nd > 0 && nd <= 6 && d[nd] == '\0' && (d[0] != '0' || nd == 1);
}

drake_err ext_member_check(const struct ext_member *m, const char *wave_ns, char *why,
                           size_t whylen)
{
	struct drake_gang_id id;
	char msg[200];
	if (drake_gang_id_parse(m->gang, &id, msg, sizeof(msg)))
		return drake_errorf(DRAKE_EINVAL, why, whylen, "pod %s/%s: %s: %s", m->ns, m->name,
		                    DRAKE_ANNOTATION_GANG, msg);
	if (!m->owner_uid || !*m->owner_uid)
		return drake_errorf(DRAKE_EINVAL, why, whylen,
		                    "pod %s/%s has no controller owner, so it is not a pod of the "
		                    "job gang %s belongs to",
		                    m->ns, m->name, m->gang);
	if (strcmp(m->owner_uid, id.uid) != 0)
		return drake_errorf(DRAKE_EINVAL, why, whylen,
		                    "pod %s/%s is owned by %s, not by the job %s of gang %s", m->ns,
		                    m->name, m->owner_uid, id.uid, m->gang);
	if (wave_ns && strcmp(m->ns, wave_ns) != 0)
		return drake_errorf(DRAKE_EINVAL, why, whylen,
		                    "pod %s/%s is in namespace %s, but gang %s waits in %s", m->ns,
		                    m->name, m->ns, m->gang, wave_ns);
	if (m->role < 0)
		return drake_errorf(DRAKE_EINVAL, why, whylen,
		                    "pod %s/%s has no role: neither %s nor a %s label of ps, chief "
		                    "or worker",
		                    m->ns, m->name, DRAKE_ANNOTATION_ROLE, JOB_LABEL_TYPE);
	const char *word = drake_role_name((enum drake_role)m->role);
	if (!m->job[0] || !(named_as(m->name, m->job, word) ||
	                    (m->role == DRAKE_ROLE_CHIEF && named_as(m->name, m->job, "master"))))
		return drake_errorf(DRAKE_EINVAL, why, whylen,
		                    "pod %s/%s is not named like the %s of job \"%s\" "
		                    "(%s-%s-<index>)",
		                    m->ns, m->name, word, m->job, m->job[0] ? m->job : "<job>",
		                    word);
	return DRAKE_OK;
}

void ext_member_filter(const struct ext_member *m, const struct ext_pod *pod,
                       const struct ext_args *args, enum ext_verdict *verdicts,
                       const char **reasons, char *buf, size_t buflen)
{
	bool found = false;
	for (size_t i = 0; i < args->n_nodes; i++) {
		bool planned = strcmp(args->node_names[i], m->planned_node) == 0;
		found |= planned;
		/* Another node can never be right for this pod, so preemption
		 * there would only evict pods for nothing: unresolvable. */
		verdicts[i] = planned ? EXT_PASS : EXT_FAIL_UNRESOLVABLE;
		reasons[i] = buf;
	}
	if (found)
		snprintf(buf, buflen, DRAKE_JOB_REASON "%s/%s: gang %s reserves %s for %s", pod->ns,
		         m->job, m->gang, m->planned_node, pod->name);
	else
		snprintf(buf, buflen,
		         DRAKE_JOB_REASON
		         "%s/%s: planned node %s for %s is not feasible now (gang %s)",
		         pod->ns, m->job, m->planned_node, pod->name, m->gang);
}

void ext_member_prioritize(const struct ext_member *m, const struct ext_args *args, int64_t *scores)
{
	for (size_t i = 0; i < args->n_nodes; i++)
		scores[i] = strcmp(args->node_names[i], m->planned_node) == 0 ? EXT_MAX_SCORE : 0;
}
