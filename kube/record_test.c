/*
 * record_test.c - cmocka tests for the pod and node records (pod.h,
 * node.h): every case feeds one realistic API object to the JSON readers
 * drake used before (kube/object.h, the oracle) and to the record, and the
 * answers must be the same; plus what a record costs and that its strings
 * go back to the pool.
 */
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "kube/node.h"
#include "kube/object.h"
#include "kube/model_codec.h"
#include "kube/pod.h"
#include "kube/strpool.h"

static const char *const managed =
    ",\"managedFields\":[{\"manager\":\"kubelet\",\"operation\":\"Update\",\"apiVersion\":"
    "\"v1\",\"time\":\"2026-01-01T00:00:05Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{"
    "\"f:status\":{\"f:conditions\":{},\"f:phase\":{}}},\"subresource\":\"status\"}]";

/* Pods as the API server sends them; %s is where managedFields go. */
static const struct pod_case {
	const char *name, *json;
} pods[] = {
    {"a running TFJob worker, as the memory benchmark's",
     "{\"metadata\":{\"name\":\"job-00001-worker-3\",\"namespace\":\"team-1\",\"uid\":"
     "\"10000000-0000-4000-8000-000000000011\",\"resourceVersion\":\"1000\","
     "\"creationTimestamp\":\"2026-01-01T00:00:00Z\",\"labels\":{"
     "\"training.kubeflow.org/job-name\":\"job-00001\",\"training.kubeflow.org/replica-type\":"
     "\"worker\",\"training.kubeflow.org/replica-index\":\"3\",\"app\":\"train\"},"
     "\"annotations\":{\"prometheus.io/scrape\":\"true\",\"drake.dev/planned-node\":"
     "\"gpu-node-00011\",\"drake.dev/gang\":\"20000000-0000-4000-8000-000000000001.1767225600\","
     "\"drake.dev/gang-size\":\"8\",\"drake.dev/gang-min-roles\":\"ps=1,chief=0,worker=7\","
     "\"drake.dev/role\":\"worker\"},\"ownerReferences\":[{\"apiVersion\":\"kubeflow.org/v1\","
     "\"kind\":\"TFJob\",\"name\":\"job-00001\",\"uid\":\"20000000-0000-4000-8000-000000000001\","
     "\"controller\":true,\"blockOwnerDeletion\":true}]%s},\"spec\":{\"nodeName\":"
     "\"gpu-node-00011\",\"schedulerName\":\"default-scheduler\",\"containers\":[{\"name\":"
     "\"tensorflow\",\"image\":\"tf:2.15\",\"env\":[{\"name\":\"TF_CONFIG\",\"value\":\"{}\"}],"
     "\"resources\":{\"requests\":{\"cpu\":\"8\",\"memory\":\"64Gi\",\"nvidia.com/gpu\":\"1\"},"
     "\"limits\":{\"cpu\":\"8\",\"memory\":\"64Gi\",\"nvidia.com/gpu\":\"1\"}}}],"
     "\"tolerations\":[{\"key\":\"nvidia.com/gpu\",\"operator\":\"Exists\"}]},\"status\":{"
     "\"phase\":\"Running\",\"conditions\":[{\"type\":\"Initialized\",\"status\":\"True\","
     "\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"},{\"type\":\"PodScheduled\",\"status\":"
     "\"True\",\"lastProbeTime\":null,\"lastTransitionTime\":\"2026-01-01T00:00:03.5Z\"}],"
     "\"hostIP\":\"10.1.0.11\",\"containerStatuses\":[{\"name\":\"tensorflow\",\"ready\":true,"
     "\"restartCount\":2,\"state\":{\"running\":{\"startedAt\":\"2026-01-01T00:00:05Z\"}}}]}}"},
    {"a gated pod with a KubeShare share, an empty nodeName, two gates, a GPU model",
     "{\"metadata\":{\"name\":\"job-2-ps-0\",\"namespace\":\"ml\",\"uid\":\"u2\","
     "\"resourceVersion\":\"7\",\"labels\":{\"training.kubeflow.org/replica-type\":\"ps\","
     "\"training.kubeflow.org/replica-index\":\"0\"},\"annotations\":{"
     "\"kubeshare/gpu_request\":\"0.5\",\"kubeshare/gpu_mem\":\"1073741824\","
     "\"kubeshare/GPUID\":\"qwert\"},\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"uid\":"
     "\"rs\"},{\"kind\":\"TFJob\",\"uid\":\"j2\",\"controller\":true}]%s},\"spec\":{"
     "\"nodeName\":\"\",\"nodeSelector\":{\"nvidia.com/gpu.product\":\"NVIDIA-A100\"},"
     "\"schedulingGates\":[{\"name\":\"other\"},{\"name\":"
     "\"drake.dev/gang\"}],\"containers\":[{\"name\":\"tensorflow\",\"resources\":{}}]},"
     "\"status\":{\"phase\":\"Pending\",\"nominatedNodeName\":\"gpu-b\"}}"},
    {"a deleting pod with init containers, a sidecar, overhead and number quantities",
     "{\"metadata\":{\"name\":\"p3\",\"namespace\":\"ml\",\"uid\":\"u3\",\"resourceVersion\":"
     "\"9\",\"creationTimestamp\":\"2026-01-01T00:00:00.25Z\",\"deletionTimestamp\":"
     "\"2026-01-01T00:10:00Z\"%s},\"spec\":{\"nodeName\":\"gpu-c\",\"initContainers\":[{"
     "\"restartPolicy\":\"Always\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}},{"
     "\"resources\":{\"requests\":{\"cpu\":3,\"memory\":\"1Gi\"},\"limits\":{\"amd.com/gpu\":"
     "2.5}}}],\"containers\":[{\"resources\":{\"limits\":{\"cpu\":\"2\",\"nvidia.com/gpu\":1}}},"
     "\"not a "
     "container\"],\"overhead\":{\"cpu\":\"250m\"},\"affinity\":{\"podAntiAffinity\":{}}},"
     "\"status\":{\"phase\":\"Running\","
     "\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\"},{\"status\":\"True\"}],"
     "\"containerStatuses\":[{\"name\":\"tensorflow\",\"restartCount\":\"x\",\"state\":{"
     "\"terminated\":{\"exitCode\":137}}},{\"name\":\"sidecar\",\"restartCount\":1}]}}"},
    {"odd values: a number label, a non-string and a null annotation, a nameless gate",
     "{\"metadata\":{\"name\":\"p4\",\"labels\":{\"training.kubeflow.org/replica-index\":4},"
     "\"annotations\":{\"drake.dev/gang\":7,\"drake.dev/gang-size\":null}%s},\"spec\":{"
     "\"schedulingGates\":[{\"nom\":\"x\"},{\"name\":3}],\"topologySpreadConstraints\":[{"
     "\"maxSkew\":1}],\"nodeName\":5},\"status\":{"
     "\"phase\":null}}"},
};

