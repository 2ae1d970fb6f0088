/* extender_args_fuzz.c - ExtenderArgs (filter/prioritize bodies): decode,
 * then encode every kind of answer from what was decoded. */
#include <stdint.h>
#include <stdlib.h>

#include "extender/codec.h"
#include "extender/codec_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ext_limits lim;
	ext_limits_default(&lim);
	lim.max_nodes = 1000;
	struct ext_args a, tree;
	char msg[256];
	/* The fast path may take a body only if the tree decoder takes it too,
	 * with the same result. */
	if (codec_args_decode_fast((const char *)data, size, &lim, &a)) {
		if (codec_args_decode_tree((const char *)data, size, &lim, &tree, msg,
		                           sizeof(msg)) != DRAKE_OK ||
		    !codec_args_equal(&a, &tree))
			abort();
		ext_args_release(&tree);
	}
	ext_args_release(&a);
	if (ext_args_decode((const char *)data, size, &lim, &a, msg, sizeof(msg)) == DRAKE_OK) {
		enum ext_verdict *v = calloc(a.n_nodes + 1, sizeof(*v));
		int64_t *scores = calloc(a.n_nodes + 1, sizeof(*scores));
		for (size_t i = 0; v && scores && i < a.n_nodes; i++) {
			v[i] = (enum ext_verdict)(i % 3);
			scores[i] = (int64_t)i - 3;
		}
		struct ext_filter_result res = {.verdicts = v};
		free(ext_filter_encode(&a, &res));
		free(ext_prioritize_encode(&a, scores));
		free(v);
		free(scores);
		for (size_t i = 0; i < a.pod.n_labels; i++)
			(void)ext_pod_label(&a.pod, a.pod.labels[i].key);
	}
	ext_args_release(&a);
	return 0;
}
