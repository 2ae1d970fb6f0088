/*
 * wave_room.c - which pods a held-back wave waits for, and whether they are
 * gone (wave_room.h).
 */
#include "reconciler/wave_room.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/pod.h"

bool room_list_add(struct room_list *l, const struct kube_pod *p)
{
	if (!p->node_name || !*p->node_name)
		return true;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 8;
		struct room_pod *v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return false;
		l->v = v;
		l->cap = cap;
	}
	struct room_pod *d = &l->v[l->n++];
	snprintf(d->ns, sizeof(d->ns), "%s", p->ns);
	snprintf(d->name, sizeof(d->name), "%s", p->name);
	snprintf(d->uid, sizeof(d->uid), "%s", p->uid);
	snprintf(d->node, sizeof(d->node), "%s", p->node_name);
	return true;
}

void room_list_release(struct room_list *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static bool plans_on(const struct admit_wave *w, const char *node)
{
	for (int i = 0; i < w->n_pods; i++)
		if (!strcmp(w->pods[i].node, node))
			return true;
	return false;
}

long wave_room_waits(const struct admit_wave *w, const struct room_list *left,
                     struct room_pod **out)
{
	*out = NULL;
	long n = 0;
	for (size_t i = 0; i < left->n; i++)
		n += plans_on(w, left->v[i].node);
	if (!n)
		return 0;
	*out = malloc((size_t)n * sizeof(**out));
	if (!*out)
		return -1;
	n = 0;
	for (size_t i = 0; i < left->n; i++)
		if (plans_on(w, left->v[i].node))
			(*out)[n++] = left->v[i];
	return n;
}

bool wave_room_free(const struct kube_cache *pods, const struct room_pod *waits, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct kube_pod *p = kube_pods_get(pods, waits[i].ns, waits[i].name);
		if (p && !strcmp(p->uid, waits[i].uid) && p->node_name &&
		    !strcmp(p->node_name, waits[i].node) && !kube_pod_phase_done(p->phase))
			return false;
	}
	return true;
}
