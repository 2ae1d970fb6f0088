/* extender_bind_fuzz.c - ExtenderBindingArgs, the Binding object built from
 * them, and the API-server answers the bind verb reads. */
#include <stdint.h>
#include <stdlib.h>

#include "extender/codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ext_limits lim;
	ext_limits_default(&lim);
	struct ext_bind_args b;
	char msg[256];
	if (ext_bind_decode((const char *)data, size, &lim, &b, msg, sizeof(msg)) == DRAKE_OK)
		free(ext_binding_object_encode(&b));
	ext_bind_release(&b);
	free(ext_status_message((const char *)data, size));
	free(ext_pod_node_name((const char *)data, size));
	return 0;
}
