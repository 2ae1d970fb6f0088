/*
 * memory_bench.c - `make bench-memory`: drake's memory with 5,000 nodes and
 * 50,000 pods in its caches, and what a full relist costs.
 *
 * The program is the API server: a small HTTP/1.1 server on loopback that
 * answers paged lists of realistic objects (GPU nodes of three vendors with
 * their extended resources, labels, taints, images; pods with owner
 * references, resources, env, volumes, conditions) and holds watches open.
 * It starts `drake serve --reconcile` against it, waits for the caches to
 * sync (drake's informer_synced lines), reads VmRSS and VmHWM, then forces
 * full relists of every cache by ending each watch with a 410 Gone ERROR
 * event, as an etcd compaction does, and reads each relist's duration from
 * drake's informer_resynced lines. Prints the figures (medians over the
 * relists) and writes one CSV row per relist.
 *
 * Then the controller phase (--passes, 0 to skip): the same nodes and pods
 * with their 6,250 TFJobs (managed by drake, with the status drake would
 * write) and their services, so the controller has every job to consider
 * and nothing to write; a second `drake serve --reconcile --migrate` with
 * debug logging. After the pass that follows the sync, each pass is
 * started by one pod's MODIFIED watch event (one job synced, then the
 * admission round and the migration step over every job), and its CPU
 * time is read from drake's controller_pass line. Then --filters filter
 * calls of a gang member, timed on the wall: with its planned node
 * offered, and without it, so drake re-plans it (the re-plan's cost is
 * the difference). Prints the medians and writes them to --pass-csv, one
 * row per pass and one per filter median.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "bench/bench_util.h"
#include "common/flags.h"

extern char **environ;

#define DIR       "build/bench"
#define MAX_CONNS 64
#define INBUF     65536

static size_t n_nodes = 5000, n_pods = 50000;
static bool managed_fields;
/* The collection's resourceVersion moves with each relist; the objects'
 * stay at theirs, as most do across an etcd compaction, so a relist costs
 * the list and the comparison, not 55,000 update events. */
static int rv = 1000;
#define OBJECT_RV 1000

/* ---- objects ---- */

struct buf {
	char *p;
	size_t len, cap;
};

