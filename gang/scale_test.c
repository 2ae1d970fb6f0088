/* scale_test.c - drake's decision step in virtual time: starvation shrink,
 * the reservation for the head of the queue, and growth by modelled gain.
 *
 * Every case builds a snapshot with its running jobs charged, calls
 * drake_scale_step() once at `now` and checks what a user relies on; every
 * step also passes check_step(), the rules that hold whatever the case. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gang/gang_testutil.h"
#include "gang/scale.h"

#define MAXR 4  /* running jobs per case */
#define MAXW 4  /* waiting jobs per case */
#define MAXS 12 /* workers per running job */

/* A running job: one PS on node `ps`, worker slot k on node workers[k]
 * (node names are one letter). Progress is unknown, as in `drake sim`. */
struct rjob {
	const char *name;
	double admitted, last_scaled;
	int min, max;
	char ps;
	const char *workers;
	bool gave;     /* gave_to_waiting */
	double ending; /* > 0: its first member ended then (ending_since) */
	double grow;   /* > 0: its own cost of a grow (cost.grow), seconds */
};

/* A waiting job of gpu_job(1, min, want); worker_gpu overrides its
 * workers' GPUs when not 0. */
struct wjob {
	const char *name;
	double created;
	int min, want;
	int worker_gpu;
};

struct world;

struct scase {
	const char *name;
	const char *cluster;
	struct rjob r[MAXR]; /* up to the first without a name */
	struct wjob w[MAXW]; /* FIFO order, up to the first without a name */
	double now;
	double locality_penalty; /* 0: the default model's */
	bool strict;             /* backfill off */
	bool narrow;             /* start_narrow: new jobs start with what fits at once */
	bool fifo;               /* the FIFO queue instead of the default (pack) */
	/* expected */
	int shrinks, admits, grows;
	const char *status; /* per waiting job: S started, W waiting, N never,
	                       - not tried, I invalid */
	double next;        /* NAN: the case's check looks at it */
	const char *held;   /* the waiting job given nodes, or NULL */
	void (*check)(const struct world *);
};

struct world {
	struct drake_cluster c;
	struct drake_running_job r[MAXR];
	int ps[MAXR];
	int wn[MAXR][MAXS];
	size_t nr;
	struct drake_admission_entry w[MAXW];
	size_t nw;
	struct drake_scale_opts o;
	struct drake_step st;
};

static int node(const struct drake_cluster *c, char name)
{
	char s[2] = {name, '\0'};
	int i = drake_cluster_find(c, s);
	assert_true(i >= 0);
	return i;
}

static void world_build(struct world *x, const struct scase *k)
{
	memset(x, 0, sizeof(*x));
	assert_int_equal(cluster_from(&x->c, k->cluster), 0);
	struct drake_gang_req g = gpu_job(1, 1, 1);
	for (; x->nr < MAXR && k->r[x->nr].name; x->nr++) {
		const struct rjob *s = &k->r[x->nr];
		struct drake_running_job *j = &x->r[x->nr];
		int n = (int)strlen(s->workers);
		assert_true(n <= MAXS);
		x->ps[x->nr] = node(&x->c, s->ps);
		for (int i = 0; i < n; i++)
			x->wn[x->nr][i] = node(&x->c, s->workers[i]);
		*j = (struct drake_running_job){.name = s->name,
		                                .admitted = s->admitted,
		                                .progress = -1,
		                                .min_workers = s->min,
		                                .max_workers = s->max,
		                                .ps = g.ps,
		                                .worker = g.worker,
		                                .n_ps = 1,
		                                .ps_node = &x->ps[x->nr],
		                                .n_workers = n,
		                                .worker_node = x->wn[x->nr],
		                                .last_scaled = s->last_scaled,
		                                .gave_to_waiting = s->gave,
		                                .ending = s->ending > 0,
		                                .ending_since = s->ending,
		                                .cost = {.grow = s->grow}};
		drake_cluster_charge(&x->c, (size_t)j->ps_node[0], &j->ps, 1);
		for (int i = 0; i < n; i++)
			drake_cluster_charge(&x->c, (size_t)j->worker_node[i], &j->worker, 1);
	}
	for (; x->nw < MAXW && k->w[x->nw].name; x->nw++) {
		const struct wjob *s = &k->w[x->nw];
		struct drake_admission_entry *e = &x->w[x->nw];
		e->name = s->name;
		e->created = s->created;
		e->req = gpu_job(1, s->min, s->want);
		if (s->worker_gpu)
			e->req.worker.gpu = s->worker_gpu;
	}
	drake_scale_defaults(&x->o);
	if (k->locality_penalty > 0)
		x->o.speed.locality_penalty = k->locality_penalty;
	x->o.backfill = !k->strict;
	x->o.start_narrow = k->narrow;
	if (k->fifo)
		x->o.queue = DRAKE_QUEUE_FIFO;
}

static void world_free(struct world *x)
{
	drake_step_release(&x->st);
	drake_admission_release(x->w, x->nw);
	drake_cluster_release(&x->c);
}

static char status_char(enum drake_admit_status s)
{
	switch (s) {
	case DRAKE_ADMIT_STARTED: return 'S';
	case DRAKE_ADMIT_WAITING: return 'W';
	case DRAKE_ADMIT_NEVER: return 'N';
	case DRAKE_ADMIT_INVALID: return 'I';
	case DRAKE_ADMIT_NOT_TRIED: return '-';
	}
	return '?';
}

static int count(const struct drake_step *st, enum drake_act_kind kind, int job)
{
	int n = 0;
	for (size_t i = 0; i < st->n; i++)
		n += st->act[i].kind == kind && (job < 0 || st->act[i].job == job);
	return n;
}

/*
 * What holds after any step: a SHRINK names a worker of the caller's view
 * (slot >= 1, its node as the caller has it, once), leaves the job at min
 * or more and serves a job that starts after it; a GROW has a node and a
 * gain, never passes max and never grows a job that gave to a waiting one;
 * every started job has one ADMIT; the actions applied overcommit no node;
 * a held job waits. used[] is the snapshot's usage before the step, which
 * the step must not have changed.
 */
