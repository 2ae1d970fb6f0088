/*
 * kubeconfig_fuzz.c - libFuzzer target for the kubeconfig reader
 * (kube_config_parse): any bytes must give DRAKE_OK with a config that has a
 * server, or an error with a message, and never leak or crash.
 * Seeds: fuzz/corpus/kubeconfig/.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/kubeconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kube_config cfg;
	char msg[256];
	msg[0] = '\0';
	drake_err e = kube_config_parse((const char *)data, size, "/base", &cfg, msg, sizeof(msg));
	if (e == DRAKE_OK) {
		if (!cfg.server)
			abort();
	} else {
		if (!msg[0] || cfg.server)
			abort();
	}
	kube_config_release(&cfg);
	return 0;
}
