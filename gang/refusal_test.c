/* refusal_test.c - which of kube-scheduler's refusals the planner answers
 * for (the messages are v1.36's, as pods carry them), and the backoff of a
 * job it refuses, on a clock the test holds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "gang/refusal.h"

struct tcase {
	const char *name;
	const char *message;
	bool pinned;
	enum drake_refusal_kind want;
};

static const struct tcase cases[] = {
    {"a claim that does not exist is a PreFilter message, outside the model",
     "0/7 nodes are available: persistentvolumeclaim \"strategy-volume\" not found. "
     "preemption: 0/7 nodes are available: 7 Preemption is not helpful for scheduling.",
     true, DRAKE_REFUSAL_OUTSIDE},
    {"a claim that cannot bind yet is outside the model",
     "0/7 nodes are available: pod has unbound immediate PersistentVolumeClaims. "
     "preemption: 0/7 nodes are available: 7 Preemption is not helpful for scheduling.",
     true, DRAKE_REFUSAL_OUTSIDE},
    {"too little of a resource is the planner's own business",
     "0/7 nodes are available: 1 Insufficient nvidia.com/gpu, 6 node(s) didn't match "
     "Pod's node affinity/selector. preemption: 0/7 nodes are available: 1 No preemption "
     "victims found for incoming pod, 6 Preemption is not helpful for scheduling.",
     true, DRAKE_REFUSAL_MODELLED},
    {"a cordoned node and drake's own pin are modelled",
     "0/7 nodes are available: 1 node(s) were unschedulable, 6 node(s) didn't match Pod's "
     "node affinity/selector.",
     true, DRAKE_REFUSAL_MODELLED},
    {"drake's own filter reason is modelled",
     "0/3 nodes are available: 3 job ml/a: planned node n1 for a-worker-0 is not feasible "
     "now (gang u.1).",
     false, DRAKE_REFUSAL_MODELLED},
    {"an untolerated taint is modelled: the planner weighs taints",
     "0/7 nodes are available: 1 node(s) had untolerated taint {gpu: reserved}, 6 node(s) "
     "didn't match Pod's node affinity/selector.",
     true, DRAKE_REFUSAL_MODELLED},
    {"a selector of the pod's own that nothing matches is outside the model",
     "0/7 nodes are available: 7 node(s) didn't match Pod's node affinity/selector. "
     "preemption: 0/7 nodes are available: 7 Preemption is not helpful for scheduling.",
     false, DRAKE_REFUSAL_OUTSIDE},
    {"host ports among modelled reasons make the refusal outside the model",
     "0/7 nodes are available: 1 Insufficient cpu, 1 node(s) didn't have free ports for the "
     "requested pod ports, 5 node(s) didn't match Pod's node affinity/selector.",
     true, DRAKE_REFUSAL_OUTSIDE},
    {"the pods limit is outside the model",
     "0/7 nodes are available: 1 Too many pods, 6 node(s) didn't match Pod's node "
     "affinity/selector.",
     true, DRAKE_REFUSAL_OUTSIDE},
    {"v1.36 names the pin's filter as a plugin, and a post-filter's words follow",
     "0/7 nodes are available: 1 node(s) were unschedulable, 6 node(s) didn't satisfy "
     "plugin(s) [NodeAffinity]. no new claims to deallocate,",
     true, DRAKE_REFUSAL_MODELLED},
    {"the plugin's words for a selector of the pod's own are outside the model",
     "0/7 nodes are available: 7 node(s) didn't satisfy plugin(s) [NodeAffinity]. no new "
     "claims to deallocate,",
     false, DRAKE_REFUSAL_OUTSIDE},
    {"whatever follows the histogram names no new reason",
     "0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, preemption: "
     "0/2 nodes are available: 2 No preemption victims found for incoming pod.",
     true, DRAKE_REFUSAL_MODELLED},
    {"a message without the histogram is outside the model", "binding rejected: timeout", true,
     DRAKE_REFUSAL_OUTSIDE},
    {"no message at all is outside the model", NULL, true, DRAKE_REFUSAL_OUTSIDE},
    {"an empty histogram is outside the model", "0/0 nodes are available: .", true,
     DRAKE_REFUSAL_OUTSIDE},
};

static void each_message(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum drake_refusal_kind got =
		    drake_refusal_classify(cases[i].message, cases[i].pinned);
		if (got != cases[i].want)
			fail_msg("%s: got %s", cases[i].name, drake_refusal_kind_name(got));
	}
}

static void the_summary_ends_with_the_histogram(void **state)
{
	(void)state;
	const char *m = "0/7 nodes are available: persistentvolumeclaim \"data\" not found. "
	                "preemption: 0/7 nodes are available: 7 Preemption is not helpful.";
	assert_int_equal(drake_refusal_summary_len(m),
	                 (int)strlen("0/7 nodes are available: persistentvolumeclaim \"data\" "
	                             "not found."));
	assert_int_equal(drake_refusal_summary_len("binding rejected"), 16);
	assert_int_equal(drake_refusal_summary_len(NULL), 0);
}

static void the_delay_doubles_from_the_minimum_up_to_the_maximum(void **state)
{
	(void)state;
	struct drake_backoff_opts o = {.min_s = 5, .max_s = 60};
	assert_true(drake_refusal_delay(&o, 0) == 5);
	assert_true(drake_refusal_delay(&o, 1) == 5);
	assert_true(drake_refusal_delay(&o, 2) == 10);
	assert_true(drake_refusal_delay(&o, 4) == 40);
	assert_true(drake_refusal_delay(&o, 5) == 60);
	assert_true(drake_refusal_delay(&o, 1000000) == 60);
}

static void a_refused_job_waits_its_delay_unless_something_changed_after(void **state)
{
	(void)state;
	struct drake_backoff_opts o = {.min_s = 5, .max_s = 60};
	assert_true(drake_refusal_may_retry(NULL, 0, 0));
	struct drake_refusal_record r = drake_refusal_next(NULL, &o, 1000);
	assert_int_equal(r.tries, 1);
	assert_true(r.until_s == 1005);
	assert_false(drake_refusal_may_retry(&r, 1004, 0));
	assert_false(drake_refusal_may_retry(&r, 1004, 999));  /* a change before it */
	assert_false(drake_refusal_may_retry(&r, 1004, 1000)); /* or at the same moment */
	assert_true(drake_refusal_may_retry(&r, 1001, 1000.5));
	assert_true(drake_refusal_may_retry(&r, 1005, 0));
	r = drake_refusal_next(&r, &o, 1006);
	assert_int_equal(r.tries, 2);
	assert_true(r.until_s == 1016);
	assert_false(drake_refusal_may_retry(&r, 1015, 0));
	struct drake_refusal_record none = {0};
	assert_true(drake_refusal_may_retry(&none, 0, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(each_message),
	    cmocka_unit_test(the_summary_ends_with_the_histogram),
	    cmocka_unit_test(the_delay_doubles_from_the_minimum_up_to_the_maximum),
	    cmocka_unit_test(a_refused_job_waits_its_delay_unless_something_changed_after),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
