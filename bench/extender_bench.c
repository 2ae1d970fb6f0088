/*
 * extender_bench.c - `make bench-extender`: what one extender call costs.
 *
 * Starts drake (`drake serve`, mTLS on loopback) and two responders built
 * the way drake is (libevent, OpenSSL, drake's TLS context, connection table
 * and HTTP/2 module) that do no work: "floor" answers every POST with a
 * fixed 30-byte body; "echo" answers with the request body itself, so it
 * pays for moving a response as large as drake's (a filter that passes
 * every node sends the names back) and the difference to drake is drake's
 * own work. Then replays filter and prioritize requests naming 100 / 1,000 /
 * 5,000 / 15,000 nodes over one keep-alive TLS connection per server, over
 * HTTP/2 as kube-scheduler's client speaks it (--http 1.1 for the other),
 * alternating drake and the responders in rounds so all see the same machine
 * noise. Prints median and p99 latency, requests per second (closed loop,
 * one connection) and each server's peak RSS, and writes the table as CSV.
 *
 * A third responder, --names-serve, is the trivial extender of make
 * bench-gang's cost arm: it answers filter with the NodeNames array of the
 * request, cut out by a text scan, which is the least a nodeCacheCapable
 * extender that filters nothing must send back.
 *
 * With --load SECONDS (`make bench-load`) it instead holds drake at
 * saturation: --conns keep-alive connections, each sending the next filter
 * or prioritize (alternating, --load-nodes names each) as soon as the last
 * was answered, for SECONDS. Every --sample seconds it records the
 * requests answered, the errors (any answer but 200: drake's deliberate
 * limits would show as 413/429/400 and none is expected here), latency p50
 * and p99 over that interval, and drake's VmRSS and open descriptors
 * (entries of /proc/PID/fd), as a CSV row, and prints whether memory and
 * descriptors stayed flat.
 */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/buffer.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench_util.h"
#include "common/flags.h"
#include "extender/conns.h"
#include "extender/h2.h"
#include "extender/tls.h"

extern char **environ;

#define CERTS "build/bench/certs"

/* ---- the floor: answers every request with a fixed body ---- */

/* kube-scheduler's client takes h2 when offered, and drake offers it, so the
 * floor does too, through drake's own connection table and HTTP/2 module:
 * the protocol costs both the same, and the difference is drake's work. */

static const char floor_body[] = "{\"NodeNames\":[],\"Error\":\"\"}";

/* What a responder answers: a fixed body (floor), the request itself
 * (echo), or the node names it was sent (names: the least a
 * nodeCacheCapable extender that filters nothing must answer, because
 * kube-scheduler keeps only the nodes a filter result names). */
enum floor_mode { FLOOR_FIXED, FLOOR_ECHO, FLOOR_NAMES };

/* The NodeNames array of an ExtenderArgs body, found by a text scan (no
 * JSON parse: that is the work the floor leaves out), or NULL. kube-scheduler
 * writes it last, after the pod, so the last occurrence of the key is taken. */
static const char *node_names_array(const char *body, size_t len, size_t *alen)
{
	static const char key[] = "\"NodeNames\"";
	const char *at = NULL;
	for (const char *p = body; (p = memmem(p, len - (size_t)(p - body), key, sizeof(key) - 1));
	     p += sizeof(key) - 1)
		at = p;
	if (!at)
		return NULL;
	const char *p = at + sizeof(key) - 1, *end = body + len;
	while (p < end && (*p == ' ' || *p == ':' || *p == '\n' || *p == '\t' || *p == '\r'))
		p++;
	if (p == end || *p != '[')
		return NULL;
	bool in_str = false;
	for (const char *q = p + 1; q < end; q++) {
		if (in_str) {
			if (*q == '\\')
				q++;
			else if (*q == '"')
				in_str = false;
		} else if (*q == '"') {
			in_str = true;
		} else if (*q == ']') {
			*alen = (size_t)(q + 1 - p);
			return p;
		}
	}
	return NULL;
}

