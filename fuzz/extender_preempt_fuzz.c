/* extender_preempt_fuzz.c - ExtenderPreemptionArgs in both node modes, and
 * the meta-victim answer with every other node dropped. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "extender/codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ext_limits lim;
	ext_limits_default(&lim);
	lim.max_nodes = 1000;
	struct ext_preempt_args p;
	char msg[256];
	if (ext_preempt_decode((const char *)data, size, &lim, &p, msg, sizeof(msg)) == DRAKE_OK) {
		bool *keep = calloc(p.n_nodes + 1, sizeof(*keep));
		for (size_t i = 0; keep && i < p.n_nodes; i++)
			keep[i] = i % 2 == 0;
		free(ext_preempt_encode(&p, NULL));
		free(ext_preempt_encode(&p, keep));
		free(keep);
	}
	ext_preempt_release(&p);
	return 0;
}
