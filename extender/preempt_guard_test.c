/* preempt_guard_test.c - the preempt verb's check over a pod cache: a live
 * PS or chief is never a victim, workers go down to exactly their minimum,
 * jobs an older drake admitted keep their head count, and copies of members
 * or finished members do not count as live. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "extender/preempt_guard.h"
#include "kube/cache.h"
#include "kube/pod.h"

struct pod {
	const char *name, *role, *phase;
	const char *ns;        /* NULL: "ml" */
	const char *owner;     /* NULL: "job-uid" */
	const char *node;      /* NULL: "gpu-a" */
	const char *min_roles; /* NULL: none (an older drake's pod) */
};

static void put(struct kube_cache *c, const struct pod *p, const char *gang_min)
{
	char roles[128] = "";
	if (p->min_roles)
		snprintf(roles, sizeof(roles), ",\"drake.dev/gang-min-roles\":\"%s\"",
		         p->min_roles);
	char buf[1400];
	snprintf(buf, sizeof(buf),
	         "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\",\"uid\":\"uid-%s\","
	         "\"resourceVersion\":\"1\","
	         "\"ownerReferences\":[{\"uid\":\"%s\",\"controller\":true}],"
	         "\"labels\":{\"training.kubeflow.org/job-name\":\"mnist\","
	         "\"training.kubeflow.org/replica-type\":\"%s\"},"
	         "\"annotations\":{\"drake.dev/planned-node\":\"gpu-a\",\"drake.dev/gang\":"
	         "\"job-uid.1\",\"drake.dev/gang-size\":\"5\",\"drake.dev/gang-min\":\"%s\"%s}},"
	         "\"spec\":{\"nodeName\":\"%s\"},\"status\":{\"phase\":\"%s\"}}",
	         p->name, p->ns ? p->ns : "ml", p->name, p->owner ? p->owner : "job-uid", p->role,
	         gang_min, roles, p->node ? p->node : "gpu-a", p->phase ? p->phase : "Running");
	json_error_t err;
	json_t *obj = json_loads(buf, 0, &err);
	if (!obj)
		fail_msg("bad test pod: %s", err.text);
	void *old = NULL;
	bool changed;
	assert_int_equal(kube_cache_put(c, obj, 1, NULL, &old, &changed), DRAKE_OK);
	kube_cache_drop(c, old);
	json_decref(obj);
}

#define MIN "ps=1,chief=1,worker=2"

