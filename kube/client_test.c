/*
 * client_test.c - cmocka tests for the API client against a plain-HTTP
 * libevent server on 127.0.0.1 running in the same event loop: answers,
 * headers, body cap, timeout, rate limit, shutdown, streams, cancellation.
 * Each test owns its base, server and client and frees them at the end.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "kube/client.h"

struct env {
	struct event_base *base;
	struct evhttp *http;
	int port;
	char server[64];
	struct kube_client *client;
	int want, got; /* callbacks expected / seen; loop stops at want */
	long status[16];
	char body[16][256];
	char error[16][128];
	char stream[1024];
	size_t stream_len;
	struct kube_stream *s;
	bool cancel_in_data;
	struct evhttp_request *held_stream;
	int slow_now, slow_max; /* /slow requests being held, and the most at once */
};

static char msg[256];

static void reply(struct evhttp_request *req, int code, const char *body)
{
	struct evbuffer *b = evbuffer_new();
	evbuffer_add_printf(b, "%s", body);
	evhttp_send_reply(req, code, "x", b);
	evbuffer_free(b);
}

static void on_stream_tick(evutil_socket_t fd, short what, void *arg)
{
	struct env *e = arg;
	if (!e->held_stream)
		return;
	struct evbuffer *b = evbuffer_new();
	evbuffer_add_printf(b, "{\"n\":2}\n");
	evhttp_send_reply_chunk(e->held_stream, b);
	evhttp_send_reply_end(e->held_stream);
	e->held_stream = NULL;
	evbuffer_free(b);
}

struct slow_reply {
	struct env *e;
	struct evhttp_request *req;
};

static void on_slow_reply(evutil_socket_t fd, short what, void *arg)
{
	struct slow_reply *s = arg;
	s->e->slow_now--;
	reply(s->req, 200, "slow");
	free(s);
}

static void on_http(struct evhttp_request *req, void *arg)
{
	struct env *e = arg;
	const char *uri = evhttp_request_get_uri(req);
	struct evkeyvalq *h = evhttp_request_get_input_headers(req);
	if (!strcmp(uri, "/echo") || !strncmp(uri, "/echo?", 6)) {
		const char *auth = evhttp_find_header(h, "Authorization");
		const char *ct = evhttp_find_header(h, "Content-Type");
		const char *ua = evhttp_find_header(h, "User-Agent");
		struct evbuffer *in = evhttp_request_get_input_buffer(req);
		char body[64] = "";
		evbuffer_copyout(in, body, sizeof(body) - 1);
		char out[256];
		snprintf(out, sizeof(out), "m=%d auth=%s ct=%s ua=%s body=%s",
		         (int)evhttp_request_get_command(req), auth ? auth : "-", ct ? ct : "-",
		         ua ? ua : "-", body);
		reply(req, 200, out);
	} else if (!strcmp(uri, "/big")) {
		char big[2001];
		memset(big, 'b', 2000);
		big[2000] = '\0';
		reply(req, 200, big);
	} else if (!strcmp(uri, "/missing")) {
		reply(req, 404, "{\"kind\":\"Status\",\"code\":404}");
	} else if (!strcmp(uri, "/slow")) { /* answered 150 ms later */
		struct slow_reply *s = malloc(sizeof(*s));
		*s = (struct slow_reply){e, req};
		if (++e->slow_now > e->slow_max)
			e->slow_max = e->slow_now;
		struct timeval tv = {0, 150000};
		event_base_once(e->base, -1, EV_TIMEOUT, on_slow_reply, s, &tv);
	} else if (!strcmp(uri, "/hang")) {
		/* never answered; evhttp_free drops it */
	} else if (!strcmp(uri, "/watch")) {
		evhttp_send_reply_start(req, 200, "OK");
		struct evbuffer *b = evbuffer_new();
		evbuffer_add_printf(b, "{\"n\":1}\n");
		evhttp_send_reply_chunk(req, b);
		evbuffer_free(b);
		e->held_stream = req;
		struct timeval tv = {0, 50000};
		event_base_once(e->base, -1, EV_TIMEOUT, on_stream_tick, e, &tv);
	} else if (!strcmp(uri, "/forbidden-watch")) {
		reply(req, 403, "forbidden");
	} else {
		reply(req, 500, "unexpected");
	}
}

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));
	e->base = event_base_new();
	e->http = evhttp_new(e->base);
	evhttp_set_allowed_methods(e->http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_DELETE |
	                                        EVHTTP_REQ_PATCH | EVHTTP_REQ_PUT);
	evhttp_set_gencb(e->http, on_http, e);
	struct evhttp_bound_socket *bs = evhttp_bind_socket_with_handle(e->http, "127.0.0.1", 0);
	if (!bs)
		return -1;
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	getsockname(evhttp_bound_socket_get_fd(bs), (struct sockaddr *)&sa, &len);
	e->port = ntohs(sa.sin_port);
	snprintf(e->server, sizeof(e->server), "http://127.0.0.1:%d", e->port);
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;
	kube_client_free(e->client);
	evhttp_free(e->http);
	event_base_free(e->base);
	free(e);
	return 0;
}

