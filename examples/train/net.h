/*
 * net.h - TCP for drake-train: the PS's listening socket, a worker's
 * connection with deadlines, and whole-frame reads and writes on it.
 *
 * Ownership: the descriptors returned are the caller's to close.
 */
#ifndef DRAKE_TRAIN_NET_H
#define DRAKE_TRAIN_NET_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "examples/train/proto.h"

/* Seconds on a monotonic clock. */
double net_now(void);

/* Listens on every address (IPv6 and IPv4) at port; -1 with the reason. */
int net_listen(int port, char *msg, size_t len);

/* Resolves host (again on every call: a Service's name may not resolve yet
 * while pods start) and connects within timeout seconds; -1 with the
 * reason. The socket is blocking, with send and receive timeouts of io_timeout
 * seconds. */
int net_connect(const char *host, int port, double timeout, double io_timeout, char *msg,
                size_t len);

/* Sends m as one frame; buf holds at least proto_frame_len(m) bytes. */
drake_err net_send(int fd, const struct proto_msg *m, uint8_t *buf, size_t cap, char *msg,
                   size_t len) DRAKE_MUST_CHECK;

/* Receives one frame into m (doubles into params, which holds pcap). buf
 * holds cap bytes, the largest payload accepted. */
drake_err net_recv(int fd, struct proto_msg *m, double *params, size_t pcap, uint8_t *buf,
                   size_t cap, char *msg, size_t len) DRAKE_MUST_CHECK;

#endif
