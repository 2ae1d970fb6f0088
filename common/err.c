/* err.c - names for drake_err and the helper that fills message buffers. */
#include "common/err.h"

#include <stdarg.h>
#include <stdio.h>

const char *drake_strerror(drake_err err)
{
	switch (err) {
	case DRAKE_OK: return "ok";
	case DRAKE_ENOMEM: return "out of memory";
	case DRAKE_EINVAL: return "invalid input";
	case DRAKE_ELIMIT: return "limit exceeded";
	case DRAKE_ENOTFOUND: return "not found";
	case DRAKE_EIO: return "i/o error";
	case DRAKE_ETLS: return "tls error";
	case DRAKE_EHTTP: return "http error";
	case DRAKE_ECONFLICT: return "conflict";
	case DRAKE_ETIMEOUT: return "timed out";
	case DRAKE_ESTATE: return "invalid state";
	}
	return "unknown error";
}

drake_err drake_errorf(drake_err err, char *buf, size_t len, const char *fmt, ...)
{
	if (buf && len > 0) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(buf, len, fmt, ap);
		va_end(ap);
	}
	return err;
}
