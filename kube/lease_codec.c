/*
 * lease_codec.c - Lease JSON (see lease_codec.h). Times are MicroTime:
 * RFC 3339 in UTC with six fractional digits, as the API server writes them.
 */
#include "kube/lease_codec.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "kube/object.h"

/* A spec time; absent or null reads as 0. */
static bool time_field(const json_t *spec, const char *key, double *out)
{
	const json_t *v = json_object_get(spec, key);
	*out = 0;
	if (!v || json_is_null(v))
		return true;
	if (!json_is_string(v))
		return false;
	*out = kube_time(json_string_value(v));
	return *out > 0;
}

static bool int_field(const json_t *spec, const char *key, int *out)
{
	const json_t *v = json_object_get(spec, key);
	*out = 0;
	if (!v || json_is_null(v))
		return true;
	if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 1 << 30)
		return false;
	*out = (int)json_integer_value(v);
	return true;
}

drake_err lease_decode(const char *body, size_t len, struct lease_record *out, char *rv,
                       size_t rvlen, char *why, size_t whylen)
{
	memset(out, 0, sizeof(*out));
	if (rvlen)
		rv[0] = '\0';
	json_error_t jerr;
	json_t *root = json_loadb(body, len, 0, &jerr);
	if (!root || !json_is_object(root)) {
		json_decref(root);
		return drake_errorf(DRAKE_EINVAL, why, whylen, "Lease: not a JSON object");
	}
	drake_err e = DRAKE_OK;
	const json_t *spec = json_object_get(root, "spec");
	const char *v = json_string_value(
	    json_object_get(json_object_get(root, "metadata"), "resourceVersion"));
	const json_t *holder = spec ? json_object_get(spec, "holderIdentity") : NULL;
	if (!v || strlen(v) >= rvlen) {
		e = drake_errorf(DRAKE_EINVAL, why, whylen, "Lease: no usable resourceVersion");
	} else if (spec && !json_is_object(spec)) {
		e = drake_errorf(DRAKE_EINVAL, why, whylen, "Lease: spec is not an object");
	} else if (holder && !json_is_null(holder) &&
	           (!json_is_string(holder) || json_string_length(holder) >= LEASE_HOLDER_MAX)) {
		e = drake_errorf(DRAKE_EINVAL, why, whylen,
		                 "Lease: spec.holderIdentity is not a string of under %d bytes",
		                 LEASE_HOLDER_MAX);
	} else if (spec && (!time_field(spec, "acquireTime", &out->acquire_time) ||
	                    !time_field(spec, "renewTime", &out->renew_time))) {
		e = drake_errorf(DRAKE_EINVAL, why, whylen,
		                 "Lease: a spec time is not RFC 3339 UTC");
	} else if (spec && (!int_field(spec, "leaseDurationSeconds", &out->duration_s) ||
	                    !int_field(spec, "leaseTransitions", &out->transitions))) {
		e = drake_errorf(DRAKE_EINVAL, why, whylen,
		                 "Lease: leaseDurationSeconds or leaseTransitions is not a "
		                 "non-negative integer");
	} else {
		snprintf(rv, rvlen, "%s", v);
		if (json_is_string(holder))
			snprintf(out->holder, sizeof(out->holder), "%s", json_string_value(holder));
	}
	json_decref(root);
	return e;
}

/* MicroTime of t; "" for 0 (the field is then left out). */
static void micro_time(double t, char buf[64])
{
	buf[0] = '\0';
	if (t <= 0)
		return;
	time_t s = (time_t)floor(t);
	int us = (int)lround((t - (double)s) * 1e6);
	if (us >= 1000000) {
		s++;
		us -= 1000000;
	}
	struct tm tm;
	gmtime_r(&s, &tm);
	char day[24];
	strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, 64, "%s.%06dZ", day, us);
}

char *lease_encode(const char *ns, const char *name, const char *rv, const struct lease_record *r)
{
	json_t *meta = json_pack("{s:s,s:s}", "name", name, "namespace", ns);
	json_t *spec = json_pack("{s:i,s:i}", "leaseDurationSeconds", r->duration_s,
	                         "leaseTransitions", r->transitions);
	json_t *root = json_pack("{s:s,s:s,s:o,s:o}", "apiVersion", "coordination.k8s.io/v1",
	                         "kind", "Lease", "metadata", meta, "spec", spec);
	if (!root)
		return NULL;
	char acquire[64], renew[64];
	micro_time(r->acquire_time, acquire);
	micro_time(r->renew_time, renew);
	bool ok = !json_object_set_new(spec, "holderIdentity",
	                               r->holder[0] ? json_string(r->holder) : json_null());
	if (acquire[0])
		ok = ok && !json_object_set_new(spec, "acquireTime", json_string(acquire));
	if (renew[0])
		ok = ok && !json_object_set_new(spec, "renewTime", json_string(renew));
	if (rv)
		ok = ok && !json_object_set_new(meta, "resourceVersion", json_string(rv));
	char *text = ok ? json_dumps(root, JSON_COMPACT) : NULL;
	json_decref(root);
	return text;
}
