/*
 * reconciler_test.c - cmocka tests for the controller loop against a
 * scripted fake API server (evhttp on 127.0.0.1): lists come from the test,
 * watches are held open, and every write is recorded. Covers a fresh DRAGON
 * README job (services and gated pods created, the started ones ungated on
 * the next pass), a restart over a healthy job (nothing created or deleted),
 * a failed OnFailure pod (deleted for recreation), cleanPodPolicy, an
 * invalid job and a job managed by another controller.
 *
 * The linker wraps job_decode, rec_admit_pass, pass_world_build and
 * admit_snapshot (Makefile) so that a test can count what one round does:
 * the TFJobs it decodes, the worlds and snapshots it builds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>

#include "gang/scale.h"
#include "kube/client.h"
#include "reconciler/admit.h"
#include "reconciler/reconciler.h"
#include "reconciler/wave_room.h"
#include "kind/job.h"
#include "tfjob/tfjob.h"

static const struct job_kind *const tf_kinds[] = {&tfjob_kind};
/* The reconciler's options serve TFJobs: every test here is of that kind. */
#define TF_KINDS .kinds = tf_kinds, .nkinds = 1

/* ---- counted through the linker's wrappers ---- */

struct kube_cache;
struct drake_cluster;
struct admit_skipped_list;
struct pass_world;

static struct {
	int decodes, worlds, snapshots;
	int rounds;        /* rec_admit_pass calls that built a world */
	int round_decodes; /* the most TFJob decodes one such call made */
} calls;

drake_err __real_job_decode(const struct job_kind *kind, const struct json_t *obj, struct job *job,
                            bool *managed, char *m, size_t len);
drake_err __wrap_job_decode(const struct job_kind *kind, const struct json_t *obj, struct job *job,
                            bool *managed, char *m, size_t len);
drake_err __wrap_job_decode(const struct job_kind *kind, const struct json_t *obj, struct job *job,
                            bool *managed, char *m, size_t len)
{
	calls.decodes++;
	return __real_job_decode(kind, obj, job, managed, m, len);
}

drake_err __real_pass_world_build(struct pass_world *w, const struct kube_cache *nodes,
                                  const struct kube_cache *pods, const struct job_caches *jobs,
                                  char *m, size_t len);
drake_err __wrap_pass_world_build(struct pass_world *w, const struct kube_cache *nodes,
                                  const struct kube_cache *pods, const struct job_caches *jobs,
                                  char *m, size_t len);
drake_err __wrap_pass_world_build(struct pass_world *w, const struct kube_cache *nodes,
                                  const struct kube_cache *pods, const struct job_caches *jobs,
                                  char *m, size_t len)
{
	calls.worlds++;
	return __real_pass_world_build(w, nodes, pods, jobs, m, len);
}

drake_err __real_admit_snapshot(const struct kube_cache *nodes, const struct kube_cache *pods,
                                const struct job_caches *jobs, struct drake_cluster *c,
                                struct admit_skipped_list *skipped, char *m, size_t len);
drake_err __wrap_admit_snapshot(const struct kube_cache *nodes, const struct kube_cache *pods,
                                const struct job_caches *jobs, struct drake_cluster *c,
                                struct admit_skipped_list *skipped, char *m, size_t len);
drake_err __wrap_admit_snapshot(const struct kube_cache *nodes, const struct kube_cache *pods,
                                const struct job_caches *jobs, struct drake_cluster *c,
                                struct admit_skipped_list *skipped, char *m, size_t len)
{
	calls.snapshots++;
	return __real_admit_snapshot(nodes, pods, jobs, c, skipped, m, len);
}

void __real_rec_admit_pass(struct reconciler *r);
void __wrap_rec_admit_pass(struct reconciler *r);
void __wrap_rec_admit_pass(struct reconciler *r)
{
	int decodes = calls.decodes, worlds = calls.worlds;
	__real_rec_admit_pass(r);
	if (calls.worlds == worlds)
		return; /* held: a wave or a record still settling */
	calls.rounds++;
	if (calls.decodes - decodes > calls.round_decodes)
		calls.round_decodes = calls.decodes - decodes;
}

struct env {
	struct event_base *base;
	struct evhttp *http;
	struct kube_client *client;
	struct reconciler *rec;
	const char *jobs, *pods, *services, *nodes; /* list items, comma-separated JSON */
	const char *node_metrics; /* NodeMetrics items; NULL: the metrics API answers 404 */
	int metrics_gets;
	struct evhttp_request *pod_watch; /* the pod watch, when streamed */
	struct evhttp_request *job_watch; /* the TFJob watch, when streamed */
	bool stream_jobs;                 /* stream the TFJob watch too */
	char writes[16384];               /* "METHOD path\n" per write */
	char bodies[65536];
	int nwrites, want;
	bool forbid_pods;                     /* pod creates answered 403 */
	long requeue_ms;                      /* 0: 30 s, so a test sees exactly one pass */
	double clock;                         /* the controller's clock, with start_gang */
	double step;                          /* seconds it moves on per slice of run_until */
	const struct drake_scale_opts *scale; /* start_gang's; NULL: the defaults */
};

static double test_clock(void *arg)
{
	return ((struct env *)arg)->clock;
}

static char msg[256];

static void on_http(struct evhttp_request *req, void *arg)
{
	struct env *e = arg;
	const char *uri = evhttp_request_get_uri(req);
	enum evhttp_cmd_type cmd = evhttp_request_get_command(req);
	struct evbuffer *out = evbuffer_new();
	if (cmd == EVHTTP_REQ_GET) {
		if (strstr(uri, "watch=1")) {
			evbuffer_free(out);
			if (strstr(uri, "/pods") && !e->pod_watch) {
				evhttp_send_reply_start(req, 200, "OK"); /* events from push() */
				e->pod_watch = req;
			}
			if (e->stream_jobs && strstr(uri, "/tfjobs") && !e->job_watch) {
				evhttp_send_reply_start(req, 200, "OK");
				e->job_watch = req;
			}
			return; /* held open */
		}
		if (strstr(uri, "/apis/metrics.k8s.io/")) {
			e->metrics_gets++;
			evbuffer_add_printf(out, "{\"kind\":\"NodeMetricsList\",\"items\":[%s]}",
			                    e->node_metrics ? e->node_metrics : "");
			evhttp_send_reply(req, e->node_metrics ? 200 : 404, "x", out);
			evbuffer_free(out);
			return;
		}
		const char *items = strstr(uri, "/tfjobs")     ? e->jobs
		                    : strstr(uri, "/pods")     ? e->pods
		                    : strstr(uri, "/services") ? e->services
		                    : strstr(uri, "/nodes")    ? e->nodes
		                                               : NULL;
		evbuffer_add_printf(out,
		                    "{\"metadata\":{\"resourceVersion\":\"5\"},\"items\":[%s]}",
		                    items ? items : "");
		evhttp_send_reply(req, items ? 200 : 404, "x", out);
		evbuffer_free(out);
		return;
	}
	const char *m = cmd == EVHTTP_REQ_POST     ? "POST"
	                : cmd == EVHTTP_REQ_PATCH  ? "PATCH"
	                : cmd == EVHTTP_REQ_DELETE ? "DELETE"
	                                           : "OTHER";
	char line[512];
	snprintf(line, sizeof(line), "%s %s\n", m, uri);
	strncat(e->writes, line, sizeof(e->writes) - strlen(e->writes) - 1);
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	size_t n = evbuffer_get_length(in), have = strlen(e->bodies);
	if (have + n + 2 < sizeof(e->bodies)) {
		evbuffer_copyout(in, e->bodies + have, n);
		e->bodies[have + n] = '\n';
		e->bodies[have + n + 1] = '\0';
	}
	e->nwrites++;
	if (e->want && e->nwrites >= e->want)
		event_base_loopbreak(e->base);
	if (e->forbid_pods && cmd == EVHTTP_REQ_POST && strstr(uri, "/pods")) {
		evbuffer_add_printf(out, "{\"kind\":\"Status\",\"code\":403,\"message\":"
		                         "\"pods is forbidden: no service account\"}");
		evhttp_send_reply(req, 403, "Forbidden", out);
		evbuffer_free(out);
		return;
	}
	evbuffer_add_printf(out, "{}");
	evhttp_send_reply(req, cmd == EVHTTP_REQ_POST ? 201 : 200, "x", out);
	evbuffer_free(out);
}

static int setup(void **state)
{
	memset(&calls, 0, sizeof(calls));
	struct env *e = calloc(1, sizeof(*e));
	e->base = event_base_new();
	e->http = evhttp_new(e->base);
	evhttp_set_allowed_methods(e->http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_DELETE |
	                                        EVHTTP_REQ_PATCH);
	evhttp_set_gencb(e->http, on_http, e);
	struct evhttp_bound_socket *bs = evhttp_bind_socket_with_handle(e->http, "127.0.0.1", 0);
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	getsockname(evhttp_bound_socket_get_fd(bs), (struct sockaddr *)&sa, &len);
	char server[64];
	snprintf(server, sizeof(server), "http://127.0.0.1:%d", ntohs(sa.sin_port));
	struct kube_config cfg = {.server = server};
	struct kube_client_options o = {.timeout_ms = 5000, .max_body = 8 << 20};
	e->client = kube_client_new(e->base, &cfg, &o, msg, sizeof(msg));
	e->jobs = e->pods = e->services = e->nodes = "";
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;
	reconciler_free(e->rec);
	kube_client_free(e->client);
	evhttp_free(e->http);
	event_base_free(e->base);
	free(e);
	return 0;
}

/* Runs until `want` writes arrived (at most 15 s, for valgrind), then 200 ms
 * more so that a write too many would still be seen. */
static void run(struct env *e, int want)
{
	if (!e->rec) {
		/* the fake server sends no watch events, so a second pass would see
		 * the same cache and repeat the first one's writes (harmless on a real
		 * API server: 409s and no-op patches) */
		struct reconciler_options ro = {
		    TF_KINDS, .requeue_ms = e->requeue_ms ? e->requeue_ms : 30000};
		e->rec = reconciler_new(e->base, e->client, &ro, msg, sizeof(msg));
		assert_non_null(e->rec);
		assert_int_equal(reconciler_start(e->rec), DRAKE_OK);
	}
	e->want = want;
	/* a generous bound for valgrind; a test expecting no write waits 3 s */
	struct timeval tv = {want ? 15 : 3, 0}, settle = {0, 200000};
	event_base_loopexit(e->base, &tv);
	event_base_dispatch(e->base);
	e->want = 0;
	event_base_loopexit(e->base, &settle);
	event_base_dispatch(e->base);
	assert_true(e->nwrites >= want);
}

