/*
 * proto_test.c - the PS/worker wire codec: every message survives a round
 * trip, the bytes are the ones proto.h documents, and truncated, oversized,
 * mistyped or non-finite frames are refused with a reason.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "examples/train/proto.h"

/* Encodes m, checks the header, decodes the payload into *out. */
static drake_err round_trip(const struct proto_msg *m, struct proto_msg *out, double *params,
                            size_t cap, char *msg)
{
	uint8_t buf[4096];
	size_t n = proto_encode(m, buf, sizeof(buf));
	assert_int_equal(n, proto_frame_len(m));
	enum proto_type type;
	uint32_t len;
	assert_int_equal(proto_header(buf, &type, &len, msg, 256), DRAKE_OK);
	assert_int_equal(type, m->type);
	assert_int_equal(len + PROTO_HEADER, n);
	return proto_decode(type, buf + PROTO_HEADER, len, out, params, cap, msg, 256);
}

static void test_every_message_survives_a_round_trip(void **state)
{
	double w[3] = {0.5, -1.25, 3e-300}, got[3];
	struct proto_msg msgs[] = {
	    {.type = PROTO_HELLO, .role = PROTO_ROLE_WORKER, .index = 7, .shape = {64, 32, 10}},
	    {.type = PROTO_WELCOME, .ps_id = 0x0123456789abcdefULL, .step = 42},
	    {.type = PROTO_PULL},
	    {.type = PROTO_PUSH, .ps_id = 9, .step = 1ULL << 40, .loss = 2.5, .n = 3, .params = w},
	    {.type = PROTO_EVAL, .step = 100, .accuracy = 0.9611, .loss = 0.12},
	    {.type = PROTO_WEIGHTS,
	     .ps_id = 9,
	     .step = 5,
	     .live = 3,
	     .rank = 2,
	     .flag = 1,
	     .n = 3,
	     .params = w},
	    {.type = PROTO_FINISH, .step = 900, .accuracy = 0.97, .flag = 1},
	    {.type = PROTO_DONE, .step = 900, .accuracy = 0.97},
	    {.type = PROTO_ERROR, .text = "model mismatch"},
	};
	for (size_t i = 0; i < sizeof(msgs) / sizeof(msgs[0]); i++) {
		struct proto_msg out;
		char msg[256] = "";
		memset(got, 0, sizeof(got));
		if (round_trip(&msgs[i], &out, got, 3, msg) != DRAKE_OK)
			fail_msg("%s: %s", proto_type_name(msgs[i].type), msg);
		const struct proto_msg *m = &msgs[i];
		assert_int_equal(out.type, m->type);
		assert_int_equal(out.role, m->role);
		assert_int_equal(out.index, m->index);
		assert_memory_equal(out.shape, m->shape, sizeof(m->shape));
		assert_true(out.ps_id == m->ps_id);
		assert_true(out.step == m->step);
		assert_int_equal(out.live, m->live);
		assert_int_equal(out.rank, m->rank);
		assert_int_equal(out.flag, m->flag);
		assert_true(out.accuracy == m->accuracy);
		assert_true(out.loss == m->loss);
		assert_int_equal(out.n, m->n);
		assert_string_equal(out.text, m->text);
		if (m->n)
			assert_memory_equal(got, w, sizeof(w)); /* bit for bit */
	}
}

static void test_the_bytes_are_the_documented_ones(void **state)
{
	uint8_t buf[64];
	struct proto_msg m = {.type = PROTO_DONE, .step = 258, .accuracy = 1.0};
	assert_int_equal(proto_encode(&m, buf, sizeof(buf)), 28);
	const uint8_t want[28] = {
	    'D',  'K',  'T', '1', 0, PROTO_DONE, 0, 0, 0, 0, 0, 16, /* header */
	    0,    0,    0,   0,   0, 0,          1, 2,              /* step 258 */
	    0x3f, 0xf0, 0,   0,   0, 0,          0, 0,              /* 1.0 */
	};
	assert_memory_equal(buf, want, sizeof(want));
	/* too small a buffer writes nothing usable */
	assert_int_equal(proto_encode(&m, buf, 27), 0);
}