static void put(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct buf *b, const char *fmt, ...)
{
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if ((size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		b->cap = b->cap * 2 + (size_t)n + 4096;
		b->p = realloc(b->p, b->cap);
		if (!b->p) {
			perror("memory_bench");
			exit(1);
		}
	}
}

static const char *const managed =
    ",\"managedFields\":[{\"manager\":\"kube-controller-manager\",\"operation\":\"Update\","
    "\"apiVersion\":\"v1\",\"time\":\"2026-01-01T00:00:00Z\",\"fieldsType\":\"FieldsV1\","
    "\"fieldsV1\":{\"f:metadata\":{\"f:labels\":{\".\":{},\"f:app\":{},\"f:tier\":{}},"
    "\"f:ownerReferences\":{\".\":{},\"k:{\\\"uid\\\":\\\"x\\\"}\":{}}},\"f:spec\":{"
    "\"f:containers\":{\"k:{\\\"name\\\":\\\"main\\\"}\":{\".\":{},\"f:env\":{},"
    "\"f:image\":{},\"f:name\":{},\"f:resources\":{}}}}}},{\"manager\":\"kubelet\","
    "\"operation\":\"Update\",\"apiVersion\":\"v1\",\"time\":\"2026-01-01T00:00:05Z\","
    "\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:status\":{\"f:conditions\":{},"
    "\"f:containerStatuses\":{},\"f:hostIP\":{},\"f:phase\":{},\"f:podIP\":{},"
    "\"f:startTime\":{}}},\"subresource\":\"status\"}]";

/* Three vendors' GPU nodes, as their device plugins and feature discovery
 * label and size them. */
static void node_json(struct buf *b, size_t i)
{
	static const struct {
		const char *res, *product, *taint;
		int gpus;
	} kinds[] = {
	    {"nvidia.com/gpu", "NVIDIA-A100-SXM4-80GB", "nvidia.com/gpu", 8},
	    {"amd.com/gpu", "AMD-Instinct-MI250X", "amd.com/gpu", 8},
	    {"habana.ai/gaudi", "HL-225", "habana.ai/gaudi", 8},
	};
	const size_t k = i % 3;
	put(b,
	    "{\"metadata\":{\"name\":\"gpu-node-%05zu\",\"uid\":\"00000000-0000-4000-8000-%012zu\","
	    "\"resourceVersion\":\"%d\",\"creationTimestamp\":\"2026-01-01T00:00:00Z\","
	    "\"labels\":{\"kubernetes.io/hostname\":\"gpu-node-%05zu\",\"kubernetes.io/arch\":"
	    "\"amd64\",\"kubernetes.io/os\":\"linux\",\"node.kubernetes.io/instance-type\":"
	    "\"p4d.24xlarge\",\"topology.kubernetes.io/zone\":\"zone-%zu\","
	    "\"topology.kubernetes.io/region\":\"region-1\",\"gpu.product\":\"%s\","
	    "\"gpu.count\":\"%d\",\"feature.node.kubernetes.io/rdma.capable\":\"true\","
	    "\"feature.node.kubernetes.io/cpu-model.vendor_id\":\"AMD\",\"rack\":\"rack-%zu\"},"
	    "\"annotations\":{\"node.alpha.kubernetes.io/ttl\":\"0\","
	    "\"volumes.kubernetes.io/controller-managed-attach-detach\":\"true\"}%s},"
	    "\"spec\":{\"podCIDR\":\"10.%zu.%zu.0/24\",\"providerID\":\"aws:///zone/i-%012zx\","
	    "\"taints\":[{\"key\":\"%s\",\"value\":\"present\",\"effect\":\"NoSchedule\"},"
	    "{\"key\":\"dedicated\",\"value\":\"training\",\"effect\":\"NoSchedule\"}]},",
	    i, i, OBJECT_RV, i, i % 4, kinds[k].product, kinds[k].gpus, i / 32,
	    managed_fields ? managed : "", (i >> 8) & 255, i & 255, i, kinds[k].taint);
	for (int a = 0; a < 2; a++)
		put(b,
		    "%s\"%s\":{\"cpu\":\"%s\",\"memory\":\"%s\",\"ephemeral-storage\":\"%s\","
		    "\"hugepages-1Gi\":\"0\",\"hugepages-2Mi\":\"0\",\"pods\":\"110\",\"%s\":\"%"
		    "d\","
		    "\"rdma/hca_shared_devices_a\":\"1k\",\"smarter-devices/fuse\":\"20\"}",
		    a ? "," : "\"status\":{", a ? "allocatable" : "capacity", a ? "95500m" : "96",
		    a ? "1134554560Ki" : "1148751872Ki", a ? "7264336152Ki" : "7882608640Ki",
		    kinds[k].res, kinds[k].gpus);
	put(b, ",\"conditions\":[");
	static const char *const conds[] = {"MemoryPressure", "DiskPressure", "PIDPressure",
	                                    "Ready"};
	for (int c = 0; c < 4; c++)
		put(b,
		    "%s{\"type\":\"%s\",\"status\":\"%s\",\"lastHeartbeatTime\":"
		    "\"2026-01-01T00:10:00Z\",\"lastTransitionTime\":\"2026-01-01T00:00:00Z\","
		    "\"reason\":\"Kubelet%s\",\"message\":\"kubelet reports %s\"}",
		    c ? "," : "", conds[c], c == 3 ? "True" : "False", conds[c], conds[c]);
	put(b,
	    "],\"addresses\":[{\"type\":\"InternalIP\",\"address\":\"10.1.%zu.%zu\"},"
	    "{\"type\":\"Hostname\",\"address\":\"gpu-node-%05zu\"}],\"nodeInfo\":{"
	    "\"machineID\":\"%032zx\",\"systemUUID\":\"ec2%029zx\",\"bootID\":\"%032zx\","
	    "\"kernelVersion\":\"5.15.0-1051-aws\",\"osImage\":\"Ubuntu 22.04.3 LTS\","
	    "\"containerRuntimeVersion\":\"containerd://1.7.2\",\"kubeletVersion\":\"v1.30.2\","
	    "\"kubeProxyVersion\":\"v1.30.2\",\"operatingSystem\":\"linux\",\"architecture\":"
	    "\"amd64\"},\"images\":[",
	    (i >> 8) & 255, i & 255, i, i, i, i);
	for (int m = 0; m < 8; m++)
		put(b,
		    "%s{\"names\":[\"registry.example.com/ml/image-%d@sha256:%064d\","
		    "\"registry.example.com/ml/image-%d:v%d\"],\"sizeBytes\":%d}",
		    m ? "," : "", m, m, m, m, 100000000 + m);
	put(b, "]}}");
}

/* Pod i is replica i % 8 of job i / 8: its PS, then workers 0 to 6. */
static void pod_json(struct buf *b, size_t i, int orv)
{
	size_t job = i / 8, index = i % 8 ? i % 8 - 1 : 0;
	bool ps = i % 8 == 0;
	put(b,
	    "{\"metadata\":{\"name\":\"job-%05zu-%s-%zu\",\"namespace\":\"team-%zu\","
	    "\"uid\":\"10000000-0000-4000-8000-%012zu\",\"resourceVersion\":\"%d\","
	    "\"creationTimestamp\":\"2026-01-01T00:00:00Z\",\"labels\":{"
	    "\"training.kubeflow.org/job-name\":\"job-%05zu\","
	    "\"training.kubeflow.org/replica-type\":\"%s\","
	    "\"training.kubeflow.org/replica-index\":\"%zu\","
	    "\"training.kubeflow.org/operator-name\":\"other-operator\",\"app\":\"train\"},"
	    "\"annotations\":{\"prometheus.io/scrape\":\"true\",\"prometheus.io/port\":\"9090\"},"
	    "\"ownerReferences\":[{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\","
	    "\"name\":\"job-%05zu\",\"uid\":\"20000000-0000-4000-8000-%012zu\","
	    "\"controller\":true,\"blockOwnerDeletion\":true}]%s},",
	    job, ps ? "ps" : "worker", index, job % 40, i, orv, job, ps ? "ps" : "worker", index,
	    job, job, managed_fields ? managed : "");
	put(b,
	    "\"spec\":{\"nodeName\":\"gpu-node-%05zu\",\"schedulerName\":\"default-scheduler\","
	    "\"restartPolicy\":\"Never\",\"serviceAccountName\":\"default\","
	    "\"terminationGracePeriodSeconds\":30,\"dnsPolicy\":\"ClusterFirst\","
	    "\"containers\":[{\"name\":\"tensorflow\",\"image\":"
	    "\"registry.example.com/ml/tf-train:2.15.0-gpu\",\"command\":[\"python\","
	    "\"/opt/train.py\",\"--epochs=90\",\"--batch-size=256\"],\"ports\":[{\"name\":"
	    "\"tfjob-port\",\"containerPort\":2222,\"protocol\":\"TCP\"}],\"env\":["
	    "{\"name\":\"TF_CONFIG\",\"value\":\"{\\\"cluster\\\":{\\\"ps\\\":[\\\"job-%05zu-ps-0"
	    ".team-%zu.svc:2222\\\"],\\\"worker\\\":[\\\"job-%05zu-worker-1.team-%zu.svc:2222\\\","
	    "\\\"job-%05zu-worker-2.team-%zu.svc:2222\\\"]},\\\"task\\\":{\\\"type\\\":\\\"%s\\\","
	    "\\\"index\\\":%zu}}\"},{\"name\":\"NCCL_DEBUG\",\"value\":\"WARN\"},"
	    "{\"name\":\"POD_NAME\",\"valueFrom\":{\"fieldRef\":{\"fieldPath\":"
	    "\"metadata.name\"}}},{\"name\":\"DATA_DIR\",\"value\":\"/data/imagenet\"}],"
	    "\"resources\":{\"requests\":{\"cpu\":\"8\",\"memory\":\"64Gi\",\"nvidia.com/gpu\":"
	    "\"%d\"},\"limits\":{\"cpu\":\"8\",\"memory\":\"64Gi\",\"nvidia.com/gpu\":\"%d\"}},"
	    "\"volumeMounts\":[{\"name\":\"data\",\"mountPath\":\"/data\"},{\"name\":"
	    "\"kube-api-access\",\"mountPath\":\"/var/run/secrets/kubernetes.io/serviceaccount\","
	    "\"readOnly\":true}]}],\"volumes\":[{\"name\":\"data\",\"persistentVolumeClaim\":{"
	    "\"claimName\":\"imagenet\"}},{\"name\":\"kube-api-access\",\"projected\":{"
	    "\"sources\":[{\"serviceAccountToken\":{\"expirationSeconds\":3607,\"path\":"
	    "\"token\"}}]}}],\"tolerations\":[{\"key\":\"nvidia.com/gpu\",\"operator\":"
	    "\"Exists\",\"effect\":\"NoSchedule\"},{\"key\":\"dedicated\",\"operator\":\"Equal\","
	    "\"value\":\"training\",\"effect\":\"NoSchedule\"}]},",
	    i % n_nodes, job, job % 40, job, job % 40, job, job % 40, ps ? "ps" : "worker", index,
	    ps ? 0 : 1, ps ? 0 : 1);
	put(b, "\"status\":{\"phase\":\"Running\",\"conditions\":[");
	static const char *const conds[] = {"Initialized", "Ready", "ContainersReady",
	                                    "PodScheduled"};
	for (int c = 0; c < 4; c++)
		put(b,
		    "%s{\"type\":\"%s\",\"status\":\"True\",\"lastProbeTime\":null,"
		    "\"lastTransitionTime\":\"2026-01-01T00:00:0%dZ\"}",
		    c ? "," : "", conds[c], c);
	put(b,
	    "],\"hostIP\":\"10.1.%zu.%zu\",\"podIP\":\"10.%zu.%zu.%zu\",\"startTime\":"
	    "\"2026-01-01T00:00:00Z\",\"qosClass\":\"Guaranteed\",\"containerStatuses\":[{"
	    "\"name\":\"tensorflow\",\"ready\":true,\"restartCount\":0,\"started\":true,"
	    "\"image\":\"registry.example.com/ml/tf-train:2.15.0-gpu\",\"imageID\":"
	    "\"registry.example.com/ml/tf-train@sha256:%064zu\",\"containerID\":"
	    "\"containerd://%064zx\",\"state\":{\"running\":{\"startedAt\":"
	    "\"2026-01-01T00:00:05Z\"}}}]}}",
	    ((i % n_nodes) >> 8) & 255, i % n_nodes & 255, 100 + (i >> 16), (i >> 8) & 255, i & 255,
	    i, i);
}

/* The controller phase's world adds each pod's TFJob (1 PS and 7 workers,
 * managed by drake, with the status drake would write for it) and each
 * replica's headless service, so a pass has nothing to write. */
static bool jobs_world;

static void tfjob_json(struct buf *b, size_t job)
{
	put(b,
	    "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":"
	    "\"job-%05zu\",\"namespace\":\"team-%zu\",\"uid\":\"20000000-0000-4000-8000-%012zu\","
	    "\"resourceVersion\":\"%d\",\"creationTimestamp\":\"2026-01-01T00:00:00Z\"},"
	    "\"spec\":{\"runPolicy\":{\"cleanPodPolicy\":\"Running\"},\"tfReplicaSpecs\":{",
	    job, job % 40, job, OBJECT_RV);
	for (int w = 0; w < 2; w++)
		put(b,
		    "%s\"%s\":{\"replicas\":%d,\"restartPolicy\":\"Never\",\"template\":{\"spec\":"
		    "{\"containers\":[{\"name\":\"tensorflow\",\"image\":"
		    "\"registry.example.com/ml/tf-train:2.15.0-gpu\",\"resources\":{\"requests\":"
		    "{\"cpu\":\"8\",\"memory\":\"64Gi\",\"nvidia.com/gpu\":\"%d\"},\"limits\":{"
		    "\"cpu\":\"8\",\"memory\":\"64Gi\",\"nvidia.com/gpu\":\"%d\"}}}]}}}",
		    w ? "," : "", w ? "Worker" : "PS", w ? 7 : 1, w, w);
	put(b, "}},\"status\":{\"conditions\":[");
	static const char *const conds[][2] = {{"Created", "TFJobCreated"},
	                                       {"Running", "TFJobRunning"}};
	for (int c = 0; c < 2; c++)
		put(b,
		    "%s{\"type\":\"%s\",\"status\":\"True\",\"reason\":\"%s\",\"message\":"
		    "\"TFJob team-%zu/job-%05zu is "
		    "%s.\",\"lastUpdateTime\":\"2026-01-01T00:00:0%dZ\","
		    "\"lastTransitionTime\":\"2026-01-01T00:00:0%dZ\"}",
		    c ? "," : "", conds[c][0], conds[c][1], job % 40, job,
		    c ? "running" : "created", c, c);
	put(b, "],\"replicaStatuses\":{");
	for (int w = 0; w < 2; w++)
		put(b,
		    "%s\"%s\":{\"active\":%d,\"succeeded\":0,\"failed\":0,\"selector\":"
		    "\"training.kubeflow.org/operator-name=tfjob-controller,"
		    "training.kubeflow.org/job-name=job-%05zu,training.kubeflow.org/"
		    "replica-type=%s\"}",
		    w ? "," : "", w ? "Worker" : "PS", w ? 7 : 1, job, w ? "worker" : "ps");
	put(b, "},\"startTime\":\"2026-01-01T00:00:00Z\"}}");
}

static void service_json(struct buf *b, size_t i)
{
	size_t job = i / 8, index = i % 8 ? i % 8 - 1 : 0;
	const char *type = i % 8 ? "worker" : "ps";
	put(b,
	    "{\"metadata\":{\"name\":\"job-%05zu-%s-%zu\",\"namespace\":\"team-%zu\","
	    "\"uid\":\"30000000-0000-4000-8000-%012zu\",\"resourceVersion\":\"%d\","
	    "\"labels\":{\"training.kubeflow.org/job-name\":\"job-%05zu\","
	    "\"training.kubeflow.org/replica-type\":\"%s\","
	    "\"training.kubeflow.org/replica-index\":\"%zu\"},"
	    "\"ownerReferences\":[{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\","
	    "\"name\":\"job-%05zu\",\"uid\":\"20000000-0000-4000-8000-%012zu\","
	    "\"controller\":true}]},\"spec\":{\"clusterIP\":\"None\",\"ports\":[{\"name\":"
	    "\"tfjob-port\",\"port\":2222}]}}",
	    job, type, index, job % 40, i, OBJECT_RV, job, type, index, job, job);
}

/* ---- the API server ---- */

enum watch_kind { W_NONE, W_NODES, W_PODS, W_OTHER };

struct conn {
	int fd;
	char in[INBUF];
	size_t len;
	enum watch_kind watch; /* a watch held open on this connection */
};

static struct conn conns[MAX_CONNS];
static size_t n_conns;
static unsigned watches_started[4];
static unsigned writes; /* requests other than GET */

static void write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return; /* drake went away; its reads fail on its side */
		p += w;
		n -= (size_t)w;
	}
}

