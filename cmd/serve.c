/*
 * serve.c - `drake serve`: flags, the event loop, signals, and the wiring of
 * the HTTPS extender to the API-server client.
 *
 * die-on-error is allowed only here, before the loop starts; once it runs,
 * failures are logged and answered, never fatal.
 */
#include <errno.h>
#include <event2/event.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "cmd/commands.h"
#include "cmd/migrate_flags.h"
#include "cmd/scale_flags.h"
#include "common/flags.h"
#include "common/log.h"
#include "extender/server.h"
#include "gang/round.h"
#include "kube/client.h"
#include "kube/leader.h"
#include "kube/leader_rule.h"
#include "kube/object.h"
#include "place/learn.h"
#include "reconciler/reconciler.h"

struct serve_opts {
	struct ext_server_config srv;
	const char *kubeconfig;
	double api_qps;
	int api_burst;
	int api_max_inflight;
	double api_timeout;
	size_t api_max_body;
	const char *log_level;
	bool reconcile;
	const char *cluster_domain;
	const char *gang_resource;
	const char *scheduler_name;
	const char *decision_log;
	const char *policy; /* drake or dragon */
	bool gang, strict_fifo, gang_pin, gang_watch_claims;
	size_t gang_max_unbound;
	double gang_backoff_min, gang_backoff_max;
	struct scale_flag_vals scale;
	struct migrate_flag_vals mig;
	bool migrate;
	double node_metrics;
	const char *progress_url, *progress_ca_file;
	bool leader_elect;
	struct leader_options lease;
	const char *leader_node;  /* the node this replica runs on (the chart: spec.nodeName) */
	double leader_node_grace; /* seconds it may be not Ready before the leader yields */
	const char *prioritize;   /* auto, true or false */
	size_t prioritize_window;
};

struct serve {
	struct event_base *base;
	struct ext_server *server;
	struct kube_client *kube;     /* the extender's: binds never queue behind */
	struct kube_client *kube_ctl; /* the controller's informers and writes */
	struct reconciler *rec;
	struct kube_client *kube_lease; /* renewals never queue behind other work */
	struct leader *leader;          /* NULL without --leader-elect */
	struct event *node_watch;       /* with --leader-node: the leader's own node */
	const char *leader_node;
	double node_grace, node_not_ready_since; /* monotonic; -1: Ready or not known */
	int exit_code;
	struct event *sig_term, *sig_int, *sig_hup;
	char *progress_ca_pem; /* --progress-ca-file's content, or NULL */
};

static void on_released(void *arg)
{
	struct serve *sv = arg;
	log_info("stopped", "%s", "");
	event_base_loopexit(sv->base, NULL);
}

/* Drained: a leader hands the lease back so a standby takes over at once. */
static void on_drained(void *arg)
{
	struct serve *sv = arg;
	if (sv->leader)
		leader_release(sv->leader, on_released, sv);
	else
		on_released(sv);
}

static void on_leading(void *arg)
{
	struct serve *sv = arg;
	reconciler_lead(sv->rec); /* its caches followed the API server meanwhile */
	ext_server_set_standby(sv->server, NULL);
	log_info("leading", "controller=%s", sv->rec ? "started" : "off");
}

/* The lease is lost: stop acting at once and exit, so the process restarts
 * as a standby and rebuilds its state from the API server (what
 * kube-scheduler does). Nothing held is answered: kube-scheduler retries. */
static void on_lost_lease(void *arg, const char *why)
{
	struct serve *sv = arg;
	char line[300];
	snprintf(line, sizeof(line), "lost the leader lease: %s", why);
	ext_server_set_standby(sv->server, line);
	sv->exit_code = 1;
	event_base_loopexit(sv->base, NULL);
}

static double mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Every retry period: a leader whose own node has not been Ready for
 * --leader-node-grace hands the lease back and exits, so a standby on a
 * Ready node, which the Service does reach, takes over (leader_rule.h). */
static void on_node_watch(evutil_socket_t fd, short what, void *arg)
{
	struct serve *sv = arg;
	double now = mono_now();
	int ready = reconciler_node_ready(sv->rec, sv->leader_node);
	if (ready != 0)
		sv->node_not_ready_since = -1;
	else if (sv->node_not_ready_since < 0)
		sv->node_not_ready_since = now;
	if (!leader_leading(sv->leader) ||
	    !leader_node_yield(sv->node_not_ready_since, now, sv->node_grace))
		return;
	char line[300];
	snprintf(line, sizeof(line), "yielded the leader lease: node %s not Ready for %.0fs",
	         sv->leader_node, now - sv->node_not_ready_since);
	log_warn("leader_yield", "node=%s not_ready_s=%.0f", sv->leader_node,
	         now - sv->node_not_ready_since);
	event_del(sv->node_watch);
	ext_server_set_standby(sv->server, line);
	sv->exit_code = 1;
	leader_release(sv->leader, on_released, sv);
}