static void check_step(const struct world *x, const struct drake_res *used)
{
	const struct drake_step *st = &x->st;
	for (size_t i = 0; i < x->c.n; i++)
		assert_memory_equal(&x->c.nodes[i].used, &used[i], sizeof(used[i]));
	for (size_t i = 0; i < st->n; i++) {
		const struct drake_action *a = &st->act[i];
		switch (a->kind) {
		case DRAKE_ACT_SHRINK: {
			assert_true(a->job >= 0 && (size_t)a->job < x->nr);
			const struct drake_running_job *j = &x->r[a->job];
			assert_true(a->slot >= 1 && a->slot < j->n_workers);
			assert_int_equal(a->node, j->worker_node[a->slot]);
			for (size_t k = 0; k < i; k++)
				assert_false(st->act[k].kind == DRAKE_ACT_SHRINK &&
				             st->act[k].job == a->job &&
				             st->act[k].slot == a->slot);
			assert_true(a->for_job >= 0 && (size_t)a->for_job < x->nw);
			assert_int_equal(x->w[a->for_job].status, DRAKE_ADMIT_STARTED);
			bool admitted_after = false;
			for (size_t k = i + 1; k < st->n; k++)
				admitted_after |= st->act[k].kind == DRAKE_ACT_ADMIT &&
				                  st->act[k].job == a->for_job;
			assert_true(admitted_after);
			break;
		}
		case DRAKE_ACT_GROW:
			assert_true(a->job >= 0 && (size_t)a->job < x->nr);
			assert_int_equal(a->slot, -1);
			assert_int_equal(a->for_job, -1);
			assert_true(a->node >= 0 && (size_t)a->node < x->c.n);
			assert_true(x->c.nodes[a->node].schedulable);
			assert_true(a->gain > 0);
			assert_false(x->r[a->job].gave_to_waiting);
			break;
		case DRAKE_ACT_ADMIT:
			assert_true(a->job >= 0 && (size_t)a->job < x->nw);
			assert_int_equal(x->w[a->job].status, DRAKE_ADMIT_STARTED);
			assert_int_equal(count(st, DRAKE_ACT_ADMIT, a->job), 1);
			assert_int_equal(a->slot, -1);
			assert_int_equal(a->node, -1);
			break;
		}
	}
	for (size_t j = 0; j < x->nr; j++) {
		int left = x->r[j].n_workers - count(st, DRAKE_ACT_SHRINK, (int)j);
		assert_true(left >= x->r[j].min_workers ||
		            count(st, DRAKE_ACT_SHRINK, (int)j) == 0);
		assert_true(left + count(st, DRAKE_ACT_GROW, (int)j) <=
		            (x->r[j].max_workers > x->r[j].n_workers ? x->r[j].max_workers
		                                                     : x->r[j].n_workers));
	}
	size_t started = 0;
	for (size_t i = 0; i < x->nw; i++)
		started += x->w[i].status == DRAKE_ADMIT_STARTED;
	assert_int_equal(count(st, DRAKE_ACT_ADMIT, -1), started);

	/* The cluster after the step: nothing overcommitted. */
	struct drake_cluster after;
	assert_int_equal(drake_cluster_clone(&after, &x->c), DRAKE_OK);
	for (size_t i = 0; i < st->n; i++) {
		const struct drake_action *a = &st->act[i];
		if (a->kind == DRAKE_ACT_SHRINK)
			drake_cluster_charge(&after, (size_t)a->node, &x->r[a->job].worker, -1);
		else if (a->kind == DRAKE_ACT_GROW)
			drake_cluster_charge(&after, (size_t)a->node, &x->r[a->job].worker, 1);
		else
			drake_plan_charge(&after, &x->w[a->job].req, &x->w[a->job].plan, 1);
	}
	for (size_t i = 0; i < after.n; i++)
		assert_true(drake_res_fits(&after.nodes[i].used, &after.nodes[i].alloc));
	drake_cluster_release(&after);

	if (st->reserved_for >= 0) {
		assert_true((size_t)st->reserved_for < x->nw);
		assert_int_equal(x->w[st->reserved_for].status, DRAKE_ADMIT_WAITING);
		assert_true(st->reserved_nodes > 0);
	} else {
		assert_int_equal(st->reserved_nodes, 0);
	}
}

/* One step at now over the world as built (entries reset first). */
static void world_step(struct world *x, double now)
{
	drake_step_release(&x->st);
	drake_admission_release(x->w, x->nw);
	for (size_t i = 0; i < x->nw; i++) {
		x->w[i].status = DRAKE_ADMIT_NOT_TRIED;
		x->w[i].why[0] = '\0';
	}
	struct drake_res used[16];
	assert_true(x->c.n <= 16);
	for (size_t i = 0; i < x->c.n; i++)
		used[i] = x->c.nodes[i].used;
	drake_err err = drake_scale_step(&x->c, x->w, x->nw, x->r, x->nr, now, &x->o, &x->st);
	if (err)
		print_error("drake_scale_step: %s\n", drake_strerror(err));
	assert_int_equal(err, DRAKE_OK);
	check_step(x, used);
}

static void print_step(const struct world *x)
{
	static const char *kinds[] = {"ADMIT", "SHRINK", "GROW"};
	for (size_t i = 0; i < x->st.n; i++) {
		const struct drake_action *a = &x->st.act[i];
		print_error("  %s job %d slot %d node %d for %d gain %.4f\n", kinds[a->kind],
		            a->job, a->slot, a->node, a->for_job, a->gain);
	}
	for (size_t i = 0; i < x->nw; i++)
		print_error("  %s: %s %s\n", x->w[i].name, drake_admit_status_name(x->w[i].status),
		            x->w[i].why);
	print_error("  next %.6f reserved_for %d (%d nodes)\n", x->st.next, x->st.reserved_for,
	            x->st.reserved_nodes);
}