static void reply(int fd, int code, const char *body, size_t len)
{
	char head[256];
	int n = snprintf(head, sizeof(head),
	                 "HTTP/1.1 %d X\r\nContent-Type: application/json\r\n"
	                 "Content-Length: %zu\r\n\r\n",
	                 code, len);
	write_all(fd, head, (size_t)n);
	write_all(fd, body, len);
}

enum list_kind { L_NODES, L_PODS, L_TFJOBS, L_SERVICES };

static void list_page(int fd, enum list_kind kind, const char *query)
{
	static const char *const kinds[] = {"NodeList", "PodList", "TFJobList", "ServiceList"};
	size_t total = kind == L_NODES ? n_nodes : kind == L_TFJOBS ? n_pods / 8 : n_pods;
	size_t limit = 500, from = 0;
	const char *l = strstr(query, "limit="), *c = strstr(query, "continue=");
	if (l)
		limit = strtoul(l + 6, NULL, 10);
	if (c)
		from = strtoul(c + 9, NULL, 10);
	if (limit == 0 || limit > 5000)
		limit = 500;
	static struct buf b;
	b.len = 0;
	put(&b, "{\"kind\":\"%s\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"%d\"",
	    kinds[kind], rv);
	size_t to = from + limit < total ? from + limit : total;
	if (to < total)
		put(&b, ",\"continue\":\"%zu\"", to);
	put(&b, "},\"items\":[");
	for (size_t i = from; i < to; i++) {
		if (i > from)
			put(&b, ",");
		switch (kind) {
		case L_NODES: node_json(&b, i); break;
		case L_PODS: pod_json(&b, i, OBJECT_RV); break;
		case L_TFJOBS: tfjob_json(&b, i); break;
		case L_SERVICES: service_json(&b, i); break;
		}
	}
	put(&b, "]}");
	reply(fd, 200, b.p, b.len);
}

