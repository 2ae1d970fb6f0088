/*
 * codec.c - JSON <-> structs for the extender verbs, through jansson.
 *
 * kube-scheduler marshals the extender/v1 types without json tags, so keys
 * are Go field names ("Pod", "NodeNames"); Go decodes case-insensitively and
 * old tutorials send lower-case keys, so a lookup tries the exact spelling
 * first and then any case. JSON null is treated exactly like an absent key.
 * Unknown keys are ignored, as Go's decoder does, so a newer kube-scheduler
 * that adds a field keeps working.
 */
#include "extender/codec.h"
#include "extender/codec_internal.h"
#include "gang/protocol.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void ext_limits_default(struct ext_limits *lim)
{
	lim->max_nodes = EXT_DEFAULT_MAX_NODES;
	lim->max_name_len = EXT_DEFAULT_MAX_NAME_LEN;
	lim->max_labels = EXT_DEFAULT_MAX_LABELS;
	lim->max_victims = EXT_DEFAULT_MAX_VICTIMS;
}

static const char *type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "object";
	case JSON_ARRAY: return "array";
	case JSON_STRING: return "string";
	case JSON_INTEGER:
	case JSON_REAL: return "number";
	case JSON_TRUE:
	case JSON_FALSE: return "boolean";
	case JSON_NULL: return "null";
	}
	return "unknown";
}

/* obj[key] with the exact spelling, else any case; NULL when absent or null. */
static json_t *get_key(const json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);
	if (!v) {
		const char *k;
		json_t *it;
		json_object_foreach ((json_t *)obj, k, it) {
			if (strcasecmp(k, key) == 0) {
				v = it;
				break;
			}
		}
	}
	return json_is_null(v) ? NULL : v;
}

static drake_err parse_root(const char *body, size_t len, json_t **out, char *msg, size_t msglen)
{
	json_error_t jerr;
	json_t *root = json_loadb(body, len, JSON_DECODE_ANY, &jerr);
	if (!root)
		return drake_errorf(DRAKE_EINVAL, msg, msglen,
		                    "malformed JSON at line %d column %d: %s", jerr.line,
		                    jerr.column, jerr.text);
	if (!json_is_object(root)) {
		drake_err e =
		    drake_errorf(DRAKE_EINVAL, msg, msglen, "request body: expected object, got %s",
		                 type_name(root));
		json_decref(root);
		return e;
	}
	*out = root;
	return DRAKE_OK;
}

/* A string field: required ones must be present and non-empty. */
static drake_err take_string(const json_t *obj, const char *key, const char *path, bool required,
                             size_t maxlen, char **out, char *msg, size_t msglen)
{
	const json_t *v = get_key(obj, key);
	if (!v) {
		if (required)
			return drake_errorf(DRAKE_EINVAL, msg, msglen, "%s%s: required", path, key);
		*out = strdup("");
		return *out ? DRAKE_OK : DRAKE_ENOMEM;
	}
	if (!json_is_string(v))
		return drake_errorf(DRAKE_EINVAL, msg, msglen, "%s%s: expected string, got %s",
		                    path, key, type_name(v));
	size_t n = json_string_length(v);
	if (required && n == 0)
		return drake_errorf(DRAKE_EINVAL, msg, msglen, "%s%s: must not be empty", path,
		                    key);
	if (n > maxlen)
		return drake_errorf(DRAKE_ELIMIT, msg, msglen,
		                    "%s%s: %zu bytes exceeds the limit of %zu", path, key, n,
		                    maxlen);
	if (strlen(json_string_value(v)) != n)
		return drake_errorf(DRAKE_EINVAL, msg, msglen, "%s%s: contains a NUL byte", path,
		                    key);
	*out = strdup(json_string_value(v));
	return *out ? DRAKE_OK : DRAKE_ENOMEM;
}

static void pod_release(struct ext_pod *pod)
{
	free(pod->name);
	free(pod->ns);
	free(pod->uid);
	free(pod->owner_uid);
	for (size_t i = 0; i < pod->n_labels; i++) {
		free(pod->labels[i].key);
		free(pod->labels[i].value);
	}
	free(pod->labels);
	for (size_t i = 0; i < pod->n_annotations; i++) {
		free(pod->annotations[i].key);
		free(pod->annotations[i].value);
	}
	free(pod->annotations);
	memset(pod, 0, sizeof(*pod));
}