static void run_case(void **state)
{
	const struct scase *k = *state;
	struct world x;
	world_build(&x, k);
	world_step(&x, k->now);
	char got[MAXW + 1] = "";
	for (size_t i = 0; i < x.nw; i++)
		got[i] = status_char(x.w[i].status);
	bool ok = count(&x.st, DRAKE_ACT_SHRINK, -1) == k->shrinks &&
	          count(&x.st, DRAKE_ACT_ADMIT, -1) == k->admits &&
	          count(&x.st, DRAKE_ACT_GROW, -1) == k->grows && strcmp(got, k->status) == 0 &&
	          (isnan(k->next) || x.st.next == k->next);
	if (!ok)
		print_step(&x);
	assert_int_equal(count(&x.st, DRAKE_ACT_SHRINK, -1), k->shrinks);
	assert_int_equal(count(&x.st, DRAKE_ACT_ADMIT, -1), k->admits);
	assert_int_equal(count(&x.st, DRAKE_ACT_GROW, -1), k->grows);
	assert_string_equal(got, k->status);
	if (!isnan(k->next))
		assert_true(x.st.next == k->next);
	if (k->held) {
		assert_true(x.st.reserved_for >= 0);
		assert_string_equal(x.w[x.st.reserved_for].name, k->held);
	} else {
		assert_int_equal(x.st.reserved_for, -1);
	}
	if (k->check)
		k->check(&x);
	world_free(&x);
}

/* ---- per-case checks ---- */

/* The jobs ahead got the ending job's room, and say so. */
static void held_for_the_queue(const struct world *x)
{
	assert_non_null(strstr(x->w[0].why, "of ending jobs held for it"));
	assert_non_null(strstr(x->w[1].why, "of ending jobs held for it"));
	assert_null(strstr(x->w[2].why, "held for it"));
}

/* "wide" waits for the ending job's room and says how wide it would be. */
static void waits_for_the_ending_room(const struct world *x)
{
	assert_non_null(
	    strstr(x->w[0].why, "4 of 8 workers fit now, 8 once the ending jobs' room"));
	assert_non_null(strstr(x->w[0].why, "of ending jobs held for it"));
}

static void starts_with_four(const struct world *x)
{
	assert_int_equal(x->w[0].plan.n_workers, 4);
}

static void starts_with_three_behind_the_head(const struct world *x)
{
	assert_non_null(strstr(x->w[0].why, "of ending jobs held for it"));
	assert_int_equal(x->w[1].plan.n_workers, 3);
}

/* Index of the first action of kind for job (-1: none). */
static int first(const struct drake_step *st, enum drake_act_kind kind, int job)
{
	for (size_t i = 0; i < st->n; i++)
		if (st->act[i].kind == kind && st->act[i].job == job)
			return (int)i;
	return -1;
}

/* The starving job got the workers it needs (2), not the 4 it wants. */
static void starts_with_its_min(const struct world *x)
{
	assert_int_equal(x->w[0].plan.n_workers, 2);
	for (size_t i = 0; i < x->st.n; i++)
		if (x->st.act[i].kind == DRAKE_ACT_SHRINK)
			assert_int_equal(x->st.act[i].for_job, 0);
}

static void one_from_each_job(const struct world *x)
{
	assert_int_equal(count(&x->st, DRAKE_ACT_SHRINK, 0), 1);
	assert_int_equal(count(&x->st, DRAKE_ACT_SHRINK, 1), 1);
}

static void not_worker_zero(const struct world *x)
{
	int i = first(&x->st, DRAKE_ACT_SHRINK, 0);
	assert_true(i >= 0);
	assert_int_equal(x->st.act[i].slot, 7);
	assert_int_equal(x->st.act[i].node, node(&x->c, 'a'));
}

/* Its lonely worker on a went first, but a 2-GPU worker needs two GPUs
 * on one node: b's two were what made room, and a's was given back. */
static void lonely_worker_given_back(const struct world *x)
{
	for (size_t i = 0; i < x->st.n; i++)
		if (x->st.act[i].kind == DRAKE_ACT_SHRINK)
			assert_int_equal(x->st.act[i].node, node(&x->c, 'b'));
}

/* The second job's removals name the caller's slots (9 and 8), not the
 * slots of the list the first job's removals shortened (7 and 6). */
static void caller_slots(const struct world *x)
{
	int a = node(&x->c, 'a'), b = node(&x->c, 'b');
	const struct drake_action want[] = {
	    {DRAKE_ACT_SHRINK, 1, 2, a, 0, 0},   {DRAKE_ACT_SHRINK, 1, 1, a, 0, 0},
	    {DRAKE_ACT_ADMIT, 0, -1, -1, -1, 0}, {DRAKE_ACT_SHRINK, 1, 9, b, 1, 0},
	    {DRAKE_ACT_SHRINK, 1, 8, b, 1, 0},   {DRAKE_ACT_ADMIT, 1, -1, -1, -1, 0},
	};
	assert_int_equal(x->st.n, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < x->st.n; i++) {
		assert_int_equal(x->st.act[i].kind, want[i].kind);
		assert_int_equal(x->st.act[i].job, want[i].job);
		assert_int_equal(x->st.act[i].slot, want[i].slot);
		assert_int_equal(x->st.act[i].node, want[i].node);
		assert_int_equal(x->st.act[i].for_job, want[i].for_job);
	}
}

static double rate(const struct world *x, int w, int nodes)
{
	struct drake_speed m = x->o.speed;
	m.node_gpus = drake_speed_node_gpus(&x->c);
	return drake_speed_rate(&m, w, 1, nodes);
}

/* Every GROW of job 0 is on node `on` and carries the batch's gain from w0
 * workers on n0 nodes to w1 on n1. */
static void grows_on(const struct world *x, char on, int w0, int n0, int w1, int n1)
{
	double gain = rate(x, w1, n1) / rate(x, w0, n0) - 1;
	assert_true(gain > 0);
	for (size_t i = 0; i < x->st.n; i++) {
		const struct drake_action *a = &x->st.act[i];
		if (a->kind != DRAKE_ACT_GROW)
			continue;
		assert_int_equal(a->job, 0);
		assert_int_equal(a->node, node(&x->c, on));
		assert_true(fabs(a->gain - gain) < 1e-12);
	}
}

static void grows_to_max_beside_its_ps(const struct world *x)
{
	grows_on(x, 'a', 1, 1, 3, 1);
}

static void only_the_other_job_grows(const struct world *x)
{
	assert_int_equal(count(&x->st, DRAKE_ACT_GROW, 0), 0);
	assert_int_equal(count(&x->st, DRAKE_ACT_GROW, 1), 2);
}

static void grows_onto_b(const struct world *x)
{
	grows_on(x, 'b', 2, 1, 6, 2);
}

