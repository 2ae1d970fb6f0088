/* trace_columns.c - sim/trace_columns.c compiled into the driver by cgo (pollux.go). */
#include "sim/trace_columns.c"
