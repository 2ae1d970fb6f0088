/* pace.c - admission pacing (see pace.h). */
#include "gang/pace.h"

void drake_pace_observe(struct drake_pace *p, double now_s, long binds, long unbound)
{
	if (p->started && now_s > p->last_s && p->unbound > 0)
		p->busy_s += now_s - p->last_s;
	if (binds > 0)
		p->binds += binds;
	p->unbound = unbound < 0 ? 0 : unbound;
	p->last_s = now_s;
	p->started = true;
	if (p->busy_s < DRAKE_PACE_WINDOW_S)
		return;
	double sample = (double)p->binds / p->busy_s;
	/* Weighted toward the new sample: kube-scheduler's rate changes with
	 * the cluster's size and load, and an old figure should fade fast. */
	p->rate = p->rate > 0 ? 0.5 * p->rate + 0.5 * sample : sample;
	p->busy_s = 0;
	p->binds = 0;
}

long drake_pace_budget(const struct drake_pace *p, double horizon_s, long floor, long fixed)
{
	if (fixed > 0)
		return fixed;
	double b = p->rate * horizon_s;
	if (b > 1e9)
		b = 1e9;
	return (long)b > floor ? (long)b : floor;
}
