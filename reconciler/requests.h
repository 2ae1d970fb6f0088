/*
 * requests.h - what a pod spec asks of a node, counted the way
 * kube-scheduler's NodeResourcesFit counts it (k8s.io/component-helpers
 * resource.PodRequests): app containers and sidecars summed, the largest
 * init-container moment if larger, the RuntimeClass overhead on top, and
 * each container's limit standing in for a request it does not give.
 *
 * The spec is read as its resource lists (kube/pod.h's kube_res_spec: a
 * cached pod's record, or a job template decoded by admit_codec.c), so
 * pods and templates are counted by this one rule.
 *
 * Resources are read through a snapshot's names table (gang/resource.h):
 * cpu, memory and nvidia.com/gpu always, an extended resource only when
 * the table names it. Untracked ones are skipped by the readers here;
 * requests_check_tracked() is how a caller refuses them instead. drake's
 * own drake.dev/ marker resources are never capacity and never counted.
 *
 * Pure readers: everything is borrowed from the lists and the caller's
 * structs; nothing is allocated.
 */
#ifndef DRAKE_RECONCILER_REQUESTS_H
#define DRAKE_RECONCILER_REQUESTS_H

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"
#include "gang/resource.h"
#include "kube/pod.h"

/* True for a name that takes a slot of the names table when requested:
 * neither built in (cpu, memory, nvidia.com/gpu) nor a drake.dev/ marker. */
bool requests_ext_name(const char *name);

/* Adds one resource list ({"cpu": "500m", ...}: n quantities) into r,
 * setting *has bits; a resource the table does not name is skipped unread.
 * msg names the resource a quantity is wrong for. */
drake_err requests_list(const struct kube_qty *list, size_t n, const struct drake_res_names *names,
                        struct drake_res *r, unsigned *has, char *msg,
                        size_t msglen) DRAKE_MUST_CHECK;

/* Calls fn on every resource list of a spec: each container's and init
 * container's requests and limits, then the overhead. */
void requests_foreach_list(const struct kube_res_spec *spec,
                           void (*fn)(const struct kube_qty *list, size_t n, void *arg), void *arg);

/* A spec's requests, untracked resources skipped. */
drake_err requests_of_spec(const struct kube_res_spec *spec, const struct drake_res_names *names,
                           struct drake_res *out, char *msg, size_t msglen) DRAKE_MUST_CHECK;

/* DRAKE_ELIMIT with a reason when spec asks for an extended resource the
 * table does not name ("requests 9 extended resources; drake models at
 * most 8"): such a request is refused, never planned as if not made. */
drake_err requests_check_tracked(const struct kube_res_spec *spec,
                                 const struct drake_res_names *names, char *msg,
                                 size_t msglen) DRAKE_MUST_CHECK;

#endif