/* What drake's readers ask of a pod. */
static const char *const label_keys[] = {
    "training.kubeflow.org/job-name", "training.kubeflow.org/replica-type",
    "training.kubeflow.org/replica-index", "training.kubeflow.org/job-role"};
static const char *const annotation_keys[] = {
    "drake.dev/planned-node",   "drake.dev/gang", "drake.dev/gang-size",   "drake.dev/gang-min",
    "drake.dev/gang-min-roles", "drake.dev/role", "kubeshare/gpu_request", "kubeshare/gpu_limit",
    "kubeshare/gpu_mem",        "kubeshare/GPUID"};
static const char *const condition_types[] = {"PodScheduled", "Ready", "Initialized", "None"};

static json_t *load(const char *fmt, bool with_managed)
{
	/* fmt's one "%s" takes the managedFields */
	char text[8192];
	const char *at = strstr(fmt, "%s");
	assert_non_null(at);
	snprintf(text, sizeof(text), "%.*s%s%s", (int)(at - fmt), fmt, with_managed ? managed : "",
	         at + 2);
	json_error_t err;
	json_t *o = json_loads(text, JSON_REJECT_DUPLICATES, &err);
	if (!o)
		fail_msg("bad test JSON: %s", err.text);
	return o;
}

static void same_str(const char *what, const char *want, const char *got)
{
	if ((want == NULL) != (got == NULL) || (want && strcmp(want, got) != 0))
		fail_msg("%s: JSON reader says %s, record says %s", what, want ? want : "NULL",
		         got ? got : "NULL");
}

