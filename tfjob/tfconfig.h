/*
 * tfconfig.h - the TF_CONFIG builder: the cluster map every replica of a
 * TFJob gets in its environment. Workers are listed max-instances long from
 * the start (DRAGON's rule), so scaling and migration never have to touch a
 * surviving pod's environment.
 *
 * Ownership: tf_config_json() returns malloc'd JSON the caller frees.
 */
#ifndef DRAKE_TFJOB_TFCONFIG_H
#define DRAKE_TFJOB_TFCONFIG_H

#include "tfjob/tfjob.h"

/* Longest cluster domain suffix accepted (CUSTOM_CLUSTER_DOMAIN). */
#define TF_CLUSTER_DOMAIN_MAX 128

/* Endpoint "<job>-<type>-<i>.<ns>.svc[.<domain>]:<port>" into buf. */
drake_err tf_endpoint(const struct job *job, enum job_rtype t, int index, const char *domain,
                      char *buf, size_t len) DRAKE_MUST_CHECK;

/* {"cluster":{...},"task":{"type":..,"index":..},"environment":"cloud"} for
 * replica (t, index); domain may be NULL. With enableDynamicWorker the
 * sparse form is built (workers keyed by index, as Kubeflow's
 * training-operator builds it for dynamic workers).
 * NULL on a bad argument or out of memory. */
char *tf_config_json(const struct job *job, enum job_rtype t, int index, const char *domain);

/* True when TF_CONFIG is injected at all: a job of exactly one replica is
 * not distributed and gets none (as in Kubeflow). */
bool tf_config_wanted(const struct job *job);

/* The TFJob kind's environment (struct job_kind.env): TF_CONFIG, when
 * wanted, into env. */
int tf_env_set(const struct job *job, enum job_rtype t, int index, const char *domain,
               struct json_t *env, void (*set_env)(struct json_t *, const char *, const char *));

#endif