static void handle(struct conn *k, const char *method, const char *path)
{
	const char *q = strchr(path, '?');
	q = q ? q : "";
	bool watch = strstr(q, "watch=1") != NULL;
	bool nodes = strncmp(path, "/api/v1/nodes", 13) == 0;
	bool pods = strncmp(path, "/api/v1/pods", 12) == 0;
	if (strcmp(method, "GET") == 0 && watch) {
		static const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
		                           "Transfer-Encoding: chunked\r\n\r\n";
		write_all(k->fd, head, sizeof(head) - 1);
		k->watch = nodes ? W_NODES : pods ? W_PODS : W_OTHER;
		watches_started[k->watch]++;
		return;
	}
	bool tfjobs = strncmp(path, "/apis/kubeflow.org/v1/tfjobs", 28) == 0;
	bool services = strncmp(path, "/api/v1/services", 16) == 0;
	if (strcmp(method, "GET") == 0 && (nodes || pods)) {
		list_page(k->fd, nodes ? L_NODES : L_PODS, q);
		return;
	}
	if (strcmp(method, "GET") == 0 && jobs_world && (tfjobs || services)) {
		list_page(k->fd, tfjobs ? L_TFJOBS : L_SERVICES, q);
		return;
	}
	if (strcmp(method, "GET") != 0)
		writes++; /* the controller phase's world is built to need none */
	if (strcmp(method, "GET") == 0 && (services || tfjobs)) {
		char body[160];
		int n = snprintf(body, sizeof(body),
		                 "{\"kind\":\"List\",\"metadata\":{\"resourceVersion\":\"%d\"},"
		                 "\"items\":[]}",
		                 rv);
		reply(k->fd, 200, body, (size_t)n);
		return;
	}
	static const char nf[] = "{\"kind\":\"Status\",\"code\":404,\"message\":\"not here\"}";
	reply(k->fd, 404, nf, sizeof(nf) - 1);
}

