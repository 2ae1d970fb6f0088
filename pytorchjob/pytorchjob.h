/*
 * pytorchjob.h - the PyTorchJob kind: Kubeflow's kubeflow.org/v1
 * PyTorchJob (pytorchReplicaSpecs Master and Worker, runPolicy,
 * elasticPolicy, nprocPerNode) as a struct job_kind (kind/job.h), its
 * decoder and the environment the training operator gives its pods.
 *
 * Roles: the Master is the gang's chief (never given away); without one,
 * worker 0 is the job's master and torchrun's rendezvous host. An elastic
 * job's workers are created maxReplicas long and drake starts between
 * minReplicas and maxReplicas of them; torchrun's rendezvous admits the
 * ones that run. Without elasticPolicy every replica is the minimum.
 *
 * Ownership: a decoded job borrows its spec and templates from the object.
 */
#ifndef DRAKE_PYTORCHJOB_PYTORCHJOB_H
#define DRAKE_PYTORCHJOB_PYTORCHJOB_H

#include <stdbool.h>
#include <stddef.h>

#include "kind/job.h"

#define PT_DEFAULT_PORT  23456
#define PT_PORT_NAME     "pytorchjob-port"
#define PT_CONTAINER     "pytorch"
#define PT_OPERATOR_NAME "pytorchjob-controller"
/* runPolicy.managedBy values drake answers to (absent counts as drake's). */
#define PT_MANAGED_BY_DRAKE "drake.dev/pytorchjob-controller"
/* Longest elasticPolicy strings kept (rdzvHost, rdzvId, rdzvConf joined). */
#define PT_RDZV_STR_MAX  253
#define PT_RDZV_CONF_MAX 1024

extern const struct job_kind pytorchjob_kind;

/* Decodes and validates a PyTorchJob object; msg names the field that is
 * wrong. managed is false (DRAKE_OK) when runPolicy.managedBy names
 * another controller. elasticPolicy.metrics (an HPA the training operator
 * would create) is accepted and explained in job->notice: drake itself
 * sizes the job between minReplicas and maxReplicas. */
drake_err pytorchjob_decode(const struct json_t *obj, struct job *job, bool *managed, char *msg,
                            size_t msglen) DRAKE_MUST_CHECK;

/* The kind's env(): PYTHONUNBUFFERED; with a Master, MASTER_ADDR,
 * MASTER_PORT, WORLD_SIZE and RANK (and their PET_ forms for torchrun);
 * PET_NPROC_PER_NODE; PET_NNODES (min:max when elastic); with
 * elasticPolicy, PET_RDZV_ENDPOINT, PET_RDZV_BACKEND, PET_RDZV_ID,
 * PET_RDZV_CONF, PET_MAX_RESTARTS and PET_STANDALONE. */
int pytorch_env_set(const struct job *job, enum job_rtype t, int index, const char *domain,
                    struct json_t *env,
                    void (*set_env)(struct json_t *, const char *, const char *));

#endif