static void the_guard_follows_the_per_role_rule_over_the_cache(void **state)
{
	static const struct {
		const char *name;
		struct pod pods[8];
		const char *gang_min;
		const char *victims[4];
		bool allowed;
		const char *why;
	} cases[] = {
	    {"the PS is never offered as a victim",
	     {{"mnist-ps-0", "ps", .min_roles = MIN},
	      {"mnist-chief-0", "chief", .min_roles = MIN},
	      {"mnist-worker-0", "worker", .min_roles = MIN},
	      {"mnist-worker-1", "worker", .min_roles = MIN},
	      {"mnist-worker-2", "worker", .min_roles = MIN},
	      {"mnist-worker-3", "worker", .min_roles = MIN}},
	     "4",
	     {"uid-mnist-ps-0"},
	     false,
	     "job ml/mnist would lose 1 of its 1 running PS"},
	    {"the chief is not offered either",
	     {{"mnist-ps-0", "ps", .min_roles = MIN},
	      {"mnist-chief-0", "chief", .min_roles = MIN},
	      {"mnist-worker-0", "worker", .min_roles = MIN},
	      {"mnist-worker-1", "worker", .min_roles = MIN},
	      {"mnist-worker-2", "worker", .min_roles = MIN}},
	     "4",
	     {"uid-mnist-chief-0"},
	     false,
	     "job ml/mnist would lose its chief"},
	    {"a Kubeflow master is a chief too",
	     {{"mnist-master-0", "master", .min_roles = MIN},
	      {"mnist-worker-0", "worker", .min_roles = MIN},
	      {"mnist-worker-1", "worker", .min_roles = MIN}},
	     "3",
	     {"uid-mnist-master-0"},
	     false,
	     "would lose its chief"},
	    {"workers may go down to exactly the minimum",
	     {{"mnist-ps-0", "ps", .min_roles = MIN},
	      {"mnist-chief-0", "chief", .min_roles = MIN},
	      {"mnist-worker-0", "worker", .min_roles = MIN},
	      {"mnist-worker-1", "worker", .min_roles = MIN},
	      {"mnist-worker-2", "worker", .min_roles = MIN},
	      {"mnist-worker-3", "worker", .min_roles = MIN}},
	     "4",
	     {"uid-mnist-worker-2", "uid-mnist-worker-3"},
	     true,
	     ""},
	    {"one worker more is refused",
	     {{"mnist-ps-0", "ps", .min_roles = MIN},
	      {"mnist-chief-0", "chief", .min_roles = MIN},
	      {"mnist-worker-0", "worker", .min_roles = MIN},
	      {"mnist-worker-1", "worker", .min_roles = MIN},
	      {"mnist-worker-2", "worker", .min_roles = MIN},
	      {"mnist-worker-3", "worker", .min_roles = MIN}},
	     "4",
	     {"uid-mnist-worker-1", "uid-mnist-worker-2", "uid-mnist-worker-3"},
	     false,
	     "job ml/mnist would drop to 1 of the 2 workers it needs"},
	    {"a finished worker is not live",
	     {{"mnist-ps-0", "ps", .min_roles = MIN},
	      {"mnist-chief-0", "chief", .min_roles = MIN},
	      {"mnist-worker-0", "worker", .min_roles = MIN},
	      {"mnist-worker-1", "worker", .min_roles = MIN},
	      {"mnist-worker-2", "worker", "Succeeded", .min_roles = MIN}},
	     "4",
	     {"uid-mnist-worker-1"},
	     false,
	     "would drop to 1 of the 2 workers"},
	    {"a copy of a member does not count as live",
	     {{"mnist-ps-0", "ps", .min_roles = MIN},
	      {"mnist-chief-0", "chief", .min_roles = MIN},
	      {"mnist-worker-0", "worker", .min_roles = MIN},
	      {"mnist-worker-1", "worker", .min_roles = MIN},
	      {"mnist-worker-1-debug", "worker", .min_roles = MIN},
	      {"mnist-worker-5", "worker", .ns = "elsewhere", .min_roles = MIN}},
	     "4",
	     {"uid-mnist-worker-1"},
	     false,
	     "would drop to 1 of the 2 workers"},
	    {"a job an older drake admitted keeps its head count and may lose its PS",
	     {{.name = "mnist-ps-0", .role = "ps"},
	      {.name = "mnist-worker-0", .role = "worker"},
	      {.name = "mnist-worker-1", .role = "worker"},
	      {.name = "mnist-worker-2", .role = "worker"},
	      {.name = "mnist-worker-3", .role = "worker"}},
	     "2",
	     {"uid-mnist-ps-0"},
	     true,
	     ""},
	    {"a job an older drake admitted is not taken below its head count",
	     {{.name = "mnist-ps-0", .role = "ps"}, {.name = "mnist-worker-0", .role = "worker"}},
	     "2",
	     {"uid-mnist-worker-0"},
	     false,
	     "job ml/mnist would drop to 1 of the 2 pods its gang needs"},
	    {"pods that belong to no gang may all go",
	     {{"mnist-ps-0", "ps", .owner = "", .min_roles = MIN}},
	     "4",
	     {"uid-mnist-ps-0", "uid-unknown"},
	     true,
	     ""},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kube_cache c;
		kube_pod_cache_init(&c);
		for (size_t k = 0; k < 8 && cases[i].pods[k].name; k++)
			put(&c, &cases[i].pods[k], cases[i].gang_min);
		char *uids[4];
		size_t n = 0;
		while (n < 4 && cases[i].victims[n]) {
			uids[n] = (char *)cases[i].victims[n];
			n++;
		}
		char why[256] = "x";
		bool ok = preempt_guard_allows(&c, "gpu-a", uids, n, why, sizeof(why));
		if (ok != cases[i].allowed || !strstr(why, cases[i].why) || (ok && why[0]))
			fail_msg("%s: got %s \"%s\"", cases[i].name, ok ? "allowed" : "refused",
			         why);
		kube_cache_release(&c);
	}
}

static void without_a_pod_cache_every_victim_may_go(void **state)
{
	char *uids[] = {"a"};
	char why[64];
	assert_true(preempt_guard_allows(NULL, "gpu-a", uids, 1, why, sizeof(why)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(the_guard_follows_the_per_role_rule_over_the_cache),
	    cmocka_unit_test(without_a_pod_cache_every_victim_may_go),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
