/*
 * pod_codec.h - what the job controller writes and reads about its pods and
 * services: builds a replica's pod (template + Kubeflow labels, owner
 * reference, restart policy, tfjob-port, TF_CONFIG, drake's scheduling gate)
 * and its headless service; reads an owned pod (the pod cache's record,
 * kube/pod.h) back into a job_pod_obs; builds
 * the JSON patch that removes the gate; builds the job status patch.
 *
 * Ownership: builders return malloc'd JSON text (NULL on failure, with msg
 * where one is taken); readers borrow from the object or record.
 */
#ifndef DRAKE_KIND_POD_CODEC_H
#define DRAKE_KIND_POD_CODEC_H

#include <stdbool.h>
#include <stddef.h>

#include "kind/status.h"
#include "kind/job.h"

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
 * for that audience (volume JOB_PROGRESS_TOKEN_VOLUME at
 * JOB_PROGRESS_TOKEN_DIR) named by DRAKE_PROGRESS_TOKEN_FILE. */
struct job_pod_opts {
	const char *domain; /* cluster domain of TF_CONFIG's hosts */
	const char *gang_resource;
	const char *scheduler_name;
	const char *progress_url;
	const char *progress_ca_pem;
	const char *progress_audience;
};

#define JOB_PROGRESS_TOKEN_VOLUME "drake-progress-token"
#define JOB_PROGRESS_TOKEN_DIR    "/var/run/secrets/drake.dev/progress"
char *job_pod_json(const struct job *job, enum job_rtype t, int index, const struct job_pod_opts *o,
                   char *msg, size_t msglen);
char *job_service_json(const struct job *job, enum job_rtype t, int index);
/* Index of drake's scheduling gate (JOB_GANG_GATE) in the pod's
 * spec.schedulingGates, or -1 when it has none. */
int job_gang_gate_index(const struct kube_pod *pod);
/* How many annotations only drake may write (gang/protocol.h) the job's
 * pod templates carry; keys lists them ("Worker drake.dev/planned-node,
 * ..."), cut to len. job_pod_json leaves them out of every pod. */
int job_template_reserved(const struct job *job, char *keys, size_t len);

/* Reads the replica type and index labels (of a service object, or a pod
 * record); false when absent or malformed. Types are read as drake's
 * words, "master" as the chief, whatever the kind. */
bool job_replica_of(const struct json_t *obj, enum job_rtype *t, int *index);
bool job_pod_replica_of(const struct kube_pod *pod, enum job_rtype *t, int *index);
/* Fills obs from a pod; false when it is not a replica pod. The exit code
 * is container's (the kind's). */
bool job_pod_observe(const struct kube_pod *pod, const char *container, struct job_pod_obs *obs);
/* A JSON patch removing JOB_GANG_GATE (guarded by a test op), or NULL when
 * the pod carries no such gate. */
char *job_pod_ungate_patch(const struct kube_pod *pod);

/* Reads the job's status: final state (Succeeded/Failed condition True),
 * the seconds since startTime (-1 if unset) and since completionTime (-1).
 * now is seconds since the epoch. */
void job_status_read(const struct json_t *job_obj, long now, bool *final, long *since_start,
                     long *since_done);
/* Restart count kept in the job's annotation (0 when absent). */
int job_restart_count(const struct json_t *job_obj);
/* Merge patch for the status subresource, or NULL when nothing changed. */
char *job_status_patch(const struct json_t *job_obj, const struct job *job,
                       const struct job_verdict *v, long now);
/* Merge patch marking a job Failed for an invalid spec (NULL when it already is). */
char *job_status_invalid_patch(const struct json_t *job_obj, const struct job_kind *kind,
                               const char *message, long now);

/* The type of the last True condition ("Running", ...), or NULL. */
const char *job_status_current(const struct json_t *job_obj);
/* Merge patch setting annotation key of an object to value; NULL when
 * value is NULL or on allocation failure. */
char *job_annotation_patch(const char *key, const char *value);
/* Merge patch setting the restarts annotation to n. */
char *job_restarts_patch(int n);

#define JOB_ANNOTATION_RESTARTS "drake.dev/restarts"

/* Merge patch recording an admitted gang on its TFJob (JOB_ANNOTATION_PLAN):
 * {"chief":n,"gang":"<id>","nodes":{"<node>":pods,...},"ps":n,"workers":n},
 * nodes[i] being the planned node of each of the n_pods pods ("chief" only
 * when the job has one). */
char *job_plan_patch(const char *gang, int n_ps, int n_chief, int n_workers,
                     const char *const *nodes, int n_pods);

#define JOB_ANNOTATION_PLAN "drake.dev/plan"

#endif
