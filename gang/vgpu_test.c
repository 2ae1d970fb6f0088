/* vgpu_test.c - KubeShare's fractional GPUs: annotations parsed or refused,
 * shares packed first fit onto vGPUs by the planner, and plans charged to
 * the snapshot so later jobs of a round see the vGPUs earlier ones took. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gang/admission.h"
#include "gang/gang_testutil.h"
#include "gang/planner.h"
#include "gang/vgpu.h"

/*
 * A snapshot for share cases: gang_testutil's "name:gpus:used" nodes, each
 * GPU with gpu_mem_gib GiB (0: no kubeshare/gpu_info), and vGPUs already
 * open, "node/id:milli:memGiB" each (one replica of that share on it).
 */
static int share_cluster(struct drake_cluster *c, const char *nodes, int gpu_mem_gib,
                         const char *open)
{
	if (cluster_from(c, nodes))
		return -1;
	for (size_t i = 0; i < c->n; i++)
		c->nodes[i].gpu_mem = gpu_mem_gib * GIB;
	char buf[512];
	snprintf(buf, sizeof(buf), "%s", open ? open : "");
	char *save = NULL;
	for (char *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		char node[64], id[DRAKE_VGPU_ID_MAX];
		int milli, mem;
		if (sscanf(tok, "%63[^/]/%15[^:]:%d:%d", node, id, &milli, &mem) != 4)
			return -1;
		int i = drake_cluster_find(c, node);
		if (i < 0)
			return -1;
		struct drake_share s = {milli, milli, mem * GIB};
		drake_cluster_charge_vgpu(c, (size_t)i, id, &s, 1);
	}
	return 0;
}

/* n_ps PS of 1 CPU and workers of 1 CPU, 1Gi and a share of one GPU. */
static struct drake_gang_req share_job(int n_ps, int min, int want, int milli, int mem_gib,
                                       const char *seed)
{
	struct drake_gang_req r = {0};
	r.n_ps = n_ps;
	r.ps = res_of(1, 1, 0);
	r.worker = res_of(1, 1, 0);
	r.min_workers = min;
	r.want_workers = want;
	r.worker_share = (struct drake_share){milli, milli, mem_gib * GIB};
	r.vgpu_seed = drake_vgpu_seed(seed);
	return r;
}

/* Distinct vGPU ids among the workers' picks, and how many are new. */
static int distinct_vgpus(const struct drake_plan *p, int *opened)
{
	int n = 0;
	*opened = 0;
	for (int i = 0; i < p->n_workers; i++) {
		bool seen = false;
		for (int j = 0; j < i; j++)
			seen |= p->worker_node[j] == p->worker_node[i] &&
			        !strcmp(p->worker_vgpu[j].id, p->worker_vgpu[i].id);
		if (!seen) {
			n++;
			*opened += p->worker_vgpu[i].opened;
		}
	}
	return n;
}

struct scase {
	const char *name;
	const char *cluster; /* gang_testutil's "name:gpus:used" */
	int gpu_mem_gib;     /* every GPU's memory; 0: no kubeshare/gpu_info */
	const char *open;    /* vGPUs open already: "node/id:milli:memGiB ..." */
	int n_ps, min, want;
	int milli, mem_gib; /* each worker's share */
	drake_err err;
	int workers;            /* workers placed */
	int spanned;            /* nodes spanned (0: don't check) */
	int vgpus;              /* distinct vGPUs the workers use */
	int opened;             /* of which the plan opens */
	const char *first_node; /* worker 0's node (NULL: don't check) */
	const char *first_vgpu; /* worker 0's vGPU (NULL: don't check) */
	const char *why_has;    /* substring of the reason, for failures */
};

