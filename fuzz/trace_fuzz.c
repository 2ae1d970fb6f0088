/* trace_fuzz.c - libFuzzer target for the simulator's trace and node-list
 * parsers: any byte string must give either a parsed trace or an error,
 * never a crash, a leak or an out-of-range row. */
#include <stddef.h>
#include <stdint.h>

#include "sim/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char msg[256];
	struct sim_trace t;
	if (sim_trace_parse((const char *)data, size, "fuzz", &t, msg, sizeof(msg)) == DRAKE_OK) {
		for (size_t i = 0; i < t.n; i++) {
			if (t.jobs[i].gpus < 1 || t.jobs[i].gpus > SIM_TRACE_MAX_GPUS ||
			    t.jobs[i].duration < 1 ||
			    (i > 0 && t.jobs[i].submit < t.jobs[i - 1].submit))
				__builtin_trap();
		}
		sim_trace_release(&t);
	}
	struct sim_nodes n;
	if (sim_nodes_parse((const char *)data, size, "fuzz", &n, msg, sizeof(msg)) == DRAKE_OK) {
		for (size_t i = 0; i < n.n; i++)
			if (n.rows[i].gpu < 0 || n.rows[i].gpu > SIM_NODES_MAX_GPUS)
				__builtin_trap();
		sim_nodes_release(&n);
	}
	return 0;
}
