/*
 * job_codec.h - what every kind's decoder shares (kind/job_codec.c):
 * metadata and runPolicy.managedBy, the replica specs under a kind's key
 * (tfReplicaSpecs, pytorchReplicaSpecs), runPolicy's clean-up, deadline,
 * backoff and suspend, and Kubeflow's schedulingPolicy. Each fills struct
 * job (kind/job.h) and says in msg which field is wrong.
 *
 * Ownership: templates are borrowed from the decoded object (see job.h).
 */
#ifndef DRAKE_KIND_JOB_CODEC_H
#define DRAKE_KIND_JOB_CODEC_H

#include <stdbool.h>
#include <stddef.h>

#include "kind/job.h"

struct json_t;

/* v, when present and not null, into *out: an integer in [lo, hi]. */
drake_err job_get_int(const struct json_t *v, const char *what, long lo, long hi, long *out,
                      char *msg, size_t msglen) DRAKE_MUST_CHECK;

/* Zeroes job, sets its kind, namespace, uid and name (a DNS-1035 label of
 * at most JOB_NAME_MAX). *managed false (DRAKE_OK) when
 * runPolicy.managedBy names a controller other than kind->managed_by: the
 * rest is then not decoded. */
drake_err job_decode_meta(const struct json_t *obj, const struct job_kind *kind, struct job *job,
                          bool *managed, char *msg, size_t msglen) DRAKE_MUST_CHECK;

/* spec.<key>: one entry per replica type the kind names (any case;
 * "Master" is the chief of a TFJob too), with replicas (at most one chief
 * and one evaluator), restartPolicy and a template whose kind->container
 * container exists (its kind->port_name port, or kind->default_port). */
drake_err job_decode_replicas(const struct json_t *spec, const char *key, struct job *job,
                              char *msg, size_t msglen) DRAKE_MUST_CHECK;

/* runPolicy's cleanPodPolicy (default clean), ttlSecondsAfterFinished,
 * activeDeadlineSeconds, backoffLimit and suspend; with top_level, a field
 * absent from runPolicy is read from spec (DRAGON's TFJob layout). */
drake_err job_decode_run_policy(const struct json_t *spec, bool top_level, enum job_clean clean,
                                struct job *job, char *msg, size_t msglen) DRAKE_MUST_CHECK;

/* runPolicy.schedulingPolicy: minAvailable (job->min_available, -1
 * unset), scheduleTimeoutSeconds and priorityClass. queue and
 * minResources are Volcano's and scheduler-plugins' and are not read. */
drake_err job_decode_scheduling(const struct json_t *spec, struct job *job, char *msg,
                                size_t msglen) DRAKE_MUST_CHECK;

/* The value of JOB_ANNOTATION_PREEMPTED (malloc'd JSON), and its decoding
 * into job's preempted, preempted_at and preempted_service (false, and all
 * cleared, when value is NULL or malformed). */
char *job_preempted_value(double at, double service, const char *why);
bool job_preempted_decode(const char *value, struct job *job);

/* The value of JOB_ANNOTATION_UNSCHEDULABLE for r (malloc'd JSON). */
char *job_refusal_value(const struct job_refusal *r);
/* Decodes that value; false (r zeroed) when it is absent or malformed. */
bool job_refusal_decode(const char *value, struct job_refusal *r);

#endif
