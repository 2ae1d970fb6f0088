/*
 * cluster.c - the node table behind every plan.
 */
#include "gang/cluster.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void drake_cluster_init(struct drake_cluster *c)
{
	if (!c)
		return;
	memset(c, 0, sizeof(*c));
	c->sorted = true;
}

void drake_cluster_release(struct drake_cluster *c)
{
	if (!c)
		return;
	free(c->nodes);
	drake_cluster_init(c);
}

drake_err drake_cluster_add_node(struct drake_cluster *c, const char *name,
                                 const struct drake_res *alloc, bool schedulable, char *msg,
                                 size_t len)
{
	if (!name || !*name)
		return drake_errorf(DRAKE_EINVAL, msg, len, "node with an empty name");
	if (strlen(name) >= DRAKE_NODE_NAME_MAX)
		return drake_errorf(DRAKE_ELIMIT, msg, len, "node name longer than %d characters",
		                    DRAKE_NODE_NAME_MAX - 1);
	if (c->n >= DRAKE_CLUSTER_MAX_NODES)
		return drake_errorf(DRAKE_ELIMIT, msg, len, "more than %d nodes",
		                    DRAKE_CLUSTER_MAX_NODES);
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		struct drake_node *p = realloc(c->nodes, cap * sizeof(*p));
		if (!p)
			return drake_errorf(DRAKE_ENOMEM, msg, len, "out of memory adding a node");
		c->nodes = p;
		c->cap = cap;
	}
	struct drake_node *nd = &c->nodes[c->n];
	memset(nd, 0, sizeof(*nd));
	snprintf(nd->name, sizeof(nd->name), "%s", name);
	nd->alloc = *alloc;
	nd->schedulable = schedulable;
	if (c->n > 0 && strcmp(c->nodes[c->n - 1].name, name) >= 0)
		c->sorted = false;
	c->n++;
	if (schedulable)
		drake_res_add(&c->alloc_total, alloc);
	return DRAKE_OK;
}

static int cmp_node(const void *a, const void *b)
{
	return strcmp(((const struct drake_node *)a)->name, ((const struct drake_node *)b)->name);
}

drake_err drake_cluster_sort(struct drake_cluster *c, char *msg, size_t len)
{
	if (!c->sorted && c->n > 1)
		qsort(c->nodes, c->n, sizeof(c->nodes[0]), cmp_node);
	for (size_t i = 1; i < c->n; i++)
		if (strcmp(c->nodes[i - 1].name, c->nodes[i].name) == 0)
			return drake_errorf(DRAKE_EINVAL, msg, len, "duplicate node \"%s\"",
			                    c->nodes[i].name);
	c->sorted = true;
	return DRAKE_OK;
}

int drake_cluster_find(const struct drake_cluster *c, const char *name)
{
	size_t lo = 0, hi = c->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int r = strcmp(c->nodes[mid].name, name);
		if (r == 0)
			return (int)mid;
		if (r < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

void drake_cluster_free(const struct drake_cluster *c, size_t i, struct drake_res *out)
{
	const struct drake_node *nd = &c->nodes[i];
	*out = nd->alloc;
	drake_res_sub(out, &nd->used);
	if (out->cpu_milli < 0)
		out->cpu_milli = 0;
	if (out->mem_bytes < 0)
		out->mem_bytes = 0;
	if (out->gpu < 0)
		out->gpu = 0;
	for (int k = 0; k < DRAKE_RES_MAX_EXT; k++)
		if (out->ext[k] < 0)
			out->ext[k] = 0;
}

void drake_cluster_free_sum(const struct drake_cluster *c, struct drake_res *out)
{
	drake_res_zero(out);
	for (size_t i = 0; i < c->n; i++) {
		if (!c->nodes[i].schedulable)
			continue;
		struct drake_res f;
		drake_cluster_free(c, i, &f);
		drake_res_add(out, &f);
	}
}

void drake_cluster_charge(struct drake_cluster *c, size_t i, const struct drake_res *req,
                          int64_t count)
{
	drake_res_add_n(&c->nodes[i].used, req, count);
	if (c->nodes[i].schedulable)
		drake_res_add_n(&c->used_total, req, count);
}

void drake_cluster_set_schedulable(struct drake_cluster *c, size_t i, bool schedulable)
{
	struct drake_node *nd = &c->nodes[i];
	if (nd->schedulable == schedulable)
		return;
	int sign = schedulable ? 1 : -1;
	drake_res_add_n(&c->alloc_total, &nd->alloc, sign);
	drake_res_add_n(&c->used_total, &nd->used, sign);
	nd->schedulable = schedulable;
}

void drake_cluster_charge_vgpu(struct drake_cluster *c, size_t i, const char *id,
                               const struct drake_share *s, int sign)
{
	struct drake_node *nd = &c->nodes[i];
	const struct drake_res one_gpu = {.gpu = 1};
	int k = drake_vgpu_find(&nd->vgpus, id);
	if (sign > 0) {
		if (k < 0) {
			drake_cluster_charge(c, i, &one_gpu, 1);
			k = drake_vgpu_open(&nd->vgpus, id, nd->gpu_mem);
		}
		if (k >= 0)
			drake_vgpu_share(&nd->vgpus.v[k], s, 1);
		return;
	}
	if (k < 0) { /* an untracked share leaves: its GPU comes back */
		drake_cluster_charge(c, i, &one_gpu, -1);
		return;
	}
	drake_vgpu_share(&nd->vgpus.v[k], s, -1);
	if (nd->vgpus.v[k].sharers <= 0) {
		drake_vgpu_close(&nd->vgpus, k);
		drake_cluster_charge(c, i, &one_gpu, -1);
	}
}

drake_err drake_cluster_clone(struct drake_cluster *dst, const struct drake_cluster *src)
{
	struct drake_node *p = NULL;
	if (src->n) {
		p = malloc(src->n * sizeof(*p));
		if (!p)
			return DRAKE_ENOMEM;
		memcpy(p, src->nodes, src->n * sizeof(*p));
	}
	*dst = *src;
	dst->nodes = p;
	dst->cap = src->n;
	return DRAKE_OK;
}
