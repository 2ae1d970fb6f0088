/*
 * leader_test.c - the elector against an in-process Lease store that
 * behaves like the API server for one Lease (404 until created, 409 on a
 * stale resourceVersion) and can cut one candidate off, by its User-Agent.
 * Durations are short (lease 1 s) so each case runs in about a second.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "kube/client.h"
#include "kube/leader.h"
#include "kube/lease_codec.h"

#define PATH "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/drake"
#define COLL "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"

struct candidate {
	struct env *e;
	const char *id;
	struct kube_client *kube;
	struct leader *l;
	double started_at, lost_at; /* monotonic; 0 when not (yet) */
	int started, lost;
	char why[256];
};

struct env {
	struct event_base *base;
	struct evhttp *http;
	char server[64];
	bool exists;
	struct lease_record rec;
	int rv;
	char cut[32]; /* requests from this User-Agent get 503 */
	int writes;
	struct candidate a, b;
};

static double now_mono(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void reply(struct evhttp_request *req, int code, const char *body)
{
	struct evbuffer *b = evbuffer_new();
	evbuffer_add_printf(b, "%s", body);
	evhttp_send_reply(req, code, "x", b);
	evbuffer_free(b);
}

static void reply_lease(struct env *e, struct evhttp_request *req, int code)
{
	char rv[16];
	snprintf(rv, sizeof(rv), "%d", e->rv);
	char *text = lease_encode("kube-system", "drake", rv, &e->rec);
	reply(req, code, text);
	free(text);
}

static void on_http(struct evhttp_request *req, void *arg)
{
	struct env *e = arg;
	const char *uri = evhttp_request_get_uri(req);
	const char *ua = evhttp_find_header(evhttp_request_get_input_headers(req), "User-Agent");
	enum evhttp_cmd_type m = evhttp_request_get_command(req);
	if (e->cut[0] && ua && !strcmp(ua, e->cut)) {
		reply(req, 503, "{\"kind\":\"Status\",\"message\":\"cut off\"}");
		return;
	}
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	size_t n = evbuffer_get_length(in);
	char *body = calloc(1, n + 1);
	evbuffer_copyout(in, body, n);
	struct lease_record r;
	char rv[LEASE_RV_MAX] = "", why[128];
	bool ok = n && lease_decode(body, n, &r, rv, sizeof(rv), why, sizeof(why)) == DRAKE_OK;
	/* a create carries no resourceVersion: read its spec anyway */
	const char *meta = strstr(body, "\"metadata\":{");
	if (n && !ok && m == EVHTTP_REQ_POST && meta) {
		char *with = calloc(1, n + 64);
		size_t head = (size_t)(meta - body) + strlen("\"metadata\":{");
		snprintf(with, n + 64, "%.*s\"resourceVersion\":\"0\",%s", (int)head, body,
		         body + head);
		ok = lease_decode(with, strlen(with), &r, rv, sizeof(rv), why, sizeof(why)) ==
		     DRAKE_OK;
		free(with);
	}
	free(body);
	if (m == EVHTTP_REQ_GET && !strcmp(uri, PATH)) {
		if (e->exists)
			reply_lease(e, req, 200);
		else
			reply(req, 404, "{\"kind\":\"Status\",\"code\":404}");
	} else if (m == EVHTTP_REQ_POST && !strcmp(uri, COLL) && ok) {
		if (e->exists) {
			reply(req, 409, "{\"kind\":\"Status\",\"message\":\"already exists\"}");
			return;
		}
		e->exists = true;
		e->rec = r;
		e->rv++;
		e->writes++;
		reply_lease(e, req, 201);
	} else if (m == EVHTTP_REQ_PUT && !strcmp(uri, PATH) && ok && e->exists) {
		if (atoi(rv) != e->rv) {
			reply(req, 409,
			      "{\"kind\":\"Status\",\"message\":\"the object has been modified\"}");
			return;
		}
		e->rec = r;
		e->rv++;
		e->writes++;
		reply_lease(e, req, 200);
	} else {
		reply(req, 400, "{\"kind\":\"Status\",\"message\":\"unexpected\"}");
	}
}

static void on_started(void *arg)
{
	struct candidate *c = arg;
	c->started++;
	c->started_at = now_mono();
}

static void on_lost(void *arg, const char *why)
{
	struct candidate *c = arg;
	c->lost++;
	c->lost_at = now_mono();
	snprintf(c->why, sizeof(c->why), "%s", why);
}

static void candidate_start(struct env *e, struct candidate *c, const char *id)
{
	c->e = e;
	c->id = id;
	struct kube_config cfg = {.server = e->server};
	struct kube_client_options ko = {.timeout_ms = 2000, .max_body = 1 << 16, .user_agent = id};
	char msg[256];
	c->kube = kube_client_new(e->base, &cfg, &ko, msg, sizeof(msg));
	assert_non_null(c->kube);
	struct leader_options o = {.ns = "kube-system",
	                           .name = "drake",
	                           .identity = id,
	                           .lease_duration = 1,
	                           .renew_deadline = 0.6,
	                           .retry_period = 0.1};
	struct leader_callbacks cb = {.started = on_started, .lost = on_lost, .arg = c};
	c->l = leader_new(e->base, c->kube, &o, &cb, msg, sizeof(msg));
	assert_non_null(c->l);
	assert_int_equal(leader_start(c->l), DRAKE_OK);
}

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));
	e->base = event_base_new();
	e->http = evhttp_new(e->base);
	evhttp_set_allowed_methods(e->http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_PUT);
	evhttp_set_gencb(e->http, on_http, e);
	struct evhttp_bound_socket *bs = evhttp_bind_socket_with_handle(e->http, "127.0.0.1", 0);
	if (!bs)
		return -1;
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	getsockname(evhttp_bound_socket_get_fd(bs), (struct sockaddr *)&sa, &len);
	snprintf(e->server, sizeof(e->server), "http://127.0.0.1:%d", ntohs(sa.sin_port));
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;
	struct candidate *cs[] = {&e->a, &e->b};
	for (int i = 0; i < 2; i++) {
		leader_free(cs[i]->l);
		kube_client_free(cs[i]->kube);
	}
	evhttp_free(e->http);
	event_base_free(e->base);
	free(e);
	return 0;
}

