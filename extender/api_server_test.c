/*
 * api_server_test.c - the progress and migration API end to end inside one
 * process: drake's real HTTPS server (mTLS on) with a controller table
 * (extender/controller.h) of recording fakes, its real API client, and a
 * scripted API server (plain HTTP, libevent) that answers TokenReviews and
 * SubjectAccessReviews, all on one event loop that the test turns while
 * libcurl talks to the server. `drake serve` installs a controller only
 * with --reconcile, so this is where what reaches its operations, and
 * every status in between, is checked, as is what each route answers with
 * an operation missing; tests/integration checks the real binary without
 * a controller (503).
 *
 * Certificates come from hack/gen-certs.sh under build/unit-certs/.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <jansson.h>

#include "extender/server.h"
#include "kube/client.h"

#define CERTS "build/unit-certs"

struct req;

struct env {
	struct event_base *base;
	struct evhttp *api;
	int api_port;
	struct kube_client *kube;
	struct ext_server *srv;
	int port;
	/* what the fake API server saw */
	int token_reviews, access_reviews;
	char api_auth[128];
	char last_sar[4096];
	bool hold; /* hold TokenReviews unanswered */
	int held;
	bool drained;
	struct req *watch; /* requests pump's until functions look at */
	int n_watch;
	/* what the hooks saw */
	int progress_calls, migrate_calls, view_calls;
	struct ext_progress progress;
	struct ext_migration_req migration;
};

static double wall_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* ---- the scripted API server ---- */

static void api_reply(struct evhttp_request *req, int code, const char *body)
{
	struct evbuffer *b = evbuffer_new();
	evbuffer_add(b, body, strlen(body));
	evhttp_send_reply(req, code, "x", b);
	evbuffer_free(b);
}

/* The audience of tokens for the API server itself. */
#define API_AUD "https://kubernetes.default.svc"

/* The review asked for audience aud (none asked: the API server's). */
static bool asks(json_t *body, const char *aud)
{
	json_t *a = json_object_get(json_object_get(body, "spec"), "audiences");
	if (!json_array_size(a))
		return !strcmp(aud, API_AUD);
	for (size_t i = 0; i < json_array_size(a); i++)
		if (!strcmp(json_string_value(json_array_get(a, i)), aud))
			return true;
	return false;
}

/* As the API server answers: test tokens name their audience and pod.
 *   pod-<name>     bound to pod ml/job-<name>, for audience "drake"
 *   podapi-<name>  the same pod, for the API server's audience (the
 *                  service-account token every pod mounts)
 *   podlax-<name>  the same pod, from an authenticator that ignores
 *                  audiences (authenticated, no status.audiences)
 *   unbound        a service-account token for "drake" bound to no pod
 *   alice, admin   users, for the API server's audience */
static void token_review(struct env *e, struct evhttp_request *req, json_t *body)
{
	const char *token =
	    json_string_value(json_object_get(json_object_get(body, "spec"), "token"));
	char out[1024];
	const char *aud = !token                                                    ? NULL
	                  : !strncmp(token, "podapi-", 7)                           ? API_AUD
	                  : !strncmp(token, "podlax-", 7)                           ? NULL
	                  : !strncmp(token, "pod-", 4) || !strcmp(token, "unbound") ? "drake"
	                  : !strcmp(token, "alice") || !strcmp(token, "admin")      ? API_AUD
	                                                                            : NULL;
	if (!token) {
		api_reply(req, 400, "{\"kind\":\"Status\",\"message\":\"no token\"}");
	} else if (aud && !asks(body, aud)) {
		snprintf(out, sizeof(out),
		         "{\"status\":{\"authenticated\":false,\"error\":\"token audiences "
		         "[%s] is invalid for the target audiences\"}}",
		         aud);
		api_reply(req, 201, out);
	} else if (!strncmp(token, "pod", 3) && strchr(token, '-')) {
		const char *pod = strchr(token, '-') + 1;
		char auds[64] = "";
		if (aud)
			snprintf(auds, sizeof(auds), ",\"audiences\":[\"%s\"]", aud);
		snprintf(out, sizeof(out),
		         "{\"kind\":\"TokenReview\",\"status\":{\"authenticated\":true,\"user\":{"
		         "\"username\":\"system:serviceaccount:ml:default\",\"uid\":\"sa\","
		         "\"groups\":[\"system:serviceaccounts\"],\"extra\":{"
		         "\"authentication.kubernetes.io/pod-name\":[\"job-%s\"],"
		         "\"authentication.kubernetes.io/pod-uid\":[\"uid-%s\"]}}%s}}",
		         pod, pod, auds);
		api_reply(req, 201, out);
	} else if (!strcmp(token, "unbound")) {
		api_reply(req, 201,
		          "{\"status\":{\"authenticated\":true,\"user\":{\"username\":"
		          "\"system:serviceaccount:ml:default\"},\"audiences\":[\"drake\"]}}");
	} else if (!strcmp(token, "alice") || !strcmp(token, "admin") ||
	           !strcmp(token, "torch-admin")) {
		snprintf(out, sizeof(out),
		         "{\"status\":{\"authenticated\":true,\"user\":{\"username\":\"%s\","
		         "\"groups\":[\"devs\",\"system:authenticated\"]}}}",
		         token);
		api_reply(req, 201, out);
	} else if (!strcmp(token, "broken")) {
		api_reply(req, 500, "{\"kind\":\"Status\",\"message\":\"etcd is down\"}");
	} else {
		api_reply(
		    req, 201,
		    "{\"status\":{\"authenticated\":false,\"error\":\"invalid bearer token\"}}");
	}
}

