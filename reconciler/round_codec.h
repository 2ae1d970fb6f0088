/*
 * round_codec.h - a decision round (gang/round.h) as one JSON line, for
 * --decision-log (decision_log.h).
 */
#ifndef DRAKE_RECONCILER_ROUND_CODEC_H
#define DRAKE_RECONCILER_ROUND_CODEC_H

#include "gang/round.h"

/* {"now":..,"in":{"resources","nodes","jobs","opts"},"out":{"actions","jobs",
 * "next","held"}} without a newline; NULL when out of memory. Caller frees. */
char *round_log_line(const struct drake_cluster *c, const struct drake_round_job *jobs, size_t n,
                     double now, const struct drake_round_opts *o, const struct drake_round *r);

#endif