static struct kube_client *client_capped(struct env *e, double qps, int burst, long timeout_ms,
                                         size_t max_body, const char *token, const char *token_file,
                                         int max_inflight)
{
	struct kube_config cfg = {
	    .server = e->server, .token = (char *)token, .token_file = (char *)token_file};
	struct kube_client_options o = {.qps = qps,
	                                .burst = burst,
	                                .timeout_ms = timeout_ms,
	                                .max_body = max_body,
	                                .user_agent = "drake-test",
	                                .max_inflight = max_inflight};
	e->client = kube_client_new(e->base, &cfg, &o, msg, sizeof(msg));
	assert_non_null(e->client);
	return e->client;
}

static struct kube_client *client(struct env *e, double qps, int burst, long timeout_ms,
                                  size_t max_body, const char *token, const char *token_file)
{
	return client_capped(e, qps, burst, timeout_ms, max_body, token, token_file, 0);
}

static void on_resp(const struct kube_response *r, void *arg)
{
	struct env *e = arg;
	int i = e->got++;
	assert_true(i < 16);
	e->status[i] = r->status;
	snprintf(e->body[i], sizeof(e->body[i]), "%s", r->body);
	snprintf(e->error[i], sizeof(e->error[i]), "%s", r->error ? r->error : "");
	assert_int_equal(strlen(r->body), r->body_len);
	if (e->got >= e->want)
		event_base_loopbreak(e->base);
}

static void run(struct env *e, int want, int max_ms)
{
	e->want = want;
	struct timeval tv = {max_ms / 1000, (max_ms % 1000) * 1000};
	event_base_loopexit(e->base, &tv);
	event_base_dispatch(e->base);
}

static void test_get_and_post_carry_token_agent_and_body(void **state)
{
	struct env *e = *state;
	struct kube_client *c = client(e, 0, 0, 10000, 4096, "tok123", NULL);
	assert_int_equal(kube_request(c, "GET", "/echo", NULL, NULL, 0, on_resp, e), DRAKE_OK);
	assert_int_equal(kube_client_inflight(c), 1);
	run(e, 1, 15000);
	assert_int_equal(e->status[0], 200);
	assert_string_equal(e->body[0], "m=1 auth=Bearer tok123 ct=- ua=drake-test body=");
	const char *patch = "{\"a\":1}";
	assert_int_equal(kube_request(c, "PATCH", "/echo", "application/merge-patch+json", patch,
	                              strlen(patch), on_resp, e),
	                 DRAKE_OK);
	run(e, 2, 15000);
	assert_int_equal(e->status[1], 200);
	assert_string_equal(e->body[1], "m=256 auth=Bearer tok123 ct=application/merge-patch+json "
	                                "ua=drake-test body={\"a\":1}"); /* 256: EVHTTP_REQ_PATCH */
	assert_int_equal(kube_client_inflight(c), 0);
}