/* hostname_<16 hex>: unique per process, readable in the Lease. */
static void default_identity(char *buf, size_t len)
{
	char host[128] = "drake";
	gethostname(host, sizeof(host) - 1);
	unsigned char r[8] = {0};
	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
		unsigned long long v =
		    (unsigned long long)getpid() << 32 ^ (unsigned long long)time(NULL);
		memcpy(r, &v, sizeof(r));
	}
	snprintf(buf, len, "%s_%02x%02x%02x%02x%02x%02x%02x%02x", host, r[0], r[1], r[2], r[3],
	         r[4], r[5], r[6], r[7]);
}

static void on_terminate(evutil_socket_t sig, short what, void *arg)
{
	struct serve *sv = arg;
	log_info("signal", "signal=%s action=shutdown", sig == SIGTERM ? "SIGTERM" : "SIGINT");
	ext_server_shutdown(sv->server, on_drained, sv);
}

static void on_reload(evutil_socket_t sig, short what, void *arg)
{
	struct serve *sv = arg;
	char msg[512];
	if (ext_server_reload_tls(sv->server, msg, sizeof(msg)) == DRAKE_OK) {
		log_info("tls_reloaded", "%s", "");
	} else {
		char q[600];
		log_error("tls_reload_failed", "error=%s keeping=previous_certificate",
		          drake_log_quote(msg, q, sizeof(q)));
	}
}

static bool on_ready(void *arg, char *why, size_t whylen)
{
	struct serve *sv = arg;
	return reconciler_ready(sv->rec, why, whylen);
}

static drake_err progress(void *arg, const struct ext_progress *p, char *why, size_t len)
{
	return reconciler_progress(arg, p->ns, p->pod, p->pod_uid, p->step, p->value, p->loss,
	                           p->total_steps, p->t, why, len);
}

static drake_err migrate(void *arg, const struct ext_migration_req *r, char *id, size_t idlen,
                         char *why, size_t len)
{
	return reconciler_migrate(arg, r->ns, r->pod, r->away, r->onto, r->pause_job, r->user, id,
	                          idlen, why, len);
}

static char *migrations_json(void *arg)
{
	return reconciler_migrations_json(arg);
}

static char *jobs_json(void *arg)
{
	return reconciler_jobs_json(arg);
}

static drake_err place_view(void *arg, const char *ns, const char *pod,
                            const char *const *candidates, size_t n, struct place_models *models,
                            struct place_task *task, struct place_node *nodes, bool *known,
                            char *why, size_t whylen)
{
	return reconciler_place_view(arg, ns, pod, candidates, n, models, task, nodes, known, why,
	                             whylen);
}

static bool replan(void *arg, const char *ns, const char *pod, const char *const *candidates,
                   size_t n, char *node, size_t nodelen, char *why, size_t whylen)
{
	return reconciler_replan(arg, ns, pod, candidates, n, node, nodelen, why, whylen);
}

/* Frees what serve_main made, in dependency order. */
static void serve_release(struct serve *sv)
{
	ext_server_free(sv->server);
	if (sv->node_watch)
		event_free(sv->node_watch);
	leader_free(sv->leader);
	reconciler_free(sv->rec);
	kube_client_free(sv->kube_lease);
	kube_client_free(sv->kube_ctl);
	kube_client_free(sv->kube);
	if (sv->sig_term)
		event_free(sv->sig_term);
	if (sv->sig_int)
		event_free(sv->sig_int);
	if (sv->sig_hup)
		event_free(sv->sig_hup);
	event_base_free(sv->base);
	free(sv->progress_ca_pem);
}

/* Most bytes of --progress-ca-file: a CA bundle, not an arbitrary file. */
#define PROGRESS_CA_MAX (64 * 1024)

/* The PEM certificates of path, for DRAKE_PROGRESS_CA_PEM; NULL with msg. */
static char *read_ca_pem(const char *path, char *msg, size_t len)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(msg, len, "cannot read %s: %s", path, strerror(errno));
		return NULL;
	}
	char *pem = calloc(1, PROGRESS_CA_MAX + 1);
	size_t n = pem ? fread(pem, 1, PROGRESS_CA_MAX + 1, f) : 0;
	fclose(f);
	if (!pem || n > PROGRESS_CA_MAX || !strstr(pem, "-----BEGIN CERTIFICATE-----")) {
		snprintf(msg, len, "%s: %s", path,
		         !pem                  ? "out of memory"
		         : n > PROGRESS_CA_MAX ? "over 64 KiB, not a CA bundle"
		                               : "no PEM certificate in it");
		free(pem);
		return NULL;
	}
	return pem;
}

