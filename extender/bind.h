/*
 * bind.h - posting a pod's v1 Binding for a held bind request (internal to
 * extender/). A bind state is shared by the request (the call) and whatever
 * is in flight for it (the API request, a gang barrier); each holds a
 * reference. When the call is answered early (shutdown), the state is
 * detached (call == NULL) and the others only drop their references.
 */
#ifndef DRAKE_EXTENDER_BIND_H
#define DRAKE_EXTENDER_BIND_H

#include <stdbool.h>

#include "extender/codec.h"

struct ext_call;
struct metrics;
struct kube_client;

struct bind_state {
	struct ext_call *call; /* NULL once the call has been answered */
	struct metrics *metrics;
	struct kube_client *kube;
	struct ext_bind_args args;
	int refs;
};

void bind_ref(struct bind_state *b);
void bind_unref(struct bind_state *b);

/* Called once the Binding has been posted: error NULL on success. */
typedef void (*bind_done_fn)(struct bind_state *b, const char *error, void *arg);

/* Posts the Binding (treating a 409 "already bound to this node" as
 * success). done runs exactly once; b stays referenced until then. */
void bind_post(struct bind_state *b, bind_done_fn done, void *arg);

/* Answers the call (when still attached) with error, or success for NULL. */
void bind_answer(struct bind_state *b, const char *error);

#endif