static void test_error_status_is_passed_through_with_its_body(void **state)
{
	struct env *e = *state;
	struct kube_client *c = client(e, 0, 0, 10000, 4096, NULL, NULL);
	assert_int_equal(kube_request(c, "GET", "/missing", NULL, NULL, 0, on_resp, e), DRAKE_OK);
	run(e, 1, 15000);
	assert_int_equal(e->status[0], 404);
	assert_non_null(strstr(e->body[0], "\"code\":404"));
	assert_string_equal(e->error[0], "");
}

static void test_body_over_max_body_fails_the_request(void **state)
{
	struct env *e = *state;
	struct kube_client *c = client(e, 0, 0, 10000, 1999, NULL, NULL);
	assert_int_equal(kube_request(c, "GET", "/big", NULL, NULL, 0, on_resp, e), DRAKE_OK);
	run(e, 1, 15000);
	assert_int_equal(e->got, 1);
	assert_int_equal(e->status[0], 0);
	assert_non_null(strstr(e->error[0], "max_body"));
}

static void test_request_times_out(void **state)
{
	struct env *e = *state;
	struct kube_client *c = client(e, 0, 0, 200, 4096, NULL, NULL);
	assert_int_equal(kube_request(c, "GET", "/hang", NULL, NULL, 0, on_resp, e), DRAKE_OK);
	run(e, 1, 15000);
	assert_int_equal(e->got, 1);
	assert_int_equal(e->status[0], 0);
	assert_true(strlen(e->error[0]) > 0);
}

