/*
 * barrier.h - the gang bind barrier (internal to extender/; its one client
 * is bind.c).
 *
 * kube-scheduler binds asynchronously, one request per pod. The barrier
 * holds each member's bind request until its wave can run: every member
 * of the wave has arrived (counting members a previous drake already
 * bound) and, per role, the job's minimum is there (every PS, the chief,
 * min-instances workers; gang/roles.h). Then it posts the Bindings, PS and
 * chief first and the workers only once those all succeeded, so no worker
 * is ever bound without its PS. A wave that does not complete within the
 * timeout (shorter than kube-scheduler's httpTimeout) has every held request
 * answered with an error and nothing posted; kube-scheduler retries. If some
 * Bindings fail after others succeeded, the bound members are undone
 * (deleted); the controller recreates them gated and admission plans the
 * job again.
 *
 * A pod joins only the wave it really belongs to (ext_member_check): a copy
 * of a member, or a pod elsewhere carrying the same annotations, is answered
 * with an error and never counts.
 *
 * The barrier does no I/O of its own: it sees a held request as an opaque
 * pointer and acts on it through the client's barrier_ops.
 *
 * Ownership: the registry belongs to its creator. A barrier takes a
 * reference (ops->hold) on each held request and drops it (ops->drop) when
 * the wave has been answered; barriers free themselves then.
 */
#ifndef DRAKE_EXTENDER_BARRIER_H
#define DRAKE_EXTENDER_BARRIER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;
struct kube_cache;
struct ext_member;

/* Called once a request's Binding has been posted: error NULL on success. */
typedef void (*barrier_posted_fn)(void *req, const char *error, void *arg);

/* What the barrier may do to a held request. */
struct barrier_ops {
	/* Posts the Binding; done runs exactly once, possibly before post returns. */
	void (*post)(void *req, barrier_posted_fn done, void *arg);
	/* Answers kube-scheduler (error NULL: success); a no-op once answered. */
	void (*answer)(void *req, const char *error);
	/* False once the request was answered from elsewhere (shutdown). */
	bool (*held)(const void *req);
	void (*hold)(void *req);
	void (*drop)(void *req);
	/* Undoes a posted Binding: deletes the pod (rollback). */
	void (*undo)(void *req);
};

struct barrier_stats {
	size_t waiting;         /* requests held now */
	uint64_t members_bound; /* Bindings of released waves that succeeded */
	uint64_t waves_timed_out;
	uint64_t waves_rolled_back;
	uint64_t joins_refused; /* pods that were not the member they claimed */
};

struct barrier_reg;

/* ops is borrowed and must outlive the registry. */
struct barrier_reg *barrier_reg_new(struct event_base *base, double timeout_s,
                                    const struct barrier_ops *ops);
/* Answers every held request with an error and frees. Waves whose Bindings
 * are in flight finish on their own (without undoing anything). NULL is
 * fine. */
void barrier_reg_free(struct barrier_reg *g);
void barrier_stats(const struct barrier_reg *g, struct barrier_stats *out);

/* Holds req until m's wave can run, or answers it at once when m is not the
 * member it claims to be. pods (may be NULL) is the pod cache, used to count
 * members bound before (a wave cut short by a restart, or a repair wave);
 * it must stay valid while the registry lives. m is read during the call
 * only. */
void barrier_join(struct barrier_reg *g, const struct kube_cache *pods, const struct ext_member *m,
                  void *req);

#endif
