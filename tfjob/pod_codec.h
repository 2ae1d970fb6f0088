/*
 * pod_codec.h - what the TFJob controller writes and reads about its pods and
 * services: builds a replica's pod (template + Kubeflow labels, owner
 * reference, restart policy, tfjob-port, TF_CONFIG, drake's scheduling gate)
 * and its headless service; reads an owned pod (the pod cache's record,
 * kube/pod.h) back into a tf_pod_obs; builds
 * the JSON patch that removes the gate; builds the TFJob status patch.
 *
 * Ownership: builders return malloc'd JSON text (NULL on failure, with msg
 * where one is taken); readers borrow from the object or record.
 */
#ifndef DRAKE_TFJOB_POD_CODEC_H
#define DRAKE_TFJOB_POD_CODEC_H

#include <stdbool.h>
#include <stddef.h>

#include "tfjob/status.h"
#include "tfjob/tfjob.h"

struct json_t;
struct kube_pod;

/* How the controller builds pods; NULL or "" leaves each alone.
 * gang_resource is requested (1) by the tensorflow container so that, in
 * gang-only mode, kube-scheduler sends only gang pods to drake (a
 * managedResources entry with ignoredByScheduler). scheduler_name becomes
 * spec.schedulerName unless the template names a scheduler of its own (any
 * non-empty name, default-scheduler too), which is kept. progress_url
 * becomes DRAKE_PROGRESS_URL in the tensorflow container's environment,
 * where `drake progress` and the examples/ hooks find drake; with it,
 * progress_ca_pem (the CA that signed drake's serving certificate, PEM)
 * becomes DRAKE_PROGRESS_CA_PEM, with which they verify drake; and with
 * progress_audience the container gets a projected service-account token
 * for that audience (volume TF_PROGRESS_TOKEN_VOLUME at
 * TF_PROGRESS_TOKEN_DIR) named by DRAKE_PROGRESS_TOKEN_FILE. */
struct tf_pod_opts {
	const char *domain; /* cluster domain of TF_CONFIG's hosts */
	const char *gang_resource;
	const char *scheduler_name;
	const char *progress_url;
	const char *progress_ca_pem;
	const char *progress_audience;
};

#define TF_PROGRESS_TOKEN_VOLUME "drake-progress-token"
#define TF_PROGRESS_TOKEN_DIR    "/var/run/secrets/drake.dev/progress"
char *tf_pod_json(const struct tfjob *job, enum tf_rtype t, int index, const struct tf_pod_opts *o,
                  char *msg, size_t msglen);
char *tf_service_json(const struct tfjob *job, enum tf_rtype t, int index);
/* Index of drake's scheduling gate (TF_GANG_GATE) in the pod's
 * spec.schedulingGates, or -1 when it has none. */
int tf_gang_gate_index(const struct kube_pod *pod);
/* How many annotations only drake may write (gang/protocol.h) the job's
 * pod templates carry; keys lists them ("Worker drake.dev/planned-node,
 * ..."), cut to len. tf_pod_json leaves them out of every pod. */
int tf_template_reserved(const struct tfjob *job, char *keys, size_t len);

/* Reads the replica type and index labels (of a service object, or a pod
 * record); false when absent or malformed. */
bool tf_replica_of(const struct json_t *obj, enum tf_rtype *t, int *index);
bool tf_pod_replica_of(const struct kube_pod *pod, enum tf_rtype *t, int *index);
/* Fills obs from a pod; false when it is not a replica pod. */
bool tf_pod_observe(const struct kube_pod *pod, struct tf_pod_obs *obs);
/* A JSON patch removing TF_GANG_GATE (guarded by a test op), or NULL when
 * the pod carries no such gate. */
char *tf_pod_ungate_patch(const struct kube_pod *pod);

/* Reads the job's status: final state (Succeeded/Failed condition True),
 * the seconds since startTime (-1 if unset) and since completionTime (-1).
 * now is seconds since the epoch. */
void tf_status_read(const struct json_t *job_obj, long now, bool *final, long *since_start,
                    long *since_done);
/* Restart count kept in the job's annotation (0 when absent). */
int tf_restart_count(const struct json_t *job_obj);
/* Merge patch for the status subresource, or NULL when nothing changed. */
char *tf_status_patch(const struct json_t *job_obj, const struct tfjob *job,
                      const struct tf_verdict *v, long now);
/* Merge patch marking a job Failed for an invalid spec (NULL when it already is). */
char *tf_status_invalid_patch(const struct json_t *job_obj, const char *message, long now);

/* The type of the last True condition ("Running", ...), or NULL. */
const char *tf_status_current(const struct json_t *job_obj);
/* Merge patch setting annotation key of an object to value; NULL when
 * value is NULL or on allocation failure. */
char *tf_annotation_patch(const char *key, const char *value);
/* Merge patch setting the restarts annotation to n. */
char *tf_restarts_patch(int n);

#define TF_ANNOTATION_RESTARTS "drake.dev/restarts"

/* Merge patch recording an admitted gang on its TFJob (TF_ANNOTATION_PLAN):
 * {"chief":n,"gang":"<id>","nodes":{"<node>":pods,...},"ps":n,"workers":n},
 * nodes[i] being the planned node of each of the n_pods pods ("chief" only
 * when the job has one). */
char *tf_plan_patch(const char *gang, int n_ps, int n_chief, int n_workers,
                    const char *const *nodes, int n_pods);

#define TF_ANNOTATION_PLAN "drake.dev/plan"

#endif
