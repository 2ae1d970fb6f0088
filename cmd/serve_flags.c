/*
 * serve_flags.c - `drake serve`'s flags: the table and the checks of the
 * values it parses.
 */
#include "cmd/serve_flags.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gang/round.h"
#include "kind/registry.h"
#include "kube/object.h"
#include "place/learn.h"

void serve_flags(struct serve_opts *o, struct flag *out)
{
	*o = (struct serve_opts){0};
	ext_server_config_default(&o->srv);
	const struct flag f[] = {
	    {"address", "DRAKE_ADDRESS", FLAG_STRING, &o->srv.address, "127.0.0.1",
	     "address to listen on (0.0.0.0 for every interface)"},
	    {"port", "DRAKE_PORT", FLAG_INT, &o->srv.port, "8443", "HTTPS port"},
	    {"prefix", "DRAKE_PREFIX", FLAG_STRING, &o->srv.prefix, "/scheduler",
	     "path prefix of the extender verbs (the urlPrefix path in kube-scheduler's config)"},
	    {"tls-cert", "DRAKE_TLS_CERT", FLAG_STRING, &o->srv.cert_file, NULL,
	     "serving certificate chain, PEM (required)"},
	    {"tls-key", "DRAKE_TLS_KEY", FLAG_STRING, &o->srv.key_file, NULL,
	     "private key of the serving certificate, PEM (required)"},
	    {"client-ca", "DRAKE_CLIENT_CA", FLAG_STRING, &o->srv.client_ca_file, NULL,
	     "CA bundle for client certificates (mTLS); when set, a certificate it does not verify "
	     "fails the handshake, and every request but GET /healthz and /readyz needs a verified "
	     "one (403 without), except that POST /v1/progress and /v1/migrations may bring a "
	     "bearer token instead"},
	    {"kubeconfig", "DRAKE_KUBECONFIG", FLAG_STRING, &o->kubeconfig, NULL,
	     "kubeconfig for the API server; empty: in-cluster service account when in a pod"},
	    {"api-qps", "DRAKE_API_QPS", FLAG_DOUBLE, &o->api_qps, "100",
	     "client-side rate limit on API-server requests per second, for each of drake's two "
	     "clients (extender, controller) (0: unlimited)"},
	    {"api-burst", "DRAKE_API_BURST", FLAG_INT, &o->api_burst, "200",
	     "burst above --api-qps"},
	    {"api-max-inflight", "DRAKE_API_MAX_INFLIGHT", FLAG_INT, &o->api_max_inflight, "64",
	     "most API-server requests (watches aside) on the wire at once; the rest wait in a "
	     "queue, where --api-timeout has not started (0: no cap)"},
	    {"api-timeout", "DRAKE_API_TIMEOUT", FLAG_DURATION, &o->api_timeout, "10s",
	     "timeout of one API-server request"},
	    {"api-max-body", "DRAKE_API_MAX_BODY", FLAG_SIZE, &o->api_max_body, "64Mi",
	     "largest API-server response accepted"},
	    {"max-body", "DRAKE_MAX_BODY", FLAG_SIZE, &o->srv.max_body, "32Mi",
	     "largest request body accepted (larger: 413)"},
	    {"max-headers", "DRAKE_MAX_HEADERS", FLAG_SIZE, &o->srv.max_headers, "16Ki",
	     "largest request header block accepted (larger: over HTTP/1.1 400, answered by "
	     "libevent, and the connection closed; over HTTP/2 431)"},
	    {"max-connections", "DRAKE_MAX_CONNECTIONS", FLAG_COUNT, &o->srv.max_connections,
	     "1000",
	     "most HTTPS connections open at once; one past it is closed before TLS and logged "
	     "(connection_refused). Over HTTP/1.1 each bind held at a gang barrier keeps its "
	     "connection, so keep it above the largest gang plus a margin, and below the "
	     "descriptor limit (0: no cap)"},
	    {"http2", "DRAKE_HTTP2", FLAG_BOOL, &o->srv.http2, "true",
	     "offer HTTP/2 (ALPN h2), which kube-scheduler's client takes: every call is then a "
	     "stream of one connection. Over HTTP/1.1 each bind held at a gang barrier keeps a "
	     "connection of its own, and the filter calls made meanwhile open new ones, a TLS "
	     "handshake each (false: HTTP/1.1 only)"},
	    {"max-nodes", "DRAKE_MAX_NODES", FLAG_COUNT, &o->srv.limits.max_nodes, "50000",
	     "most candidate nodes in one request (more: 400)"},
	    {"max-name-len", "DRAKE_MAX_NAME_LEN", FLAG_COUNT, &o->srv.limits.max_name_len, "253",
	     "longest node, pod or namespace name accepted"},
	    {"max-labels", "DRAKE_MAX_LABELS", FLAG_COUNT, &o->srv.limits.max_labels, "512",
	     "most labels on a pod in a request"},
	    {"max-victims", "DRAKE_MAX_VICTIMS", FLAG_COUNT, &o->srv.limits.max_victims, "10000",
	     "most victim pods per node in a preempt request"},
	    {"request-timeout", "DRAKE_REQUEST_TIMEOUT", FLAG_DURATION, &o->srv.request_timeout,
	     "30s",
	     "a connection must deliver each whole request (TLS handshake, headers, body) within "
	     "this of connecting or of its previous reply, or it is closed; also the idle "
	     "keep-alive limit"},
	    {"gang-bind-timeout", "DRAKE_GANG_BIND_TIMEOUT", FLAG_DURATION,
	     &o->srv.gang_bind_timeout, "15s",
	     "how long a gang's bind requests wait for the whole wave; keep it below "
	     "kube-scheduler's httpTimeout"},
	    {"shutdown-grace", "DRAKE_SHUTDOWN_GRACE", FLAG_DURATION, &o->srv.shutdown_grace, "20s",
	     "on SIGTERM, how long requests in flight get to finish"},
	    {"log-level", "DRAKE_LOG_LEVEL", FLAG_STRING, &o->log_level, "info",
	     "debug, info, warn or error"},
	    {"reconcile", "DRAKE_RECONCILE", FLAG_BOOL, &o->reconcile, "false",
	     "run the TFJob controller (needs the CRD in config/crd/ installed; /readyz then "
	     "waits for its caches)"},
	    {"kinds", "DRAKE_KINDS", FLAG_STRING, &o->kinds, "tfjobs",
	     "with --reconcile: the job kinds the controller serves, by resource, comma-separated "
	     "(tfjobs, pytorchjobs); a kind left out is another operator's"},
	    {"resize-cost", "DRAKE_RESIZE_COST", FLAG_STRING, &o->resize_cost, NULL,
	     "with --gang: what one resize stops a job of a kind for, which the policy weighs a "
	     "change by (a job is grown, or gives back workers that slow it, only when that saves "
	     "more), as KIND=SHRINK[/GROW] comma-separated (\"pytorchjobs=18s/6.5s,tfjobs=2s\"; "
	     "one duration is both); a kind not named costs what its trainer was measured at: "
	     "tfjobs 1.9s/2.3s (drake-train), pytorchjobs 18.1s/6.5s (elastic torchrun)"},
	    {"cluster-domain", "DRAKE_CLUSTER_DOMAIN", FLAG_STRING, &o->cluster_domain, NULL,
	     "suffix after <svc>.<ns>.svc in TF_CONFIG hosts (Kubeflow's CUSTOM_CLUSTER_DOMAIN)"},
	    {"gang", "DRAKE_GANG", FLAG_BOOL, &o->gang, "true",
	     "with --reconcile: plan each TFJob's PS and workers as a gang and ungate them "
	     "only when all fit (false: ungate them at once, no gang)"},
	    {"strict-fifo", "DRAKE_STRICT_FIFO", FLAG_BOOL, &o->strict_fifo, "false",
	     "with --gang: no backfill; a job that does not fit blocks the jobs behind it"},
	    {"policy", "DRAKE_POLICY", FLAG_STRING, &o->policy, "drake",
	     "with --gang: whose rules admit and scale: drake, dragon (DRAGON's: first fit "
	     "over the nodes by name, one admission per round, ScaleDown for the head after "
	     "--starve-after, ScaleUp after --idle-after) or tiresias (2D-LAS: jobs rigid at "
	     "their asked size, queues by attained GPU-seconds split at --las-threshold, a "
	     "decision every --las-interval, whole-job preemption); repairs, pacing, the bind "
	     "barrier and the backstop are drake's in every case"},
	    {"las-threshold", "DRAKE_LAS_THRESHOLD", FLAG_STRING, &o->las_threshold, "57600",
	     "with --policy tiresias: attained GPU-seconds at which a job moves down one queue, "
	     "comma-separated ascending for more queues (57600: 16 GPU-hours, two queues)"},
	    {"las-interval", "DRAKE_LAS_INTERVAL", FLAG_DURATION, &o->las_interval, "60s",
	     "with --policy tiresias: time between 2D-LAS decisions; new jobs wait for the next"},
	    {"gang-max-unbound", "DRAKE_GANG_MAX_UNBOUND", FLAG_COUNT, &o->gang_max_unbound, "0",
	     "with --gang: most admitted gang pods waiting for kube-scheduler at once; 0: "
	     "adaptive, "
	     "what kube-scheduler binds in half of --gang-bind-timeout (at least 64)"},
	    {"gang-pin", "DRAKE_GANG_PIN", FLAG_BOOL, &o->gang_pin, "true",
	     "with --gang: ungate a member whose pod sets no node selector, affinity or topology "
	     "spread constraints with a required node affinity on its planned node (and its "
	     "wave's other nodes), so kube-scheduler filters those nodes, not the cluster; false: "
	     "the plan is an annotation alone and kube-scheduler searches every node"},
	    {"gang-backoff-min", "DRAKE_GANG_BACKOFF_MIN", FLAG_DURATION, &o->gang_backoff_min,
	     "5s",
	     "with --gang: a job whose wave kube-scheduler refused for a reason the planner does "
	     "not model (a missing claim, a selector nothing matches, host ports...) gives its "
	     "reservation back and is not admitted again for this long, doubled at each refusal "
	     "in a row"},
	    {"gang-backoff-max", "DRAKE_GANG_BACKOFF_MAX", FLAG_DURATION, &o->gang_backoff_max,
	     "5m",
	     "with --gang: the longest such backoff (a job is retried sooner when a node or a "
	     "PersistentVolumeClaim in its namespace changes)"},
	    {"gang-watch-claims", "DRAKE_GANG_WATCH_CLAIMS", FLAG_BOOL, &o->gang_watch_claims,
	     "true",
	     "with --gang: watch PersistentVolumeClaims (list and watch on "
	     "persistentvolumeclaims), so a job refused for want of a claim is tried again the "
	     "moment one appears in its namespace; false: it waits out its backoff"},
	    {"decision-log", "DRAKE_DECISION_LOG", FLAG_STRING, &o->decision_log, NULL,
	     "with --gang: append each admission round's inputs and outputs to this file as "
	     "JSON lines; past --decision-log-max it is renamed FILE.1 (replacing the last) and "
	     "started again"},
	    {"decision-log-max", "DRAKE_DECISION_LOG_MAX", FLAG_SIZE, &o->decision_log_max, "64Mi",
	     "with --decision-log: the file's bound before it is rotated; 0: never rotated (keeps "
	     "every round of a run, for drake sim --replay)"},
	    {"migrate", "DRAKE_MIGRATE", FLAG_BOOL, &o->migrate, "false",
	     "with --reconcile and --gang: move workers off overloaded nodes (migrate/); an "
	     "explicit POST /v1/migrations works either way"},
	    {"node-metrics-interval", "DRAKE_NODE_METRICS_INTERVAL", FLAG_DURATION,
	     &o->node_metrics, "30s",
	     "with --migrate: how often to list the metrics API's node usage (metrics-server), "
	     "which "
	     "the overload rule's load then counts where it exceeds the requests; 0: requests "
	     "alone"},
	    {"progress-url", "DRAKE_PROGRESS_URL", FLAG_STRING, &o->progress_url, NULL,
	     "with --reconcile: drake's /v1/progress as TFJob pods reach it, written into their "
	     "DRAKE_PROGRESS_URL (for drake progress and the examples/ hooks)"},
	    {"progress-audience", "DRAKE_PROGRESS_AUDIENCE", FLAG_STRING, &o->srv.progress_audience,
	     "drake",
	     "the audience of the token a pod reports progress with: TFJob pods get a projected "
	     "service-account token for it, and /v1/progress accepts only tokens for it, so drake "
	     "never holds a token the API server would take; \"\": the pods' own service-account "
	     "tokens"},
	    {"progress-ca-file", "DRAKE_PROGRESS_CA_FILE", FLAG_STRING, &o->progress_ca_file, NULL,
	     "with --progress-url: the CA bundle that verifies drake's serving certificate, read "
	     "at start and written into TFJob pods as DRAKE_PROGRESS_CA_PEM (drake's certificate "
	     "is rarely the cluster CA's, which pods trust by default)"},
	    {"gang-resource", "DRAKE_GANG_RESOURCE", FLAG_STRING, &o->gang_resource, NULL,
	     "extended resource TFJob pods request, for gang-only mode (e.g. drake.dev/gang; "
	     "kube-scheduler must list it in managedResources with ignoredByScheduler)"},
	    {"leader-elect", "DRAKE_LEADER_ELECT", FLAG_BOOL, &o->leader_elect, "false",
	     "run as one of several replicas: only the holder of a coordination.k8s.io Lease "
	     "acts (admits, ungates, holds binds, writes); the others wait as standbys, not "
	     "ready, answering 503, and take over when the holder stops renewing"},
	    {"leader-elect-namespace", "DRAKE_LEADER_ELECT_NAMESPACE", FLAG_STRING, &o->lease.ns,
	     "kube-system", "with --leader-elect: namespace of the Lease"},
	    {"leader-elect-name", "DRAKE_LEADER_ELECT_NAME", FLAG_STRING, &o->lease.name, "drake",
	     "with --leader-elect: name of the Lease"},
	    {"leader-elect-identity", "DRAKE_LEADER_ELECT_IDENTITY", FLAG_STRING,
	     &o->lease.identity, NULL,
	     "with --leader-elect: this replica in the Lease; empty: <hostname>_<random>"},
	    {"leader-elect-lease-duration", "DRAKE_LEADER_ELECT_LEASE_DURATION", FLAG_DURATION,
	     &o->lease.lease_duration, "15s",
	     "with --leader-elect: how long standbys wait on a Lease whose holder stopped "
	     "renewing (whole seconds)"},
	    {"leader-elect-renew-deadline", "DRAKE_LEADER_ELECT_RENEW_DEADLINE", FLAG_DURATION,
	     &o->lease.renew_deadline, "10s",
	     "with --leader-elect: the leader exits when it could not renew for this long "
	     "(shorter than the lease duration, so it stops before a standby may start)"},
	    {"leader-elect-retry-period", "DRAKE_LEADER_ELECT_RETRY_PERIOD", FLAG_DURATION,
	     &o->lease.retry_period, "2s", "with --leader-elect: time between tries and renewals"},
	    {"leader-node", "DRAKE_LEADER_NODE", FLAG_STRING, &o->leader_node, NULL,
	     "with --leader-elect and --reconcile: the node this replica runs on (the chart "
	     "sets it from the pod's spec.nodeName); a leader whose node is not Ready for "
	     "--leader-node-grace hands the lease back and exits, since kube-scheduler no "
	     "longer reaches it through the Service"},
	    {"leader-node-grace", "DRAKE_LEADER_NODE_GRACE", FLAG_DURATION, &o->leader_node_grace,
	     "10s",
	     "with --leader-node: how long the leader's node may be not Ready (0: never "
	     "yield)"},
	    {"prioritize", "DRAKE_PRIORITIZE", FLAG_STRING, &o->prioritize, "auto",
	     "with --reconcile: score every pod that is not a gang member drake planned (plain "
	     "pods, KubeShare shares that are no TFJob's) on prioritize by drake's "
	     "fragmentation score (place/), from the node and pod caches and the GPU model in each "
	     "node's nvidia.com/gpu.product label (and a pod's nodeSelector on it), so GPUs stay "
	     "usable for the task shapes drake sees; register prioritizeVerb in kube-scheduler's "
	     "extender entry for it to matter. "
	     "true, false, or auto: on in simple mode (no --gang-resource) when the controller "
	     "keeps a node cache (--gang), else off; off: such pods score 0 on every node"},
	    {"prioritize-window", "DRAKE_PRIORITIZE_WINDOW", FLAG_COUNT, &o->prioritize_window,
	     "4096",
	     "with --prioritize: the typical task shapes are learnt from the last this many "
	     "distinct pods scored (1 to 1048576)"},
	    {"scheduler-name", "DRAKE_SCHEDULER_NAME", FLAG_STRING, &o->scheduler_name, NULL,
	     "with --reconcile: spec.schedulerName of the pods created for TFJobs whose template "
	     "names no scheduler (a template's own schedulerName is kept); empty: none is set, so "
	     "the API server's default (default-scheduler) applies"},
	};
	_Static_assert(sizeof(f) / sizeof(f[0]) == SERVE_OWN_FLAGS_N,
	               "SERVE_OWN_FLAGS_N is the length of drake serve's own table");
	memcpy(out, f, sizeof(f));
	/* With --reconcile --gang: the scaling thresholds and speed model,
	 * drake sim's table. */
	scale_flags(&o->scale, out + SERVE_OWN_FLAGS_N);
	migrate_flags(&o->mig, out + SERVE_OWN_FLAGS_N + SCALE_FLAGS_N);
}