static void test_refuses_bad_frames_with_a_reason(void **state)
{
	char msg[256];
	enum proto_type type;
	uint32_t len;
	uint8_t hdr[PROTO_HEADER] = {'H', 'T', 'T', 'P', 0, 1, 0, 0, 0, 0, 0, 0};
	assert_int_equal(proto_header(hdr, &type, &len, msg, sizeof(msg)), DRAKE_EINVAL);
	assert_non_null(strstr(msg, "not drake-train's protocol"));
	uint8_t unknown[PROTO_HEADER] = {'D', 'K', 'T', '1', 0, 99, 0, 0, 0, 0, 0, 0};
	assert_int_equal(proto_header(unknown, &type, &len, msg, sizeof(msg)), DRAKE_EINVAL);
	assert_non_null(strstr(msg, "unknown message type 99"));
	uint8_t huge[PROTO_HEADER] = {'D', 'K', 'T', '1', 0, PROTO_PUSH, 0, 0, 0xff, 0, 0, 0};
	assert_int_equal(proto_header(huge, &type, &len, msg, sizeof(msg)), DRAKE_ELIMIT);
	assert_non_null(strstr(msg, "over the limit"));

	/* a PUSH: the fixed part, then n doubles */
	double g[2] = {1, 2}, into[2];
	struct proto_msg push = {.type = PROTO_PUSH, .ps_id = 1, .loss = 1, .n = 2, .params = g};
	uint8_t buf[256];
	size_t n = proto_encode(&push, buf, sizeof(buf));
	assert_int_equal(n, PROTO_HEADER + 28 + 16);
	struct proto_msg out;
	const uint8_t *p = buf + PROTO_HEADER;
	size_t plen = n - PROTO_HEADER;
	/* truncated */
	assert_int_equal(proto_decode(PROTO_PUSH, p, 10, &out, into, 2, msg, sizeof(msg)),
	                 DRAKE_EINVAL);
	assert_non_null(strstr(msg, "PUSH: 10 bytes, expected 28"));
	assert_int_equal(proto_decode(PROTO_PUSH, p, plen - 1, &out, into, 2, msg, sizeof(msg)),
	                 DRAKE_EINVAL);
	assert_non_null(strstr(msg, "expected 44 for 2 values"));
	/* more values than the receiver's model has: refused before reading */
	assert_int_equal(proto_decode(PROTO_PUSH, p, plen, &out, into, 1, msg, sizeof(msg)),
	                 DRAKE_ELIMIT);
	assert_non_null(strstr(msg, "2 values, but the model has 1"));
	/* a fixed-size message with bytes to spare */
	struct proto_msg eval = {.type = PROTO_EVAL, .accuracy = 0.5};
	n = proto_encode(&eval, buf, sizeof(buf));
	assert_int_equal(proto_decode(PROTO_EVAL, buf + PROTO_HEADER, n - PROTO_HEADER + 1, &out,
	                              into, 2, msg, sizeof(msg)),
	                 DRAKE_EINVAL);
	assert_non_null(strstr(msg, "EVAL: 25 bytes, expected 24"));
	/* an unknown role */
	struct proto_msg hello = {.type = PROTO_HELLO, .role = 7};
	n = proto_encode(&hello, buf, sizeof(buf));
	assert_int_equal(proto_decode(PROTO_HELLO, buf + PROTO_HEADER, n - PROTO_HEADER, &out, into,
	                              2, msg, sizeof(msg)),
	                 DRAKE_EINVAL);
	assert_non_null(strstr(msg, "unknown role 7"));
	/* an ERROR's text is capped and stripped of control characters */
	uint8_t text[PROTO_TEXT_MAX + 1];
	memset(text, 'x', sizeof(text));
	assert_int_equal(
	    proto_decode(PROTO_ERROR, text, sizeof(text), &out, into, 2, msg, sizeof(msg)),
	    DRAKE_ELIMIT);
	const uint8_t esc[] = {'b', 'a', 'd', 27, '[', '2', 'J', '\n'};
	assert_int_equal(
	    proto_decode(PROTO_ERROR, esc, sizeof(esc), &out, into, 2, msg, sizeof(msg)), DRAKE_OK);
	assert_string_equal(out.text, "bad [2J ");
}

static void test_refuses_non_finite_numbers_both_ways(void **state)
{
	double g[2] = {1, NAN}, into[2];
	uint8_t buf[256];
	struct proto_msg push = {.type = PROTO_PUSH, .n = 2, .params = g};
	assert_int_equal(proto_encode(&push, buf, sizeof(buf)), 0);
	struct proto_msg eval = {.type = PROTO_EVAL, .accuracy = INFINITY};
	assert_int_equal(proto_encode(&eval, buf, sizeof(buf)), 0);
	/* and a peer that sends one anyway */
	g[1] = 2;
	size_t n = proto_encode(&push, buf, sizeof(buf));
	assert_true(n > 0);
	memset(buf + n - 8, 0xff, 8); /* the last double becomes a NaN */
	struct proto_msg out;
	char msg[256];
	assert_int_equal(
	    proto_decode(PROTO_PUSH, buf + PROTO_HEADER, n - PROTO_HEADER, &out, into, 2, msg, 256),
	    DRAKE_EINVAL);
	assert_non_null(strstr(msg, "PUSH: value 1 is not a finite number"));
	/* a count over the protocol's own limit is refused by the encoder */
	struct proto_msg big = {.type = PROTO_WEIGHTS, .n = PROTO_PARAMS_MAX + 1, .params = g};
	assert_int_equal(proto_encode(&big, buf, sizeof(buf)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_message_survives_a_round_trip),
	    cmocka_unit_test(test_the_bytes_are_the_documented_ones),
	    cmocka_unit_test(test_refuses_bad_frames_with_a_reason),
	    cmocka_unit_test(test_refuses_non_finite_numbers_both_ways),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
