/*
 * pollux_apps.c - reads the Pollux artifact's per-application measurements
 * (see pollux_apps.h): three file layouts, every field checked, the first
 * error reported as file:line: what.
 */
#include "sim/pollux_apps.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/trace_internal.h"

#define MAX_FIELDS 8

#define SCALABILITY_HEADER "num_nodes,num_replicas,local_bsz,step_time,sync_time"
#define PLACEMENTS_HEADER  "placement,local_bsz,step_time,sync_time"
#define CURVE_HEADER       "progress,iteration,metric,grad_sqr,grad_var"

/* The artifact's applications.py: epochs to train, largest local batch
 * (0: the largest its placements measured). */
static const struct {
	const char *name;
	int epochs;
	double max_local_bsz;
} known[] = {
    {"bert", 2, 0},      {"cifar10", 100, 0}, {"deepspeech2", 80, 0},
    {"imagenet", 90, 0}, {"ncf", 10, 0},      {"yolov3", 50, 8},
};

/* A finite decimal number in [min, max]; min_open: strictly above min. */
static drake_err field_num(const struct trace_lines *l, const char *name, const char *s, double min,
                           int min_open, double max, double *out, char *msg, size_t mlen)
{
	char *end;
	if (!*s || strchr(" \t+", *s))
		return drake_errorf(DRAKE_EINVAL, msg, mlen, "%s:%zu: %s \"%.32s\" is not a number",
		                    l->file, l->lineno, name, s);
	double v = strtod(s, &end);
	if (*end || !isfinite(v))
		return drake_errorf(DRAKE_EINVAL, msg, mlen, "%s:%zu: %s \"%.32s\" is not a number",
		                    l->file, l->lineno, name, s);
	if (v < min || (min_open && v <= min) || v > max)
		return drake_errorf(
		    DRAKE_EINVAL, msg, mlen, "%s:%zu: %s %.32s is out of range (%s%g, at most %g)",
		    l->file, l->lineno, name, s, min_open ? "above " : "at least ", min, max);
	*out = v;
	return DRAKE_OK;
}

/* The lines of a file after its header, which must be `header`; calls row()
 * for each non-blank one, split into `want` fields. */
typedef drake_err (*row_fn)(const struct trace_lines *l, char **f, struct sim_papp *a, void *arg,
                            char *msg, size_t mlen);

static drake_err each_row(const char *buf, size_t len, const char *file, const char *header,
                          int want, row_fn row, struct sim_papp *a, void *arg, char *msg,
                          size_t mlen)
{
	struct trace_lines l = {buf, buf + len, file, 0};
	char line[SIM_TRACE_MAX_LINE + 1];
	char *f[MAX_FIELDS + 1];
	int r = trace_next_line(&l, line, sizeof(line));
	if (r == 0)
		return drake_errorf(DRAKE_EINVAL, msg, mlen, "%s: empty file", file);
	if (r < 0 || strcmp(line, header) != 0)
		return drake_errorf(DRAKE_EINVAL, msg, mlen, "%s:1: header is not %s", file,
		                    header);
	size_t rows = 0;
	drake_err err;
	while ((r = trace_next_line(&l, line, sizeof(line))) != 0) {
		if (r < 0)
			return drake_errorf(DRAKE_ELIMIT, msg, mlen,
			                    "%s:%zu: line longer than %d bytes or has a NUL", file,
			                    l.lineno, SIM_TRACE_MAX_LINE);
		if (line[0] == '\0')
			continue;
		if (++rows > SIM_PAPP_MAX_ROWS)
			return drake_errorf(DRAKE_ELIMIT, msg, mlen, "%s:%zu: more than %d rows",
			                    file, l.lineno, SIM_PAPP_MAX_ROWS);
		int nf = trace_split(line, f, MAX_FIELDS);
		if (nf != want)
			return drake_errorf(DRAKE_EINVAL, msg, mlen, "%s:%zu: %d fields, want %d",
			                    file, l.lineno, nf > MAX_FIELDS ? MAX_FIELDS : nf,
			                    want);
		if ((err = row(&l, f, a, arg, msg, mlen)))
			return err;
	}
	if (rows == 0)
		return drake_errorf(DRAKE_EINVAL, msg, mlen, "%s: no rows after the header", file);
	return DRAKE_OK;
}

