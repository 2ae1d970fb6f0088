/*
 * watch_parse.c - watch-stream framing and event decoding, and list-response
 * decoding, with jansson. Everything here is untrusted input from the API
 * server (or whatever answers in its place): lengths are capped before
 * parsing, shapes are checked before use, and nothing is half-applied.
 *
 * Ownership: see watch_parse.h; the parser's line buffer grows to at most
 * max_event + 1 bytes and is freed by kube_watch_parser_release().
 */
#include "kube/watch_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

const char *kube_event_type_name(enum kube_event_type t)
{
	switch (t) {
	case KUBE_EVENT_ADDED: return "ADDED";
	case KUBE_EVENT_MODIFIED: return "MODIFIED";
	case KUBE_EVENT_DELETED: return "DELETED";
	case KUBE_EVENT_BOOKMARK: return "BOOKMARK";
	case KUBE_EVENT_ERROR: return "ERROR";
	}
	return "?";
}

static bool parse_type(const char *s, enum kube_event_type *t)
{
	static const struct {
		const char *name;
		enum kube_event_type type;
	} types[] = {
	    {"ADDED", KUBE_EVENT_ADDED},     {"MODIFIED", KUBE_EVENT_MODIFIED},
	    {"DELETED", KUBE_EVENT_DELETED}, {"BOOKMARK", KUBE_EVENT_BOOKMARK},
	    {"ERROR", KUBE_EVENT_ERROR},
	};
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		if (!strcmp(s, types[i].name)) {
			*t = types[i].type;
			return true;
		}
	}
	return false;
}

/* Checks an object's metadata and copies its resourceVersion. name is
 * required except for bookmarks, which carry only a resourceVersion. */
static drake_err check_object(json_t *obj, bool need_name, char rv[KUBE_RV_MAX], char *msg,
                              size_t msglen)
{
	if (!json_is_object(obj))
		return drake_errorf(DRAKE_EINVAL, msg, msglen, "object is not a JSON object");
	json_t *meta = json_object_get(obj, "metadata");
	if (!json_is_object(meta))
		return drake_errorf(DRAKE_EINVAL, msg, msglen, "object has no metadata");
	json_t *name = json_object_get(meta, "name");
	if (need_name && (!json_is_string(name) || json_string_length(name) == 0))
		return drake_errorf(DRAKE_EINVAL, msg, msglen, "object has no metadata.name");
	json_t *ns = json_object_get(meta, "namespace");
	if (ns && !json_is_string(ns))
		return drake_errorf(DRAKE_EINVAL, msg, msglen,
		                    "metadata.namespace is not a string");
	json_t *jrv = json_object_get(meta, "resourceVersion");
	rv[0] = '\0';
	if (jrv) {
		if (!json_is_string(jrv) || json_string_length(jrv) >= KUBE_RV_MAX)
			return drake_errorf(DRAKE_EINVAL, msg, msglen,
			                    "metadata.resourceVersion is not a short string");
		memcpy(rv, json_string_value(jrv), json_string_length(jrv) + 1);
		if (strlen(rv) != json_string_length(jrv))
			return drake_errorf(DRAKE_EINVAL, msg, msglen,
			                    "metadata.resourceVersion contains a NUL");
	}
	return DRAKE_OK;
}

drake_err kube_watch_decode(const char *line, size_t len, struct kube_watch_event *ev, char *msg,
                            size_t msglen)
{
	memset(ev, 0, sizeof(*ev));
	json_error_t jerr;
	json_t *root = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root)
		return drake_errorf(DRAKE_EINVAL, msg, msglen, "watch event is not JSON: %s at %d",
		                    jerr.text, jerr.position);
	drake_err e = DRAKE_OK;
	json_t *type = json_object_get(root, "type");
	json_t *obj = json_object_get(root, "object");
	if (!json_is_string(type) || !parse_type(json_string_value(type), &ev->type)) {
		e = drake_errorf(DRAKE_EINVAL, msg, msglen, "watch event has no known type");
		goto out;
	}
	if (!json_is_object(obj)) {
		e = drake_errorf(DRAKE_EINVAL, msg, msglen, "%s event has no object",
		                 kube_event_type_name(ev->type));
		goto out;
	}
	if (ev->type == KUBE_EVENT_ERROR) {
		json_t *code = json_object_get(obj, "code");
		json_t *m = json_object_get(obj, "message");
		ev->error_code = json_is_integer(code) ? (long)json_integer_value(code) : 0;
		snprintf(ev->error_message, sizeof(ev->error_message), "%s",
		         json_is_string(m) ? json_string_value(m) : "");
	} else {
		char inner[160];
		e = check_object(obj, ev->type != KUBE_EVENT_BOOKMARK, ev->resource_version, inner,
		                 sizeof(inner));
		if (e != DRAKE_OK) {
			drake_errorf(e, msg, msglen, "%s event: %s", kube_event_type_name(ev->type),
			             inner);
			goto out;
		}
		if (ev->type == KUBE_EVENT_BOOKMARK && !ev->resource_version[0]) {
			e = drake_errorf(DRAKE_EINVAL, msg, msglen,
			                 "BOOKMARK event without resourceVersion");
			goto out;
		}
	}
	ev->object = json_incref(obj);
out:
	json_decref(root);
	return e;
}

void kube_watch_event_release(struct kube_watch_event *ev)
{
	if (!ev)
		return;
	json_decref(ev->object);
	ev->object = NULL;
}

void kube_watch_parser_init(struct kube_watch_parser *p, size_t max_event)
{
	memset(p, 0, sizeof(*p));
	p->max_event = max_event ? max_event : KUBE_WATCH_EVENT_MAX;
}