static void test_refused_connection_is_a_transport_error(void **state)
{
	struct env *e = *state;
	snprintf(e->server, sizeof(e->server), "http://127.0.0.1:1");
	struct kube_client *c = client(e, 0, 0, 10000, 4096, NULL, NULL);
	assert_int_equal(kube_request(c, "GET", "/echo", NULL, NULL, 0, on_resp, e), DRAKE_OK);
	run(e, 1, 15000);
	assert_int_equal(e->status[0], 0);
	assert_true(strlen(e->error[0]) > 0);
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void test_rate_limit_queues_instead_of_failing(void **state)
{
	struct env *e = *state;
	struct kube_client *c = client(e, 20, 1, 10000, 4096, NULL, NULL);
	double t0 = now_s();
	for (int i = 0; i < 5; i++)
		assert_int_equal(kube_request(c, "GET", "/echo", NULL, NULL, 0, on_resp, e),
		                 DRAKE_OK);
	assert_int_equal(kube_client_inflight(c), 5);
	run(e, 5, 15000);
	double dt = now_s() - t0;
	assert_int_equal(e->got, 5);
	for (int i = 0; i < 5; i++)
		assert_int_equal(e->status[i], 200);
	/* one token at once, then four more at 20/s: at least 0.2 s */
	assert_true(dt >= 0.19);
	assert_true(dt < 10.0); /* generous: valgrind is slow */
}

static void test_first_requests_overtake_waiting_ones_in_their_own_order(void **state)
{
	struct env *e = *state;
	/* one token at a time: every request waits in the queue, so the order
	 * of the answers is the order the queue started them in */
	struct kube_client *c = client(e, 50, 1, 10000, 4096, NULL, NULL);
	const char *bodies[] = {"n1", "n2", "f1", "n3", "f2"};
	for (int i = 0; i < 5; i++) {
		drake_err err =
		    bodies[i][0] == 'f'
		        ? kube_request_first(c, "POST", "/echo", NULL, bodies[i], 2, on_resp, e)
		        : kube_request(c, "POST", "/echo", NULL, bodies[i], 2, on_resp, e);
		assert_int_equal(err, DRAKE_OK);
	}
	run(e, 5, 15000);
	assert_int_equal(e->got, 5);
	const char *want[] = {"f1", "f2", "n1", "n2", "n3"};
	for (int i = 0; i < 5; i++) {
		char tail[16];
		snprintf(tail, sizeof(tail), "body=%s", want[i]);
		assert_non_null(strstr(e->body[i], tail));
	}
}

static void test_in_flight_cap_queues_requests_without_starting_their_timeout(void **state)
{
	struct env *e = *state;
	/* each answer takes 150 ms; six through two slots take 450 ms, longer
	 * than the 400 ms timeout, and still none times out */
	struct kube_client *c = client_capped(e, 0, 0, 400, 4096, NULL, NULL, 2);
	for (int i = 0; i < 6; i++)
		assert_int_equal(kube_request(c, "GET", "/slow", NULL, NULL, 0, on_resp, e),
		                 DRAKE_OK);
	run(e, 6, 15000);
	assert_int_equal(e->got, 6);
	for (int i = 0; i < 6; i++)
		assert_int_equal(e->status[i], 200);
	assert_int_equal(e->slow_max, 2);
}

static void test_free_answers_active_and_queued_requests(void **state)
{
	struct env *e = *state;
	struct kube_client *c = client(e, 1, 2, 5000, 4096, NULL, NULL);
	for (int i = 0; i < 3; i++)
		assert_int_equal(kube_request(c, "GET", "/hang", NULL, NULL, 0, on_resp, e),
		                 DRAKE_OK);
	run(e, 99, 150); /* two start, the third waits for a token */
	assert_int_equal(e->got, 0);
	kube_client_free(c);
	e->client = NULL;
	assert_int_equal(e->got, 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(e->status[i], 0);
		assert_string_equal(e->error[i], "client shut down");
	}
}

static void test_bad_arguments_are_refused_without_a_callback(void **state)
{
	struct env *e = *state;
	struct kube_client *c = client(e, 0, 0, 10000, 4096, NULL, NULL);
	assert_int_equal(kube_request(c, "GET", "no-slash", NULL, NULL, 0, on_resp, e),
	                 DRAKE_EINVAL);
	assert_int_equal(kube_request(c, "GET", "/a b", NULL, NULL, 0, on_resp, e), DRAKE_EINVAL);
	assert_int_equal(kube_request(c, "GET", "/a\r\nX: y", NULL, NULL, 0, on_resp, e),
	                 DRAKE_EINVAL);
	char *longp = malloc(9000);
	memset(longp, 'a', 8999);
	longp[0] = '/';
	longp[8999] = '\0';
	assert_int_equal(kube_request(c, "GET", longp, NULL, NULL, 0, on_resp, e), DRAKE_ELIMIT);
	free(longp);
	assert_int_equal(kube_request(NULL, "GET", "/x", NULL, NULL, 0, on_resp, e), DRAKE_EINVAL);
	assert_int_equal(kube_client_inflight(c), 0);
	assert_int_equal(e->got, 0);
	struct kube_config cfg = {.server = e->server};
	struct kube_client_options o = {.max_body = 0};
	assert_null(kube_client_new(e->base, &cfg, &o, msg, sizeof(msg)));
}

static void test_token_file_is_read_for_each_request(void **state)
{
	struct env *e = *state;
	char path[] = "/tmp/drake-token-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "first\n", 6), 6);
	close(fd);
	struct kube_client *c = client(e, 0, 0, 10000, 4096, NULL, path);
	assert_int_equal(kube_request(c, "GET", "/echo", NULL, NULL, 0, on_resp, e), DRAKE_OK);
	run(e, 1, 15000);
	FILE *f = fopen(path, "w");
	fputs("second", f);
	fclose(f);
	assert_int_equal(kube_request(c, "GET", "/echo", NULL, NULL, 0, on_resp, e), DRAKE_OK);
	run(e, 2, 15000);
	unlink(path);
	assert_non_null(strstr(e->body[0], "auth=Bearer first "));
	assert_non_null(strstr(e->body[1], "auth=Bearer second "));
	/* a vanished token file fails the request, once, with a reason */
	assert_int_equal(kube_request(c, "GET", "/echo", NULL, NULL, 0, on_resp, e), DRAKE_OK);
	run(e, 3, 15000);
	assert_int_equal(e->status[2], 0);
	assert_non_null(strstr(e->error[2], path));
}

static bool on_data(const char *data, size_t len, void *arg)
{
	struct env *e = arg;
	if (e->stream_len + len < sizeof(e->stream)) {
		memcpy(e->stream + e->stream_len, data, len);
		e->stream_len += len;
		e->stream[e->stream_len] = '\0';
	}
	if (e->cancel_in_data) {
		kube_stream_cancel(e->s);
		e->s = NULL;
		event_base_loopbreak(e->base);
	}
	return true;
}

static void test_stream_delivers_chunks_then_done(void **state)
{
	struct env *e = *state;
	struct kube_client *c = client(e, 0, 0, 10000, 4096, NULL, NULL);
	assert_int_equal(kube_stream_start(c, "/watch", 0, on_data, on_resp, e, &e->s), DRAKE_OK);
	run(e, 1, 15000);
	assert_int_equal(e->got, 1);
	assert_int_equal(e->status[0], 200);
	assert_string_equal(e->stream, "{\"n\":1}\n{\"n\":2}\n");
	assert_string_equal(e->body[0], ""); /* 2xx bodies go to on_data only */
}

static void test_stream_error_status_goes_to_done(void **state)
{
	struct env *e = *state;
	struct kube_client *c = client(e, 0, 0, 10000, 4096, NULL, NULL);
	assert_int_equal(kube_stream_start(c, "/forbidden-watch", 0, on_data, on_resp, e, &e->s),
	                 DRAKE_OK);
	run(e, 1, 15000);
	assert_int_equal(e->status[0], 403);
	assert_string_equal(e->body[0], "forbidden");
	assert_int_equal(e->stream_len, 0);
}

static void test_stream_cancel_inside_on_data_stops_all_callbacks(void **state)
{
	struct env *e = *state;
	struct kube_client *c = client(e, 0, 0, 10000, 4096, NULL, NULL);
	e->cancel_in_data = true;
	assert_int_equal(kube_stream_start(c, "/watch", 0, on_data, on_resp, e, &e->s), DRAKE_OK);
	run(e, 99, 3000);
	run(e, 99, 200); /* let the deferred removal and the server's second chunk happen */
	assert_string_equal(e->stream, "{\"n\":1}\n");
	assert_int_equal(e->got, 0);
	assert_int_equal(kube_client_inflight(c), 0);
}

static void test_stream_cancel_outside_callbacks_is_immediate(void **state)
{
	struct env *e = *state;
	struct kube_client *c = client(e, 0, 0, 10000, 4096, NULL, NULL);
	assert_int_equal(kube_stream_start(c, "/hang", 0, on_data, on_resp, e, &e->s), DRAKE_OK);
	run(e, 99, 100);
	assert_int_equal(kube_client_inflight(c), 1);
	kube_stream_cancel(e->s);
	kube_stream_cancel(NULL);
	assert_int_equal(kube_client_inflight(c), 0);
	kube_client_free(c);
	e->client = NULL;
	assert_int_equal(e->got, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	    T(test_get_and_post_carry_token_agent_and_body),
	    T(test_error_status_is_passed_through_with_its_body),
	    T(test_body_over_max_body_fails_the_request),
	    T(test_request_times_out),
	    T(test_refused_connection_is_a_transport_error),
	    T(test_rate_limit_queues_instead_of_failing),
	    T(test_first_requests_overtake_waiting_ones_in_their_own_order),
	    T(test_in_flight_cap_queues_requests_without_starting_their_timeout),
	    T(test_free_answers_active_and_queued_requests),
	    T(test_bad_arguments_are_refused_without_a_callback),
	    T(test_token_file_is_read_for_each_request),
	    T(test_stream_delivers_chunks_then_done),
	    T(test_stream_error_status_goes_to_done),
	    T(test_stream_cancel_inside_on_data_stops_all_callbacks),
	    T(test_stream_cancel_outside_callbacks_is_immediate),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