/* step_time and sync_time: a step takes time, and its sync is part of it. */
static drake_err times(const struct trace_lines *l, char **f, struct sim_papp_point *p, char *msg,
                       size_t mlen)
{
	drake_err err;
	if ((err = field_num(l, "step_time", f[0], 0, 1, SIM_PAPP_MAX_SECONDS, &p->step, msg,
	                     mlen)) ||
	    (err =
	         field_num(l, "sync_time", f[1], 0, 0, SIM_PAPP_MAX_SECONDS, &p->sync, msg, mlen)))
		return err;
	if (p->sync > p->step)
		return drake_errorf(DRAKE_EINVAL, msg, mlen,
		                    "%s:%zu: sync_time %s is longer than step_time %s", l->file,
		                    l->lineno, f[1], f[0]);
	return DRAKE_OK;
}

/* Room for row n of *arr: 16 rows, doubled whenever n reaches a power of
 * two from there (the capacity follows from n). */
static drake_err grow(void **arr, size_t n, size_t elem, const struct trace_lines *l, char *msg,
                      size_t mlen)
{
	if (n != 0 && (n < 16 || (n & (n - 1)) != 0))
		return DRAKE_OK;
	void *p = realloc(*arr, (n == 0 ? 16 : n * 2) * elem);
	if (!p)
		return drake_errorf(DRAKE_ENOMEM, msg, mlen, "out of memory reading %s", l->file);
	*arr = p;
	return DRAKE_OK;
}

static drake_err scalability_row(const struct trace_lines *l, char **f, struct sim_papp *a,
                                 void *arg, char *msg, size_t mlen)
{
	(void)arg;
	struct sim_papp_point p;
	int64_t nodes, replicas;
	drake_err err;
	if ((err = trace_field_int(l, "num_nodes", f[0], 1, SIM_PAPP_MAX_NODES, &nodes, NULL, msg,
	                           mlen)) ||
	    (err = trace_field_int(l, "num_replicas", f[1], 1, SIM_PAPP_MAX_REPLICAS, &replicas,
	                           NULL, msg, mlen)) ||
	    (err = field_num(l, "local_bsz", f[2], 0, 1, SIM_PAPP_MAX_LOCAL_BSZ, &p.local_bsz, msg,
	                     mlen)) ||
	    (err = times(l, f + 3, &p, msg, mlen)))
		return err;
	if (replicas < nodes)
		return drake_errorf(DRAKE_EINVAL, msg, mlen,
		                    "%s:%zu: %lld replicas on %lld nodes leaves a node empty",
		                    l->file, l->lineno, (long long)replicas, (long long)nodes);
	p.nodes = (int)nodes;
	p.replicas = (int)replicas;
	if ((err = grow((void **)&a->pt, a->n_pt, sizeof(*a->pt), l, msg, mlen)))
		return err;
	a->pt[a->n_pt++] = p;
	return DRAKE_OK;
}

int sim_papp_layout(const int *per_node, int n, char *out)
{
	char d[SIM_PAPP_MAX_NODES];
	int k = 0;
	for (int i = 0; i < n; i++) {
		if (per_node[i] <= 0)
			continue;
		if (per_node[i] > 9 || k == SIM_PAPP_MAX_NODES)
			return -1;
		d[k++] = (char)('0' + per_node[i]);
	}
	int best = 0;
	for (int r = 1; r < k; r++) {
		for (int i = 0; i < k; i++) {
			char x = d[(r + i) % k], y = d[(best + i) % k];
			if (x != y) {
				if (x < y)
					best = r;
				break;
			}
		}
	}
	for (int i = 0; i < k; i++)
		out[i] = d[(best + i) % k];
	out[k] = '\0';
	return k;
}

static drake_err placements_row(const struct trace_lines *l, char **f, struct sim_papp *a,
                                void *arg, char *msg, size_t mlen)
{
	(void)arg;
	struct sim_papp_placement p;
	int per[SIM_PAPP_MAX_NODES], n = 0, replicas = 0;
	size_t len = strlen(f[0]);
	if (len == 0 || len > SIM_PAPP_MAX_NODES || strspn(f[0], "0123456789") != len)
		return drake_errorf(DRAKE_EINVAL, msg, mlen,
		                    "%s:%zu: placement \"%.32s\" is not 1 to %d digits (replicas "
		                    "per node)",
		                    l->file, l->lineno, f[0], SIM_PAPP_MAX_NODES);
	for (size_t i = 0; i < len; i++) {
		per[n] = f[0][i] - '0';
		replicas += per[n];
		n += per[n] > 0;
	}
	if (replicas == 0)
		return drake_errorf(DRAKE_EINVAL, msg, mlen, "%s:%zu: placement %s has no replica",
		                    l->file, l->lineno, f[0]);
	sim_papp_layout(per, n, p.layout);
	p.p.nodes = n;
	p.p.replicas = replicas;
	drake_err err;
	if ((err = field_num(l, "local_bsz", f[1], 0, 1, SIM_PAPP_MAX_LOCAL_BSZ, &p.p.local_bsz,
	                     msg, mlen)) ||
	    (err = times(l, f + 2, &p.p, msg, mlen)))
		return err;
	if ((err = grow((void **)&a->pl, a->n_pl, sizeof(*a->pl), l, msg, mlen)))
		return err;
	a->pl[a->n_pl++] = p;
	return DRAKE_OK;
}