static int count(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

#define TMPL "{\"spec\":{\"containers\":[{\"name\":\"tensorflow\",\"image\":\"tf\"}]}}"
#define JOB(extra, workers)                                                                        \
	"{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"job1\","  \
	"\"namespace\":\"default\",\"uid\":\"uid-job1\",\"resourceVersion\":\"3\"},\"spec\":{"     \
	"\"max-instances\":4,\"min-instances\":1" extra ",\"tfReplicaSpecs\":{\"PS\":{"            \
	"\"replicas\":1,\"restartPolicy\":\"OnFailure\",\"template\":" TMPL "},\"Worker\":{"       \
	"\"replicas\":" #workers ",\"restartPolicy\":\"OnFailure\",\"template\":" TMPL "}}}}"

#define OWNED(kind, type, idx, extra)                                                              \
	"{\"metadata\":{\"name\":\"job1-" type "-" #idx "\",\"namespace\":\"default\",\"uid\":"    \
	"\"uid-" type #idx "\",\"resourceVersion\":\"4\",\"labels\":{"                             \
	"\"training.kubeflow.org/job-name\":\"job1\",\"training.kubeflow.org/"                     \
	"replica-type\":\"" type "\",\"training.kubeflow.org/replica-index\":\"" #idx              \
	"\"},\"ownerReferences\":[{"                                                               \
	"\"kind\":\"TFJob\",\"name\":\"job1\",\"uid\":\"uid-job1\",\"controller\":true}]}" extra   \
	"}"
#define RUNNING ",\"spec\":{},\"status\":{\"phase\":\"Running\"}"
#define GATED_SPEC                                                                                 \
	"\"spec\":{\"schedulingGates\":[{\"name\":\"drake.dev/"                                    \
	"gang\"}]},\"status\":{\"phase\":\"Pending\"}"
#define GATED          "," GATED_SPEC
#define SVC(type, idx) OWNED("Service", type, idx, "")

static void test_fresh_job_gets_services_and_gated_pods(void **state)
{
	struct env *e = *state;
	e->jobs = JOB("", 2);
	run(e, 11);
	assert_true(reconciler_synced(e->rec));
	assert_int_equal(count(e->writes, "POST /api/v1/namespaces/default/services\n"), 5);
	assert_int_equal(count(e->writes, "POST /api/v1/namespaces/default/pods\n"), 5);
	assert_int_equal(count(e->bodies, "\"name\":\"job1-worker-3\""), 2); /* pod + service */
	assert_int_equal(count(e->bodies, "\"schedulingGates\":[{\"name\":\"drake.dev/gang\"}]"),
	                 5);
	assert_int_equal(
	    count(e->writes, "PATCH /apis/kubeflow.org/v1/namespaces/default/tfjobs/job1/status"),
	    1);
	assert_int_equal(count(e->writes, "DELETE"), 0);
}

static void test_a_standby_syncs_its_caches_and_writes_nothing_until_it_leads(void **state)
{
	struct env *e = *state;
	e->jobs = JOB("", 2);
	struct reconciler_options ro = {TF_KINDS, .requeue_ms = 30000, .standby = true};
	e->rec = reconciler_new(e->base, e->client, &ro, msg, sizeof(msg));
	assert_non_null(e->rec);
	assert_int_equal(reconciler_start(e->rec), DRAKE_OK);
	run(e, 0);                              /* 3 s */
	assert_true(reconciler_synced(e->rec)); /* warm: listed and watching */
	assert_int_equal(e->nwrites, 0);
	reconciler_lead(e->rec);
	run(e, 11); /* what a fresh leader writes, at once */
	assert_int_equal(count(e->writes, "POST /api/v1/namespaces/default/pods\n"), 5);
	assert_int_equal(count(e->writes, "POST /api/v1/namespaces/default/services\n"), 5);
}

static void test_gated_pods_of_started_replicas_are_ungated(void **state)
{
	struct env *e = *state;
	e->jobs = JOB("", 2);
	e->pods = OWNED("Pod", "ps", 0, GATED) "," OWNED("Pod", "worker", 0, GATED) "," OWNED(
	    "Pod", "worker", 1, GATED) "," OWNED("Pod", "worker", 2,
	                                         GATED) "," OWNED("Pod", "worker", 3, GATED);
	e->services = SVC("ps", 0) "," SVC("worker", 0) "," SVC("worker", 1) "," SVC(
	    "worker", 2) "," SVC("worker", 3);
	run(e, 4);
	/* PS and Worker.replicas=2 workers start; workers 2 and 3 wait for the planner */
	assert_int_equal(count(e->writes, "PATCH /api/v1/namespaces/default/pods/"), 3);
	assert_int_equal(count(e->writes, "pods/job1-ps-0\n"), 1);
	assert_int_equal(count(e->writes, "pods/job1-worker-1\n"), 1);
	assert_int_equal(count(e->writes, "pods/job1-worker-2\n"), 0);
	assert_int_equal(count(e->writes, "POST /api/v1/namespaces/default/pods"), 0);
	assert_int_equal(
	    count(e->bodies, "{\"op\":\"remove\",\"path\":\"/spec/schedulingGates/0\"}"), 3);
}

static void test_restart_over_a_healthy_job_creates_and_deletes_nothing(void **state)
{
	struct env *e = *state;
	e->jobs = JOB("", 4);
	e->pods = OWNED("Pod", "ps", 0, RUNNING) "," OWNED("Pod", "worker", 0, RUNNING) "," OWNED(
	    "Pod", "worker", 1, RUNNING) "," OWNED("Pod", "worker", 2,
	                                           RUNNING) "," OWNED("Pod", "worker", 3, RUNNING);
	e->services = SVC("ps", 0) "," SVC("worker", 0) "," SVC("worker", 1) "," SVC(
	    "worker", 2) "," SVC("worker", 3);
	run(e, 2);
	assert_int_equal(count(e->writes, "POST /api/v1/namespaces/default/pods"), 0);
	assert_int_equal(count(e->writes, "POST /api/v1/namespaces/default/services"), 0);
	assert_int_equal(count(e->writes, "DELETE"), 0);
	assert_int_equal(count(e->writes, "/status\n"), 1);
	assert_int_equal(count(e->bodies, "\"type\":\"Running\",\"status\":\"True\""), 1);
	assert_int_equal(count(e->bodies, "\"Worker\":{\"active\":4"), 1);
}

static void test_failed_on_failure_pod_is_deleted_for_recreation(void **state)
{
	struct env *e = *state;
	e->jobs = JOB("", 1);
	e->pods = OWNED("Pod", "ps", 0, RUNNING) "," OWNED(
	    "Pod", "worker", 0, ",\"spec\":{},\"status\":{\"phase\":\"Failed\"}");
	e->services = SVC("ps", 0) "," SVC("worker", 0) "," SVC("worker", 1) "," SVC(
	    "worker", 2) "," SVC("worker", 3);
	run(e, 7);
	assert_int_equal(count(e->writes, "DELETE /api/v1/namespaces/default/pods/job1-worker-0\n"),
	                 1);
	assert_int_equal(count(e->bodies, "\"preconditions\":{\"uid\":\"uid-worker0\"}"), 1);
	assert_int_equal(count(e->bodies, "\"drake.dev/restarts\":\"1\""), 1);
	assert_int_equal(count(e->bodies, "\"reason\":\"TFJobRestarting\""),
	                 2); /* status + event */
}

static void test_finished_job_cleans_pods_per_policy(void **state)
{
	struct env *e = *state;
	e->jobs =
	    "{\"metadata\":{\"name\":\"job1\",\"namespace\":\"default\",\"uid\":\"uid-job1\","
	    "\"resourceVersion\":\"3\"},\"spec\":{\"cleanPodPolicy\":\"Running\","
	    "\"tfReplicaSpecs\":{\"PS\":{\"template\":" TMPL "},\"Worker\":{\"template\":" TMPL
	    "}}},\"status\":{\"completionTime\":\"2026-01-01T00:00:00Z\",\"conditions\":[{"
	    "\"type\":\"Succeeded\",\"status\":\"True\"}]}}";
	e->pods = OWNED("Pod", "ps", 0, RUNNING) "," OWNED(
	    "Pod", "worker", 0, ",\"spec\":{},\"status\":{\"phase\":\"Succeeded\"}");
	run(e, 1);
	assert_int_equal(count(e->writes, "DELETE /api/v1/namespaces/default/pods/job1-ps-0\n"), 1);
	assert_int_equal(count(e->writes, "DELETE"), 1); /* the succeeded worker stays */
	assert_int_equal(count(e->writes, "POST /api/v1/namespaces/default/pods"), 0);
}

static void test_invalid_job_gets_a_failed_condition_and_foreign_jobs_are_left_alone(void **state)
{
	struct env *e = *state;
	e->jobs = "{\"metadata\":{\"name\":\"bad\",\"namespace\":\"default\",\"uid\":\"u-bad\"},"
	          "\"spec\":{\"tfReplicaSpecs\":{\"Boss\":{}}}},"
	          "{\"metadata\":{\"name\":\"theirs\",\"namespace\":\"default\",\"uid\":\"u-t\"},"
	          "\"spec\":{\"runPolicy\":{\"managedBy\":\"kubeflow.org/training-operator\"},"
	          "\"tfReplicaSpecs\":{\"Worker\":{\"template\":" TMPL "}}}}";
	run(e, 2);
	assert_int_equal(
	    count(e->writes, "PATCH /apis/kubeflow.org/v1/namespaces/default/tfjobs/bad/status\n"),
	    1);
	assert_int_equal(count(e->bodies, "unknown replica type Boss"), 2); /* status + event */
	assert_int_equal(count(e->writes, "theirs"), 0);
	assert_int_equal(count(e->writes, "/pods"), 0);
}

static void test_suspended_job_loses_its_pods_and_services(void **state)
{
	struct env *e = *state;
	e->jobs = JOB(",\"runPolicy\":{\"suspend\":true}", 1);
	e->pods = OWNED("Pod", "ps", 0, RUNNING) "," OWNED("Pod", "worker", 0, RUNNING);
	e->services = SVC("ps", 0) "," SVC("worker", 0);
	run(e, 6); /* 2 pods, 2 services, status, event */
	assert_int_equal(count(e->writes, "DELETE /api/v1/namespaces/default/pods/"), 2);
	assert_int_equal(count(e->writes, "DELETE /api/v1/namespaces/default/services/"), 2);
	assert_int_equal(count(e->writes, "POST /api/v1/namespaces/default/pods"), 0);
	assert_int_equal(count(e->bodies, "\"type\":\"Suspended\",\"status\":\"True\""), 1);
}

static void test_job_with_more_pods_than_the_limit_is_left_alone(void **state)
{
	struct env *e = *state;
	e->jobs = JOB("", 2);
	size_t n = RECONCILER_MAX_PODS + 1, cap = n * 512;
	char *pods = malloc(cap), *p = pods;
	assert_non_null(pods);
	for (size_t i = 0; i < n; i++)
		p += snprintf(
		    p, cap - (size_t)(p - pods),
		    "%s{\"metadata\":{\"name\":\"job1-x-%zu\",\"namespace\":\"default\","
		    "\"uid\":\"u%zu\",\"labels\":{\"training.kubeflow.org/job-name\":\"job1\","
		    "\"training.kubeflow.org/replica-type\":\"worker\","
		    "\"training.kubeflow.org/replica-index\":\"%zu\"},\"ownerReferences\":[{"
		    "\"kind\":\"TFJob\",\"uid\":\"uid-job1\",\"controller\":true}]},"
		    "\"status\":{\"phase\":\"Running\"}}",
		    i ? "," : "", i, i, i % 1000);
	e->pods = pods;
	run(e, 0); /* nothing is expected: waits the full 3 s */
	free(pods);
	e->pods = "";
	assert_int_equal(e->nwrites, 0); /* acting on part of the pods would be wrong */
}

static void test_failing_writes_back_off_instead_of_retrying_every_second(void **state)
{
	struct env *e = *state;
	e->jobs = JOB("", 2);
	e->forbid_pods = true;
	e->requeue_ms = 1000;
	run(e, 11); /* first pass: 5 services, 5 pods (refused), status */
	struct timeval tv = {3, 500000};
	event_base_loopexit(e->base, &tv);
	event_base_dispatch(e->base);
	/* without backoff a pass would run every second (about 4 more); with it
	 * the second pass waits 2 s and the third 4 s more */
	int creates = count(e->writes, "POST /api/v1/namespaces/default/pods\n");
	if (creates < 5 || creates > 10)
		fail_msg("%d pod creates in 3.7 s", creates);
}

static void test_a_cache_that_lags_its_creates_never_makes_a_pod_twice(void **state)
{
	struct env *e = *state;
	e->jobs = JOB("", 2);
	e->requeue_ms = 1000;
	run(e, 11); /* first pass: 5 services, 5 pods, status */
	/* the fake server never shows the pods on a watch: every later pass
	 * sees the cache without them, as a real one does for a moment */
	struct timeval tv = {3, 500000};
	event_base_loopexit(e->base, &tv);
	event_base_dispatch(e->base);
	assert_int_equal(count(e->writes, "POST /api/v1/namespaces/default/pods\n"), 5);
	assert_int_equal(count(e->writes, "POST /api/v1/namespaces/default/services\n"), 5);
}

/* ---- admission pacing (gang mode) ---- */

/* A TFJob with 1 PS and 7 workers, its services and its gated pods. */
static void gang_job(char *job, size_t jl, char *svcs, size_t sl, char *pods, size_t pl,
                     const char *name)
{
	snprintf(job, jl,
	         "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{"
	         "\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"uid-%s\","
	         "\"creationTimestamp\":\"2026-01-01T00:00:0%c\",\"resourceVersion\":\"3\"},"
	         "\"spec\":{\"tfReplicaSpecs\":{\"PS\":{\"replicas\":1,\"template\":" TMPL
	         "},\"Worker\":{\"replicas\":7,\"template\":" TMPL "}}}}",
	         name, name, name[strlen(name) - 1]);
	*svcs = *pods = '\0';
	for (int i = 0; i < 8; i++) {
		const char *type = i ? "worker" : "ps";
		int idx = i ? i - 1 : 0;
		char meta[640];
		snprintf(meta, sizeof(meta),
		         "{\"metadata\":{\"name\":\"%s-%s-%d\",\"namespace\":\"default\","
		         "\"uid\":\"uid-%s-%s%d\",\"resourceVersion\":\"4\",\"labels\":{"
		         "\"training.kubeflow.org/job-name\":\"%s\",\"training.kubeflow.org/"
		         "replica-type\":\"%s\",\"training.kubeflow.org/replica-index\":\"%d\"},"
		         "\"ownerReferences\":[{\"kind\":\"TFJob\",\"name\":\"%s\",\"uid\":"
		         "\"uid-%s\",\"controller\":true}]}",
		         name, type, idx, name, type, idx, name, type, idx, name, name);
		size_t n = strlen(svcs);
		snprintf(svcs + n, sl - n, "%s%s}", n ? "," : "", meta);
		n = strlen(pods);
		snprintf(pods + n, pl - n, "%s%s" GATED "}", n ? "," : "", meta);
	}
}

/* Sends a watch event of kind event for pod i (0: the PS, then workers
 * 0..6) of job, of uid "uid-<job>-<type><idx><uid_tail>" and resource version
 * rv; meta is added to its metadata ("" or ",\"annotations\":{...}") and
 * rest closes the object (its spec and status). */
static void push_gang_pod(struct env *e, const char *event, const char *job, int i,
                          const char *uid_tail, int rv, const char *meta, const char *rest)
{
	const char *type = i ? "worker" : "ps";
	int idx = i ? i - 1 : 0;
	struct evbuffer *b = evbuffer_new();
	evbuffer_add_printf(
	    b,
	    "{\"type\":\"%s\",\"object\":{\"metadata\":{\"name\":\"%s-%s-%d\","
	    "\"namespace\":\"default\",\"uid\":\"uid-%s-%s%d%s\",\"resourceVersion\":\"%d\","
	    "\"labels\":{\"training.kubeflow.org/job-name\":\"%s\","
	    "\"training.kubeflow.org/replica-type\":\"%s\","
	    "\"training.kubeflow.org/replica-index\":\"%d\"}%s,"
	    "\"ownerReferences\":[{\"kind\":\"TFJob\",\"name\":\"%s\",\"uid\":"
	    "\"uid-%s\",\"controller\":true}]},%s}}\n",
	    event, job, type, idx, job, type, idx, uid_tail, rv, job, type, idx, meta, job, job,
	    rest);
	evhttp_send_reply_chunk(e->pod_watch, b);
	evbuffer_free(b);
}

/* The annotations of a pod of job planned on n1 in wave uid-<job>.1. */
static const char *planned_meta(const char *job)
{
	static char meta[256];
	snprintf(meta, sizeof(meta),
	         ",\"annotations\":{\"drake.dev/planned-node\":\"n1\",\"drake.dev/gang\":"
	         "\"uid-%s.1\",\"drake.dev/gang-size\":\"8\",\"drake.dev/gang-min\":\"8\"}",
	         job);
	return meta;
}

/* Sends a MODIFIED event for pod i of job: planned on n1, and bound there
 * when bound. */
static void push_planned_pod(struct env *e, const char *job, int i, bool bound)
{
	push_gang_pod(e, "MODIFIED", job, i, "", bound ? 20 : 10, planned_meta(job),
	              bound ? "\"spec\":{\"nodeName\":\"n1\"},\"status\":{\"phase\":\"Pending\"}"
	                    : "\"spec\":{},\"status\":{\"phase\":\"Pending\"}");
}

/* The same for all of job's 8 pods. */
static void push_planned(struct env *e, const char *job, bool bound)
{
	for (int i = 0; i < 8; i++)
		push_planned_pod(e, job, i, bound);
}

/* Runs the loop until `want` writes matching what were seen or secs passed;
 * returns how many were seen. */
static int run_until(struct env *e, const char *what, int want, int secs)
{
	for (int i = 0; i < secs * 10; i++) {
		if (count(e->writes, what) >= want)
			break;
		struct timeval slice = {0, 100000};
		event_base_loopexit(e->base, &slice);
		event_base_dispatch(e->base);
		e->clock += e->step;
	}
	return count(e->writes, what);
}

static void test_a_template_cannot_forge_drakes_plan(void **state)
{
	struct env *e = *state;
	/* the worker template carries a forged plan and a vGPU beside an
	 * annotation of the user's own */
	e->jobs = "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{"
	          "\"name\":\"job1\",\"namespace\":\"default\",\"uid\":\"uid-job1\","
	          "\"resourceVersion\":\"3\"},\"spec\":{\"tfReplicaSpecs\":{\"Worker\":{"
	          "\"replicas\":1,\"template\":{\"metadata\":{\"annotations\":{"
	          "\"drake.dev/planned-node\":\"n1\",\"drake.dev/gang\":\"x.1\","
	          "\"kubeshare/GPUID\":\"abcde\",\"team\":\"vision\"}},\"spec\":{"
	          "\"containers\":[{\"name\":\"tensorflow\",\"image\":\"tf\"}]}}}}}}";
	run(e, 3); /* service, pod, status */
	assert_int_equal(count(e->writes, "POST /api/v1/namespaces/default/pods\n"), 1);
	assert_int_equal(count(e->bodies, "\"team\":\"vision\""), 1);
	assert_int_equal(count(e->bodies, "\"drake.dev/planned-node\":\"n1\""), 0);
	assert_int_equal(count(e->bodies, "\"drake.dev/gang\":\"x.1\""), 0);
	assert_int_equal(count(e->bodies, "abcde"), 0);
	/* and the job's owner is told, on the TFJob */
	assert_int_equal(run_until(e, "POST /api/v1/namespaces/default/events", 1, 2), 1);
	assert_non_null(strstr(e->bodies, "\"reason\":\"TemplateAnnotationsStripped\""));
	assert_non_null(strstr(e->bodies, "Worker drake.dev/planned-node, Worker drake.dev/gang"));
}

/* drake serve --scheduler-name reaches every pod the controller creates,
 * except where the template names a scheduler of its own. */
static void test_pods_get_the_scheduler_name_unless_their_template_names_one(void **state)
{
	struct env *e = *state;
	e->jobs = "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{"
	          "\"name\":\"job1\",\"namespace\":\"default\",\"uid\":\"uid-job1\","
	          "\"resourceVersion\":\"3\"},\"spec\":{\"tfReplicaSpecs\":{\"PS\":{"
	          "\"replicas\":1,\"template\":" TMPL "},\"Worker\":{\"replicas\":2,"
	          "\"template\":{\"spec\":{\"schedulerName\":\"volcano\",\"containers\":[{"
	          "\"name\":\"tensorflow\",\"image\":\"tf\"}]}}}}}}";
	struct reconciler_options ro = {TF_KINDS, .requeue_ms = 30000,
	                                .scheduler_name = "drake-scheduler"};
	e->rec = reconciler_new(e->base, e->client, &ro, msg, sizeof(msg));
	assert_non_null(e->rec);
	assert_int_equal(reconciler_start(e->rec), DRAKE_OK);
	run(e, 7); /* 3 services, 3 pods, status */
	assert_int_equal(count(e->writes, "POST /api/v1/namespaces/default/pods\n"), 3);
	assert_int_equal(count(e->bodies, "\"schedulerName\":\"drake-scheduler\""), 1); /* PS */
	assert_int_equal(count(e->bodies, "\"schedulerName\":\"volcano\""), 2); /* workers */
}

#define POD_PATCH "PATCH /api/v1/namespaces/default/pods/"

static void test_admission_holds_a_gang_until_kube_scheduler_binds_the_one_before(void **state)
{
	struct env *e = *state;
	static char jobs[4096], svcs[16384], pods[16384];
	char j1[2048], j2[2048], s1[8192], s2[8192], p1[8192], p2[8192];
	gang_job(j1, sizeof(j1), s1, sizeof(s1), p1, sizeof(p1), "gang1");
	gang_job(j2, sizeof(j2), s2, sizeof(s2), p2, sizeof(p2), "gang2");
	snprintf(jobs, sizeof(jobs), "%s,%s", j1, j2);
	snprintf(svcs, sizeof(svcs), "%s,%s", s1, s2);
	snprintf(pods, sizeof(pods), "%s,%s", p1, p2);
	e->jobs = jobs;
	e->services = svcs;
	e->pods = pods;
	e->nodes = "{\"metadata\":{\"name\":\"n1\"},\"spec\":{},\"status\":{\"allocatable\":"
	           "{\"cpu\":\"64\",\"memory\":\"256Gi\",\"pods\":\"110\"}}}";
	/* room for one 8-pod wave in flight; both jobs fit the node; every
	 * round written to a decision log */
	char dlog[64];
	snprintf(dlog, sizeof(dlog), "/tmp/drake-rounds-%d.jsonl", (int)getpid());
	unlink(dlog);
	struct reconciler_options ro = {TF_KINDS,
	                                .requeue_ms = 30000,
	                                .gang = true,
	                                .gang_max_unbound = 8,
	                                .gang_bind_timeout_s = 15,
	                                .decision_log = dlog};
	e->rec = reconciler_new(e->base, e->client, &ro, msg, sizeof(msg));
	assert_non_null(e->rec);
	assert_int_equal(reconciler_start(e->rec), DRAKE_OK);

	/* the first job (oldest) is admitted whole */
	assert_int_equal(run_until(e, POD_PATCH, 8, 10), 8);
	assert_int_equal(count(e->writes, "pods/gang1-"), 8);
	assert_non_null(e->pod_watch);
	/* and the plan is recorded on the TFJob */
	assert_int_equal(
	    run_until(e, "PATCH /apis/kubeflow.org/v1/namespaces/default/tfjobs/gang1\n", 1, 5), 1);
	assert_non_null(strstr(e->bodies, "\"drake.dev/plan\":\"{\\\"gang\\\":\\\"uid-gang1."));
	assert_non_null(
	    strstr(e->bodies, "\\\"nodes\\\":{\\\"n1\\\":8},\\\"ps\\\":1,\\\"workers\\\":7}"));

	/* its pods show up planned but unbound: the second job waits, and says why */
	push_planned(e, "gang1", false);
	assert_int_equal(run_until(e, POD_PATCH, 9, 2), 8);
	char *jobs_json = reconciler_jobs_json(e->rec);
	assert_non_null(strstr(jobs_json, "\"job\":\"default/gang2\""));
	assert_non_null(strstr(jobs_json, "paced"));
	free(jobs_json);

	/* kube-scheduler binds them: the second job is admitted */
	push_planned(e, "gang1", true);
	assert_int_equal(run_until(e, POD_PATCH, 16, 10), 16);
	assert_int_equal(count(e->writes, "pods/gang2-"), 8);

	/* the log has the rounds: gang2 held by pacing, then admitted */
	FILE *f = fopen(dlog, "r");
	assert_non_null(f);
	static char buf[1 << 20];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	unlink(dlog);
	char *held = strstr(buf, "\"kind\":\"hold\",\"reason\":\"paced\"");
	assert_non_null(held);
	assert_non_null(strstr(held, "\"kind\":\"admit\",\"reason\":\"fits\""));
	assert_non_null(strstr(buf, "\"name\":\"default/gang2\""));
}

/* Sends a watch event of kind event for pod i of job, gated (ADDED: a
 * replacement, of a new uid). */
static void push_gang_pod_event(struct env *e, const char *event, const char *job, int i)
{
	push_gang_pod(e, event, job, i, strcmp(event, "ADDED") ? "" : "-new", 11, "", GATED_SPEC);
}

/* Sends a MODIFIED event for job's PS: planned on n1 in wave uid-<job>.1,
 * and refused by kube-scheduler for a reason outside the planner's model (a
 * claim that does not exist). */
static void push_refused_ps(struct env *e, const char *job)
{
	push_gang_pod(e, "MODIFIED", job, 0, "", 10, planned_meta(job),
	              "\"spec\":{},\"status\":{\"phase\":\"Pending\",\"conditions\":[{"
	              "\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":"
	              "\"Unschedulable\",\"message\":\"0/1 nodes are available: "
	              "persistentvolumeclaim \\\"data\\\" not found.\"}]}");
}

/* kube-scheduler refuses a wave before the cache has shown it planned: the
 * backstop deletes its pods, and admission stops waiting for the wave to
 * show up (its replacements come back gated, never planned), so rounds go
 * on and the job is listed as backing off, not held unlisted for
 * WAVE_SETTLE_MS. */
static void test_a_wave_refused_before_it_shows_planned_does_not_hold_admission(void **state)
{
	struct env *e = *state;
	static char svcs[16384], pods[16384];
	static char job[2048];
	gang_job(job, sizeof(job), svcs, sizeof(svcs), pods, sizeof(pods), "gang1");
	e->jobs = job;
	e->services = svcs;
	e->pods = pods;
	e->nodes = "{\"metadata\":{\"name\":\"n1\"},\"spec\":{},\"status\":{\"allocatable\":"
	           "{\"cpu\":\"64\",\"memory\":\"256Gi\",\"pods\":\"110\"}}}";
	e->stream_jobs = true;
	struct reconciler_options ro = {TF_KINDS, .requeue_ms = 30000, .gang = true,
	                                .gang_bind_timeout_s = 15};
	e->rec = reconciler_new(e->base, e->client, &ro, msg, sizeof(msg));
	assert_non_null(e->rec);
	assert_int_equal(reconciler_start(e->rec), DRAKE_OK);
	assert_int_equal(run_until(e, POD_PATCH, 8, 10), 8); /* the wave is sent */
	assert_non_null(e->pod_watch);
	push_refused_ps(e, "gang1");
	assert_int_equal(run_until(e, "DELETE /api/v1/namespaces/default/pods/gang1-", 8, 5), 8);
	/* the API server deleted the wave's pods and has the refusal record on
	 * the TFJob */
	for (int i = 0; i < 8; i++) {
		/* each pod gone and already replaced, gated, when admission looks
		 * again: the wave's names never show a plan */
		push_gang_pod_event(e, "DELETED", "gang1", i);
		push_gang_pod_event(e, "ADDED", "gang1", i);
	}
	const char *key = "\"drake.dev/unschedulable\":\"";
	const char *v = strstr(e->bodies, key);
	assert_non_null(v);
	v += strlen(key);
	const char *end = v;
	while (*end && !(*end == '"' && end[-1] != '\\'))
		end++;
	assert_non_null(e->job_watch);
	struct evbuffer *b = evbuffer_new();
	evbuffer_add_printf(b, "{\"type\":\"MODIFIED\",\"object\":%.*s",
	                    (int)(strstr(job, "\"resourceVersion\"") - job), job);
	const char *rv = "\"resourceVersion\":\"3\"";
	assert_non_null(strstr(job, rv));
	evbuffer_add_printf(b,
	                    "\"annotations\":{\"drake.dev/unschedulable\":\"%.*s\"},"
	                    "\"resourceVersion\":\"12\"%s}\n",
	                    (int)(end - v), v, strstr(job, rv) + strlen(rv));
	evhttp_send_reply_chunk(e->job_watch, b);
	evbuffer_free(b);
	run_until(e, "no such write", 1, 1);
	char *jobs_json = reconciler_jobs_json(e->rec);
	assert_non_null(strstr(jobs_json, "\"job\":\"default/gang1\",\"status\":\"waiting\""));
	assert_non_null(strstr(jobs_json, "persistentvolumeclaim"));
	free(jobs_json);
}

/* ---- the partial-gang backstop ---- */

/* The plan an older drake wrote: gang-min a head count. */
#define GANG_ANN_MIN(min)                                                                          \
	",\"annotations\":{\"drake.dev/planned-node\":\"n1\",\"drake.dev/gang\":\"uid-job1.1\","   \
	"\"drake.dev/gang-size\":\"5\",\"drake.dev/gang-min\":\"" min "\"}"
#define GANG_ANN GANG_ANN_MIN("5")
/* OWNED with the gang annotations inside metadata */
#define GANG_POD(type, idx, spec)                                                                  \
	"{\"metadata\":{\"name\":\"job1-" type "-" #idx "\",\"namespace\":\"default\",\"uid\":"    \
	"\"uid-" type #idx "\",\"resourceVersion\":\"4\",\"labels\":{"                             \
	"\"training.kubeflow.org/job-name\":\"job1\",\"training.kubeflow.org/"                     \
	"replica-type\":\"" type "\",\"training.kubeflow.org/replica-index\":\"" #idx              \
	"\"},\"ownerReferences\":[{\"kind\":\"TFJob\",\"name\":\"job1\",\"uid\":\"uid-job1\","     \
	"\"controller\":true}]" GANG_ANN "}," spec "}"
#define BOUND   "\"spec\":{\"nodeName\":\"n1\"},\"status\":{\"phase\":\"Running\"}"
#define UNBOUND "\"spec\":{},\"status\":{\"phase\":\"Pending\"}"
/* job1's five pods, each BOUND or UNBOUND */
#define GANG_PODS(ps, w0, w1, w2, w3)                                                              \
	GANG_POD("ps", 0, ps)                                                                      \
	"," GANG_POD("worker", 0, w0) "," GANG_POD("worker", 1, w1) "," GANG_POD(                  \
	    "worker", 2, w2) "," GANG_POD("worker", 3, w3)
#define SVCS4                                                                                      \
	SVC("ps", 0)                                                                               \
	"," SVC("worker", 0) "," SVC("worker", 1) "," SVC("worker", 2) "," SVC("worker", 3)

/* Starts the controller on job1 with a 15 s barrier timeout, on a clock
 * that moves on step seconds per 100 ms slice of run_until: deadlines pass
 * without real-time waits. */
static void start_gang(struct env *e, double step)
{
	if (!*e->nodes) /* the test's own, or n1 */
		e->nodes =
		    "{\"metadata\":{\"name\":\"n1\"},\"spec\":{},\"status\":{\"allocatable\":"
		    "{\"cpu\":\"64\",\"memory\":\"256Gi\",\"pods\":\"110\"}}}";
	if (!e->clock)
		e->clock = 1767225600; /* 2026-01-01T00:00:00Z */
	e->step = step;
	struct reconciler_options ro = {
	    TF_KINDS,          .requeue_ms = e->requeue_ms ? e->requeue_ms : 100,
	    .gang = true,      .gang_bind_timeout_s = 15,
	    .scale = e->scale, .clock = test_clock,
	    .clock_arg = e};
	e->rec = reconciler_new(e->base, e->client, &ro, msg, sizeof(msg));
	assert_non_null(e->rec);
	assert_int_equal(reconciler_start(e->rec), DRAKE_OK);
}

/* A pod of job1 with the gang annotations, meta added to its metadata. */
#define GANG_POD_MM(type, idx, min, meta, spec)                                                    \
	"{\"metadata\":{\"name\":\"job1-" type "-" #idx "\",\"namespace\":\"default\",\"uid\":"    \
	"\"uid-" type #idx "\",\"resourceVersion\":\"4\"," meta ",\"labels\":{"                    \
	"\"training.kubeflow.org/job-name\":\"job1\",\"training.kubeflow.org/"                     \
	"replica-type\":\"" type "\",\"training.kubeflow.org/replica-index\":\"" #idx              \
	"\"},\"ownerReferences\":[{\"kind\":\"TFJob\",\"name\":\"job1\",\"uid\":\"uid-job1\","     \
	"\"controller\":true}]" GANG_ANN_MIN(min) "}," spec "}"
/* job1 (min-instances 1) with the head count 1 PS + 1 worker */
#define GANG_POD_M(type, idx, meta, spec) GANG_POD_MM(type, idx, "2", meta, spec)
#define NOMETA                            "\"generation\":1"
/* bound to n1 at 2025-12-31T23:58:20Z, 100 s before start_gang's clock */
#define BOUND_EARLY                                                                                \
	"\"spec\":{\"nodeName\":\"n1\"},\"status\":{\"phase\":\"Running\",\"conditions\":[{"       \
	"\"type\":\"PodScheduled\",\"status\":\"True\",\"lastTransitionTime\":"                    \
	"\"2025-12-31T23:58:20Z\"}]}"
#define WORKERS_EARLY                                                                              \
	GANG_POD_M("worker", 0, "\"creationTimestamp\":\"2025-12-31T23:58:00Z\"", BOUND_EARLY)     \
	"," GANG_POD_M(                                                                            \
	    "worker", 1, "\"creationTimestamp\":\"2025-12-31T23:58:00Z\"",                         \
	    BOUND_EARLY) "," GANG_POD_M("worker", 2,                                               \
	                                "\"creationTimestamp\":\"2025-12-31T23:58:00Z\"",          \
	                                BOUND_EARLY) "," GANG_POD_M("worker", 3,                   \
	                                                            "\"creationTimestamp\""        \
	                                                            ":\"2025-12-31T23:"            \
	                                                            "58:00Z\"",                    \
	                                                            BOUND_EARLY)

#define WITHOUT_PS                                                                                 \
	GANG_POD_M("ps", 0, NOMETA, UNBOUND)                                                       \
	"," GANG_POD_M("worker", 0, NOMETA, BOUND) "," GANG_POD_M(                                 \
	    "worker", 1, NOMETA, BOUND) "," GANG_POD_M("worker", 2, NOMETA,                        \
	                                               BOUND) "," GANG_POD_M("worker", 3, NOMETA,  \
	                                                                     BOUND)

#define DELETE_POD "DELETE /api/v1/namespaces/default/pods/job1-"

static void test_workers_left_without_their_ps_are_rolled_back_two_timeouts_later(void **state)
{
	struct env *e = *state;
	e->jobs = JOB("", 4);
	/* the PS was preempted and its replacement, admitted as a repair,
	 * cannot bind: four workers are well above the head count of two
	 * (1 PS + min-instances 1), but without their PS they cannot train */
	e->pods = WITHOUT_PS;
	e->services = SVCS4;
	start_gang(e, 1);                                    /* 1 s per slice */
	assert_int_equal(run_until(e, DELETE_POD, 1, 2), 0); /* 20 s: the repair's time */
	assert_true(run_until(e, DELETE_POD, 5, 2) >= 5);    /* past 30 s: rolled back */
	assert_non_null(strstr(e->writes, DELETE_POD "ps-0"));
	assert_non_null(strstr(e->writes, DELETE_POD "worker-3"));
	assert_non_null(strstr(e->bodies, "\"reason\":\"GangRolledBack\""));
	assert_non_null(strstr(e->bodies, "had 0 of the 1 ps it needs"));
	assert_non_null(strstr(e->bodies, "\"uid\":\"uid-worker3\"")); /* preconditions */
}

#define DELETE_GANG1 "DELETE /api/v1/namespaces/default/pods/gang1-"

static void
test_a_wave_that_waited_long_then_starts_binding_is_not_rolled_back_at_once(void **state)
{
	struct env *e = *state;
	static char jobs[2048], svcs[8192], pods[8192];
	gang_job(jobs, sizeof(jobs), svcs, sizeof(svcs), pods, sizeof(pods), "gang1");
	e->jobs = jobs;
	e->services = svcs;
	e->pods = pods;
	start_gang(e, 1); /* 1 s of the controller's clock per slice */
	assert_int_equal(run_until(e, POD_PATCH, 8, 10), 8);
	assert_non_null(e->pod_watch);
	/* admitted, and kube-scheduler binds nothing for 40 s (its queue is
	 * long): waiting, not partial, within the stuck deadline (60 s) */
	push_planned(e, "gang1", false);
	assert_int_equal(run_until(e, DELETE_GANG1, 1, 4), 0);
	/* then the barrier posts the PS first: the gang is partial for the
	 * milliseconds the workers' Bindings take. Its partial clock starts
	 * now, not when the wave started waiting 40 s ago. */
	push_planned_pod(e, "gang1", 0, true);
	assert_int_equal(run_until(e, DELETE_GANG1, 1, 1), 0);
	assert_null(strstr(e->bodies, "GangRolledBack"));
	for (int i = 1; i < 8; i++)
		push_planned_pod(e, "gang1", i, true);
	assert_int_equal(run_until(e, DELETE_GANG1, 1, 2), 0);
}

static void test_the_deadline_is_read_from_the_pods_so_a_restart_does_not_reset_it(void **state)
{
	struct env *e = *state;
	e->jobs = JOB("", 4);
	/* the PS was preempted and recreated 28 s ago (gated: its repair
	 * does not fit); its workers were bound long before. A drake
	 * started now owes the job 2 s, not 30. */
	e->pods = GANG_POD_M("ps", 0, "\"creationTimestamp\":\"2025-12-31T23:59:32Z\"",
	                     GATED_SPEC) "," WORKERS_EARLY;
	e->services = SVCS4;
	start_gang(e, 1);
	assert_true(run_until(e, DELETE_POD, 5, 1) >= 5); /* within 10 s */
	assert_non_null(strstr(e->bodies, "had 0 of the 1 ps it needs for 3"));
}

static void test_a_job_whose_workers_finish_at_different_times_is_not_rolled_back(void **state)
{
	struct env *e = *state;
	/* min-instances 2, max 4: worker 1 finished before worker 0, and the
	 * slots above the two admitted workers were never admitted */
	e->jobs = "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{"
	          "\"name\":\"job1\",\"namespace\":\"default\",\"uid\":\"uid-job1\","
	          "\"resourceVersion\":\"3\"},\"spec\":{\"max-instances\":4,\"min-instances\":2,"
	          "\"tfReplicaSpecs\":{\"PS\":{\"replicas\":1,\"template\":" TMPL "},"
	          "\"Worker\":{\"replicas\":2,\"template\":" TMPL "}}}}";
	e->pods = GANG_POD_MM("ps", 0, "3", NOMETA, BOUND) "," GANG_POD_MM(
	    "worker", 0, "3", NOMETA,
	    BOUND) "," GANG_POD_MM("worker", 1, "3", NOMETA,
	                           "\"spec\":{\"nodeName\":\"n1\"},\"status\":{\"phase\":"
	                           "\"Succeeded\"}") "," OWNED("Pod", "worker", 2,
	                                                       GATED) "," OWNED("Pod", "worker", 3,
	                                                                        GATED);
	e->services = SVCS4;
	start_gang(e, 5);
	assert_int_equal(run_until(e, "DELETE", 1, 2), 0); /* 100 s: three deadlines */
	assert_int_equal(count(e->bodies, "GangRolledBack"), 0);
}

static void test_a_member_stuck_terminating_on_a_lost_node_is_deleted_at_once(void **state)
{
	struct env *e = *state;
	e->jobs = JOB("", 4);
	/* the PS's node is gone: its pod stays Terminating, which blocks its
	 * recreation; the workers run on n1 */
	e->pods = GANG_POD_M("ps", 0,
	                     "\"creationTimestamp\":\"2025-12-31T23:50:00Z\","
	                     "\"deletionTimestamp\":"
	                     "\"2025-12-31T23:59:00Z\"",
	                     "\"spec\":{\"nodeName\":\"lost\"},\"status\":{\"phase\":"
	                     "\"Running\"}") "," WORKERS_EARLY;
	e->services = SVCS4;
	start_gang(e, 1);
	/* the PS at once, without waiting for its kubelet; and the workers,
	 * short of their PS for 60 s since it was deleted, go too */
	assert_true(run_until(e, DELETE_POD, 5, 1) >= 5);
	assert_non_null(strstr(e->writes, DELETE_POD "ps-0"));
	assert_non_null(strstr(e->bodies, "\"gracePeriodSeconds\":0"));
	assert_non_null(strstr(e->bodies, "\"reason\":\"GangMemberForceDeleted\""));
	assert_non_null(strstr(e->bodies, "\"reason\":\"GangRolledBack\""));
}

/* Sends one watch event for job1's pod type-idx of uid (the rest of the
 * object: tail, which closes it). */
static void push_pod_event(struct env *e, const char *event, const char *type, int idx,
                           const char *uid, const char *rv, const char *tail)
{
	struct evbuffer *b = evbuffer_new();
	evbuffer_add_printf(b,
	                    "{\"type\":\"%s\",\"object\":{\"metadata\":{\"name\":\"job1-%s-%d\","
	                    "\"namespace\":\"default\",\"uid\":\"%s\",\"resourceVersion\":\"%s\","
	                    "\"labels\":{\"training.kubeflow.org/job-name\":\"job1\","
	                    "\"training.kubeflow.org/replica-type\":\"%s\","
	                    "\"training.kubeflow.org/replica-index\":\"%d\"},\"ownerReferences\":[{"
	                    "\"kind\":\"TFJob\",\"name\":\"job1\",\"uid\":\"uid-job1\","
	                    "\"controller\":true}]},%s}}\n",
	                    event, type, idx, uid, rv, type, idx, tail);
	evhttp_send_reply_chunk(e->pod_watch, b);
	evbuffer_free(b);
}

#define POST_POD "POST /api/v1/namespaces/default/pods\n"
#define TERMINATING(idx)                                                                           \
	GANG_POD_M("worker", idx,                                                                  \
	           "\"creationTimestamp\":\"2025-12-31T23:58:00Z\",\"deletionTimestamp\":"         \
	           "\"2025-12-31T23:59:59Z\"",                                                     \
	           BOUND)

static void test_members_that_vanish_after_a_create_do_not_hold_back_their_recreation(void **state)
{
	struct env *e = *state;
	e->jobs = JOB("", 4);
	/* a roll back: the gated PS is gone at once, the four bound workers
	 * are still terminating */
	e->pods = TERMINATING(0) "," TERMINATING(1) "," TERMINATING(2) "," TERMINATING(3);
	e->services = SVCS4;
	start_gang(e, 0.1); /* the clock moves with the wall */
	assert_int_equal(run_until(e, POST_POD, 1, 2), 1);
	assert_non_null(e->pod_watch);
	/* the caches show the new PS, and the workers gone: the pass that
	 * follows recreates them at once, not when the expectation times out
	 * (30 s) */
	push_pod_event(e, "ADDED", "ps", 0, "uid-ps0-new", "30", GATED_SPEC);
	for (int i = 0; i < 4; i++) {
		char uid[32];
		snprintf(uid, sizeof(uid), "uid-worker%d", i);
		push_pod_event(e, "DELETED", "worker", i, uid, "31", BOUND);
	}
	assert_int_equal(run_until(e, POST_POD, 5, 3), 5);
	assert_int_equal(count(e->writes, POST_POD), 5); /* and none twice */
}

static void test_a_replacement_deleted_before_a_pass_sees_it_is_created_again_at_once(void **state)
{
	struct env *e = *state;
	e->jobs = JOB("", 4);
	/* the PS was preempted: its workers run on n1 */
	e->pods = WORKERS_EARLY;
	e->services = SVCS4;
	start_gang(e, 0.1); /* the clock moves with the wall */
	assert_int_equal(run_until(e, POST_POD, 1, 2), 1);
	assert_non_null(e->pod_watch);
	/* kwok's second delete of the old PS's name takes the replacement:
	 * the caches get its add and its delete together, and never show it */
	push_pod_event(e, "ADDED", "ps", 0, "uid-ps0-new", "30", GATED_SPEC);
	push_pod_event(e, "DELETED", "ps", 0, "uid-ps0-new", "31", GATED_SPEC);
	assert_int_equal(run_until(e, POST_POD, 2, 3), 2); /* not 30 s later */
}

static void test_a_replacement_the_caches_never_show_does_not_hold_back_the_roll_back(void **state)
{
	struct env *e = *state;
	e->jobs = JOB("", 4);
	/* the PS was preempted; its replacement is created, but the caches
	 * never show it (the fake server sends no events): the expectation
	 * stays open, and the workers still go two barrier timeouts later */
	e->pods = WORKERS_EARLY;
	e->services = SVCS4;
	start_gang(e, 1); /* 1 s per slice */
	assert_int_equal(run_until(e, POST_POD, 1, 1), 1);
	assert_true(run_until(e, DELETE_POD "worker", 4, 5) >= 4);
	assert_non_null(strstr(e->bodies, "\"reason\":\"GangRolledBack\""));
}

static void test_a_wave_that_no_longer_fits_is_released_after_the_deadline(void **state)
{
	struct env *e = *state;
	e->jobs = JOB("", 4);
	/* admitted, and none of it ever bound (its node was cordoned) */
	e->pods = GANG_PODS(UNBOUND, UNBOUND, UNBOUND, UNBOUND, UNBOUND);
	e->services = SVCS4;
	start_gang(e, 2);                                    /* the deadline: four timeouts, 60 s */
	assert_int_equal(run_until(e, DELETE_POD, 1, 2), 0); /* 40 s */
	assert_true(run_until(e, DELETE_POD, 5, 2) >= 5);
	assert_non_null(strstr(e->bodies, "\"reason\":\"GangReleased\""));
}

static void test_a_job_waiting_in_the_queue_is_left_alone(void **state)
{
	struct env *e = *state;
	e->jobs = JOB("", 4);
	/* gated, never admitted: it waits for capacity, for as long as it takes */
	e->pods = OWNED("Pod", "ps", 0, GATED) "," OWNED("Pod", "worker", 0, GATED) "," OWNED(
	    "Pod", "worker", 1, GATED) "," OWNED("Pod", "worker", 2,
	                                         GATED) "," OWNED("Pod", "worker", 3, GATED);
	e->services = SVCS4;
	start_gang(e, 10);
	assert_int_equal(run_until(e, "DELETE", 1, 1), 0); /* 100 s: over six deadlines */
}

static void test_a_bound_chief_counts_toward_the_gang_minimum(void **state)
{
	struct env *e = *state;
	/* PS, chief and workers 0-2 bound (gang-min 5); worker 3 waits gated
	 * for a scale-up: the gang is at its minimum, not partial */
	e->jobs = "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{"
	          "\"name\":\"job1\",\"namespace\":\"default\",\"uid\":\"uid-job1\","
	          "\"resourceVersion\":\"3\"},\"spec\":{\"max-instances\":4,\"min-instances\":3,"
	          "\"tfReplicaSpecs\":{\"PS\":{\"replicas\":1,\"template\":" TMPL "},"
	          "\"Chief\":{\"replicas\":1,\"template\":" TMPL "},"
	          "\"Worker\":{\"replicas\":4,\"template\":" TMPL "}}}}";
	e->pods = GANG_POD("ps", 0, BOUND) "," GANG_POD("chief", 0, BOUND) "," GANG_POD(
	    "worker", 0, BOUND) "," GANG_POD("worker", 1,
	                                     BOUND) "," GANG_POD("worker", 2,
	                                                         BOUND) "," OWNED("Pod", "worker",
	                                                                          3, GATED);
	e->services = SVCS4 "," SVC("chief", 0);
	start_gang(e, 10);
	assert_int_equal(run_until(e, "DELETE", 1, 1), 0); /* 100 s: over six deadlines */
}

static void test_a_gang_bound_whole_or_not_at_all_is_left_alone(void **state)
{
	struct env *e = *state;
	e->jobs = JOB("", 4);
	/* all bound: nothing to roll back; a repair member waiting beside a
	 * gang still at its minimum is not partial either */
	e->pods = GANG_PODS(BOUND, BOUND, BOUND, BOUND, BOUND);
	e->services = SVCS4;
	start_gang(e, 10);
	assert_int_equal(run_until(e, "DELETE", 1, 1), 0); /* 100 s: over six deadlines */
	assert_int_equal(count(e->bodies, "GangRolledBack"), 0);
}

static void test_a_node_left_out_of_the_snapshot_is_shown_in_the_jobs_view(void **state)
{
	struct env *e = *state;
	e->jobs = JOB("", 4);
	e->pods = OWNED("Pod", "ps", 0, GATED) "," OWNED("Pod", "worker", 0, GATED) "," OWNED(
	    "Pod", "worker", 1, GATED) "," OWNED("Pod", "worker", 2,
	                                         GATED) "," OWNED("Pod", "worker", 3, GATED);
	e->services = SVCS4;
	e->nodes = "{\"metadata\":{\"name\":\"bad\"},\"spec\":{},\"status\":{\"allocatable\":"
	           "{\"cpu\":\"lots\",\"memory\":\"256Gi\"}}}";
	struct reconciler_options ro = {TF_KINDS, .requeue_ms = 100, .gang = true};
	e->rec = reconciler_new(e->base, e->client, &ro, msg, sizeof(msg));
	assert_non_null(e->rec);
	assert_int_equal(reconciler_start(e->rec), DRAKE_OK);
	run_until(e, "never", 1, 1);
	char *json = reconciler_jobs_json(e->rec);
	assert_non_null(json);
	assert_non_null(strstr(json, "\"nodesLeftOut\":[{\"node\":\"bad\",\"why\":"));
	assert_non_null(strstr(json, "lots"));
	free(json);
}

/* A report that turns a running job's class to converged starts no round;
 * GET /v1/jobs still marks the job slow at once, as the class it shows. */
static void test_the_jobs_view_marks_a_job_slow_with_the_class_it_shows(void **state)
{
	struct env *e = *state;
	e->jobs = JOB("", 4);
	e->pods = GANG_PODS(BOUND, BOUND, BOUND, BOUND, BOUND);
	e->services = SVCS4;
	start_gang(e, 10);
	run_until(e, "never", 1, 1);
	char *json = reconciler_jobs_json(e->rec);
	assert_non_null(json);
	assert_non_null(strstr(json, "{\"job\":\"default/job1\""));
	assert_null(strstr(json, "\"slow\""));
	free(json);
	/* a migration of its replicas is authorised against its kind */
	assert_string_equal(reconciler_pod_resource(e->rec, "default", "job1-worker-0"), "tfjobs");
	assert_null(reconciler_pod_resource(e->rec, "default", "job9-worker-0"));
	/* the accuracy climbs for 12 reports, then is flat: window 10 (the
	 * default) slows it on the 10th flat report, converges it on the 11th */
	char why[256];
	for (int i = 0; i < 23; i++) {
		double v = i < 12 ? 0.05 * (i + 1) : 0.6;
		assert_int_equal(reconciler_progress(e->rec, "default", "job1-worker-0", NULL,
		                                     100 * i, v, false, 0, 1000 + i, why,
		                                     sizeof(why)),
		                 DRAKE_OK);
		json = reconciler_jobs_json(e->rec);
		assert_non_null(json);
		bool slow = strstr(json, "\"slow\":true") != NULL;
		bool shown = strstr(json, "\"class\":\"slowing\"") ||
		             strstr(json, "\"class\":\"converged\"");
		assert_int_equal(slow, shown);
		if (i == 22)
			assert_non_null(strstr(json, "\"class\":\"converged\""));
		free(json);
	}
}

static void test_a_member_terminating_on_a_ready_node_is_left_to_its_kubelet(void **state)
{
	struct env *e = *state;
	e->jobs = JOB("", 4);
	/* the PS takes its time to shut down (a long grace period) on a node
	 * that is Ready: its kubelet will finish the job */
	e->nodes = "{\"metadata\":{\"name\":\"n1\"},\"spec\":{},\"status\":{\"allocatable\":"
	           "{\"cpu\":\"64\",\"memory\":\"256Gi\",\"pods\":\"110\"},\"conditions\":[{"
	           "\"type\":\"Ready\",\"status\":\"True\"}]}}";
	e->pods = GANG_POD_M("ps", 0,
	                     "\"creationTimestamp\":\"2025-12-31T23:50:00Z\","
	                     "\"deletionTimestamp\":\"2025-12-31T23:59:00Z\"",
	                     BOUND) "," WORKERS_EARLY;
	e->services = SVCS4;
	start_gang(e, 5);
	run_until(e, "never", 1, 2); /* 100 s: past every deadline */
	assert_null(strstr(e->bodies, "\"gracePeriodSeconds\":0"));
	assert_null(strstr(e->bodies, "GangMemberForceDeleted"));
	/* the workers, short of their PS, are still rolled back */
	assert_non_null(strstr(e->bodies, "\"reason\":\"GangRolledBack\""));
}

/* ---- the chief is a gang member, the evaluator is not ---- */

/* Every replica asks for one CPU. */
#define TMPL_CPU                                                                                   \
	"{\"spec\":{\"containers\":[{\"name\":\"tensorflow\",\"image\":\"tf\",\"resources\":{"     \
	"\"limits\":{\"cpu\":\"1\"}}}]}}"
#define RS(type) "\"" type "\":{\"replicas\":1,\"template\":" TMPL_CPU "}"
#define JOB_CHIEF                                                                                  \
	"{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"job1\","  \
	"\"namespace\":\"default\",\"uid\":\"uid-job1\",\"resourceVersion\":\"3\"},\"spec\":{"     \
	"\"runPolicy\":{},\"tfReplicaSpecs\":{" RS("PS") "," RS("Chief") "," RS("Worker") "," RS(  \
	    "Evaluator") "}}}"
#define CHIEF_PODS                                                                                 \
	OWNED("Pod", "ps", 0, GATED)                                                               \
	"," OWNED("Pod", "chief", 0, GATED) "," OWNED("Pod", "worker", 0, GATED) "," OWNED(        \
	    "Pod", "evaluator", 0, GATED)
#define CHIEF_SVCS SVC("ps", 0) "," SVC("chief", 0) "," SVC("worker", 0) "," SVC("evaluator", 0)

/* job1 of one PS, chief, worker and evaluator, on one node of `cpus` CPUs. */
static void start_chief_job(struct env *e, int cpus)
{
	static char node[256];
	snprintf(node, sizeof(node),
	         "{\"metadata\":{\"name\":\"n1\"},\"spec\":{},\"status\":{\"allocatable\":{"
	         "\"cpu\":\"%d\",\"memory\":\"256Gi\",\"pods\":\"110\"}}}",
	         cpus);
	e->jobs = JOB_CHIEF;
	e->pods = CHIEF_PODS;
	e->services = CHIEF_SVCS;
	e->nodes = node;
	struct reconciler_options ro = {TF_KINDS, .requeue_ms = 100, .gang = true,
	                                .gang_bind_timeout_s = 15};
	e->rec = reconciler_new(e->base, e->client, &ro, msg, sizeof(msg));
	assert_non_null(e->rec);
	assert_int_equal(reconciler_start(e->rec), DRAKE_OK);
}

static void
test_with_gang_admission_the_chief_waits_for_a_plan_and_the_evaluator_does_not(void **state)
{
	struct env *e = *state;
	start_chief_job(e, 2); /* room for the PS and the worker, not the chief too */
	assert_true(run_until(e, POD_PATCH "job1-evaluator-0\n", 1, 5) >= 1);
	assert_int_equal(run_until(e, POD_PATCH "job1-chief-0\n", 1, 1), 0); /* ten passes */
	/* every pod write is the evaluator's (repeated: the fake API server
	 * sends no watch event, so each pass sees it gated again) */
	assert_int_equal(count(e->writes, POD_PATCH),
	                 count(e->writes, POD_PATCH "job1-evaluator-0\n"));
}

/* job1 with drake.dev/migrations recording worker-2's move from n1 to n2,
 * started at the test clock, of the pod with uid `uid`. */
#define JOB_MOVING(uid)                                                                            \
	"{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"job1\","  \
	"\"namespace\":\"default\",\"uid\":\"uid-job1\",\"resourceVersion\":\"3\","                \
	"\"annotations\":{"                                                                        \
	"\"drake.dev/migrations\":\"{\\\"counts\\\":{\\\"worker-2\\\":{\\\"n\\\":1,\\\"last\\\":"  \
	"1767225600}},\\\"moving\\\":{\\\"replica\\\":\\\"worker-2\\\",\\\"from\\\":\\\"n1\\\","   \
	"\\\"to\\\":"                                                                              \
	"\\\"n2\\\",\\\"uid\\\":\\\"" uid                                                          \
	"\\\",\\\"at\\\":1767225600,\\\"reason\\\":\\\"test\\\","                                  \
	"\\\"by\\\":\\\"policy\\\"}}\"}},\"spec\":{\"max-instances\":4,\"min-instances\":1,"       \
	"\"tfReplicaSpecs\":{\"PS\":{\"replicas\":1,\"restartPolicy\":\"OnFailure\","              \
	"\"template\":" TMPL                                                                       \
	"},\"Worker\":{\"replicas\":4,\"restartPolicy\":\"OnFailure\",\"template\":" TMPL "}}}}"

static void test_a_move_in_flight_deletes_the_pod_the_record_names(void **state)
{
	struct env *e = *state;
	/* drake restarted after recording the move: the pod with the recorded
	 * uid is still on n1, and is deleted (by that uid, so never its
	 * replacement) */
	e->jobs = JOB_MOVING("uid-worker2");
	e->pods = GANG_PODS(BOUND, BOUND, BOUND, BOUND, BOUND);
	e->services = SVCS4;
	start_gang(e, 1);
	assert_true(run_until(e, DELETE_POD "worker-2", 1, 3) >= 1);
	assert_non_null(strstr(e->bodies, "\"uid\":\"uid-worker2\""));
	/* nothing else: a pass that ran again before the loop stopped repeats
	 * the same delete (the fake server sends no watch event for it) */
	assert_int_equal(count(e->writes, DELETE_POD), count(e->writes, DELETE_POD "worker-2\n"));
}

static void test_a_move_ends_once_another_pod_of_that_name_is_bound(void **state)
{
	struct env *e = *state;
	/* the pod the record names (uid-old) is gone; worker-2 now is a new
	 * pod, bound: the record is cleared and the move reported */
	e->jobs = JOB_MOVING("uid-old");
	e->pods = GANG_PODS(BOUND, BOUND, BOUND, BOUND, BOUND);
	e->services = SVCS4;
	start_gang(e, 1);
	assert_true(
	    run_until(e, "PATCH /apis/kubeflow.org/v1/namespaces/default/tfjobs/job1", 1, 3) >= 1);
	run_until(e, "\"reason\":\"Migrated\"", 1, 2);
	assert_non_null(strstr(e->bodies, "\\\"moving\\\":null"));
	assert_non_null(strstr(e->bodies, "\"reason\":\"Migrated\""));
	assert_non_null(strstr(e->bodies, "worker-2 moved from n1 to n1 (planned: n2)"));
	assert_null(strstr(e->writes, DELETE_POD));
}

static void test_admission_ungates_the_chief_in_the_wave_of_its_ps_and_workers(void **state)
{
	struct env *e = *state;
	start_chief_job(e, 3);
	assert_int_equal(run_until(e, POD_PATCH "job1-chief-0\n", 1, 5), 1);
	run_until(e, POD_PATCH "job1-worker-0\n", 1, 5);
	/* PS, chief and worker: one wave of three, all three needed */
	assert_int_equal(count(e->bodies, "\"drake.dev/gang-size\":\"3\""), 3);
	assert_int_equal(count(e->bodies, "\"drake.dev/gang-min\":\"3\""), 3);
}

/* ---- the migration policy on the controller (--migrate) ---- */

#define GPU_RES                                                                                    \
	"\"resources\":{\"requests\":{\"cpu\":\"4\",\"memory\":\"16Gi\",\"nvidia.com/"             \
	"gpu\":\"1\"}}"
#define GPU_TMPL                                                                                   \
	"{\"spec\":{\"containers\":[{\"name\":\"tensorflow\",\"image\":\"tf\"," GPU_RES "}]}}"
#define JOB_GPU                                                                                    \
	"{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"job1\","  \
	"\"namespace\":\"default\",\"uid\":\"uid-job1\",\"resourceVersion\":\"3\"},\"spec\":{"     \
	"\"max-instances\":4,\"min-instances\":1,\"tfReplicaSpecs\":{\"PS\":{\"replicas\":1,"      \
	"\"restartPolicy\":\"OnFailure\",\"template\":" TMPL "},\"Worker\":{\"replicas\":4,"       \
	"\"restartPolicy\":\"OnFailure\",\"template\":" GPU_TMPL "}}}}"
/* a pod of job1 bound to node, a one-GPU worker's requests when gpu */
#define ON(node, gpu)                                                                              \
	"\"spec\":{\"nodeName\":\"" node "\",\"containers\":[{\"name\":\"tensorflow\",\"image\":"  \
	"\"tf\"" gpu "}]},\"status\":{\"phase\":\"Running\"}"
#define WITH_GPU "," GPU_RES
#define GPU_NODE(name)                                                                             \
	"{\"metadata\":{\"name\":\"" name "\"},\"spec\":{},\"status\":{\"allocatable\":{\"cpu\":"  \
	"\"32\",\"memory\":\"128Gi\",\"nvidia.com/gpu\":\"8\",\"pods\":\"110\"}}}"
/* a pod drake does not move, on n1: six GPUs */
#define FILLER                                                                                     \
	"{\"metadata\":{\"name\":\"filler\",\"namespace\":\"default\",\"uid\":\"uid-filler\","     \
	"\"resourceVersion\":\"4\"},\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"name\":"      \
	"\"c\",\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":\"24\",\"memory\":\"96Gi\","   \
	"\"nvidia.com/gpu\":\"6\"}}}]},\"status\":{\"phase\":\"Running\"}}"
#define TFJOB_PATCH "PATCH /apis/kubeflow.org/v1/namespaces/default/tfjobs/job1\n"

static void start_migrating(struct env *e)
{
	e->jobs = JOB_GPU;
	e->services = SVCS4;
	e->nodes = GPU_NODE("n1") "," GPU_NODE("n2") "," GPU_NODE("n3") "," GPU_NODE("n4");
	e->clock = 1767225600;
	e->step = 1;
	struct reconciler_options ro = {
	    TF_KINDS,        .requeue_ms = 100,    .gang = true,        .gang_bind_timeout_s = 15,
	    .migrate = true, .node_metrics_s = 10, .clock = test_clock, .clock_arg = e};
	e->rec = reconciler_new(e->base, e->client, &ro, msg, sizeof(msg));
	assert_non_null(e->rec);
	assert_int_equal(reconciler_start(e->rec), DRAKE_OK);
}

/* worker-3 alone on n1 beside a pod of six GPUs; the PS and the other
 * workers on n2 */
#define LONELY_WORKER_3                                                                            \
	GANG_POD("ps", 0, ON("n2", ""))                                                            \
	"," GANG_POD("worker", 0, ON("n2", WITH_GPU)) "," GANG_POD(                                \
	    "worker", 1,                                                                           \
	    ON("n2", WITH_GPU)) "," GANG_POD("worker", 2,                                          \
	                                     ON("n2",                                              \
	                                        WITH_GPU)) "," GANG_POD("worker", 3,               \
	                                                                ON("n1",                   \
	                                                                   WITH_GPU)) "," FILLER

static void test_the_policy_moves_a_lonely_worker_off_a_hot_shared_node_onto_its_ps(void **state)
{
	struct env *e = *state;
	/* worker-3 alone on n1 beside a pod of six GPUs; the PS and the other
	 * workers on n2 */
	e->pods = LONELY_WORKER_3;
	start_migrating(e);
	assert_true(run_until(e, TFJOB_PATCH, 1, 5) >= 1);
	assert_non_null(
	    strstr(e->bodies, "\\\"replica\\\":\\\"worker-3\\\",\\\"to\\\":\\\"n2\\\""));
	assert_non_null(strstr(e->bodies, "moving worker-3 from n1 to n2 (n1 is overloaded"));
	assert_non_null(strstr(e->bodies, "\"reason\":\"MigrationStarted\""));
}

static void test_the_policy_leaves_a_packed_job_beside_a_hot_pod_alone(void **state)
{
	struct env *e = *state;
	/* the same, with worker-3 beside its PS: every move would spread job1 */
	e->pods =
	    GANG_POD("ps", 0, ON("n1", "")) "," GANG_POD("worker", 0, ON("n1", WITH_GPU)) "," GANG_POD(
	        "worker", 1,
	        ON("n2",
	           WITH_GPU)) "," GANG_POD("worker", 2,
	                                   ON("n2",
	                                      WITH_GPU)) "," GANG_POD("worker", 3,
	                                                              ON("n2",
	                                                                 WITH_GPU)) "," FILLER;
	start_migrating(e);
	assert_int_equal(run_until(e, TFJOB_PATCH, 1, 3), 0);
	assert_null(strstr(e->bodies, "MigrationStarted"));
}

/* a pod drake does not move, on n1: one CPU and 1Gi, no GPU */
#define SMALL_FILLER                                                                               \
	"{\"metadata\":{\"name\":\"filler\",\"namespace\":\"default\",\"uid\":\"uid-filler\","     \
	"\"resourceVersion\":\"4\"},\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"name\":"      \
	"\"c\",\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}}]}" \
	","                                                                                        \
	"\"status\":{\"phase\":\"Running\"}}"
#define NODE_METRICS(name, cpu, mem)                                                               \
	"{\"metadata\":{\"name\":\"" name "\"},\"timestamp\":\"2026-01-01T00:00:00Z\","            \
	"\"window\":\"20s\",\"usage\":{\"cpu\":\"" cpu "\",\"memory\":\"" mem "\"}}"
/* worker-3 alone on n1 beside a small pod: by requests n1 is not hot */
#define LONELY_BESIDE_SMALL                                                                        \
	GANG_POD("ps", 0, ON("n2", ""))                                                            \
	"," GANG_POD("worker", 0, ON("n2", WITH_GPU)) "," GANG_POD(                                \
	    "worker", 1,                                                                           \
	    ON("n2",                                                                               \
	       WITH_GPU)) "," GANG_POD("worker", 2,                                                \
	                               ON("n2",                                                    \
	                                  WITH_GPU)) "," GANG_POD("worker", 3,                     \
	                                                          ON("n1",                         \
	                                                             WITH_GPU)) "," SMALL_FILLER

static void test_without_a_metrics_api_load_is_requests_alone(void **state)
{
	struct env *e = *state;
	e->pods = LONELY_BESIDE_SMALL;
	start_migrating(e);
	assert_int_equal(run_until(e, TFJOB_PATCH, 1, 3), 0);
	assert_null(strstr(e->bodies, "MigrationStarted"));
	/* asked once: a 404 is asked again ten intervals (100 s) later */
	assert_int_equal(e->metrics_gets, 1);
}

static void test_measured_usage_makes_a_node_hot_that_requests_do_not(void **state)
{
	struct env *e = *state;
	/* n1's pods burst to 30 CPUs and 120Gi; a malformed item is skipped */
	e->pods = LONELY_BESIDE_SMALL;
	e->node_metrics = NODE_METRICS("n1", "30", "120Gi") "," NODE_METRICS(
	    "n2", "2500m", "8Gi") ",{\"metadata\":{\"name\":\"n3\"},\"usage\":{\"cpu\":\"lots\"}}";
	start_migrating(e);
	assert_true(run_until(e, TFJOB_PATCH, 1, 5) >= 1);
	assert_non_null(
	    strstr(e->bodies, "\\\"replica\\\":\\\"worker-3\\\",\\\"to\\\":\\\"n2\\\""));
	assert_non_null(strstr(e->bodies, "moving worker-3 from n1 to n2 (n1 is overloaded (load "
	                                  "0.67 measured"));
}

static void test_one_round_decodes_each_tfjob_once_for_admission_and_migration(void **state)
{
	struct env *e = *state;
	/* the lonely worker of the policy test: the round's migration step
	 * runs, and moves it, over the world admission read */
	e->pods = LONELY_WORKER_3;
	start_migrating(e);
	assert_true(run_until(e, TFJOB_PATCH, 1, 5) >= 1);
	assert_non_null(strstr(e->bodies, "\"reason\":\"MigrationStarted\""));
	assert_true(calls.rounds >= 1);
	assert_int_equal(calls.round_decodes, 1); /* one TFJob, one decode, one snapshot */
	assert_int_equal(calls.snapshots, 0);     /* none but the worlds' */
}

static void test_the_replan_reads_the_last_rounds_snapshot_and_builds_one_before_any(void **state)
{
	struct env *e = *state;
	/* job1 bound on n2, worker-3 planned on n1, which kube-scheduler no
	 * longer offers; n3 and n4 are empty */
	e->pods = LONELY_WORKER_3;
	e->jobs = JOB_GPU;
	e->services = SVCS4;
	e->nodes = GPU_NODE("n1") "," GPU_NODE("n2") "," GPU_NODE("n3") "," GPU_NODE("n4");
	e->clock = 1767225600;
	e->step = 1;
	struct reconciler_options ro = {TF_KINDS,
	                                .requeue_ms = 100,
	                                .gang = true,
	                                .standby = true, /* caches, no pass */
	                                .gang_bind_timeout_s = 15,
	                                .clock = test_clock,
	                                .clock_arg = e};
	e->rec = reconciler_new(e->base, e->client, &ro, msg, sizeof(msg));
	assert_non_null(e->rec);
	assert_int_equal(reconciler_start(e->rec), DRAKE_OK);
	run_until(e, "never", 1, 1);
	assert_true(reconciler_synced(e->rec));
	const char *cand[] = {"n3", "n4"};
	char node[64] = "", why[256] = "";
	assert_int_equal(calls.worlds, 0);
	assert_true(reconciler_replan(e->rec, "default", "job1-worker-3", cand, 2, node,
	                              sizeof(node), why, sizeof(why)));
	assert_string_equal(node, "n3");
	assert_int_equal(calls.snapshots, 1); /* no round yet: a snapshot of its own */
	reconciler_lead(e->rec);
	run_until(e, "never", 1, 1);
	assert_true(calls.rounds >= 1);
	node[0] = '\0';
	assert_true(reconciler_replan(e->rec, "default", "job1-worker-3", cand, 2, node,
	                              sizeof(node), why, sizeof(why)));
	assert_string_equal(node, "n3");
	assert_int_equal(calls.snapshots, 1); /* the round's, kept */
	/* no candidate it knows: why names the snapshot it read */
	const char *full[] = {"n9"};
	assert_false(reconciler_replan(e->rec, "default", "job1-worker-0", full, 1, node,
	                               sizeof(node), why, sizeof(why)));
	assert_non_null(strstr(why, "snapshot of round"));
}

/* a gated pod of job1 asking for a worker's GPU */
#define GATED_GPU                                                                                  \
	",\"spec\":{\"schedulingGates\":[{\"name\":\"drake.dev/"                                   \
	"gang\"}],\"containers\":[{\"name\":"                                                      \
	"\"tensorflow\",\"image\":\"tf\"," GPU_RES "}]},\"status\":{\"phase\":\"Pending\"}"
/* an admitted member of another job, planned on n0 (gone), of five GPUs */
#define FIVE_GPUS_PLANNED_ON_N0                                                                    \
	"{\"metadata\":{\"name\":\"big-worker-0\",\"namespace\":\"default\",\"uid\":\"uid-big\","  \
	"\"resourceVersion\":\"4\",\"annotations\":{\"drake.dev/planned-node\":\"n0\"},"           \
	"\"ownerReferences\":[{\"kind\":\"TFJob\",\"name\":\"big\",\"uid\":\"uid-bigjob\","        \
	"\"controller\":true}]},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"x\","        \
	"\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\",\"nvidia.com/gpu\":"        \
	"\"5\"}}}]},\"status\":{\"phase\":\"Pending\"}}"

static void test_the_kept_snapshot_charges_the_rounds_own_waves_where_planned(void **state)
{
	struct env *e = *state;
	/* job1's five gated pods (four one-GPU workers) go as one wave onto
	 * n1, the only node (8 GPUs); the cache never shows their plan */
	e->jobs = JOB_GPU;
	e->services = SVCS4;
	e->pods = OWNED("Pod", "ps", 0, GATED) "," OWNED("Pod", "worker", 0, GATED_GPU) "," OWNED(
	    "Pod", "worker", 1,
	    GATED_GPU) "," OWNED("Pod", "worker", 2,
	                         GATED_GPU) "," OWNED("Pod", "worker", 3,
	                                              GATED_GPU) "," FIVE_GPUS_PLANNED_ON_N0;
	e->nodes = GPU_NODE("n1");
	start_gang(e, 0.1);
	assert_int_equal(run_until(e, POD_PATCH, 5, 5), 5);
	assert_true(calls.rounds >= 1);
	/* five GPUs do not fit beside the wave's four: the re-plan says so,
	 * as it would once the cache shows the wave's plan */
	const char *cand[] = {"n1"};
	char node[64] = "", why[256] = "";
	assert_false(reconciler_replan(e->rec, "default", "big-worker-0", cand, 1, node,
	                               sizeof(node), why, sizeof(why)));
	assert_non_null(strstr(why, "room"));
}

/* ---- a wave admitted into room its round frees (wave_room.h) ---- */

/* An elastic TFJob in namespace ml: a PS and `workers` one-GPU workers,
 * min..max. */
static void elastic_job(char *out, size_t n, const char *name, const char *created, int workers,
                        int min, int max)
{
	snprintf(
	    out, n,
	    "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{"
	    "\"name\":\"%s\",\"namespace\":\"ml\",\"uid\":\"uid-%s\",\"creationTimestamp\":"
	    "\"%s\",\"resourceVersion\":\"3\"},\"spec\":{\"min-instances\":%d,"
	    "\"max-instances\":%d,\"tfReplicaSpecs\":{\"PS\":{\"replicas\":1,\"template\":" TMPL
	    "},\"Worker\":{\"replicas\":%d,\"template\":" GPU_TMPL "}}}}",
	    name, name, created, min, max, workers);
}

/* Appends (after a comma when out is not empty) replica type/idx of job:
 * bound to node in wave uid-<job>.1 of gang_size pods, or gated (node
 * NULL); gpu: a worker's one GPU. */
static void job_pod(char *out, size_t n, const char *job, const char *type, int idx,
                    const char *node, int gang_size)
{
	size_t at = strlen(out);
	char ann[256] = "";
	if (node)
		snprintf(
		    ann, sizeof(ann),
		    ",\"annotations\":{\"drake.dev/planned-node\":\"%s\",\"drake.dev/gang\":"
		    "\"uid-%s.1\",\"drake.dev/gang-size\":\"%d\",\"drake.dev/gang-min\":\"%d\"}",
		    node, job, gang_size, gang_size);
	char spec[512];
	const char *res = strcmp(type, "ps") ? "," GPU_RES : "";
	if (node)
		snprintf(spec, sizeof(spec),
		         "\"spec\":{\"nodeName\":\"%s\",\"containers\":[{\"name\":\"tensorflow\","
		         "\"image\":\"tf\"%s}]},\"status\":{\"phase\":\"Running\"}",
		         node, res);
	else
		snprintf(spec, sizeof(spec),
		         "\"spec\":{\"schedulingGates\":[{\"name\":\"drake.dev/gang\"}],"
		         "\"containers\":[{\"name\":\"tensorflow\",\"image\":\"tf\"%s}]},"
		         "\"status\":{\"phase\":\"Pending\"}",
		         res);
	snprintf(
	    out + at, n - at,
	    "%s{\"metadata\":{\"name\":\"%s-%s-%d\",\"namespace\":\"ml\",\"uid\":"
	    "\"uid-%s-%s%d\",\"resourceVersion\":\"4\",\"labels\":{"
	    "\"training.kubeflow.org/job-name\":\"%s\",\"training.kubeflow.org/replica-type\":"
	    "\"%s\",\"training.kubeflow.org/replica-index\":\"%d\"},\"ownerReferences\":[{"
	    "\"kind\":\"TFJob\",\"name\":\"%s\",\"uid\":\"uid-%s\",\"controller\":true}]%s},%s}",
	    at ? "," : "", job, type, idx, job, type, idx, job, type, idx, job, job, ann, spec);
}

/* run holds six of n1's eight GPUs (6 workers, min 2); late, created long
 * before, needs a PS and four workers: the round takes run's workers 5 and
 * 4 and admits late on n1 at once. */
static void start_give_at(struct env *e, double step, const char *late_created)
{
	static char jobs[4096], pods[16384];
	char run[2048], late[2048];
	elastic_job(run, sizeof(run), "run", "2025-12-31T23:00:00Z", 6, 2, 6);
	elastic_job(late, sizeof(late), "late", late_created, 4, 4, 4);
	snprintf(jobs, sizeof(jobs), "%s,%s", run, late);
	*pods = '\0';
	job_pod(pods, sizeof(pods), "run", "ps", 0, "n1", 7);
	for (int i = 0; i < 6; i++)
		job_pod(pods, sizeof(pods), "run", "worker", i, "n1", 7);
	job_pod(pods, sizeof(pods), "late", "ps", 0, NULL, 0);
	for (int i = 0; i < 4; i++)
		job_pod(pods, sizeof(pods), "late", "worker", i, NULL, 0);
	e->jobs = jobs;
	e->pods = pods;
	e->nodes = GPU_NODE("n1");
	start_gang(e, step);
}

static void start_give(struct env *e, double step)
{
	start_give_at(e, step, "2025-12-31T23:50:00Z");
}

#define RUN_DELETE "DELETE /api/v1/namespaces/ml/pods/run-worker-"
#define LATE_PATCH "PATCH /api/v1/namespaces/ml/pods/late-"

/* Sends DELETED for run's worker idx (bound to n1): the pod is gone. */
static void push_run_worker_gone(struct env *e, int idx)
{
	struct evbuffer *b = evbuffer_new();
	evbuffer_add_printf(
	    b,
	    "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"run-worker-%d\","
	    "\"namespace\":\"ml\",\"uid\":\"uid-run-worker%d\",\"resourceVersion\":\"30\","
	    "\"labels\":{\"training.kubeflow.org/job-name\":\"run\",\"training.kubeflow.org/"
	    "replica-type\":\"worker\",\"training.kubeflow.org/replica-index\":\"%d\"},"
	    "\"ownerReferences\":[{\"kind\":\"TFJob\",\"name\":\"run\",\"uid\":\"uid-run\","
	    "\"controller\":true}]},\"spec\":{\"nodeName\":\"n1\"},\"status\":{\"phase\":"
	    "\"Running\"}}}\n",
	    idx, idx, idx);
	evhttp_send_reply_chunk(e->pod_watch, b);
	evbuffer_free(b);
}

/* kube-scheduler charges a deleted pod to its node until it is gone, so
 * late's pods, pinned to n1, are ungated only once run's two workers are
 * gone, not beside their deletes (where they would be refused and back
 * off). */
static void test_a_wave_on_room_its_round_frees_is_ungated_once_the_pods_are_gone(void **state)
{
	struct env *e = *state;
	start_give(e, 0.1);
	assert_int_equal(run_until(e, RUN_DELETE, 2, 5), 2);
	assert_non_null(strstr(e->writes, RUN_DELETE "5\n"));
	assert_non_null(strstr(e->writes, RUN_DELETE "4\n"));
	assert_int_equal(run_until(e, LATE_PATCH, 1, 1), 0); /* 1 s: held */
	assert_non_null(e->pod_watch);
	push_run_worker_gone(e, 5);
	assert_int_equal(run_until(e, LATE_PATCH, 1, 1), 0); /* worker 4 still holds its GPU */
	push_run_worker_gone(e, 4);
	assert_int_equal(run_until(e, LATE_PATCH, 5, 5), 5); /* the PS and four workers */
}

/* A timer of under a second is seen when it is due: late, created at
 * 00:00:00, starves at 00:00:00.3. The round's clock keeps its fraction,
 * and the step's timer starts a round then, not at the next one-second
 * tick (the first comes a second after the start, past this test's 0.7 s). */
static void test_a_decision_timer_under_a_second_is_acted_on_when_due(void **state)
{
	struct env *e = *state;
	static struct drake_scale_opts o;
	drake_scale_defaults(&o);
	o.starve_after = 0.3;
	e->scale = &o;
	e->requeue_ms = 30000;    /* the one-second tick */
	e->clock = 1767225600.05; /* late is 0.05 s old */
	/* 0.15 s of the controller's clock a 100 ms slice, five slices: the
	 * clock stays below 00:00:01, and the first tick never comes */
	start_give_at(e, 0.15, "2026-01-01T00:00:00Z");
	for (int i = 0; i < 5 && count(e->writes, RUN_DELETE) < 2; i++) {
		struct timeval slice = {0, 100000};
		event_base_loopexit(e->base, &slice);
		event_base_dispatch(e->base);
		e->clock += e->step;
	}
	assert_true(e->clock < 1767225601);
	assert_int_equal(count(e->writes, RUN_DELETE), 2);
}

/* A pod that never goes (a lost kubelet, a finalizer) holds the wave back
 * WAVE_ROOM_WAIT_MS at most. */
static void test_a_wave_waits_for_its_room_five_seconds_at_most(void **state)
{
	struct env *e = *state;
	start_give(e, 0.5); /* half a second of the controller's clock per slice */
	assert_int_equal(run_until(e, RUN_DELETE, 2, 5), 2);
	double t0 = e->clock;
	assert_int_equal(run_until(e, LATE_PATCH, 5, 10), 5);
	assert_true(e->clock - t0 >= WAVE_ROOM_WAIT_MS / 1000.0);
	assert_true(e->clock - t0 <= WAVE_ROOM_WAIT_MS / 1000.0 + 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	    T(test_fresh_job_gets_services_and_gated_pods),
	    T(test_a_standby_syncs_its_caches_and_writes_nothing_until_it_leads),
	    T(test_a_template_cannot_forge_drakes_plan),
	    T(test_pods_get_the_scheduler_name_unless_their_template_names_one),
	    T(test_with_gang_admission_the_chief_waits_for_a_plan_and_the_evaluator_does_not),
	    T(test_admission_ungates_the_chief_in_the_wave_of_its_ps_and_workers),
	    T(test_a_move_in_flight_deletes_the_pod_the_record_names),
	    T(test_a_move_ends_once_another_pod_of_that_name_is_bound),
	    T(test_the_policy_moves_a_lonely_worker_off_a_hot_shared_node_onto_its_ps),
	    T(test_the_policy_leaves_a_packed_job_beside_a_hot_pod_alone),
	    T(test_without_a_metrics_api_load_is_requests_alone),
	    T(test_measured_usage_makes_a_node_hot_that_requests_do_not),
	    T(test_gated_pods_of_started_replicas_are_ungated),
	    T(test_restart_over_a_healthy_job_creates_and_deletes_nothing),
	    T(test_failed_on_failure_pod_is_deleted_for_recreation),
	    T(test_finished_job_cleans_pods_per_policy),
	    T(test_invalid_job_gets_a_failed_condition_and_foreign_jobs_are_left_alone),
	    T(test_failing_writes_back_off_instead_of_retrying_every_second),
	    T(test_a_cache_that_lags_its_creates_never_makes_a_pod_twice),
	    T(test_suspended_job_loses_its_pods_and_services),
	    T(test_job_with_more_pods_than_the_limit_is_left_alone),
	    T(test_admission_holds_a_gang_until_kube_scheduler_binds_the_one_before),
	    T(test_a_wave_refused_before_it_shows_planned_does_not_hold_admission),
	    T(test_a_wave_on_room_its_round_frees_is_ungated_once_the_pods_are_gone),
	    T(test_a_wave_waits_for_its_room_five_seconds_at_most),
	    T(test_a_decision_timer_under_a_second_is_acted_on_when_due),
	    T(test_workers_left_without_their_ps_are_rolled_back_two_timeouts_later),
	    T(test_a_wave_that_waited_long_then_starts_binding_is_not_rolled_back_at_once),
	    T(test_the_deadline_is_read_from_the_pods_so_a_restart_does_not_reset_it),
	    T(test_a_job_whose_workers_finish_at_different_times_is_not_rolled_back),
	    T(test_a_member_stuck_terminating_on_a_lost_node_is_deleted_at_once),
	    T(test_a_member_terminating_on_a_ready_node_is_left_to_its_kubelet),
	    T(test_a_gang_bound_whole_or_not_at_all_is_left_alone),
	    T(test_a_bound_chief_counts_toward_the_gang_minimum),
	    T(test_a_wave_that_no_longer_fits_is_released_after_the_deadline),
	    T(test_a_job_waiting_in_the_queue_is_left_alone),
	    T(test_members_that_vanish_after_a_create_do_not_hold_back_their_recreation),
	    T(test_a_replacement_deleted_before_a_pass_sees_it_is_created_again_at_once),
	    T(test_a_replacement_the_caches_never_show_does_not_hold_back_the_roll_back),
	    T(test_a_node_left_out_of_the_snapshot_is_shown_in_the_jobs_view),
	    T(test_the_jobs_view_marks_a_job_slow_with_the_class_it_shows),
	    T(test_one_round_decodes_each_tfjob_once_for_admission_and_migration),
	    T(test_the_replan_reads_the_last_rounds_snapshot_and_builds_one_before_any),
	    T(test_the_kept_snapshot_charges_the_rounds_own_waves_where_planned),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