static void access_review(struct env *e, struct evhttp_request *req, json_t *body)
{
	json_t *spec = json_object_get(body, "spec");
	json_t *ra = json_object_get(spec, "resourceAttributes");
	const char *user = json_string_value(json_object_get(spec, "user"));
	/* admin may migrate TFJobs' replicas, torch-admin PyTorchJobs' */
	const char *res = json_string_value(json_object_get(ra, "resource"));
	bool ok = user && res &&
	          ((!strcmp(user, "admin") && !strcmp(res, "tfjobs")) ||
	           (!strcmp(user, "torch-admin") && !strcmp(res, "pytorchjobs"))) &&
	          !strcmp(json_string_value(json_object_get(ra, "verb")), "create") &&
	          !strcmp(json_string_value(json_object_get(ra, "subresource")), "migrations");
	api_reply(req, 201,
	          ok ? "{\"status\":{\"allowed\":true}}"
	             : "{\"status\":{\"allowed\":false,\"reason\":\"no RBAC policy matched\"}}");
}

static void on_api(struct evhttp_request *req, void *arg)
{
	struct env *e = arg;
	const char *uri = evhttp_request_get_uri(req);
	const char *auth =
	    evhttp_find_header(evhttp_request_get_input_headers(req), "Authorization");
	snprintf(e->api_auth, sizeof(e->api_auth), "%s", auth ? auth : "");
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	size_t n = evbuffer_get_length(in);
	char *text = calloc(1, n + 1);
	evbuffer_copyout(in, text, n);
	json_t *body = json_loads(text, 0, NULL);
	if (!strcmp(uri, "/apis/authentication.k8s.io/v1/tokenreviews")) {
		e->token_reviews++;
		if (e->hold)
			e->held++; /* never answered; evhttp_free drops it */
		else
			token_review(e, req, body);
	} else if (!strcmp(uri, "/apis/authorization.k8s.io/v1/subjectaccessreviews")) {
		e->access_reviews++;
		snprintf(e->last_sar, sizeof(e->last_sar), "%s", text);
		access_review(e, req, body);
	} else {
		api_reply(req, 404, "{\"kind\":\"Status\",\"message\":\"not here\"}");
	}
	json_decref(body);
	free(text);
}

/* ---- the hooks ---- */

static drake_err on_progress(void *arg, const struct ext_progress *p, char *why, size_t len)
{
	struct env *e = arg;
	e->progress_calls++;
	e->progress = *p;
	if (!strncmp(p->pod, "job-stranger", 12)) {
		snprintf(why, len, "pod %s/%s is not a replica of a job drake manages", p->ns,
		         p->pod);
		return DRAKE_EINVAL;
	}
	return DRAKE_OK;
}

static drake_err on_migrate(void *arg, const struct ext_migration_req *r, char *id, size_t idlen,
                            char *why, size_t len)
{
	struct env *e = arg;
	e->migrate_calls++;
	e->migration = *r;
	if (!strcmp(r->pod, "busy")) {
		snprintf(why, len, "job ml/busy is rescaling; ask again once it runs");
		return DRAKE_ESTATE;
	}
	if (!strcmp(r->pod, "ghost")) {
		snprintf(why, len, "no replica ml/ghost of a job drake manages");
		return DRAKE_EINVAL;
	}
	snprintf(id, idlen, "%s/%s@1763880000", r->ns, r->pod);
	return DRAKE_OK;
}

/* Pods named pt-* are a PyTorchJob's replicas, the rest a TFJob's. */
static const char *on_resource_of(void *arg, const char *ns, const char *pod)
{
	return !strncmp(pod, "pt-", 3) ? "pytorchjobs" : "tfjobs";
}

static char *on_list(void *arg)
{
	return strdup("{\"migrations\":[{\"id\":\"ml/job-worker-1@1763880000\"}]}");
}

/* The controller these tests install: the API's three operations. */
static const struct ext_controller api_ops = {.progress = on_progress,
                                              .migrate = on_migrate,
                                              .resource_of = on_resource_of,
                                              .migrations_json = on_list};

/* ---- set-up ---- */

/* The progress rate limit's clock: it stands still, so a burst is one
 * however slowly the machine (valgrind, a loaded CI) sends it. */
static double frozen_clock(void)
{
	return 1000.0;
}

static struct env *env_new(bool with_kube, bool with_hooks)
{
	struct env *e = calloc(1, sizeof(*e));
	e->base = event_base_new();
	e->api = evhttp_new(e->base);
	evhttp_set_gencb(e->api, on_api, e);
	struct evhttp_bound_socket *bs = evhttp_bind_socket_with_handle(e->api, "127.0.0.1", 0);
	assert_non_null(bs);
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	getsockname(evhttp_bound_socket_get_fd(bs), (struct sockaddr *)&sa, &sl);
	e->api_port = ntohs(sa.sin_port);
	char server[64], msg[256];
	snprintf(server, sizeof(server), "http://127.0.0.1:%d", e->api_port);
	if (with_kube) {
		struct kube_config kc = {.server = server, .token = "drake-token"};
		struct kube_client_options o = {
		    .timeout_ms = 5000, .max_body = 1 << 20, .user_agent = "drake-test"};
		e->kube = kube_client_new(e->base, &kc, &o, msg, sizeof(msg));
		assert_non_null(e->kube);
	}
	struct ext_server_config cfg;
	ext_server_config_default(&cfg);
	cfg.port = 0;
	cfg.cert_file = CERTS "/server.crt";
	cfg.key_file = CERTS "/server.key";
	cfg.client_ca_file = CERTS "/ca.crt";
	cfg.max_body = 1 << 20;
	cfg.shutdown_grace = 1;
	cfg.progress_audience = "drake";
	cfg.clock = frozen_clock;
	e->srv = ext_server_new(e->base, &cfg, e->kube, msg, sizeof(msg));
	if (!e->srv)
		fail_msg("ext_server_new: %s", msg);
	e->port = ext_server_port(e->srv);
	if (with_hooks)
		ext_server_set_controller(e->srv, &api_ops, e);
	return e;
}