/* Runs the loop until done(e) holds or max seconds pass; whether it held. */
static bool run_until(struct env *e, bool (*done)(struct env *), double max)
{
	double end = now_mono() + max;
	while (!done(e) && now_mono() < end) {
		struct timeval tv = {0, 10000};
		event_base_loopexit(e->base, &tv);
		event_base_dispatch(e->base);
	}
	return done(e);
}

static bool one_leads(struct env *e)
{
	return e->a.started + e->b.started > 0;
}

static bool b_leads(struct env *e)
{
	return e->b.started > 0;
}

static bool both_lost_or_b_leads(struct env *e)
{
	return e->a.lost > 0 && e->b.started > 0;
}

static struct candidate *leader_of(struct env *e)
{
	return e->a.started ? &e->a : &e->b;
}

static void test_of_two_candidates_exactly_one_leads(void **state)
{
	struct env *e = *state;
	candidate_start(e, &e->a, "drake-a");
	candidate_start(e, &e->b, "drake-b");
	assert_true(run_until(e, one_leads, 5));
	/* several more tries each: the other never leads while renewals go on */
	int writes = e->writes;
	double until = now_mono() + 0.5;
	while (now_mono() < until) {
		struct timeval tv = {0, 10000};
		event_base_loopexit(e->base, &tv);
		event_base_dispatch(e->base);
	}
	assert_int_equal(e->a.started + e->b.started, 1);
	assert_int_equal(e->a.lost + e->b.lost, 0);
	struct candidate *l = leader_of(e);
	assert_string_equal(e->rec.holder, l->id);
	assert_true(leader_leading(l->l));
	assert_true(e->writes > writes); /* it renews */
	struct candidate *other = l == &e->a ? &e->b : &e->a;
	assert_false(leader_leading(other->l));
	assert_string_equal(leader_holder(other->l), l->id);
}