static void grows_on_its_ps_node_only(const struct world *x)
{
	grows_on(x, 'a', 2, 1, 4, 1);
}

/* The small job behind the held node waits rather than take it. */
static void small_stays_off_the_held_node(const struct world *x)
{
	int b = node(&x->c, 'b');
	assert_int_equal(x->st.reserved_nodes, 1);
	assert_int_equal(x->st.reserved_for, 0);
	const struct drake_plan *p = &x->w[1].plan;
	for (int i = 0; x->w[1].status == DRAKE_ADMIT_STARTED && i < p->n_workers; i++)
		assert_int_not_equal(p->worker_node[i], b);
	for (int i = 0; x->w[1].status == DRAKE_ADMIT_STARTED && i < p->n_ps; i++)
		assert_int_not_equal(p->ps_node[i], b);
}

static void small_backfills_onto_b(const struct world *x)
{
	int b = node(&x->c, 'b');
	const struct drake_plan *p = &x->w[1].plan;
	assert_int_equal(p->n_workers, 2);
	assert_int_equal(p->ps_node[0], b);
	for (int i = 0; i < p->n_workers; i++)
		assert_int_equal(p->worker_node[i], b);
}

/* A batch of one worker (7 -> 8 on one node) saves 61 s * (1 - T7/T8),
 * less than the 10 s pause; it pays from admitted + 10 / (1 - T7/T8). */
static void looked_at_again_when_it_pays(const struct world *x)
{
	double pays = 0 + x->o.speed.rescale_pause / (1 - rate(x, 7, 1) / rate(x, 8, 1));
	assert_true(pays > 61);
	assert_true(fabs(x->st.next - pays) < 1e-9);
}

/* The same job whose change costs 18 s (torchrun's shrink) saves
 * 110 s * (1 - T7/T8), about 10 s: not grown, and looked at again when
 * the saving reaches its own pause, not the global one. */
static void looked_at_again_when_its_own_pause_pays(const struct world *x)
{
	double frac = 1 - rate(x, 7, 1) / rate(x, 8, 1);
	assert_true(110 * frac > x->o.speed.rescale_pause && 110 * frac < 18);
	assert_true(fabs(x->st.next - 18 / frac) < 1e-9);
}

static void says_why(const struct world *x)
{
	for (size_t i = 0; i < x->nw; i++)
		assert_true(x->w[i].status == DRAKE_ADMIT_STARTED || x->w[i].why[0] != '\0');
}

/* ---- the cases ---- */

