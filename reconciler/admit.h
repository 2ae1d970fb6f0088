/*
 * admit.h - admission for gang scheduling: which waiting jobs
 * start now, with how many workers, on which nodes.
 *
 * One round looks at the whole cluster: it builds gang/'s snapshot from the
 * node and pod caches (bound pods, admitted members planned but not bound
 * yet, and pods kube-scheduler nominated for a node use that node's
 * capacity), collects the drake-managed jobs whose pods all exist
 * and are still gated and the running ones, runs gang/'s decision step
 * (gang/scale.h: FIFO admission with backfill, shrinking running jobs for
 * one that starves, growing them into idle capacity) over them, and
 * returns the scaling it decided (struct admit_scale) and for each job it
 * starts a wave: the pods to ungate (its PS, its
 * Chief or Master, and its workers; never an evaluator), each with
 * its planned node and the gang annotations of gang/protocol.h. Jobs that
 * wait come back with the planner's reason ("needs 4 GPUs on one node;
 * largest free block is 2").
 *
 * KubeShare: a replica whose template carries kubeshare/gpu_request (and
 * gpu_limit, gpu_mem) asks for a share of one GPU. The snapshot rebuilds
 * each node's vGPUs from the pods that carry kubeshare/GPUID, and a wave's
 * pod with a share is ungated with the GPUID its plan chose.
 *
 * Nodes the snapshot cannot read (a malformed allocatable quantity of a
 * resource someone requests, more nodes than gang/ holds, two nodes of one
 * name) are left out of it and listed, each with its reason, in the
 * round's result; resources nobody requests never keep a node out.
 *
 * Ownership: admit_round() fills a result the caller releases with
 * admit_result_release(); strings are copies.
 */
#ifndef DRAKE_RECONCILER_ADMIT_H
#define DRAKE_RECONCILER_ADMIT_H

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"
#include "kube/object.h"
#include "gang/admission.h"
#include "gang/cluster.h"
#include "gang/history.h"
#include "gang/nodefit.h"
#include "gang/roles.h"
#include "kind/job.h"

struct decision_log;
struct kube_cache;
struct kube_pod;
struct kube_res_spec;
struct json_t;

struct admit_pod {
	char name[KUBE_NAME_MAX + 1];
	char node[KUBE_NAME_MAX + 1];
	struct drake_share share;      /* milli 0: the pod shares no GPU */
	char gpuid[DRAKE_VGPU_ID_MAX]; /* with a share: its vGPU on node */
	enum drake_role role;
};

struct admit_wave {
	char ns[64], job[KUBE_NAME_MAX + 1], uid[64];
	char gang[128];               /* "<tfjob uid>.<wave>" */
	int size;                     /* pods in the wave (a repair: the whole wave it rejoins) */
	int n_pods;                   /* pods this wave ungates: size, or fewer for a repair */
	int min;                      /* PS + chief + min-instances workers */
	struct drake_roles min_roles; /* the same per role */
	int n_ps, n_chief, n_workers;
	struct admit_pod *pods; /* n_pods entries: PS first, then the chief, then workers */
};

struct admit_waiting {
	char ns[64], job[KUBE_NAME_MAX + 1];
	enum drake_admit_status status;
	char why[DRAKE_WHY_MAX];
	bool quiet; /* listed in GET /v1/jobs, no Event: an admitted wave that
	               waits for kube-scheduler, a job backing off (the
	               backstop's Event said why) */
};

/* Most nodes a skipped list names; further ones are only counted. */
#define ADMIT_SKIPPED_MAX 256

/* A node left out of the snapshot, and why ("status.allocatable cpu:
 * quantity "lots" has no digits"). */
struct admit_skipped {
	char node[KUBE_NAME_MAX + 1];
	char why[200];
};

/* Sorted by node name. Released with admit_skipped_release(). */
struct admit_skipped_list {
	struct admit_skipped *v;
	size_t n, cap;
	size_t unlisted; /* skipped beyond ADMIT_SKIPPED_MAX (or out of memory) */
};

void admit_skipped_release(struct admit_skipped_list *l);

/* A running job's new size (gang/scale.h decided it): the drake.dev/scale
 * record to write on its job, and for a scale-down the worker pods to
 * delete once it is written. Added workers need nothing more: as members
 * that wait, the next round ungates them on the nodes the record names.
 * Without a record (patch NULL): workers of a job the record already on
 * its job no longer lists, still running because their deletion was lost
 * (drake restarted after writing it): only deleted. */