static int usage(const struct flag *flags, size_t n)
{
	printf("usage: drake serve [flags]\n\n"
	       "Serves kube-scheduler's extender verbs over HTTPS: POST <prefix>/filter,\n"
	       "<prefix>/prioritize, <prefix>/bind and <prefix>/preempt, plus GET /healthz,\n"
	       "/readyz, /metrics, /v1/jobs, and the progress and migration API\n"
	       "(/v1/progress, /v1/migrations). SIGHUP reloads the certificates; SIGTERM stops\n"
	       "accepting, answers what is in flight, hands the leader lease back if it holds\n"
	       "one, and exits. With --leader-elect, a replica that loses the lease exits with\n"
	       "status 1 at once, to restart as a standby.\n\nflags:\n");
	flags_usage(stdout, flags, n);
	return 0;
}

static struct kube_client *make_kube(struct event_base *base, const struct serve_opts *o)
{
	const char *path = o->kubeconfig && *o->kubeconfig ? o->kubeconfig : NULL;
	if (!path && !getenv("KUBERNETES_SERVICE_HOST")) {
		log_warn("no_api_server", "reason=%s",
		         "\"no --kubeconfig and not in a pod: bind will answer with an error\"");
		return NULL;
	}
	struct kube_config cfg = {0};
	char msg[512];
	if (kube_config_load(path, &cfg, msg, sizeof(msg)) != DRAKE_OK) {
		fprintf(stderr, "drake serve: %s\n", msg);
		kube_config_release(&cfg);
		exit(1);
	}
	struct kube_client_options opts = {
	    .qps = o->api_qps,
	    .burst = o->api_burst,
	    .max_inflight = o->api_max_inflight,
	    .timeout_ms = (long)(o->api_timeout * 1000),
	    .max_body = o->api_max_body,
	    .user_agent = "drake/" DRAKE_VERSION,
	};
	struct kube_client *k = kube_client_new(base, &cfg, &opts, msg, sizeof(msg));
	if (!k) {
		fprintf(stderr, "drake serve: %s\n", msg);
		kube_config_release(&cfg);
		exit(1);
	}
	log_info("api_server", "server=%s", cfg.server);
	kube_config_release(&cfg);
	return k;
}

