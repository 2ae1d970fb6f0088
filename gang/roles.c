/*
 * roles.c - per-role counts and their wire form (see roles.h).
 */
#include "gang/roles.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[DRAKE_NROLES] = {"ps", "chief", "worker"};

const char *drake_role_name(enum drake_role r)
{
	return r >= 0 && r < DRAKE_NROLES ? names[r] : "?";
}

bool drake_role_parse(const char *s, enum drake_role *out)
{
	for (int i = 0; s && i < DRAKE_NROLES; i++)
		if (!strcmp(s, names[i])) {
			*out = (enum drake_role)i;
			return true;
		}
	return false;
}

drake_err drake_roles_parse(const char *s, int max, struct drake_roles *out, char *msg, size_t len)
{
	*out = (struct drake_roles){0};
	if (!s)
		return drake_errorf(DRAKE_EINVAL, msg, len, "no per-role minimum");
	bool seen[DRAKE_NROLES] = {false};
	const char *p = s;
	for (;;) {
		const char *eq = strchr(p, '=');
		size_t klen = eq ? (size_t)(eq - p) : 0;
		char key[8];
		enum drake_role r;
		if (!eq || klen == 0 || klen >= sizeof(key))
			return drake_errorf(DRAKE_EINVAL, msg, len,
			                    "per-role minimum \"%.64s\": expected role=count", s);
		memcpy(key, p, klen);
		key[klen] = '\0';
		if (!drake_role_parse(key, &r))
			return drake_errorf(DRAKE_EINVAL, msg, len,
			                    "per-role minimum \"%.64s\": unknown role \"%s\"", s,
			                    key);
		if (seen[r])
			return drake_errorf(DRAKE_EINVAL, msg, len,
			                    "per-role minimum \"%.64s\": %s given twice", s, key);
		seen[r] = true;
		const char *d = eq + 1;
		long v = 0;
		if (*d < '0' || *d > '9')
			return drake_errorf(DRAKE_EINVAL, msg, len,
			                    "per-role minimum \"%.64s\": %s needs a count", s, key);
		while (*d >= '0' && *d <= '9') {
			v = v * 10 + (*d++ - '0');
			if (v > max)
				return drake_errorf(DRAKE_EINVAL, msg, len,
				                    "per-role minimum \"%.64s\": %s above %d", s,
				                    key, max);
		}
		out->n[r] = (int)v;
		if (*d == '\0')
			break;
		if (*d != ',')
			return drake_errorf(DRAKE_EINVAL, msg, len,
			                    "per-role minimum \"%.64s\": expected ',' after %s", s,
			                    key);
		p = d + 1;
	}
	for (int r = 0; r < DRAKE_NROLES; r++)
		if (!seen[r])
			return drake_errorf(DRAKE_EINVAL, msg, len,
			                    "per-role minimum \"%.64s\": %s missing", s, names[r]);
	return DRAKE_OK;
}

const char *drake_roles_format(const struct drake_roles *r, char *buf, size_t len)
{
	snprintf(buf, len, "ps=%d,chief=%d,worker=%d", r->n[DRAKE_ROLE_PS], r->n[DRAKE_ROLE_CHIEF],
	         r->n[DRAKE_ROLE_WORKER]);
	return buf;
}

int drake_roles_total(const struct drake_roles *r)
{
	int t = 0;
	for (int i = 0; i < DRAKE_NROLES; i++)
		t += r->n[i];
	return t;
}

int drake_roles_short(const struct drake_roles *have, const struct drake_roles *min)
{
	for (int i = 0; i < DRAKE_NROLES; i++)
		if (have->n[i] < min->n[i])
			return i;
	return -1;
}
