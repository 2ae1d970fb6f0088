/*
 * serve.c - `drake serve`: the event loop, signals, and the wiring of the
 * HTTPS extender to the API-server client (its flags: serve_flags.c).
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
#include "cmd/serve_flags.h"
#include "common/flags.h"
#include "common/log.h"
#include "extender/server.h"
#include "kube/client.h"
#include "kube/leader.h"
#include "kube/leader_rule.h"
#include "reconciler/reconciler.h"

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

/*
 * What the extender asks of the controller: one table (extender/controller.h)
 * filled with the reconciler's answers. The table's operations take the
 * void * they were installed with and the reconciler's take its struct, and
 * C does not allow calling one through the other's type, so each entry is a
 * one-line typed adapter; progress and migrate also unpack the extender's
 * request, which the reconciler does not know.
 */
static bool ctl_ready(void *rec, char *why, size_t whylen)
{
	return reconciler_ready(rec, why, whylen);
}

static drake_err ctl_progress(void *rec, const struct ext_progress *p, char *why, size_t len)
{
	return reconciler_progress(rec, p->ns, p->pod, p->pod_uid, p->step, p->value, p->loss,
	                           p->total_steps, p->t, why, len);
}

static drake_err ctl_migrate(void *rec, const struct ext_migration_req *r, char *id, size_t idlen,
                             char *why, size_t len)
{
	return reconciler_migrate(rec, r->ns, r->pod, r->away, r->onto, r->pause_job, r->user, id,
	                          idlen, why, len);
}

static const char *ctl_resource_of(void *rec, const char *ns, const char *pod)
{
	return reconciler_pod_resource(rec, ns, pod);
}

static char *ctl_migrations_json(void *rec)
{
	return reconciler_migrations_json(rec);
}

static char *ctl_jobs_json(void *rec)
{
	return reconciler_jobs_json(rec);
}

static drake_err ctl_place_view(void *rec, const char *ns, const char *pod,
                                const char *const *candidates, size_t n,
                                struct place_models *models, struct place_task *task,
                                struct place_node *nodes, bool *known, char *why, size_t whylen)
{
	return reconciler_place_view(rec, ns, pod, candidates, n, models, task, nodes, known, why,
	                             whylen);
}

static bool ctl_replan(void *rec, const char *ns, const char *pod, const char *const *candidates,
                       size_t n, char *node, size_t nodelen, char *why, size_t whylen)
{
	return reconciler_replan(rec, ns, pod, candidates, n, node, nodelen, why, whylen);
}

static const struct ext_controller reconciler_ops = {
    .ready = ctl_ready,
    .progress = ctl_progress,
    .migrate = ctl_migrate,
    .resource_of = ctl_resource_of,
    .migrations_json = ctl_migrations_json,
    .jobs_json = ctl_jobs_json,
    .place_view = ctl_place_view,
    .replan = ctl_replan,
};

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
	struct serve_opts o;
	struct flag flags[SERVE_FLAGS_N];
	serve_flags(&o, flags);
	enum flags_outcome outcome;
	char msg[512];
	if (flags_parse(flags, SERVE_FLAGS_N, argc, argv, &outcome, msg, sizeof(msg)) != DRAKE_OK) {
		fprintf(stderr, "drake serve: %s\n", msg);
		return 2;
	}
	if (outcome == FLAGS_HELP)
		return usage(flags, SERVE_FLAGS_N);
	if (serve_flags_finish(&o, msg, sizeof(msg)) != DRAKE_OK) {
		fprintf(stderr, "drake serve: %s\n", msg);
		return 2;
	}
	drake_log_set_level(o.log_lvl);
	bool prioritize = o.prioritize_on;
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
		struct reconciler_options ro = {.kinds = o.kind_list,
		                                .nkinds = o.nkinds,
		                                .cluster_domain = o.cluster_domain,
		                                .gang_resource = o.gang_resource,
		                                .gang = o.gang,
		                                .strict_fifo = o.strict_fifo,
		                                .policy = o.policy_id,
		                                .las = &o.las,
		                                .las_interval = o.las_interval,
		                                .gang_bind_timeout_s = o.srv.gang_bind_timeout,
		                                .gang_max_unbound = (long)o.gang_max_unbound,
		                                .gang_pin = o.gang_pin,
		                                .backoff_min_s = o.gang_backoff_min,
		                                .backoff_max_s = o.gang_backoff_max,
		                                .watch_claims = o.gang_watch_claims,
		                                .decision_log = o.decision_log,
		                                .decision_log_max = o.decision_log_max,
		                                .scale = &o.scale.opts,
		                                .resize_costs = &o.resize_costs,
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
		ext_server_set_controller(sv.server, &reconciler_ops, sv.rec);
		/* The gang verbs read the controller's pod cache. */
		ext_server_set_pods(sv.server, reconciler_pods(sv.rec));
		if (prioritize && ext_server_set_scoring(sv.server, o.prioritize_window, msg,
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
