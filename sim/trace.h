/*
 * trace.h - strict parsers for the trace files `drake sim` replays
 * (../shared/traces, PROVENANCE.txt there):
 *
 *   ITP      job_id,submission_time,duration,num_gpu          (Microsoft ITP)
 *   gang     job_id,submit_order,replicas,gpus_per_pod,duration_s (knavigator)
 *   nodes    sn,cpu_milli,memory_mib,gpu,model                (Alibaba 2023)
 *
 * The header line picks the format. Every row is checked: field count,
 * integer syntax, ranges (named limits below), times in order, no zero-GPU
 * jobs. Errors name file:line and the field. Parsing works on a buffer so
 * the fuzzer can drive it; sim_trace_load/sim_nodes_load read a file (at
 * most SIM_TRACE_MAX_BYTES) and call it.
 *
 * Ownership: the parse functions fill a caller-provided struct whose arrays
 * they allocate; sim_trace_release / sim_nodes_release free them.
 */
#ifndef DRAKE_SIM_TRACE_H
#define DRAKE_SIM_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

#define SIM_TRACE_MAX_BYTES     (64u << 20)
#define SIM_TRACE_MAX_ROWS      1000000
#define SIM_TRACE_MAX_LINE      1024
#define SIM_TRACE_MAX_ID        63
#define SIM_TRACE_MAX_GPUS      4096      /* per job */
#define SIM_TRACE_MAX_REPLICAS  4096      /* per job */
#define SIM_TRACE_MAX_SECONDS   100000000 /* about three years: durations, times */
#define SIM_NODES_MAX_GPUS      64        /* per node */
#define SIM_NODES_MAX_CPU_MILLI 10000000
#define SIM_NODES_MAX_MEM_MIB   (64 * 1024 * 1024)

enum sim_trace_kind {
	SIM_TRACE_ITP,
	SIM_TRACE_GANG,
};

struct sim_trace_job {
	char id[SIM_TRACE_MAX_ID + 1];
	int64_t submit;   /* seconds from trace start (gang: 0 for all) */
	int64_t order;    /* submission order (row index for ITP) */
	int64_t duration; /* seconds at the original size */
	int gpus;         /* total GPUs */
	int replicas;     /* gang: pods; ITP: 0 (the job model decides) */
	int gpus_per_pod; /* gang: per pod; ITP: 0 */
};

struct sim_trace {
	enum sim_trace_kind kind;
	struct sim_trace_job *jobs;
	size_t n;
};

struct sim_node_row {
	char name[SIM_TRACE_MAX_ID + 1];
	int64_t cpu_milli;
	int64_t memory_mib;
	int gpu;
	char model[32];
};

struct sim_nodes {
	struct sim_node_row *rows;
	size_t n;
};

drake_err sim_trace_parse(const char *buf, size_t len, const char *file, struct sim_trace *out,
                          char *msg, size_t mlen) DRAKE_MUST_CHECK;
drake_err sim_trace_load(const char *path, struct sim_trace *out, char *msg,
                         size_t mlen) DRAKE_MUST_CHECK;
void sim_trace_release(struct sim_trace *t);

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
