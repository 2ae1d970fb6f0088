/*
 * decision_replay.c - `drake sim --replay`: decode each --decision-log line
 * (reconciler/round_codec.h), decide the round again with drake_round(),
 * encode the result the way the controller did, and compare the two lines
 * field by field (round_log_diff). The inputs are compared too: a difference there means the
 * decoder lost something the encoder wrote.
 *
 * A round in which a job asks a KubeShare share is refused: the log does not
 * hold the snapshot's open vGPUs, so its placement of shares cannot be
 * decided again.
 */
#include "sim/decision_replay.h"

#include <stdlib.h>
#include <string.h>

#include "gang/round.h"
#include "reconciler/round_codec.h"

static bool has_shares(const struct round_log_entry *e)
{
	for (size_t i = 0; i < e->n; i++) {
		const struct drake_gang_req *q = &e->jobs[i].req;
		if (q->ps_share.milli || q->worker_share.milli || q->chief_share.milli)
			return true;
	}
	return false;
}

static const char *share_job(const struct round_log_entry *e)
{
	for (size_t i = 0; i < e->n; i++) {
		const struct drake_gang_req *q = &e->jobs[i].req;
		if (q->ps_share.milli || q->worker_share.milli || q->chief_share.milli)
			return e->jobs[i].name;
	}
	return "?";
}

/* Replays one complete line: 0 same, 1 differs, -1 not replayed (msg). */
static int replay_line(const char *line, size_t lineno, FILE *out, char *msg, size_t len)
{
	struct round_log_entry e;
	if (round_log_decode(line, &e, msg, len))
		return -1;
	if (has_shares(&e)) {
		snprintf(msg, len,
		         "refused: job %s asks a KubeShare share and the log does not hold the "
		         "open vGPUs",
		         share_job(&e));
		round_log_entry_release(&e);
		return -1;
	}
	struct drake_round r;
	if (drake_round(&e.c, e.jobs, e.n, e.now, &e.opts, &r)) {
		snprintf(msg, len, "out of memory");
		round_log_entry_release(&e);
		return -1;
	}
	char *again = round_log_line(&e.c, e.jobs, e.n, e.now, &e.opts, &r);
	struct round_log_difference d;
	int rc = again ? round_log_diff(&e, again, &d) : -1;
	if (rc < 0)
		snprintf(msg, len, "out of memory");
	if (rc == 1) {
		fprintf(out, "line %zu (now %.3f): differs at %s", lineno, e.now, d.path);
		/* the action as logged, else as recomputed */
		const struct drake_round_action *a = NULL;
		if (d.action >= 0 && (size_t)d.action < e.out.n)
			a = &e.out.act[d.action];
		else if (d.action >= 0 && (size_t)d.action < r.n)
			a = &r.act[d.action];
		if (a)
			fprintf(out, " (%s %s of %s)", drake_round_kind_name(a->kind),
			        drake_round_reason_name(a->reason), e.jobs[a->job].name);
		fprintf(out, ": logged %s, recomputed %s\n", d.logged, d.again);
	}
	free(again);
	drake_round_release(&r);
	round_log_entry_release(&e);
	return rc;
}

int decision_replay(const char *path, FILE *out, struct decision_replay_counts *counts)
{
	memset(counts, 0, sizeof(*counts));
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(out, "drake sim: --replay %s: cannot open: %m\n", path);
		return 2;
	}
	char *line = NULL, msg[512];
	size_t cap = 0;
	ssize_t got;
	while ((got = getline(&line, &cap, f)) > 0) {
		counts->read++;
		bool complete = line[got - 1] == '\n';
		if (complete)
			line[got - 1] = 0;
		int rc = replay_line(line, counts->read, out, msg, sizeof(msg));
		if (rc >= 0) {
			counts->replayed++;
			counts->differing += (size_t)rc;
			continue;
		}
		counts->skipped++;
		if (!complete) {
			fprintf(out,
			        "line %zu: skipped, partial last line (cut by rotation or a "
			        "crash): %s\n",
			        counts->read, msg);
			continue;
		}
		if (strncmp(msg, "refused:", 8) != 0)
			counts->malformed++;
		fprintf(out, "line %zu: skipped, %s\n", counts->read, msg);
	}
	bool ioerr = ferror(f);
	free(line);
	fclose(f);
	if (ioerr) {
		fprintf(out, "drake sim: --replay %s: read error\n", path);
		return 2;
	}
	fprintf(out, "replay %s: %zu rounds read, %zu replayed, %zu differing, %zu skipped\n", path,
	        counts->read, counts->replayed, counts->differing, counts->skipped);
	return counts->differing || counts->malformed ? 1 : 0;
}
