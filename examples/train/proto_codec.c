/*
 * proto_codec.c - proto.h's frames to and from bytes. Decoding trusts
 * nothing: every length is checked against the payload and the caller's
 * array before anything is read, and each type has one exact size.
 */
#include "examples/train/proto.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static const char *const names[PROTO_NTYPES] = {
    "?", "HELLO", "WELCOME", "PULL", "PUSH", "EVAL", "WEIGHTS", "FINISH", "DONE", "ERROR",
};

const char *proto_type_name(enum proto_type t)
{
	return t > 0 && t < PROTO_NTYPES ? names[t] : "?";
}

/* ---- big-endian writer and reader ---- */

struct wr {
	uint8_t *p;
	size_t len, cap;
	bool bad;
};

static void put(struct wr *w, uint64_t v, int bytes)
{
	if (w->len + (size_t)bytes > w->cap) {
		w->bad = true;
		return;
	}
	for (int i = bytes - 1; i >= 0; i--)
		w->p[w->len++] = (uint8_t)(v >> (8 * i));
}

static void put_f64(struct wr *w, double d)
{
	uint64_t v;
	if (!isfinite(d))
		w->bad = true;
	memcpy(&v, &d, sizeof(v));
	put(w, v, 8);
}

struct rd {
	const uint8_t *p;
	size_t len, at;
};

static uint64_t get(struct rd *r, int bytes)
{
	uint64_t v = 0;
	for (int i = 0; i < bytes; i++)
		v = v << 8 | r->p[r->at++];
	return v;
}

static double get_f64(struct rd *r)
{
	uint64_t v = get(r, 8);
	double d;
	memcpy(&d, &v, sizeof(d));
	return d;
}

/* Fixed part of each payload; PUSH and WEIGHTS add 8 * n. */
static size_t fixed_len(enum proto_type t)
{
	switch (t) {
	case PROTO_HELLO: return 20;
	case PROTO_WELCOME: return 16;
	case PROTO_PULL: return 0;
	case PROTO_PUSH: return 28;
	case PROTO_EVAL: return 24;
	case PROTO_WEIGHTS: return 32;
	case PROTO_FINISH: return 20;
	case PROTO_DONE: return 16;
	default: return 0;
	}
}

size_t proto_frame_len(const struct proto_msg *m)
{
	size_t n = fixed_len(m->type);
	if (m->type == PROTO_PUSH || m->type == PROTO_WEIGHTS)
		n += 8 * (size_t)m->n;
	else if (m->type == PROTO_ERROR)
		n = strnlen(m->text, PROTO_TEXT_MAX);
	return PROTO_HEADER + n;
}

size_t proto_encode(const struct proto_msg *m, uint8_t *buf, size_t cap)
{
	if (m->type <= 0 || m->type >= PROTO_NTYPES)
		return 0;
	if ((m->type == PROTO_PUSH || m->type == PROTO_WEIGHTS) &&
	    (m->n > PROTO_PARAMS_MAX || (m->n && !m->params)))
		return 0;
	size_t total = proto_frame_len(m);
	struct wr w = {buf, 0, cap, false};
	put(&w, PROTO_MAGIC, 4);
	put(&w, (uint64_t)m->type, 2);
	put(&w, 0, 2);
	put(&w, total - PROTO_HEADER, 4);
	switch (m->type) {
	case PROTO_HELLO:
		put(&w, m->role, 1);
		put(&w, 0, 3);
		put(&w, m->index, 4);
		for (int i = 0; i < 3; i++)
			put(&w, m->shape[i], 4);
		break;
	case PROTO_WELCOME:
		put(&w, m->ps_id, 8);
		put(&w, m->step, 8);
		break;
	case PROTO_PULL: break;
	case PROTO_PUSH:
		put(&w, m->ps_id, 8);
		put(&w, m->step, 8);
		put_f64(&w, m->loss);
		put(&w, m->n, 4);
		for (uint32_t i = 0; i < m->n; i++)
			put_f64(&w, m->params[i]);
		break;
	case PROTO_EVAL:
		put(&w, m->step, 8);
		put_f64(&w, m->accuracy);
		put_f64(&w, m->loss);
		break;
	case PROTO_WEIGHTS:
		put(&w, m->ps_id, 8);
		put(&w, m->step, 8);
		put(&w, m->live, 4);
		put(&w, m->rank, 4);
		put(&w, m->flag, 1);
		put(&w, 0, 3);
		put(&w, m->n, 4);
		for (uint32_t i = 0; i < m->n; i++)
			put_f64(&w, m->params[i]);
		break;
	case PROTO_FINISH:
		put(&w, m->step, 8);
		put_f64(&w, m->accuracy);
		put(&w, m->flag, 1);
		put(&w, 0, 3);
		break;
	case PROTO_DONE:
		put(&w, m->step, 8);
		put_f64(&w, m->accuracy);
		break;
	case PROTO_ERROR:
		for (size_t i = 0; i < total - PROTO_HEADER; i++)
			put(&w, (uint8_t)m->text[i], 1);
		break;
	default: return 0;
	}
	return w.bad || w.len != total ? 0 : w.len;
}

