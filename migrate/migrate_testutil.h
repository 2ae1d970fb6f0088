/*
 * migrate_testutil.h - helpers shared by migrate/'s unit tests (header
 * only, not part of the library): a small cluster and its replicas from a
 * table, and decisions rendered as "pod:from>to".
 *
 * Nodes have their allocatable resources and what pods drake does not move
 * use on them; replicas are charged to their nodes as the controller
 * charges them (requests); measure() gives a node a measured usage.
 * Times are at NOW. A job was admitted an hour
 * ago (so the speed model expects it to run an hour more), 30 s ago when
 * its name starts "ns/young"; its progress is slowing when its name starts
 * "ns/slow".
 */
#ifndef DRAKE_MIGRATE_TESTUTIL_H
#define DRAKE_MIGRATE_TESTUTIL_H

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "migrate/migrate.h"

#define GIB  (1024LL * 1024 * 1024)
#define NOW  1000.0
#define MAXN 9
#define MAXR 24

struct nspec {
	const char *name;
	int cpu, mem, gpu;    /* allocatable: CPUs, Gi, GPUs */
	int ocpu, omem, ogpu; /* used by pods drake does not move */
	bool cordoned;
};

struct rspec {
	const char *pod, *job, *node;
	char role;        /* 'p' PS, 'c' chief, otherwise a worker */
	double cpu;       /* requests: CPUs, */
	int mem, gpu;     /* Gi and GPUs */
	int moves;        /* migrations so far */
	double ago;       /* seconds since its last move; 0 never moved */
	double pct;       /* its job's progress in %; 0 unknown */
	const char *gang; /* "live/min" of its role; NULL "4/1" */
};

struct world {
	struct drake_cluster c;
	struct mig_replica r[MAXR];
	size_t nr;
};

static inline struct drake_res res(double cpu, int mem, int gpu)
{
	struct drake_res x = {0};
	x.cpu_milli = llround(cpu * 1000);
	x.mem_bytes = mem * GIB;
	x.gpu = gpu;
	return x;
}

/* Returns 0 on success. */
static inline int build(struct world *w, const struct nspec *n, const struct rspec *r)
{
	drake_cluster_init(&w->c);
	for (size_t i = 0; i < MAXN && n[i].name; i++) {
		struct drake_res a = res(n[i].cpu, n[i].mem, n[i].gpu);
		if (drake_cluster_add_node(&w->c, n[i].name, &a, !n[i].cordoned, NULL, 0))
			return -1;
	}
	if (drake_cluster_sort(&w->c, NULL, 0))
		return -1;
	for (size_t i = 0; i < MAXN && n[i].name; i++) {
		struct drake_res o = res(n[i].ocpu, n[i].omem, n[i].ogpu);
		drake_cluster_charge(&w->c, (size_t)drake_cluster_find(&w->c, n[i].name), &o, 1);
	}
	w->nr = 0;
	for (size_t i = 0; i < MAXR && r[i].pod; i++) {
		struct mig_replica *x = &w->r[w->nr++];
		int live = 4, min = 1;
		if (r[i].gang && sscanf(r[i].gang, "%d/%d", &live, &min) != 2)
			return -1;
		const char *job = r[i].job ? r[i].job : "ns/a";
		*x = (struct mig_replica){
		    .job = job,
		    .pod = r[i].pod,
		    .role = r[i].role == 'p'   ? DRAKE_ROLE_PS
		            : r[i].role == 'c' ? DRAKE_ROLE_CHIEF
		                               : DRAKE_ROLE_WORKER,
		    .node = drake_cluster_find(&w->c, r[i].node),
		    .req = res(r[i].cpu, r[i].mem, r[i].gpu),
		    .migrations = r[i].moves,
		    .last_migrated = r[i].ago > 0 ? NOW - r[i].ago : -1,
		    .progress = r[i].pct > 0 ? r[i].pct / 100 : -1,
		    .role_live = live,
		    .role_min = min,
		    .admitted = NOW - (strncmp(job, "ns/young", 8) == 0 ? 30 : 3600),
		    .cls =
		        strncmp(job, "ns/slow", 7) == 0 ? MIG_CLASS_SLOWING : MIG_CLASS_PROGRESSING,
		};
		if (x->node < 0)
			return -1;
		drake_cluster_charge(&w->c, (size_t)x->node, &x->req, 1);
	}
	return 0;
}

/* Node `node` measurably uses cpu CPUs and mem Gi (the metrics API's). */
static inline void measure(struct world *w, const char *node, int cpu, int mem)
{
	struct drake_res u = res(cpu, mem, 0);
	w->c.nodes[drake_cluster_find(&w->c, node)].usage =
	    (struct drake_usage){u.cpu_milli, u.mem_bytes, true};
}

/* "pod:from>to pod:from>to" */
static inline const char *render(const struct world *w, const struct mig_decision *d, size_t n,
                                 char *buf, size_t len)
{
	size_t off = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < n && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s:%s>%s", i ? " " : "",
		                        w->r[d[i].replica].pod, w->c.nodes[d[i].from].name,
		                        w->c.nodes[d[i].to].name);
	return buf;
}

#endif
