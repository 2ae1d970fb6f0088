/* trace.c - sim/trace.c compiled into the driver by cgo (pollux.go). */
#include "sim/trace.c"