static void on_readable(struct conn *k)
{
	ssize_t n = read(k->fd, k->in + k->len, sizeof(k->in) - k->len);
	if (n <= 0) {
		close(k->fd);
		k->fd = -1;
		return;
	}
	k->len += (size_t)n;
	for (;;) {
		char *end = memmem(k->in, k->len, "\r\n\r\n", 4);
		if (!end)
			return;
		size_t hlen = (size_t)(end - k->in) + 4, clen = 0;
		char *cl = memmem(k->in, hlen, "Content-Length: ", 16);
		if (!cl)
			cl = memmem(k->in, hlen, "content-length: ", 16);
		if (cl)
			clen = strtoul(cl + 16, NULL, 10);
		if (k->len < hlen + clen)
			return;
		char method[16] = "", path[2048] = "";
		sscanf(k->in, "%15s %2047s", method, path);
		memmove(k->in, k->in + hlen + clen, k->len - hlen - clen);
		k->len -= hlen + clen;
		handle(k, method, path);
	}
}

/* Serves for up to `seconds`, or until done() says so. */
static bool serve(int lfd, double seconds, bool (*done)(void *), void *arg)
{
	double deadline = bench_now() + seconds;
	while (bench_now() < deadline) {
		if (done && done(arg))
			return true;
		struct pollfd p[MAX_CONNS + 1];
		p[0] = (struct pollfd){.fd = lfd, .events = POLLIN};
		for (size_t i = 0; i < n_conns; i++)
			p[i + 1] = (struct pollfd){.fd = conns[i].fd, .events = POLLIN};
		if (poll(p, (nfds_t)n_conns + 1, 50) <= 0)
			continue;
		for (size_t i = 0; i < n_conns; i++)
			if (conns[i].fd >= 0 && (p[i + 1].revents & (POLLIN | POLLHUP | POLLERR)))
				on_readable(&conns[i]);
		if (p[0].revents & POLLIN) {
			int fd = accept(lfd, NULL, NULL);
			size_t slot = n_conns;
			for (size_t i = 0; i < n_conns; i++)
				if (conns[i].fd < 0)
					slot = i;
			if (fd >= 0 && slot < MAX_CONNS) {
				conns[slot] = (struct conn){.fd = fd};
				if (slot == n_conns)
					n_conns++;
			} else if (fd >= 0) {
				close(fd);
			}
		}
	}
	return done ? done(arg) : true;
}

/* Ends every open watch of kind with a 410 Gone ERROR event, as the API
 * server does when etcd has compacted past the watch's resourceVersion. */
static void gone(enum watch_kind kind)
{
	char ev[512];
	int n =
	    snprintf(ev, sizeof(ev),
	             "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\","
	             "\"status\":\"Failure\",\"message\":\"too old resource version: 1 (%d)\","
	             "\"reason\":\"Expired\",\"code\":410}}\n",
	             rv);
	char chunk[600];
	int m = snprintf(chunk, sizeof(chunk), "%x\r\n%.*s\r\n0\r\n\r\n", n, n, ev);
	for (size_t i = 0; i < n_conns; i++)
		if (conns[i].fd >= 0 && conns[i].watch == kind) {
			write_all(conns[i].fd, chunk, (size_t)m);
			conns[i].watch = W_NONE;
		}
}

/* ---- drake ---- */

static const char *log_path = DIR "/memory-drake.log";

/* Counts log lines with msg=<msg> informer=<name>; the last one's seconds. */
static size_t log_lines(const char *msg, const char *name, double *seconds)
{
	FILE *f = fopen(log_path, "r");
	char line[4096], want[128];
	snprintf(want, sizeof(want), "msg=%s informer=%s ", msg, name);
	size_t n = 0;
	while (f && fgets(line, sizeof(line), f)) {
		if (!strstr(line, want))
			continue;
		n++;
		const char *s = strstr(line, " seconds=");
		if (s && seconds)
			*seconds = strtod(s + 9, NULL);
	}
	if (f)
		fclose(f);
	return n;
}

struct wait_lines {
	const char *msg;
	size_t want; /* for both pods and nodes */
};

static bool lines_seen(void *arg)
{
	const struct wait_lines *w = arg;
	return log_lines(w->msg, "pods", NULL) >= w->want &&
	       log_lines(w->msg, "nodes", NULL) >= w->want;
}

static unsigned want_watches;
static bool watches_back(void *arg)
{
	return watches_started[W_PODS] >= want_watches && watches_started[W_NODES] >= want_watches;
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), bench_cmp_double);
	return n ? v[n / 2] : 0;
}

/* Starts drake against the kubeconfig kc, its log on log_path; the
 * controller phase adds --migrate (both consumers of a pass) and debug
 * logging (its controller_pass lines). */
static int drake_port; /* the extender's, of the drake running */

static pid_t start_drake(const char *drake, const char *kc, bool controller)
{
	char port[16];
	drake_port = bench_free_port();
	snprintf(port, sizeof(port), "%d", drake_port);
	const char *dargv[] = {drake,
	                       "serve",
	                       "--port",
	                       port,
	                       "--tls-cert",
	                       DIR "/certs/server.crt",
	                       "--tls-key",
	                       DIR "/certs/server.key",
	                       "--kubeconfig",
	                       kc,
	                       "--reconcile",
	                       "--log-level",
	                       controller ? "debug" : "info",
	                       controller ? "--migrate" : NULL,
	                       NULL};
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 2, log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	unsetenv("DRAKE_KUBECONFIG");
	unsetenv("KUBERNETES_SERVICE_HOST");
	pid_t pid;
	if (posix_spawn(&pid, drake, &fa, NULL, (char *const *)dargv, environ) != 0) {
		fprintf(stderr, "memory_bench: cannot start %s\n", drake);
		pid = -1;
	}
	posix_spawn_file_actions_destroy(&fa);
	return pid;
}

static void stop_drake(pid_t pid)
{
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	for (size_t i = 0; i < n_conns; i++)
		if (conns[i].fd >= 0) {
			close(conns[i].fd);
			conns[i].fd = -1;
		}
	memset(watches_started, 0, sizeof(watches_started));
}

/* Sends a MODIFIED event of pod i (a new resourceVersion, nothing else
 * changed) on every pods watch: its job's key goes dirty and one pass runs. */
