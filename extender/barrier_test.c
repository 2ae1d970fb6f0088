/* barrier_test.c - the gang bind barrier with scripted requests: a wave
 * releases only with every role's minimum there, posts its PS and chief
 * before its workers, posts no worker when a PS Binding fails, and refuses
 * pods that are not the member they claim to be. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <event2/event.h>
#include <jansson.h>

#include "extender/barrier.h"
#include "extender/member.h"
#include "gang/protocol.h"
#include "kube/cache.h"
#include "kube/pod.h"

/* A held bind request as the barrier sees it. */
struct req {
	const char *name;
	bool held;
	int refs;
	char answer[512]; /* "" success, else the error; valid once answered */
	bool answered;
	int posted; /* order of its Binding among all posted, 0: never posted */
	bool undone;
	barrier_posted_fn done;
	void *arg;
	const char *fail_at_once; /* post() fails before returning, with this */
};

static int post_seq;

static void op_post(void *r, barrier_posted_fn done, void *arg)
{
	struct req *q = r;
	q->posted = ++post_seq;
	q->done = done;
	q->arg = arg;
	if (q->fail_at_once)
		done(q, q->fail_at_once, arg);
}

static void op_answer(void *r, const char *error)
{
	struct req *q = r;
	if (!q->held)
		return;
	q->held = false;
	q->answered = true;
	snprintf(q->answer, sizeof(q->answer), "%s", error ? error : "");
}

static bool op_held(const void *r)
{
	return ((const struct req *)r)->held;
}

static void op_hold(void *r)
{
	((struct req *)r)->refs++;
}

static void op_drop(void *r)
{
	((struct req *)r)->refs--;
}

static void op_undo(void *r)
{
	((struct req *)r)->undone = true;
}

static const struct barrier_ops ops = {op_post, op_answer, op_held, op_hold, op_drop, op_undo};

/* The API server answers a Binding posted earlier. */
static void complete(struct req *q, const char *error)
{
	assert_non_null(q->done);
	barrier_posted_fn done = q->done;
	q->done = NULL;
	done(q, error, q->arg);
}

struct env {
	struct event_base *base;
	struct barrier_reg *g;
	struct kube_cache cache;
	bool with_cache;
};

static int setup(void **state)
{
	static struct env e;
	e = (struct env){0};
	e.base = event_base_new();
	e.g = barrier_reg_new(e.base, 0.05, &ops);
	kube_pod_cache_init(&e.cache);
	post_seq = 0;
	*state = &e;
	return e.base && e.g ? 0 : -1;
}

static int teardown(void **state)
{
	struct env *e = *state;
	barrier_reg_free(e->g);
	kube_cache_release(&e->cache);
	event_base_free(e->base);
	return 0;
}

static const struct drake_roles ps1_worker2 = {{1, 0, 2}};

/* A member of TFJob ml/mnist (uid job-uid), wave job-uid.1 of size n. */
static struct ext_member member(const char *name, int role, long size,
                                const struct drake_roles *min)
{
	return (struct ext_member){.planned_node = "gpu-a",
	                           .gang = "job-uid.1",
	                           .job = "mnist",
	                           .size = size,
	                           .has_min_roles = min != NULL,
	                           .min_roles = min ? *min : (struct drake_roles){{0}},
	                           .role = role,
	                           .ns = "ml",
	                           .name = name,
	                           .owner_uid = "job-uid"};
}

static void join(struct env *e, struct req *q, struct ext_member m)
{
	q->name = m.name;
	q->held = true;
	barrier_join(e->g, e->with_cache ? &e->cache : NULL, &m, q);
}