static const struct scase cases[] = {
    {"four half-GPU workers and a PS pack onto two vGPUs of one node", "a:8:6 b:8:6", 16, NULL, 1,
     4, 4, 500, 4, DRAKE_OK, 4, 1, 2, 2, "a", NULL, NULL},
    {"GPU memory fills a vGPU before its milli-GPU does", "a:8:6", 16, NULL, 1, 4, 4, 250, 8,
     DRAKE_OK, 4, 1, 2, 2, NULL, NULL, NULL},
    {"a partly used vGPU is filled before a new one is opened", "a:8:0 b:8:0", 16, "b/qqqqq:500:4",
     0, 1, 1, 500, 4, DRAKE_OK, 1, 1, 1, 0, "b", "qqqqq", NULL},
    {"first fit walks the open vGPUs in id order, not in the order they opened", "a:8:0", 16,
     "a/zzzzz:500:0 a/mmmmm:500:0", 0, 1, 1, 500, 0, DRAKE_OK, 1, 1, 1, 0, "a", "mmmmm", NULL},
    {"a share too big for what a vGPU has left opens a new vGPU", "a:8:0", 16, "a/ccccc:750:0", 0,
     1, 1, 500, 0, DRAKE_OK, 1, 1, 1, 1, "a", NULL, NULL},
    {"memory left on a vGPU counts, not only milli-GPU", "a:8:0", 16, "a/ccccc:250:14", 0, 1, 1,
     250, 4, DRAKE_OK, 1, 1, 1, 1, "a", NULL, NULL},
    {"a job larger than one node's free GPUs spans the fewest nodes", "a:8:6 b:8:7 c:8:8", 16, NULL,
     1, 6, 6, 500, 4, DRAKE_OK, 6, 2, 3, 3, "a", NULL, NULL},
    {"fewer workers than desired start when only that many fit", "a:8:7", 16, NULL, 1, 2, 4, 500, 4,
     DRAKE_OK, 2, 1, 1, 1, NULL, NULL, NULL},
    {"open vGPUs of an unschedulable node are never used", "a:8:0! b:8:0", 16, "a/aaaaa:500:0", 0,
     1, 1, 500, 0, DRAKE_OK, 1, 1, 1, 1, "b", NULL, NULL},
    {"nodes without kubeshare/gpu_info take shares that ask no GPU memory", "a:8:6", 0, NULL, 1, 4,
     4, 500, 0, DRAKE_OK, 4, 1, 2, 2, NULL, NULL, NULL},
    {"nodes without kubeshare/gpu_info never take a share that asks GPU memory", "a:8:0 b:8:0", 0,
     NULL, 1, 4, 4, 500, 4, DRAKE_ELIMIT, 0, 0, 0, 0, NULL, NULL, "kubeshare/gpu_info"},
    {"GPU memory beyond any GPU's can never fit", "a:8:0", 16, NULL, 1, 1, 1, 500, 32, DRAKE_ELIMIT,
     0, 0, 0, 0, NULL, NULL, "more than any GPU has (largest 16Gi)"},
    {"shares that need more GPUs than are free wait and say why", "a:8:7", 16, NULL, 1, 4, 4, 500,
     4, DRAKE_ESTATE, 0, 0, 0, 0, NULL, NULL, "gpu_share=0.5 gpu_mem=4Gi each); 2 workers fit"},
    {"shares on full vGPUs and no free GPU wait", "a:2:0", 16, "a/aaaaa:1000:0 a/bbbbb:600:0", 0, 1,
     1, 500, 0, DRAKE_ESTATE, 0, 0, 0, 0, NULL, NULL, "0 workers fit now"},
};

