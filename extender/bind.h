/*
 * bind.h - what the bind verb keeps between requests (internal to
 * extender/): the gang barriers its held requests wait at.
 *
 * verb_bind (call.h) decodes a bind request, reads the pod's plan (from the
 * pod cache, else the API server) and either posts the pod's v1 Binding at
 * once or hands the request to its wave's barrier (barrier.h), whose one
 * client bind.c is. The server creates one bind service and reaches it
 * through call_binds().
 *
 * Ownership: the server owns the service. bind_service_free() answers
 * every request still held at a barrier; a request whose Binding is in
 * flight is answered when the API client is freed.
 */
#ifndef DRAKE_EXTENDER_BIND_H
#define DRAKE_EXTENDER_BIND_H

struct event_base;
struct metrics;
struct bind_service;

/* gang_timeout_s: how long a wave's requests wait for the whole wave. */
struct bind_service *bind_service_new(struct event_base *base, double gang_timeout_s);
/* NULL is fine. */
void bind_service_free(struct bind_service *s);
/* Fills the gang_* fields of m from the barriers. */
void bind_service_metrics(const struct bind_service *s, struct metrics *m);

#endif
