/*
 * job.h - a training job of any kind as plain C, and the interface a kind
 * implements (struct job_kind): what the reconciler, which names no kind,
 * acts on. A kind's folder (tfjob/, pytorchjob/) decodes its objects into
 * struct job and builds its replicas' environment; what Kubeflow's kinds
 * share (replica specs, runPolicy, labels, Services, status rules) is here
 * and in kind/'s other files. Replica types are the gang's roles: the chief
 * slot holds TFJob's Chief or Master and PyTorchJob's Master; each kind
 * names its types (PyTorchJob's "Master" is pod "<job>-master-0").
 *
 * Ownership: struct job holds copies of every string; the replica
 * templates are borrowed from the JSON object the job was decoded from, so
 * the job is valid only while the caller holds that object.
 */
#ifndef DRAKE_KIND_JOB_H
#define DRAKE_KIND_JOB_H

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"
#include "kube/object.h"

struct json_t;

/* Most replicas of one type (DRAGON's max-instances included). */
#define JOB_MAX_REPLICAS 1000
/* Services are DNS-1035 labels: "<job>-evaluator-999" must fit in 63. */
#define JOB_SERVICE_NAME_MAX 63
#define JOB_NAME_MAX         (JOB_SERVICE_NAME_MAX - 14)
/* The scheduling gate every pod is created with. */
#define JOB_GANG_GATE "drake.dev/gang"

#define JOB_LABEL_OPERATOR "training.kubeflow.org/operator-name"
#define JOB_LABEL_JOB      "training.kubeflow.org/job-name"
#define JOB_LABEL_TYPE     "training.kubeflow.org/replica-type"
#define JOB_LABEL_INDEX    "training.kubeflow.org/replica-index"
#define JOB_LABEL_ROLE     "training.kubeflow.org/job-role"

/* Replica types, in the order TF_CONFIG lists them. */
enum job_rtype { JOB_CHIEF, JOB_PS, JOB_WORKER, JOB_EVALUATOR, JOB_NTYPES };

struct job;

/* Most kinds one controller serves. */
#define JOB_KINDS_MAX 4

enum job_restart {
	JOB_RESTART_NEVER,
	JOB_RESTART_ON_FAILURE,
	JOB_RESTART_ALWAYS,
	JOB_RESTART_EXIT_CODE
};
enum job_clean { JOB_CLEAN_NONE, JOB_CLEAN_RUNNING, JOB_CLEAN_ALL };

/*
 * A job kind: its resource, its names, and the two functions that differ
 * between kinds. Everything else the reconciler does to a job (pods,
 * Services, gates, status, scaling, migration) reads struct job alone.
 */
struct job_kind {
	const char *kind;          /* "TFJob": owner references, Events */
	const char *group;         /* "kubeflow.org" */
	const char *version;       /* "v1" */
	const char *plural;        /* "tfjobs": the resource, RBAC */
	const char *operator_name; /* training.kubeflow.org/operator-name */
	const char *managed_by;    /* the runPolicy.managedBy value that is drake's */
	const char *container;     /* the container drake fixes: "tensorflow" */
	const char *port_name;     /* its port's name: "tfjob-port" */
	int default_port;
	enum job_restart default_restart; /* a replica's restartPolicy when absent */
	/* What one change of a running job's worker count costs under the
	 * kind's trainer, measured from drake's decision to training again
	 * (BENCHMARKS.md, "A resize's cost"): the seconds the reconciler
	 * tells the policy a shrink and a grow stop the job for, unless
	 * drake serve --resize-cost says otherwise. */
	double resize_shrink_s, resize_grow_s;
	/* The spec's (and replicaStatuses') name of each type, and the
	 * lower-case one pod and Service names and labels carry; NULL: the
	 * kind has no such type. */
	const char *type_name[JOB_NTYPES];
	const char *type_lower[JOB_NTYPES];
	/* Decodes and validates an object of the kind (managed false, and
	 * DRAKE_OK, when runPolicy.managedBy names another controller). */
	drake_err (*decode)(const struct json_t *obj, struct job *job, bool *managed, char *msg,
	                    size_t msglen);
	/* Sets the kind's environment for replica (t, index) on env (a JSON
	 * array of {name, value}, where set_env replaces a user's entry of the
	 * same name); domain is the cluster domain or NULL. Non-zero: out of
	 * memory or a bad argument. */
	int (*env)(const struct job *job, enum job_rtype t, int index, const char *domain,
	           struct json_t *env,
	           void (*set_env)(struct json_t *env, const char *name, const char *value));
};

struct job_replica_spec {
	bool present;
	int replicas;
	enum job_restart restart;
	int port;                  /* tfjob-port of the tensorflow container, or 2222 */
	const struct json_t *tmpl; /* the pod template (borrowed) */
};

/* The annotation recording the refusals in a row of a job's gang by
 * kube-scheduler (gang/refusal.h): {"tries":2,"at":1767225600,
 * "until":1767225610,"pod":"tf-worker-0","why":"0/7 nodes are available:
 * ..."}. Written when a refused wave is released, removed once the job's
 * gang is bound whole. */
#define JOB_ANNOTATION_UNSCHEDULABLE "drake.dev/unschedulable"
/* When and why drake's --policy tiresias preempted the job:
 * {"at":1767225600,"service":7200,"why":"preempted by 2D-LAS: ..."}
 * (service: its attained GPU-seconds then, which a drake that restarts
 * while the job waits takes up again), written with the preemption,
 * removed once a pod created since is bound. */