static const struct scase cases[] = {
    /* 1. the starvation threshold: two 8-worker jobs fill a:8 b:8, the
     * newer one (on b) gives first */
    {.name = "a job that does not fit takes no workers after 29.9 s of waiting",
     .cluster = "a:8:0 b:8:0",
     .r = {{"old", 0, 0, 2, 8, 'a', "aaaaaaaa", false},
           {"new", 10, 10, 2, 8, 'b', "bbbbbbbb", false}},
     .w = {{"late", 100, 2, 4, 0}},
     .now = 129.9,
     .status = "W",
     .next = 130,
     .check = says_why},
    {.name = "at 30 s a job that does not fit takes the 2 workers it needs, not the 4 it wants, "
             "and starts",
     .cluster = "a:8:0 b:8:0",
     .r = {{"old", 0, 0, 2, 8, 'a', "aaaaaaaa", false},
           {"new", 10, 10, 2, 8, 'b', "bbbbbbbb", false}},
     .w = {{"late", 100, 2, 4, 0}},
     .now = 130,
     .shrinks = 2,
     .admits = 1,
     .status = "S",
     .next = 190, /* acted: the idle timer restarts */
     .check = starts_with_its_min},
    /* 2. never below min, never worker 0 */
    {.name = "a starving job leaves every running job at its min",
     .cluster = "a:8:0 b:8:0",
     .r = {{"old", 0, 0, 7, 8, 'a', "aaaaaaaa", false},
           {"new", 10, 10, 7, 8, 'b', "bbbbbbbb", false}},
     .w = {{"late", 0, 2, 2, 0}},
     .now = 30,
     .shrinks = 2,
     .admits = 1,
     .status = "S",
     .next = 90, /* acted: the idle timer restarts */
     .check = one_from_each_job},
    {.name = "a starving job never takes worker 0, even the only one off its PS's node",
     .cluster = "a:8:0 b:8:0",
     .r = {{"spread", 0, 0, 1, 8, 'a', "baaaaaaa", false},
           {"full", 10, 10, 7, 7, 'b', "bbbbbbb", false}},
     .w = {{"late", 0, 2, 2, 0}},
     .now = 30,
     .shrinks = 1,
     .admits = 1,
     .status = "S",
     .next = 90, /* acted: the idle timer restarts */
     .check = not_worker_zero},
    {.name = "removals name the caller's worker slots when two starving jobs shrink one job",
     .cluster = "a:8:0 b:8:0",
     .r = {{"fixed", 0, 0, 6, 6, 'a', "aaaaaa", false},
           {"wide", 10, 10, 2, 10, 'b', "baabbbbbbb", false}},
     .w = {{"first", 0, 2, 2, 0}, {"second", 1, 2, 2, 0}},
     .now = 31,
     .shrinks = 4,
     .admits = 2,
     .status = "SS",
     .next = 91, /* acted: the idle timer restarts */
     .check = caller_slots},
    {.name = "a starving job takes the fewest workers: a removal that made no room is given back",
     .cluster = "a:8:0 b:8:0",
     .r = {{"fixed", 0, 0, 7, 7, 'a', "aaaaaaa", false},
           {"spread", 10, 10, 1, 9, 'b', "babbbbbbb", false}},
     .w = {{"two-gpu", 0, 1, 1, 2}},
     .now = 30,
     .shrinks = 2,
     .admits = 1,
     .status = "S",
     .next = 90, /* acted: the idle timer restarts */
     .check = lonely_worker_given_back},
    {.name = "a starving job whose worker is larger than any node takes nothing and is told it can "
             "never fit",
     .cluster = "a:8:0 b:8:0",
     .r = {{"j", 0, 0, 1, 8, 'a', "aaaaaaaa", false}},
     .w = {{"giant", 0, 1, 1, 12}},
     .now = 30,
     .status = "N",
     .next = INFINITY,
     .check = says_why},
    {.name = "a starving job with min above desired takes nothing and is told it is invalid",
     .cluster = "a:8:0 b:8:0",
     .r = {{"j", 0, 0, 1, 8, 'a', "aaaaaaaa", false}},
     .w = {{"bad", 0, 12, 1, 0}},
     .now = 30,
     .status = "I",
     .next = INFINITY,
     .check = says_why},
    /* 3. never above max */
    {.name = "growth stops at max workers however much room is left",
     .cluster = "a:8:0 b:8:0",
     .r = {{"j", 0, 0, 1, 3, 'a', "a", false}},
     .now = 1000,
     .grows = 2,
     .status = "",
     .next = INFINITY,
     .check = grows_to_max_beside_its_ps},
    /* 4. no flapping */
    {.name = "a job that gave workers to a waiting job is not grown, another job is",
     .cluster = "a:8:0 b:8:0",
     .r = {{"gave", 0, 0, 1, 4, 'a', "aa", true}, {"other", 0, 0, 1, 4, 'b', "bb", false}},
     .now = 1000,
     .grows = 2,
     .status = "",
     .next = INFINITY,
     .check = only_the_other_job_grows},
    {.name = "no growth 59 s after the newest scaling of any running job",
     .cluster = "a:8:0 b:8:0",
     .r = {{"scaled", 0, 200, 1, 4, 'a', "aa", false},
           {"younger", 100, 100, 1, 4, 'b', "bb", false}},
     .now = 259,
     .status = "",
     .next = 260},
    {.name = "growth 60 s after the newest scaling of any running job",
     .cluster = "a:8:0 b:8:0",
     .r = {{"scaled", 0, 200, 1, 4, 'a', "aa", false},
           {"younger", 100, 100, 1, 4, 'b', "bb", false}},
     .now = 260,
     .grows = 4,
     .status = "",
     .next = INFINITY},
    {.name = "a step that admits a job does not also grow and restarts the idle timer",
     .cluster = "a:8:0 b:8:0",
     .r = {{"j", 0, 0, 1, 8, 'a', "aa", false}},
     .w = {{"new", 995, 2, 2, 0}},
     .now = 1000,
     .admits = 1,
     .status = "S",
     .next = 1060},
    /* 5. who blocks growth */
    {.name = "a job that waits blocks growth",
     .cluster = "a:8:0 b:8:0",
     .r = {{"j", 0, 0, 1, 8, 'a', "aaaa", false}},
     .w = {{"big", 990, 14, 14, 0}},
     .now = 1000,
     .status = "W",
     .next = 1020},
    {.name = "jobs not tried behind a waiting head (strict FIFO) block growth",
     .cluster = "a:8:0 b:8:0",
     .r = {{"j", 0, 0, 1, 8, 'a', "aaaa", false}},
     .w = {{"big", 990, 14, 14, 0}, {"small", 995, 1, 1, 0}},
     .now = 1000,
     .strict = true,
     .status = "W-",
     .next = 1020},
    {.name = "a step that admits the only job looks again after the idle time, so the job "
             "it admitted can grow",
     .cluster = "a:8:0 b:8:0",
     .w = {{"only", 990, 1, 2, 0}},
     .now = 1000,
     .admits = 1,
     .status = "S",
     .next = 1060},
    {.name = "a job that can never fit does not block growth",
     .cluster = "a:8:0 b:8:0",
     .r = {{"j", 0, 0, 1, 8, 'a', "aaaa", false}},
     .w = {{"huge", 990, 40, 40, 0}},
     .now = 1000,
     .grows = 4,
     .status = "N",
     .next = INFINITY,
     .check = says_why},
    /* 6. the head of the queue is protected from backfill: in FIFO
     * order once it starves; under the pack queue (the default) once it
     * has waited age_after, the set that fills the free GPUs going first
     * until then */
    {.name = "a starving job that cannot start even by shrinking is given its node, and a small "
             "job behind it stays off that node",
     .cluster = "a:8:0 b:8:0",
     .r = {{"min-a", 0, 0, 7, 7, 'a', "aaaaaaa", false},
           {"min-b", 10, 10, 6, 6, 'b', "bbbbbb", false}},
     .w = {{"big", 0, 8, 8, 0}, {"small", 5, 2, 2, 0}},
     .now = 30,
     .fifo = true,
     .status = "WW",
     .next = 35,
     .held = "big",
     .check = small_stays_off_the_held_node},
    {.name = "under the pack queue the set that fills the free gpus starts before a starving job "
             "that has not waited age_after, which is then given its node",
     .cluster = "a:8:0 b:8:0",
     .r = {{"min-a", 0, 0, 7, 7, 'a', "aaaaaaa", false},
           {"min-b", 10, 10, 6, 6, 'b', "bbbbbb", false}},
     .w = {{"big", 0, 8, 8, 0}, {"small", 5, 2, 2, 0}},
     .now = 30,
     .admits = 1,
     .status = "WS",
     .next = 600,
     .held = "big"},
    {.name = "under the pack queue a starving job that has waited age_after is given its node, "
             "and a small job behind it stays off that node",
     .cluster = "a:8:0 b:8:0",
     .r = {{"min-a", 0, 0, 7, 7, 'a', "aaaaaaa", false},
           {"min-b", 10, 10, 6, 6, 'b', "bbbbbb", false}},
     .w = {{"big", 0, 8, 8, 0}, {"small", 5, 2, 2, 0}},
     .now = 600,
     .status = "WW",
     .next = 605,
     .held = "big",
     .check = small_stays_off_the_held_node},
    {.name = "before the big job starves, the small job behind it backfills onto that node",
     .cluster = "a:8:0 b:8:0",
     .r = {{"min-a", 0, 0, 7, 7, 'a', "aaaaaaa", false},
           {"min-b", 10, 10, 6, 6, 'b', "bbbbbb", false}},
     .w = {{"big", 0, 8, 8, 0}, {"small", 5, 2, 2, 0}},
     .now = 29,
     .admits = 1,
     .status = "WS",
     .next = 30,
     .check = small_backfills_onto_b},
    {.name = "a job behind the held node that needs more than the other nodes waits, it is not "
             "told it can never fit",
     .cluster = "a:8:0 b:8:0",
     .r = {{"min-a", 0, 0, 7, 7, 'a', "aaaaaaa", false},
           {"min-b", 10, 10, 6, 6, 'b', "bbbbbb", false}},
     .w = {{"big", 0, 8, 8, 0}, {"small", 5, 2, 2, 0}, {"wide", 6, 10, 10, 0}},
     .now = 30,
     .fifo = true,
     .status = "WWW",
     .next = 35,
     .held = "big",
     .check = says_why},
    /* 6b. the room of a job whose members are ending goes to the queue in
     * FIFO order: "done" has 12 workers left on b, c and d, its first ones
     * (on a) ended at 99.5; "head" (8) and "next" (8) fit the 16 GPUs once
     * it is gone, "small" (2) fits a now and would leave "next" a round
     * behind */
    {.name = "the room of an ending job is held for the jobs ahead in the queue that fit once it "
             "is free, and a small job behind them does not take it",
     .cluster = "a:4:0 b:4:0 c:4:0 d:4:0",
     .r = {{"done", 0, 0, 12, 12, 'b', "bbbbccccdddd", false, 99.5}},
     .w = {{"head", 90, 8, 8, 0}, {"next", 91, 8, 8, 0}, {"small", 92, 2, 2, 0}},
     .now = 100,
     .status = "WWW",
     .next = 109.5,
     .check = held_for_the_queue},
    {.name = "ending_hold after the first member ended, the small job backfills",
     .cluster = "a:4:0 b:4:0 c:4:0 d:4:0",
     .r = {{"done", 0, 0, 12, 12, 'b', "bbbbccccdddd", false, 89.9}},
     .w = {{"head", 90, 8, 8, 0}, {"next", 91, 8, 8, 0}, {"small", 92, 2, 2, 0}},
     .now = 100,
     .admits = 1,
     .status = "WWS",
     .next = 120},
    {.name = "a running job none of whose members ended holds nothing for the queue",
     .cluster = "a:4:0 b:4:0 c:4:0 d:4:0",
     .r = {{"running", 0, 0, 12, 12, 'b', "bbbbccccdddd", false, 0}},
     .w = {{"head", 90, 8, 8, 0}, {"next", 91, 8, 8, 0}, {"small", 92, 2, 2, 0}},
     .now = 100,
     .admits = 1,
     .status = "WWS",
     .next = 120},
    {.name = "a job that fits now still starts beside the room held for the next one",
     .cluster = "a:4:0 b:4:0 c:4:0 d:4:0",
     .r = {{"done", 0, 0, 12, 12, 'b', "bbbbccccdddd", false, 99.5}},
     .w = {{"fits", 90, 4, 4, 0}, {"head", 91, 8, 8, 0}, {"small", 92, 2, 2, 0}},
     .now = 100,
     .admits = 1,
     .status = "SWW",
     .next = 109.5},
    /* 1. before it starves, a job starts with the workers it asks for or
     * waits, and the jobs behind it that fit go first; 4 GPUs are free */
    {.name = "before it starves, a job that fits only narrower than it asks waits and a job "
             "behind it that fits whole starts",
     .cluster = "a:4:2 b:4:2",
     .w = {{"wide", 90, 1, 8, 0}, {"small", 91, 2, 2, 0}},
     .now = 100,
     .admits = 1,
     .status = "WS",
     .next = 120},
    {.name = "with start_narrow the same job starts at once with what fits",
     .cluster = "a:4:2 b:4:2",
     .w = {{"wide", 90, 1, 8, 0}, {"small", 91, 2, 2, 0}},
     .now = 100,
     .narrow = true,
     .fifo = true, /* pack would start small first: it fits whole */
     .admits = 1,
     .status = "SW",
     .next = 121},
    {.name = "once it has waited starve_after the job starts with what fits",
     .cluster = "a:4:2 b:4:2",
     .w = {{"wide", 60, 1, 8, 0}},
     .now = 100,
     .admits = 1,
     .status = "S",
     .next = NAN},
    {.name = "a job whose asked size never fits the cluster starts with what fits at once",
     .cluster = "a:4:0 b:4:0",
     .w = {{"huge", 90, 2, 12, 0}},
     .now = 100,
     .admits = 1,
     .status = "S",
     .next = NAN},
    /* 6c. a job that fits now only narrower than it asks waits for the
     * ending job's room, as the cluster sees a job's pods end a moment
     * apart: "done" still has its PS and 8 workers on b and c, its
     * workers on a ended at 99.5; in the last case, one GPU of a is
     * taken and "head", ahead of "wide", gets b and c */
    {.name = "a job that fits now with fewer workers than it asks, and with all of them once "
             "the ending job is gone, waits for that room",
     .narrow = true,
     .cluster = "a:4:0 b:4:0 c:4:0",
     .r = {{"done", 0, 0, 8, 8, 'b', "bbbbcccc", false, 99.5}},
     .w = {{"wide", 90, 2, 8, 0}},
     .now = 100,
     .status = "W",
     .next = 109.5,
     .check = waits_for_the_ending_room},
    {.name = "ending_hold after the first member ended, the job starts with the workers that fit",
     .narrow = true,
     .cluster = "a:4:0 b:4:0 c:4:0",
     .r = {{"done", 0, 0, 8, 8, 'b', "bbbbcccc", false, 89.9}},
     .w = {{"wide", 90, 2, 8, 0}},
     .now = 100,
     .admits = 1,
     .status = "S",
     .next = NAN,
     .check = starts_with_four},
    {.name = "a job the ending job's room would not widen, since the job ahead gets it, starts "
             "narrow now",
     .narrow = true,
     .cluster = "a:4:1 b:4:0 c:4:0",
     .r = {{"done", 0, 0, 8, 8, 'b', "bbbbcccc", false, 99.5}},
     .w = {{"head", 90, 8, 8, 0}, {"wide", 91, 2, 8, 0}},
     .now = 100,
     .admits = 1,
     .status = "WS",
     .next = 109.5,
     .check = starts_with_three_behind_the_head},
    {.name = "a starving job takes no workers from an ending job: it gets its room when it "
             "is free",
     .cluster = "a:8:0",
     .r = {{"done", 0, 0, 1, 8, 'a', "aaaaaaa", false, 99.5}},
     .w = {{"big", 0, 4, 4, 0}},
     .now = 100,
     .status = "W",
     .next = 600, /* when big will have waited age_after (the pack queue) */
     .held = "big"},
    {.name = "an ending job does not grow",
     .cluster = "a:8:6 b:8:0",
     .r = {{"done", 0, 0, 1, 6, 'a', "aa", false, 999.5}},
     .now = 1000,
     .status = "",
     .next = INFINITY},
    /* 7. growth onto a new node only when the model says it pays */
    {.name = "with the default model an old job grows onto another node",
     .cluster = "a:8:6 b:8:0",
     .r = {{"j", 0, 0, 1, 6, 'a', "aa", false}},
     .now = 1000,
     .grows = 4,
     .status = "",
     .next = INFINITY,
     .check = grows_onto_b},
    {.name = "with a locality penalty of 5 the same job does not grow onto another node",
     .cluster = "a:8:6 b:8:0",
     .r = {{"j", 0, 0, 1, 6, 'a', "aa", false}},
     .now = 1000,
     .locality_penalty = 5,
     .status = "",
     .next = INFINITY},
    {.name = "with a locality penalty of 5 a job still grows on its PS's node",
     .cluster = "a:8:4 b:8:0",
     .r = {{"j", 0, 0, 1, 6, 'a', "aa", false}},
     .now = 1000,
     .locality_penalty = 5,
     .grows = 2,
     .status = "",
     .next = INFINITY,
     .check = grows_on_its_ps_node_only},
    /* 7 workers on one 8-GPU node, admitted at 0: one more worker is worth
     * its 10 s pause from about 109.5 s of age */
    {.name = "a young job whose batch saves less than the pause is not grown yet",
     .cluster = "a:8:0",
     .r = {{"young", 0, 0, 1, 8, 'a', "aaaaaaa", false}},
     .now = 61,
     .status = "",
     .next = NAN,
     .check = looked_at_again_when_it_pays},
    {.name = "the same job grows once its batch pays",
     .cluster = "a:8:0",
     .r = {{"young", 0, 0, 1, 8, 'a', "aaaaaaa", false}},
     .now = 110,
     .grows = 1,
     .status = "",
     .next = INFINITY},
    /* the job's own cost of a change, not the global pause, is what the
     * batch must save */
    {.name = "the same young job grows at once when its change costs 2 s, less than the 5.6 s "
             "its batch saves",
     .cluster = "a:8:0",
     .r = {{.name = "young", .min = 1, .max = 8, .ps = 'a', .workers = "aaaaaaa", .grow = 2}},
     .now = 61,
     .grows = 1,
     .status = "",
     .next = INFINITY},
    {.name = "the same job does not grow when its change costs 18 s, more than the 10 s its "
             "batch saves",
     .cluster = "a:8:0",
     .r = {{.name = "young", .min = 1, .max = 8, .ps = 'a', .workers = "aaaaaaa", .grow = 18}},
     .now = 110,
     .status = "",
     .next = NAN,
     .check = looked_at_again_when_its_own_pause_pays},
};

