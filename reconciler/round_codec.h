/*
 * round_codec.h - a decision round (gang/round.h) as one JSON line, for
 * --decision-log (decision_log.h), and back (round_codec_decode.c, for
 * `drake sim --replay`).
 */
#ifndef DRAKE_RECONCILER_ROUND_CODEC_H
#define DRAKE_RECONCILER_ROUND_CODEC_H

#include "gang/round.h"

/* {"now":..,"in":{"resources","nodes","jobs","opts"},"out":{"actions","jobs",
 * "next","held"}} without a newline; NULL when out of memory. Caller frees. */
char *round_log_line(const struct drake_cluster *c, const struct drake_round_job *jobs, size_t n,
                     double now, const struct drake_round_opts *o, const struct drake_round *r);

/* One decoded line: the round's inputs, and its outputs as logged. The
 * strings point into root; everything is owned here and freed by
 * round_log_entry_release(). */
struct round_log_entry {
	double now;
	struct drake_cluster c;
	struct drake_round_job *jobs;
	size_t n;
	struct drake_round_opts opts;
	struct drake_round out; /* as logged: the fields the line holds */
	void *root;             /* json_t holding the strings */
	void **blocks;          /* per-job arrays (members, masks, record) */
	size_t n_blocks;
};

/* Decodes one line (no newline needed). On error, msg names the field
 * ("in.jobs[2].workers[1].state: ...") and e is left released. DRAKE_EINVAL
 * for malformed input, DRAKE_ENOMEM. */
drake_err round_log_decode(const char *line, struct round_log_entry *e, char *msg,
                           size_t len) DRAKE_MUST_CHECK;

void round_log_entry_release(struct round_log_entry *e);

/* Where a line first differs from the one e was decoded from. */
struct round_log_difference {
	char path[256];   /* e.g. "out.actions[1].pods[0].node" */
	char logged[256]; /* the value there as JSON, "(absent)" */
	char again[256];
	long action; /* the index under out.actions, -1 elsewhere */
};

/* 0: the same; 1: d says where they differ; -1: line is not JSON or out of
 * memory. */
int round_log_diff(const struct round_log_entry *e, const char *line,
                   struct round_log_difference *d);

#endif
