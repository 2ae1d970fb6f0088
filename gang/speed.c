/*
 * speed.c - the throughput model (see speed.h).
 */
#include "gang/speed.h"

void drake_speed_defaults(struct drake_speed *m)
{
	m->scaling_loss = 0.05;
	m->locality_penalty = 0.15;
	m->rescale_pause = 10;
	m->node_gpus = 8;
}

double drake_speed_pause(const struct drake_speed *m, double own)
{
	return own > 0 ? own : m->rescale_pause;
}

int drake_speed_min_nodes(const struct drake_speed *m, int w, int gpus_per_worker)
{
	int per = m->node_gpus > 0 ? m->node_gpus / (gpus_per_worker > 0 ? gpus_per_worker : 1) : 1;
	if (per < 1)
		per = 1;
	int n = (w + per - 1) / per;
	return n < 1 ? 1 : n;
}

double drake_speed_rate(const struct drake_speed *m, int w, int gpus_per_worker, int nodes)
{
	if (w <= 0)
		return 0;
	double t = w / (1.0 + m->scaling_loss * (w - 1));
	int extra = nodes - drake_speed_min_nodes(m, w, gpus_per_worker);
	if (extra > 0)
		t /= 1.0 + m->locality_penalty * extra;
	return t;
}

double drake_speed_remaining(double admitted, double progress, double now)
{
	double age = now - admitted;
	if (age < 0)
		age = 0;
	if (progress >= 1)
		return 0;
	if (progress > 0)
		return age * (1 - progress) / progress;
	return age;
}

int drake_speed_node_gpus(const struct drake_cluster *c)
{
	int64_t best = 0;
	for (size_t i = 0; i < c->n; i++)
		if (c->nodes[i].schedulable && c->nodes[i].alloc.gpu > best)
			best = c->nodes[i].alloc.gpu;
	return best > 0 ? (int)(best > 1 << 20 ? 1 << 20 : best) : 1;
}
