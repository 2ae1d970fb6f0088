/* dragon_step_test.c - one run of DRAGON's SchedulingAlgorithm: which phase
 * runs when, what each one does, and the action timer. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gang/dragon_step.h"
#include "gang/gang_testutil.h"

/* One running job "old" on a:8 b:8: PS on a, workers a,a,a,a,b,b,b,b
 * (min 2, max 12), admitted at 10; a and b are full but for a's 4 GPUs. */
static const int old_ps[] = {0}, old_w[] = {0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1};

struct world {
	struct drake_cluster c;
	struct drake_running_job r[2];
	size_t nr;
	struct drake_admission_entry w[3];
	size_t nw;
	int order[4];
	struct drake_dragon_opts o;
	struct drake_dragon_state st;
	struct drake_step out;
};

/* Adds running job name (min 2 of 1 GPU), admitted at admitted, its PS on
 * ps[0] and its first `workers` workers on w[], charged to the cluster. */
static void add_running(struct world *x, const char *name, double admitted, int max, const int *ps,
                        const int *w, int workers)
{
	struct drake_gang_req g = gpu_job(1, 2, 8);
	x->r[x->nr++] = (struct drake_running_job){.name = name,
	                                           .admitted = admitted,
	                                           .progress = -1,
	                                           .min_workers = 2,
	                                           .max_workers = max,
	                                           .ps = g.ps,
	                                           .worker = g.worker,
	                                           .n_ps = 1,
	                                           .ps_node = ps,
	                                           .n_workers = workers,
	                                           .worker_node = w,
	                                           .last_scaled = admitted};
	drake_cluster_charge(&x->c, (size_t)ps[0], &g.ps, 1);
	for (int s = 0; s < workers; s++)
		drake_cluster_charge(&x->c, (size_t)w[s], &g.worker, 1);
}

/* spec: the cluster; workers: how many of old's slots run (0: no running
 * job); waiting jobs (created, min, want) up to want 0. */
static void build(struct world *x, const char *spec, int workers, const int (*wait)[3])
{
	memset(x, 0, sizeof(*x));
	assert_int_equal(cluster_from(&x->c, spec), 0);
	for (size_t i = 0; i < x->c.n; i++)
		x->order[i] = (int)i;
	if (workers > 0)
		add_running(x, "old", 10, 12, old_ps, old_w, workers);
	for (; wait && x->nw < 3 && wait[x->nw][2] > 0; x->nw++) {
		struct drake_admission_entry *e = &x->w[x->nw];
		e->name = x->nw == 0 ? "head" : x->nw == 1 ? "second" : "third";
		e->created = wait[x->nw][0];
		e->req = gpu_job(1, wait[x->nw][1], wait[x->nw][2]);
	}
	x->o = (struct drake_dragon_opts){.starve_after = 30, .idle_after = 60};
}

static void run(struct world *x, double now)
{
	struct drake_res before[5];
	for (size_t i = 0; i < x->c.n; i++)
		before[i] = x->c.nodes[i].used;
	assert_int_equal(drake_dragon_step(&x->c, x->order, x->c.n, x->w, x->nw, x->r, x->nr, now,
	                                   &x->o, &x->st, &x->out),
	                 DRAKE_OK);
	for (size_t i = 0; i < x->c.n; i++) /* the snapshot is the caller's */
		assert_memory_equal(&x->c.nodes[i].used, &before[i], sizeof(before[i]));
}

static void release(struct world *x)
{
	drake_step_release(&x->out);
	drake_admission_release(x->w, x->nw);
	drake_cluster_release(&x->c);
}

static int count(const struct drake_step *s, enum drake_act_kind k)
{
	int n = 0;
	for (size_t i = 0; i < s->n; i++)
		n += s->act[i].kind == k;
	return n;
}

static void admits_only_the_first_job_that_fits_per_run(void **state)
{
	(void)state;
	struct world x;
	/* c is empty: both fit, DRAGON admits one per run */
	static const int wait[][3] = {{100, 2, 4}, {101, 2, 4}, {0, 0, 0}};
	build(&x, "a:8:0 b:8:0 c:8:0", 0, wait);
	x.st.last_action = 100;
	run(&x, 110);
	assert_int_equal(x.out.n, 1);
	assert_int_equal(x.out.act[0].kind, DRAKE_ACT_ADMIT);
	assert_int_equal(x.out.act[0].job, 0);
	assert_int_equal(x.w[0].status, DRAKE_ADMIT_STARTED);
	assert_int_equal(x.w[0].plan.n_workers, 4);  /* all it asks for */
	assert_int_equal(x.w[0].plan.ps_node[0], 0); /* first fit: a, in order */
	assert_int_equal(x.w[1].status, DRAKE_ADMIT_NOT_TRIED);
	assert_true(x.st.last_action == 110);
	/* the second starves at 131 */
	assert_true(x.out.next == 130);
	release(&x);
}

static void a_job_that_does_not_fit_is_passed_over_for_one_that_does(void **state)
{
	(void)state;
	struct world x;
	/* 8 GPUs free (a:4 b:4); the head needs 10 at least */
	static const int wait[][3] = {{100, 10, 10}, {101, 2, 2}, {0, 0, 0}};
	build(&x, "a:8:0 b:8:0", 8, wait);
	x.st.last_action = 100;
	run(&x, 110);
	assert_int_equal(x.w[0].status, DRAKE_ADMIT_WAITING);
	assert_non_null(strstr(x.w[0].why, "first fit"));
	assert_int_equal(x.w[1].status, DRAKE_ADMIT_STARTED);
	assert_int_equal(count(&x.out, DRAKE_ACT_ADMIT), 1);
	assert_int_equal(x.out.act[0].job, 1);
	release(&x);
}

