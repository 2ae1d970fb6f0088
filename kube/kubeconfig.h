/*
 * kubeconfig.h - the parts of the kubeconfig reader that tests and the fuzz
 * target call directly; kube_config_load() in kube/client.h is the entry
 * point for everyone else.
 *
 * Ownership: on success *out holds heap strings the caller releases with
 * kube_config_release(); on failure *out is left released (all NULL).
 */
#ifndef DRAKE_KUBE_KUBECONFIG_H
#define DRAKE_KUBE_KUBECONFIG_H

#include <stddef.h>

#include "common/err.h"
#include "kube/client.h"

/* Largest kubeconfig file read (kubectl's own files are a few KiB). */
#define KUBE_CONFIG_MAX_BYTES (1024 * 1024)
/* Most YAML nodes a kubeconfig document may have. */
#define KUBE_CONFIG_MAX_NODES 65536
/* Largest bearer token, from the file or from tokenFile. */
#define KUBE_TOKEN_MAX_BYTES (64 * 1024)

/* Where the in-cluster service account's files live. */
#define KUBE_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

/* Parses a kubeconfig held in memory. base_dir resolves relative file paths
 * (kubectl resolves them against the kubeconfig's folder); NULL keeps them
 * as written. */
drake_err kube_config_parse(const char *buf, size_t len, const char *base_dir,
                            struct kube_config *out, char *msg, size_t msglen) DRAKE_MUST_CHECK;

/* The in-cluster configuration: host and port as given (normally the
 * KUBERNETES_SERVICE_HOST/PORT variables), CA and token from sa_dir. */
drake_err kube_config_in_cluster(const char *host, const char *port, const char *sa_dir,
                                 struct kube_config *out, char *msg,
                                 size_t msglen) DRAKE_MUST_CHECK;

/* Reads a bearer token file (at most KUBE_TOKEN_MAX_BYTES), trims trailing
 * whitespace and refuses control characters, so it is safe in a header.
 * *out is malloc'd. */
drake_err kube_token_read(const char *path, char **out, char *msg, size_t msglen) DRAKE_MUST_CHECK;

/* Decodes standard base64 (whitespace ignored, padding required) into a
 * NUL-terminated heap string; refuses bad characters and embedded NULs
 * because every -data field carries PEM text. */
drake_err kube_base64_decode_text(const char *in, size_t len, char **out, char *msg,
                                  size_t msglen) DRAKE_MUST_CHECK;

#endif
