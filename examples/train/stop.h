/*
 * stop.h - drake-train ends at once on SIGTERM and SIGINT.
 *
 * In its container drake-train is PID 1, and the kernel ignores a signal
 * whose action is the default for a namespace's init. Without a handler
 * a replica drake removed (a shrink, a migration) went on training until
 * the kubelet's SIGKILL: 2 s at least with terminationGracePeriodSeconds 0,
 * 30 s by default, while its replacement was already starting elsewhere.
 * The handler writes one line and exits 128 + the signal (143, 130), as a
 * process killed by it would report; the PS notices the closed connection.
 */
#ifndef DRAKE_TRAIN_STOP_H
#define DRAKE_TRAIN_STOP_H

/* Installs the handlers; call once, before training. */
void stop_on_term(void);

#endif
