/*
 * tfconfig.h - TF_CONFIG as TensorFlow reads it: the cluster (task type ->
 * "host:port" endpoints) and this process's task (type, index).
 *
 *   {"cluster":{"ps":["job-ps-0.ns.svc:2222"],
 *               "worker":["job-worker-0.ns.svc:2222","job-worker-1.ns.svc:2222"],
 *               "chief":["job-chief-0.ns.svc:2222"]},
 *    "task":{"type":"worker","index":1},
 *    "environment":"cloud"}
 *
 * A type's endpoints are a list, or (the training operator's
 * enableDynamicWorker form) an object keyed by decimal index whose missing
 * indexes are unknown. "master" is TensorFlow's old name for "chief".
 * "environment", "rpc_layer" and job names drake-train does not use are
 * accepted and ignored, as TensorFlow does; an evaluator task need not be in
 * the cluster (TensorFlow leaves it out). A missing task index is 0, as in
 * TensorFlow's RunConfig.
 *
 * Ownership: tfc_parse fills a caller's struct tf_config whose endpoint
 * strings it allocates; tfc_release frees them (safe on a zeroed struct).
 */
#ifndef DRAKE_TRAIN_TFCONFIG_H
#define DRAKE_TRAIN_TFCONFIG_H

#include <stddef.h>

#include "common/err.h"

#define TFC_JSON_MAX  (256 * 1024) /* bytes of TF_CONFIG */
#define TFC_TASKS_MAX 4096         /* endpoints of one type */
#define TFC_HOST_MAX  253          /* a DNS name's longest spelling */

enum tfc_type { TFC_CHIEF, TFC_PS, TFC_WORKER, TFC_EVALUATOR, TFC_NTYPES };

struct tf_config {
	enum tfc_type type; /* this task's */
	int index;
	/* Endpoints of each type, "host:port" as given; slots[t] entries, NULL
	 * where the sparse form leaves an index out. */
	char **ep[TFC_NTYPES];
	int slots[TFC_NTYPES];
};

/* Parses json (NUL-terminated, at most TFC_JSON_MAX bytes). On error, msg
 * says what is wrong and where, and *c holds nothing to free. */
drake_err tfc_parse(const char *json, struct tf_config *c, char *msg, size_t len) DRAKE_MUST_CHECK;

void tfc_release(struct tf_config *c);

/* "chief", "ps", "worker", "evaluator". */
const char *tfc_type_name(enum tfc_type t);

/* Splits "host:port" or "[v6]:port" into host (without brackets) and a port
 * in 1..65535. */
drake_err tfc_split_address(const char *addr, char *host, size_t hostlen, int *port, char *msg,
                            size_t len) DRAKE_MUST_CHECK;

#endif
