/*
 * tfjob.h - a TFJob as plain C: the spec the reconciler acts on (decoded from
 * either Kubeflow's v1 layout, with runPolicy, or DRAGON's older top-level
 * layout, plus DRAGON's min-instances / max-instances), the replica naming
 * rules, and the decoder's entry point.
 *
 * Ownership: struct tfjob holds copies of every string; the replica
 * templates are borrowed from the JSON object the job was decoded from, so
 * the job is valid only while the caller holds that object.
 */
#ifndef DRAKE_TFJOB_TFJOB_H
#define DRAKE_TFJOB_TFJOB_H

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"
#include "kube/object.h"

struct json_t;

/* Most replicas of one type (DRAGON's max-instances included). */
#define TF_MAX_REPLICAS 1000
/* Services are DNS-1035 labels: "<job>-evaluator-999" must fit in 63. */
#define TF_SERVICE_NAME_MAX 63
#define TF_JOB_NAME_MAX     (TF_SERVICE_NAME_MAX - 14)
#define TF_DEFAULT_PORT     2222
#define TF_PORT_NAME        "tfjob-port"
#define TF_CONTAINER        "tensorflow"
/* runPolicy.managedBy values drake answers to (absent counts as drake's). */
#define TF_MANAGED_BY_DRAKE "drake.dev/tfjob-controller"
/* The scheduling gate every pod is created with. */
#define TF_GANG_GATE "drake.dev/gang"

#define TF_LABEL_OPERATOR "training.kubeflow.org/operator-name"
#define TF_LABEL_JOB      "training.kubeflow.org/job-name"
#define TF_LABEL_TYPE     "training.kubeflow.org/replica-type"
#define TF_LABEL_INDEX    "training.kubeflow.org/replica-index"
#define TF_LABEL_ROLE     "training.kubeflow.org/job-role"
#define TF_OPERATOR_NAME  "tfjob-controller"

/* Replica types, in the order TF_CONFIG lists them. */
enum tf_rtype { TF_CHIEF, TF_PS, TF_WORKER, TF_EVALUATOR, TF_NTYPES };

enum tf_restart {
	TF_RESTART_NEVER,
	TF_RESTART_ON_FAILURE,
	TF_RESTART_ALWAYS,
	TF_RESTART_EXIT_CODE
};
enum tf_clean { TF_CLEAN_NONE, TF_CLEAN_RUNNING, TF_CLEAN_ALL };

struct tf_replica_spec {
	bool present;
	int replicas;
	enum tf_restart restart;
	int port;                  /* tfjob-port of the tensorflow container, or 2222 */
	const struct json_t *tmpl; /* the pod template (borrowed) */
};

/* The annotation recording the refusals in a row of a job's gang by
 * kube-scheduler (gang/refusal.h): {"tries":2,"at":1767225600,
 * "until":1767225610,"pod":"tf-worker-0","why":"0/7 nodes are available:
 * ..."}. Written when a refused wave is released, removed once the job's
 * gang is bound whole. */
#define TF_ANNOTATION_UNSCHEDULABLE "drake.dev/unschedulable"
#define TF_REFUSAL_WHY_MAX          512

struct tf_refusal {
	int tries; /* 0: no record (or a malformed one, ignored) */
	double at_s, until_s;
	char pod[KUBE_NAME_MAX + 1];
	char why[TF_REFUSAL_WHY_MAX];
};

struct tfjob {
	char ns[64], name[KUBE_NAME_MAX + 1],
	    uid[64]; /* name is at most TF_JOB_NAME_MAX once valid */
	struct tf_replica_spec rs[TF_NTYPES];
	int min_instances, max_instances; /* workers; default Worker.replicas */
	enum tf_clean clean;
	long ttl_s, deadline_s; /* -1 when unset */
	int backoff_limit;      /* -1 when unset */
	bool all_workers;       /* successPolicy AllWorkers */
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
	struct tf_refusal refusal;              /* TF_ANNOTATION_UNSCHEDULABLE */
};

/* "ps", "worker", "chief", "evaluator". */
const char *tf_rtype_lower(enum tf_rtype t);
/* "PS", "Worker", "Chief", "Evaluator" (replicaStatuses keys). */
const char *tf_rtype_name(enum tf_rtype t);
/* The gang role (enum drake_role, gang/roles.h) of replica type t, by
 * gang/protocol.h's one mapping; -1 for an evaluator, which is no part of
 * the gang. */
int tf_role_of(enum tf_rtype t);
/* The replica type of gang role r (an int holding enum drake_role). */
enum tf_rtype tf_rtype_of_role(int r);
/* How many pods/services exist for type t: max-instances for workers. */
int tf_replica_slots(const struct tfjob *job, enum tf_rtype t);
/* True when worker index i starts at once (until the gang planner decides). */
bool tf_replica_starts(const struct tfjob *job, enum tf_rtype t, int index);
/* True for the pod whose state is the job's: chief-0, else worker-0. */
bool tf_is_master_role(const struct tfjob *job, enum tf_rtype t, int index);
/* "<job>-<type>-<i>" into buf; EINVAL/ELIMIT when it would not be a valid name. */
drake_err tf_replica_name(const struct tfjob *job, enum tf_rtype t, int index, char *buf,
                          size_t len) DRAKE_MUST_CHECK;

/* Decodes and validates a TFJob object; msg says what is wrong. managed is
 * set false (and DRAKE_OK returned) when runPolicy.managedBy names another
 * controller: the caller must then leave the job alone. */
drake_err tfjob_decode(const struct json_t *obj, struct tfjob *job, bool *managed, char *msg,
                       size_t msglen) DRAKE_MUST_CHECK;

/* The value of TF_ANNOTATION_UNSCHEDULABLE for r (malloc'd JSON). */
char *tf_refusal_value(const struct tf_refusal *r);
/* Decodes that value; false (r zeroed) when it is absent or malformed. */
bool tf_refusal_decode(const char *value, struct tf_refusal *r);

#endif