static void env_free(struct env *e)
{
	ext_server_free(e->srv); /* before the client, as drake serve does */
	kube_client_free(e->kube);
	evhttp_free(e->api);
	event_base_free(e->base);
	free(e);
}

static int setup(void **state)
{
	*state = env_new(true, true);
	return 0;
}

static int teardown(void **state)
{
	env_free(*state);
	return 0;
}

static int group_setup(void **state)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	return system("mkdir -p build && hack/gen-certs.sh " CERTS " >/dev/null") == 0 ? 0 : -1;
}

static int group_teardown(void **state)
{
	curl_global_cleanup();
	return 0;
}

/* ---- requests ---- */

struct resp {
	long code;
	char body[1 << 16];
	size_t len;
	char retry_after[32];
	char www_auth[64];
};

static size_t on_body(char *p, size_t sz, size_t n, void *arg)
{
	struct resp *r = arg;
	size_t take = sz * n;
	if (take > sizeof(r->body) - 1 - r->len)
		take = sizeof(r->body) - 1 - r->len;
	memcpy(r->body + r->len, p, take);
	r->len += take;
	r->body[r->len] = '\0';
	return sz * n;
}

static size_t on_header(char *p, size_t sz, size_t n, void *arg)
{
	struct resp *r = arg;
	size_t len = sz * n;
	if (len > 13 && !strncasecmp(p, "Retry-After: ", 13))
		snprintf(r->retry_after, sizeof(r->retry_after), "%.*s",
		         (int)strcspn(p + 13, "\r\n"), p + 13);
	if (len > 18 && !strncasecmp(p, "WWW-Authenticate: ", 18))
		snprintf(r->www_auth, sizeof(r->www_auth), "%.*s", (int)strcspn(p + 18, "\r\n"),
		         p + 18);
	return len;
}

struct req {
	CURL *h;
	struct curl_slist *hdrs;
	char body[8192];
	struct resp r;
};

/* Sets up a request: bearer NULL for none; cert: present the client
 * certificate. */
static void req_init(struct env *e, struct req *q, const char *method, const char *path,
                     const char *body, const char *bearer, bool cert)
{
	memset(q, 0, sizeof(*q));
	char url[256];
	snprintf(url, sizeof(url), "https://127.0.0.1:%d%s", e->port, path);
	q->h = curl_easy_init();
	curl_easy_setopt(q->h, CURLOPT_URL, url);
	curl_easy_setopt(q->h, CURLOPT_CAINFO, CERTS "/ca.crt");
	if (cert) {
		curl_easy_setopt(q->h, CURLOPT_SSLCERT, CERTS "/client.crt");
		curl_easy_setopt(q->h, CURLOPT_SSLKEY, CERTS "/client.key");
	}
	if (bearer) {
		static char h[10000];
		snprintf(h, sizeof(h), "Authorization: %s%s", strchr(bearer, ' ') ? "" : "Bearer ",
		         bearer);
		q->hdrs = curl_slist_append(q->hdrs, h);
	}
	q->hdrs = curl_slist_append(q->hdrs, "Content-Type: application/json");
	curl_easy_setopt(q->h, CURLOPT_HTTPHEADER, q->hdrs);
	curl_easy_setopt(q->h, CURLOPT_CUSTOMREQUEST, method);
	if (body) {
		snprintf(q->body, sizeof(q->body), "%s", body);
		curl_easy_setopt(q->h, CURLOPT_POSTFIELDS, q->body);
	}
	curl_easy_setopt(q->h, CURLOPT_TIMEOUT, 60L);
	curl_easy_setopt(q->h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(q->h, CURLOPT_WRITEDATA, &q->r);
	curl_easy_setopt(q->h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(q->h, CURLOPT_HEADERDATA, &q->r);
}

static void req_done(struct req *q)
{
	curl_easy_getinfo(q->h, CURLINFO_RESPONSE_CODE, &q->r.code);
	curl_easy_cleanup(q->h);
	curl_slist_free_all(q->hdrs);
}

/* Turns drake's loop and curl's transfers until until(e) (NULL: until
 * the transfers are done) or 60 s: a bound against a hang, not a deadline
 * (33 TLS handshakes under valgrind on a loaded machine took over 10 s). */
static void pump(struct env *e, CURLM *m, bool (*until)(struct env *))
{
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int running = 0;
		curl_multi_perform(m, &running);
		if (until ? until(e) : running == 0)
			return;
		struct timespec t;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 60)
			fail_msg("no answer within 60 s");
		curl_multi_poll(m, NULL, 0, 1, NULL);
		event_base_loop(e->base, EVLOOP_NONBLOCK);
	}
}

static struct resp send_req(struct env *e, const char *method, const char *path, const char *body,
                            const char *bearer, bool cert)
{
	static struct req q;
	req_init(e, &q, method, path, body, bearer, cert);
	CURLM *m = curl_multi_init();
	curl_multi_add_handle(m, q.h);
	pump(e, m, NULL);
	curl_multi_remove_handle(m, q.h);
	curl_multi_cleanup(m);
	req_done(&q);
	return q.r;
}