struct admit_scale {
	char ns[64], job[KUBE_NAME_MAX + 1], uid[64];
	bool grow;
	int n;                           /* workers removed or added */
	bool preempt;                    /* every pod of the job, no record (tiresias) */
	double service;                  /* preempt: the job's attained GPU-seconds */
	char (*pods)[KUBE_NAME_MAX + 1]; /* scale-down: n pods, highest index first;
	                                    preempt: PS, chief, workers */
	char *value;                     /* drake.dev/scale's new value */
	char *patch;                     /* the merge patch writing it */
	char why[DRAKE_WHY_MAX + 64];
};

/* A running job the round could scale, as GET /v1/jobs shows it. */
struct admit_running {
	char key[320];
	int workers, min, max;
	double last_scaled; /* wall seconds: its admission or latest scaling */
	char gave_to[320];  /* the job its latest scale-down gave workers to, or "" */
	bool slow;          /* its replicas report its progress slowing or converged */
	char uid[64];       /* the job's uid */
	const char *kind;   /* its Kind (static, the kind's) */
	/* Its latest progress report, filled when GET /v1/jobs is answered
	 * (views.c), not by the round: progress is NULL until one came, else
	 * its class (migrate/progress.h's name) after that report. */
	const char *progress;
	long long step;
	double value;
};

struct admit_result {
	struct admit_running *running;
	size_t n_running;
	struct admit_wave *waves;
	size_t n_waves;
	struct admit_waiting *waiting;
	size_t n_waiting;
	struct admit_skipped_list skipped; /* nodes the round's snapshot left out */
	struct admit_scale *scales;
	size_t n_scales;
	struct admit_waiting *ignored; /* jobs whose drake.dev/scale was ignored, and why */
	size_t n_ignored;
	double next;   /* wall seconds of the next round a timer asks for; INFINITY: none */
	size_t n_held; /* new waves pacing held (listed in waiting) */
	double dragon_last_action; /* DRAGON's action timer after the round */
	double las_decided;        /* tiresias: the last 2D-LAS decision after the round */
};

struct drake_scale_opts;
struct drake_round_job;
struct drake_las_opts;
struct drake_las_state;
struct job;
struct job_resize_costs;

struct admit_options {
	bool backfill; /* admit smaller jobs behind one that does not fit */
	/* wall clock, seconds with their fraction: the step's now (a timer of
	 * under a second is seen when it is due); wave ids take its whole
	 * second */
	double now_s;
	const struct drake_scale_opts *scale; /* thresholds and model; NULL: defaults */
	struct drake_history history; /* finished jobs' service (rec_history), for the round */
	/* A job's cost of a change, by its kind (its round input's cost);
	 * NULL: each kind's measured cost (kind/registry.h). */
	const struct job_resize_costs *resize_costs;
	/* What a running job's replicas report (NULL: nothing): slow when its
	 * progress is slowing or converged, *frac its fraction of steps. */
	bool (*progress)(void *arg, const struct job *job, double *frac);
	void *progress_arg;
	/* Fills a job's attained service and observed rates (its round input,
	 * key "ns/name"); called with progress_arg. NULL: none known. */
	void (*observe)(void *arg, const char *key, struct drake_round_job *in);
	/* Keeps a job's 2D-LAS state after the round (gang/round.h's status
	 * las), for the next round's observe; called with progress_arg for
	 * every job the round saw. NULL: not kept. */
	void (*keep_las)(void *arg, const char *uid, const struct drake_las_state *st);
	/* When something a job kube-scheduler refused may wait for last
	 * changed (a node, a claim in namespace ns; wall s, 0: never), so a
	 * job backing off is tried again at once (gang/refusal.h). NULL:
	 * nothing is watched, the backoff alone applies. */
	double (*changed)(void *arg, const char *ns);
	void *changed_arg;
	/* Pacing (gang/pace.h): admitted pods that may wait for kube-scheduler
	 * (<= 0: unpaced) and those waiting now. A new wave past the budget,
	 * and every one behind it, is listed as waiting instead. */
	long pace_budget, pace_unbound;
	/* Each round's inputs and outputs are written here (round_codec.h), or
	 * nowhere when NULL. */
	struct decision_log *log;
	/* Whose rules decide (an enum drake_round_policy: 0 drake's, 1
	 * DRAGON's, 2 Tiresias') and DRAGON's action timer as the last round
	 * left it; tiresias: its thresholds (NULL: gang/tiresias.h's
	 * defaults), seconds between decisions and the last decision. */
	int policy;
	double dragon_last_action;
	const struct drake_las_opts *las;
	double las_interval, las_decided;
};

/* One admission round. tfjobs, pods and nodes are the informers' caches.
 * A job whose wave kube-scheduler refused (its job's drake.dev/unschedulable
 * record) is left out while it backs off and listed as waiting with
 * kube-scheduler's reason; a job admitted with no member bound yet is
 * listed as waiting for kube-scheduler, never as running. */
/* The jobs' caches, one per kind the controller serves, with the kind
 * each holds: every kind's jobs wait in one queue. */