/* A pod in the cache: bound to gpu-a unless phase says otherwise. */
static void cached(struct env *e, const char *ns, const char *name, const char *owner,
                   const char *role, const char *phase)
{
	char buf[1024];
	snprintf(buf, sizeof(buf),
	         "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\",\"uid\":\"uid-%s\","
	         "\"resourceVersion\":\"1\","
	         "\"ownerReferences\":[{\"uid\":\"%s\",\"controller\":true}],"
	         "\"labels\":{\"training.kubeflow.org/job-name\":\"mnist\"},"
	         "\"annotations\":{\"drake.dev/planned-node\":\"gpu-a\",\"drake.dev/gang\":"
	         "\"job-uid.1\",\"drake.dev/gang-size\":\"3\",\"drake.dev/gang-min-roles\":"
	         "\"ps=1,chief=0,worker=2\",\"drake.dev/role\":\"%s\"}},"
	         "\"spec\":{\"nodeName\":\"gpu-a\"},\"status\":{\"phase\":\"%s\"}}",
	         name, ns, name, owner, role, phase);
	json_error_t err;
	json_t *obj = json_loads(buf, 0, &err);
	assert_non_null(obj);
	void *old = NULL;
	bool changed;
	assert_int_equal(kube_cache_put(&e->cache, obj, 1, NULL, &old, &changed), DRAKE_OK);
	kube_cache_drop(&e->cache, old);
	json_decref(obj);
	e->with_cache = true;
}

static struct barrier_stats stats(struct env *e)
{
	struct barrier_stats s;
	barrier_stats(e->g, &s);
	return s;
}

static void a_wave_with_its_size_reached_but_no_ps_does_not_release(void **state)
{
	struct env *e = *state;
	struct req w0 = {0}, w1 = {0}, w2 = {0};
	join(e, &w0, member("mnist-worker-0", DRAKE_ROLE_WORKER, 3, &ps1_worker2));
	join(e, &w1, member("mnist-worker-1", DRAKE_ROLE_WORKER, 3, &ps1_worker2));
	join(e, &w2, member("mnist-worker-2", DRAKE_ROLE_WORKER, 3, &ps1_worker2));
	assert_int_equal(post_seq, 0);
	assert_int_equal(stats(e).waiting, 3);
	event_base_dispatch(e->base); /* the timeout */
	assert_true(w0.answered && w1.answered && w2.answered);
	assert_non_null(strstr(w0.answer, "job ml/mnist: gang job-uid.1: 3 of 3 members reached "
	                                  "bind within 0.05s, with 0 of the 1 ps the job needs; "
	                                  "none was bound"));
	assert_int_equal(post_seq, 0);
	assert_int_equal(stats(e).waves_timed_out, 1);
	assert_int_equal(w0.refs + w1.refs + w2.refs, 0);
}

static void a_repair_wave_of_workers_waits_for_its_recreated_ps(void **state)
{
	struct env *e = *state;
	/* The old wave: its PS failed, one worker still runs. A recreated
	 * worker rejoins: with the failed PS counted, that would be 3 of 3. */
	cached(e, "ml", "mnist-ps-0", "job-uid", "ps", "Failed");
	cached(e, "ml", "mnist-worker-0", "job-uid", "worker", "Running");
	struct req w1 = {0}, ps = {0};
	join(e, &w1, member("mnist-worker-1", DRAKE_ROLE_WORKER, 3, &ps1_worker2));
	assert_int_equal(post_seq, 0);
	join(e, &ps, member("mnist-ps-0", DRAKE_ROLE_PS, 3, &ps1_worker2));
	/* 2 held + 1 bound before, every role there: the PS goes first. */
	assert_int_equal(ps.posted, 1);
	assert_int_equal(w1.posted, 0);
	complete(&ps, NULL);
	assert_int_equal(w1.posted, 2);
	complete(&w1, NULL);
	assert_string_equal(ps.answer, "");
	assert_string_equal(w1.answer, "");
	assert_int_equal(stats(e).members_bound, 2);
}