/* --kinds into o->kind_list: each a kind drake is built with, once. */
static drake_err kinds_finish(struct serve_opts *o, char *msg, size_t len)
{
	o->nkinds = 0;
	const char *s = o->kinds ? o->kinds : "";
	while (*s) {
		size_t n = strcspn(s, ",");
		char name[64];
		snprintf(name, sizeof(name), "%.*s", (int)(n < sizeof(name) ? n : sizeof(name) - 1),
		         s);
		const struct job_kind *k = n < sizeof(name) ? job_kind_lookup(name) : NULL;
		if (!k)
			return drake_errorf(DRAKE_EINVAL, msg, len,
			                    "--kinds: \"%s\" is not a job kind drake serves", name);
		for (size_t i = 0; i < o->nkinds; i++)
			if (o->kind_list[i] == k)
				return drake_errorf(DRAKE_EINVAL, msg, len,
				                    "--kinds names %s twice", k->plural);
		if (o->nkinds == JOB_KINDS_MAX)
			return drake_errorf(DRAKE_EINVAL, msg, len, "--kinds names too many kinds");
		o->kind_list[o->nkinds++] = k;
		s += n + (s[n] == ',');
	}
	if (o->reconcile && o->nkinds == 0)
		return drake_errorf(DRAKE_EINVAL, msg, len,
		                    "--kinds names no job kind for --reconcile to serve");
	return DRAKE_OK;
}

