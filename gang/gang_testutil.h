/*
 * gang_testutil.h - helpers shared by gang/'s unit tests (header only, not
 * part of the library): build a snapshot from a one-line description.
 */
#ifndef DRAKE_GANG_TESTUTIL_H
#define DRAKE_GANG_TESTUTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gang/cluster.h"
#include "gang/planner.h"

#define GIB (1024LL * 1024 * 1024)

static inline struct drake_res res_of(int64_t cpu, int64_t mem_gib, int64_t gpu)
{
	struct drake_res r = {0};
	r.cpu_milli = cpu * 1000;
	r.mem_bytes = mem_gib * GIB;
	r.gpu = gpu;
	return r;
}

/*
 * "a:8:0 b:8:3 c:4:0!" : node name, GPUs, GPUs already used; every node has
 * 64 CPUs and 512Gi; a trailing '!' marks it unschedulable. Returns 0 on
 * success.
 */
static inline int cluster_from(struct drake_cluster *c, const char *spec)
{
	drake_cluster_init(c);
	char buf[1024];
	snprintf(buf, sizeof(buf), "%s", spec);
	char *save = NULL;
	for (char *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		char name[64];
		int gpu = 0, used = 0;
		int bang = tok[strlen(tok) - 1] == '!';
		if (sscanf(tok, "%63[^:]:%d:%d", name, &gpu, &used) != 3)
			return -1;
		struct drake_res a = res_of(64, 512, gpu);
		if (drake_cluster_add_node(c, name, &a, !bang, NULL, 0))
			return -1;
	}
	if (drake_cluster_sort(c, NULL, 0))
		return -1;
	/* Second pass for usage, now that indexes are final. */
	snprintf(buf, sizeof(buf), "%s", spec);
	for (char *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		char name[64];
		int gpu = 0, used = 0;
		if (sscanf(tok, "%63[^:]:%d:%d", name, &gpu, &used) != 3)
			return -1;
		struct drake_res u = res_of(used, used * 8, used);
		drake_cluster_charge(c, (size_t)drake_cluster_find(c, name), &u, 1);
	}
	return 0;
}

/* One PS (2 CPU, 8Gi, no GPU) and workers of 1 GPU, 4 CPU, 32Gi each. */
static inline struct drake_gang_req gpu_job(int n_ps, int min, int want)
{
	struct drake_gang_req r = {0};
	r.n_ps = n_ps;
	r.ps = res_of(2, 8, 0);
	r.worker = res_of(4, 32, 1);
	r.min_workers = min;
	r.want_workers = want;
	return r;
}

/* r with a chief of gpu GPUs, 4 CPU and 32Gi. */
static inline struct drake_gang_req with_chief(struct drake_gang_req r, int gpu)
{
	r.n_chief = 1;
	r.chief = res_of(4, 32, gpu);
	return r;
}

#endif