static void run_case(void **state)
{
	const struct scase *c = *state;
	struct drake_cluster cl;
	assert_int_equal(share_cluster(&cl, c->cluster, c->gpu_mem_gib, c->open), 0);
	struct drake_gang_req r = share_job(c->n_ps, c->min, c->want, c->milli, c->mem_gib, "job");
	struct drake_plan p = {0};
	char why[256] = "";
	drake_err err = drake_plan_gang(&cl, &r, &p, why, sizeof(why));
	if (err != c->err)
		print_error("got %s (%s), want %s\n", drake_strerror(err), why,
		            drake_strerror(c->err));
	assert_int_equal(err, c->err);
	if (err != DRAKE_OK) {
		if (!strstr(why, c->why_has))
			print_error("reason \"%s\" lacks \"%s\"\n", why, c->why_has);
		assert_non_null(strstr(why, c->why_has));
		drake_cluster_release(&cl);
		return;
	}
	assert_int_equal(p.n_workers, c->workers);
	assert_null(p.ps_vgpu); /* the PS shares no GPU */
	assert_non_null(p.worker_vgpu);
	if (c->spanned)
		assert_int_equal(p.nodes_spanned, c->spanned);
	int opened;
	assert_int_equal(distinct_vgpus(&p, &opened), c->vgpus);
	assert_int_equal(opened, c->opened);
	if (c->first_node)
		assert_string_equal(cl.nodes[p.worker_node[0]].name, c->first_node);
	if (c->first_vgpu)
		assert_string_equal(p.worker_vgpu[0].id, c->first_vgpu);
	if (p.n_ps && p.n_workers)
		assert_int_equal(p.worker_node[0], p.ps_node[0]);
	/* Charged, the plan overcommits no node and no vGPU, and every
	 * worker's vGPU is open where it was planned. */
	drake_plan_charge(&cl, &r, &p, 1);
	for (size_t i = 0; i < cl.n; i++) {
		assert_true(drake_res_fits(&cl.nodes[i].used, &cl.nodes[i].alloc));
		for (int k = 0; k < cl.nodes[i].vgpus.n; k++) {
			assert_true(cl.nodes[i].vgpus.v[k].free_milli >= 0);
			assert_true(cl.nodes[i].vgpus.v[k].free_mem >= 0);
		}
	}
	for (int i = 0; i < p.n_workers; i++)
		assert_true(
		    drake_vgpu_find(&cl.nodes[p.worker_node[i]].vgpus, p.worker_vgpu[i].id) >= 0);
	drake_plan_release(&p);
	drake_cluster_release(&cl);
}

static void planning_twice_gives_the_same_vgpus(void **state)
{
	(void)state;
	struct drake_cluster cl;
	assert_int_equal(share_cluster(&cl, "a:8:6 b:8:5 c:8:7", 16, "b/kkkkk:300:2"), 0);
	struct drake_gang_req r = share_job(1, 8, 12, 400, 3, "uid-1");
	struct drake_plan p1 = {0}, p2 = {0};
	assert_int_equal(drake_plan_gang(&cl, &r, &p1, NULL, 0), DRAKE_OK);
	assert_int_equal(drake_plan_gang(&cl, &r, &p2, NULL, 0), DRAKE_OK);
	assert_int_equal(p1.n_workers, p2.n_workers);
	assert_memory_equal(p1.worker_node, p2.worker_node, sizeof(int) * (size_t)p1.n_workers);
	assert_memory_equal(p1.worker_vgpu, p2.worker_vgpu,
	                    sizeof(*p1.worker_vgpu) * (size_t)p1.n_workers);
	drake_plan_release(&p1);
	drake_plan_release(&p2);
	drake_cluster_release(&cl);
}

static void a_ps_may_share_a_gpu_with_its_workers(void **state)
{
	(void)state;
	struct drake_cluster cl;
	assert_int_equal(share_cluster(&cl, "a:8:7", 16, NULL), 0);
	struct drake_gang_req r = share_job(1, 1, 1, 500, 4, "j");
	r.ps_share = (struct drake_share){500, 500, 4 * GIB};
	struct drake_plan p = {0};
	assert_int_equal(drake_plan_gang(&cl, &r, &p, NULL, 0), DRAKE_OK);
	assert_non_null(p.ps_vgpu);
	assert_true(p.ps_vgpu[0].opened);
	assert_string_equal(p.ps_vgpu[0].id, p.worker_vgpu[0].id); /* one GPU, two halves */
	drake_plan_charge(&cl, &r, &p, 1);
	assert_int_equal(cl.nodes[0].used.gpu, 8);
	assert_int_equal(cl.nodes[0].vgpus.n, 1);
	assert_int_equal(cl.nodes[0].vgpus.v[0].sharers, 2);
	drake_plan_release(&p);
	drake_cluster_release(&cl);
}

