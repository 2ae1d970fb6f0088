/*
 * flags.h - table-driven command-line flags with environment fallbacks.
 *
 * Each flag is "--name value" or "--name=value" (booleans also "--name" and
 * "--no-name"). Precedence: command line, then the environment variable,
 * then the default. String values point into argv, the environment or the
 * table's defaults: nothing is allocated, nothing needs freeing.
 */
#ifndef DRAKE_COMMON_FLAGS_H
#define DRAKE_COMMON_FLAGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "common/err.h"

enum flag_type {
	FLAG_STRING,   /* const char ** */
	FLAG_INT,      /* int * */
	FLAG_DOUBLE,   /* double * */
	FLAG_SIZE,     /* size_t *: bytes, with optional Ki/Mi/Gi (or K/M/G) suffix */
	FLAG_DURATION, /* double * seconds: "250ms", "30s", "2m", "1h" or plain seconds */
	FLAG_BOOL,     /* bool * */
	FLAG_COUNT,    /* size_t *: a plain non-negative integer */
};

struct flag {
	const char *name; /* without the leading "--" */
	const char *env;  /* environment fallback, or NULL */
	enum flag_type type;
	void *dest;
	const char *def; /* default, as text; NULL for none */
	const char *help;
};

/* Result of flags_parse beyond errors. */
enum flags_outcome {
	FLAGS_RUN,  /* parsed; go on */
	FLAGS_HELP, /* --help or -h was given */
};

/* Parses argv[1..]; positional arguments are not accepted. */
drake_err flags_parse(const struct flag *flags, size_t n, int argc, char **argv,
                      enum flags_outcome *outcome, char *msg, size_t msglen) DRAKE_MUST_CHECK;

/* Prints every flag with its environment variable and default. */
void flags_usage(FILE *out, const struct flag *flags, size_t n);

/* The value parsers, exported for tests and for other option sources. */
drake_err flags_parse_size(const char *s, size_t *out) DRAKE_MUST_CHECK;
drake_err flags_parse_duration(const char *s, double *out) DRAKE_MUST_CHECK;

#endif