static void ps_and_chief_bindings_are_posted_before_any_worker(void **state)
{
	struct env *e = *state;
	struct drake_roles min = {{1, 1, 1}};
	struct req w0 = {0}, ps = {0}, chief = {0}, w1 = {0};
	join(e, &w0, member("mnist-worker-0", DRAKE_ROLE_WORKER, 4, &min));
	join(e, &ps, member("mnist-ps-0", DRAKE_ROLE_PS, 4, &min));
	join(e, &w1, member("mnist-worker-1", DRAKE_ROLE_WORKER, 4, &min));
	join(e, &chief, member("mnist-chief-0", DRAKE_ROLE_CHIEF, 4, &min));
	assert_true(ps.posted && chief.posted);
	assert_int_equal(w0.posted + w1.posted, 0);
	complete(&chief, NULL);
	assert_int_equal(w0.posted + w1.posted, 0); /* the PS is still in flight */
	complete(&ps, NULL);
	assert_true(w0.posted > 2 && w1.posted > 2);
	complete(&w0, NULL);
	complete(&w1, NULL);
	assert_string_equal(w0.answer, "");
	assert_string_equal(w1.answer, "");
	assert_false(ps.undone || chief.undone || w0.undone || w1.undone);
	assert_int_equal(stats(e).members_bound, 4);
	assert_int_equal(w0.refs + w1.refs + ps.refs + chief.refs, 0);
}

static void a_failing_ps_binding_posts_no_worker(void **state)
{
	struct env *e = *state;
	struct req ps = {0}, w0 = {0}, w1 = {0};
	join(e, &w0, member("mnist-worker-0", DRAKE_ROLE_WORKER, 3, &ps1_worker2));
	join(e, &w1, member("mnist-worker-1", DRAKE_ROLE_WORKER, 3, &ps1_worker2));
	join(e, &ps, member("mnist-ps-0", DRAKE_ROLE_PS, 3, &ps1_worker2));
	complete(&ps, "node gpu-a is gone (HTTP 500)");
	assert_int_equal(w0.posted + w1.posted, 0);
	assert_string_equal(ps.answer, "node gpu-a is gone (HTTP 500)");
	assert_string_equal(w0.answer,
	                    "job ml/mnist: gang job-uid.1: not bound because the "
	                    "Binding of mnist-ps-0 failed: node gpu-a is gone (HTTP 500)");
	assert_string_equal(w1.answer, w0.answer);
	assert_false(ps.undone); /* nothing was bound, nothing to undo */
	assert_int_equal(stats(e).members_bound, 0);
	assert_int_equal(stats(e).waves_rolled_back, 0);
	assert_int_equal(ps.refs + w0.refs + w1.refs, 0);
}

static void a_failing_chief_binding_rolls_back_the_bound_ps(void **state)
{
	struct env *e = *state;
	struct drake_roles min = {{1, 1, 1}};
	struct req ps = {0}, chief = {0}, w0 = {0};
	join(e, &ps, member("mnist-ps-0", DRAKE_ROLE_PS, 3, &min));
	join(e, &chief, member("mnist-chief-0", DRAKE_ROLE_CHIEF, 3, &min));
	join(e, &w0, member("mnist-worker-0", DRAKE_ROLE_WORKER, 3, &min));
	complete(&ps, NULL);
	complete(&chief, "pods \"mnist-chief-0\" is forbidden");
	assert_int_equal(w0.posted, 0);
	assert_non_null(strstr(w0.answer, "not bound because the Binding of mnist-chief-0 failed"));
	assert_true(ps.undone);
	assert_false(chief.undone);
	assert_int_equal(stats(e).waves_rolled_back, 1);
}

static void a_worker_request_lost_while_the_ps_binds_stops_the_workers(void **state)
{
	struct env *e = *state;
	struct req ps = {0}, w0 = {0}, w1 = {0};
	join(e, &ps, member("mnist-ps-0", DRAKE_ROLE_PS, 3, &ps1_worker2));
	join(e, &w0, member("mnist-worker-0", DRAKE_ROLE_WORKER, 3, &ps1_worker2));
	join(e, &w1, member("mnist-worker-1", DRAKE_ROLE_WORKER, 3, &ps1_worker2));
	op_answer(&w1, "drake is shutting down"); /* answered from elsewhere */
	complete(&ps, NULL);
	assert_int_equal(w0.posted + w1.posted, 0);
	assert_non_null(strstr(w0.answer, "a member's request was lost"));
	assert_true(ps.undone);
}