static drake_err curve_row(const struct trace_lines *l, char **f, struct sim_papp *a, void *arg,
                           char *msg, size_t mlen)
{
	(void)a;
	struct sim_papp_curve *c = arg;
	struct sim_papp_epoch e;
	drake_err err;
	if ((err = field_num(l, "progress", f[0], 0, 0, 1e15, &e.progress, msg, mlen)) ||
	    (err = field_num(l, "iteration", f[1], 0, 0, 1e15, &e.iteration, msg, mlen)) ||
	    (err = field_num(l, "metric", f[2], -1e15, 0, 1e15, &e.metric, msg, mlen)) ||
	    (err = field_num(l, "grad_sqr", f[3], -1e300, 0, 1e300, &e.grad_sqr, msg, mlen)) ||
	    (err = field_num(l, "grad_var", f[4], -1e300, 0, 1e300, &e.grad_var, msg, mlen)))
		return err;
	if (c->n > 0 &&
	    (e.iteration < c->e[c->n - 1].iteration || e.progress < c->e[c->n - 1].progress))
		return drake_errorf(DRAKE_EINVAL, msg, mlen,
		                    "%s:%zu: iteration or progress goes back (epochs in order)",
		                    l->file, l->lineno);
	if ((err = grow((void **)&c->e, c->n, sizeof(*c->e), l, msg, mlen)))
		return err;
	c->e[c->n++] = e;
	return DRAKE_OK;
}

drake_err sim_papp_parse_scalability(const char *buf, size_t len, const char *file,
                                     struct sim_papp *a, char *msg, size_t mlen)
{
	return each_row(buf, len, file, SCALABILITY_HEADER, 5, scalability_row, a, NULL, msg, mlen);
}

drake_err sim_papp_parse_placements(const char *buf, size_t len, const char *file,
                                    struct sim_papp *a, char *msg, size_t mlen)
{
	return each_row(buf, len, file, PLACEMENTS_HEADER, 4, placements_row, a, NULL, msg, mlen);
}

drake_err sim_papp_parse_curve(const char *buf, size_t len, const char *file, int batch,
                               struct sim_papp *a, char *msg, size_t mlen)
{
	if (batch < 1 || batch > SIM_TRACE_MAX_BATCH)
		return drake_errorf(DRAKE_EINVAL, msg, mlen, "%s: batch size %d out of range", file,
		                    batch);
	if (a->n_curve == SIM_PAPP_MAX_CURVES)
		return drake_errorf(DRAKE_ELIMIT, msg, mlen, "%s: more than %d validation curves",
		                    file, SIM_PAPP_MAX_CURVES);
	if (!a->curve && !(a->curve = calloc(SIM_PAPP_MAX_CURVES, sizeof(*a->curve))))
		return drake_errorf(DRAKE_ENOMEM, msg, mlen, "out of memory reading %s", file);
	struct sim_papp_curve *c = &a->curve[a->n_curve];
	*c = (struct sim_papp_curve){.batch = batch};
	drake_err err = each_row(buf, len, file, CURVE_HEADER, 5, curve_row, a, c, msg, mlen);
	if (err) {
		free(c->e);
		*c = (struct sim_papp_curve){0};
		return err;
	}
	a->n_curve++;
	return DRAKE_OK;
}

static int cmp_point(const struct sim_papp_point *x, const struct sim_papp_point *y)
{
	if (x->nodes != y->nodes)
		return x->nodes < y->nodes ? -1 : 1;
	if (x->replicas != y->replicas)
		return x->replicas < y->replicas ? -1 : 1;
	return x->local_bsz < y->local_bsz ? -1 : x->local_bsz > y->local_bsz;
}

static int by_point(const void *a, const void *b)
{
	return cmp_point(a, b);
}

static int by_placement(const void *a, const void *b)
{
	const struct sim_papp_placement *x = a, *y = b;
	int c = strcmp(x->layout, y->layout);
	return c ? c : cmp_point(&x->p, &y->p);
}

