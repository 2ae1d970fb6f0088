/* err.c - common/err.c compiled into the driver by cgo (pollux.go). */
#include "common/err.c"