static void a_wave_without_ps_or_chief_posts_everything_at_once(void **state)
{
	struct env *e = *state;
	cached(e, "ml", "mnist-ps-0", "job-uid", "ps", "Running");
	struct req w0 = {0}, w1 = {0};
	join(e, &w0, member("mnist-worker-0", DRAKE_ROLE_WORKER, 3, &ps1_worker2));
	join(e, &w1, member("mnist-worker-1", DRAKE_ROLE_WORKER, 3, &ps1_worker2));
	assert_true(w0.posted && w1.posted);
	complete(&w1, NULL);
	complete(&w0, NULL);
	assert_string_equal(w0.answer, "");
	assert_string_equal(w1.answer, "");
}

static void bindings_that_fail_before_post_returns_end_the_wave_once(void **state)
{
	struct env *e = *state;
	struct req w0 = {.fail_at_once = "cannot start"}, w1 = {.fail_at_once = "cannot start"};
	join(e, &w0, member("mnist-worker-0", DRAKE_ROLE_WORKER, 2, NULL));
	join(e, &w1, member("mnist-worker-1", DRAKE_ROLE_WORKER, 2, NULL));
	assert_string_equal(w0.answer, "cannot start");
	assert_string_equal(w1.answer, "cannot start");
	assert_int_equal(w0.refs + w1.refs, 0);
	assert_int_equal(stats(e).waiting, 0);
}

static void pods_that_are_not_the_member_they_claim_are_refused_and_do_not_count(void **state)
{
	struct env *e = *state;
	struct req w0 = {0}, other_ns = {0}, foreign = {0}, copy = {0}, w1 = {0};
	join(e, &w0, member("mnist-worker-0", DRAKE_ROLE_WORKER, 2, NULL));
	struct ext_member m = member("mnist-worker-1", DRAKE_ROLE_WORKER, 2, NULL);
	m.ns = "elsewhere";
	join(e, &other_ns, m);
	m = member("mnist-worker-1", DRAKE_ROLE_WORKER, 2, NULL);
	m.owner_uid = "another-uid";
	join(e, &foreign, m);
	m = member("mnist-worker-1-debug", DRAKE_ROLE_WORKER, 2, NULL);
	join(e, &copy, m);
	assert_int_equal(post_seq, 0); /* none of them counted */
	assert_non_null(strstr(other_ns.answer,
	                       "is in namespace elsewhere, but gang job-uid.1 waits in ml; "
	                       "it is not bound and does not count toward the wave"));
	assert_non_null(strstr(foreign.answer, "is owned by another-uid, not by the job job-uid"));
	assert_non_null(strstr(copy.answer, "is not named like the worker of job \"mnist\""));
	assert_int_equal(stats(e).joins_refused, 3);
	assert_int_equal(stats(e).waiting, 1);
	join(e, &w1, member("mnist-worker-1", DRAKE_ROLE_WORKER, 2, NULL));
	assert_true(w0.posted && w1.posted);
	complete(&w0, NULL);
	complete(&w1, NULL);
}

static void a_copy_arriving_first_opens_no_wave(void **state)
{
	struct env *e = *state;
	struct req copy = {0}, w0 = {0}, w1 = {0};
	struct ext_member m = member("mnist-worker-1", DRAKE_ROLE_WORKER, 2, NULL);
	m.owner_uid = "";
	join(e, &copy, m);
	assert_non_null(strstr(copy.answer, "has no controller owner"));
	assert_int_equal(stats(e).waiting, 0);
	join(e, &w0, member("mnist-worker-0", DRAKE_ROLE_WORKER, 2, NULL));
	assert_int_equal(post_seq, 0);
	join(e, &w1, member("mnist-worker-1", DRAKE_ROLE_WORKER, 2, NULL));
	assert_true(w0.posted && w1.posted && !copy.posted);
	complete(&w0, NULL);
	complete(&w1, NULL);
}