/* A step at the time a batch was said to pay grows it (else the job would
 * sleep forever: the step names no later time). */
static void a_batch_grows_at_the_time_it_was_said_to_pay(void **state)
{
	(void)state;
	struct world x;
	static const struct scase k = {.cluster = "a:8:0",
	                               .r = {{"young", 0, 0, 1, 8, 'a', "aaaaaaa", false}}};
	world_build(&x, &k);
	world_step(&x, 61);
	double t = x.st.next;
	assert_true(t > 61 && t < INFINITY);
	world_step(&x, t);
	if (count(&x.st, DRAKE_ACT_GROW, 0) != 1)
		print_step(&x);
	assert_int_equal(count(&x.st, DRAKE_ACT_GROW, 0), 1);
	world_free(&x);
}

/* 8. Same input, same decision: a step with shrinks, admissions and a
 * reservation, run twice on fresh entries. */
static void the_same_input_gives_the_same_actions(void **state)
{
	(void)state;
	static const struct scase k = {
	    .name = "mixed",
	    .cluster = "a:8:0 b:8:0 c:8:2",
	    .r = {{"x", 0, 0, 2, 8, 'a', "aaaaaaab", false},
	          {"y", 10, 10, 2, 8, 'b', "bbbbbbbc", false},
	          {"z", 20, 20, 4, 4, 'c', "cccc", false}},
	    .w = {{"mid", 0, 3, 5, 0}, {"big", 1, 14, 14, 0}, {"small", 80, 1, 1, 0}},
	};
	struct world x;
	world_build(&x, &k);
	world_step(&x, 100);
	struct drake_step one = x.st;
	one.act = malloc((one.n + 1) * sizeof(*one.act));
	assert_non_null(one.act);
	memcpy(one.act, x.st.act, one.n * sizeof(*one.act));
	assert_true(one.n > 0);
	world_step(&x, 100);
	assert_int_equal(x.st.n, one.n);
	for (size_t i = 0; i < one.n; i++) {
		assert_int_equal(x.st.act[i].kind, one.act[i].kind);
		assert_int_equal(x.st.act[i].job, one.act[i].job);
		assert_int_equal(x.st.act[i].slot, one.act[i].slot);
		assert_int_equal(x.st.act[i].node, one.act[i].node);
		assert_int_equal(x.st.act[i].for_job, one.act[i].for_job);
		assert_true(x.st.act[i].gain == one.act[i].gain);
	}
	assert_true(x.st.next == one.next || (isinf(x.st.next) && isinf(one.next)));
	assert_int_equal(x.st.reserved_for, one.reserved_for);
	assert_int_equal(x.st.reserved_nodes, one.reserved_nodes);
	drake_step_release(&one);
	world_free(&x);
}