static void pod_modified(size_t i)
{
	static struct buf b;
	b.len = 0;
	put(&b, "{\"type\":\"MODIFIED\",\"object\":");
	pod_json(&b, i, ++rv);
	put(&b, "}\n");
	char head[32];
	int n = snprintf(head, sizeof(head), "%zx\r\n", b.len);
	for (size_t k = 0; k < n_conns; k++)
		if (conns[k].fd >= 0 && conns[k].watch == W_PODS) {
			write_all(conns[k].fd, head, (size_t)n);
			write_all(conns[k].fd, b.p, b.len);
			write_all(conns[k].fd, "\r\n", 2);
		}
}

/* Counts drake's controller_pass lines; the last one's jobs synced and CPU. */
static size_t pass_lines(size_t *synced, double *cpu_s)
{
	FILE *f = fopen(log_path, "r");
	char line[4096];
	size_t n = 0;
	while (f && fgets(line, sizeof(line), f)) {
		if (!strstr(line, "msg=controller_pass "))
			continue;
		n++;
		const char *s = strstr(line, " synced="), *c = strstr(line, " cpu_s=");
		if (s && synced)
			*synced = strtoul(s + 8, NULL, 10);
		if (c && cpu_s)
			*cpu_s = strtod(c + 7, NULL);
	}
	if (f)
		fclose(f);
	return n;
}

struct pass_wait {
	size_t want;
};

static bool passes_seen(void *arg)
{
	return pass_lines(NULL, NULL) >= ((struct pass_wait *)arg)->want;
}

static bool synced_seen(void *arg)
{
	FILE *f = fopen(log_path, "r");
	char line[4096];
	bool seen = false;
	while (f && !seen && fgets(line, sizeof(line), f))
		seen = strstr(line, "msg=reconciler_synced ") != NULL;
	if (f)
		fclose(f);
	return seen;
}

static size_t sink(char *p, size_t sz, size_t n, void *arg)
{
	return sz * n;
}

/* One filter call for worker 0 of job 1, a gang member planned on
 * gpu-node-00000, offered three nodes (with replan, not that one: drake
 * re-plans it; every node of this world is tainted, so the re-plan reads
 * its snapshot, finds no schedulable room and says so); its wall time, or
 * -1. */
static double filter_once(CURL *h, bool replan)
{
	char body[2048];
	snprintf(
	    body, sizeof(body),
	    "{\"Pod\":{\"metadata\":{\"name\":\"job-00001-worker-0\",\"namespace\":\"team-1\","
	    "\"uid\":\"10000000-0000-4000-8000-000000000009\",\"labels\":{"
	    "\"training.kubeflow.org/job-name\":\"job-00001\","
	    "\"training.kubeflow.org/replica-type\":\"worker\","
	    "\"training.kubeflow.org/replica-index\":\"0\"},\"annotations\":{"
	    "\"drake.dev/planned-node\":\"gpu-node-00000\",\"drake.dev/gang\":"
	    "\"20000000-0000-4000-8000-000000000001.1767225600\",\"drake.dev/gang-size\":\"8\"},"
	    "\"ownerReferences\":[{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\","
	    "\"name\":\"job-00001\",\"uid\":\"20000000-0000-4000-8000-000000000001\","
	    "\"controller\":true}]},\"spec\":{\"containers\":[{\"name\":\"tensorflow\","
	    "\"image\":\"tf\",\"resources\":{\"requests\":{\"cpu\":\"8\",\"memory\":\"64Gi\","
	    "\"nvidia.com/gpu\":\"1\"}}}]},\"status\":{\"phase\":\"Pending\"}},"
	    "\"Nodes\":null,\"NodeNames\":[\"%s\",\"gpu-node-01002\",\"gpu-node-01008\"]}",
	    replan ? "gpu-node-01001" : "gpu-node-00000");
	char url[128];
	snprintf(url, sizeof(url), "https://127.0.0.1:%d/scheduler/filter", drake_port);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
	double t0 = bench_now();
	CURLcode rc = curl_easy_perform(h);
	double t = bench_now() - t0;
	long code = 0;
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	if (rc != CURLE_OK || code != 200) {
		fprintf(stderr, "memory_bench: filter: %s (HTTP %ld)\n", curl_easy_strerror(rc),
		        code);
		return -1;
	}
	return t;
}

/* Median wall time of n filter calls on one connection (the first call,
 * which connects, untimed); -1 when one fails. */
static double filter_median(bool replan, int n)
{
	CURL *h = curl_easy_init();
	struct curl_slist *hdrs = curl_slist_append(NULL, "Content-Type: application/json");
	double *v = calloc((size_t)n, sizeof(double)), m = -1;
	if (!h || !hdrs || !v)
		goto out;
	curl_easy_setopt(h, CURLOPT_CAINFO, DIR "/certs/ca.crt");
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
	if (filter_once(h, replan) < 0)
		goto out;
	for (int i = 0; i < n; i++)
		if ((v[i] = filter_once(h, replan)) < 0)
			goto out;
	m = median(v, (size_t)n);
out:
	free(v);
	curl_slist_free_all(hdrs);
	if (h)
		curl_easy_cleanup(h);
	return m;
}

/* drake's gang_replanned and gang_replan_failed lines. */
static size_t replanned_lines(void)
{
	FILE *f = fopen(log_path, "r");
	char line[4096];
	size_t n = 0;
	while (f && fgets(line, sizeof(line), f))
		n += strstr(line, "msg=gang_replanned ") || strstr(line, "msg=gang_replan_failed ");
	if (f)
		fclose(f);
	return n;
}

/* The controller phase: the world with its TFJobs and services, drake with
 * --migrate; after the pass that follows the sync, `passes` passes each
 * started by one pod's MODIFIED event, each one job synced, then the
 * admission round and the migration step over every job. Then `filters`
 * filter calls of a gang member with its planned node offered, and as many
 * with it not offered, which drake re-plans. Prints the medians and writes
 * one CSV row per pass and one per filter median. */