struct job_caches {
	const struct kube_cache *cache[JOB_KINDS_MAX];
	const struct job_kind *kind[JOB_KINDS_MAX];
	size_t n;
};

drake_err admit_round(const struct job_caches *jobs, const struct kube_cache *pods,
                      const struct kube_cache *nodes, const struct admit_options *opts,
                      struct admit_result *out, char *msg, size_t msglen) DRAKE_MUST_CHECK;
/* The same round over a pass's world (pass_world.h: its snapshot and
 * decoded jobs, borrowed read-only); pods and nodes are the caches it was
 * built from. out->skipped is a copy of the world's. */
struct pass_world;
drake_err admit_round_world(const struct pass_world *w, const struct kube_cache *pods,
                            const struct kube_cache *nodes, const struct admit_options *opts,
                            struct admit_result *out, char *msg, size_t msglen) DRAKE_MUST_CHECK;
void admit_result_release(struct admit_result *r);

/* ---- JSON side (admit_codec.c, nodes_codec.c) ---- */

/* A replica template's node rules: spec.nodeSelector, the required node
 * affinity and spec.tolerations, for gang/nodefit.h. Strings are borrowed
 * from the template; released with admit_node_rules_release(). */
struct admit_node_rules {
	struct drake_node_sel sel;
	struct drake_toleration *tol;
	size_t n_tol;
	bool any;                     /* some rule is given: the role gets a node mask */
	struct drake_kv *kv;          /* storage */
	struct drake_sel_term *terms; /* storage */
	struct drake_sel_expr *exprs; /* storage */
	const char **values;          /* storage */
};

/* Decodes tmpl's node rules; EINVAL naming a malformed requirement. */
drake_err admit_template_node_rules(const struct json_t *tmpl, struct admit_node_rules *out,
                                    char *msg, size_t msglen) DRAKE_MUST_CHECK;
void admit_node_rules_release(struct admit_node_rules *r);
/* mask[i] for each of c's nodes: nonzero when the node's labels (from the
 * node cache) satisfy r's selector and affinity and r tolerates its
 * NoSchedule and NoExecute taints. */
drake_err admit_node_mask(const struct admit_node_rules *r, const struct drake_cluster *c,
                          const struct kube_cache *nodes, unsigned char *mask) DRAKE_MUST_CHECK;

/* The requests of a pod spec the way kube-scheduler counts them
 * (reconciler/requests.h: containers and sidecars summed, the largest init
 * container moment if larger, overhead on top, limits standing in for
 * missing requests). An extended resource names does not hold is refused
 * with DRAKE_ELIMIT and a reason, never dropped from the request. */
drake_err admit_spec_requests(const struct kube_res_spec *spec, const struct drake_res_names *names,
                              struct drake_res *out, char *msg, size_t msglen) DRAKE_MUST_CHECK;

/* The same for a pod template ({"metadata":..., "spec":...}). */
drake_err admit_template_requests(const struct json_t *tmpl, const struct drake_res_names *names,
                                  struct drake_res *out, char *msg, size_t msglen) DRAKE_MUST_CHECK;

/* The share of one GPU a pod template asks for in its annotations
 * (kubeshare/gpu_request, gpu_limit, gpu_mem); a zero share without them. */
drake_err admit_template_share(const struct json_t *tmpl, struct drake_share *out, char *msg,
                               size_t msglen) DRAKE_MUST_CHECK;

/*
 * Builds c from the caches. First c->names gets the extended resources the
 * gang templates of tfjobs' drake-managed jobs request, oldest job first,
 * up to DRAKE_RES_MAX_EXT (a job asking for more is left out of it); with
 * tfjobs NULL, the names the pods below request instead. Then every node
 * is added (allocatable; cordoned or NoSchedule / NoExecute-tainted nodes
 * are kept but not schedulable; a node kept out only by taints is marked
 * tainted, so the planner opens it to the roles whose node masks tolerate
 * them): a resource not in the table is skipped,
 * and a node that cannot be read is left out and, when skipped is not
 * NULL, listed there with why. Then every live pod is charged to its node:
 * where it is bound; an admitted member (no drake.dev/gang gate, controlled
 * by a job) where it is planned; a pod kube-scheduler nominated
 * (status.nominatedNodeName) there. A node's kubeshare/gpu_info gives its
 * GPUs' memory, and a pod with kubeshare/GPUID holds its share of that vGPU
 * (the first such pod opens it, taking a whole GPU). c must be freshly
 * initialised, skipped zeroed or released; c is sorted on return and the
 * caller releases both.
 */
drake_err admit_snapshot(const struct kube_cache *nodes, const struct kube_cache *pods,
                         const struct job_caches *jobs, struct drake_cluster *c,
                         struct admit_skipped_list *skipped, char *msg,
                         size_t msglen) DRAKE_MUST_CHECK;
