/*
 * decision_replay.h - `drake sim --replay FILE`: every round a
 * --decision-log holds is decided again by drake_round() (gang/round.h) from
 * its logged inputs and compared with its logged outputs.
 */
#ifndef DRAKE_SIM_DECISION_REPLAY_H
#define DRAKE_SIM_DECISION_REPLAY_H

#include <stddef.h>
#include <stdio.h>

struct decision_replay_counts {
	size_t read;      /* lines read, the partial last one included */
	size_t replayed;  /* rounds decided again and compared */
	size_t differing; /* replayed rounds whose outputs (or inputs, re-encoded) differ */
	size_t skipped;   /* lines not replayed: malformed, partial, or refused */
	size_t malformed; /* skipped lines that are malformed and not the partial last */
};

/*
 * Replays path, writing each differing round (line, time, the first
 * difference by its path in the line, logged against recomputed), each
 * skipped line with its reason, and the summary to out. Returns 0 when every
 * complete line was replayed without difference (rounds refused for their
 * shares and a partial last line are reported, not failures), 1 otherwise,
 * 2 when the file cannot be read.
 */
int decision_replay(const char *path, FILE *out, struct decision_replay_counts *counts);

#endif
