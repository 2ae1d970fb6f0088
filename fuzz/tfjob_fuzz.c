/*
 * tfjob_fuzz.c - libFuzzer target for the TFJob decoder and everything built
 * from a decoded job: any JSON object a user can submit must decode or be
 * refused with a message, and a decoded job must yield a pod, a service and
 * a TF_CONFIG for each of its first replicas. Seeds: fuzz/corpus/tfjob/.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <jansson.h>

#include "kind/pod_codec.h"
#include "tfjob/tfconfig.h"
#include "kind/job.h"
#include "tfjob/tfjob.h"

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
	if (tfjob_decode(o, &job, &managed, msg, sizeof(msg)) != DRAKE_OK) {
		if (!msg[0])
			abort();
	} else if (managed) {
		for (int t = 0; t < JOB_NTYPES; t++) {
			int n = job_replica_slots(&job, (enum job_rtype)t);
			for (int i = 0; i < n && i < 3; i++) {
				struct job_pod_opts po = {
				    NULL,
				    i ? NULL : "drake.dev/gang",
				    i ? NULL : "drake-scheduler",
				    i ? NULL : "https://drake:8443/v1/progress",
				    i ? NULL
				      : "-----BEGIN CERTIFICATE-----\nx\n-----END "
				        "CERTIFICATE-----\n",
				    i ? NULL : "drake"};
				char *pod =
				    job_pod_json(&job, (enum job_rtype)t, i, &po, msg, sizeof(msg));
				char *svc = job_service_json(&job, (enum job_rtype)t, i);
				char *cfg =
				    tf_config_json(&job, (enum job_rtype)t, i, "example.org");
				if (!pod || !svc || !cfg)
					abort(); /* a valid job always builds */
				free(pod);
				free(svc);
				free(cfg);
			}
		}
	}
	json_decref(o);
	return 0;
}