/* A resource list of the JSON against the record's, as requests.h reads it. */
static void same_list(const json_t *list, const struct kube_qty *q, size_t n)
{
	assert_int_equal(json_is_object(list) ? json_object_size(list) : 0, n);
	size_t i = 0;
	const char *k;
	json_t *v;
	json_object_foreach ((json_t *)list, k, v) {
		char num[40];
		const char *want = json_is_string(v) ? json_string_value(v) : NULL;
		if (json_is_integer(v))
			want =
			    (snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(v)),
			     num);
		else if (json_is_real(v))
			want = (snprintf(num, sizeof(num), "%.15g", json_real_value(v)), num);
		assert_string_equal(q[i].name, k);
		same_str(k, want, q[i].value);
		i++;
	}
}

static void same_resources(const json_t *pod, const struct kube_pod *p)
{
	const json_t *spec = json_object_get(pod, "spec");
	size_t c = 0;
	static const char *const kinds[] = {"containers", "initContainers"};
	for (size_t k = 0; k < 2; k++) {
		size_t i;
		json_t *ct;
		json_array_foreach (json_object_get(spec, kinds[k]), i, ct) {
			const struct kube_container_res *r = &p->res.c[c++];
			const json_t *res = json_object_get(ct, "resources");
			const char *policy =
			    json_string_value(json_object_get(ct, "restartPolicy"));
			assert_int_equal(r->kind, k ? KUBE_INIT_CONTAINER : KUBE_APP_CONTAINER);
			assert_int_equal(r->sidecar, k && policy && !strcmp(policy, "Always"));
			same_list(json_object_get(res, "requests"), r->req, r->n_req);
			same_list(json_object_get(res, "limits"), r->lim, r->n_lim);
		}
	}
	assert_int_equal(p->res.n_c, c);
	same_list(json_object_get(spec, "overhead"), p->res.overhead, p->res.n_overhead);
}

