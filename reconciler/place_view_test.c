/* place_view_test.c - the caches as place/ sees them: a node's
 * allocatable, GPU model label and bound pods (whole GPUs, KubeShare
 * shares on their vGPU, finished and unbound pods left out) make its
 * state; a pod's requests or share make its shape. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "reconciler/admit_testutil.h"
#include "reconciler/place_view.h"

#define NCASES(a) (sizeof(a) / sizeof((a)[0]))

static void gpu_node(struct world *w, const char *name, const char *model)
{
	char b[768];
	snprintf(b, sizeof(b),
	         "{\"metadata\":{\"name\":\"%s\",\"uid\":\"n-%s\",\"labels\":{%s%s%s}},"
	         "\"spec\":{},\"status\":{\"allocatable\":{\"cpu\":\"32\",\"memory\":\"256Gi\","
	         "\"nvidia.com/gpu\":\"8\",\"pods\":\"110\"}}}",
	         name, name, model ? "\"nvidia.com/gpu.product\":\"" : "", model ? model : "",
	         model ? "\"" : "");
	put(&w->nodes, b);
}

/* A pod: cpu cores, whole GPUs, on node ("" unbound), phase, the
 * KubeShare annotations (a JSON object body, "" for none) and the GPU
 * product its node selector names (NULL: none). */
static void a_pod_on(struct world *w, const char *name, int cpu, int gpus, const char *node,
                     const char *phase, const char *ann, const char *model)
{
	char b[1024], gpu[48] = "", sel[160] = "";
	if (model)
		snprintf(sel, sizeof(sel), "\"nodeSelector\":{\"nvidia.com/gpu.product\":\"%s\"},",
		         model);
	if (gpus)
		snprintf(gpu, sizeof(gpu), ",\"nvidia.com/gpu\":\"%d\"", gpus);
	snprintf(b, sizeof(b),
	         "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ml\",\"uid\":\"u-%s\","
	         "\"annotations\":{%s}},\"spec\":{%s%s%s%s\"containers\":[{\"name\":\"c\","
	         "\"resources\":{\"requests\":{\"cpu\":\"%d\",\"memory\":\"16Gi\"%s}}}]},"
	         "\"status\":{\"phase\":\"%s\"}}",
	         name, name, ann, sel, *node ? "\"nodeName\":\"" : "", node, *node ? "\"," : "",
	         cpu, gpu, phase);
	put(&w->pods, b);
}

static void a_pod(struct world *w, const char *name, int cpu, int gpus, const char *node,
                  const char *phase, const char *ann)
{
	a_pod_on(w, name, cpu, gpus, node, phase, ann, NULL);
}

#define SHARE(req, id) "\"kubeshare/gpu_request\":\"" req "\",\"kubeshare/GPUID\":\"" id "\""

static int free_gpus(const struct place_node *n)
{
	return place_node_free_gpus(n);
}

static void test_a_node_is_its_allocatable_model_and_bound_pods(void **state)
{
	(void)state;
	struct world w;
	world_init(&w);
	gpu_node(&w, "n1", "NVIDIA-A100-SXM4-80GB");
	gpu_node(&w, "n2", NULL);
	a_pod(&w, "two", 4, 2, "n1", "Running", "");
	a_pod(&w, "s1", 1, 0, "n1", "Running", SHARE("0.3", "abcde"));
	a_pod(&w, "s2", 1, 0, "n1", "Pending", SHARE("0.2", "abcde"));
	a_pod(&w, "s3", 1, 0, "n1", "Running", SHARE("0.5", "fghij"));
	a_pod(&w, "done", 8, 4, "n1", "Succeeded", "");
	a_pod(&w, "waiting", 8, 4, "", "Pending", "");
	struct place_models models = {0};
	struct place_node n;
	char why[200];
	assert_int_equal(
	    place_view_node(kube_nodes_get(&w.nodes, "n1"), &w.pods, &models, &n, why, sizeof(why)),
	    DRAKE_OK);
	assert_int_equal(n.n_gpu, 8);
	assert_int_equal(n.model, 0);
	assert_string_equal(models.name[0], "NVIDIA-A100-SXM4-80GB");
	assert_int_equal(n.cpu_cap, 32000);
	assert_int_equal(n.cpu_left, 32000 - 4000 - 3000);
	assert_int_equal(n.mem_left, 256 * 1024 - 4 * 16 * 1024);
	/* two whole GPUs, and two vGPUs each opened on a free one */
	assert_int_equal(free_gpus(&n), 4);
	assert_int_equal(place_node_gpu_left(&n), 4000 + 500 + 500);
	assert_int_equal(n.tasks[2], 1);
	assert_int_equal(n.tasks[PLACE_CLASS_SHARE], 3);
	assert_int_equal(
	    place_view_node(kube_nodes_get(&w.nodes, "n2"), &w.pods, &models, &n, why, sizeof(why)),
	    DRAKE_OK);
	assert_int_equal(n.model, -1);
	assert_int_equal(free_gpus(&n), 8);
	world_release(&w);
}

