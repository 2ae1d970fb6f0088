/*
 * watch_parse.h - the untrusted-input half of the informers: splits a watch
 * stream into newline-delimited JSON events (each under a size limit) and
 * decodes them, and decodes list responses. No I/O; jansson stays inside.
 *
 * Ownership: objects handed to callbacks are borrowed for the duration of
 * the callback; take a reference with kube_obj_ref() to keep one. The parser
 * owns its line buffer; kube_watch_parser_release() frees it.
 */
#ifndef DRAKE_KUBE_WATCH_PARSE_H
#define DRAKE_KUBE_WATCH_PARSE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"

struct json_t;

/* Default largest single watch event (one object; etcd's own limit is 1.5 MiB). */
#define KUBE_WATCH_EVENT_MAX (4 * 1024 * 1024)
/* Most items one list page may hold. */
#define KUBE_LIST_ITEMS_MAX 100000
/* Longest resourceVersion kept (they are opaque but short). */
#define KUBE_RV_MAX 128

enum kube_event_type {
	KUBE_EVENT_ADDED,
	KUBE_EVENT_MODIFIED,
	KUBE_EVENT_DELETED,
	KUBE_EVENT_BOOKMARK,
	KUBE_EVENT_ERROR,
};

struct kube_watch_event {
	enum kube_event_type type;
	struct json_t *object;              /* borrowed; has metadata.name unless BOOKMARK/ERROR */
	char resource_version[KUBE_RV_MAX]; /* object's metadata.resourceVersion, "" for ERROR */
	long error_code;                    /* ERROR: the Status code (410 means relist) */
	char error_message[160];            /* ERROR: the Status message */
};

const char *kube_event_type_name(enum kube_event_type t);

/* Decodes one event line (without its newline). */
drake_err kube_watch_decode(const char *line, size_t len, struct kube_watch_event *ev, char *msg,
                            size_t msglen) DRAKE_MUST_CHECK;
/* Drops the reference kube_watch_decode() took. */
void kube_watch_event_release(struct kube_watch_event *ev);

typedef void (*kube_watch_event_cb)(const struct kube_watch_event *ev, void *arg);

struct kube_watch_parser {
	char *buf; /* bytes of the event not yet ended by a newline */
	size_t len, cap, max_event;
};

void kube_watch_parser_init(struct kube_watch_parser *p, size_t max_event);
void kube_watch_parser_release(struct kube_watch_parser *p);
/* Feeds a chunk of the stream; calls cb for each complete event, in order.
 * Stops at the first bad event (ELIMIT for one over max_event, EINVAL for
 * malformed JSON or a bad shape) and the parser must then be reset: a watch
 * that skipped an event would leave the cache wrong, so callers relist. */
drake_err kube_watch_parser_feed(struct kube_watch_parser *p, const char *data, size_t len,
                                 kube_watch_event_cb cb, void *arg, char *msg,
                                 size_t msglen) DRAKE_MUST_CHECK;
/* Bytes of an unfinished event: non-zero when a stream ended mid-event. */
size_t kube_watch_parser_pending(const struct kube_watch_parser *p);
void kube_watch_parser_reset(struct kube_watch_parser *p);

/* Decodes a list response ({"metadata":{"resourceVersion","continue"},"items":[...]}),
 * calling cb(item) for every item, with ADDED as the type. rv and cont receive
 * the list's resourceVersion and continue token ("" when absent). */
drake_err kube_list_decode(const char *body, size_t len, kube_watch_event_cb cb, void *arg,
                           char rv[KUBE_RV_MAX], char *cont, size_t contlen, char *msg,
                           size_t msglen) DRAKE_MUST_CHECK;

#endif