static void check_pod(const json_t *o, const struct kube_pod *p)
{
	struct kube_meta want, got;
	assert_int_equal(kube_obj_meta(o, &want), DRAKE_OK);
	kube_pod_meta(p, &got);
	same_str("ns", want.ns, got.ns);
	same_str("name", want.name, got.name);
	same_str("uid", want.uid, got.uid);
	same_str("rv", want.rv, got.rv);
	same_str("owner uid", want.owner_uid, got.owner_uid);
	same_str("owner kind", want.owner_kind, got.owner_kind);
	same_str("node", want.node_name, got.node_name);
	assert_int_equal(want.deleting, got.deleting);
	for (size_t i = 0; i < sizeof(label_keys) / sizeof(label_keys[0]); i++)
		same_str(label_keys[i], kube_obj_label(o, label_keys[i]),
		         kube_pod_label(p, label_keys[i]));
	for (size_t i = 0; i < sizeof(annotation_keys) / sizeof(annotation_keys[0]); i++)
		same_str(annotation_keys[i], kube_obj_annotation(o, annotation_keys[i]),
		         kube_pod_annotation(p, annotation_keys[i]));
	assert_int_equal(p->has_annotations, json_is_object(json_object_get(
	                                         json_object_get(o, "metadata"), "annotations")));
	const json_t *spec = json_object_get(o, "spec");
	assert_int_equal(p->node_constrained,
	                 json_object_size(json_object_get(spec, "nodeSelector")) ||
	                     json_object_get(spec, "affinity") ||
	                     json_array_size(json_object_get(spec, "topologySpreadConstraints")));
	char models[KUBE_GPU_MODELS_MAX];
	same_str("gpu product", kube_gpu_models(spec, models, sizeof(models)) ? models : NULL,
	         p->gpu_product);
	same_str("phase", kube_obj_str(o, "status.phase"), p->phase);
	same_str("spec.nodeName", kube_obj_str(o, "spec.nodeName"), p->node_name);
	same_str("nominatedNodeName", kube_obj_str(o, "status.nominatedNodeName"),
	         p->nominated_node);
	same_str("created", kube_obj_str(o, "metadata.creationTimestamp"), p->created);
	same_str("deleted", kube_obj_str(o, "metadata.deletionTimestamp"), p->deleted);
	assert_true(kube_obj_time(o, "metadata.creationTimestamp") == kube_time(p->created));
	assert_true(kube_obj_time(o, "metadata.deletionTimestamp") == kube_time(p->deleted));
	for (size_t i = 0; i < sizeof(condition_types) / sizeof(condition_types[0]); i++) {
		double a, b;
		same_str(condition_types[i], kube_obj_condition(o, condition_types[i], &a),
		         kube_pod_condition(p, condition_types[i], &b));
		assert_true(a == b);
	}
	assert_int_equal(kube_obj_array_len(o, "spec.schedulingGates"), p->n_gates);
	size_t i;
	json_t *g;
	int gate = -1;
	json_array_foreach (json_object_get(json_object_get(o, "spec"), "schedulingGates"), i, g) {
		const char *n = json_string_value(json_object_get(g, "name"));
		same_str("gate", n, p->gates[i]);
		if (gate < 0 && n && !strcmp(n, "drake.dev/gang"))
			gate = (int)i;
	}
	assert_int_equal(kube_pod_gate_index(p, "drake.dev/gang"), gate);
	json_t *cs;
	assert_int_equal(
	    json_array_size(json_object_get(json_object_get(o, "status"), "containerStatuses")),
	    p->n_statuses);
	json_array_foreach (json_object_get(json_object_get(o, "status"), "containerStatuses"), i,
	                    cs) {
		const json_t *rc = json_object_get(cs, "restartCount");
		const json_t *code = json_object_get(
		    json_object_get(json_object_get(cs, "state"), "terminated"), "exitCode");
		same_str("status name", json_string_value(json_object_get(cs, "name")),
		         p->statuses[i].name);
		assert_int_equal(p->statuses[i].restarts,
		                 json_is_integer(rc) ? json_integer_value(rc) : -1);
		assert_int_equal(p->statuses[i].terminated, json_is_integer(code));
		if (json_is_integer(code))
			assert_int_equal(p->statuses[i].exit_code, json_integer_value(code));
	}
	same_resources(o, p);
}

static void test_a_pod_record_answers_as_the_json_readers_did(void **state)
{
	struct kube_strpool pool;
	kube_strpool_init(&pool);
	for (size_t k = 0; k < sizeof(pods) / sizeof(pods[0]); k++) {
		for (int mf = 0; mf < 2; mf++) {
			json_t *o = load(pods[k].json, mf);
			struct kube_pod *p;
			char msg[160];
			assert_int_equal(kube_pod_decode(o, &pool, &p, msg, sizeof(msg)), DRAKE_OK);
			print_message("case: %s%s\n", pods[k].name, mf ? " (managedFields)" : "");
			check_pod(o, p);
			kube_pod_free(p, &pool);
			json_decref(o);
		}
	}
	assert_int_equal(kube_strpool_count(&pool), 0); /* every reference put back */
	kube_strpool_release(&pool);
}