const char *ext_pod_label(const struct ext_pod *pod, const char *key)
{
	for (size_t i = 0; i < pod->n_labels; i++)
		if (strcmp(pod->labels[i].key, key) == 0)
			return pod->labels[i].value;
	return NULL;
}

const char *ext_pod_annotation(const struct ext_pod *pod, const char *key)
{
	for (size_t i = 0; i < pod->n_annotations; i++)
		if (strcmp(pod->annotations[i].key, key) == 0)
			return pod->annotations[i].value;
	return NULL;
}

/*
 * Labels and annotations: a map of strings, kept whole or only under a key
 * prefix (annotations: only drake's own, never the large ones others write).
 * Null values count as absent; at most limit entries are kept.
 */
static drake_err decode_string_map(const json_t *map, const char *what, const char *prefix,
                                   size_t limit, struct ext_label **out, size_t *n, char *msg,
                                   size_t msglen)
{
	if (!json_is_object(map))
		return drake_errorf(DRAKE_EINVAL, msg, msglen,
		                    "Pod.metadata.%s: expected object, got %s", what,
		                    type_name(map));
	const size_t plen = prefix ? strlen(prefix) : 0;
	const char *k;
	json_t *v;
	json_object_foreach ((json_t *)map, k, v) {
		if ((prefix && strncmp(k, prefix, plen) != 0) || json_is_null(v))
			continue;
		if (!json_is_string(v))
			return drake_errorf(DRAKE_EINVAL, msg, msglen,
			                    "Pod.metadata.%s[\"%.64s\"]: expected string, got %s",
			                    what, k, type_name(v));
		if (*n >= limit)
			return drake_errorf(DRAKE_ELIMIT, msg, msglen,
			                    "Pod.metadata.%s: more than %zu %s%s", what, limit,
			                    prefix ? prefix : "", what);
		struct ext_label *l = realloc(*out, (*n + 1) * sizeof(*l));
		if (!l)
			return DRAKE_ENOMEM;
		*out = l;
		l[*n].key = strdup(k);
		l[*n].value = strdup(json_string_value(v));
		(*n)++;
		if (!l[*n - 1].key || !l[*n - 1].value)
			return DRAKE_ENOMEM;
	}
	return DRAKE_OK;
}

static drake_err decode_pod_object(const json_t *p, const struct ext_limits *lim,
                                   struct ext_pod *pod, char *msg, size_t msglen);

/*
 * The controller among the ownerReferences: the first entry whose
 * "controller" is true (the API server allows only one). Other entries are
 * not looked into; the controller's uid is required, as the API requires.
 */
static drake_err decode_owner(const json_t *refs, const struct ext_limits *lim, struct ext_pod *pod,
                              char *msg, size_t msglen)
{
	if (!refs) {
		pod->owner_uid = strdup("");
		return pod->owner_uid ? DRAKE_OK : DRAKE_ENOMEM;
	}
	if (!json_is_array(refs))
		return drake_errorf(DRAKE_EINVAL, msg, msglen,
		                    "Pod.metadata.ownerReferences: expected array, got %s",
		                    type_name(refs));
	size_t i;
	const json_t *ref;
	json_array_foreach (refs, i, ref) {
		if (!json_is_object(ref))
			return drake_errorf(
			    DRAKE_EINVAL, msg, msglen,
			    "Pod.metadata.ownerReferences[%zu]: expected object, got %s", i,
			    type_name(ref));
		if (pod->owner_uid || !json_is_true(get_key(ref, "controller")))
			continue;
		char path[64];
		snprintf(path, sizeof(path), "Pod.metadata.ownerReferences[%zu].", i);
		drake_err e = take_string(ref, "uid", path, true, lim->max_name_len,
		                          &pod->owner_uid, msg, msglen);
		if (e)
			return e;
	}
	if (!pod->owner_uid)
		pod->owner_uid = strdup("");
	return pod->owner_uid ? DRAKE_OK : DRAKE_ENOMEM;
}