static void a_starving_head_scales_down_and_is_admitted_only_at_the_next_run(void **state)
{
	(void)state;
	struct world x;
	/* old's 8 workers leave a:4 b:4 free; the head (min 10) has waited
	 * 30 s: ScaleDown takes two of old's workers, lonely ones (on b)
	 * first, and this run's admission still sees the resources from
	 * before it */
	static const int wait[][3] = {{100, 10, 10}, {0, 0, 0}};
	build(&x, "a:8:0 b:8:0", 8, wait);
	x.st.last_action = 100;
	run(&x, 130);
	assert_int_equal(count(&x.out, DRAKE_ACT_SHRINK), 2);
	for (size_t i = 0; i < x.out.n; i++) {
		const struct drake_action *a = &x.out.act[i];
		if (a->kind != DRAKE_ACT_SHRINK)
			continue;
		assert_int_equal(a->job, 0);
		assert_true(a->slot >= 1); /* worker 0 is DRAGON's Critical */
		assert_int_equal(a->node, old_w[a->slot]);
		assert_int_equal(a->node, 1);
		assert_int_equal(a->for_job, 0);
	}
	assert_int_equal(count(&x.out, DRAKE_ACT_ADMIT), 0);
	assert_int_equal(x.w[0].status, DRAKE_ADMIT_WAITING);
	assert_true(x.st.last_action == 130);
	release(&x);
}

static void a_failed_scale_down_admits_nobody_and_restarts_the_timer(void **state)
{
	(void)state;
	struct world x;
	/* the head needs 20 workers: no ScaleDown of old's (min 2) makes room;
	 * the small job behind it would fit, but phase 2 does not run */
	static const int wait[][3] = {{100, 20, 20}, {101, 1, 1}, {0, 0, 0}};
	build(&x, "a:8:0 b:8:0", 8, wait);
	x.st.last_action = 50;
	run(&x, 130);
	assert_int_equal(x.out.n, 0);
	assert_int_equal(x.w[1].status, DRAKE_ADMIT_NOT_TRIED);
	assert_true(x.st.last_action == 130);
	assert_true(x.out.next == 190); /* the head is tried at every run; ScaleUp then */
	release(&x);
}

static void scales_up_in_running_order_once_idle_and_restarts_the_timer(void **state)
{
	(void)state;
	struct world x;
	build(&x, "a:8:0 b:8:0", 8, NULL);
	x.st.last_action = 40;
	run(&x, 99);
	assert_int_equal(x.out.n, 0); /* 59 s idle: not yet */
	assert_true(x.out.next == 100);
	drake_step_release(&x.out);
	run(&x, 100);
	assert_int_equal(count(&x.out, DRAKE_ACT_GROW), 4); /* up to max 12 */
	for (size_t i = 0; i < x.out.n; i++) {
		assert_int_equal(x.out.act[i].job, 0);
		assert_int_equal(x.out.act[i].slot, -1);
		assert_int_equal(x.out.act[i].node, 0); /* a's 4 free GPUs */
	}
	assert_true(x.st.last_action == 100);
	assert_true(x.out.next == 160);
	release(&x);
}

/* A job whose members have begun to end has left DRAGON's running list:
 * ScaleUp passes it over for the next one, ScaleDown takes nothing from it. */
static void an_ending_job_neither_grows_nor_gives(void **state)
{
	(void)state;
	struct world x;
	build(&x, "a:8:0 b:8:0 c:8:0", 8, NULL);
	static const int young_ps[] = {2}, young_w[] = {2, 2, 2, 2, 2, 2, 2, 2};
	add_running(&x, "young", 20, 8, young_ps, young_w, 2);
	x.st.last_action = 40;
	run(&x, 100); /* old first in running order: its 4 on a */
	assert_int_equal(count(&x.out, DRAKE_ACT_GROW), 10);
	assert_int_equal(x.out.act[0].job, 0);
	drake_step_release(&x.out);
	x.r[0].ending = true;
	x.st.last_action = 40;
	run(&x, 100); /* old ends: young takes a's 4 and c's 2 */
	assert_int_equal(count(&x.out, DRAKE_ACT_GROW), 6);
	for (size_t i = 0; i < x.out.n; i++)
		assert_int_equal(x.out.act[i].job, 1);
	drake_step_release(&x.out);
	/* a head of 16 has starved (14 GPUs are free): young is at its
	 * minimum and old is ending, so ScaleDown fails and nobody gives */
	x.w[0] = (struct drake_admission_entry){.name = "head", .created = 100};
	x.w[0].req = gpu_job(1, 16, 16);
	x.nw = 1;
	x.r[1].n_workers = 2;
	x.st.last_action = 100;
	run(&x, 130);
	assert_int_equal(count(&x.out, DRAKE_ACT_SHRINK), 0);
	x.r[0].ending = false; /* not ending, old gives to the head */
	drake_step_release(&x.out);
	run(&x, 130);
	assert_true(count(&x.out, DRAKE_ACT_SHRINK) > 0);
	for (size_t i = 0; i < x.out.n; i++)
		if (x.out.act[i].kind == DRAKE_ACT_SHRINK)
			assert_int_equal(x.out.act[i].job, 0);
	release(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(admits_only_the_first_job_that_fits_per_run),
	    cmocka_unit_test(a_job_that_does_not_fit_is_passed_over_for_one_that_does),
	    cmocka_unit_test(a_starving_head_scales_down_and_is_admitted_only_at_the_next_run),
	    cmocka_unit_test(a_failed_scale_down_admits_nobody_and_restarts_the_timer),
	    cmocka_unit_test(scales_up_in_running_order_once_idle_and_restarts_the_timer),
	    cmocka_unit_test(an_ending_job_neither_grows_nor_gives),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