static void a_chief_may_share_a_gpu_with_its_workers(void **state)
{
	(void)state;
	struct drake_cluster cl;
	assert_int_equal(share_cluster(&cl, "a:8:7", 16, NULL), 0);
	struct drake_gang_req r = share_job(1, 1, 1, 500, 4, "j");
	r.n_chief = 1;
	r.chief = res_of(1, 1, 0);
	r.chief_share = (struct drake_share){500, 500, 4 * GIB};
	struct drake_plan p = {0};
	assert_int_equal(drake_plan_gang(&cl, &r, &p, NULL, 0), DRAKE_OK);
	assert_int_equal(p.n_chief, 1);
	assert_int_equal(p.chief_node, 0);
	assert_true(p.chief_vgpu.opened);
	assert_string_equal(p.chief_vgpu.id, p.worker_vgpu[0].id); /* one GPU, two halves */
	drake_plan_charge(&cl, &r, &p, 1);
	assert_int_equal(cl.nodes[0].used.gpu, 8);
	assert_int_equal(cl.nodes[0].vgpus.n, 1);
	assert_int_equal(cl.nodes[0].vgpus.v[0].sharers, 2);
	drake_plan_charge(&cl, &r, &p, -1);
	assert_int_equal(cl.nodes[0].used.gpu, 7);
	assert_int_equal(cl.nodes[0].vgpus.n, 0);
	/* A chief's 0.6 and a worker's 0.6 do not share the last GPU: the
	 * chief takes it (it is placed first) and the job waits for a worker. */
	r.worker_share.milli = r.worker_share.limit_milli = 600;
	r.chief_share.milli = r.chief_share.limit_milli = 600;
	char why[DRAKE_WHY_MAX];
	struct drake_plan q = {0};
	assert_int_equal(drake_plan_gang(&cl, &r, &q, why, sizeof(why)), DRAKE_ESTATE);
	if (!strstr(why, "needs 1 PS + 1 chief + 1 workers"))
		print_error("reason: %s\n", why);
	assert_non_null(strstr(why, "needs 1 PS + 1 chief + 1 workers"));
	assert_non_null(strstr(why, "0 workers fit now"));
	drake_plan_release(&p);
	drake_cluster_release(&cl);
}

/* Admission charges each started job's vGPUs, so the next job of the same
 * round fills what is left of them and never overfills one. */
static void one_round_charges_vgpus_for_the_jobs_after(void **state)
{
	(void)state;
	struct drake_cluster cl;
	assert_int_equal(share_cluster(&cl, "a:8:6", 16, NULL), 0);
	struct drake_admission_entry e[4];
	memset(e, 0, sizeof(e));
	const char *names[] = {"halves", "quarter", "half", "late"};
	e[0].req = share_job(1, 2, 2, 500, 4, names[0]); /* fills one vGPU */
	e[1].req = share_job(1, 1, 1, 250, 4, names[1]); /* opens the second */
	e[2].req = share_job(0, 1, 1, 500, 4, names[2]); /* the rest of the second */
	e[3].req = share_job(0, 1, 1, 500, 4, names[3]); /* 0.25 left, no GPU: waits */
	for (int i = 0; i < 4; i++) {
		e[i].name = names[i];
		e[i].created = i;
	}
	struct drake_admission_opts o = {true, 0};
	size_t started;
	assert_int_equal(drake_admit(&cl, e, 4, &o, &started), DRAKE_OK);
	assert_int_equal(started, 3);
	assert_int_equal(e[3].status, DRAKE_ADMIT_WAITING);
	const char *first = e[0].plan.worker_vgpu[0].id, *second = e[1].plan.worker_vgpu[0].id;
	assert_string_equal(e[0].plan.worker_vgpu[1].id, first);
	assert_string_not_equal(first, second);
	assert_string_equal(e[2].plan.worker_vgpu[0].id, second);
	assert_false(e[2].plan.worker_vgpu[0].opened); /* opened by "quarter", not by "half" */
	assert_int_equal(cl.nodes[0].used.gpu, 8);
	assert_int_equal(cl.nodes[0].vgpus.n, 2);
	int k = drake_vgpu_find(&cl.nodes[0].vgpus, second);
	assert_int_equal(cl.nodes[0].vgpus.v[k].free_milli, 250);
	assert_int_equal(cl.nodes[0].vgpus.v[k].free_mem, 8 * GIB);
	drake_admission_release(e, 4);
	drake_cluster_release(&cl);
}