static drake_err decode_pod(const json_t *root, const struct ext_limits *lim, struct ext_pod *pod,
                            char *msg, size_t msglen)
{
	const json_t *p = get_key(root, "Pod");
	if (!p)
		return drake_errorf(DRAKE_EINVAL, msg, msglen, "Pod: required");
	return decode_pod_object(p, lim, pod, msg, msglen);
}

static drake_err decode_pod_object(const json_t *p, const struct ext_limits *lim,
                                   struct ext_pod *pod, char *msg, size_t msglen)
{
	if (!json_is_object(p))
		return drake_errorf(DRAKE_EINVAL, msg, msglen, "Pod: expected object, got %s",
		                    type_name(p));
	/* Inside the Pod, keys are Kubernetes' lowerCamel json tags; Go matches
	 * them in any case too, and so does drake. */
	const json_t *meta = get_key(p, "metadata");
	if (!meta)
		return drake_errorf(DRAKE_EINVAL, msg, msglen, "Pod.metadata: required");
	if (!json_is_object(meta))
		return drake_errorf(DRAKE_EINVAL, msg, msglen,
		                    "Pod.metadata: expected object, got %s", type_name(meta));
	drake_err e = take_string(meta, "name", "Pod.metadata.", true, lim->max_name_len,
	                          &pod->name, msg, msglen);
	if (!e)
		e = take_string(meta, "namespace", "Pod.metadata.", false, lim->max_name_len,
		                &pod->ns, msg, msglen);
	if (!e && pod->ns[0] == '\0') {
		free(pod->ns);
		pod->ns = strdup("default");
		if (!pod->ns)
			e = DRAKE_ENOMEM;
	}
	if (!e)
		e = take_string(meta, "uid", "Pod.metadata.", false, lim->max_name_len, &pod->uid,
		                msg, msglen);
	if (!e)
		e = decode_owner(get_key(meta, "ownerReferences"), lim, pod, msg, msglen);
	const json_t *labels = get_key(meta, "labels");
	if (!e && labels)
		e = decode_string_map(labels, "labels", NULL, lim->max_labels, &pod->labels,
		                      &pod->n_labels, msg, msglen);
	const json_t *ann = get_key(meta, "annotations");
	if (!e && ann)
		e = decode_string_map(ann, "annotations", DRAKE_ANNOTATION_PREFIX, lim->max_labels,
		                      &pod->annotations, &pod->n_annotations, msg, msglen);
	return e;
}

static drake_err check_node_name(const json_t *v, size_t i, const char *path,
                                 const struct ext_limits *lim, char *msg, size_t msglen)
{
	if (!json_is_string(v))
		return drake_errorf(DRAKE_EINVAL, msg, msglen, "%s[%zu]: expected string, got %s",
		                    path, i, type_name(v));
	size_t n = json_string_length(v);
	if (n == 0 || strlen(json_string_value(v)) != n)
		return drake_errorf(DRAKE_EINVAL, msg, msglen, "%s[%zu]: invalid node name", path,
		                    i);
	if (n > lim->max_name_len)
		return drake_errorf(DRAKE_ELIMIT, msg, msglen,
		                    "%s[%zu]: name of %zu bytes exceeds the limit of %zu", path, i,
		                    n, lim->max_name_len);
	return DRAKE_OK;
}

static drake_err check_count(size_t n, const char *path, const struct ext_limits *lim, char *msg,
                             size_t msglen)
{
	if (n > lim->max_nodes)
		return drake_errorf(DRAKE_ELIMIT, msg, msglen,
		                    "%s: %zu nodes exceeds the limit of %zu", path, n,
		                    lim->max_nodes);
	return DRAKE_OK;
}

static drake_err decode_node_names(const json_t *names, const struct ext_limits *lim,
                                   struct ext_args *a, char *msg, size_t msglen)
{
	if (!json_is_array(names))
		return drake_errorf(DRAKE_EINVAL, msg, msglen,
		                    "NodeNames: expected array of strings, got %s",
		                    type_name(names));
	size_t n = json_array_size(names);
	drake_err e = check_count(n, "NodeNames", lim, msg, msglen);
	if (e)
		return e;
	a->node_names = calloc(n ? n : 1, sizeof(char *));
	if (!a->node_names)
		return DRAKE_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const json_t *v = json_array_get(names, i);
		if ((e = check_node_name(v, i, "NodeNames", lim, msg, msglen)))
			return e;
		if (!(a->node_names[i] = strdup(json_string_value(v))))
			return DRAKE_ENOMEM;
		a->n_nodes++;
	}
	return DRAKE_OK;
}

