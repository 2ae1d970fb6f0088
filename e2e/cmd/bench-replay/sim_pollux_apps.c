/* pollux_apps.c - sim/pollux_apps.c compiled into the driver by cgo (pollux.go). */
#include "sim/pollux_apps.c"
