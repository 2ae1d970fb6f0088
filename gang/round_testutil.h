/*
 * round_testutil.h - helpers shared by the decision round's unit tests
 * (header only, not part of the library): jobs as the controller and
 * `drake sim` pass them (one PS of no GPU, workers of one GPU: gpu_job),
 * and a round's actions found. Its includer includes <cmocka.h> (and what
 * cmocka needs) first.
 */
#ifndef DRAKE_GANG_ROUND_TESTUTIL_H
#define DRAKE_GANG_ROUND_TESTUTIL_H

#include <stddef.h>
#include <string.h>

#include "gang/gang_testutil.h"
#include "gang/round.h"

#define NOW  10000.0 /* the rounds' clock */
#define MAXW 8       /* workers a test job may have */

/* A job and the storage its input borrows. */
struct tj {
	struct drake_round_job j;
	struct drake_round_member m[1 + MAXW];
	unsigned char member[MAXW];
	struct drake_round_place place[2];
};

/* A new job: every member waits behind its gate. */
static inline void new_job(struct tj *t, const char *name, double created, int min, int want,
                           int max)
{
	memset(t, 0, sizeof(*t));
	t->j.name = name;
	t->j.uid = name;
	t->j.created = created;
	t->j.req = gpu_job(1, min, want);
	t->j.max_workers = max;
	t->j.ps = t->m;
	t->j.workers = t->m + 1;
	t->j.progress = -1;
	for (int i = 0; i < 1 + MAXW; i++)
		t->m[i] = (struct drake_round_member){.state = DRAKE_MEMBER_WAITING, .node = -1};
}

static inline void place(struct drake_round_member *m, int node, const char *gang, int size)
{
	*m = (struct drake_round_member){.state = DRAKE_MEMBER_PLACED,
	                                 .node = node,
	                                 .bound = true,
	                                 .gang = gang,
	                                 .gang_size = size};
}

/* A running job of wave gang: its PS on node ps, workers 0..n-1 on nodes[k],
 * admitted at `admitted`, and a record listing them. */
static inline void running_job(struct tj *t, const char *name, double admitted, int min, int max,
                               const char *gang, int ps, const int *nodes, int n)
{
	new_job(t, name, admitted, min, n, max);
	t->j.admitted = admitted;
	place(&t->j.ps[0], ps, gang, 1 + n);
	for (int k = 0; k < n; k++) {
		place(&t->j.workers[k], nodes[k], gang, 1 + n);
		t->member[k] = 1;
	}
	t->j.rec = (struct drake_round_record){
	    .present = true, .gang = gang, .member = t->member, .n = n, .at = admitted};
}

/* One round over t[0..n) (at most 8) at NOW. */
static inline void run(const struct drake_cluster *c, struct tj *t, size_t n,
                       const struct drake_round_opts *o, struct drake_round *r)
{
	struct drake_round_job jobs[8];
	assert_true(n <= 8);
	for (size_t i = 0; i < n; i++)
		jobs[i] = t[i].j;
	assert_int_equal(drake_round(c, jobs, n, NOW, o, r), DRAKE_OK);
}

/* The only action of kind k for job j (the test fails on none or two). */
static inline const struct drake_round_action *only(const struct drake_round *r,
                                                    enum drake_round_kind k, int j)
{
	const struct drake_round_action *a = NULL;
	for (size_t i = 0; i < r->n; i++)
		if (r->act[i].kind == k && r->act[i].job == j) {
			assert_null(a);
			a = &r->act[i];
		}
	assert_non_null(a);
	return a;
}

/* How many actions of kind k the round has. */
static inline size_t count(const struct drake_round *r, enum drake_round_kind k)
{
	size_t n = 0;
	for (size_t i = 0; i < r->n; i++)
		n += r->act[i].kind == k;
	return n;
}

#endif