static struct evbuffer *floor_reply(enum floor_mode mode, const char *body, size_t len)
{
	struct evbuffer *b = evbuffer_new();
	size_t alen = 0;
	const char *names = mode == FLOOR_NAMES ? node_names_array(body, len, &alen) : NULL;
	if (mode == FLOOR_ECHO) {
		evbuffer_add(b, body, len);
	} else if (names) {
		static const char head[] = "{\"NodeNames\":",
		                  tail[] = ",\"FailedNodes\":{},\"Error\":\"\"}";
		evbuffer_add(b, head, sizeof(head) - 1);
		evbuffer_add(b, names, alen);
		evbuffer_add(b, tail, sizeof(tail) - 1);
	} else {
		evbuffer_add_reference(b, floor_body, sizeof(floor_body) - 1, NULL, NULL);
	}
	return b;
}

static void on_floor_request(struct evhttp_request *req, void *arg)
{
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	size_t len = evbuffer_get_length(in);
	struct evbuffer *b =
	    floor_reply(*(enum floor_mode *)arg, (const char *)evbuffer_pullup(in, -1), len);
	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
	                  "application/json");
	evhttp_send_reply(req, 200, "OK", b);
	evbuffer_free(b);
}

static void on_floor_h2_request(void *arg, struct h2_stream *st, const char *method,
                                const char *path, const char *body, size_t len)
{
	struct evbuffer *b = floor_reply(*(enum floor_mode *)arg, body, len);
	h2_stream_reply(st, 200, "application/json", b);
	evbuffer_free(b);
}

struct floor_listener {
	struct conns *conns;
	SSL_CTX *ctx;
};

static struct bufferevent *on_floor_connection(struct event_base *base, void *arg)
{
	struct floor_listener *l = arg;
	return conns_accept(l->conns, l->ctx);
}

static void on_floor_term(evutil_socket_t s, short w, void *base)
{
	event_base_loopexit(base, NULL);
}

/* certs: a folder with server.crt, server.key and the clients' ca.crt (make
 * bench-gang passes drake's, so the floor speaks TLS exactly as drake does). */
