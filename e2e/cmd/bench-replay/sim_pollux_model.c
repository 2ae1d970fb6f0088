/* pollux_model.c - sim/pollux_model.c compiled into the driver by cgo (pollux.go). */
#include "sim/pollux_model.c"