/* --las-threshold and --las-interval into o->las. */
static drake_err las_finish(struct serve_opts *o, char *msg, size_t len)
{
	drake_las_defaults(&o->las);
	const char *s = o->las_threshold ? o->las_threshold : "";
	int n = 0;
	while (*s) {
		char *end;
		double t = strtod(s, &end);
		if (end == s || !(t > 0) || !isfinite(t) ||
		    (n > 0 && t <= o->las.threshold[n - 1]) || n + 1 >= DRAKE_LAS_MAX_QUEUES ||
		    (*end && *end != ','))
			return drake_errorf(DRAKE_EINVAL, msg, len,
			                    "--las-threshold must be 1 to %d ascending GPU-second "
			                    "values above 0, comma-separated, not \"%s\"",
			                    DRAKE_LAS_MAX_QUEUES - 1, o->las_threshold);
		o->las.threshold[n++] = t;
		s = *end ? end + 1 : end;
	}
	if (n == 0)
		return drake_errorf(DRAKE_EINVAL, msg, len,
		                    "--las-threshold must name at least one GPU-second value");
	o->las.n_queues = n + 1;
	if (!(o->las_interval >= 1 && o->las_interval <= 86400))
		return drake_errorf(DRAKE_EINVAL, msg, len, "--las-interval must be 1s..24h");
	return DRAKE_OK;
}

