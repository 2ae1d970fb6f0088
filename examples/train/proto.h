/*
 * proto.h - the wire protocol between drake-train's PS and its workers.
 *
 * One TCP connection per worker, opened by the worker; every request gets
 * exactly one answer, in order. A frame is a 12-byte header and a payload:
 *
 *   magic    u32  0x444b5431 ("DKT1": drake-train, protocol version 1)
 *   type     u16  enum proto_type
 *   reserved u16  0
 *   length   u32  payload bytes, at most PROTO_PAYLOAD_MAX
 *
 * Integers are big-endian; a double is its IEEE 754 bits as a big-endian
 * u64, and every double on the wire must be finite. Payloads by type:
 *
 *   HELLO    w->ps  role u8 (0 chief, 1 worker, 2 evaluator), 3 zero bytes,
 *                   index u32, in u32, hidden u32, out u32 (the model's shape)
 *   WELCOME  ps->w  ps_id u64, step u64
 *   PULL     w->ps  (empty)
 *   PUSH     w->ps  ps_id u64, step u64 (of the weights the gradient was taken
 *                   at), loss f64, n u32, gradient f64[n]
 *   EVAL     w->ps  step u64, accuracy f64, loss f64 (the coordinator's test)
 *   WEIGHTS  ps->w  ps_id u64, step u64, live u32, rank u32, applied u8,
 *                   3 zero bytes, n u32, weights f64[n]
 *   FINISH   w->ps  step u64, accuracy f64, reached u8 (1: the target
 *                   accuracy, 0: the step cap), 3 zero bytes
 *   DONE     ps->w  step u64, accuracy f64
 *   ERROR    ps->w  the reason, UTF-8, at most PROTO_TEXT_MAX bytes
 *
 * A worker says HELLO first; the PS answers WELCOME, or ERROR when the
 * model's shape differs from its own. PULL, PUSH and EVAL are answered with
 * WEIGHTS: the current weights and global step, and the worker's rank among
 * the training replicas connected now (live), by which it picks its shard.
 * PUSH's gradient is applied (applied = 1) unless it was taken on another
 * PS's weights (ps_id: the PS restarted and began again) or the step cap is
 * reached. FINISH, sent by the coordinator (the chief, else worker 0), ends
 * the job: the PS answers it, and every later request from anyone, with DONE,
 * on which a worker exits 0. ERROR is permanent: the worker exits 1 with it.
 */
#ifndef DRAKE_TRAIN_PROTO_H
#define DRAKE_TRAIN_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

#define PROTO_MAGIC       0x444b5431u
#define PROTO_HEADER      12
#define PROTO_PARAMS_MAX  (1u << 20) /* doubles in one frame (8 MiB) */
#define PROTO_PAYLOAD_MAX (48 + 8 * PROTO_PARAMS_MAX)
#define PROTO_TEXT_MAX    512

enum proto_type {
	PROTO_HELLO = 1,
	PROTO_WELCOME,
	PROTO_PULL,
	PROTO_PUSH,
	PROTO_EVAL,
	PROTO_WEIGHTS,
	PROTO_FINISH,
	PROTO_DONE,
	PROTO_ERROR,
	PROTO_NTYPES
};

enum proto_role { PROTO_ROLE_CHIEF, PROTO_ROLE_WORKER, PROTO_ROLE_EVALUATOR };

/* One message; which fields mean something depends on type (above). */
struct proto_msg {
	enum proto_type type;
	uint8_t role;
	uint32_t index;
	uint32_t shape[3]; /* in, hidden, out */
	uint64_t ps_id, step;
	uint32_t live, rank;
	uint8_t flag; /* WEIGHTS: applied; FINISH: reached */
	double accuracy, loss;
	uint32_t n;
	double *params; /* n doubles: the caller's array */
	char text[PROTO_TEXT_MAX + 1];
};

const char *proto_type_name(enum proto_type t);

/* Bytes the encoded frame (header included) takes. */
size_t proto_frame_len(const struct proto_msg *m);

/* Writes the frame into buf; returns its length, or 0 when cap is too small
 * or the message cannot be sent (a non-finite double, n over the limit). */
size_t proto_encode(const struct proto_msg *m, uint8_t *buf, size_t cap);

/* Checks a header; fills *type and *len (the payload's). */
drake_err proto_header(const uint8_t *hdr, enum proto_type *type, uint32_t *len, char *msg,
                       size_t msglen) DRAKE_MUST_CHECK;

/* Decodes a payload of type. Doubles go into params, which holds cap; a
 * frame with more is refused. */
drake_err proto_decode(enum proto_type type, const uint8_t *p, size_t len, struct proto_msg *m,
                       double *params, size_t cap, char *msg, size_t msglen) DRAKE_MUST_CHECK;

#endif