static int floor_serve(int port, enum floor_mode mode, const char *certs)
{
	char crt[512], key[512], ca[512];
	snprintf(crt, sizeof(crt), "%s/server.crt", certs);
	snprintf(key, sizeof(key), "%s/server.key", certs);
	snprintf(ca, sizeof(ca), "%s/ca.crt", certs);
	struct tls_files files = {crt, key, ca, true};
	struct floor_listener l = {0};
	char msg[256];
	if (tls_context_new(&files, &l.ctx, msg, sizeof(msg))) {
		fprintf(stderr, "floor: %s\n", msg);
		return 1;
	}
	struct event_base *base = event_base_new();
	struct h2_handler h2 = {
	    .request = on_floor_h2_request,
	    .arg = &mode,
	    .limits = {.max_body = 64 << 20, .max_headers = 64 << 10, .max_streams = 256}};
	/* no cap and, in effect, no request deadline: a benchmark's client */
	l.conns = conns_new(base, 0, 1e6, &h2);
	struct evhttp *http = evhttp_new(base);
	evhttp_set_bevcb(http, on_floor_connection, &l);
	evhttp_set_gencb(http, on_floor_request, &mode);
	evhttp_set_max_body_size(http, 64 << 20);
	struct evhttp_bound_socket *bound =
	    evhttp_bind_socket_with_handle(http, "127.0.0.1", (ev_uint16_t)port);
	if (!bound || !l.conns) {
		fprintf(stderr, "floor: cannot listen on %d\n", port);
		return 1;
	}
	int one = 1; /* as drake does: accepted sockets inherit it */
	setsockopt(evhttp_bound_socket_get_fd(bound), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	struct event *term = evsignal_new(base, SIGTERM, on_floor_term, base);
	event_add(term, NULL);
	event_base_dispatch(base);
	event_free(term);
	evhttp_free(http);
	conns_free(l.conns);
	event_base_free(base);
	SSL_CTX_free(l.ctx);
	return 0;
}

/* ---- the load generator ---- */

struct server {
	const char *name;
	pid_t pid;
	int port;
	CURL *h;
	unsigned long served; /* requests on the current connection */
	bool probing;         /* waiting for it to answer: failures are expected */
};

/* The HTTP version the client asks for: 2 (what kube-scheduler's client
 * takes), or 1.1. */
static long http_version = CURL_HTTP_VERSION_2TLS;

/* curl 7.88 ends every finished h2 stream with a RST_STREAM, and nghttp2
 * (drake's and the floor's) answers more than 1,000 resets, plus 33 a
 * second, with GOAWAY: its guard against the rapid-reset attack. Go's client,
 * kube-scheduler's, sends no reset after a whole reply. So the client opens a
 * new connection after this many requests, outside the timed ones. */
#define H2_RECYCLE 500

static size_t sink(char *p, size_t sz, size_t n, void *arg)
{
	size_t *got = arg;
	*got += sz * n;
	return sz * n;
}

static struct curl_slist *json_headers(void)
{
	static struct curl_slist *hdrs;
	if (!hdrs)
		hdrs = curl_slist_append(NULL, "Content-Type: application/json");
	return hdrs;
}

/* What every handle of the client sets: mTLS, timeout, HTTP version, JSON. */
static void handle_options(CURL *h)
{
	curl_easy_setopt(h, CURLOPT_CAINFO, CERTS "/ca.crt");
	curl_easy_setopt(h, CURLOPT_SSLCERT, CERTS "/client.crt");
	curl_easy_setopt(h, CURLOPT_SSLKEY, CERTS "/client.key");
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
	curl_easy_setopt(h, CURLOPT_HTTP_VERSION, http_version);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, json_headers());
}