int serve_main(int argc, char **argv)
{
	struct serve_opts o = {0};
	ext_server_config_default(&o.srv);
	struct ext_limits *lim = &o.srv.limits;
	const struct flag flags[] = {
	    {"address", "DRAKE_ADDRESS", FLAG_STRING, &o.srv.address, "127.0.0.1",
	     "address to listen on (0.0.0.0 for every interface)"},
	    {"port", "DRAKE_PORT", FLAG_INT, &o.srv.port, "8443", "HTTPS port"},
	    {"prefix", "DRAKE_PREFIX", FLAG_STRING, &o.srv.prefix, "/scheduler",
	     "path prefix of the extender verbs (the urlPrefix path in kube-scheduler's config)"},
	    {"tls-cert", "DRAKE_TLS_CERT", FLAG_STRING, &o.srv.cert_file, NULL,
	     "serving certificate chain, PEM (required)"},
	    {"tls-key", "DRAKE_TLS_KEY", FLAG_STRING, &o.srv.key_file, NULL,
	     "private key of the serving certificate, PEM (required)"},
	    {"client-ca", "DRAKE_CLIENT_CA", FLAG_STRING, &o.srv.client_ca_file, NULL,
	     "CA bundle for client certificates (mTLS); when set, a certificate it does not verify "
	     "fails the handshake, and every request but GET /healthz and /readyz needs a verified "
	     "one (403 without), except that POST /v1/progress and /v1/migrations may bring a "
	     "bearer token instead"},
	    {"kubeconfig", "DRAKE_KUBECONFIG", FLAG_STRING, &o.kubeconfig, NULL,
	     "kubeconfig for the API server; empty: in-cluster service account when in a pod"},
	    {"api-qps", "DRAKE_API_QPS", FLAG_DOUBLE, &o.api_qps, "100",
	     "client-side rate limit on API-server requests per second, for each of drake's two "
	     "clients (extender, controller) (0: unlimited)"},
	    {"api-burst", "DRAKE_API_BURST", FLAG_INT, &o.api_burst, "200",
	     "burst above --api-qps"},
	    {"api-max-inflight", "DRAKE_API_MAX_INFLIGHT", FLAG_INT, &o.api_max_inflight, "64",
	     "most API-server requests (watches aside) on the wire at once; the rest wait in a "
	     "queue, where --api-timeout has not started (0: no cap)"},
	    {"api-timeout", "DRAKE_API_TIMEOUT", FLAG_DURATION, &o.api_timeout, "10s",
	     "timeout of one API-server request"},
	    {"api-max-body", "DRAKE_API_MAX_BODY", FLAG_SIZE, &o.api_max_body, "64Mi",
	     "largest API-server response accepted"},
	    {"max-body", "DRAKE_MAX_BODY", FLAG_SIZE, &o.srv.max_body, "32Mi",
	     "largest request body accepted (larger: 413)"},
	    {"max-headers", "DRAKE_MAX_HEADERS", FLAG_SIZE, &o.srv.max_headers, "16Ki",
	     "largest request header block accepted (larger: over HTTP/1.1 400, answered by "
	     "libevent, and the connection closed; over HTTP/2 431)"},
	    {"max-connections", "DRAKE_MAX_CONNECTIONS", FLAG_COUNT, &o.srv.max_connections, "1000",
	     "most HTTPS connections open at once; one past it is closed before TLS and logged "
	     "(connection_refused). Over HTTP/1.1 each bind held at a gang barrier keeps its "
	     "connection, so keep it above the largest gang plus a margin, and below the "
	     "descriptor limit (0: no cap)"},
	    {"http2", "DRAKE_HTTP2", FLAG_BOOL, &o.srv.http2, "true",
	     "offer HTTP/2 (ALPN h2), which kube-scheduler's client takes: every call is then a "
	     "stream of one connection. Over HTTP/1.1 each bind held at a gang barrier keeps a "
	     "connection of its own, and the filter calls made meanwhile open new ones, a TLS "
	     "handshake each (false: HTTP/1.1 only)"},
	    {"max-nodes", "DRAKE_MAX_NODES", FLAG_COUNT, &lim->max_nodes, "50000",
	     "most candidate nodes in one request (more: 400)"},
	    {"max-name-len", "DRAKE_MAX_NAME_LEN", FLAG_COUNT, &lim->max_name_len, "253",
	     "longest node, pod or namespace name accepted"},
	    {"max-labels", "DRAKE_MAX_LABELS", FLAG_COUNT, &lim->max_labels, "512",
	     "most labels on a pod in a request"},
	    {"max-victims", "DRAKE_MAX_VICTIMS", FLAG_COUNT, &lim->max_victims, "10000",
	     "most victim pods per node in a preempt request"},
	    {"request-timeout", "DRAKE_REQUEST_TIMEOUT", FLAG_DURATION, &o.srv.request_timeout,
	     "30s",
	     "a connection must deliver each whole request (TLS handshake, headers, body) within "
	     "this of connecting or of its previous reply, or it is closed; also the idle "
	     "keep-alive limit"},
	    {"gang-bind-timeout", "DRAKE_GANG_BIND_TIMEOUT", FLAG_DURATION,
	     &o.srv.gang_bind_timeout, "15s",
	     "how long a gang's bind requests wait for the whole wave; keep it below "
	     "kube-scheduler's httpTimeout"},
	    {"shutdown-grace", "DRAKE_SHUTDOWN_GRACE", FLAG_DURATION, &o.srv.shutdown_grace, "20s",
	     "on SIGTERM, how long requests in flight get to finish"},
	    {"log-level", "DRAKE_LOG_LEVEL", FLAG_STRING, &o.log_level, "info",
	     "debug, info, warn or error"},
	    {"reconcile", "DRAKE_RECONCILE", FLAG_BOOL, &o.reconcile, "false",
	     "run the TFJob controller (needs the CRD in config/crd/ installed; /readyz then "
	     "waits for its caches)"},
	    {"cluster-domain", "DRAKE_CLUSTER_DOMAIN", FLAG_STRING, &o.cluster_domain, NULL,
	     "suffix after <svc>.<ns>.svc in TF_CONFIG hosts (Kubeflow's CUSTOM_CLUSTER_DOMAIN)"},
	    {"gang", "DRAKE_GANG", FLAG_BOOL, &o.gang, "true",
	     "with --reconcile: plan each TFJob's PS and workers as a gang and ungate them "
	     "only when all fit (false: ungate them at once, no gang)"},
	    {"strict-fifo", "DRAKE_STRICT_FIFO", FLAG_BOOL, &o.strict_fifo, "false",
	     "with --gang: no backfill; a job that does not fit blocks the jobs behind it"},
	    {"policy", "DRAKE_POLICY", FLAG_STRING, &o.policy, "drake",
	     "with --gang: whose rules admit and scale: drake, or dragon (DRAGON's: first fit "
	     "over the nodes by name, one admission per round, ScaleDown for the head after "
	     "--starve-after, ScaleUp after --idle-after); repairs, pacing, the bind barrier and "
	     "the backstop are drake's either way"},
	    {"gang-max-unbound", "DRAKE_GANG_MAX_UNBOUND", FLAG_COUNT, &o.gang_max_unbound, "0",
	     "with --gang: most admitted gang pods waiting for kube-scheduler at once; 0: "
	     "adaptive, "
	     "what kube-scheduler binds in half of --gang-bind-timeout (at least 64)"},
	    {"gang-pin", "DRAKE_GANG_PIN", FLAG_BOOL, &o.gang_pin, "true",
	     "with --gang: ungate a member whose pod sets no node selector, affinity or topology "
	     "spread constraints with a required node affinity on its planned node (and its "
	     "wave's other nodes), so kube-scheduler filters those nodes, not the cluster; false: "
	     "the plan is an annotation alone and kube-scheduler searches every node"},
	    {"gang-backoff-min", "DRAKE_GANG_BACKOFF_MIN", FLAG_DURATION, &o.gang_backoff_min, "5s",
	     "with --gang: a job whose wave kube-scheduler refused for a reason the planner does "
	     "not model (a missing claim, a selector nothing matches, host ports...) gives its "
	     "reservation back and is not admitted again for this long, doubled at each refusal "
	     "in a row"},
	    {"gang-backoff-max", "DRAKE_GANG_BACKOFF_MAX", FLAG_DURATION, &o.gang_backoff_max, "5m",
	     "with --gang: the longest such backoff (a job is retried sooner when a node or a "
	     "PersistentVolumeClaim in its namespace changes)"},
	    {"gang-watch-claims", "DRAKE_GANG_WATCH_CLAIMS", FLAG_BOOL, &o.gang_watch_claims,
	     "true",
	     "with --gang: watch PersistentVolumeClaims (list and watch on "
	     "persistentvolumeclaims), so a job refused for want of a claim is tried again the "
	     "moment one appears in its namespace; false: it waits out its backoff"},
	    {"decision-log", "DRAKE_DECISION_LOG", FLAG_STRING, &o.decision_log, NULL,
	     "with --gang: append each admission round's inputs and outputs to this file as "
	     "JSON lines; past 64 MiB it is renamed FILE.1 (replacing the last) and started "
	     "again"},
	    {"migrate", "DRAKE_MIGRATE", FLAG_BOOL, &o.migrate, "false",
	     "with --reconcile and --gang: move workers off overloaded nodes (migrate/); an "
	     "explicit POST /v1/migrations works either way"},
	    {"node-metrics-interval", "DRAKE_NODE_METRICS_INTERVAL", FLAG_DURATION, &o.node_metrics,
	     "30s",
	     "with --migrate: how often to list the metrics API's node usage (metrics-server), "
	     "which "
	     "the overload rule's load then counts where it exceeds the requests; 0: requests "
	     "alone"},
	    {"progress-url", "DRAKE_PROGRESS_URL", FLAG_STRING, &o.progress_url, NULL,
	     "with --reconcile: drake's /v1/progress as TFJob pods reach it, written into their "
	     "DRAKE_PROGRESS_URL (for drake progress and the examples/ hooks)"},
	    {"progress-audience", "DRAKE_PROGRESS_AUDIENCE", FLAG_STRING, &o.srv.progress_audience,
	     "drake",
	     "the audience of the token a pod reports progress with: TFJob pods get a projected "
	     "service-account token for it, and /v1/progress accepts only tokens for it, so drake "
	     "never holds a token the API server would take; \"\": the pods' own service-account "
	     "tokens"},
	    {"progress-ca-file", "DRAKE_PROGRESS_CA_FILE", FLAG_STRING, &o.progress_ca_file, NULL,
	     "with --progress-url: the CA bundle that verifies drake's serving certificate, read "
	     "at start and written into TFJob pods as DRAKE_PROGRESS_CA_PEM (drake's certificate "
	     "is rarely the cluster CA's, which pods trust by default)"},
	    {"gang-resource", "DRAKE_GANG_RESOURCE", FLAG_STRING, &o.gang_resource, NULL,
	     "extended resource TFJob pods request, for gang-only mode (e.g. drake.dev/gang; "
	     "kube-scheduler must list it in managedResources with ignoredByScheduler)"},
	    {"leader-elect", "DRAKE_LEADER_ELECT", FLAG_BOOL, &o.leader_elect, "false",
	     "run as one of several replicas: only the holder of a coordination.k8s.io Lease "
	     "acts (admits, ungates, holds binds, writes); the others wait as standbys, not "
	     "ready, answering 503, and take over when the holder stops renewing"},
	    {"leader-elect-namespace", "DRAKE_LEADER_ELECT_NAMESPACE", FLAG_STRING, &o.lease.ns,
	     "kube-system", "with --leader-elect: namespace of the Lease"},
	    {"leader-elect-name", "DRAKE_LEADER_ELECT_NAME", FLAG_STRING, &o.lease.name, "drake",
	     "with --leader-elect: name of the Lease"},
	    {"leader-elect-identity", "DRAKE_LEADER_ELECT_IDENTITY", FLAG_STRING, &o.lease.identity,
	     NULL, "with --leader-elect: this replica in the Lease; empty: <hostname>_<random>"},
	    {"leader-elect-lease-duration", "DRAKE_LEADER_ELECT_LEASE_DURATION", FLAG_DURATION,
	     &o.lease.lease_duration, "15s",
	     "with --leader-elect: how long standbys wait on a Lease whose holder stopped "
	     "renewing (whole seconds)"},
	    {"leader-elect-renew-deadline", "DRAKE_LEADER_ELECT_RENEW_DEADLINE", FLAG_DURATION,
	     &o.lease.renew_deadline, "10s",
	     "with --leader-elect: the leader exits when it could not renew for this long "
	     "(shorter than the lease duration, so it stops before a standby may start)"},
	    {"leader-elect-retry-period", "DRAKE_LEADER_ELECT_RETRY_PERIOD", FLAG_DURATION,
	     &o.lease.retry_period, "2s", "with --leader-elect: time between tries and renewals"},
	    {"leader-node", "DRAKE_LEADER_NODE", FLAG_STRING, &o.leader_node, NULL,
	     "with --leader-elect and --reconcile: the node this replica runs on (the chart "
	     "sets it from the pod's spec.nodeName); a leader whose node is not Ready for "
	     "--leader-node-grace hands the lease back and exits, since kube-scheduler no "
	     "longer reaches it through the Service"},
	    {"leader-node-grace", "DRAKE_LEADER_NODE_GRACE", FLAG_DURATION, &o.leader_node_grace,
	     "10s",
	     "with --leader-node: how long the leader's node may be not Ready (0: never "
	     "yield)"},
	    {"prioritize", "DRAKE_PRIORITIZE", FLAG_STRING, &o.prioritize, "auto",
	     "with --reconcile: score every pod that is not a gang member drake planned (plain "
	     "pods, KubeShare shares that are no TFJob's) on prioritize by drake's "
	     "fragmentation score (place/), from the node and pod caches and the GPU model in each "
	     "node's nvidia.com/gpu.product label (and a pod's nodeSelector on it), so GPUs stay "
	     "usable for the task shapes drake sees; register prioritizeVerb in kube-scheduler's "
	     "extender entry for it to matter. "
	     "true, false, or auto: on in simple mode (no --gang-resource) when the controller "
	     "keeps a node cache (--gang), else off; off: such pods score 0 on every node"},
	    {"prioritize-window", "DRAKE_PRIORITIZE_WINDOW", FLAG_COUNT, &o.prioritize_window,
	     "4096",
	     "with --prioritize: the typical task shapes are learnt from the last this many "
	     "distinct pods scored (1 to 1048576)"},
	    {"scheduler-name", "DRAKE_SCHEDULER_NAME", FLAG_STRING, &o.scheduler_name, NULL,
	     "with --reconcile: spec.schedulerName of the pods created for TFJobs whose template "
	     "names no scheduler (a template's own schedulerName is kept); empty: none is set, so "
	     "the API server's default (default-scheduler) applies"},
	};
	/* With --reconcile --gang: the scaling thresholds and speed model,
	 * drake sim's table. */
	struct flag all[sizeof(flags) / sizeof(flags[0]) + SCALE_FLAGS_N + MIGRATE_FLAGS_N];
	size_t nflags = sizeof(flags) / sizeof(flags[0]);
	memcpy(all, flags, sizeof(flags));
	scale_flags(&o.scale, all + nflags);
	nflags += SCALE_FLAGS_N;
	migrate_flags(&o.mig, all + nflags);
	nflags += MIGRATE_FLAGS_N;
	enum flags_outcome outcome;
	char msg[512];
	if (flags_parse(all, nflags, argc, argv, &outcome, msg, sizeof(msg)) != DRAKE_OK) {
		fprintf(stderr, "drake serve: %s\n", msg);
		return 2;
	}
	if (outcome == FLAGS_HELP)
		return usage(all, nflags);
	if (scale_flags_finish(&o.scale, msg, sizeof(msg)) != DRAKE_OK ||
	    migrate_flags_finish(&o.mig, msg, sizeof(msg)) != DRAKE_OK) {
		fprintf(stderr, "drake serve: %s\n", msg);
		return 2;
	}
	if (!(o.gang_backoff_min > 0 && o.gang_backoff_max >= o.gang_backoff_min &&
	      o.gang_backoff_max <= 86400)) {
		fprintf(stderr, "drake serve: --gang-backoff-min must be above 0 and at most "
		                "--gang-backoff-max, which is at most 24h\n");
		return 2;
	}
	if (!(o.node_metrics >= 0 && o.node_metrics <= 86400)) {
		fprintf(stderr, "drake serve: --node-metrics-interval must be between 0 and 24h\n");
		return 2;
	}
	int policy;
	if (!strcmp(o.policy, "drake")) {
		policy = DRAKE_POLICY_DRAKE;
	} else if (!strcmp(o.policy, "dragon")) {
		policy = DRAKE_POLICY_DRAGON;
	} else {
		fprintf(stderr, "drake serve: --policy must be drake or dragon, not \"%s\"\n",
		        o.policy);
		return 2;
	}
	bool simple = !(o.gang_resource && *o.gang_resource);
	bool prioritize;
	if (!strcmp(o.prioritize, "auto")) {
		prioritize = simple && o.reconcile && o.gang;
	} else if (!strcmp(o.prioritize, "true") || !strcmp(o.prioritize, "false")) {
		prioritize = !strcmp(o.prioritize, "true");
		if (prioritize && !(o.reconcile && o.gang)) {
			fprintf(stderr,
			        "drake serve: --prioritize=true needs --reconcile and --gang (the "
			        "controller's node and pod caches)\n");
			return 2;
		}
	} else {
		fprintf(stderr, "drake serve: --prioritize must be auto, true or false\n");
		return 2;
	}
	if (o.prioritize_window < 1 || o.prioritize_window > PLACE_LEARN_WINDOW_MAX) {
		fprintf(stderr, "drake serve: --prioritize-window must be 1..%d\n",
		        PLACE_LEARN_WINDOW_MAX);
		return 2;
	}
	enum drake_log_level level;
	if (drake_log_parse_level(o.log_level, &level) != DRAKE_OK) {
		fprintf(stderr, "drake serve: --log-level must be debug, info, warn or error\n");
		return 2;
	}
	drake_log_set_level(level);
	if (o.srv.port < 0 || o.srv.port > 65535) {
		fprintf(stderr, "drake serve: --port must be 0..65535\n");
		return 2;
	}
	if (o.scheduler_name && *o.scheduler_name && !kube_name_valid(o.scheduler_name)) {
		/* else every pod create would be refused by the API server */
		fprintf(stderr, "drake serve: --scheduler-name must be a DNS-1123 subdomain\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);

	struct serve sv = {0};
	if (o.progress_ca_file && *o.progress_ca_file &&
	    !(sv.progress_ca_pem = read_ca_pem(o.progress_ca_file, msg, sizeof(msg)))) {
		fprintf(stderr, "drake serve: --progress-ca-file: %s\n", msg);
		return 2;
	}
	sv.base = event_base_new();
	if (!sv.base) {
		free(sv.progress_ca_pem);
		fprintf(stderr, "drake serve: cannot create the event loop\n");
		return 1;
	}
	sv.kube = make_kube(sv.base, &o);
	sv.server = ext_server_new(sv.base, &o.srv, sv.kube, msg, sizeof(msg));
	if (!sv.server) {
		fprintf(stderr, "drake serve: %s\n", msg);
		kube_client_free(sv.kube);
		event_base_free(sv.base);
		return 1;
	}
	if (o.reconcile) {
		struct reconciler_options ro = {.cluster_domain = o.cluster_domain,
		                                .gang_resource = o.gang_resource,
		                                .gang = o.gang,
		                                .strict_fifo = o.strict_fifo,
		                                .policy = policy,
		                                .gang_bind_timeout_s = o.srv.gang_bind_timeout,
		                                .gang_max_unbound = (long)o.gang_max_unbound,
		                                .gang_pin = o.gang_pin,
		                                .backoff_min_s = o.gang_backoff_min,
		                                .backoff_max_s = o.gang_backoff_max,
		                                .watch_claims = o.gang_watch_claims,
		                                .decision_log = o.decision_log,
		                                .scale = &o.scale.opts,
		                                .migrate = o.migrate,
		                                .mig = &o.mig.opts,
		                                .progress = &o.mig.progress,
		                                .progress_url = o.progress_url,
		                                .progress_ca_pem = sv.progress_ca_pem,
		                                .progress_audience = o.srv.progress_audience,
		                                .node_metrics_s = (int)ceil(o.node_metrics),
		                                .standby = o.leader_elect,
		                                .scheduler_name = o.scheduler_name};
		/* A client of its own, so the controller's bursts of creates never
		 * hold up a gang's Bindings in the in-flight queue. */
		sv.kube_ctl = sv.kube ? make_kube(sv.base, &o) : NULL;
		sv.rec = sv.kube_ctl ? reconciler_new(sv.base, sv.kube_ctl, &ro, msg, sizeof(msg))
		                     : NULL;
		if (!sv.rec || reconciler_start(sv.rec) != DRAKE_OK) {
			fprintf(stderr, "drake serve: --reconcile: %s\n",
			        sv.kube ? msg : "needs an API server (--kubeconfig or in-cluster)");
			reconciler_free(sv.rec);
			ext_server_free(sv.server);
			kube_client_free(sv.kube_ctl);
			kube_client_free(sv.kube);
			event_base_free(sv.base);
			return 1;
		}
		ext_server_set_ready(sv.server, on_ready, &sv);
		/* The gang verbs read the controller's pod cache. */
		ext_server_set_pods(sv.server, reconciler_pods(sv.rec));
		ext_server_set_jobs(sv.server, jobs_json, sv.rec);
		ext_server_set_progress(sv.server, progress, sv.rec);
		ext_server_set_migrations(sv.server, migrate, migrations_json, sv.rec);
		ext_server_set_replan(sv.server, replan, sv.rec);
		if (prioritize &&
		    ext_server_set_scoring(sv.server, place_view, sv.rec, o.prioritize_window, msg,
		                           sizeof(msg)) != DRAKE_OK) {
			fprintf(stderr, "drake serve: --prioritize: %s\n", msg);
			serve_release(&sv);
			return 1;
		}
	}
	if (o.leader_elect) {
		char identity[LEASE_HOLDER_MAX];
		if (!o.lease.identity || !*o.lease.identity) {
			default_identity(identity, sizeof(identity));
			o.lease.identity = identity;
		}
		sv.kube_lease = sv.kube ? make_kube(sv.base, &o) : NULL;
		struct leader_callbacks cb = {
		    .started = on_leading, .lost = on_lost_lease, .arg = &sv};
		sv.leader = leader_new(sv.base, sv.kube_lease, &o.lease, &cb, msg, sizeof(msg));
		if (!sv.leader || leader_start(sv.leader) != DRAKE_OK) {
			fprintf(stderr, "drake serve: --leader-elect: %s\n",
			        sv.leader ? "cannot start" : msg);
			serve_release(&sv);
			return 1;
		}
		char line[300];
		snprintf(line, sizeof(line), "standby: another replica holds the lease %s/%s",
		         o.lease.ns, o.lease.name);
		ext_server_set_standby(sv.server, line);
		if (o.leader_node && *o.leader_node && o.leader_node_grace > 0 && sv.rec) {
			sv.leader_node = o.leader_node;
			sv.node_grace = o.leader_node_grace;
			sv.node_not_ready_since = -1;
			sv.node_watch = event_new(sv.base, -1, EV_PERSIST, on_node_watch, &sv);
			struct timeval tv = {(time_t)o.lease.retry_period,
			                     (suseconds_t)(fmod(o.lease.retry_period, 1) * 1e6)};
			if (!sv.node_watch || event_add(sv.node_watch, &tv) != 0) {
				fprintf(stderr, "drake serve: --leader-node: out of memory\n");
				serve_release(&sv);
				return 1;
			}
		}
	}
	sv.sig_term = evsignal_new(sv.base, SIGTERM, on_terminate, &sv);
	sv.sig_int = evsignal_new(sv.base, SIGINT, on_terminate, &sv);
	sv.sig_hup = evsignal_new(sv.base, SIGHUP, on_reload, &sv);
	event_add(sv.sig_term, NULL);
	event_add(sv.sig_int, NULL);
	event_add(sv.sig_hup, NULL);
	log_info("listening", "address=%s port=%d prefix=%s mtls=%s prioritize=%s version=%s",
	         o.srv.address, ext_server_port(sv.server), o.srv.prefix,
	         o.srv.client_ca_file && *o.srv.client_ca_file ? "on" : "off",
	         prioritize ? "on" : "off", DRAKE_VERSION);

	event_base_dispatch(sv.base);

	serve_release(&sv);
	return sv.exit_code;
}
