/*
 * pytorchjob_fuzz.c - libFuzzer target for the PyTorchJob decoder and what
 * is built from a decoded job: any JSON object a user can submit must
 * decode or be refused with a message, and a decoded job must yield a pod
 * (its environment included) and a Service for each of its first
 * replicas. Seeds: fuzz/corpus/pytorchjob/.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <jansson.h>

#include "kind/pod_codec.h"
#include "pytorchjob/pytorchjob.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 65536)
		return 0;
	json_t *o = json_loadb((const char *)data, size, 0, NULL);
	if (!o)
		return 0;
	struct job job;
	bool managed;
	char msg[256];
	msg[0] = '\0';
	if (pytorchjob_decode(o, &job, &managed, msg, sizeof(msg)) != DRAKE_OK) {
		if (!msg[0])
			abort();
	} else if (managed) {
		for (int t = 0; t < JOB_NTYPES; t++) {
			int n = job_replica_slots(&job, (enum job_rtype)t);
			for (int i = 0; i < n && i < 3; i++) {
				struct job_pod_opts po = {
				    "example.org", i ? NULL : "drake.dev/gang", NULL, NULL, NULL,
				    NULL};
				char *pod =
				    job_pod_json(&job, (enum job_rtype)t, i, &po, msg, sizeof(msg));
				char *svc = job_service_json(&job, (enum job_rtype)t, i);
				if (!pod || !svc)
					abort(); /* a valid job always builds */
				free(pod);
				free(svc);
			}
		}
	}
	json_decref(o);
	return 0;
}
