/*
 * object.c - metadata accessors over jansson values and builders for the
 * client's small request bodies (a codec file: it includes jansson so the
 * informers and the extender need not).
 *
 * Ownership: accessors borrow from the object; builders return malloc'd
 * JSON text (NULL on allocation failure) the caller frees.
 */
#include "kube/object.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

struct json_t *kube_obj_ref(struct json_t *o)
{
	return json_incref(o);
}

void kube_obj_unref(struct json_t *o)
{
	json_decref(o);
}

static const char *str_of(json_t *v)
{
	return json_is_string(v) ? json_string_value(v) : NULL;
}

drake_err kube_obj_meta(const struct json_t *o, struct kube_meta *m)
{
	memset(m, 0, sizeof(*m));
	json_t *meta = json_object_get(o, "metadata");
	m->name = str_of(json_object_get(meta, "name"));
	if (!m->name || !*m->name)
		return DRAKE_EINVAL;
	m->ns = str_of(json_object_get(meta, "namespace"));
	m->uid = str_of(json_object_get(meta, "uid"));
	m->rv = str_of(json_object_get(meta, "resourceVersion"));
	if (!m->ns)
		m->ns = "";
	if (!m->uid)
		m->uid = "";
	if (!m->rv)
		m->rv = "";
	m->deleting = json_object_get(meta, "deletionTimestamp") != NULL;
	size_t i;
	json_t *ref;
	json_array_foreach (json_object_get(meta, "ownerReferences"), i, ref) {
		if (json_is_true(json_object_get(ref, "controller"))) {
			m->owner_uid = str_of(json_object_get(ref, "uid"));
			m->owner_kind = str_of(json_object_get(ref, "kind"));
			break;
		}
	}
	m->node_name = str_of(json_object_get(json_object_get(o, "spec"), "nodeName"));
	if (m->node_name && !*m->node_name)
		m->node_name = NULL;
	return DRAKE_OK;
}

const char *kube_obj_label(const struct json_t *o, const char *key)
{
	return str_of(
	    json_object_get(json_object_get(json_object_get(o, "metadata"), "labels"), key));
}

const char *kube_obj_annotation(const struct json_t *o, const char *key)
{
	return str_of(
	    json_object_get(json_object_get(json_object_get(o, "metadata"), "annotations"), key));
}

const char *kube_obj_str(const struct json_t *o, const char *path)
{
	const json_t *cur = o;
	char seg[128];
	while (cur && *path) {
		size_t n = strcspn(path, ".");
		if (n >= sizeof(seg))
			return NULL;
		memcpy(seg, path, n);
		seg[n] = '\0';
		cur = json_object_get(cur, seg);
		path += n;
		if (*path == '.')
			path++;
	}
	return str_of((json_t *)cur);
}

double kube_time(const char *ts)
{
	struct tm tm = {0};
	const char *rest = ts ? strptime(ts, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
	if (!rest)
		return 0;
	double frac = 0;
	if (*rest == '.') {
		char *end;
		frac = strtod(rest, &end);
		rest = end;
	}
	if (strcmp(rest, "Z") != 0)
		return 0; /* the API server writes UTC */
	return (double)timegm(&tm) + frac;
}

double kube_obj_time(const struct json_t *o, const char *path)
{
	return kube_time(kube_obj_str(o, path));
}

const char *kube_obj_condition(const struct json_t *o, const char *type, double *since)
{
	if (since)
		*since = 0;
	size_t i;
	json_t *c;
	json_array_foreach (json_object_get(json_object_get(o, "status"), "conditions"), i, c) {
		const char *t = json_string_value(json_object_get(c, "type"));
		if (!t || strcmp(t, type) != 0)
			continue;
		if (since)
			*since =
			    kube_time(json_string_value(json_object_get(c, "lastTransitionTime")));
		return json_string_value(json_object_get(c, "status"));
	}
	return NULL;
}

size_t kube_obj_array_len(const struct json_t *o, const char *path)
{
	const json_t *cur = o;
	char seg[128];
	while (cur && *path) {
		size_t n = strcspn(path, ".");
		if (n >= sizeof(seg))
			return 0;
		memcpy(seg, path, n);
		seg[n] = '\0';
		cur = json_object_get(cur, seg);
		path += n;
		if (*path == '.')
			path++;
	}
	return json_is_array(cur) ? json_array_size(cur) : 0;
}

const char *kube_status_message(const char *body, size_t len, char *buf, size_t buflen)
{
	if (buflen == 0)
		return buf;
	buf[0] = '\0';
	if (!body || len == 0 || len > 1024 * 1024)
		return buf;
	json_t *o = json_loadb(body, len, 0, NULL);
	const char *m = str_of(json_object_get(o, "message"));
	if (m)
		snprintf(buf, buflen, "%s", m);
	json_decref(o);
	return buf;
}

bool kube_name_valid(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n == 0 || n > KUBE_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
		if (!alnum && c != '-' && c != '.')
			return false;
		if (!alnum && (i == 0 || i == n - 1))
			return false;
	}
	return true;
}

static char *dump(json_t *v)
{
	if (!v)
		return NULL;
	char *s = json_dumps(v, JSON_COMPACT);
	json_decref(v);
	return s;
}

char *kube_delete_options_body(const char *uid, const char *rv, const char *propagation)
{
	json_t *pre = json_object();
	if (uid)
		json_object_set_new(pre, "uid", json_string(uid));
	if (rv)
		json_object_set_new(pre, "resourceVersion", json_string(rv));
	json_t *b = json_pack("{s:s,s:s,s:o}", "kind", "DeleteOptions", "apiVersion", "v1",
	                      "preconditions", pre);
	if (b && propagation)
		json_object_set_new(b, "propagationPolicy", json_string(propagation));
	return dump(b);
}

char *kube_delete_now_body(const char *uid)
{
	json_t *pre = json_object();
	if (uid)
		json_object_set_new(pre, "uid", json_string(uid));
	return dump(json_pack("{s:s,s:s,s:i,s:s,s:o}", "kind", "DeleteOptions", "apiVersion", "v1",
	                      "gracePeriodSeconds", 0, "propagationPolicy", "Background",
	                      "preconditions", pre));
}

char *kube_binding_body(const char *pod, const char *node)
{
	return dump(json_pack("{s:s,s:s,s:{s:s},s:{s:s,s:s,s:s}}", "apiVersion", "v1", "kind",
	                      "Binding", "metadata", "name", pod, "target", "apiVersion", "v1",
	                      "kind", "Node", "name", node));
}

char *kube_event_body(const char *ns, const char *api_version, const char *kind, const char *name,
                      const char *uid, const char *type, const char *reason, const char *message,
                      const char *component, const char *now_rfc3339)
{
	/* generateName lets the API server pick a unique name for each event */
	char gen[KUBE_NAME_MAX + 2];
	snprintf(gen, sizeof(gen), "%.200s.", name);
	return dump(json_pack(
	    "{s:s,s:s,s:{s:s,s:s},s:{s:s,s:s,s:s,s:s,s:s},s:s,s:s,s:s,s:{s:s},s:s,s:s,s:i}",
	    "apiVersion", "v1", "kind", "Event", "metadata", "generateName", gen, "namespace", ns,
	    "involvedObject", "apiVersion", api_version, "kind", kind, "name", name, "namespace",
	    ns, "uid", uid ? uid : "", "type", type, "reason", reason, "message", message, "source",
	    "component", component, "firstTimestamp", now_rfc3339, "lastTimestamp", now_rfc3339,
	    "count", 1));
}
