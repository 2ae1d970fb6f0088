/* quantity_fuzz.c - libFuzzer target for the parsers of what users write in
 * resource lists and annotations: Kubernetes quantities, KubeShare's share
 * annotations (gpu_request, gpu_limit, gpu_mem) and a node's gpu_info. The
 * input is split at NUL bytes into up to three strings. Every string must
 * give a value within its documented range or an error with a message. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gang/quantity.h"
#include "gang/vgpu.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	const char *part[3] = {buf, NULL, NULL};
	size_t at = strlen(buf);
	for (int i = 1; i < 3 && at < size; i++) {
		part[i] = buf + at + 1;
		at += strlen(part[i]) + 1;
	}
	char msg[256];
	int64_t v;
	for (int i = 0; i < 3; i++) {
		if (!part[i])
			continue;
		msg[0] = '\0';
		if (drake_quantity_milli(part[i], &v, msg, sizeof(msg)) == DRAKE_OK) {
			if (v < 0)
				__builtin_trap();
		} else if (!msg[0]) {
			__builtin_trap(); /* an error always says why */
		}
		if (drake_quantity_value(part[i], &v, msg, sizeof(msg)) == DRAKE_OK && v < 0)
			__builtin_trap();
		if (drake_gpu_info_parse(part[i], &v, msg, sizeof(msg)) == DRAKE_OK && v <= 0)
			__builtin_trap();
	}
	struct drake_share s;
	msg[0] = '\0';
	if (drake_share_parse(part[0], part[1], part[2], &s, msg, sizeof(msg)) == DRAKE_OK) {
		if (s.milli < 0 || s.milli > DRAKE_GPU_MILLI || s.mem_bytes < 0 ||
		    (s.milli > 0 && (s.limit_milli < s.milli || s.limit_milli > DRAKE_GPU_MILLI)))
			__builtin_trap();
	} else if (!msg[0]) {
		__builtin_trap();
	}
	free(buf);
	return 0;
}