/* The budget: 100 MB for 50,000 pods and 5,000 nodes. */
static void test_a_realistic_pod_record_is_one_block_under_a_kilobyte(void **state)
{
	struct kube_strpool pool;
	kube_strpool_init(&pool);
	json_t *o = load(pods[0].json, true);
	struct kube_pod *p, *q;
	assert_int_equal(kube_pod_decode(o, &pool, &p, NULL, 0), DRAKE_OK);
	size_t strings = kube_strpool_count(&pool);
	assert_int_equal(kube_pod_decode(o, &pool, &q, NULL, 0), DRAKE_OK);
	assert_true(malloc_usable_size(p) < 1024);
	/* a second copy interns nothing new: namespace, owner, node, labels,
	 * annotations, quantities and times are shared */
	assert_int_equal(kube_strpool_count(&pool), strings);
	assert_ptr_equal(p->owner_uid, q->owner_uid);
	assert_ptr_not_equal(p->uid, q->uid); /* its own strings live in its block */
	kube_pod_free(p, &pool);
	kube_pod_free(q, &pool);
	json_decref(o);
	kube_strpool_release(&pool);
}

static void test_a_pod_without_a_name_or_with_huge_lists_is_refused(void **state)
{
	struct kube_strpool pool;
	kube_strpool_init(&pool);
	struct kube_pod *p;
	char msg[160];
	json_t *o = load("{\"metadata\":{\"namespace\":\"ml\"}%s}", false);
	assert_int_equal(kube_pod_decode(o, &pool, &p, msg, sizeof(msg)), DRAKE_EINVAL);
	assert_null(p);
	json_decref(o);
	o = load("{\"metadata\":{\"name\":\"big\"%s},\"spec\":{\"schedulingGates\":[]}}", false);
	json_t *gates = json_object_get(json_object_get(o, "spec"), "schedulingGates");
	for (int i = 0; i <= KUBE_RECORD_LIST_MAX; i++)
		json_array_append_new(gates, json_pack("{s:s}", "name", "g"));
	assert_int_equal(kube_pod_decode(o, &pool, &p, msg, sizeof(msg)), DRAKE_ELIMIT);
	assert_non_null(strstr(msg, "more than"));
	json_decref(o);
	assert_int_equal(kube_strpool_count(&pool), 0);
	kube_strpool_release(&pool);
}

/* ---- nodes ---- */

static const struct node_case {
	const char *name, *json;
} nodes[] = {
    {"a GPU node of the memory benchmark, tainted",
     "{\"metadata\":{\"name\":\"gpu-node-00001\",\"uid\":\"n1\",\"resourceVersion\":\"1000\","
     "\"labels\":{\"kubernetes.io/hostname\":\"gpu-node-00001\"},\"annotations\":{"
     "\"node.alpha.kubernetes.io/ttl\":\"0\",\"kubeshare/gpu_info\":\"GPU-1:16384\"}%s},"
     "\"spec\":{\"taints\":[{\"key\":\"dedicated\",\"value\":\"training\",\"effect\":"
     "\"NoSchedule\"}]},\"status\":{\"capacity\":{\"cpu\":\"96\"},\"allocatable\":{\"cpu\":"
     "\"95500m\",\"memory\":\"1134554560Ki\",\"ephemeral-storage\":\"7264336152Ki\","
     "\"hugepages-1Gi\":\"0\",\"pods\":\"110\",\"nvidia.com/gpu\":\"8\","
     "\"rdma/hca_shared_devices_a\":\"1k\"},\"conditions\":[{\"type\":\"MemoryPressure\","
     "\"status\":\"False\"},{\"type\":\"Ready\",\"status\":\"True\",\"lastTransitionTime\":"
     "\"2026-01-01T00:00:00Z\"}],\"images\":[{\"names\":[\"x\"],\"sizeBytes\":1}]}}"},
    {"a cordoned node, PreferNoSchedule only, a number quantity",
     "{\"metadata\":{\"name\":\"n2\"%s},\"spec\":{\"unschedulable\":true,\"taints\":[{"
     "\"effect\":\"PreferNoSchedule\"}]},\"status\":{\"allocatable\":{\"nvidia.com/gpu\":4},"
     "\"conditions\":[{\"type\":\"Ready\",\"status\":\"Unknown\"}]}}"},
    {"a node with a NoExecute taint and nothing else",
     "{\"metadata\":{\"name\":\"n3\"%s},\"spec\":{\"taints\":[{\"effect\":\"NoExecute\"}]}}"},
};