static int post_once(struct server *s, const char *path, const char *body, size_t len, double *secs)
{
	char url[256];
	snprintf(url, sizeof(url), "https://127.0.0.1:%d%s", s->port, path);
	size_t got = 0;
	curl_easy_setopt(s->h, CURLOPT_URL, url);
	curl_easy_setopt(s->h, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(s->h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	curl_easy_setopt(s->h, CURLOPT_WRITEFUNCTION, sink);
	curl_easy_setopt(s->h, CURLOPT_WRITEDATA, &got);
	double t0 = bench_now();
	CURLcode rc = curl_easy_perform(s->h);
	*secs = bench_now() - t0;
	s->served++;
	long code = 0;
	curl_easy_getinfo(s->h, CURLINFO_RESPONSE_CODE, &code);
	if (rc != CURLE_OK || code != 200) {
		if (!s->probing)
			fprintf(stderr, "bench: %s %s: %s (HTTP %ld)\n", s->name, path,
			        curl_easy_strerror(rc), code);
		return -1;
	}
	return 0;
}

/* A new connection: a fresh handle and one untimed request on it. */
static int reconnect(struct server *s, const char *path, const char *body, size_t len)
{
	if (s->h)
		curl_easy_cleanup(s->h);
	s->h = curl_easy_init();
	handle_options(s->h);
	s->served = 0;
	double t;
	return post_once(s, path, body, len, &t);
}

static int post(struct server *s, const char *path, const char *body, size_t len, double *secs)
{
	if (http_version != CURL_HTTP_VERSION_1_1 && s->served >= H2_RECYCLE &&
	    reconnect(s, path, body, len) != 0)
		return -1;
	return post_once(s, path, body, len, secs);
}

static void connect_server(struct server *s)
{
	static const char probe[] = "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"NodeNames\":[]}";
	double deadline = bench_now() + 20;
	s->probing = true;
	while (reconnect(s, "/scheduler/prioritize", probe, sizeof(probe) - 1) != 0 &&
	       bench_now() < deadline) {
		struct timespec ts = {0, 50 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	s->probing = false;
}

static char *make_args(size_t n, size_t *len)
{
	size_t cap = 1024 + n * 32;
	char *b = malloc(cap);
	size_t o = (size_t)snprintf(
	    b, cap,
	    "{\"Pod\":{\"metadata\":{\"name\":\"mnist-worker-3\",\"namespace\":\"ml\","
	    "\"uid\":\"5b9c0d2e-0000-4000-8000-000000000003\",\"labels\":{"
	    "\"training.kubeflow.org/job-name\":\"mnist\","
	    "\"training.kubeflow.org/replica-type\":\"worker\","
	    "\"training.kubeflow.org/replica-index\":\"3\"}},\"spec\":{\"schedulerName\":"
	    "\"default-scheduler\",\"containers\":[{\"name\":\"tensorflow\",\"image\":\"tf:2\","
	    "\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]},\"status\":{\"phase\":"
	    "\"Pending\"}},\"Nodes\":null,\"NodeNames\":[");
	for (size_t i = 0; i < n; i++)
		o += (size_t)snprintf(b + o, cap - o, "%s\"node-%06zu\"", i ? "," : "", i);
	o += (size_t)snprintf(b + o, cap - o, "]}");
	*len = o;
	return b;
}

struct stats {
	double median_us, p99_us, rps;
};

static struct stats summarise(double *v, size_t n, double total)
{
	qsort(v, n, sizeof(*v), bench_cmp_double);
	struct stats s = {v[n / 2] * 1e6, v[(size_t)((double)(n - 1) * 0.99)] * 1e6,
	                  (double)n / total};
	return s;
}

static pid_t spawn(const char *const *argv, const char *log)
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 2, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	pid_t pid;
	if (posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, environ) != 0) {
		fprintf(stderr, "bench: cannot start %s\n", argv[0]);
		exit(1);
	}
	posix_spawn_file_actions_destroy(&fa);
	return pid;
}

/* ---- load at saturation ---- */

static long count_fds(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return -1;
	long n = 0;
	for (struct dirent *e; (e = readdir(d));)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* A keep-alive connection's requests, one at a time. Each lane has its own
 * multi handle, and so its own connection cache: over h2 its requests can
 * then be counted per connection (H2_RECYCLE). */
struct lane {
	CURLM *m;
	CURL *h;
	double start;
	size_t got;
	unsigned long sent; /* requests on the lane's current connection */
	int verb;           /* 0 filter, 1 prioritize */
};

static void lane_send(struct lane *l, int port, const char *body, size_t len)
{
	static const char *const paths[] = {"/scheduler/filter", "/scheduler/prioritize"};
	char url[128];
	snprintf(url, sizeof(url), "https://127.0.0.1:%d%s", port, paths[l->verb]);
	l->got = 0;
	curl_easy_setopt(l->h, CURLOPT_URL, url);
	curl_easy_setopt(l->h, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(l->h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	curl_easy_setopt(l->h, CURLOPT_WRITEFUNCTION, sink);
	curl_easy_setopt(l->h, CURLOPT_WRITEDATA, &l->got);
	/* over h2, the connection closes after every H2_RECYCLE-th (see there) */
	bool last = http_version != CURL_HTTP_VERSION_1_1 && ++l->sent == H2_RECYCLE;
	curl_easy_setopt(l->h, CURLOPT_FORBID_REUSE, last ? 1L : 0L);
	if (last)
		l->sent = 0;
	l->start = bench_now();
}

static int load_main(const char *drake, const char *csv, double seconds, int nconns, double sample,
                     size_t nodes)
{
	char port[16];
	struct server d = {.name = "drake", .port = bench_free_port()};
	snprintf(port, sizeof(port), "%d", d.port);
	const char *dargv[] = {drake,         "serve",
	                       "--port",      port,
	                       "--tls-cert",  CERTS "/server.crt",
	                       "--tls-key",   CERTS "/server.key",
	                       "--client-ca", CERTS "/ca.crt",
	                       "--log-level", "warn",
	                       NULL};
	unsetenv("DRAKE_KUBECONFIG");
	d.pid = spawn(dargv, "build/bench/drake-load.log");
	connect_server(&d); /* waits until drake answers */
	FILE *out = fopen(csv, "w");
	if (!out) {
		fprintf(stderr, "bench: cannot write %s: %s\n", csv, strerror(errno));
		kill(d.pid, SIGTERM);
		waitpid(d.pid, NULL, 0);
		return 1;
	}
	fprintf(out, "t_s,requests,errors,rps,p50_us,p99_us,rss_kib,fds\n");
	size_t len;
	char *body = make_args(nodes, &len);
	struct lane *lanes = calloc((size_t)nconns, sizeof(*lanes));
	for (int i = 0; i < nconns; i++) {
		lanes[i].m = curl_multi_init();
		lanes[i].h = curl_easy_init();
		lanes[i].verb = i % 2;
		handle_options(lanes[i].h);
		lane_send(&lanes[i], d.port, body, len);
		curl_multi_add_handle(lanes[i].m, lanes[i].h);
	}
	size_t cap = 1 << 16, n = 0;
	double *lat = malloc(cap * sizeof(double));
	unsigned long long total = 0, errors = 0, interval_errors = 0;
	long rss0 = -1, rss_max = 0, rss_last = 0, fds0 = -1, fds_max = 0, fds_last = 0;
	double t0 = bench_now(), next = t0 + sample, p99_max = 0;
	printf("%7s %9s %7s %8s %9s %9s %9s %5s\n", "t (s)", "requests", "errors", "r/s", "p50",
	       "p99", "RSS MB", "fds");
	while (bench_now() - t0 < seconds) {
		for (int i = 0; i < nconns; i++) {
			struct lane *l = &lanes[i];
			int running, left;
			curl_multi_perform(l->m, &running);
			CURLMsg *msg = curl_multi_info_read(l->m, &left);
			if (!msg || msg->msg != CURLMSG_DONE)
				continue;
			long code = 0;
			curl_easy_getinfo(l->h, CURLINFO_RESPONSE_CODE, &code);
			if (msg->data.result != CURLE_OK || code != 200) {
				interval_errors++;
				fprintf(stderr, "bench: load: %s (HTTP %ld)\n",
				        curl_easy_strerror(msg->data.result), code);
			}
			if (n == cap) {
				cap *= 2;
				lat = realloc(lat, cap * sizeof(double));
			}
			lat[n++] = bench_now() - l->start;
			curl_multi_remove_handle(l->m, l->h);
			l->verb ^= 1;
			lane_send(l, d.port, body, len);
			curl_multi_add_handle(l->m, l->h);
		}
		if (bench_now() >= next || bench_now() - t0 >= seconds) {
			double t = bench_now() - t0;
			long rss = bench_status_kib(d.pid, "VmRSS"), fds = count_fds(d.pid);
			struct stats st = n ? summarise(lat, n, sample) : (struct stats){0, 0, 0};
			if (rss0 < 0) {
				rss0 = rss;
				fds0 = fds;
			}
			rss_max = rss > rss_max ? rss : rss_max;
			fds_max = fds > fds_max ? fds : fds_max;
			rss_last = rss;
			fds_last = fds;
			p99_max = st.p99_us > p99_max ? st.p99_us : p99_max;
			fprintf(out, "%.1f,%zu,%llu,%.0f,%.0f,%.0f,%ld,%ld\n", t, n,
			        interval_errors, (double)n / sample, st.median_us, st.p99_us, rss,
			        fds);
			fflush(out);
			printf("%7.1f %9zu %7llu %8.0f %7.0fus %7.0fus %9.1f %5ld\n", t, n,
			       interval_errors, (double)n / sample, st.median_us, st.p99_us,
			       (double)rss / 1024, fds);
			fflush(stdout);
			total += n;
			errors += interval_errors;
			interval_errors = 0;
			n = 0;
			next += sample;
		}
		/* wait for any lane's socket, at most 10 ms */
		fd_set rd, wr, ex;
		FD_ZERO(&rd);
		FD_ZERO(&wr);
		FD_ZERO(&ex);
		int maxfd = -1;
		for (int i = 0; i < nconns; i++) {
			int fd = -1;
			curl_multi_fdset(lanes[i].m, &rd, &wr, &ex, &fd);
			maxfd = fd > maxfd ? fd : maxfd;
		}
		struct timeval tv = {0, maxfd < 0 ? 1000 : 10000};
		select(maxfd + 1, &rd, &wr, &ex, &tv);
	}
	for (int i = 0; i < nconns; i++) {
		curl_multi_remove_handle(lanes[i].m, lanes[i].h);
		curl_easy_cleanup(lanes[i].h);
		curl_multi_cleanup(lanes[i].m);
	}
	curl_slist_free_all(json_headers());
	free(lanes);
	free(lat);
	free(body);
	fclose(out);
	/* Flat: the last sample within 10 % (and 2 MB) of the first, and
	 * descriptors back where they were. */
	bool rss_flat = (double)rss_last <= (double)rss0 * 1.10 + 2048;
	bool fds_flat = fds_last <= fds0 + 2;
	printf("load: %.0f s, %d connections, %zu nodes per request: %llu requests (%.0f/s), "
	       "%llu errors; worst interval p99 %.0f us\n",
	       seconds, nconns, nodes, total, (double)total / seconds, errors, p99_max);
	printf("RSS %.1f MB first, %.1f MB last, %.1f MB max: %s; fds %ld first, %ld last, %ld "
	       "max: %s\n",
	       (double)rss0 / 1024, (double)rss_last / 1024, (double)rss_max / 1024,
	       rss_flat ? "flat" : "GROWING", fds0, fds_last, fds_max,
	       fds_flat ? "flat" : "GROWING");
	printf("csv: %s\n", csv);
	kill(d.pid, SIGTERM);
	waitpid(d.pid, NULL, 0);
	return errors == 0 && rss_flat && fds_flat ? 0 : 1;
}

int main(int argc, char **argv)
{
	/* --floor-serve|--echo-serve|--names-serve PORT [CERT-DIR]: only the
	 * responder */
	static const struct {
		const char *flag;
		enum floor_mode mode;
	} responders[] = {{"--floor-serve", FLOOR_FIXED},
	                  {"--echo-serve", FLOOR_ECHO},
	                  {"--names-serve", FLOOR_NAMES}};
	for (size_t i = 0; i < sizeof(responders) / sizeof(responders[0]); i++)
		if ((argc == 3 || argc == 4) && strcmp(argv[1], responders[i].flag) == 0)
			return floor_serve(atoi(argv[2]), responders[i].mode,
			                   argc == 4 ? argv[3] : CERTS);

	const char *drake = "build/release/drake", *csv = "bench/results/extender.csv";
	const char *sizes_s = NULL;
	int rounds = 5;
	double budget = 2.0, load = 0, sample = 5;
	int conns = 8;
	size_t load_nodes = 1000;
	const char *http = "2";
	const struct flag flags[] = {
	    {"drake", NULL, FLAG_STRING, &drake, "build/release/drake", "the drake binary"},
	    {"csv", NULL, FLAG_STRING, &csv, "bench/results/extender.csv", "where the CSV goes"},
	    {"rounds", NULL, FLAG_INT, &rounds, "5", "alternating drake/floor rounds per case"},
	    {"seconds", NULL, FLAG_DOUBLE, &budget, "2",
	     "approximate time per server, case and round"},
	    {"sizes", NULL, FLAG_STRING, &sizes_s, "100,1000,5000,15000", "node counts"},
	    {"load", NULL, FLAG_DOUBLE, &load, "0",
	     "seconds of load at saturation instead of the per-call table (0: the table)"},
	    {"conns", NULL, FLAG_INT, &conns, "8", "--load: concurrent keep-alive connections"},
	    {"sample", NULL, FLAG_DOUBLE, &sample, "5", "--load: seconds per sample row"},
	    {"load-nodes", NULL, FLAG_COUNT, &load_nodes, "1000",
	     "--load: nodes named in each request"},
	    {"http", NULL, FLAG_STRING, &http, "2",
	     "HTTP version the client asks every server for: 2 (as kube-scheduler's client) or "
	     "1.1"},
	};
	const size_t nflags = sizeof(flags) / sizeof(flags[0]);
	enum flags_outcome out;
	char msg[256];
	if (flags_parse(flags, nflags, argc, argv, &out, msg, sizeof(msg))) {
		fprintf(stderr, "extender_bench: %s\n", msg);
		return 2;
	}
	if (out == FLAGS_HELP) {
		printf("usage: extender_bench [flags]\n\n");
		flags_usage(stdout, flags, nflags);
		return 0;
	}
	if (strcmp(http, "2") == 0) {
		http_version = CURL_HTTP_VERSION_2TLS;
	} else if (strcmp(http, "1.1") == 0) {
		http_version = CURL_HTTP_VERSION_1_1;
	} else {
		fprintf(stderr, "extender_bench: --http must be 2 or 1.1, not %s\n", http);
		return 2;
	}
	mkdir("build", 0755);
	mkdir("build/bench", 0755);
	if (system("hack/gen-certs.sh " CERTS " >/dev/null") != 0)
		return 1;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (load > 0) {
		if (conns < 1 || !(sample > 0)) {
			fprintf(stderr, "extender_bench: --conns and --sample must be positive\n");
			return 2;
		}
		mkdir("bench/results", 0755);
		int rc = load_main(drake, csv, load, conns, sample, load_nodes);
		curl_global_cleanup();
		return rc;
	}

	enum { NSRV = 3 };
	struct server srv[NSRV] = {{.name = "drake"}, {.name = "floor"}, {.name = "echo"}};
	char port0[16], port1[16], port2[16];
	for (int k = 0; k < NSRV; k++)
		srv[k].port = bench_free_port();
	snprintf(port0, sizeof(port0), "%d", srv[0].port);
	snprintf(port1, sizeof(port1), "%d", srv[1].port);
	snprintf(port2, sizeof(port2), "%d", srv[2].port);
	const char *dargv[] = {drake,         "serve",
	                       "--port",      port0,
	                       "--tls-cert",  CERTS "/server.crt",
	                       "--tls-key",   CERTS "/server.key",
	                       "--client-ca", CERTS "/ca.crt",
	                       "--log-level", "warn",
	                       NULL};
	char self[4096] = "/proc/self/exe";
	ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (sl > 0)
		self[sl] = '\0';
	const char *fargv[] = {self, "--floor-serve", port1, NULL};
	const char *eargv[] = {self, "--echo-serve", port2, NULL};
	unsetenv("DRAKE_KUBECONFIG");
	srv[0].pid = spawn(dargv, "build/bench/drake.log");
	srv[1].pid = spawn(fargv, "build/bench/floor.log");
	srv[2].pid = spawn(eargv, "build/bench/echo.log");
	for (int k = 0; k < NSRV; k++)
		connect_server(&srv[k]);

	size_t sizes[8], nsizes = 0;
	for (char *s = strdup(sizes_s), *tok = strtok(s, ","); tok && nsizes < 8;
	     tok = strtok(NULL, ","))
		sizes[nsizes++] = (size_t)strtoul(tok, NULL, 10);

	FILE *out_csv = fopen(csv, "w");
	if (!out_csv) {
		fprintf(stderr, "bench: cannot write %s: %s\n", csv, strerror(errno));
		return 1;
	}
	fprintf(out_csv, "verb,nodes,server,requests,median_us,p99_us,rps,body_bytes\n");
	printf("%-10s %6s %6s | %9s %9s %7s | %9s %9s %7s | %9s %9s %7s | %6s %6s\n", "verb",
	       "nodes", "body", "drake med", "p99", "r/s", "floor med", "p99", "r/s", "echo med",
	       "p99", "r/s", "/floor", "/echo");
	static const char *const verbs[] = {"filter", "prioritize"};
	int failed = 0;
	for (size_t si = 0; si < nsizes; si++) {
		size_t len;
		char *body = make_args(sizes[si], &len);
		for (int v = 0; v < 2; v++) {
			char path[64];
			snprintf(path, sizeof(path), "/scheduler/%s", verbs[v]);
			/* Calibrate the count per round from warm requests. */
			double t = 0;
			for (int w = 0; w < 10; w++)
				for (int k = 0; k < NSRV; k++)
					failed |= post(&srv[k], path, body, len, &t);
			size_t per_round = (size_t)(budget / (t > 1e-5 ? t * 2 : 1e-5));
			per_round = per_round < 30 ? 30 : per_round > 3000 ? 3000 : per_round;
			size_t cap = per_round * (size_t)rounds;
			double *lat[NSRV], total[NSRV] = {0};
			size_t n[NSRV] = {0};
			for (int k = 0; k < NSRV; k++)
				lat[k] = malloc(cap * sizeof(double));
			/* Rounds rotate the order, so each server runs first, second and
			 * last equally often and all see the same machine noise. */
			for (int r = 0; r < rounds; r++)
				for (int j = 0; j < NSRV; j++) {
					int which = (r + j) % NSRV;
					double t0 = bench_now();
					for (size_t i = 0; i < per_round; i++) {
						if (post(&srv[which], path, body, len, &t))
							failed = 1;
						lat[which][n[which]++] = t;
					}
					total[which] += bench_now() - t0;
				}
			struct stats st[NSRV];
			for (int k = 0; k < NSRV; k++) {
				st[k] = summarise(lat[k], n[k], total[k]);
				fprintf(out_csv, "%s,%zu,%s,%zu,%.1f,%.1f,%.0f,%zu\n", verbs[v],
				        sizes[si], srv[k].name, n[k], st[k].median_us, st[k].p99_us,
				        st[k].rps, len);
				free(lat[k]);
			}
			printf("%-10s %6zu %5zuK | %7.0fus %7.0fus %7.0f | %7.0fus %7.0fus %7.0f | "
			       "%7.0fus %7.0fus %7.0f | %5.2fx %5.2fx\n",
			       verbs[v], sizes[si], len / 1024, st[0].median_us, st[0].p99_us,
			       st[0].rps, st[1].median_us, st[1].p99_us, st[1].rps, st[2].median_us,
			       st[2].p99_us, st[2].rps, st[0].median_us / st[1].median_us,
			       st[0].median_us / st[2].median_us);
			fflush(stdout);
		}
		free(body);
	}
	printf("peak RSS: drake %ld KiB, floor %ld KiB\n", bench_status_kib(srv[0].pid, "VmHWM"),
	       bench_status_kib(srv[1].pid, "VmHWM"));
	fprintf(out_csv, "# peak_rss_kib drake=%ld floor=%ld\n",
	        bench_status_kib(srv[0].pid, "VmHWM"), bench_status_kib(srv[1].pid, "VmHWM"));
	fclose(out_csv);
	printf("csv: %s\n", csv);
	for (int k = 0; k < NSRV; k++) {
		curl_easy_cleanup(srv[k].h);
		kill(srv[k].pid, SIGTERM);
		waitpid(srv[k].pid, NULL, 0);
	}
	curl_global_cleanup();
	return failed ? 1 : 0;
}
