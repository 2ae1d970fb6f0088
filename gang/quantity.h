/*
 * quantity.h - exact parsing of Kubernetes resource quantities ("500m", "8Gi",
 * "1.5", "2e3") into integers, as the API server's resource.Quantity does.
 *
 * Pure: no allocation, no I/O. The caller owns every buffer passed in.
 * Quantities are non-negative here (a negative request is an error), and a
 * value that does not fit in int64 after scaling is DRAKE_ELIMIT, never a
 * silent wrap.
 */
#ifndef DRAKE_GANG_QUANTITY_H
#define DRAKE_GANG_QUANTITY_H

#include <stdint.h>

#include "common/err.h"

/* The longest quantity string accepted; Kubernetes itself caps at 64ish. */
#define DRAKE_QUANTITY_MAX_LEN 64

/*
 * Parses s and stores ceil(value * 1000) in *milli (MilliValue: "500m" ->
 * 500, "2" -> 2000, "1Ki" -> 1024000). Fills msg on error.
 */
drake_err drake_quantity_milli(const char *s, int64_t *milli, char *msg,
                               size_t len) DRAKE_MUST_CHECK;

/* Parses s and stores ceil(value) in *value (Value: "8Gi" -> 8589934592,
 * "100m" -> 1, "1.5" -> 2). Fills msg on error. */
drake_err drake_quantity_value(const char *s, int64_t *value, char *msg,
                               size_t len) DRAKE_MUST_CHECK;

#endif
