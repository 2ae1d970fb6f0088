/*
 * quantity.c - Kubernetes quantity strings to exact integers.
 *
 * A quantity is <number><suffix>: the number is decimal digits with at most
 * one '.', the suffix one of the binary SI units (Ki .. Ei), the decimal SI
 * units (n u m "" k M G T P E) or a decimal exponent (e3, E-2). The digits are
 * held in a 128-bit mantissa with a power of ten and a power of two, so
 * "0.1" and "100m" come out identical and nothing goes through a double.
 */
#include "gang/quantity.h"

#include <string.h>

#define MAX_SIG_DIGITS 36 /* 10^36 < 2^127, leaves room for one *10 check */

struct parsed {
	unsigned __int128 mant;
	int pow10;
	int pow2;
};

static int suffix_decimal(const char *s, int *pow10)
{
	static const struct {
		const char *name;
		int pow10;
	} tab[] = {{"n", -9}, {"u", -6}, {"m", -3}, {"", 0},   {"k", 3},
	           {"M", 6},  {"G", 9},  {"T", 12}, {"P", 15}, {"E", 18}};
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		if (strcmp(s, tab[i].name) == 0) {
			*pow10 = tab[i].pow10;
			return 1;
		}
	}
	return 0;
}

static int suffix_binary(const char *s, int *pow2)
{
	static const char *const tab[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		if (strcmp(s, tab[i]) == 0) {
			*pow2 = 10 * (int)(i + 1);
			return 1;
		}
	}
	return 0;
}

/* "e12", "E-3", "e+2": a decimal exponent, bounded so it cannot overflow. */
static int suffix_exponent(const char *s, int *pow10)
{
	if (*s != 'e' && *s != 'E')
		return 0;
	s++;
	int sign = 1;
	if (*s == '+' || *s == '-')
		sign = *s++ == '-' ? -1 : 1;
	if (*s == '\0')
		return 0;
	int v = 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return 0;
		v = v * 10 + (*s - '0');
		if (v > 1000)
			return 0;
	}
	*pow10 = sign * v;
	return 1;
}

static drake_err parse(const char *s, struct parsed *p, char *msg, size_t len)
{
	if (!s || *s == '\0')
		return drake_errorf(DRAKE_EINVAL, msg, len, "empty quantity");
	size_t n = strnlen(s, DRAKE_QUANTITY_MAX_LEN + 1);
	if (n > DRAKE_QUANTITY_MAX_LEN)
		return drake_errorf(DRAKE_ELIMIT, msg, len, "quantity longer than %d characters",
		                    DRAKE_QUANTITY_MAX_LEN);
	const char *c = s;
	if (*c == '+')
		c++;
	else if (*c == '-')
		return drake_errorf(DRAKE_EINVAL, msg, len, "negative quantity \"%s\"", s);

	p->mant = 0;
	p->pow10 = 0;
	p->pow2 = 0;
	int digits = 0, sig = 0, dot = 0;
	for (; *c; c++) {
		if (*c == '.') {
			if (dot)
				return drake_errorf(DRAKE_EINVAL, msg, len,
				                    "quantity \"%s\" has two decimal points", s);
			dot = 1;
			continue;
		}
		if (*c < '0' || *c > '9')
			break;
		digits++;
		if (dot)
			p->pow10--;
		if (p->mant == 0 && *c == '0')
			continue; /* leading zeros carry no precision */
		if (++sig > MAX_SIG_DIGITS)
			return drake_errorf(DRAKE_ELIMIT, msg, len,
			                    "quantity \"%s\" has more than %d significant digits",
			                    s, MAX_SIG_DIGITS);
		p->mant = p->mant * 10 + (unsigned)(*c - '0');
	}
	if (digits == 0)
		return drake_errorf(DRAKE_EINVAL, msg, len, "quantity \"%s\" has no digits", s);

	int e10 = 0, e2 = 0;
	if (suffix_decimal(c, &e10) || suffix_exponent(c, &e10))
		p->pow10 += e10;
	else if (suffix_binary(c, &e2))
		p->pow2 = e2;
	else
		return drake_errorf(DRAKE_EINVAL, msg, len,
		                    "quantity \"%s\" has unknown suffix \"%s\"", s, c);
	return DRAKE_OK;
}

/*
 * ceil(mant * 2^pow2 * 10^pow10) into int64, or ELIMIT. With a binary suffix
 * the division by 10^k is split into quotient and remainder so that the
 * remainder times 2^pow2 stays inside 128 bits (k <= 18, pow2 <= 60).
 */
static drake_err scale(const char *s, const struct parsed *p, int extra10, int64_t *out, char *msg,
                       size_t len)
{
	const unsigned __int128 limit = (unsigned __int128)INT64_MAX;
	unsigned __int128 m = p->mant;
	int e10 = p->pow10 + extra10;

	if (m == 0) {
		*out = 0;
		return DRAKE_OK;
	}
	if (e10 < 0) {
		if (p->pow2 > 0 && e10 < -18)
			return drake_errorf(DRAKE_ELIMIT, msg, len,
			                    "quantity \"%s\" has too many decimal places", s);
		if (e10 < -38) {
			m = 1; /* smaller than one unit, rounded up */
		} else {
			unsigned __int128 d = 1;
			for (int i = 0; i < -e10; i++)
				d *= 10;
			unsigned __int128 q = m / d, r = m % d;
			if (q > (limit >> p->pow2))
				goto too_big;
			q <<= p->pow2;
			r <<= p->pow2;
			m = q + r / d + (r % d != 0);
		}
	} else {
		if (m > (limit >> p->pow2))
			goto too_big;
		m <<= p->pow2;
		for (int i = 0; i < e10; i++) {
			m *= 10;
			if (m > limit)
				goto too_big;
		}
	}
	if (m > limit)
		goto too_big;
	*out = (int64_t)m;
	return DRAKE_OK;
too_big:
	return drake_errorf(DRAKE_ELIMIT, msg, len, "quantity \"%s\" is too large", s);
}

drake_err drake_quantity_milli(const char *s, int64_t *milli, char *msg, size_t len)
{
	struct parsed p;
	drake_err err = parse(s, &p, msg, len);
	if (err)
		return err;
	return scale(s, &p, 3, milli, msg, len);
}

drake_err drake_quantity_value(const char *s, int64_t *value, char *msg, size_t len)
{
	struct parsed p;
	drake_err err = parse(s, &p, msg, len);
	if (err)
		return err;
	return scale(s, &p, 0, value, msg, len);
}
