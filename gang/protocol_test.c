/* protocol_test.c - the gang id "<uid>.<wave>", read and written as
 * gang/protocol.h says, and malformed ids refused with a reason. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "gang/protocol.h"

static void an_id_round_trips(void **state)
{
	static const struct {
		const char *uid;
		long long wave;
		const char *id;
	} table[] = {
	    {"20000000-0000-4000-8000-000000000001", 1767225600,
	     "20000000-0000-4000-8000-000000000001.1767225600"},
	    {"u", 0, "u.0"},
	    {"uid-job1", LLONG_MAX, "uid-job1.9223372036854775807"},
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		char buf[DRAKE_GANG_ID_MAX], why[200];
		assert_int_equal(
		    drake_gang_id_format(table[i].uid, table[i].wave, buf, sizeof(buf)), DRAKE_OK);
		assert_string_equal(buf, table[i].id);
		struct drake_gang_id g;
		assert_int_equal(drake_gang_id_parse(buf, &g, why, sizeof(why)), DRAKE_OK);
		assert_string_equal(g.uid, table[i].uid);
		assert_true(g.wave == table[i].wave);
	}
}

static void malformed_ids_are_refused_with_their_reason(void **state)
{
	char uid64[80], long_id[96];
	memset(uid64, 'u', 64);
	uid64[64] = '\0';
	snprintf(long_id, sizeof(long_id), "%s.1", uid64);
	static const char *const no_id = NULL;
	const struct {
		const char *id;
		const char *why; /* a part of the reason */
	} table[] = {
	    {"uid1", "is not of the form <uid>.<wave>"},
	    {"", "is not of the form <uid>.<wave>"},
	    {".5", "has an empty uid"},
	    {"uid.", "has no wave"},
	    {"uid.x", "not a decimal of digits"},
	    {"uid.12a", "not a decimal of digits"},
	    {"uid.-3", "not a decimal of digits"},
	    {"uid.+3", "not a decimal of digits"},
	    {"uid. 3", "not a decimal of digits"},
	    {"uid.1.2", "not a decimal of digits"},
	    {"uid.9223372036854775808", "beyond 9223372036854775807"},
	    {"uid.99999999999999999999999", "beyond"},
	    {long_id, "longer than 63 bytes"},
	    {no_id, "no gang id"},
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		struct drake_gang_id g = {.wave = 7};
		char why[200] = "";
		if (drake_gang_id_parse(table[i].id, &g, why, sizeof(why)) != DRAKE_EINVAL ||
		    !strstr(why, table[i].why))
			fail_msg("\"%s\": why \"%s\", want EINVAL with \"%s\"",
			         table[i].id ? table[i].id : "(null)", why, table[i].why);
		assert_string_equal(g.uid, ""); /* nothing half-read */
		assert_true(g.wave == 0);
	}
	/* a 63-byte uid is the longest */
	uid64[63] = '\0';
	snprintf(long_id, sizeof(long_id), "%s.1", uid64);
	struct drake_gang_id g;
	assert_int_equal(drake_gang_id_parse(long_id, &g, NULL, 0), DRAKE_OK);
	assert_int_equal(strlen(g.uid), 63);
}

static void an_id_that_could_not_be_read_back_is_not_written(void **state)
{
	char buf[DRAKE_GANG_ID_MAX], uid64[65];
	memset(uid64, 'u', 64);
	uid64[64] = '\0';
	static const struct {
		const char *uid;
		long long wave;
	} bad[] = {{"", 1}, {NULL, 1}, {"a.b", 1}, {"uid", -1}, {"uid", LLONG_MIN}};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		strcpy(buf, "stale");
		assert_int_equal(drake_gang_id_format(bad[i].uid, bad[i].wave, buf, sizeof(buf)),
		                 DRAKE_EINVAL);
		assert_string_equal(buf, "");
	}
	assert_int_equal(drake_gang_id_format(uid64, 1, buf, sizeof(buf)), DRAKE_EINVAL);
	char small[7]; /* "uid.12" and its NUL */
	assert_int_equal(drake_gang_id_format("uid", 123, small, sizeof(small)), DRAKE_ELIMIT);
	assert_string_equal(small, "");
	assert_int_equal(drake_gang_id_format("uid", 12, small, sizeof(small)), DRAKE_OK);
	assert_string_equal(small, "uid.12");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(an_id_round_trips),
	    cmocka_unit_test(malformed_ids_are_refused_with_their_reason),
	    cmocka_unit_test(an_id_that_could_not_be_read_back_is_not_written),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