struct shape_case {
	const char *name;
	int cpu, gpus;
	const char *ann;
	const char *model; /* its nodeSelector's GPU product, or NULL */
	drake_err want;
	int32_t num_gpu, gpu_milli;
};

static void test_a_pod_is_its_requests_or_its_share(void **state)
{
	(void)state;
	static const struct shape_case cases[] = {
	    {"whole GPUs", 4, 2, "", NULL, DRAKE_OK, 2, 1000},
	    {"whole GPUs of the model its node selector names", 4, 2, "", "NVIDIA-A100-SXM4-80GB",
	     DRAKE_OK, 2, 1000},
	    {"a KubeShare share of one GPU", 2, 0, SHARE("0.25", "x"), NULL, DRAKE_OK, 1, 250},
	    {"no GPU", 2, 0, "", NULL, DRAKE_OK, 0, 0},
	    {"no GPU, no model, whatever the selector", 2, 0, "", "T4", DRAKE_OK, 0, 0},
	    {"more GPUs than placement models", 4, 17, "", NULL, DRAKE_EINVAL, 0, 0},
	};
	for (size_t i = 0; i < NCASES(cases); i++) {
		const struct shape_case *c = &cases[i];
		struct world w;
		world_init(&w);
		a_pod_on(&w, "p", c->cpu, c->gpus, "", "Pending", c->ann, c->model);
		struct place_task t;
		char why[200] = "";
		struct place_models models = {0};
		drake_err e = place_view_task(kube_pods_get(&w.pods, "ml", "p"), &models, &t, why,
		                              sizeof(why));
		bool restricted = c->model && c->num_gpu;
		if (e != c->want)
			fail_msg("%s: %d (%s)", c->name, e, why);
		if (!e && (t.num_gpu != c->num_gpu || t.gpu_milli != c->gpu_milli ||
		           t.cpu_milli != c->cpu * 1000 || t.mem_mib != 16384 ||
		           t.models != (restricted ? UINT64_C(1) : PLACE_ANY_MODEL) ||
		           (restricted && strcmp(models.name[0], c->model))))
			fail_msg("%s: %d GPUs of %d milli, %lld cpu", c->name, t.num_gpu,
			         t.gpu_milli, (long long)t.cpu_milli);
		world_release(&w);
	}
}

#define REQ(terms)                                                                                 \
	"\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{"     \
	"\"nodeSelectorTerms\":[" terms "]}}}"
#define IN(...)                                                                                    \
	"{\"key\":\"nvidia.com/gpu.product\",\"operator\":\"In\",\"values\":[" __VA_ARGS__ "]}"
#define TERM(...) "{\"matchExpressions\":[" __VA_ARGS__ "]}"
#define ZONE      "{\"key\":\"zone\",\"operator\":\"In\",\"values\":[\"a\"]}"

