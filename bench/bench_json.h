/*
 * bench_json.h - benchmarks' objects into drake's caches: an API object
 * written as JSON text, decoded and stored the way an informer stores it
 * (header only; the JSON lives here).
 */
#ifndef DRAKE_BENCH_JSON_H
#define DRAKE_BENCH_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "kube/cache.h"

/* Stores the object text into c; exits on a bad object (a bench bug). */
static inline void bench_cache_put(struct kube_cache *c, const char *text)
{
	json_error_t err;
	json_t *o = json_loads(text, 0, &err);
	void *old = NULL;
	bool changed;
	if (!o || kube_cache_put(c, o, 1, NULL, &old, &changed) != DRAKE_OK) {
		fprintf(stderr, "bench: cannot store %s: %s\n", text, o ? "refused" : err.text);
		exit(1);
	}
	kube_cache_drop(c, old);
	json_decref(o);
}

#endif