static void test_a_node_record_answers_as_the_json_readers_did(void **state)
{
	struct kube_strpool pool;
	kube_strpool_init(&pool);
	for (size_t k = 0; k < sizeof(nodes) / sizeof(nodes[0]); k++) {
		for (int mf = 0; mf < 2; mf++) {
			json_t *o = load(nodes[k].json, mf);
			struct kube_node *n;
			assert_int_equal(kube_node_decode(o, &pool, &n, NULL, 0), DRAKE_OK);
			print_message("case: %s%s\n", nodes[k].name, mf ? " (managedFields)" : "");
			struct kube_meta m;
			assert_int_equal(kube_obj_meta(o, &m), DRAKE_OK);
			same_str("name", m.name, n->name);
			same_str("ns", m.ns, n->ns);
			same_str("uid", m.uid, n->uid);
			same_str("rv", m.rv, n->rv);
			same_str("gpu_info", kube_obj_annotation(o, "kubeshare/gpu_info"),
			         kube_node_annotation(n, "kubeshare/gpu_info"));
			for (size_t i = 0; i < 2; i++) {
				const char *t = i ? "Ready" : "DiskPressure";
				double a, b;
				same_str(t, kube_obj_condition(o, t, &a),
				         kube_node_condition(n, t, &b));
				assert_true(a == b);
			}
			same_list(json_object_get(json_object_get(o, "status"), "allocatable"),
			          n->alloc, n->n_alloc);
			const json_t *spec = json_object_get(o, "spec");
			bool taint = false;
			size_t i;
			json_t *t;
			json_array_foreach (json_object_get(spec, "taints"), i, t) {
				const char *e = json_string_value(json_object_get(t, "effect"));
				taint |= e && (!strcmp(e, "NoSchedule") || !strcmp(e, "NoExecute"));
			}
			assert_int_equal(n->no_schedule, taint);
			assert_int_equal(n->unschedulable,
			                 json_is_true(json_object_get(spec, "unschedulable")));
			kube_node_free(n, &pool);
			json_decref(o);
		}
	}
	assert_int_equal(kube_strpool_count(&pool), 0);
	kube_strpool_release(&pool);
}

static struct kube_pod *pod_of(struct kube_strpool *pool, const char *text)
{
	json_t *o = json_loads(text, 0, NULL);
	assert_non_null(o);
	struct kube_pod *p;
	assert_int_equal(kube_pod_decode(o, pool, &p, NULL, 0), DRAKE_OK);
	json_decref(o);
	return p;
}