static void a_refunded_plan_closes_the_vgpus_it_opened(void **state)
{
	(void)state;
	struct drake_cluster cl;
	assert_int_equal(share_cluster(&cl, "a:8:4", 16, "a/ppppp:500:4"), 0);
	struct drake_node before = cl.nodes[0];
	struct drake_gang_req r = share_job(1, 5, 5, 500, 4, "j");
	struct drake_plan p = {0};
	assert_int_equal(drake_plan_gang(&cl, &r, &p, NULL, 0), DRAKE_OK);
	drake_plan_charge(&cl, &r, &p, 1);
	assert_int_equal(cl.nodes[0].vgpus.n, 3); /* ppppp filled, two opened */
	drake_plan_charge(&cl, &r, &p, -1);
	assert_memory_equal(&cl.nodes[0].used, &before.used, sizeof(before.used));
	assert_int_equal(cl.nodes[0].vgpus.n, 1);
	assert_memory_equal(&cl.nodes[0].vgpus.v[0], &before.vgpus.v[0], sizeof(before.vgpus.v[0]));
	drake_plan_release(&p);
	drake_cluster_release(&cl);
}

static void a_full_vgpu_table_still_charges_whole_gpus(void **state)
{
	(void)state;
	struct drake_cluster cl;
	assert_int_equal(share_cluster(&cl, "a:20:0", 16, NULL), 0);
	struct drake_share whole = {1000, 1000, 0};
	char id[DRAKE_VGPU_ID_MAX];
	for (int k = 0; k < DRAKE_NODE_MAX_VGPUS + 1; k++) {
		snprintf(id, sizeof(id), "id%02d", k);
		drake_cluster_charge_vgpu(&cl, 0, id, &whole, 1);
	}
	assert_int_equal(cl.nodes[0].vgpus.n, DRAKE_NODE_MAX_VGPUS);
	assert_int_equal(cl.nodes[0].used.gpu, DRAKE_NODE_MAX_VGPUS + 1); /* none undercounted */
	/* Three GPUs are free but no vGPU can be opened: shares wait. */
	struct drake_gang_req r = share_job(0, 1, 1, 100, 0, "j");
	struct drake_plan p = {0};
	assert_int_equal(drake_plan_gang(&cl, &r, &p, NULL, 0), DRAKE_ESTATE);
	drake_cluster_charge_vgpu(&cl, 0, id, &whole, -1); /* the untracked one leaves */
	assert_int_equal(cl.nodes[0].used.gpu, DRAKE_NODE_MAX_VGPUS);
	drake_cluster_release(&cl);
}