drake_err proto_header(const uint8_t *hdr, enum proto_type *type, uint32_t *len, char *msg,
                       size_t msglen)
{
	struct rd r = {hdr, PROTO_HEADER, 0};
	uint32_t magic = (uint32_t)get(&r, 4);
	uint32_t t = (uint32_t)get(&r, 2), reserved = (uint32_t)get(&r, 2);
	*len = (uint32_t)get(&r, 4);
	if (magic != PROTO_MAGIC)
		return drake_errorf(DRAKE_EINVAL, msg, msglen,
		                    "not drake-train's protocol (magic 0x%08x, expected 0x%08x)",
		                    magic, PROTO_MAGIC);
	if (t == 0 || t >= PROTO_NTYPES || reserved != 0)
		return drake_errorf(DRAKE_EINVAL, msg, msglen, "unknown message type %u", t);
	if (*len > PROTO_PAYLOAD_MAX)
		return drake_errorf(DRAKE_ELIMIT, msg, msglen,
		                    "a %s of %u bytes, over the limit of %u", names[t], *len,
		                    (unsigned)PROTO_PAYLOAD_MAX);
	*type = (enum proto_type)t;
	return DRAKE_OK;
}

/* Reads n doubles into params, refusing non-finite ones. */
static drake_err get_doubles(struct rd *r, uint32_t n, double *params, const char *what, char *msg,
                             size_t msglen)
{
	for (uint32_t i = 0; i < n; i++) {
		params[i] = get_f64(r);
		if (!isfinite(params[i]))
			return drake_errorf(DRAKE_EINVAL, msg, msglen,
			                    "%s: value %u is not a finite number", what, i);
	}
	return DRAKE_OK;
}

drake_err proto_decode(enum proto_type type, const uint8_t *p, size_t len, struct proto_msg *m,
                       double *params, size_t cap, char *msg, size_t msglen)
{
	memset(m, 0, sizeof(*m));
	m->type = type;
	if (type <= 0 || type >= PROTO_NTYPES)
		return drake_errorf(DRAKE_EINVAL, msg, msglen, "unknown message type %d",
		                    (int)type);
	const char *name = names[type];
	struct rd r = {p, len, 0};
	size_t fixed = fixed_len(type);
	if (type == PROTO_ERROR) {
		if (len > PROTO_TEXT_MAX)
			return drake_errorf(DRAKE_ELIMIT, msg, msglen,
			                    "ERROR: %zu bytes of text, over %d", len,
			                    PROTO_TEXT_MAX);
		memcpy(m->text, p, len);
		m->text[len] = '\0';
		for (size_t i = 0; i < len; i++)
			if ((unsigned char)m->text[i] < ' ')
				m->text[i] = ' '; /* it is printed: no control characters */
		return DRAKE_OK;
	}
	if (len < fixed)
		return drake_errorf(DRAKE_EINVAL, msg, msglen, "%s: %zu bytes, expected %zu", name,
		                    len, fixed);
	switch (type) {
	case PROTO_HELLO:
		m->role = (uint8_t)get(&r, 1);
		r.at += 3;
		m->index = (uint32_t)get(&r, 4);
		for (int i = 0; i < 3; i++)
			m->shape[i] = (uint32_t)get(&r, 4);
		if (m->role > PROTO_ROLE_EVALUATOR)
			return drake_errorf(DRAKE_EINVAL, msg, msglen, "HELLO: unknown role %u",
			                    m->role);
		break;
	case PROTO_WELCOME:
		m->ps_id = get(&r, 8);
		m->step = get(&r, 8);
		break;
	case PROTO_PULL: break;
	case PROTO_PUSH:
	case PROTO_WEIGHTS:
		m->ps_id = get(&r, 8);
		m->step = get(&r, 8);
		if (type == PROTO_PUSH) {
			m->loss = get_f64(&r);
		} else {
			m->live = (uint32_t)get(&r, 4);
			m->rank = (uint32_t)get(&r, 4);
			m->flag = (uint8_t)get(&r, 1);
			r.at += 3;
		}
		m->n = (uint32_t)get(&r, 4);
		if (m->n > cap || m->n > PROTO_PARAMS_MAX)
			return drake_errorf(DRAKE_ELIMIT, msg, msglen,
			                    "%s: %u values, but the model has %zu", name, m->n,
			                    cap);
		if (len != fixed + 8 * (size_t)m->n)
			return drake_errorf(DRAKE_EINVAL, msg, msglen,
			                    "%s: %zu bytes, expected %zu for %u values", name, len,
			                    fixed + 8 * (size_t)m->n, m->n);
		m->params = params;
		if (type == PROTO_PUSH && !isfinite(m->loss))
			return drake_errorf(DRAKE_EINVAL, msg, msglen,
			                    "PUSH: the loss is not a finite number");
		return get_doubles(&r, m->n, params, name, msg, msglen);
	case PROTO_EVAL:
		m->step = get(&r, 8);
		m->accuracy = get_f64(&r);
		m->loss = get_f64(&r);
		break;
	case PROTO_FINISH:
		m->step = get(&r, 8);
		m->accuracy = get_f64(&r);
		m->flag = (uint8_t)get(&r, 1);
		break;
	case PROTO_DONE:
		m->step = get(&r, 8);
		m->accuracy = get_f64(&r);
		break;
	default: break;
	}
	if (len != fixed)
		return drake_errorf(DRAKE_EINVAL, msg, msglen, "%s: %zu bytes, expected %zu", name,
		                    len, fixed);
	if (!isfinite(m->accuracy) || !isfinite(m->loss))
		return drake_errorf(DRAKE_EINVAL, msg, msglen, "%s: a value is not a finite number",
		                    name);
	return DRAKE_OK;
}