void kube_watch_parser_release(struct kube_watch_parser *p)
{
	if (!p)
		return;
	free(p->buf);
	p->buf = NULL;
	p->len = p->cap = 0;
}

void kube_watch_parser_reset(struct kube_watch_parser *p)
{
	p->len = 0;
}

size_t kube_watch_parser_pending(const struct kube_watch_parser *p)
{
	return p->len;
}

static drake_err emit(const char *line, size_t len, kube_watch_event_cb cb, void *arg, char *msg,
                      size_t msglen)
{
	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' '))
		len--;
	if (len == 0)
		return DRAKE_OK; /* blank keep-alive line */
	struct kube_watch_event ev;
	drake_err e = kube_watch_decode(line, len, &ev, msg, msglen);
	if (e != DRAKE_OK)
		return e;
	cb(&ev, arg);
	kube_watch_event_release(&ev);
	return DRAKE_OK;
}

static drake_err buffer(struct kube_watch_parser *p, const char *data, size_t n, char *msg,
                        size_t msglen)
{
	if (n > p->max_event - p->len)
		return drake_errorf(DRAKE_ELIMIT, msg, msglen, "watch event larger than %zu bytes",
		                    p->max_event);
	if (p->len + n > p->cap) {
		size_t cap = p->cap ? p->cap : 8192;
		while (cap < p->len + n)
			cap *= 2;
		if (cap > p->max_event)
			cap = p->max_event;
		char *b = realloc(p->buf, cap);
		if (!b)
			return drake_errorf(DRAKE_ENOMEM, msg, msglen,
			                    "out of memory buffering an event");
		p->buf = b;
		p->cap = cap;
	}
	memcpy(p->buf + p->len, data, n);
	p->len += n;
	return DRAKE_OK;
}

drake_err kube_watch_parser_feed(struct kube_watch_parser *p, const char *data, size_t len,
                                 kube_watch_event_cb cb, void *arg, char *msg, size_t msglen)
{
	while (len > 0) {
		const char *nl = memchr(data, '\n', len);
		size_t n = nl ? (size_t)(nl - data) : len;
		drake_err e;
		if (nl && p->len == 0) {
			/* the common case: a whole event in this chunk, no copy */
			if (n > p->max_event)
				return drake_errorf(DRAKE_ELIMIT, msg, msglen,
				                    "watch event larger than %zu bytes",
				                    p->max_event);
			e = emit(data, n, cb, arg, msg, msglen);
		} else {
			e = buffer(p, data, n, msg, msglen);
			if (e == DRAKE_OK && nl) {
				e = emit(p->buf, p->len, cb, arg, msg, msglen);
				p->len = 0;
			}
		}
		if (e != DRAKE_OK)
			return e;
		if (!nl)
			break;
		data = nl + 1;
		len -= n + 1;
	}
	return DRAKE_OK;
}

drake_err kube_list_decode(const char *body, size_t len, kube_watch_event_cb cb, void *arg,
                           char rv[KUBE_RV_MAX], char *cont, size_t contlen, char *msg,
                           size_t msglen)
{
	rv[0] = '\0';
	if (contlen)
		cont[0] = '\0';
	json_error_t jerr;
	json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root)
		return drake_errorf(DRAKE_EINVAL, msg, msglen, "list is not JSON: %s at %d",
		                    jerr.text, jerr.position);
	drake_err e = DRAKE_OK;
	json_t *meta = json_object_get(root, "metadata");
	json_t *items = json_object_get(root, "items");
	json_t *jrv = json_object_get(meta, "resourceVersion");
	json_t *jc = json_object_get(meta, "continue");
	if (!json_is_string(jrv) || json_string_length(jrv) == 0 ||
	    json_string_length(jrv) >= KUBE_RV_MAX) {
		e = drake_errorf(DRAKE_EINVAL, msg, msglen,
		                 "list has no usable metadata.resourceVersion");
		goto out;
	}
	if (!json_is_array(items) && !json_is_null(items)) {
		e = drake_errorf(DRAKE_EINVAL, msg, msglen, "list items is not an array");
		goto out;
	}
	if (json_array_size(items) > KUBE_LIST_ITEMS_MAX) {
		e = drake_errorf(DRAKE_ELIMIT, msg, msglen, "list has more than %d items",
		                 KUBE_LIST_ITEMS_MAX);
		goto out;
	}
	if (jc && json_is_string(jc) && json_string_length(jc) > 0) {
		if (json_string_length(jc) >= contlen) {
			e = drake_errorf(DRAKE_ELIMIT, msg, msglen, "list continue token too long");
			goto out;
		}
		memcpy(cont, json_string_value(jc), json_string_length(jc) + 1);
	}
	/* check every item before handing out any, so a bad list changes nothing */
	size_t i;
	json_t *it;
	char irv[KUBE_RV_MAX], inner[160];
	json_array_foreach (items, i, it) {
		if ((e = check_object(it, true, irv, inner, sizeof(inner))) != DRAKE_OK) {
			drake_errorf(e, msg, msglen, "list item %zu: %s", i, inner);
			goto out;
		}
	}
	json_array_foreach (items, i, it) {
		struct kube_watch_event ev = {.type = KUBE_EVENT_ADDED, .object = it};
		if (check_object(it, true, ev.resource_version, inner, sizeof(inner)) == DRAKE_OK)
			cb(&ev, arg);
	}
	memcpy(rv, json_string_value(jrv), json_string_length(jrv) + 1);
out:
	json_decref(root);
	return e;
}