/* The models a pod's spec allows, '|'-joined in mask order ("" any). */
static void test_a_pods_models_come_from_its_selector_or_required_affinity(void **state)
{
	(void)state;
	static const struct {
		const char *name, *spec, *models;
	} cases[] = {
	    {"a required node affinity In two models allows both",
	     REQ(TERM(ZONE "," IN("\"T4\",\"P100\""))), "T4|P100"},
	    {"terms are ORed: their models add up", REQ(TERM(IN("\"T4\"")) "," TERM(IN("\"G2\""))),
	     "T4|G2"},
	    {"a term that names no model lets the pod run on any",
	     REQ(TERM(IN("\"T4\"")) "," TERM(ZONE)), ""},
	    {"NotIn names what the pod avoids, not what it may use: any",
	     REQ(TERM("{\"key\":\"nvidia.com/gpu.product\",\"operator\":\"NotIn\","
	              "\"values\":[\"T4\"]}")),
	     ""},
	    {"a preferred affinity does not restrict",
	     "\"affinity\":{\"nodeAffinity\":{\"preferredDuringSchedulingIgnoredDuringExecution\":"
	     "[{\"weight\":1,\"preference\":" TERM(IN("\"T4\"")) "}]}}",
	     ""},
	    {"the node selector's model wins over the affinity's",
	     "\"nodeSelector\":{\"nvidia.com/gpu.product\":\"A10\"}," REQ(TERM(IN("\"T4\""))),
	     "A10"},
	};
	for (size_t i = 0; i < NCASES(cases); i++) {
		struct world w;
		world_init(&w);
		char b[2048];
		snprintf(b, sizeof(b),
		         "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ml\",\"uid\":\"u-p\"},"
		         "\"spec\":{%s,\"containers\":[{\"name\":\"c\",\"resources\":{"
		         "\"requests\":{\"cpu\":\"1\",\"nvidia.com/gpu\":\"1\"}}}]}}",
		         cases[i].spec);
		put(&w.pods, b);
		struct place_task t;
		char why[200] = "", got[256] = "";
		struct place_models models = {0};
		if (place_view_task(kube_pods_get(&w.pods, "ml", "p"), &models, &t, why,
		                    sizeof(why)) != DRAKE_OK)
			fail_msg("%s: %s", cases[i].name, why);
		for (int m = 0; m < models.n && t.models != PLACE_ANY_MODEL; m++)
			if (t.models >> m & 1)
				snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s",
				         *got ? "|" : "", models.name[m]);
		if (strcmp(got, cases[i].models) != 0)
			fail_msg("%s: models \"%s\", want \"%s\"", cases[i].name, got,
			         cases[i].models);
		world_release(&w);
	}
}

static void test_candidates_the_cache_lacks_are_not_known(void **state)
{
	(void)state;
	struct world w;
	world_init(&w);
	gpu_node(&w, "n1", "V100");
	a_pod(&w, "p", 4, 1, "", "Pending", "");
	const char *cands[] = {"n1", "gone"};
	struct place_models models = {0};
	struct place_task t;
	struct place_node nodes[2];
	bool known[2];
	char why[200];
	assert_int_equal(place_view_build(&w.nodes, &w.pods, "ml", "p", cands, 2, &models, &t,
	                                  nodes, known, why, sizeof(why)),
	                 DRAKE_OK);
	assert_true(known[0]);
	assert_false(known[1]);
	assert_int_equal(t.num_gpu, 1);
	assert_int_equal(place_view_build(&w.nodes, &w.pods, "ml", "absent", cands, 2, &models, &t,
	                                  nodes, known, why, sizeof(why)),
	                 DRAKE_EINVAL);
	assert_non_null(strstr(why, "not in drake's pod cache"));
	world_release(&w);
}

/* A node's state is kept between calls until the node is forgotten, as
 * the informers' events make the controller do. */
static void test_a_remembered_node_is_read_again_once_forgotten(void **state)
{
	(void)state;
	struct world w;
	world_init(&w);
	gpu_node(&w, "n1", "V100");
	a_pod(&w, "p", 4, 1, "", "Pending", "");
	const char *cands[] = {"n1"};
	struct place_view_memo memo = {0};
	struct place_models models = {0};
	struct place_task t;
	struct place_node n;
	bool known;
	char why[200];
	assert_int_equal(place_view_build_memo(&w.nodes, &w.pods, &memo, "ml", "p", cands, 1,
	                                       &models, &t, &n, &known, why, sizeof(why)),
	                 DRAKE_OK);
	assert_int_equal(free_gpus(&n), 8);
	a_pod(&w, "two", 4, 2, "n1", "Running", "");
	assert_int_equal(place_view_build_memo(&w.nodes, &w.pods, &memo, "ml", "p", cands, 1,
	                                       &models, &t, &n, &known, why, sizeof(why)),
	                 DRAKE_OK);
	assert_int_equal(free_gpus(&n), 8); /* remembered: not read again */
	place_view_memo_forget(&memo, "n1");
	assert_int_equal(place_view_build_memo(&w.nodes, &w.pods, &memo, "ml", "p", cands, 1,
	                                       &models, &t, &n, &known, why, sizeof(why)),
	                 DRAKE_OK);
	assert_int_equal(free_gpus(&n), 6);
	place_view_memo_release(&memo);
	world_release(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_a_node_is_its_allocatable_model_and_bound_pods),
	    cmocka_unit_test(test_a_pod_is_its_requests_or_its_share),
	    cmocka_unit_test(test_a_pods_models_come_from_its_selector_or_required_affinity),
	    cmocka_unit_test(test_candidates_the_cache_lacks_are_not_known),
	    cmocka_unit_test(test_a_remembered_node_is_read_again_once_forgotten),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