static drake_err decode_node_list(const json_t *list, const struct ext_limits *lim,
                                  struct ext_args *a, char *msg, size_t msglen)
{
	if (!json_is_object(list))
		return drake_errorf(DRAKE_EINVAL, msg, msglen,
		                    "Nodes: expected NodeList object, got %s", type_name(list));
	json_t *items = json_object_get(list, "items");
	if (!items || json_is_null(items))
		items = NULL;
	else if (!json_is_array(items))
		return drake_errorf(DRAKE_EINVAL, msg, msglen,
		                    "Nodes.items: expected array, got %s", type_name(items));
	size_t n = items ? json_array_size(items) : 0;
	drake_err e = check_count(n, "Nodes.items", lim, msg, msglen);
	if (e)
		return e;
	a->node_names = calloc(n ? n : 1, sizeof(char *));
	if (!a->node_names)
		return DRAKE_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const json_t *node = json_array_get(items, i);
		if (!json_is_object(node))
			return drake_errorf(DRAKE_EINVAL, msg, msglen,
			                    "Nodes.items[%zu]: expected object, got %s", i,
			                    type_name(node));
		const json_t *meta = json_object_get(node, "metadata");
		const json_t *name = json_is_object(meta) ? json_object_get(meta, "name") : NULL;
		if (!name)
			return drake_errorf(DRAKE_EINVAL, msg, msglen,
			                    "Nodes.items[%zu].metadata.name: required", i);
		if ((e = check_node_name(name, i, "Nodes.items", lim, msg, msglen)))
			return e;
		if (!(a->node_names[i] = strdup(json_string_value(name))))
			return DRAKE_ENOMEM;
		a->n_nodes++;
	}
	a->node_objects = items ? json_incref(items) : json_array();
	return a->node_objects ? DRAKE_OK : DRAKE_ENOMEM;
}

drake_err ext_args_decode(const char *body, size_t len, const struct ext_limits *lim,
                          struct ext_args *out, char *msg, size_t msglen)
{
	if (codec_args_decode_fast(body, len, lim, out))
		return DRAKE_OK;
	return codec_args_decode_tree(body, len, lim, out, msg, msglen);
}

drake_err codec_args_decode_tree(const char *body, size_t len, const struct ext_limits *lim,
                                 struct ext_args *out, char *msg, size_t msglen)
{
	memset(out, 0, sizeof(*out));
	json_t *root;
	drake_err e = parse_root(body, len, &root, msg, msglen);
	if (e)
		return e;
	e = decode_pod(root, lim, &out->pod, msg, msglen);
	if (!e) {
		const json_t *names = get_key(root, "NodeNames");
		const json_t *nodes = get_key(root, "Nodes");
		if (names) {
			out->node_cache_mode = true;
			e = decode_node_names(names, lim, out, msg, msglen);
		} else if (nodes) {
			e = decode_node_list(nodes, lim, out, msg, msglen);
		} else {
			e = drake_errorf(DRAKE_EINVAL, msg, msglen,
			                 "neither NodeNames nor Nodes given");
		}
	}
	json_decref(root);
	if (e == DRAKE_ENOMEM)
		drake_errorf(e, msg, msglen, "out of memory decoding the request");
	return e;
}

void ext_args_release(struct ext_args *a)
{
	if (!a)
		return;
	pod_release(&a->pod);
	if (!a->names_arena)
		for (size_t i = 0; i < a->n_nodes; i++)
			free(a->node_names[i]);
	free(a->names_arena);
	free(a->node_names);
	json_decref((json_t *)a->node_objects);
	memset(a, 0, sizeof(*a));
}

/* Serialises and frees root; NULL when anything failed on the way. */
static char *dump(json_t *root)
{
	if (!root)
		return NULL;
	char *s = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	return s;
}

