/* quantity_test.c - quantity strings parse exactly, and garbage is refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gang/quantity.h"

struct qcase {
	const char *name;
	const char *in;
	drake_err err;
	int64_t milli; /* for milli parsing */
	int64_t value; /* for value parsing */
};

static const struct qcase cases[] = {
    {"plain integers are whole units", "2", DRAKE_OK, 2000, 2},
    {"millicores stay exact", "500m", DRAKE_OK, 500, 1},
    {"decimal fractions are exact", "1.5", DRAKE_OK, 1500, 2},
    {"a leading dot is accepted", ".25", DRAKE_OK, 250, 1},
    {"binary suffixes are powers of two", "8Gi", DRAKE_OK, 8589934592000LL, 8589934592LL},
    {"decimal suffixes are powers of ten", "3k", DRAKE_OK, 3000000, 3000},
    {"exponents scale by ten", "2e3", DRAKE_OK, 2000000, 2000},
    {"negative exponents round up", "1e-4", DRAKE_OK, 1, 1},
    {"fractional binary values are exact", "1.5Ki", DRAKE_OK, 1536000, 1536},
    {"an explicit plus sign is fine", "+7", DRAKE_OK, 7000, 7},
    {"zero is zero", "0", DRAKE_OK, 0, 0},
    {"nano units round up to one milli", "1n", DRAKE_OK, 1, 1},
    {"the empty string is refused", "", DRAKE_EINVAL, 0, 0},
    {"negative quantities are refused", "-1", DRAKE_EINVAL, 0, 0},
    {"letters alone are refused", "abc", DRAKE_EINVAL, 0, 0},
    {"unknown suffixes are refused", "5Xi", DRAKE_EINVAL, 0, 0},
    {"two decimal points are refused", "1.2.3", DRAKE_EINVAL, 0, 0},
    {"a bare dot is refused", ".", DRAKE_EINVAL, 0, 0},
    {"trailing spaces are refused", "1 ", DRAKE_EINVAL, 0, 0},
    {"values beyond int64 are a limit error", "10Ei", DRAKE_ELIMIT, 0, 0},
    {"huge exponents are a limit error", "1e40", DRAKE_ELIMIT, 0, 0},
    {"too many digits are a limit error", "1234567890123456789012345678901234567", DRAKE_ELIMIT, 0,
     0},
    {"strings over the length limit are refused",
     "00000000000000000000000000000000000000000000000000000000000000001", DRAKE_ELIMIT, 0, 0},
};

static void parses_every_case(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct qcase *c = &cases[i];
		char msg[128] = "";
		int64_t m = -1, v = -1;
		drake_err e1 = drake_quantity_milli(c->in, &m, msg, sizeof(msg));
		drake_err e2 = drake_quantity_value(c->in, &v, msg, sizeof(msg));
		if (c->err == DRAKE_ELIMIT && e1 == DRAKE_OK) {
			print_error("case '%s': milli accepted %s\n", c->name, c->in);
			fail();
		}
		if (c->err != DRAKE_ELIMIT && e1 != c->err) {
			print_error("case '%s': got %s want %s\n", c->name, drake_strerror(e1),
			            drake_strerror(c->err));
			fail();
		}
		if (c->err == DRAKE_OK) {
			if (m != c->milli || v != c->value || e2 != DRAKE_OK) {
				print_error("case '%s': milli %lld value %lld\n", c->name,
				            (long long)m, (long long)v);
				fail();
			}
		} else {
			assert_true(msg[0] != '\0');
		}
	}
}

static void one_hundred_milli_equals_a_tenth(void **state)
{
	(void)state;
	int64_t a, b;
	assert_int_equal(drake_quantity_milli("100m", &a, NULL, 0), DRAKE_OK);
	assert_int_equal(drake_quantity_milli("0.1", &b, NULL, 0), DRAKE_OK);
	assert_int_equal(a, b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(parses_every_case),
	    cmocka_unit_test(one_hundred_milli_equals_a_tenth),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