static struct resp progress(struct env *e, const char *body, const char *bearer, bool cert)
{
	return send_req(e, "POST", "/v1/progress", body, bearer, cert);
}

#define REPORT "{\"step\":5,\"value\":0.5,\"metric\":\"accuracy\",\"totalSteps\":100}"

static void expect(const struct resp *r, long code, const char *part)
{
	if (r->code != code || !strstr(r->body, part))
		fail_msg("got %ld %s, want %ld with \"%s\"", r->code, r->body, code, part);
}

/* ---- progress ---- */

static void test_an_accepted_report_reaches_the_hook_as_the_pod_its_token_names(void **state)
{
	struct env *e = *state;
	double t0 = wall_now();
	struct resp r = progress(e, REPORT, "pod-worker-0", false);
	expect(&r, 202, "{\"accepted\":true}");
	assert_int_equal(e->progress_calls, 1);
	assert_string_equal(e->progress.ns, "ml");
	assert_string_equal(e->progress.pod, "job-worker-0");
	assert_string_equal(e->progress.pod_uid, "uid-worker-0");
	assert_int_equal(e->progress.step, 5);
	assert_true(e->progress.value == 0.5);
	assert_false(e->progress.loss);
	assert_int_equal(e->progress.total_steps, 100);
	assert_true(e->progress.t >= t0 - 1 && e->progress.t <= wall_now() + 1);
	/* the review went out with drake's own credentials */
	assert_int_equal(e->token_reviews, 1);
	assert_string_equal(e->api_auth, "Bearer drake-token");
	r = progress(e, "{\"step\":6,\"value\":2.5,\"metric\":\"loss\"}", "pod-worker-0", false);
	expect(&r, 202, "");
	assert_true(e->progress.loss);
	assert_int_equal(e->progress.total_steps, 0);
}

static void test_a_report_naming_another_pod_is_refused_and_its_own_accepted(void **state)
{
	struct env *e = *state;
	struct resp r = progress(e,
	                         "{\"step\":1,\"value\":1,\"metric\":\"loss\",\"namespace\":\"ml\","
	                         "\"pod\":\"job-worker-1\"}",
	                         "pod-worker-0", false);
	expect(&r, 403, "the token is pod ml/job-worker-0's, which may report only for itself");
	assert_int_equal(e->progress_calls, 0);
	r = progress(e,
	             "{\"step\":1,\"value\":1,\"metric\":\"loss\",\"namespace\":\"ml\",\"pod\":"
	             "\"job-worker-0\"}",
	             "pod-worker-0", false);
	expect(&r, 202, "");
	assert_string_equal(e->progress.pod, "job-worker-0");
}

static void test_without_a_token_a_report_is_unauthenticated(void **state)
{
	struct env *e = *state;
	struct resp r = progress(e, REPORT, NULL, false);
	expect(&r, 401, "a bearer token is required");
	assert_string_equal(r.www_auth, "Bearer realm=\"drake\"");
	r = progress(e, REPORT, "Basic YWxpY2U6cHc=", false);
	expect(&r, 401, "expected \\\"Bearer <token>\\\"");
	assert_int_equal(e->token_reviews, 0);
	assert_int_equal(e->progress_calls, 0);
}

static void test_a_token_the_api_server_rejects_is_unauthenticated(void **state)
{
	struct env *e = *state;
	struct resp r = progress(e, REPORT, "forged", false);
	expect(&r, 401,
	       "the bearer token was not accepted by the API server: invalid bearer token");
	assert_int_equal(e->progress_calls, 0);
	/* a rejection is not cached: the next try is reviewed again */
	r = progress(e, REPORT, "forged", false);
	expect(&r, 401, "");
	assert_int_equal(e->token_reviews, 2);
}

static void test_a_token_not_bound_to_a_pod_is_forbidden(void **state)
{
	struct env *e = *state;
	struct resp r = progress(e, REPORT, "unbound", false);
	expect(&r, 403,
	       "the token of \\\"system:serviceaccount:ml:default\\\" is not bound to a pod");
	assert_int_equal(e->progress_calls, 0);
}

/* A progress token is for drake's audience alone: the token a pod mounts
 * for the API server, a user's, and one from an authenticator that does
 * not confirm the audience are all refused, and nothing is cached. */
static void test_only_tokens_for_drakes_audience_report_progress(void **state)
{
	struct env *e = *state;
	struct resp r = progress(e, REPORT, "podapi-worker-0", false);
	expect(&r, 401, "token audiences [" API_AUD "] is invalid");
	r = progress(e, REPORT, "alice", false);
	expect(&r, 401, "token audiences [" API_AUD "] is invalid");
	r = progress(e, REPORT, "podlax-worker-0", false);
	expect(&r, 401, "the token is not for audience \\\"drake\\\"");
	r = progress(e, REPORT, "podlax-worker-0", false);
	expect(&r, 401, "");
	assert_int_equal(e->token_reviews, 4); /* none cached */
	assert_int_equal(e->progress_calls, 0);
	/* the review asked for drake's audience */
	r = progress(e, REPORT, "pod-worker-0", false);
	expect(&r, 202, "");
	assert_int_equal(e->progress_calls, 1);
}

static void test_a_pod_the_controller_does_not_run_is_forbidden_with_its_reason(void **state)
{
	struct env *e = *state;
	struct resp r = progress(e, REPORT, "pod-stranger", false);
	expect(&r, 403, "pod ml/job-stranger is not a replica of a job drake manages");
	assert_int_equal(e->progress_calls, 1);
}