static void test_a_leader_cut_off_stops_before_the_standby_takes_over(void **state)
{
	struct env *e = *state;
	candidate_start(e, &e->a, "drake-a");
	assert_true(run_until(e, one_leads, 5));
	candidate_start(e, &e->b, "drake-b");
	snprintf(e->cut, sizeof(e->cut), "drake-a");
	double cut_at = now_mono();
	assert_true(run_until(e, both_lost_or_b_leads, 5));
	assert_int_equal(e->a.lost, 1);
	assert_non_null(strstr(e->a.why, "no renewal succeeded"));
	assert_false(leader_leading(e->a.l));
	/* never two leaders: a stopped acting before b took over, and b
	 * waited out the lease duration on its own clock */
	assert_true(e->a.lost_at < e->b.started_at);
	assert_true(e->b.started_at - cut_at >= 1.0);
	assert_string_equal(e->rec.holder, "drake-b");
	assert_int_equal(e->rec.transitions, 1);
}

static void on_release_done(void *arg)
{
	*(double *)arg = now_mono();
}

static void test_a_released_lease_is_taken_over_without_waiting_it_out(void **state)
{
	struct env *e = *state;
	candidate_start(e, &e->a, "drake-a");
	assert_true(run_until(e, one_leads, 5));
	candidate_start(e, &e->b, "drake-b");
	/* b has seen a's lease, so only a release lets it in early */
	double released = 0, asked = now_mono();
	leader_release(e->a.l, on_release_done, &released);
	assert_false(leader_leading(e->a.l));
	assert_true(run_until(e, b_leads, 5));
	assert_true(released > 0);
	assert_true(e->b.started_at - asked < 0.9);
	assert_int_equal(e->a.lost, 0); /* giving it up is not losing it */
	assert_string_equal(e->rec.holder, "drake-b");
}

static bool a_lost(struct env *e)
{
	return e->a.lost > 0;
}

static void test_a_leader_that_finds_another_holder_stops_at_once(void **state)
{
	struct env *e = *state;
	candidate_start(e, &e->a, "drake-a");
	assert_true(run_until(e, one_leads, 5));
	/* someone else writes the Lease behind a's back */
	snprintf(e->rec.holder, sizeof(e->rec.holder), "%s", "intruder");
	e->rv++;
	assert_true(run_until(e, a_lost, 2));
	assert_non_null(strstr(e->a.why, "held by intruder"));
	assert_false(leader_leading(e->a.l));
}

static void test_bad_options_are_refused(void **state)
{
	struct env *e = *state;
	struct kube_config cfg = {.server = e->server};
	struct kube_client_options ko = {.timeout_ms = 1000, .max_body = 1 << 16};
	char msg[256];
	e->a.kube = kube_client_new(e->base, &cfg, &ko, msg, sizeof(msg));
	static const struct {
		struct leader_options o;
		const char *why;
	} cases[] = {
	    {{"kube-system", "drake", "x", 15, 15, 2}, "renew deadline"},
	    {{"kube-system", "drake", "x", 15, 10, 10}, "retry period"},
	    {{"kube-system", "drake", "x", 1.5, 1, 0.5}, "whole seconds"},
	    {{"Kube_System", "drake", "x", 15, 10, 2}, "DNS-1123"},
	    {{"kube-system", "drake", "", 15, 10, 2}, "identity"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct leader *l =
		    leader_new(e->base, e->a.kube, &cases[i].o, NULL, msg, sizeof(msg));
		if (l || !strstr(msg, cases[i].why))
			fail_msg("case %zu: got \"%s\", want a refusal naming \"%s\"", i, msg,
			         cases[i].why);
	}
	assert_null(leader_new(e->base, NULL, &cases[0].o, NULL, msg, sizeof(msg)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	    T(test_of_two_candidates_exactly_one_leads),
	    T(test_a_leader_cut_off_stops_before_the_standby_takes_over),
	    T(test_a_released_lease_is_taken_over_without_waiting_it_out),
	    T(test_a_leader_that_finds_another_holder_stops_at_once),
	    T(test_bad_options_are_refused),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
