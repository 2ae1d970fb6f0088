/*
 * err.h - the one error enum every fallible drake function returns.
 *
 * Functions that can fail return drake_err and, where a person needs to know
 * why, fill a caller-owned message buffer. drake_strerror() names each code.
 */
#ifndef DRAKE_COMMON_ERR_H
#define DRAKE_COMMON_ERR_H

#include <stddef.h>

#define DRAKE_MUST_CHECK   __attribute__((warn_unused_result))
#define DRAKE_PRINTF(a, b) __attribute__((format(printf, a, b)))

typedef enum drake_err {
	DRAKE_OK = 0,
	DRAKE_ENOMEM,    /* allocation failed */
	DRAKE_EINVAL,    /* malformed or ill-typed input */
	DRAKE_ELIMIT,    /* input exceeds a named limit */
	DRAKE_ENOTFOUND, /* the thing asked for does not exist */
	DRAKE_EIO,       /* a file or socket operation failed */
	DRAKE_ETLS,      /* OpenSSL refused a key, certificate or handshake */
	DRAKE_EHTTP,     /* a peer answered with an HTTP error */
	DRAKE_ECONFLICT, /* the API server reported a conflict (409) */
	DRAKE_ETIMEOUT,  /* a deadline passed */
	DRAKE_ESTATE,    /* the operation is not valid in the current state */
} drake_err;

const char *drake_strerror(drake_err err);

/* Formats into buf (always NUL-terminated when len > 0) and returns err, so
 * error paths read: return drake_errorf(DRAKE_EINVAL, msg, len, "...", ...). */
drake_err drake_errorf(drake_err err, char *buf, size_t len, const char *fmt, ...)
    DRAKE_PRINTF(4, 5);

#endif