static void new_ids_are_deterministic_and_never_taken(void **state)
{
	(void)state;
	struct drake_vgpus t = {0};
	uint64_t seed = drake_vgpu_seed("uid-7");
	char a[DRAKE_VGPU_ID_MAX], again[DRAKE_VGPU_ID_MAX], b[DRAKE_VGPU_ID_MAX],
	    other[DRAKE_VGPU_ID_MAX];
	drake_vgpu_new_id(&t, seed, "node-1", a);
	drake_vgpu_new_id(&t, seed, "node-1", again);
	assert_string_equal(a, again);
	assert_int_equal(strlen(a), DRAKE_VGPU_ID_LEN);
	for (const char *p = a; *p; p++)
		assert_true(*p >= 'a' && *p <= 'z');
	drake_vgpu_new_id(&t, seed, "node-2", other);
	assert_string_not_equal(a, other);
	assert_true(drake_vgpu_open(&t, a, GIB) >= 0);
	drake_vgpu_new_id(&t, seed, "node-1", b);
	assert_string_not_equal(a, b);
	/* Every id taken but one: the next id is the free one. */
	struct drake_vgpus full = {0};
	for (int k = 0; k < DRAKE_NODE_MAX_VGPUS - 1; k++) {
		drake_vgpu_new_id(&full, seed, "n", b);
		assert_true(drake_vgpu_open(&full, b, GIB) >= 0);
	}
	drake_vgpu_new_id(&full, seed, "n", b);
	assert_int_equal(drake_vgpu_find(&full, b), -1);
	assert_true(drake_vgpu_open(&full, b, GIB) >= 0);
	assert_int_equal(full.n, DRAKE_NODE_MAX_VGPUS);
	for (int k = 1; k < full.n; k++) /* kept sorted by id */
		assert_true(strcmp(full.v[k - 1].id, full.v[k].id) < 0);
	assert_int_equal(drake_vgpu_open(&full, "another", GIB), -1); /* full */
}

struct parse_case {
	const char *name;
	const char *request, *limit, *mem;
	drake_err err;
	int milli, limit_milli;
	int64_t mem_bytes;
	const char *why_has;
};

static const struct parse_case parse_cases[] = {
    {"no annotations ask for no share", NULL, NULL, NULL, DRAKE_OK, 0, 0, 0, NULL},
    {"a half with a limit and a memory quantity", "0.5", "1", "4Gi", DRAKE_OK, 500, 1000, 4 * GIB,
     NULL},
    {"the limit defaults to the request", "0.25", NULL, "1073741824", DRAKE_OK, 250, 250, GIB,
     NULL},
    {"milli-GPU round up", "0.3333", NULL, NULL, DRAKE_OK, 334, 334, 0, NULL},
    {"a whole GPU is a share too", "1", NULL, NULL, DRAKE_OK, 1000, 1000, 0, NULL},
    {"a zero request is refused", "0", NULL, NULL, DRAKE_EINVAL, 0, 0, 0, "must be above 0"},
    {"more than one GPU is refused", "1.5", NULL, NULL, DRAKE_EINVAL, 0, 0, 0,
     "is more than one GPU"},
    {"a request that is not a number is refused", "half", NULL, NULL, DRAKE_EINVAL, 0, 0, 0,
     "kubeshare/gpu_request \"half\""},
    {"a negative request is refused", "-0.5", NULL, NULL, DRAKE_EINVAL, 0, 0, 0, "negative"},
    {"an empty request is refused", "", NULL, NULL, DRAKE_EINVAL, 0, 0, 0, "empty"},
    {"a limit below the request is refused", "0.5", "0.25", NULL, DRAKE_EINVAL, 0, 0, 0,
     "kubeshare/gpu_limit \"0.25\" is below"},
    {"memory that is not a quantity is refused", "0.5", NULL, "lots", DRAKE_EINVAL, 0, 0, 0,
     "kubeshare/gpu_mem \"lots\""},
    {"memory without a request is refused", NULL, NULL, "1Gi", DRAKE_EINVAL, 0, 0, 0,
     "kubeshare/gpu_mem without kubeshare/gpu_request"},
};

static void run_parse_case(void **state)
{
	const struct parse_case *c = *state;
	struct drake_share s = {-1, -1, -1};
	char msg[200] = "";
	drake_err err = drake_share_parse(c->request, c->limit, c->mem, &s, msg, sizeof(msg));
	if (err != c->err)
		print_error("got %s (%s)\n", drake_strerror(err), msg);
	assert_int_equal(err, c->err);
	if (err == DRAKE_OK) {
		assert_int_equal(s.milli, c->milli);
		assert_int_equal(s.limit_milli, c->limit_milli);
		assert_int_equal(s.mem_bytes, c->mem_bytes);
	} else {
		if (!strstr(msg, c->why_has))
			print_error("message \"%s\" lacks \"%s\"\n", msg, c->why_has);
		assert_non_null(strstr(msg, c->why_has));
	}
}

