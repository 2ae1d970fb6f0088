/* nodefit_test.c - node selectors, required node affinity and tolerations
 * against one GPU node's labels and taints, as kube-scheduler decides. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gang/nodefit.h"

static const struct drake_kv labels[] = {
    {"kubernetes.io/hostname", "gpu-a"},
    {"nvidia.com/gpu.product", "Tesla-V100"},
    {"nvidia.com/gpu.count", "8"},
    {"topology.kubernetes.io/zone", "z1"},
};
#define NL (sizeof(labels) / sizeof(labels[0]))

static const char *const v100[] = {"Tesla-V100", "A100"};
static const char *const a100[] = {"A100"};
static const char *const four[] = {"4"};
static const char *const nine[] = {"9"};
static const char *const gpu_a[] = {"gpu-a"};
static const char *const gpu_b[] = {"gpu-b"};
static const char *const x[] = {"x"};

static const struct drake_kv sel_v100[] = {{"nvidia.com/gpu.product", "Tesla-V100"}};
static const struct drake_kv sel_a100[] = {{"nvidia.com/gpu.product", "A100"}};
static const struct drake_kv sel_missing[] = {{"pool", "train"}};

static const struct drake_sel_expr in_v100[] = {
    {"nvidia.com/gpu.product", DRAKE_SEL_IN, v100, 2, false}};
static const struct drake_sel_expr in_a100[] = {
    {"nvidia.com/gpu.product", DRAKE_SEL_IN, a100, 1, false}};
static const struct drake_sel_expr notin_a100[] = {
    {"nvidia.com/gpu.product", DRAKE_SEL_NOT_IN, a100, 1, false}};
static const struct drake_sel_expr notin_absent[] = {{"pool", DRAKE_SEL_NOT_IN, x, 1, false}};
static const struct drake_sel_expr exists_zone[] = {
    {"topology.kubernetes.io/zone", DRAKE_SEL_EXISTS, NULL, 0, false}};
static const struct drake_sel_expr no_pool[] = {{"pool", DRAKE_SEL_DOES_NOT_EXIST, NULL, 0, false}};
static const struct drake_sel_expr gt4[] = {{"nvidia.com/gpu.count", DRAKE_SEL_GT, four, 1, false}};
static const struct drake_sel_expr lt4[] = {{"nvidia.com/gpu.count", DRAKE_SEL_LT, four, 1, false}};
static const struct drake_sel_expr gt_word[] = {
    {"topology.kubernetes.io/zone", DRAKE_SEL_GT, nine, 1, false}};
static const struct drake_sel_expr name_a[] = {{"metadata.name", DRAKE_SEL_IN, gpu_a, 1, true}};
static const struct drake_sel_expr name_b[] = {{"metadata.name", DRAKE_SEL_IN, gpu_b, 1, true}};
static const struct drake_sel_expr both_hold_and_fail[] = {
    {"nvidia.com/gpu.product", DRAKE_SEL_IN, v100, 2, false},
    {"topology.kubernetes.io/zone", DRAKE_SEL_DOES_NOT_EXIST, NULL, 0, false}};

#define TERM(e)                                                                                    \
	{                                                                                          \
		e, sizeof(e) / sizeof(e[0])                                                        \
	}
static const struct drake_sel_term t_in_v100[] = {TERM(in_v100)};
static const struct drake_sel_term t_in_a100[] = {TERM(in_a100)};
static const struct drake_sel_term t_a100_or_name_a[] = {TERM(in_a100), TERM(name_a)};
static const struct drake_sel_term t_name_b[] = {TERM(name_b)};
static const struct drake_sel_term t_notin_a100[] = {TERM(notin_a100)};
static const struct drake_sel_term t_notin_absent[] = {TERM(notin_absent)};
static const struct drake_sel_term t_exists[] = {TERM(exists_zone)};
static const struct drake_sel_term t_no_pool[] = {TERM(no_pool)};
static const struct drake_sel_term t_gt4[] = {TERM(gt4)};
static const struct drake_sel_term t_lt4[] = {TERM(lt4)};
static const struct drake_sel_term t_gt_word[] = {TERM(gt_word)};
static const struct drake_sel_term t_and[] = {TERM(both_hold_and_fail)};
static const struct drake_sel_term t_empty[] = {{NULL, 0}};

struct scase {
	const char *name;
	struct drake_node_sel sel;
	bool want;
};

#define SEL(a) a, sizeof(a) / sizeof(a[0])
#define AFF(t) true, t, sizeof(t) / sizeof(t[0])

static const struct scase scases[] = {
    {"no rule: every node", {NULL, 0, false, NULL, 0}, true},
    {"a selector the node's labels satisfy", {SEL(sel_v100), false, NULL, 0}, true},
    {"a selector naming another value", {SEL(sel_a100), false, NULL, 0}, false},
    {"a selector naming a label the node lacks", {SEL(sel_missing), false, NULL, 0}, false},
    {"In with the node's value among others", {NULL, 0, AFF(t_in_v100)}, true},
    {"In without it", {NULL, 0, AFF(t_in_a100)}, false},
    {"terms are ORed: the second matches by name", {NULL, 0, AFF(t_a100_or_name_a)}, true},
    {"matchFields on another node's name", {NULL, 0, AFF(t_name_b)}, false},
    {"NotIn another value", {NULL, 0, AFF(t_notin_a100)}, true},
    {"NotIn on a label the node lacks holds", {NULL, 0, AFF(t_notin_absent)}, true},
    {"Exists", {NULL, 0, AFF(t_exists)}, true},
    {"DoesNotExist", {NULL, 0, AFF(t_no_pool)}, true},
    {"Gt compares integers: 8 > 4", {NULL, 0, AFF(t_gt4)}, true},
    {"Lt compares integers: 8 < 4 does not hold", {NULL, 0, AFF(t_lt4)}, false},
    {"Gt on a label that is no integer", {NULL, 0, AFF(t_gt_word)}, false},
    {"a term's expressions are ANDed", {NULL, 0, AFF(t_and)}, false},
    {"an empty term matches nothing", {NULL, 0, AFF(t_empty)}, false},
    {"a required affinity with no terms matches nothing", {NULL, 0, true, NULL, 0}, false},
    {"selector and affinity must both hold", {SEL(sel_a100), AFF(t_in_v100)}, false},
};

static void each_selector(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(scases) / sizeof(scases[0]); i++)
		if (drake_node_sel_matches(&scases[i].sel, "gpu-a", labels, NL) != scases[i].want)
			fail_msg("%s: want %s", scases[i].name,
			         scases[i].want ? "match" : "no match");
	assert_true(drake_node_sel_matches(NULL, "gpu-a", labels, NL));
}

static const struct drake_taint gpu_taint[] = {{"nvidia.com/gpu", "present", "NoSchedule"}};
static const struct drake_taint soft[] = {{"spot", "true", "PreferNoSchedule"}};
static const struct drake_taint two[] = {{"nvidia.com/gpu", "present", "NoSchedule"},
                                         {"dedicated", "ml", "NoExecute"}};

struct tcase {
	const char *name;
	struct drake_toleration tol[2];
	size_t nt;
	const struct drake_taint *taints;
	size_t n;
	bool want;
};

static const struct tcase tcases[] = {
    {"no taint needs no toleration", {{0}}, 0, NULL, 0, true},
    {"PreferNoSchedule keeps nobody off", {{0}}, 0, soft, 1, true},
    {"an untolerated NoSchedule taint keeps the replica off", {{0}}, 0, gpu_taint, 1, false},
    {"Exists on the key", {{"nvidia.com/gpu", "Exists", NULL, NULL}}, 1, gpu_taint, 1, true},
    {"Equal with the value",
     {{"nvidia.com/gpu", "Equal", "present", "NoSchedule"}},
     1,
     gpu_taint,
     1,
     true},
    {"no operator is Equal", {{"nvidia.com/gpu", NULL, "present", NULL}}, 1, gpu_taint, 1, true},
    {"Equal with another value",
     {{"nvidia.com/gpu", "Equal", "absent", NULL}},
     1,
     gpu_taint,
     1,
     false},
    {"another effect", {{"nvidia.com/gpu", "Exists", NULL, "NoExecute"}}, 1, gpu_taint, 1, false},
    {"no key with Exists tolerates every taint", {{NULL, "Exists", NULL, NULL}}, 1, two, 2, true},
    {"every NoSchedule and NoExecute taint must be tolerated",
     {{"nvidia.com/gpu", "Exists", NULL, NULL}},
     1,
     two,
     2,
     false},
    {"two tolerations for two taints",
     {{"nvidia.com/gpu", "Exists", NULL, NULL}, {"dedicated", "Equal", "ml", "NoExecute"}},
     2,
     two,
     2,
     true},
};

static void each_toleration(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(tcases) / sizeof(tcases[0]); i++)
		if (drake_tolerates(tcases[i].tol, tcases[i].nt, tcases[i].taints, tcases[i].n) !=
		    tcases[i].want)
			fail_msg("%s: want %s", tcases[i].name,
			         tcases[i].want ? "tolerated" : "kept off");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(each_selector),
	    cmocka_unit_test(each_toleration),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
