/*
 * evq.c - binary heap of simulator events ordered by (time, push order).
 */
#include "sim/evq.h"

#include <stdlib.h>
#include <string.h>

void sim_evq_init(struct sim_evq *q)
{
	if (q)
		memset(q, 0, sizeof(*q));
}

void sim_evq_release(struct sim_evq *q)
{
	if (!q)
		return;
	free(q->h);
	sim_evq_init(q);
}

static bool before(const struct sim_ev *a, const struct sim_ev *b)
{
	if (a->t != b->t)
		return a->t < b->t;
	return a->seq < b->seq;
}

drake_err sim_evq_push(struct sim_evq *q, struct sim_ev ev)
{
	if (q->n == q->cap) {
		if (q->cap >= SIM_EVQ_MAX)
			return DRAKE_ELIMIT;
		size_t cap = q->cap ? q->cap * 2 : 1024;
		struct sim_ev *h = realloc(q->h, cap * sizeof(*h));
		if (!h)
			return DRAKE_ENOMEM;
		q->h = h;
		q->cap = cap;
	}
	ev.seq = q->next_seq++;
	size_t i = q->n++;
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!before(&ev, &q->h[p]))
			break;
		q->h[i] = q->h[p];
		i = p;
	}
	q->h[i] = ev;
	return DRAKE_OK;
}

bool sim_evq_pop(struct sim_evq *q, struct sim_ev *out)
{
	if (q->n == 0)
		return false;
	*out = q->h[0];
	struct sim_ev last = q->h[--q->n];
	size_t i = 0;
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		const struct sim_ev *best = &last;
		if (l < q->n && before(&q->h[l], best)) {
			m = l;
			best = &q->h[l];
		}
		if (r < q->n && before(&q->h[r], best))
			m = r;
		if (m == i)
			break;
		q->h[i] = q->h[m];
		i = m;
	}
	if (q->n > 0)
		q->h[i] = last;
	return true;
}

bool sim_evq_peek_time(const struct sim_evq *q, double *t)
{
	if (q->n == 0)
		return false;
	*t = q->h[0].t;
	return true;
}
