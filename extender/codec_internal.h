/*
 * codec_internal.h - shared by the codec's files only: the streaming fast
 * path for ExtenderArgs and the small JSON writer the hot encoders use.
 */
#ifndef DRAKE_EXTENDER_CODEC_INTERNAL_H
#define DRAKE_EXTENDER_CODEC_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "extender/codec.h"

/* Decodes a plain node-name-mode ExtenderArgs; false means "not handled
 * here" (out is released), and the jansson decoder must take the body. */
bool codec_args_decode_fast(const char *body, size_t len, const struct ext_limits *lim,
                            struct ext_args *out);

/* The authoritative decoder on a jansson tree: every shape, every error
 * message. ext_args_decode() tries the fast path first, then this. */
drake_err codec_args_decode_tree(const char *body, size_t len, const struct ext_limits *lim,
                                 struct ext_args *out, char *msg, size_t msglen) DRAKE_MUST_CHECK;

/* True when two decoded ExtenderArgs are the same (node objects aside). */
bool codec_args_equal(const struct ext_args *a, const struct ext_args *b);

/* A growable output buffer. After any allocation failure every call is a
 * no-op and jw_finish() returns NULL, so encoders check once at the end. */
struct jw {
	char *buf;
	size_t len, cap;
	bool failed;
};

void jw_init(struct jw *w, size_t hint);
/* Grows the buffer for more bytes; false after an allocation failure. */
bool jw_grow(struct jw *w, size_t more);

static inline void jw_raw(struct jw *w, const char *s, size_t len)
{
	if (w->len + len + 1 > w->cap && !jw_grow(w, len))
		return;
	memcpy(w->buf + w->len, s, len);
	w->len += len;
}

#define jw_lit(w, s) jw_raw((w), (s), sizeof(s) - 1)
/* A JSON string: quoted, with ", \ and control characters escaped. */
void jw_str(struct jw *w, const char *s);
void jw_int(struct jw *w, long long v);
/* The NUL-terminated text (caller frees), or NULL if anything failed. */
char *jw_finish(struct jw *w);

#endif