#define JOB_ANNOTATION_PREEMPTED "drake.dev/preempted"
#define JOB_REFUSAL_WHY_MAX      512

struct job_refusal {
	int tries; /* 0: no record (or a malformed one, ignored) */
	double at_s, until_s;
	char pod[KUBE_NAME_MAX + 1];
	char why[JOB_REFUSAL_WHY_MAX];
};

/* Which finished replicas end a job successfully (Kubeflow's rules per
 * kind): the chief, else worker 0 (TFJob); every worker
 * (successPolicy AllWorkers, a PyTorchJob without a Master); any worker (an
 * elastic PyTorchJob without a Master). */
enum job_success { JOB_SUCCESS_WORKER0, JOB_SUCCESS_ALL_WORKERS, JOB_SUCCESS_ANY_WORKER };

struct job {
	const struct job_kind *kind;
	/* The object's spec (borrowed, like the templates): a kind's own
	 * fields, validated by its decoder, are read from it by its env(). */
	const struct json_t *spec;
	/* A field drake accepts but does not act on, explained on the job (an
	 * Event when its pods are created): "" when none. */
	char notice[256];
	char ns[64], name[KUBE_NAME_MAX + 1], uid[64]; /* name is at most JOB_NAME_MAX once valid */
	struct job_replica_spec rs[JOB_NTYPES];
	int min_instances, max_instances; /* workers; default Worker.replicas */
	enum job_clean clean;
	long ttl_s, deadline_s;   /* -1 when unset */
	int backoff_limit;        /* -1 when unset */
	enum job_success success; /* without a chief */
	bool suspend;
	bool dynamic_worker;
	bool dragon_layout; /* spec fields were top-level (no runPolicy) */
	/* Kubeflow's runPolicy.schedulingPolicy, where it maps onto drake:
	 * minAvailable gives min_instances (the PS and the chief are always
	 * required) when spec.min-instances is absent; priorityClass goes on
	 * the pods; scheduleTimeoutSeconds bounds how long an admitted wave
	 * may wait unbound. */
	int min_available;                      /* -1: unset */
	long schedule_timeout_s;                /* -1: unset */
	char priority_class[KUBE_NAME_MAX + 1]; /* "": unset */
	struct job_refusal refusal;             /* JOB_ANNOTATION_UNSCHEDULABLE */
	char preempted[JOB_REFUSAL_WHY_MAX];    /* JOB_ANNOTATION_PREEMPTED's why; "": none */
	double preempted_at, preempted_service; /* and its time (s) and service (GPU-s) */
};

/* Drake's own words for the types, whatever the kind: "ps", "worker",
 * "chief", "evaluator" (drake's annotations name replicas so). */
const char *job_rtype_lower(enum job_rtype t);
/* "PS", "Worker", "Chief", "Evaluator". */
const char *job_rtype_name(enum job_rtype t);
/* The kind's words for type t: the spec's ("Master") and replicaStatuses'
 * key, and the lower-case one in pod names and labels ("master"). */
const char *job_type_name(const struct job *job, enum job_rtype t);
const char *job_type_lower(const struct job *job, enum job_rtype t);
/*
 * Replica type <-> gang role (enum drake_role, gang/roles.h), the one
 * mapping: Kubeflow's "PS", "Chief" (or its legacy name "Master", a
 * PyTorchJob's) and "Worker" are the gang's roles; the spec's keys spell
 * them so, the training.kubeflow.org/replica-type label in lower case, so
 * any case is read. An "Evaluator", or any other type, is no part of the
 * gang.
 */
/* The role of replica type name t in any case, or -1 (none, NULL included). */
int job_role_of_type_name(const char *t);
/* The replica type name of role r as a TFJob's spec spells it: "PS",
 * "Chief", "Worker"; NULL for r out of range. */
const char *job_type_name_of_role(int r);
/* The gang role of replica type t; -1 for an evaluator. */
int job_role_of(enum job_rtype t);
/* The replica type of gang role r (an int holding enum drake_role). */
enum job_rtype job_rtype_of_role(int r);
/* How many pods/services exist for type t: max-instances for workers. */
int job_replica_slots(const struct job *job, enum job_rtype t);
/* True when worker index i starts at once (until the gang planner decides). */
bool job_replica_starts(const struct job *job, enum job_rtype t, int index);
/* True for the pod whose state is the job's: chief-0, else worker-0. */
bool job_is_master_role(const struct job *job, enum job_rtype t, int index);
/* "<job>-<type>-<i>" into buf; EINVAL/ELIMIT when it would not be a valid name. */
drake_err job_replica_name(const struct job *job, enum job_rtype t, int index, char *buf,
                           size_t len) DRAKE_MUST_CHECK;

/* kind->decode(obj, ...): every decode of a job goes through here. */
drake_err job_decode(const struct job_kind *kind, const struct json_t *obj, struct job *job,
                     bool *managed, char *msg, size_t msglen) DRAKE_MUST_CHECK;

/* The kind among kinds[0..n) whose Kind is name (an owner reference's
 * kind), or NULL. */
const struct job_kind *job_kind_named(const struct job_kind *const *kinds, size_t n,
                                      const char *name);

#endif