static void test_kube_schedulers_report_and_drakes_pin_are_read(void **state)
{
	struct kube_strpool pool;
	kube_strpool_init(&pool);
	struct kube_pod *p = pod_of(
	    &pool, "{\"metadata\":{\"name\":\"w\"},\"spec\":{\"affinity\":{\"nodeAffinity\":{"
	           "\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":["
	           "{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":["
	           "\"a\"]}]},{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\","
	           "\"values\":[\"b\"]}]}]}}}},\"status\":{\"conditions\":[{\"type\":"
	           "\"PodScheduled\",\"status\":\"False\",\"reason\":\"Unschedulable\",\"message\":"
	           "\"0/2 nodes are available: 2 Too many pods.\"}]}}");
	const struct kube_condition *c = kube_pod_condition_of(p, "PodScheduled");
	assert_non_null(c);
	assert_string_equal(c->reason, "Unschedulable");
	assert_string_equal(c->message, "0/2 nodes are available: 2 Too many pods.");
	assert_null(kube_pod_condition_of(p, "Ready"));
	assert_true(p->name_pinned);
	assert_true(p->node_constrained);
	kube_pod_free(p, &pool);
	/* a selector of the pod's own, or a term on labels: not drake's pin */
	p = pod_of(
	    &pool,
	    "{\"metadata\":{\"name\":\"w\"},\"spec\":{\"nodeSelector\":{\"x\":\"y\"},"
	    "\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution"
	    "\":{\"nodeSelectorTerms\":[{\"matchFields\":[{\"key\":\"metadata.name\","
	    "\"operator\":\"In\",\"values\":[\"a\"]}]}]}}}}}");
	assert_false(p->name_pinned);
	kube_pod_free(p, &pool);
	p = pod_of(&pool,
	           "{\"metadata\":{\"name\":\"w\"},\"spec\":{\"affinity\":{\"nodeAffinity\":{"
	           "\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":[{"
	           "\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"Exists\"}]}]}}}}}");
	assert_false(p->name_pinned);
	kube_pod_free(p, &pool);
	assert_int_equal(kube_strpool_count(&pool), 0);
	kube_strpool_release(&pool);
}

static struct kube_node *node_of(struct kube_strpool *pool, const char *labels, const char *taints,
                                 const char *heartbeat)
{
	char text[1024];
	snprintf(text, sizeof(text),
	         "{\"metadata\":{\"name\":\"n\",\"labels\":{%s}},\"spec\":{\"taints\":[%s]},"
	         "\"status\":{\"allocatable\":{\"cpu\":\"8\"},\"conditions\":[{\"type\":"
	         "\"Ready\",\"status\":\"True\",\"lastHeartbeatTime\":\"%s\"}]}}",
	         labels, taints, heartbeat);
	json_t *o = json_loads(text, 0, NULL);
	assert_non_null(o);
	struct kube_node *n;
	assert_int_equal(kube_node_decode(o, pool, &n, NULL, 0), DRAKE_OK);
	json_decref(o);
	return n;
}

static void test_a_nodes_labels_and_taints_are_read_and_only_their_changes_count(void **state)
{
	struct kube_strpool pool;
	kube_strpool_init(&pool);
	const char *taint = "{\"key\":\"gpu\",\"value\":\"yes\",\"effect\":\"NoSchedule\"}";
	struct kube_node *a = node_of(&pool, "\"pool\":\"train\"", taint, "t1");
	assert_int_equal(a->n_labels, 1);
	assert_string_equal(a->labels[0].key, "pool");
	assert_string_equal(a->labels[0].value, "train");
	assert_int_equal(a->n_taints, 1);
	assert_string_equal(a->taints[0].key, "gpu");
	assert_string_equal(a->taints[0].value, "yes");
	assert_string_equal(a->taints[0].effect, "NoSchedule");
	struct kube_node *b = node_of(&pool, "\"pool\":\"train\"", taint, "t2");
	assert_false(kube_node_placement_changed(a, b)); /* a heartbeat */
	kube_node_free(b, &pool);
	b = node_of(&pool, "\"pool\":\"serve\"", taint, "t2");
	assert_true(kube_node_placement_changed(a, b));
	kube_node_free(b, &pool);
	b = node_of(&pool, "\"pool\":\"train\"", "", "t2");
	assert_true(kube_node_placement_changed(a, b));
	kube_node_free(b, &pool);
	b = node_of(&pool, "\"pool\":\"train\"",
	            "{\"key\":\"gpu\",\"value\":\"yes\",\"effect\":\"NoExecute\"}", "t2");
	assert_true(kube_node_placement_changed(a, b)); /* the same taint, another effect */
	kube_node_free(b, &pool);
	kube_node_free(a, &pool);
	assert_int_equal(kube_strpool_count(&pool), 0);
	kube_strpool_release(&pool);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_a_pod_record_answers_as_the_json_readers_did),
	    cmocka_unit_test(test_a_realistic_pod_record_is_one_block_under_a_kilobyte),
	    cmocka_unit_test(test_a_pod_without_a_name_or_with_huge_lists_is_refused),
	    cmocka_unit_test(test_a_node_record_answers_as_the_json_readers_did),
	    cmocka_unit_test(test_kube_schedulers_report_and_drakes_pin_are_read),
	    cmocka_unit_test(test_a_nodes_labels_and_taints_are_read_and_only_their_changes_count),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