static void test_malformed_reports_are_refused_before_any_review(void **state)
{
	struct env *e = *state;
	char big[5000];
	snprintf(big, sizeof(big),
	         "{\"step\":1,\"value\":1,\"metric\":\"loss\",\"pad\":\"%04900d\"}", 0);
	const struct {
		const char *body;
		long code;
		const char *error;
	} cases[] = {
	    {"{\"step\":\"5\",\"value\":1,\"metric\":\"loss\"}", 400,
	     "step: expected integer, got string"},
	    {"{\"step\":5,\"value\":\"high\",\"metric\":\"loss\"}", 400,
	     "value: expected number, got string"},
	    {"{\"step\":5,\"value\":1,\"metric\":\"f1\"}", 400,
	     "metric: expected \\\"accuracy\\\" or \\\"loss\\\""},
	    {"{\"step\":-5,\"value\":1,\"metric\":\"loss\"}", 400, "step: must be >= 0"},
	    {"{\"step\":5,\"value\":1,\"metric\":\"loss\",\"epoch\":2}", 400,
	     "unknown field \\\"epoch\\\""},
	    {"{\"step\":5", 400, "malformed JSON"},
	    {big, 413, "over the limit of 4096"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct resp r = progress(e, cases[i].body, "pod-worker-0", false);
		expect(&r, cases[i].code, cases[i].error);
	}
	assert_int_equal(e->token_reviews, 0);
	assert_int_equal(e->progress_calls, 0);
}

static void test_steady_reports_cost_one_token_review(void **state)
{
	struct env *e = *state;
	for (int i = 0; i < 4; i++) {
		struct resp r = progress(e, REPORT, "pod-worker-1", false);
		expect(&r, 202, "");
	}
	assert_int_equal(e->token_reviews, 1);
	assert_int_equal(e->progress_calls, 4);
	assert_string_equal(e->progress.pod, "job-worker-1"); /* the cache keeps the pod */
	assert_string_equal(e->progress.pod_uid, "uid-worker-1");
	struct resp m = send_req(e, "GET", "/metrics", NULL, NULL, true);
	expect(&m, 200, "drake_token_reviews_total{result=\"cached\"} 3\n");
	expect(&m, 200, "drake_token_reviews_total{result=\"authenticated\"} 1\n");
}

static void test_a_pod_over_its_rate_is_told_to_retry_while_another_is_served(void **state)
{
	struct env *e = *state;
	for (int i = 0; i < 5; i++) {
		struct resp r = progress(e, REPORT, "pod-worker-2", false);
		expect(&r, 202, "");
	}
	struct resp r = progress(e, REPORT, "pod-worker-2", false);
	expect(&r, 429, "pod ml/job-worker-2 reports too often: at most 1 a second");
	assert_string_equal(r.retry_after, "1");
	assert_int_equal(e->progress_calls, 5);
	r = progress(e, REPORT, "pod-worker-3", false);
	expect(&r, 202, "");
	assert_string_equal(e->progress.pod, "job-worker-3");
}

static void test_a_client_certificate_reports_for_the_pod_its_body_names(void **state)
{
	struct env *e = *state;
	struct resp r = progress(e, REPORT, NULL, true);
	expect(&r, 400, "namespace and pod: required with a client certificate");
	r = progress(e,
	             "{\"step\":9,\"value\":1,\"metric\":\"loss\",\"namespace\":\"ml\",\"pod\":"
	             "\"job-worker-4\"}",
	             NULL, true);
	expect(&r, 202, "");
	assert_string_equal(e->progress.pod, "job-worker-4");
	assert_string_equal(e->progress.pod_uid, "");
	assert_int_equal(e->token_reviews, 0);
	/* with a token as well, the token names the pod */
	r = progress(e, REPORT, "pod-worker-5", true);
	expect(&r, 202, "");
	assert_string_equal(e->progress.pod, "job-worker-5");
}

static void test_a_token_over_the_limit_is_refused_unread(void **state)
{
	struct env *e = *state;
	static char token[9000];
	memset(token, 'x', sizeof(token) - 1);
	struct resp r = progress(e, REPORT, token, false);
	expect(&r, 401, "at most 8192 bytes");
	assert_int_equal(e->token_reviews, 0);
}

static bool all_held_and_one_answered(struct env *e)
{
	if (e->held < 32)
		return false;
	for (int i = 0; i < e->n_watch; i++)
		if (e->watch[i].r.len > 0)
			return true;
	return false;
}

/* A flood of new tokens costs the API server at most 32 reviews at a time:
 * the 33rd caller is told to come back, and nothing queues without bound. */
static void test_at_most_32_reviews_are_in_flight_and_the_next_caller_retries(void **state)
{
	struct env *e = *state;
	e->hold = true;
	static struct req q[33];
	CURLM *m = curl_multi_init();
	char token[32];
	for (int i = 0; i < 33; i++) {
		snprintf(token, sizeof(token), "pod-w%d", i);
		req_init(e, &q[i], "POST", "/v1/progress", REPORT, token, false);
		curl_multi_add_handle(m, q[i].h);
	}
	e->watch = q;
	e->n_watch = 33;
	pump(e, m, all_held_and_one_answered);
	int answered = 0;
	for (int i = 0; i < 33; i++) {
		if (!q[i].r.len)
			continue;
		answered++;
		curl_easy_getinfo(q[i].h, CURLINFO_RESPONSE_CODE, &q[i].r.code);
		expect(&q[i].r, 503, "too many callers being checked at once (32)");
		assert_string_equal(q[i].r.retry_after, "1");
	}
	assert_int_equal(answered, 1);
	assert_int_equal(e->token_reviews, 32);
	for (int i = 0; i < 33; i++) {
		curl_multi_remove_handle(m, q[i].h);
		req_done(&q[i]);
	}
	curl_multi_cleanup(m);
	e->watch = NULL;
	/* teardown answers the 32 held calls and drops their reviews */
}

static void test_an_api_server_failure_is_an_error_not_a_verdict(void **state)
{
	struct env *e = *state;
	struct resp r = progress(e, REPORT, "broken", false);
	expect(&r, 500, "cannot check the bearer token: TokenReview: etcd is down (HTTP 500)");
	assert_int_equal(e->progress_calls, 0);
}

/* ---- migrations ---- */

#define MIGRATION "{\"namespace\":\"ml\",\"pod\":\"job-worker-1\",\"awayFrom\":\"node-a\"}"

static struct resp migrate(struct env *e, const char *body, const char *bearer, bool cert)
{
	return send_req(e, "POST", "/v1/migrations", body, bearer, cert);
}

static void test_an_authorised_migration_is_accepted_with_its_id(void **state)
{
	struct env *e = *state;
	struct resp r = migrate(e, MIGRATION, "admin", false);
	expect(&r, 202, "{\"id\":\"ml/job-worker-1@1763880000\"}");
	assert_int_equal(e->migrate_calls, 1);
	assert_string_equal(e->migration.ns, "ml");
	assert_string_equal(e->migration.pod, "job-worker-1");
	assert_string_equal(e->migration.away, "node-a");
	assert_string_equal(e->migration.onto, "");
	assert_string_equal(e->migration.user, "admin");
	assert_non_null(strstr(e->last_sar, "\"user\":\"admin\""));
	assert_non_null(strstr(e->last_sar, "\"groups\":[\"devs\",\"system:authenticated\"]"));
	assert_non_null(strstr(e->last_sar, "\"namespace\":\"ml\""));
}

/* A pod token a progress report put in the cache is reviewed afresh for a
 * migration: a revoked token must stop a privileged request at once. */
static void test_a_migration_is_never_served_from_the_token_cache(void **state)
{
	struct env *e = *state;
	struct resp r = progress(e, REPORT, "pod-worker-0", false);
	expect(&r, 202, "");
	r = progress(e, REPORT, "pod-worker-0", false);
	expect(&r, 202, "");
	assert_int_equal(e->token_reviews, 1);
	/* reviewed again, for the API server's audience, which it is not for */
	r = migrate(e, MIGRATION, "pod-worker-0", false);
	expect(&r, 401, "token audiences [drake] is invalid");
	assert_int_equal(e->token_reviews, 2);
	/* the pod's API-server token is a user's like any other: authorised */
	r = migrate(e, MIGRATION, "podapi-worker-0", false);
	expect(&r, 403, "user \\\"system:serviceaccount:ml:default\\\" may not create");
}

static void test_a_user_without_the_right_is_forbidden_and_told_what_is_needed(void **state)
{
	struct env *e = *state;
	struct resp r = migrate(e, MIGRATION, "alice", false);
	expect(&r, 403,
	       "user \\\"alice\\\" may not create tfjobs/migrations (group kubeflow.org) in "
	       "namespace ml");
	expect(&r, 403, "no RBAC policy matched");
	assert_int_equal(e->migrate_calls, 0);
}

static void test_a_migration_is_authorised_against_the_kind_of_its_pods_job(void **state)
{
	struct env *e = *state;
	const char *pt = "{\"namespace\":\"ml\",\"pod\":\"pt-worker-1\"}";
	struct resp r = migrate(e, pt, "torch-admin", false);
	expect(&r, 202, "ml/pt-worker-1@1763880000");
	r = migrate(e, pt, "admin", false);
	expect(&r, 403, "may not create pytorchjobs/migrations (group kubeflow.org)");
	r = migrate(e, MIGRATION, "torch-admin", false);
	expect(&r, 403, "may not create tfjobs/migrations (group kubeflow.org)");
	assert_int_equal(e->migrate_calls, 1);
}

static void test_the_policy_refusing_is_a_conflict_and_an_unknown_replica_not_found(void **state)
{
	struct env *e = *state;
	struct resp r = migrate(e, "{\"namespace\":\"ml\",\"pod\":\"busy\"}", "admin", false);
	expect(&r, 409, "migration of ml/busy refused: job ml/busy is rescaling");
	r = migrate(e, "{\"namespace\":\"ml\",\"pod\":\"ghost\"}", "admin", false);
	expect(&r, 404, "no replica ml/ghost");
}

static void test_a_migration_needs_a_users_token_and_a_good_body(void **state)
{
	struct env *e = *state;
	struct resp r = migrate(e, MIGRATION, NULL, true);
	expect(&r, 401, "a client certificate names no user");
	r = migrate(e, MIGRATION, "forged", false);
	expect(&r, 401, "not accepted");
	r = migrate(e, "{\"namespace\":\"ml\"}", "admin", false);
	expect(&r, 400, "pod: required");
	r = migrate(e, "{\"namespace\":\"ml\",\"pod\":\"p\",\"to\":\"n\"}", "admin", false);
	expect(&r, 400, "unknown field \\\"to\\\"");
	assert_int_equal(e->migrate_calls, 0);
	assert_int_equal(e->access_reviews, 0);
}

static void test_the_migration_list_is_the_hooks_and_needs_a_certificate(void **state)
{
	struct env *e = *state;
	struct resp r = send_req(e, "GET", "/v1/migrations", NULL, NULL, true);
	expect(&r, 200, "{\"migrations\":[{\"id\":\"ml/job-worker-1@1763880000\"}]}");
	r = send_req(e, "GET", "/v1/migrations", NULL, "admin", false);
	expect(&r, 403, "a client certificate signed by drake's client CA is required");
	r = send_req(e, "DELETE", "/v1/migrations", NULL, NULL, true);
	expect(&r, 405, "accepts only POST, GET, HEAD");
}

static void test_metrics_count_reports_and_migrations_by_outcome(void **state)
{
	struct env *e = *state;
	struct resp r = progress(e, REPORT, "pod-worker-0", false);
	r = progress(e, REPORT, NULL, false);
	r = migrate(e, MIGRATION, "alice", false);
	r = migrate(e, "{\"namespace\":\"ml\",\"pod\":\"busy\"}", "admin", false);
	r = send_req(e, "GET", "/metrics", NULL, NULL, true);
	expect(&r, 200, "drake_progress_reports_total{outcome=\"accepted\"} 1\n");
	expect(&r, 200, "drake_progress_reports_total{outcome=\"unauthenticated\"} 1\n");
	expect(&r, 200, "drake_migration_requests_total{outcome=\"forbidden\"} 1\n");
	expect(&r, 200, "drake_migration_requests_total{outcome=\"refused_by_policy\"} 1\n");
	expect(&r, 200, "drake_requests_total{verb=\"progress\",code=\"202\"} 1\n");
	expect(&r, 200, "drake_requests_total{verb=\"migrations\",code=\"409\"} 1\n");
	expect(&r, 200, "drake_request_errors_total{verb=\"progress\"} 1\n"); /* 202 is none */
}

/* ---- without a controller, without an API server, at shutdown ---- */

static void test_without_the_controller_every_endpoint_answers_503(void **state)
{
	struct env *e = env_new(true, false);
	struct resp r = progress(e, REPORT, "pod-worker-0", false);
	expect(&r, 503, "progress reports need drake's TFJob controller");
	r = migrate(e, MIGRATION, "admin", false);
	expect(&r, 503, "migrations need drake's TFJob controller");
	r = send_req(e, "GET", "/v1/migrations", NULL, NULL, true);
	expect(&r, 503, "migrations need drake's TFJob controller");
	assert_int_equal(e->token_reviews, 0);
	env_free(e);
}

/* The controller's other operations: /readyz, /v1/jobs and filter's
 * re-plan answer from them; an operation the table leaves NULL, or no table
 * at all (drake serve without --reconcile), gets the extender's own answer. */
static bool not_synced(void *arg, char *why, size_t whylen)
{
	snprintf(why, whylen, "pods cache not synced: watch failed, relisting");
	return false;
}

static char *two_jobs(void *arg)
{
	return strdup("{\"jobs\":[{\"name\":\"a\"},{\"name\":\"b\"}]}");
}

static bool onto_gpu_b(void *arg, const char *ns, const char *pod, const char *const *candidates,
                       size_t n, char *node, size_t nodelen, char *why, size_t whylen)
{
	snprintf(node, nodelen, "gpu-b");
	return true;
}

/* Counts the calls and cannot say: every node scores 0. */
static drake_err no_view(void *arg, const char *ns, const char *pod, const char *const *candidates,
                         size_t n, struct place_models *models, struct place_task *task,
                         struct place_node *nodes, bool *known, char *why, size_t whylen)
{
	((struct env *)arg)->view_calls++;
	snprintf(why, whylen, "pod %s/%s is not in the cache", ns, pod);
	return DRAKE_EINVAL;
}

#define PLAIN_POD                                                                                  \
	"{\"Pod\":{\"metadata\":{\"name\":\"plain\",\"namespace\":\"ml\",\"uid\":\"u1\"}},"        \
	"\"NodeNames\":[\"gpu-a\",\"gpu-b\"]}"

#define MEMBER_GONE                                                                                \
	"{\"Pod\":{\"metadata\":{\"name\":\"job-worker-0\",\"namespace\":\"ml\","                  \
	"\"annotations\":{\"drake.dev/planned-node\":\"gpu-gone\",\"drake.dev/gang\":"             \
	"\"uid.1\",\"drake.dev/gang-size\":\"2\"}}},\"NodeNames\":[\"gpu-a\",\"gpu-b\"]}"

static void test_the_controllers_operations_answer_and_missing_ones_the_extender(void **state)
{
	struct env *e = env_new(true, false);
	char msg[256];
	struct resp r;
	/* No controller: the extender alone. */
	r = send_req(e, "GET", "/readyz", NULL, NULL, false);
	expect(&r, 200, "ok");
	r = send_req(e, "GET", "/v1/jobs", NULL, NULL, true);
	expect(&r, 200, "{\"jobs\":[]}");
	r = send_req(e, "POST", "/scheduler/filter", MEMBER_GONE, NULL, true);
	expect(&r, 200, "\"NodeNames\":[]");
	assert_int_equal(ext_server_set_scoring(e->srv, 16, msg, sizeof(msg)), DRAKE_EINVAL);
	assert_non_null(strstr(msg, "--reconcile"));

	/* A table with four operations: they answer, the API's are still 503. */
	static const struct ext_controller some = {.ready = not_synced,
	                                           .jobs_json = two_jobs,
	                                           .replan = onto_gpu_b,
	                                           .place_view = no_view};
	ext_server_set_controller(e->srv, &some, e);
	assert_int_equal(ext_server_set_scoring(e->srv, 16, msg, sizeof(msg)), DRAKE_OK);
	r = send_req(e, "POST", "/scheduler/prioritize", PLAIN_POD, NULL, true);
	expect(&r, 200, "\"Score\":0");
	assert_int_equal(e->view_calls, 1);
	r = send_req(e, "GET", "/readyz", NULL, NULL, false);
	expect(&r, 503, "pods cache not synced: watch failed, relisting");
	r = send_req(e, "GET", "/v1/jobs", NULL, NULL, true);
	expect(&r, 200, "{\"name\":\"b\"}");
	r = send_req(e, "POST", "/scheduler/filter", MEMBER_GONE, NULL, true);
	expect(&r, 200, "\"NodeNames\":[\"gpu-b\"]");
	r = progress(e, REPORT, "pod-worker-0", false);
	expect(&r, 503, "progress reports need drake's TFJob controller");
	r = send_req(e, "GET", "/v1/migrations", NULL, NULL, true);
	expect(&r, 503, "migrations need drake's TFJob controller");

	/* Taken out again: the extender alone once more, the score off. */
	ext_server_set_controller(e->srv, NULL, e);
	r = send_req(e, "POST", "/scheduler/prioritize", PLAIN_POD, NULL, true);
	expect(&r, 200, "\"Score\":0");
	assert_int_equal(e->view_calls, 1);
	r = send_req(e, "GET", "/readyz", NULL, NULL, false);
	expect(&r, 200, "ok");
	r = send_req(e, "GET", "/v1/jobs", NULL, NULL, true);
	expect(&r, 200, "{\"jobs\":[]}");
	r = send_req(e, "POST", "/scheduler/filter", MEMBER_GONE, NULL, true);
	expect(&r, 200, "\"NodeNames\":[]");
	assert_int_equal(e->token_reviews, 0);
	env_free(e);
}

static void test_without_an_api_server_a_token_cannot_be_checked(void **state)
{
	struct env *e = env_new(false, true);
	struct resp r = progress(e, REPORT, "pod-worker-0", false);
	expect(&r, 503, "drake has no API-server credentials to check who is calling");
	r = progress(e,
	             "{\"step\":1,\"value\":1,\"metric\":\"loss\",\"namespace\":\"ml\",\"pod\":"
	             "\"job-worker-0\"}",
	             NULL, true);
	expect(&r, 202, ""); /* a certificate needs no review */
	env_free(e);
}

static bool review_held(struct env *e)
{
	return e->held > 0;
}

static void on_drained(void *arg)
{
	((struct env *)arg)->drained = true;
}

/* drake shuts down while a TokenReview is in flight: the report is answered
 * 503 when the grace runs out, and the review's late answer (the client
 * failing it as drake serve frees the client after the server) touches
 * nothing that is gone. ASan and valgrind watch this. */
static void test_a_report_whose_review_outlives_the_server_is_answered_and_dropped(void **state)
{
	struct env *e = *state;
	e->hold = true;
	struct req q;
	req_init(e, &q, "POST", "/v1/progress", REPORT, "pod-worker-0", false);
	CURLM *m = curl_multi_init();
	curl_multi_add_handle(m, q.h);
	pump(e, m, review_held);
	ext_server_shutdown(e->srv, on_drained, e);
	pump(e, m, NULL);
	assert_true(e->drained);
	ext_server_free(e->srv);
	e->srv = NULL;
	curl_multi_remove_handle(m, q.h);
	curl_multi_cleanup(m);
	req_done(&q);
	expect(&q.r, 503, "drake is shutting down");
	kube_client_free(e->kube); /* fails the held review: its answer is dropped */
	e->kube = NULL;
	assert_int_equal(e->progress_calls, 0);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
	    T(test_an_accepted_report_reaches_the_hook_as_the_pod_its_token_names),
	    T(test_a_report_naming_another_pod_is_refused_and_its_own_accepted),
	    T(test_without_a_token_a_report_is_unauthenticated),
	    T(test_a_token_the_api_server_rejects_is_unauthenticated),
	    T(test_a_token_not_bound_to_a_pod_is_forbidden),
	    T(test_only_tokens_for_drakes_audience_report_progress),
	    T(test_a_pod_the_controller_does_not_run_is_forbidden_with_its_reason),
	    T(test_malformed_reports_are_refused_before_any_review),
	    T(test_steady_reports_cost_one_token_review),
	    T(test_a_pod_over_its_rate_is_told_to_retry_while_another_is_served),
	    T(test_a_client_certificate_reports_for_the_pod_its_body_names),
	    T(test_an_api_server_failure_is_an_error_not_a_verdict),
	    T(test_a_token_over_the_limit_is_refused_unread),
	    T(test_at_most_32_reviews_are_in_flight_and_the_next_caller_retries),
	    T(test_an_authorised_migration_is_accepted_with_its_id),
	    T(test_a_migration_is_never_served_from_the_token_cache),
	    T(test_a_user_without_the_right_is_forbidden_and_told_what_is_needed),
	    T(test_a_migration_is_authorised_against_the_kind_of_its_pods_job),
	    T(test_the_policy_refusing_is_a_conflict_and_an_unknown_replica_not_found),
	    T(test_a_migration_needs_a_users_token_and_a_good_body),
	    T(test_the_migration_list_is_the_hooks_and_needs_a_certificate),
	    T(test_metrics_count_reports_and_migrations_by_outcome),
	    cmocka_unit_test(test_without_the_controller_every_endpoint_answers_503),
	    cmocka_unit_test(test_the_controllers_operations_answer_and_missing_ones_the_extender),
	    cmocka_unit_test(test_without_an_api_server_a_token_cannot_be_checked),
	    T(test_a_report_whose_review_outlives_the_server_is_answered_and_dropped),
	};
#undef T
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
