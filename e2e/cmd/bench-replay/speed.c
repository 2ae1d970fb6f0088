/* speed.c - drake's throughput model (gang/speed.c) compiled into the
 * driver by cgo, so the cluster's jobs run by the simulator's own
 * arithmetic, not a copy of it. */
#include "gang/speed.c"
