/* flags.c - see flags.h. */
#include "common/flags.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

drake_err flags_parse_size(const char *s, size_t *out)
{
	if (!s || !*s)
		return DRAKE_EINVAL;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-')
		return DRAKE_EINVAL;
	unsigned long long mul = 1;
	if (*end) {
		static const struct {
			const char *suffix;
			unsigned long long mul;
		} units[] = {
		    {"Ki", 1ull << 10},  {"Mi", 1ull << 20},
		    {"Gi", 1ull << 30},  {"K", 1ull << 10},
		    {"M", 1ull << 20},   {"G", 1ull << 30},
		    {"KiB", 1ull << 10}, {"MiB", 1ull << 20},
		    {"GiB", 1ull << 30}, {"B", 1},
		};
		mul = 0;
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (strcmp(end, units[i].suffix) == 0)
				mul = units[i].mul;
		if (!mul)
			return DRAKE_EINVAL;
	}
	if (v > SIZE_MAX / mul)
		return DRAKE_ELIMIT;
	*out = (size_t)(v * mul);
	return DRAKE_OK;
}

drake_err flags_parse_duration(const char *s, double *out)
{
	if (!s || !*s)
		return DRAKE_EINVAL;
	errno = 0;
	char *end;
	double v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || v < 0)
		return DRAKE_EINVAL;
	double mul;
	if (!*end || strcmp(end, "s") == 0)
		mul = 1;
	else if (strcmp(end, "ms") == 0)
		mul = 1e-3;
	else if (strcmp(end, "m") == 0)
		mul = 60;
	else if (strcmp(end, "h") == 0)
		mul = 3600;
	else
		return DRAKE_EINVAL;
	*out = v * mul;
	return DRAKE_OK;
}

static drake_err parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = {"1", "true", "yes", "on"};
	static const char *const no[] = {"0", "false", "no", "off"};
	for (size_t i = 0; i < 4; i++) {
		if (strcmp(s, yes[i]) == 0) {
			*out = true;
			return DRAKE_OK;
		}
		if (strcmp(s, no[i]) == 0) {
			*out = false;
			return DRAKE_OK;
		}
	}
	return DRAKE_EINVAL;
}

static drake_err set_value(const struct flag *f, const char *v, const char *origin, char *msg,
                           size_t msglen)
{
	drake_err e = DRAKE_OK;
	const char *want = "";
	switch (f->type) {
	case FLAG_STRING: *(const char **)f->dest = v; return DRAKE_OK;
	case FLAG_INT: {
		errno = 0;
		char *end;
		long n = strtol(v, &end, 10);
		if (errno || end == v || *end || n < INT_MIN || n > INT_MAX)
			e = DRAKE_EINVAL;
		else
			*(int *)f->dest = (int)n;
		want = "an integer";
		break;
	}
	case FLAG_DOUBLE: {
		errno = 0;
		char *end;
		double d = strtod(v, &end);
		if (errno || end == v || *end || !isfinite(d))
			e = DRAKE_EINVAL;
		else
			*(double *)f->dest = d;
		want = "a number";
		break;
	}
	case FLAG_SIZE:
		e = flags_parse_size(v, (size_t *)f->dest);
		want = "a size such as 1048576, 64Ki or 32Mi";
		break;
	case FLAG_DURATION:
		e = flags_parse_duration(v, (double *)f->dest);
		want = "a duration such as 250ms, 30s or 2m";
		break;
	case FLAG_BOOL:
		e = parse_bool(v, (bool *)f->dest);
		want = "true or false";
		break;
	case FLAG_COUNT: {
		errno = 0;
		char *end;
		unsigned long long n = strtoull(v, &end, 10);
		if (errno || end == v || *end || *v == '-' || n > SIZE_MAX)
			e = DRAKE_EINVAL;
		else
			*(size_t *)f->dest = (size_t)n;
		want = "a non-negative integer";
		break;
	}
	}
	if (e)
		return drake_errorf(DRAKE_EINVAL, msg, msglen, "%s --%s: \"%s\" is not %s", origin,
		                    f->name, v, want);
	return DRAKE_OK;
}

static const struct flag *find(const struct flag *flags, size_t n, const char *name, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(flags[i].name) == len && strncmp(flags[i].name, name, len) == 0)
			return &flags[i];
	return NULL;
}

drake_err flags_parse(const struct flag *flags, size_t n, int argc, char **argv,
                      enum flags_outcome *outcome, char *msg, size_t msglen)
{
	*outcome = FLAGS_RUN;
	drake_err e;
	for (size_t i = 0; i < n; i++) {
		if (!flags[i].def && flags[i].type == FLAG_STRING)
			*(const char **)flags[i].dest = NULL;
		else if (flags[i].def &&
		         (e = set_value(&flags[i], flags[i].def, "default for", msg, msglen)))
			return e;
	}
	for (size_t i = 0; i < n; i++) {
		const char *v = flags[i].env ? getenv(flags[i].env) : NULL;
		if (v && *v) {
			char origin[96];
			snprintf(origin, sizeof(origin), "environment %s for", flags[i].env);
			if ((e = set_value(&flags[i], v, origin, msg, msglen)))
				return e;
		}
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0 || strcmp(a, "help") == 0) {
			*outcome = FLAGS_HELP;
			return DRAKE_OK;
		}
		if (strncmp(a, "--", 2) != 0)
			return drake_errorf(DRAKE_EINVAL, msg, msglen,
			                    "unexpected argument \"%s\" (flags start with --)", a);
		const char *name = a + 2;
		const char *eq = strchr(name, '=');
		size_t len = eq ? (size_t)(eq - name) : strlen(name);
		const struct flag *f = find(flags, n, name, len);
		if (!f && !eq && strncmp(name, "no-", 3) == 0) {
			f = find(flags, n, name + 3, len - 3);
			if (f && f->type == FLAG_BOOL) {
				*(bool *)f->dest = false;
				continue;
			}
			f = NULL;
		}
		if (!f)
			return drake_errorf(DRAKE_EINVAL, msg, msglen,
			                    "unknown flag --%.*s (see --help)", (int)len, name);
		const char *v;
		if (eq) {
			v = eq + 1;
		} else if (f->type == FLAG_BOOL) {
			*(bool *)f->dest = true;
			continue;
		} else if (i + 1 < argc) {
			v = argv[++i];
		} else {
			return drake_errorf(DRAKE_EINVAL, msg, msglen, "flag --%s needs a value",
			                    f->name);
		}
		if ((e = set_value(f, v, "flag", msg, msglen)))
			return e;
	}
	return DRAKE_OK;
}

void flags_usage(FILE *out, const struct flag *flags, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct flag *f = &flags[i];
		char lhs[64];
		static const char *const meta[] = {"string",   "int", "number", "bytes",
		                                   "duration", "",    "count"};
		snprintf(lhs, sizeof(lhs), "--%s%s%s", f->name, f->type == FLAG_BOOL ? "" : " ",
		         meta[f->type]);
		fprintf(out, "  %-32s %s\n", lhs, f->help);
		if (f->env || (f->def && *f->def)) {
			fprintf(out, "  %-32s ", "");
			if (f->def && *f->def)
				fprintf(out, "default: %s%s", f->def, f->env ? "; " : "");
			if (f->env)
				fprintf(out, "env: %s", f->env);
			fputc('\n', out);
		}
	}
}