char *ext_error_encode(const char *error)
{
	struct jw w;
	jw_init(&w, 64);
	jw_lit(&w, "{\"Error\":");
	jw_str(&w, error ? error : "");
	jw_lit(&w, "}");
	return jw_finish(&w);
}

/* "name":"reason" pairs of the nodes with the given verdict. */
static void write_failed(struct jw *w, const struct ext_args *args,
                         const struct ext_filter_result *res, enum ext_verdict which)
{
	bool first = true;
	jw_lit(w, "{");
	for (size_t i = 0; i < args->n_nodes; i++) {
		if (res->verdicts[i] != which)
			continue;
		if (!first)
			jw_lit(w, ",");
		first = false;
		jw_str(w, args->node_names[i]);
		jw_lit(w, ":");
		jw_str(w, res->reasons && res->reasons[i] ? res->reasons[i] : "rejected by drake");
	}
	jw_lit(w, "}");
}

char *ext_filter_encode(const struct ext_args *args, const struct ext_filter_result *res)
{
	if (res->error)
		return ext_error_encode(res->error);
	struct jw w;
	jw_init(&w, 256 + args->n_nodes * 24);
	bool first = true;
	/* Node-name mode must always carry NodeNames: kube-scheduler reads a
	 * missing list as "every node rejected". */
	if (args->node_cache_mode) {
		jw_lit(&w, "{\"NodeNames\":[");
		for (size_t i = 0; i < args->n_nodes; i++) {
			if (res->verdicts[i] != EXT_PASS)
				continue;
			if (!first)
				jw_lit(&w, ",");
			first = false;
			jw_str(&w, args->node_names[i]);
		}
		jw_lit(&w, "],\"Nodes\":null");
	} else {
		jw_lit(&w, "{\"Nodes\":{\"metadata\":{},\"items\":[");
		for (size_t i = 0; i < args->n_nodes; i++) {
			if (res->verdicts[i] != EXT_PASS)
				continue;
			char *node = json_dumps(json_array_get((json_t *)args->node_objects, i),
			                        JSON_COMPACT);
			if (!node) {
				w.failed = true;
				break;
			}
			if (!first)
				jw_lit(&w, ",");
			first = false;
			jw_raw(&w, node, strlen(node));
			free(node);
		}
		jw_lit(&w, "]},\"NodeNames\":null");
	}
	jw_lit(&w, ",\"FailedNodes\":");
	write_failed(&w, args, res, EXT_FAIL);
	jw_lit(&w, ",\"FailedAndUnresolvableNodes\":");
	write_failed(&w, args, res, EXT_FAIL_UNRESOLVABLE);
	jw_lit(&w, ",\"Error\":\"\"}");
	return jw_finish(&w);
}

char *ext_prioritize_encode(const struct ext_args *args, const int64_t *scores)
{
	struct jw w;
	jw_init(&w, 16 + args->n_nodes * 40);
	jw_lit(&w, "[");
	for (size_t i = 0; i < args->n_nodes; i++) {
		int64_t s = scores ? scores[i] : 0;
		s = s < 0 ? 0 : s > EXT_MAX_SCORE ? EXT_MAX_SCORE : s;
		if (i)
			jw_lit(&w, ",");
		jw_lit(&w, "{\"Host\":");
		jw_str(&w, args->node_names[i]);
		jw_lit(&w, ",\"Score\":");
		jw_int(&w, (long long)s);
		jw_lit(&w, "}");
	}
	jw_lit(&w, "]");
	return jw_finish(&w);
}

drake_err ext_bind_decode(const char *body, size_t len, const struct ext_limits *lim,
                          struct ext_bind_args *out, char *msg, size_t msglen)
{
	memset(out, 0, sizeof(*out));
	json_t *root;
	drake_err e = parse_root(body, len, &root, msg, msglen);
	if (e)
		return e;
	e = take_string(root, "PodName", "", true, lim->max_name_len, &out->pod_name, msg, msglen);
	if (!e)
		e = take_string(root, "PodNamespace", "", true, lim->max_name_len, &out->pod_ns,
		                msg, msglen);
	if (!e)
		e = take_string(root, "PodUID", "", false, lim->max_name_len, &out->pod_uid, msg,
		                msglen);
	if (!e)
		e = take_string(root, "Node", "", true, lim->max_name_len, &out->node, msg, msglen);
	json_decref(root);
	return e;
}

