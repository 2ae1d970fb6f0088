/*
 * queue.c - the controller's work queue and clock. Informer callbacks mark a
 * job's key dirty in r->now (drained at once) or r->later (drained on the
 * next tick); keys are deduplicated and bounded by RECONCILER_QUEUE_MAX.
 * Per job, the writes in flight and the backoff after failed ones.
 */
#include "reconciler/internal.h"

#include <event2/event.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"

static double system_clock(void *arg)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

double rec_now_s(const struct reconciler *r)
{
	return r->opts.clock ? r->opts.clock(r->opts.clock_arg) : system_clock(NULL);
}

long long rec_now_ms(const struct reconciler *r)
{
	return (long long)(rec_now_s(r) * 1000);
}

drake_err rec_keyset_add(struct keyset *s, const char *key)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->keys[i], key))
			return DRAKE_OK;
	if (s->n >= RECONCILER_QUEUE_MAX || strlen(key) >= KEY_MAX)
		return DRAKE_ELIMIT;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		void *k = realloc(s->keys, cap * KEY_MAX);
		if (!k)
			return DRAKE_ENOMEM;
		s->keys = k;
		s->cap = cap;
	}
	memcpy(s->keys[s->n++], key, strlen(key) + 1);
	return DRAKE_OK;
}

struct inflight *rec_inflight_of(struct reconciler *r, const char *key, bool create)
{
	for (size_t i = 0; i < r->ninflight; i++)
		if (!strcmp(r->inflight[i].key, key))
			return &r->inflight[i];
	if (!create)
		return NULL;
	if (r->ninflight == r->capinflight) {
		size_t cap = r->capinflight ? r->capinflight * 2 : 32;
		struct inflight *p = realloc(r->inflight, cap * sizeof(*p));
		if (!p)
			return NULL;
		r->inflight = p;
		r->capinflight = cap;
	}
	struct inflight *f = &r->inflight[r->ninflight++];
	snprintf(f->key, sizeof(f->key), "%s", key);
	f->n = 0;
	f->failures = 0;
	f->failed = false;
	f->retry_ms = 0;
	f->expect = NULL;
	f->nexpect = 0;
	f->expect_ms = 0;
	return f;
}

void rec_expect(struct inflight *f, struct rec_slot *slots, size_t n, long long until_ms)
{
	free(f->expect);
	f->expect = slots;
	f->nexpect = n;
	f->expect_ms = until_ms;
}

void rec_expect_clear(struct inflight *f)
{
	rec_expect(f, NULL, 0, 0);
}

void rec_expect_seen(struct inflight *f, enum job_rtype t, int index, bool svc)
{
	for (size_t i = 0; i < f->nexpect; i++) {
		const struct rec_slot *s = &f->expect[i];
		if (s->type == (unsigned char)t && s->index == (unsigned short)index &&
		    s->svc == svc) {
			f->expect[i] = f->expect[--f->nexpect];
			return;
		}
	}
}

void rec_enqueue(struct reconciler *r, struct keyset *s, const char *ns, const char *name)
{
	char key[KEY_MAX];
	if (snprintf(key, sizeof(key), "%s/%s", ns, name) >= (int)sizeof(key))
		return;
	if (rec_keyset_add(s, key) != DRAKE_OK)
		log_warn("reconciler_queue_full", "key=%s", key);
	if (s == &r->now)
		event_active(&r->drain, 0, 0);
}