/* SpeCon: a job whose progress is slowing or converged grows only after
 * every other job; here the other takes all there is. The slow job is the
 * first one, which growth would serve first on a tie. */
static void a_slow_job_grows_after_every_other(void **state)
{
	(void)state;
	struct world x;
	static const struct scase k = {
	    .cluster = "a:8:0",
	    .r = {{"slow", 0, 0, 1, 8, 'a', "a", false}, {"fast", 0, 0, 1, 8, 'a', "a", false}}};
	world_build(&x, &k);
	x.r[0].slow = true;
	world_step(&x, 1000);
	if (count(&x.st, DRAKE_ACT_GROW, 1) != 6 || count(&x.st, DRAKE_ACT_GROW, 0) != 0)
		print_step(&x);
	assert_int_equal(count(&x.st, DRAKE_ACT_GROW, 1), 6);
	assert_int_equal(count(&x.st, DRAKE_ACT_GROW, 0), 0);
	world_free(&x);
	/* alone, it grows */
	static const struct scase alone = {.cluster = "a:8:0",
	                                   .r = {{"slow", 0, 0, 1, 8, 'a', "a", false}}};
	world_build(&x, &alone);
	x.r[0].slow = true;
	world_step(&x, 1000);
	assert_true(count(&x.st, DRAKE_ACT_GROW, 0) > 0);
	world_free(&x);
}

