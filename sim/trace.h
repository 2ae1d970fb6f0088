/*
 * trace.h - parsers for the trace files `drake sim` replays
 * (traces/ in the repository, described in traces/README.md):
 *
 *   ITP      job_id,submission_time,duration,num_gpu          (Microsoft ITP)
 *   gang     job_id,submit_order,replicas,gpus_per_pod,duration_s (knavigator)
 *   pollux   name,time,application,num_replicas,batch_size   (Pollux artifact)
 *   nodes    sn,cpu_milli,memory_mib,gpu,model                (Alibaba 2023)
 *
 * The header line picks the format; a fixed format's header may end in
 * ",kind", each row then naming its job's kind last (empty: none;
 * sim_kind_resolve, sim/kind_mix.h, looks it up and names the row of an
 * unknown one). Every row is checked: field count,
 * integer syntax, ranges (named limits below), times in order, no zero-GPU
 * jobs. Errors name file:line and the field. Parsing works on a buffer so
 * the fuzzer can drive it; sim_trace_load/sim_nodes_load read a file (at
 * most SIM_TRACE_MAX_BYTES) and call it.
 *
 * A user's own CSV is read by naming its columns (struct sim_trace_format,
 * trace_columns.c): submit time, duration, GPUs, optionally an id; other
 * columns are ignored. Unlike the fixed traces above, which stay strict,
 * its bad rows are skipped and counted per reason (struct sim_trace_skips);
 * the kept rows are stable-sorted by submit time and shifted so the first
 * submits at 0. Such a trace's jobs are shaped like ITP jobs.
 *
 * A Pollux workload names, per job, an application whose measurements
 * (sim/pollux_apps.h) say how fast it runs and how long it needs; its rows
 * are checked here, the application and batch size against those
 * measurements by sim_pollux_bind (sim/pollux_model.h).
 *
 * Ownership: the parse functions fill a caller-provided struct whose arrays
 * they allocate; sim_trace_release / sim_nodes_release free them.
 */
#ifndef DRAKE_SIM_TRACE_H
#define DRAKE_SIM_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/err.h"

struct job_kind;

#define SIM_TRACE_MAX_BYTES     (64u << 20)
#define SIM_TRACE_MAX_ROWS      1000000
#define SIM_TRACE_MAX_LINE      1024
#define SIM_TRACE_MAX_ID        63
#define SIM_TRACE_MAX_GPUS      4096                  /* per job */
#define SIM_TRACE_MAX_REPLICAS  4096                  /* per job */
#define SIM_TRACE_MAX_SECONDS   100000000             /* about three years: durations, times */
#define SIM_TRACE_MAX_COLUMNS   64                    /* fields per line of a named-column trace */
#define SIM_TRACE_MAX_TIMESTAMP INT64_C(100000000000) /* named-column submit, before the shift */
#define SIM_TRACE_SKIP_EXAMPLES 5                     /* skipped rows quoted in a parse result */
#define SIM_TRACE_MAX_BATCH     (1 << 24)             /* Pollux: a job's total batch size */
#define SIM_TRACE_MAX_APP       31                    /* Pollux: an application's name */
#define SIM_TRACE_MAX_KIND      31                    /* a row's job kind, as written */
#define SIM_NODES_MAX_GPUS      64                    /* per node */
#define SIM_NODES_MAX_CPU_MILLI 10000000
#define SIM_NODES_MAX_MEM_MIB   (64 * 1024 * 1024)

/* The job model a trace's rows get (sim_model_shape). */
enum sim_trace_kind {
	SIM_TRACE_ITP, /* a job of G GPUs: ITP and named-column traces */
	SIM_TRACE_GANG,
	SIM_TRACE_POLLUX, /* a Pollux job: an application at a tuned size (sim/pollux_model.h) */
};

/* How a trace's header is read. */
enum sim_trace_layout {
	SIM_LAYOUT_AUTO, /* the header picks ITP, gang or Pollux */
	SIM_LAYOUT_ITP,
	SIM_LAYOUT_GANG,
	SIM_LAYOUT_POLLUX,
	SIM_LAYOUT_COLUMNS, /* a user's CSV, columns named in the format */
};

/* A layout and, for SIM_LAYOUT_COLUMNS, the header names of the columns
 * (id "": jobs are named line-N after their line) and the seconds per unit
 * of the two times (1, 60 or 3600). */
struct sim_trace_format {
	enum sim_trace_layout layout;
	char submit[SIM_TRACE_MAX_ID + 1];
	char duration[SIM_TRACE_MAX_ID + 1];
	char gpus[SIM_TRACE_MAX_ID + 1];
	char id[SIM_TRACE_MAX_ID + 1];
	int64_t submit_unit, duration_unit;
};

/* Why a row of a named-column trace was skipped. */
enum sim_trace_skip {
	SIM_SKIP_FIELDS,   /* not as many fields as the header */
	SIM_SKIP_QUOTE,    /* a stray or unterminated double quote */
	SIM_SKIP_LINE,     /* longer than SIM_TRACE_MAX_LINE or has a NUL */
	SIM_SKIP_SYNTAX,   /* a number that is not a decimal integer */
	SIM_SKIP_NEGATIVE, /* a negative number */
	SIM_SKIP_ZERO,     /* zero GPUs or a zero duration */
	SIM_SKIP_RANGE,    /* above a SIM_TRACE_MAX_* limit */
	SIM_SKIP_ID,       /* empty, too long, or a space, quote or control character */
	SIM_SKIP_NREASONS,
};