void ext_bind_release(struct ext_bind_args *b)
{
	if (!b)
		return;
	free(b->pod_name);
	free(b->pod_ns);
	free(b->pod_uid);
	free(b->node);
	memset(b, 0, sizeof(*b));
}

char *ext_binding_object_encode(const struct ext_bind_args *b)
{
	json_t *meta = json_pack("{s:s,s:s}", "name", b->pod_name, "namespace", b->pod_ns);
	if (meta && b->pod_uid && b->pod_uid[0])
		json_object_set_new(meta, "uid", json_string(b->pod_uid));
	return dump(json_pack("{s:s,s:s,s:o,s:{s:s,s:s,s:s}}", "apiVersion", "v1", "kind",
	                      "Binding", "metadata", meta, "target", "apiVersion", "v1", "kind",
	                      "Node", "name", b->node));
}

char *ext_status_message(const char *body, size_t len)
{
	json_t *root = json_loadb(body, len, 0, NULL);
	const json_t *m = json_is_object(root) ? json_object_get(root, "message") : NULL;
	char *s = json_is_string(m) ? strdup(json_string_value(m)) : NULL;
	json_decref(root);
	return s;
}

char *ext_pod_node_name(const char *body, size_t len)
{
	json_t *root = json_loadb(body, len, 0, NULL);
	if (!json_is_object(root)) {
		json_decref(root);
		return NULL;
	}
	const json_t *spec = json_object_get(root, "spec");
	const json_t *n = json_is_object(spec) ? json_object_get(spec, "nodeName") : NULL;
	char *s = strdup(json_is_string(n) ? json_string_value(n) : "");
	json_decref(root);
	return s;
}

drake_err ext_pod_object_decode(const char *body, size_t len, const struct ext_limits *lim,
                                struct ext_pod *out, char **node_name, char *msg, size_t msglen)
{
	memset(out, 0, sizeof(*out));
	*node_name = NULL;
	json_t *root;
	drake_err e = parse_root(body, len, &root, msg, msglen);
	if (e)
		return e;
	e = decode_pod_object(root, lim, out, msg, msglen);
	const json_t *spec = json_object_get(root, "spec");
	const json_t *n = json_is_object(spec) ? json_object_get(spec, "nodeName") : NULL;
	if (!e && !(*node_name = strdup(json_is_string(n) ? json_string_value(n) : "")))
		e = DRAKE_ENOMEM;
	json_decref(root);
	return e;
}

void ext_pod_release(struct ext_pod *pod)
{
	if (pod)
		pod_release(pod);
}

static drake_err decode_victims(const char *node, const json_t *v, bool meta,
                                const struct ext_limits *lim, struct ext_victims *out, char *msg,
                                size_t msglen)
{
	const char *map = meta ? "NodeNameToMetaVictims" : "NodeNameToVictims";
	if (!(out->node = strdup(node)))
		return DRAKE_ENOMEM;
	if (!json_is_object(v))
		return drake_errorf(DRAKE_EINVAL, msg, msglen,
		                    "%s[\"%.64s\"]: expected object, got %s", map, node,
		                    type_name(v));
	const json_t *pdb = get_key(v, "NumPDBViolations");
	if (pdb && !json_is_integer(pdb))
		return drake_errorf(DRAKE_EINVAL, msg, msglen,
		                    "%s[\"%.64s\"].NumPDBViolations: expected integer, got %s", map,
		                    node, type_name(pdb));
	out->num_pdb_violations = pdb ? json_integer_value(pdb) : 0;
	const json_t *pods = get_key(v, "Pods");
	if (!pods)
		return DRAKE_OK;
	if (!json_is_array(pods))
		return drake_errorf(DRAKE_EINVAL, msg, msglen,
		                    "%s[\"%.64s\"].Pods: expected array, got %s", map, node,
		                    type_name(pods));
	size_t n = json_array_size(pods);
	if (n > lim->max_victims)
		return drake_errorf(DRAKE_ELIMIT, msg, msglen,
		                    "%s[\"%.64s\"].Pods: %zu victims exceeds the limit of %zu", map,
		                    node, n, lim->max_victims);
	out->uids = calloc(n ? n : 1, sizeof(char *));
	if (!out->uids)
		return DRAKE_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const json_t *pod = json_array_get(pods, i);
		const json_t *holder = pod;
		const char *key = "UID";
		if (!meta) { /* a full Pod: the UID sits in metadata.uid */
			holder = json_is_object(pod) ? json_object_get(pod, "metadata") : NULL;
			key = "uid";
		}
		if (!json_is_object(holder))
			return drake_errorf(DRAKE_EINVAL, msg, msglen,
			                    "%s[\"%.64s\"].Pods[%zu]: expected object", map, node,
			                    i);
		char path[128];
		snprintf(path, sizeof(path), "%s[\"%.64s\"].Pods[%zu].%s", map, node, i,
		         meta ? "" : "metadata.");
		drake_err e = take_string(holder, key, path, true, lim->max_name_len, &out->uids[i],
		                          msg, msglen);
		if (e)
			return e;
		out->n_uids++;
	}
	return DRAKE_OK;
}