static void a_share_beside_whole_gpus_is_refused(void **state)
{
	(void)state;
	struct drake_gang_req r = share_job(1, 1, 1, 500, 0, "j");
	r.worker.gpu = 1;
	char why[200];
	assert_int_equal(drake_gang_req_check(&r, why, sizeof(why)), DRAKE_EINVAL);
	assert_non_null(strstr(why, "one or the other"));
	r = share_job(1, 1, 1, 1500, 0, "j");
	assert_int_equal(drake_gang_req_check(&r, why, sizeof(why)), DRAKE_EINVAL);
}

static void gpu_info_gives_the_first_gpus_memory(void **state)
{
	(void)state;
	static const struct {
		const char *info;
		drake_err err;
		int64_t bytes;
	} t[] = {
	    {"GPU-0f3a:16384,GPU-77c1:16384", DRAKE_OK, 16 * GIB},
	    {"GPU-0:8192", DRAKE_OK, 8 * GIB},
	    {"", DRAKE_EINVAL, 0},
	    {"GPU-0", DRAKE_EINVAL, 0},
	    {"GPU-0:", DRAKE_EINVAL, 0},
	    {"GPU-0:16Gi", DRAKE_EINVAL, 0},
	    {"GPU-0:0", DRAKE_EINVAL, 0},
	    {"GPU-0:99999999999999999999", DRAKE_ELIMIT, 0},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int64_t b = -1;
		char msg[200];
		drake_err err = drake_gpu_info_parse(t[i].info, &b, msg, sizeof(msg));
		if (err != t[i].err)
			print_error("\"%s\": got %s (%s)\n", t[i].info, drake_strerror(err), msg);
		assert_int_equal(err, t[i].err);
		if (!err)
			assert_int_equal(b, t[i].bytes);
		else
			assert_non_null(strstr(msg, "kubeshare/gpu_info"));
	}
	char buf[16];
	assert_string_equal(drake_milli_format(500, buf, sizeof(buf)), "0.5");
	assert_string_equal(drake_milli_format(1000, buf, sizeof(buf)), "1");
	assert_string_equal(drake_milli_format(334, buf, sizeof(buf)), "0.334");
	assert_string_equal(drake_milli_format(1, buf, sizeof(buf)), "0.001");
}

int main(void)
{
	size_t n = sizeof(cases) / sizeof(cases[0]);
	size_t np = sizeof(parse_cases) / sizeof(parse_cases[0]);
	struct CMUnitTest tests[sizeof(cases) / sizeof(cases[0]) +
	                        sizeof(parse_cases) / sizeof(parse_cases[0]) + 9];
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		tests[k++] =
		    (struct CMUnitTest){cases[i].name, run_case, NULL, NULL, (void *)&cases[i]};
	for (size_t i = 0; i < np; i++)
		tests[k++] = (struct CMUnitTest){parse_cases[i].name, run_parse_case, NULL, NULL,
		                                 (void *)&parse_cases[i]};
	const struct CMUnitTest more[] = {
	    cmocka_unit_test(planning_twice_gives_the_same_vgpus),
	    cmocka_unit_test(a_ps_may_share_a_gpu_with_its_workers),
	    cmocka_unit_test(a_chief_may_share_a_gpu_with_its_workers),
	    cmocka_unit_test(one_round_charges_vgpus_for_the_jobs_after),
	    cmocka_unit_test(a_refunded_plan_closes_the_vgpus_it_opened),
	    cmocka_unit_test(a_full_vgpu_table_still_charges_whole_gpus),
	    cmocka_unit_test(new_ids_are_deterministic_and_never_taken),
	    cmocka_unit_test(a_share_beside_whole_gpus_is_refused),
	    cmocka_unit_test(gpu_info_gives_the_first_gpus_memory),
	};
	for (size_t i = 0; i < sizeof(more) / sizeof(more[0]); i++)
		tests[k++] = more[i];
	return _cmocka_run_group_tests("vgpu", tests, k, NULL, NULL);
}