static void copies_bound_elsewhere_do_not_count_as_bound_before(void **state)
{
	struct env *e = *state;
	cached(e, "elsewhere", "mnist-worker-0", "job-uid", "worker", "Running");
	cached(e, "ml", "mnist-worker-0-debug", "job-uid", "worker", "Running");
	cached(e, "ml", "mnist-worker-9", "another-uid", "worker", "Running");
	struct req w1 = {0};
	join(e, &w1, member("mnist-worker-1", DRAKE_ROLE_WORKER, 2, NULL));
	assert_int_equal(post_seq, 0);
	event_base_dispatch(e->base);
	assert_non_null(strstr(w1.answer, "1 of 2 members reached bind"));
}

static void a_legacy_wave_without_per_role_minimum_releases_on_its_head_count(void **state)
{
	struct env *e = *state;
	struct req ps = {0}, w0 = {0};
	join(e, &w0, member("mnist-worker-0", DRAKE_ROLE_WORKER, 2, NULL));
	join(e, &ps, member("mnist-ps-0", DRAKE_ROLE_PS, 2, NULL));
	assert_true(ps.posted && !w0.posted); /* the role still orders the Bindings */
	complete(&ps, NULL);
	complete(&w0, NULL);
	assert_string_equal(w0.answer, "");
}

static void a_retried_request_replaces_the_held_one(void **state)
{
	struct env *e = *state;
	struct req a = {0}, b = {0}, ps = {0};
	join(e, &a, member("mnist-worker-0", DRAKE_ROLE_WORKER, 2, NULL));
	join(e, &b, member("mnist-worker-0", DRAKE_ROLE_WORKER, 2, NULL));
	assert_string_equal(a.answer, "superseded by a newer bind request for the same pod");
	assert_int_equal(a.refs, 0);
	assert_int_equal(stats(e).waiting, 1);
	join(e, &ps, member("mnist-ps-0", DRAKE_ROLE_PS, 2, NULL));
	complete(&ps, NULL);
	complete(&b, NULL);
	assert_string_equal(b.answer, "");
}

static void shutdown_answers_every_held_request(void **state)
{
	struct env *e = *state;
	struct req w0 = {0};
	join(e, &w0, member("mnist-worker-0", DRAKE_ROLE_WORKER, 2, NULL));
	barrier_reg_free(e->g);
	e->g = barrier_reg_new(e->base, 0.05, &ops);
	assert_string_equal(w0.answer, "drake is shutting down");
	assert_int_equal(w0.refs, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(a_wave_with_its_size_reached_but_no_ps_does_not_release,
	                                    setup, teardown),
	    cmocka_unit_test_setup_teardown(a_repair_wave_of_workers_waits_for_its_recreated_ps,
	                                    setup, teardown),
	    cmocka_unit_test_setup_teardown(ps_and_chief_bindings_are_posted_before_any_worker,
	                                    setup, teardown),
	    cmocka_unit_test_setup_teardown(a_failing_ps_binding_posts_no_worker, setup, teardown),
	    cmocka_unit_test_setup_teardown(a_failing_chief_binding_rolls_back_the_bound_ps, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(
	        a_worker_request_lost_while_the_ps_binds_stops_the_workers, setup, teardown),
	    cmocka_unit_test_setup_teardown(a_wave_without_ps_or_chief_posts_everything_at_once,
	                                    setup, teardown),
	    cmocka_unit_test_setup_teardown(
	        bindings_that_fail_before_post_returns_end_the_wave_once, setup, teardown),
	    cmocka_unit_test_setup_teardown(
	        pods_that_are_not_the_member_they_claim_are_refused_and_do_not_count, setup,
	        teardown),
	    cmocka_unit_test_setup_teardown(a_copy_arriving_first_opens_no_wave, setup, teardown),
	    cmocka_unit_test_setup_teardown(copies_bound_elsewhere_do_not_count_as_bound_before,
	                                    setup, teardown),
	    cmocka_unit_test_setup_teardown(
	        a_legacy_wave_without_per_role_minimum_releases_on_its_head_count, setup, teardown),
	    cmocka_unit_test_setup_teardown(a_retried_request_replaces_the_held_one, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(shutdown_answers_every_held_request, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
