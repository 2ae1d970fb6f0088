/*
 * tfjob.h - the TFJob kind: Kubeflow's kubeflow.org/v1 TFJob (or DRAGON's
 * older top-level layout, with DRAGON's min-instances / max-instances) as
 * a struct job_kind (kind/job.h), and its decoder.
 *
 * Ownership: a decoded job borrows its templates from the object (job.h).
 */
#ifndef DRAKE_TFJOB_TFJOB_H
#define DRAKE_TFJOB_TFJOB_H

#include <stdbool.h>
#include <stddef.h>

#include "kind/job.h"

#define TF_DEFAULT_PORT  2222
#define TF_PORT_NAME     "tfjob-port"
#define TF_CONTAINER     "tensorflow"
#define TF_OPERATOR_NAME "tfjob-controller"
/* runPolicy.managedBy values drake answers to (absent counts as drake's). */
#define TF_MANAGED_BY_DRAKE "drake.dev/tfjob-controller"

extern const struct job_kind tfjob_kind;

/* Decodes and validates a TFJob object; msg says what is wrong. managed is
 * set false (and DRAKE_OK returned) when runPolicy.managedBy names another
 * controller: the caller must then leave the job alone. */
drake_err tfjob_decode(const struct json_t *obj, struct job *job, bool *managed, char *msg,
                       size_t msglen) DRAKE_MUST_CHECK;

#endif