drake_err serve_flags_finish(struct serve_opts *o, char *msg, size_t len)
{
	drake_err e = scale_flags_finish(&o->scale, msg, len);
	if (!e)
		e = migrate_flags_finish(&o->mig, msg, len);
	if (e)
		return e;
	if (!(o->gang_backoff_min > 0 && o->gang_backoff_max >= o->gang_backoff_min &&
	      o->gang_backoff_max <= 86400))
		return drake_errorf(DRAKE_EINVAL, msg, len,
		                    "--gang-backoff-min must be above 0 and at most "
		                    "--gang-backoff-max, which is at most 24h");
	if (!(o->node_metrics >= 0 && o->node_metrics <= 86400))
		return drake_errorf(DRAKE_EINVAL, msg, len,
		                    "--node-metrics-interval must be between 0 and 24h");
	if ((e = kinds_finish(o, msg, len)))
		return e;
	job_resize_costs_default(&o->resize_costs);
	char why[200];
	if (job_resize_costs_parse(o->resize_cost, &o->resize_costs, why, sizeof(why)))
		return drake_errorf(DRAKE_EINVAL, msg, len, "--resize-cost: %s", why);
	if (!strcmp(o->policy, "drake"))
		o->policy_id = DRAKE_POLICY_DRAKE;
	else if (!strcmp(o->policy, "dragon"))
		o->policy_id = DRAKE_POLICY_DRAGON;
	else if (!strcmp(o->policy, "tiresias"))
		o->policy_id = DRAKE_POLICY_TIRESIAS;
	else
		return drake_errorf(DRAKE_EINVAL, msg, len,
		                    "--policy must be drake, dragon or tiresias, not \"%s\"",
		                    o->policy);
	if ((e = las_finish(o, msg, len)))
		return e;
	bool simple = !(o->gang_resource && *o->gang_resource);
	if (!strcmp(o->prioritize, "auto")) {
		o->prioritize_on = simple && o->reconcile && o->gang;
	} else if (!strcmp(o->prioritize, "true") || !strcmp(o->prioritize, "false")) {
		o->prioritize_on = !strcmp(o->prioritize, "true");
		if (o->prioritize_on && !(o->reconcile && o->gang))
			return drake_errorf(DRAKE_EINVAL, msg, len,
			                    "--prioritize=true needs --reconcile and --gang (the "
			                    "controller's node and pod caches)");
	} else {
		return drake_errorf(DRAKE_EINVAL, msg, len,
		                    "--prioritize must be auto, true or false");
	}
	if (o->prioritize_window < 1 || o->prioritize_window > PLACE_LEARN_WINDOW_MAX)
		return drake_errorf(DRAKE_EINVAL, msg, len, "--prioritize-window must be 1..%d",
		                    PLACE_LEARN_WINDOW_MAX);
	if (drake_log_parse_level(o->log_level, &o->log_lvl) != DRAKE_OK)
		return drake_errorf(DRAKE_EINVAL, msg, len,
		                    "--log-level must be debug, info, warn or error");
	if (o->srv.port < 0 || o->srv.port > 65535)
		return drake_errorf(DRAKE_EINVAL, msg, len, "--port must be 0..65535");
	/* else every pod create would be refused by the API server */
	if (o->scheduler_name && *o->scheduler_name && !kube_name_valid(o->scheduler_name))
		return drake_errorf(DRAKE_EINVAL, msg, len,
		                    "--scheduler-name must be a DNS-1123 subdomain");
	return DRAKE_OK;
}