struct sim_trace_skips {
	size_t total;
	size_t count[SIM_SKIP_NREASONS];
	size_t n_examples; /* the first few skipped rows, "file:line: what" */
	char example[SIM_TRACE_SKIP_EXAMPLES][200];
};

struct sim_trace_job {
	char id[SIM_TRACE_MAX_ID + 1];
	int64_t submit;   /* seconds from trace start (gang: 0 for all) */
	int64_t order;    /* submission order (row index for ITP) */
	int64_t duration; /* seconds at the original size */
	int gpus;         /* total GPUs */
	int replicas;     /* gang: pods; Pollux: the tuned num_replicas; ITP: 0 */
	int gpus_per_pod; /* gang: per pod; ITP: 0 */
	size_t line;      /* in the file, for messages about the row */
	/* Pollux: the row's application and total batch size; sim_pollux_bind
	 * fills the rest from the application's measurements (duration: the
	 * run time at the tuned size, packed) */
	char app[SIM_TRACE_MAX_APP + 1];
	int batch_size;
	int app_index;     /* into the bound struct sim_papps */
	int max_replicas;  /* elastic policies' max-instances */
	double iterations; /* its curve's iterations at batch_size */
	double samples;    /* the artifact's accounting of them (sim_papp_samples_work) */
	/* its job kind: a fixed layout's optional last column "kind" as
	 * written ("" none), and the kind drake knows by that name
	 * (sim_kind_resolve) or the one sim_kind_mix_apply gave it (NULL:
	 * none) */
	char kind_name[SIM_TRACE_MAX_KIND + 1];
	const struct job_kind *kind;
};

struct sim_trace {
	enum sim_trace_kind kind;
	enum sim_trace_layout layout; /* how it was read: never AUTO */
	struct sim_trace_job *jobs;
	size_t n;
	struct sim_trace_skips skipped; /* COLUMNS only: the fixed layouts fail instead */
};

struct sim_node_row {
	char name[SIM_TRACE_MAX_ID + 1];
	int64_t cpu_milli;
	int64_t memory_mib;
	int gpu;
	char model[32];
	size_t line; /* in the file, for messages about the row */
};

struct sim_nodes {
	struct sim_node_row *rows;
	size_t n;
};

/* Auto layout: the header must be the ITP, gang or Pollux one. */
drake_err sim_trace_parse(const char *buf, size_t len, const char *file, struct sim_trace *out,
                          char *msg, size_t mlen) DRAKE_MUST_CHECK;
drake_err sim_trace_load(const char *path, struct sim_trace *out, char *msg,
                         size_t mlen) DRAKE_MUST_CHECK;
/* The same in a given format (NULL: auto). A named-column trace with no row
 * left after skipping is an error. */
drake_err sim_trace_parse_as(const char *buf, size_t len, const char *file,
                             const struct sim_trace_format *f, struct sim_trace *out, char *msg,
                             size_t mlen) DRAKE_MUST_CHECK;
drake_err sim_trace_load_as(const char *path, const struct sim_trace_format *f,
                            struct sim_trace *out, char *msg, size_t mlen) DRAKE_MUST_CHECK;
void sim_trace_release(struct sim_trace *t);
/* Drops the trace's first `first` jobs (submission order), so that a
 * replay starts at job `first` on an empty cluster: `drake sim
 * --first-job`. The jobs keep their submit times and order. DRAKE_EINVAL,
 * naming the trace's length, when first is not below it. */
drake_err sim_trace_skip(struct sim_trace *t, size_t first, char *msg,
                         size_t mlen) DRAKE_MUST_CHECK;

/* Fills f from a layout name (auto, itp, gang, pollux, columns; NULL or "" is auto)
 * and a column list "submit=COL,duration=COL,gpus=COL[,id=COL]" where the
 * two times may end in :s, :m or :h (seconds, the default, minutes, hours).
 * A column list makes auto mean columns; it goes with no other layout. */
drake_err sim_trace_format_parse(const char *layout, const char *columns,
                                 struct sim_trace_format *f, char *msg,
                                 size_t mlen) DRAKE_MUST_CHECK;

const char *sim_trace_skip_name(enum sim_trace_skip why);

/* Prints how many rows were skipped, per reason, and the examples; nothing
 * when none was. */
void sim_trace_skips_print(FILE *out, const char *file, const struct sim_trace *t);

drake_err sim_nodes_parse(const char *buf, size_t len, const char *file, struct sim_nodes *out,
                          char *msg, size_t mlen) DRAKE_MUST_CHECK;
drake_err sim_nodes_load(const char *path, struct sim_nodes *out, char *msg,
                         size_t mlen) DRAKE_MUST_CHECK;
void sim_nodes_release(struct sim_nodes *n);

/* Reads a whole file of at most max bytes into a NUL-terminated buffer the
 * caller frees. */
drake_err sim_read_file(const char *path, size_t max, char **buf, size_t *len, char *msg,
                        size_t mlen) DRAKE_MUST_CHECK;

#endif