/* The same with the names of jobs[0..njobs)'s templates: the jobs a
 * pass decoded (pass_world.h), instead of decoding the cache again. */
struct pass_job;
drake_err admit_snapshot_jobs(const struct kube_cache *nodes, const struct kube_cache *pods,
                              const struct pass_job *jobs, size_t njobs, struct drake_cluster *c,
                              struct admit_skipped_list *skipped, char *msg,
                              size_t msglen) DRAKE_MUST_CHECK;
/* True when every extended resource the pod requests is named in names
 * (a snapshot with that table counts all of the pod's requests). */
bool admit_pod_names_known(const struct kube_pod *pod, const struct drake_res_names *names);

/* The requests of a pod (its spec), as admit_spec_requests counts them. */
drake_err admit_pod_requests(const struct kube_pod *pod, const struct drake_res_names *names,
                             struct drake_res *out, char *msg, size_t msglen) DRAKE_MUST_CHECK;

/*
 * Re-plans one admitted member whose planned node kube-scheduler no longer
 * offers: among the candidate nodes, the schedulable one with room for the
 * pod in the snapshot (every other pod charged where it is bound or
 * planned, so no other gang's reservation is taken) that holds most of the
 * pod's job, then the tightest fit, then the first name. Fills node; EINVAL
 * when the pod is not in the cache, ESTATE with why when no candidate
 * fits or the pod has a KubeShare share (its vGPU is not re-planned).
 */
drake_err admit_replan(const struct kube_cache *nodes, const struct kube_cache *pods,
                       const char *ns, const char *name, const char *const *candidates, size_t n,
                       char *node, size_t nodelen, char *why, size_t whylen) DRAKE_MUST_CHECK;
/* The same on a snapshot already built (c, e.g. the last pass's);
 * ENOTFOUND when the pod requests a resource c's table does not name (c
 * cannot count it: the caller re-plans with admit_replan instead). */
drake_err admit_replan_on(const struct drake_cluster *c, const struct kube_cache *pods,
                          const char *ns, const char *name, const char *const *candidates, size_t n,
                          char *node, size_t nodelen, char *why, size_t whylen) DRAKE_MUST_CHECK;

/* True when pods[i] of w is the first of the wave on its node: counting
 * these counts the wave's nodes, in the order they are first named. */
bool admit_wave_first_on_node(const struct admit_wave *w, int i);

/* RFC 3339 creationTimestamp of an object in seconds, or 0. */
double admit_created(const struct json_t *obj);
/* The same from the timestamp itself (a pod record's created). */
double admit_time(const char *ts);

/* The JSON patch that ungates one pod of a wave and writes its plan:
 * test + remove drake's gate, add the four annotations, and for a pod of
 * the wave with a GPU share kubeshare/GPUID (plus gpu_request, gpu_limit
 * and gpu_mem where the pod lacks them). NULL when the pod is no longer
 * gated.
 *
 * With pin, a pod that sets no node selector, affinity or topology spread
 * constraints (!pod->node_constrained) also gets a required node affinity
 * on metadata.name, a term per node (the API server takes one value per
 * such requirement): node first, then the wave's other nodes. A gated pod's
 * node affinity may be set (KEP-3838), and kube-scheduler's NodeAffinity
 * PreFilter then evaluates only those nodes instead of the whole cluster;
 * with one feasible node it skips scoring. The
 * other nodes are where drake's filter may still re-plan the member
 * (replan.h); a member that fits none of them waits for the backstop's
 * release (backstop.h). A pod whose placement others constrain is not
 * pinned: re-planning among every node kube-scheduler offers is its
 * recourse. */
char *admit_ungate_patch(const struct kube_pod *pod, const struct admit_wave *w, const char *node,
                         bool pin);

/* {"jobs":[{"job":"ns/name","status":"waiting","waitsFor":"..."}]}; caller frees. */
struct admit_note {
	const char *key, *status, *why;
	const char *kind; /* the job's Kind ("PyTorchJob"), or NULL: not said */
};
/* With skipped (may be NULL): "nodesLeftOut":[{"node":"n","why":"..."}]
 * beside the jobs, and "nodesNotListed":N when more were left out. Each
 * job, waiting or running, says its "kind" when known. With
 * running jobs: "running":[{"job":"ns/name","workers":w,"min":m,"max":M,
 * "lastScaled":seconds,"gaveTo":"ns/other","slow":true,
 * "progress":{"class":"progressing","step":1200,"value":0.95}}] ("gaveTo",
 * "slow" and "progress" only when set). */
char *admit_waiting_json(const struct admit_note *notes, size_t n,
                         const struct admit_skipped_list *skipped,
                         const struct admit_running *running, size_t n_running);

#endif