static int controller_phase(int lfd, const char *drake, const char *kc, int passes, int filters,
                            const char *csv)
{
	jobs_world = true;
	writes = 0;
	log_path = DIR "/controller-drake.log";
	pid_t pid = start_drake(drake, kc, true);
	if (pid < 0)
		return 1;
	int rc = 1;
	double *cpu = calloc((size_t)passes, sizeof(double));
	FILE *out = NULL;
	struct pass_wait first = {1};
	if (!serve(lfd, 300, synced_seen, NULL) || !serve(lfd, 300, passes_seen, &first)) {
		fprintf(stderr, "memory_bench: no controller pass in 300 s; see %s\n", log_path);
		goto done;
	}
	/* the pass after the sync syncs every job; wait until the passes stop */
	for (size_t seen = 0, now; (now = pass_lines(NULL, NULL)) != seen; seen = now)
		serve(lfd, 2, NULL, NULL);
	out = fopen(csv, "w");
	if (!cpu || !out) {
		fprintf(stderr, "memory_bench: cannot write %s\n", csv);
		goto done;
	}
	fprintf(out, "measure,index,nodes,pods,tfjobs,seconds\n");
	unsigned writes_before = writes;
	int got = 0;
	for (int tries = 0; got < passes && tries < passes * 3; tries++) {
		struct pass_wait next = {pass_lines(NULL, NULL) + 1};
		pod_modified((size_t)(got * 8 * 97 + 1) % n_pods);
		if (!serve(lfd, 60, passes_seen, &next)) {
			fprintf(stderr, "memory_bench: no pass 60 s after a pod's event; see %s\n",
			        log_path);
			goto done;
		}
		size_t synced = 0;
		double c = 0;
		pass_lines(&synced, &c);
		if (synced != 1)
			continue; /* a resync's pass, not the one this event started */
		cpu[got++] = c;
		fprintf(out, "pass_cpu,%d,%zu,%zu,%zu,%.6f\n", got, n_nodes, n_pods, n_pods / 8, c);
	}
	if (got < passes) {
		fprintf(stderr, "memory_bench: only %d of %d passes were one job's\n", got, passes);
		goto done;
	}
	double lo = cpu[0], hi = cpu[0];
	for (int i = 0; i < passes; i++) {
		lo = cpu[i] < lo ? cpu[i] : lo;
		hi = cpu[i] > hi ? cpu[i] : hi;
	}
	printf("controller pass (one job changed; admission round and migration step over %zu "
	       "TFJobs), median of %d:\n  CPU %.1f ms (min %.1f, max %.1f)\n",
	       n_pods / 8, passes, median(cpu, (size_t)passes) * 1e3, lo * 1e3, hi * 1e3);
	if (filters > 0) {
		size_t before = replanned_lines();
		double plain = filter_median(false, filters), moved = filter_median(true, filters);
		size_t replanned = replanned_lines() - before;
		if (plain < 0 || moved < 0) {
			fprintf(stderr, "memory_bench: filter calls failed; see %s\n", log_path);
			goto done;
		}
		if (replanned != (size_t)filters + 1) {
			fprintf(stderr,
			        "memory_bench: %zu of %d filter calls tried a re-plan; see %s\n",
			        replanned, filters + 1, log_path);
			goto done;
		}
		printf("filter of a gang member (wall, HTTPS on loopback), median of %d:\n"
		       "  %.2f ms with its planned node offered, %.2f ms with a re-plan (refused: "
		       "every node is tainted)\n",
		       filters, plain * 1e3, moved * 1e3);
		fprintf(out, "filter_wall_median,0,%zu,%zu,%zu,%.6f\n", n_nodes, n_pods, n_pods / 8,
		        plain);
		fprintf(out, "filter_replan_wall_median,0,%zu,%zu,%zu,%.6f\n", n_nodes, n_pods,
		        n_pods / 8, moved);
	}
	if (writes)
		printf("  note: drake wrote %u times (%u during the passes): the world is not at "
		       "rest\n",
		       writes, writes - writes_before);
	printf("csv: %s\n", csv);
	rc = 0;
done:
	if (out)
		fclose(out);
	free(cpu);
	stop_drake(pid);
	return rc;
}

