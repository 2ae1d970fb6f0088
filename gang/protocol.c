/*
 * protocol.c - the gang id, read and written the one way
 * (gang/protocol.h).
 */
#include "gang/protocol.h"

#include <limits.h>
#include <stdio.h>

drake_err drake_gang_id_format(const char *uid, long long wave, char *buf, size_t len)
{
	if (len > 0)
		buf[0] = '\0';
	if (!uid || !*uid || strlen(uid) > DRAKE_GANG_UID_MAX || strchr(uid, '.') || wave < 0)
		return DRAKE_EINVAL;
	char id[DRAKE_GANG_ID_MAX];
	int n = snprintf(id, sizeof(id), "%s.%lld", uid, wave);
	if (n < 0 || (size_t)n >= len)
		return DRAKE_ELIMIT;
	memcpy(buf, id, (size_t)n + 1);
	return DRAKE_OK;
}

drake_err drake_gang_id_parse(const char *id, struct drake_gang_id *out, char *why, size_t len)
{
	*out = (struct drake_gang_id){0};
	if (!id)
		return drake_errorf(DRAKE_EINVAL, why, len, "no gang id");
	const char *dot = strchr(id, '.');
	if (!dot)
		return drake_errorf(DRAKE_EINVAL, why, len,
		                    "gang id \"%.80s\" is not of the form <uid>.<wave>", id);
	size_t ul = (size_t)(dot - id);
	if (ul == 0)
		return drake_errorf(DRAKE_EINVAL, why, len, "gang id \"%.80s\" has an empty uid",
		                    id);
	if (ul > DRAKE_GANG_UID_MAX)
		return drake_errorf(DRAKE_EINVAL, why, len,
		                    "gang id \"%.80s\": its uid is longer than %d bytes", id,
		                    DRAKE_GANG_UID_MAX);
	const char *w = dot + 1;
	if (!*w)
		return drake_errorf(DRAKE_EINVAL, why, len, "gang id \"%.80s\" has no wave", id);
	long long wave = 0;
	for (const char *p = w; *p; p++) {
		if (*p < '0' || *p > '9')
			return drake_errorf(
			    DRAKE_EINVAL, why, len,
			    "gang id \"%.80s\": its wave is not a decimal of digits", id);
		int d = *p - '0';
		if (wave > (LLONG_MAX - d) / 10)
			return drake_errorf(DRAKE_EINVAL, why, len,
			                    "gang id \"%.80s\": its wave is beyond %lld", id,
			                    LLONG_MAX);
		wave = wave * 10 + d;
	}
	memcpy(out->uid, id, ul);
	out->uid[ul] = '\0';
	out->wave = wave;
	return DRAKE_OK;
}