static int by_batch(const void *a, const void *b)
{
	const struct sim_papp_curve *x = a, *y = b;
	return x->batch < y->batch ? -1 : x->batch > y->batch;
}

drake_err sim_papp_finish(struct sim_papp *a, const char *dir, char *msg, size_t mlen)
{
	if (a->n_pl == 0)
		return drake_errorf(DRAKE_EINVAL, msg, mlen, "%s: no placements measured", dir);
	if (a->n_curve == 0)
		return drake_errorf(DRAKE_EINVAL, msg, mlen, "%s: no validation-<batch>.csv", dir);
	qsort(a->pl, a->n_pl, sizeof(*a->pl), by_placement);
	qsort(a->curve, a->n_curve, sizeof(*a->curve), by_batch);
	for (size_t i = 1; i < a->n_pl; i++)
		if (by_placement(&a->pl[i - 1], &a->pl[i]) == 0)
			return drake_errorf(DRAKE_EINVAL, msg, mlen,
			                    "%s: placement %s at local_bsz %g measured twice", dir,
			                    a->pl[i].layout, a->pl[i].p.local_bsz);
	for (size_t i = 1; i < a->n_curve; i++)
		if (a->curve[i].batch == a->curve[i - 1].batch)
			return drake_errorf(DRAKE_EINVAL, msg, mlen,
			                    "%s: two validation curves at batch size %d", dir,
			                    a->curve[i].batch);
	/* the placements, averaged per (nodes, replicas, local_bsz), join the
	 * scalability points: the artifact interpolates over both */
	size_t n_scal = a->n_pt;
	struct sim_papp_point *pt = malloc((n_scal + a->n_pl) * sizeof(*pt));
	struct sim_papp_point *tmp = malloc(a->n_pl * sizeof(*tmp));
	if (!pt || !tmp) {
		free(pt);
		free(tmp);
		return drake_errorf(DRAKE_ENOMEM, msg, mlen, "out of memory");
	}
	for (size_t i = 0; i < a->n_pl; i++)
		tmp[i] = a->pl[i].p;
	qsort(tmp, a->n_pl, sizeof(*tmp), by_point);
	size_t n = 0;
	for (size_t i = 0; i < a->n_pl;) {
		size_t k = i;
		double step = 0, sync = 0;
		for (; k < a->n_pl && cmp_point(&tmp[i], &tmp[k]) == 0; k++) {
			step += tmp[k].step;
			sync += tmp[k].sync;
		}
		pt[n] = tmp[i];
		pt[n].step = step / (double)(k - i);
		pt[n].sync = sync / (double)(k - i);
		n++;
		i = k;
	}
	free(tmp);
	for (size_t i = 0; i < n_scal; i++)
		pt[n++] = a->pt[i];
	free(a->pt);
	a->pt = pt;
	a->n_pt = n;
	qsort(a->pt, a->n_pt, sizeof(*a->pt), by_point);
	for (size_t i = 1; i < a->n_pt; i++)
		if (cmp_point(&a->pt[i - 1], &a->pt[i]) == 0)
			return drake_errorf(DRAKE_EINVAL, msg, mlen,
			                    "%s: %d nodes, %d replicas at local_bsz %g are in both "
			                    "placements.csv and scalability.csv",
			                    dir, a->pt[i].nodes, a->pt[i].replicas,
			                    a->pt[i].local_bsz);
	a->min_local_bsz = a->max_local_bsz = a->pl[0].p.local_bsz;
	for (size_t i = 0; i < a->n_pl; i++) {
		if (a->pl[i].p.local_bsz < a->min_local_bsz)
			a->min_local_bsz = a->pl[i].p.local_bsz;
		if (a->pl[i].p.local_bsz > a->max_local_bsz)
			a->max_local_bsz = a->pl[i].p.local_bsz;
	}
	a->max_replicas = 0;
	for (size_t i = 0; i < a->n_pt; i++)
		if (a->pt[i].replicas > a->max_replicas)
			a->max_replicas = a->pt[i].replicas;
	size_t shortest = a->curve[0].n;
	for (size_t i = 1; i < a->n_curve; i++)
		if (a->curve[i].n < shortest)
			shortest = a->curve[i].n;
	a->epochs = (int)shortest;
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		if (strcmp(a->name, known[i].name) != 0)
			continue;
		if ((size_t)known[i].epochs > shortest)
			return drake_errorf(
			    DRAKE_EINVAL, msg, mlen,
			    "%s: %s trains %d epochs, a validation curve has only %zu", dir,
			    a->name, known[i].epochs, shortest);
		a->epochs = known[i].epochs;
		if (known[i].max_local_bsz > 0)
			a->max_local_bsz = known[i].max_local_bsz;
	}
	return DRAKE_OK;
}