drake_err ext_preempt_decode(const char *body, size_t len, const struct ext_limits *lim,
                             struct ext_preempt_args *out, char *msg, size_t msglen)
{
	memset(out, 0, sizeof(*out));
	json_t *root;
	drake_err e = parse_root(body, len, &root, msg, msglen);
	if (e)
		return e;
	e = decode_pod(root, lim, &out->pod, msg, msglen);
	const json_t *metav = get_key(root, "NodeNameToMetaVictims");
	const json_t *fullv = get_key(root, "NodeNameToVictims");
	const json_t *map = metav ? metav : fullv;
	out->node_cache_mode = metav != NULL;
	if (!e && map && !json_is_object(map))
		e = drake_errorf(DRAKE_EINVAL, msg, msglen, "%s: expected object, got %s",
		                 metav ? "NodeNameToMetaVictims" : "NodeNameToVictims",
		                 type_name(map));
	size_t n = (!e && map) ? json_object_size(map) : 0;
	if (!e)
		e = check_count(n, metav ? "NodeNameToMetaVictims" : "NodeNameToVictims", lim, msg,
		                msglen);
	if (!e && n && !(out->nodes = calloc(n, sizeof(*out->nodes))))
		e = DRAKE_ENOMEM;
	if (!e && n) {
		const char *node;
		json_t *v;
		json_object_foreach ((json_t *)map, node, v) {
			e = decode_victims(node, v, metav != NULL, lim, &out->nodes[out->n_nodes++],
			                   msg, msglen);
			if (e)
				break;
		}
	}
	json_decref(root);
	return e;
}

void ext_preempt_release(struct ext_preempt_args *p)
{
	if (!p)
		return;
	pod_release(&p->pod);
	for (size_t i = 0; i < p->n_nodes; i++) {
		free(p->nodes[i].node);
		for (size_t j = 0; j < p->nodes[i].n_uids; j++)
			free(p->nodes[i].uids[j]);
		free(p->nodes[i].uids);
	}
	free(p->nodes);
	memset(p, 0, sizeof(*p));
}

char *ext_preempt_encode(const struct ext_preempt_args *p, const bool *keep)
{
	json_t *map = json_object();
	for (size_t i = 0; map && i < p->n_nodes; i++) {
		if (keep && !keep[i])
			continue;
		const struct ext_victims *v = &p->nodes[i];
		json_t *pods = json_array();
		for (size_t j = 0; pods && j < v->n_uids; j++)
			if (json_array_append_new(pods, json_pack("{s:s}", "UID", v->uids[j])))
				goto fail_pods;
		if (json_object_set_new(map, v->node,
		                        json_pack("{s:o,s:I}", "Pods", pods, "NumPDBViolations",
		                                  (json_int_t)v->num_pdb_violations)))
			goto fail;
		continue;
	fail_pods:
		json_decref(pods);
	fail:
		json_decref(map);
		return NULL;
	}
	return dump(map ? json_pack("{s:o}", "NodeNameToMetaVictims", map) : NULL);
}
