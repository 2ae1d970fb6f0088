/* gpu_models_test.c - a replica that asks for a GPU model, as users ask
 * (a node selector or a required node affinity on the GPU-product label
 * NVIDIA's GPU feature discovery writes), is planned only onto nodes of
 * that model, in a cluster of mixed models, even when another model's
 * nodes would fit it better; when no node of its model has room, the job
 * waits rather than spill onto another model. The masks are what
 * admission builds (reconciler/nodes_codec.c: gang/nodefit.h over each
 * node's labels). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "gang/gang_testutil.h"
#include "gang/nodefit.h"

#define NCASES(a) (sizeof(a) / sizeof((a)[0]))
#define PRODUCT   "nvidia.com/gpu.product"

/* Node a..f: two V100 nodes, idle; two A100 nodes, one half used; an
 * H100 node, idle; f, with no GPU-product label. */
static const char *const SPEC = "a:8:0 b:8:0 c:8:4 d:8:0 e:8:0 f:8:0";
static const char *const MODEL[] = {"Tesla-V100-SXM2-16GB",  "Tesla-V100-SXM2-16GB",
                                    "NVIDIA-A100-SXM4-80GB", "NVIDIA-A100-SXM4-80GB",
                                    "NVIDIA-H100-80GB-HBM3", NULL};

static const char *const A100[] = {"NVIDIA-A100-SXM4-80GB"};
static const char *const A100_H100[] = {"NVIDIA-A100-SXM4-80GB", "NVIDIA-H100-80GB-HBM3"};
static const char *const V100[] = {"Tesla-V100-SXM2-16GB"};

struct model_case {
	const char *name;
	const char *selector;      /* nodeSelector's GPU-product value, or NULL */
	enum drake_sel_op op;      /* else a required affinity term on the label */
	const char *const *values; /* its values */
	size_t n_values;
	bool ps_too;       /* the PS is kept to the model as well */
	int workers, gpus; /* workers of gpus GPUs each (PS: none) */
	drake_err want;
	const char *allowed; /* the nodes every worker (and a kept PS) may be on */
};

static const struct model_case CASES[] = {
    {"a node selector keeps the workers on A100 nodes, though V100 nodes are idle",
     "NVIDIA-A100-SXM4-80GB", 0, NULL, 0, false, 3, 4, DRAKE_OK, "cd"},
    {"a required affinity In two models allows both", NULL, DRAKE_SEL_IN, A100_H100, 2, true, 4, 4,
     DRAKE_OK, "cde"},
    {"NotIn V100 leaves the other models and the unlabelled node", NULL, DRAKE_SEL_NOT_IN, V100, 1,
     true, 2, 8, DRAKE_OK, "cdef"},
    {"a job too large for its model's free GPUs waits instead of spilling", NULL, DRAKE_SEL_IN,
     A100, 1, false, 4, 4, DRAKE_ESTATE, ""},
    {"a model no node has makes the job wait, naming the node selector", "NVIDIA-B200", 0, NULL, 0,
     false, 1, 1, DRAKE_ESTATE, ""},
};

static void test_a_replica_asking_for_a_gpu_model_is_planned_only_onto_it(void **state)
{
	(void)state;
	for (size_t k = 0; k < NCASES(CASES); k++) {
		const struct model_case *tc = &CASES[k];
		struct drake_cluster c;
		assert_int_equal(cluster_from(&c, SPEC), 0);
		struct drake_kv sel = {PRODUCT, tc->selector};
		struct drake_sel_expr expr = {PRODUCT, tc->op, tc->values, tc->n_values, false};
		struct drake_sel_term term = {&expr, 1};
		struct drake_node_sel rule = tc->selector
		                                 ? (struct drake_node_sel){&sel, 1, false, NULL, 0}
		                                 : (struct drake_node_sel){NULL, 0, true, &term, 1};
		unsigned char mask[8] = {0};
		for (size_t i = 0; i < c.n; i++) {
			/* cluster_from names the nodes a..f and keeps them sorted */
			const char *model = MODEL[c.nodes[i].name[0] - 'a'];
			struct drake_kv labels[2] = {{"kubernetes.io/hostname", c.nodes[i].name},
			                             {PRODUCT, model}};
			mask[i] =
			    drake_node_sel_matches(&rule, c.nodes[i].name, labels, model ? 2 : 1);
		}
		struct drake_gang_req req = {.n_ps = 1,
		                             .ps = res_of(4, 16, 0),
		                             .worker = res_of(8, 32, tc->gpus),
		                             .min_workers = tc->workers,
		                             .want_workers = tc->workers,
		                             .worker_ok = mask,
		                             .ps_ok = tc->ps_too ? mask : NULL};
		struct drake_plan plan = {0};
		char why[256] = "";
		drake_err e = drake_plan_gang(&c, &req, &plan, why, sizeof(why));
		if (e != tc->want)
			fail_msg("%s: got %d (%s), want %d", tc->name, e, why, tc->want);
		for (int w = 0; !e && w < plan.n_workers; w++)
			if (!strchr(tc->allowed, c.nodes[plan.worker_node[w]].name[0]))
				fail_msg("%s: worker %d on %s", tc->name, w,
				         c.nodes[plan.worker_node[w]].name);
		if (!e && tc->ps_too && !strchr(tc->allowed, c.nodes[plan.ps_node[0]].name[0]))
			fail_msg("%s: PS on %s", tc->name, c.nodes[plan.ps_node[0]].name);
		if (e && !*why)
			fail_msg("%s: waits without a reason", tc->name);
		if (e && tc->selector && !strstr(why, "node selector"))
			fail_msg("%s: the reason does not name the node selector: %s", tc->name,
			         why);
		drake_plan_release(&plan);
		drake_cluster_release(&c);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_a_replica_asking_for_a_gpu_model_is_planned_only_onto_it),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