void sim_papp_release(struct sim_papp *a)
{
	if (!a)
		return;
	free(a->pl);
	free(a->pt);
	for (size_t i = 0; a->curve && i < a->n_curve; i++)
		free(a->curve[i].e);
	free(a->curve);
	memset(a, 0, sizeof(*a));
}

typedef drake_err (*parse_fn)(const char *buf, size_t len, const char *file, struct sim_papp *a,
                              char *msg, size_t mlen);

static drake_err load_file(const char *path, parse_fn parse, int batch, struct sim_papp *a,
                           char *msg, size_t mlen)
{
	char *b;
	size_t n;
	drake_err err = sim_read_file(path, SIM_PAPP_MAX_BYTES, &b, &n, msg, mlen);
	if (err)
		return err;
	err = parse ? parse(b, n, path, a, msg, mlen)
	            : sim_papp_parse_curve(b, n, path, batch, a, msg, mlen);
	free(b);
	return err;
}

/* validation-<digits>.csv: its batch size, else 0. */
static int curve_batch(const char *name)
{
	const char *p = name + strlen("validation-");
	if (strncmp(name, "validation-", strlen("validation-")) != 0)
		return 0;
	size_t d = strspn(p, "0123456789");
	if (d == 0 || d > 8 || strcmp(p + d, ".csv") != 0 || p[0] == '0')
		return 0;
	return atoi(p);
}

static drake_err load_app(const char *dir, const char *name, struct sim_papp *a, char *msg,
                          size_t mlen)
{
	char path[4096];
	drake_err err;
	if (!*name || name[0] == '.' || strchr(name, '/'))
		return drake_errorf(DRAKE_EINVAL, msg, mlen,
		                    "application \"%.32s\" is not a folder name", name);
	snprintf(a->name, sizeof(a->name), "%s", name);
	snprintf(path, sizeof(path), "%s/%s/scalability.csv", dir, name);
	if ((err = load_file(path, sim_papp_parse_scalability, 0, a, msg, mlen)))
		return err;
	snprintf(path, sizeof(path), "%s/%s/placements.csv", dir, name);
	if ((err = load_file(path, sim_papp_parse_placements, 0, a, msg, mlen)))
		return err;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	DIR *d = opendir(path);
	if (!d)
		return drake_errorf(DRAKE_EIO, msg, mlen, "%s: cannot open the folder", path);
	/* readdir's order is the file system's: the curves are sorted after */
	struct dirent *e;
	while (!err && (e = readdir(d)) != NULL) {
		int batch = curve_batch(e->d_name);
		if (batch <= 0)
			continue;
		char file[4096 + 256];
		snprintf(file, sizeof(file), "%s/%s", path, e->d_name);
		err = load_file(file, NULL, batch, a, msg, mlen);
	}
	closedir(d);
	return err ? err : sim_papp_finish(a, path, msg, mlen);
}

drake_err sim_papps_load(const char *dir, const char *const *names, size_t n, struct sim_papps *out,
                         char *msg, size_t mlen)
{
	memset(out, 0, sizeof(*out));
	if (!(out->app = calloc(SIM_PAPP_MAX_APPS, sizeof(*out->app))))
		return drake_errorf(DRAKE_ENOMEM, msg, mlen, "out of memory");
	drake_err err = DRAKE_OK;
	for (size_t i = 0; !err && i < n; i++) {
		if (sim_papps_find(out, names[i]) >= 0)
			continue;
		if (out->n == SIM_PAPP_MAX_APPS) {
			err = drake_errorf(DRAKE_ELIMIT, msg, mlen, "more than %d applications",
			                   SIM_PAPP_MAX_APPS);
			break;
		}
		err = load_app(dir, names[i], &out->app[out->n], msg, mlen);
		out->n++;
	}
	if (err)
		sim_papps_release(out);
	return err;
}

int sim_papps_find(const struct sim_papps *apps, const char *name)
{
	for (size_t i = 0; i < apps->n; i++)
		if (strcmp(apps->app[i].name, name) == 0)
			return (int)i;
	return -1;
}

void sim_papps_release(struct sim_papps *apps)
{
	if (!apps)
		return;
	for (size_t i = 0; apps->app && i < apps->n; i++)
		sim_papp_release(&apps->app[i]);
	free(apps->app);
	memset(apps, 0, sizeof(*apps));
}