int main(int argc, char **argv)
{
	const char *drake = "build/release/drake", *csv = "bench/results/memory.csv";
	const char *pass_csv = "bench/results/controller-pass.csv";
	int relists = 5, passes = 9, filters = 21;
	bool memory = true;
	double target_mb = 100;
	const struct flag flags[] = {
	    {"drake", NULL, FLAG_STRING, &drake, "build/release/drake", "the drake binary"},
	    {"csv", NULL, FLAG_STRING, &csv, "bench/results/memory.csv", "where the CSV goes"},
	    {"nodes", NULL, FLAG_COUNT, &n_nodes, "5000", "nodes the API server holds"},
	    {"pods", NULL, FLAG_COUNT, &n_pods, "50000", "pods the API server holds"},
	    {"relists", NULL, FLAG_INT, &relists, "5", "full relists forced and timed"},
	    {"managed-fields", NULL, FLAG_BOOL, &managed_fields, "false",
	     "give every object the managedFields a real API server returns"},
	    {"target-mb", NULL, FLAG_DOUBLE, &target_mb, "100", "RSS target, MB, for the verdict"},
	    {"memory", NULL, FLAG_BOOL, &memory, "true", "run the memory and relist phase"},
	    {"passes", NULL, FLAG_INT, &passes, "9",
	     "controller passes timed after it (0: no controller phase)"},
	    {"filters", NULL, FLAG_INT, &filters, "21",
	     "filter calls timed after the passes, with and without a re-plan (0: none)"},
	    {"pass-csv", NULL, FLAG_STRING, &pass_csv, "bench/results/controller-pass.csv",
	     "where the controller phase's CSV goes"},
	};
	const size_t nflags = sizeof(flags) / sizeof(flags[0]);
	enum flags_outcome out;
	char msg[256];
	if (flags_parse(flags, nflags, argc, argv, &out, msg, sizeof(msg))) {
		fprintf(stderr, "memory_bench: %s\n", msg);
		return 2;
	}
	if (out == FLAGS_HELP) {
		printf("usage: memory_bench [flags]\n\n");
		flags_usage(stdout, flags, nflags);
		return 0;
	}
	if (relists < 1 || n_nodes == 0 || passes < 0 || filters < 0 || n_pods < 8) {
		fprintf(stderr, "memory_bench: --relists and --nodes must be positive, --pods at "
		                "least 8, --passes and --filters at least 0\n");
		return 2;
	}
	if (passes && filters && (n_nodes < 5000 || n_pods < 50000)) {
		fprintf(stderr,
		        "memory_bench: --filters needs the full world (5000 nodes, 50000 "
		        "pods): its member and nodes are named; --filters 0 for a smaller one\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	mkdir("build", 0755);
	mkdir(DIR, 0755);
	mkdir("bench/results", 0755);
	if (system("hack/gen-certs.sh " DIR "/certs >/dev/null") != 0)
		return 1;

	int lfd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) || listen(lfd, 64) ||
	    getsockname(lfd, (struct sockaddr *)&a, &al)) {
		perror("memory_bench: listen");
		return 1;
	}
	const char *kc = DIR "/memory.kubeconfig";
	FILE *k = fopen(kc, "w");
	if (!k) {
		perror(kc);
		return 1;
	}
	fprintf(k,
	        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
	        "clusters:\n- name: k\n  cluster:\n    server: http://127.0.0.1:%d\n"
	        "users:\n- name: u\n  user:\n    token: t0ken\n"
	        "contexts:\n- name: c\n  context:\n    cluster: k\n    user: u\n",
	        ntohs(a.sin_port));
	fclose(k);

	if (!memory) {
		int prc = passes ? controller_phase(lfd, drake, kc, passes, filters, pass_csv) : 0;
		close(lfd);
		return prc;
	}
	pid_t pid = start_drake(drake, kc, false);
	if (pid < 0)
		return 1;

	int rc = 1;
	FILE *out_csv = NULL;
	double t0 = bench_now();
	struct wait_lines synced = {"informer_synced", 1};
	if (!serve(lfd, 300, lines_seen, &synced)) {
		fprintf(stderr, "memory_bench: caches not synced in 300 s; see %s\n", log_path);
		goto done;
	}
	double sync_s = bench_now() - t0, first_pods = 0, first_nodes = 0;
	log_lines("informer_synced", "pods", &first_pods);
	log_lines("informer_synced", "nodes", &first_nodes);
	want_watches = 1;
	serve(lfd, 30, watches_back, NULL);
	serve(lfd, 1, NULL, NULL); /* let drake finish what the sync started */
	long rss_sync = bench_status_kib(pid, "VmRSS"), hwm_sync = bench_status_kib(pid, "VmHWM");

	out_csv = fopen(csv, "w");
	if (!out_csv) {
		fprintf(stderr, "memory_bench: cannot write %s: %s\n", csv, strerror(errno));
		goto done;
	}
	fprintf(out_csv, "phase,nodes,pods,pods_list_seconds,nodes_list_seconds,rss_kib,hwm_kib\n");
	fprintf(out_csv, "sync,%zu,%zu,%.3f,%.3f,%ld,%ld\n", n_nodes, n_pods, first_pods,
	        first_nodes, rss_sync, hwm_sync);
	double *pods_s = calloc((size_t)relists, sizeof(double));
	double *nodes_s = calloc((size_t)relists, sizeof(double));
	long rss_last = rss_sync;
	for (int r = 0; r < relists; r++) {
		rv += 1000;
		gone(W_PODS);
		gone(W_NODES);
		struct wait_lines relisted = {"informer_resynced", (size_t)r + 1};
		want_watches = (unsigned)r + 2;
		if (!serve(lfd, 300, lines_seen, &relisted) ||
		    !serve(lfd, 30, watches_back, NULL)) {
			fprintf(stderr, "memory_bench: relist %d did not finish; see %s\n", r + 1,
			        log_path);
			goto done;
		}
		log_lines("informer_resynced", "pods", &pods_s[r]);
		log_lines("informer_resynced", "nodes", &nodes_s[r]);
		rss_last = bench_status_kib(pid, "VmRSS");
		fprintf(out_csv, "relist-%d,%zu,%zu,%.3f,%.3f,%ld,%ld\n", r + 1, n_nodes, n_pods,
		        pods_s[r], nodes_s[r], rss_last, bench_status_kib(pid, "VmHWM"));
	}
	long hwm = bench_status_kib(pid, "VmHWM");
	double pm = median(pods_s, (size_t)relists), nm = median(nodes_s, (size_t)relists);
	printf("drake caches: %zu nodes, %zu pods%s (served by this program on loopback)\n",
	       n_nodes, n_pods, managed_fields ? ", with managedFields" : "");
	printf("  first sync:            %.1f s (pods list %.2f s, nodes list %.2f s)\n", sync_s,
	       first_pods, first_nodes);
	printf("  RSS after sync:        %.1f MB (VmHWM %.1f MB)\n", (double)rss_sync / 1024,
	       (double)hwm_sync / 1024);
	printf("  full relist (410 Gone), median of %d: pods %.2f s, nodes %.2f s\n", relists, pm,
	       nm);
	printf("  RSS after relists:     %.1f MB (VmHWM %.1f MB)\n", (double)rss_last / 1024,
	       (double)hwm / 1024);
	printf("  target %.0f MB: %s\n", target_mb,
	       (double)hwm / 1024 <= target_mb ? "met (peak)" : "NOT met (peak)");
	printf("csv: %s\n", csv);
	free(pods_s);
	free(nodes_s);
	rc = 0;
done:
	if (out_csv)
		fclose(out_csv);
	stop_drake(pid);
	if (rc == 0 && passes)
		rc = controller_phase(lfd, drake, kc, passes, filters, pass_csv);
	close(lfd);
	return rc;
}
