/*
 * codec_write.c - a minimal JSON writer for the responses that carry one
 * entry per node (filter's NodeNames, prioritize's HostPriorityList), where
 * building a jansson tree first would cost more than the rest of the call.
 * Strings written here are either drake's own or were validated as UTF-8 by
 * the parser, so escaping is the RFC 8259 minimum.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "extender/codec_internal.h"

void jw_init(struct jw *w, size_t hint)
{
	w->len = 0;
	w->cap = hint < 64 ? 64 : hint;
	w->buf = malloc(w->cap);
	w->failed = w->buf == NULL;
}

bool jw_grow(struct jw *w, size_t more)
{
	if (w->failed)
		return false;
	if (w->len + more + 1 <= w->cap)
		return true;
	size_t cap = w->cap;
	while (w->len + more + 1 > cap)
		cap *= 2;
	char *b = realloc(w->buf, cap);
	if (!b) {
		w->failed = true;
		return false;
	}
	w->buf = b;
	w->cap = cap;
	return true;
}

/* 1 for the bytes a JSON string must escape: controls, '"' and '\\'. */
static const unsigned char must_escape[256] = {
    [0x00 ... 0x1f] = 1,
    ['"'] = 1,
    ['\\'] = 1,
};

void jw_str(struct jw *w, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 0;
	while (!must_escape[p[n]])
		n++;
	if (p[n] == '\0' && jw_grow(w, n + 2)) { /* the common case: nothing to escape */
		char *o = w->buf + w->len;
		o[0] = '"';
		memcpy(o + 1, s, n);
		o[n + 1] = '"';
		w->len += n + 2;
		return;
	}
	jw_lit(w, "\"");
	for (;;) {
		jw_raw(w, (const char *)p, n);
		p += n;
		unsigned char c = *p++;
		if (c == '\0')
			break;
		char esc[6] = {'\\', (char)c, 0, 0, 0, 0};
		size_t elen = 2;
		switch (c) {
		case '"':
		case '\\': break;
		case '\n': esc[1] = 'n'; break;
		case '\r': esc[1] = 'r'; break;
		case '\t': esc[1] = 't'; break;
		case '\b': esc[1] = 'b'; break;
		case '\f': esc[1] = 'f'; break;
		default:
			memcpy(esc + 1, "u00", 3);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			elen = 6;
		}
		jw_raw(w, esc, elen);
		n = 0;
		while (!must_escape[p[n]])
			n++;
	}
	jw_lit(w, "\"");
}

void jw_int(struct jw *w, long long v)
{
	char b[24];
	size_t i = sizeof(b);
	unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
	do
		b[--i] = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	if (v < 0)
		b[--i] = '-';
	jw_raw(w, b + i, sizeof(b) - i);
}

char *jw_finish(struct jw *w)
{
	if (w->failed || !jw_grow(w, 0)) {
		free(w->buf);
		w->buf = NULL;
		return NULL;
	}
	w->buf[w->len] = '\0';
	char *out = w->buf;
	w->buf = NULL;
	return out;
}