/* A job that reports no progress is weighed by what the finished jobs'
 * attained service says it has left (gang/history.h), not by its age: the
 * young job of "not grown yet" (7 workers, admitted at 0, 427 GPU-seconds
 * at 61 s) grows at once when sixteen finished jobs ran an hour on 7 GPUs
 * each. When they ran 440 GPU-seconds (1.9 s left on its 7 GPUs), it is not
 * grown, and is looked at again when it outlives them (service 440, at
 * 61 + 13/7 s); there, with no finished job left above it, its age is its
 * remaining time again, and it is looked at when that pays. */
static void a_job_that_reports_no_progress_is_weighed_by_the_finished_jobs(void **state)
{
	(void)state;
	static const struct scase k = {.cluster = "a:8:0",
	                               .r = {{"young", 0, 0, 1, 8, 'a', "aaaaaaa", false}}};
	double hist[DRAKE_HISTORY_MIN];
	struct world x;
	for (int i = 0; i < DRAKE_HISTORY_MIN; i++)
		hist[i] = 7 * 3600;
	world_build(&x, &k);
	x.o.history = (struct drake_history){hist, DRAKE_HISTORY_MIN};
	x.r[0].service = 7 * 61;
	world_step(&x, 61);
	assert_int_equal(count(&x.st, DRAKE_ACT_GROW, 0), 1);
	world_free(&x);
	for (int i = 0; i < DRAKE_HISTORY_MIN; i++)
		hist[i] = 440;
	world_build(&x, &k);
	x.o.history = (struct drake_history){hist, DRAKE_HISTORY_MIN};
	x.r[0].service = 7 * 61;
	world_step(&x, 61);
	assert_int_equal(count(&x.st, DRAKE_ACT_GROW, 0), 0);
	double jump = 61 + (440.0 - 7 * 61) / 7;
	assert_true(fabs(x.st.next - jump) < 1e-9);
	x.r[0].service = 440;
	world_step(&x, x.st.next);
	assert_int_equal(count(&x.st, DRAKE_ACT_GROW, 0), 0);
	double pays = x.o.speed.rescale_pause / (1 - rate(&x, 7, 1) / rate(&x, 8, 1));
	assert_true(fabs(x.st.next - pays) < 1e-9);
	world_free(&x);
}

/* Three jobs starve while 3 GPUs are free on d and three jobs of 8 workers
 * fill a, b and c. Planned one by one, each would take the free GPUs and
 * one worker's room from the next node, so that every one spans two nodes
 * (d and a, a and b, b and c). Planned again together on the room the same
 * removals freed, two of them run on one node each and only the last
 * spans two; the removals do not change. */
static void starving_jobs_started_together_share_the_freed_nodes_out(void **state)
{
	(void)state;
	static const struct scase k = {
	    .cluster = "a:8:0 b:8:0 c:8:0 d:8:5",
	    .r = {{"r1", 0, 0, 4, 8, 'a', "aaaaaaaa", false},
	          {"r2", 1, 1, 4, 8, 'b', "bbbbbbbb", false},
	          {"r3", 2, 2, 4, 8, 'c', "cccccccc", false}},
	    .w = {{"x1", 10, 4, 8, 0}, {"x2", 11, 4, 8, 0}, {"x3", 12, 4, 8, 0}},
	};
	struct world x;
	world_build(&x, &k);
	world_step(&x, 100);
	int spans = 0, alone = 0;
	for (size_t i = 0; i < x.nw; i++) {
		if (x.w[i].status != DRAKE_ADMIT_STARTED)
			print_step(&x);
		assert_int_equal(x.w[i].status, DRAKE_ADMIT_STARTED);
		assert_int_equal(x.w[i].plan.n_workers, 4);
		int n = drake_plan_count_nodes(x.w[i].plan.ps_node, x.w[i].plan.n_ps,
		                               x.w[i].plan.worker_node, x.w[i].plan.n_workers);
		assert_int_equal(n, x.w[i].plan.nodes_spanned);
		spans += n;
		alone += n == 1;
	}
	if (spans != 4 || alone != 2)
		print_step(&x);
	assert_int_equal(spans, 4);
	assert_int_equal(alone, 2);
	assert_int_equal(count(&x.st, DRAKE_ACT_SHRINK, -1), 9);
	world_free(&x);
}

int main(void)
{
	size_t n = sizeof(cases) / sizeof(cases[0]);
	struct CMUnitTest tests[sizeof(cases) / sizeof(cases[0]) + 5];
	for (size_t i = 0; i < n; i++)
		tests[i] =
		    (struct CMUnitTest){cases[i].name, run_case, NULL, NULL, (void *)&cases[i]};
	tests[n] = (struct CMUnitTest)cmocka_unit_test(the_same_input_gives_the_same_actions);
	tests[n + 1] =
	    (struct CMUnitTest)cmocka_unit_test(a_batch_grows_at_the_time_it_was_said_to_pay);
	tests[n + 2] = (struct CMUnitTest)cmocka_unit_test(a_slow_job_grows_after_every_other);
	tests[n + 3] = (struct CMUnitTest)cmocka_unit_test(
	    a_job_that_reports_no_progress_is_weighed_by_the_finished_jobs);
	tests[n + 4] = (struct CMUnitTest)cmocka_unit_test(
	    starving_jobs_started_together_share_the_freed_nodes_out);
	return _cmocka_run_group_tests("scale", tests, n + 5, NULL, NULL);
}
