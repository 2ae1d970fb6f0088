/*
 * round_codec_decode.c - a --decision-log line (round_codec.c writes it) back into
 * a round's inputs and its logged outputs, for `drake sim --replay`. Every
 * field the encoder writes is read and checked; an error names the field by
 * its path in the line.
 */
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reconciler/round_codec.h"

struct dec {
	struct round_log_entry *e;
	char *msg;
	size_t len;
	drake_err err;
};

static bool bad(struct dec *d, const char *path, const char *key, const char *what)
{
	if (!d->err)
		d->err = drake_errorf(DRAKE_EINVAL, d->msg, d->len, "%s%s%s: %s", path,
		                      key && *path ? "." : "", key ? key : "", what);
	return false;
}

static void *block(struct dec *d, size_t n, size_t size)
{
	void **b = realloc(d->e->blocks, (d->e->n_blocks + 1) * sizeof(*b));
	if (!b) {
		d->err = drake_errorf(DRAKE_ENOMEM, d->msg, d->len, "out of memory");
		return NULL;
	}
	d->e->blocks = b;
	void *p = calloc(n ? n : 1, size);
	if (!p) {
		d->err = drake_errorf(DRAKE_ENOMEM, d->msg, d->len, "out of memory");
		return NULL;
	}
	b[d->e->n_blocks++] = p;
	return p;
}

static json_t *field(struct dec *d, json_t *o, const char *path, const char *key, json_type t)
{
	json_t *v = json_object_get(o, key);
	if (!v) {
		bad(d, path, key, "missing");
		return NULL;
	}
	if (json_typeof(v) != t && !(t == JSON_REAL && json_is_integer(v)) &&
	    !(t == JSON_TRUE && json_is_boolean(v))) {
		static const char *const names[] = {"an object",  "an array", "a string",
		                                    "an integer", "a number", "a boolean",
		                                    "a boolean",  "null"};
		char what[64];
		snprintf(what, sizeof(what), "expected %s", names[t]);
		bad(d, path, key, what);
		return NULL;
	}
	return v;
}

static bool get_int(struct dec *d, json_t *o, const char *path, const char *key, int64_t lo,
                    int64_t hi, int64_t *out)
{
	json_t *v = field(d, o, path, key, JSON_INTEGER);
	if (!v)
		return false;
	json_int_t x = json_integer_value(v);
	if (x < lo || x > hi)
		return bad(d, path, key, "out of range");
	*out = x;
	return true;
}

static bool get_i(struct dec *d, json_t *o, const char *path, const char *key, int lo, int hi,
                  int *out)
{
	int64_t x;
	if (!get_int(d, o, path, key, lo, hi, &x))
		return false;
	*out = (int)x;
	return true;
}

static bool get_num(struct dec *d, json_t *o, const char *path, const char *key, double *out)
{
	json_t *v = field(d, o, path, key, JSON_REAL);
	if (!v)
		return false;
	*out = json_number_value(v);
	return true;
}

/* A number, or null for INFINITY. */
static bool get_num_inf(struct dec *d, json_t *o, const char *path, const char *key, double *out)
{
	json_t *v = json_object_get(o, key);
	if (v && json_is_null(v)) {
		*out = INFINITY;
		return true;
	}
	return get_num(d, o, path, key, out);
}

static bool get_bool(struct dec *d, json_t *o, const char *path, const char *key, bool *out)
{
	json_t *v = field(d, o, path, key, JSON_TRUE);
	if (!v)
		return false;
	*out = json_is_true(v);
	return true;
}

static bool get_str(struct dec *d, json_t *o, const char *path, const char *key, bool nullable,
                    const char **out)
{
	json_t *v = json_object_get(o, key);
	if (nullable && v && json_is_null(v)) {
		*out = NULL;
		return true;
	}
	if (!(v = field(d, o, path, key, JSON_STRING)))
		return false;
	*out = json_string_value(v);
	return true;
}

static bool copy_str(struct dec *d, json_t *o, const char *path, const char *key, char *buf,
                     size_t size)
{
	const char *s;
	if (!get_str(d, o, path, key, false, &s))
		return false;
	if (strlen(s) >= size)
		return bad(d, path, key, "too long");
	memcpy(buf, s, strlen(s) + 1);
	return true;
}

/* key's value as one of names[0..n); its index in *out. */
static bool get_enum(struct dec *d, json_t *o, const char *path, const char *key,
                     const char *(*name)(int), int n, int *out)
{
	const char *s;
	if (!get_str(d, o, path, key, false, &s))
		return false;
	for (int i = 0; i < n; i++)
		if (strcmp(name(i), s) == 0) {
			*out = i;
			return true;
		}
	char what[96];
	snprintf(what, sizeof(what), "unknown value \"%.60s\"", s);
	return bad(d, path, key, what);
}

static const char *kind_name(int i)
{
	return drake_round_kind_name((enum drake_round_kind)i);
}
static const char *reason_name(int i)
{
	return drake_round_reason_name((enum drake_round_reason)i);
}
static const char *status_name(int i)
{
	return drake_admit_status_name((enum drake_admit_status)i);
}
static const char *role_name(int i)
{
	return drake_role_name((enum drake_role)i);
}
static const char *state_name(int i)
{
	static const char *const s[] = {"missing", "waiting", "placed"};
	return s[i];
}
static const char *class_name(int i)
{
	static const char *const s[] = {"incomplete", "new", "repair", "running"};
	return s[i];
}
static const char *policy_name(int i)
{
	return i == DRAKE_POLICY_DRAGON     ? "dragon"
	       : i == DRAKE_POLICY_TIRESIAS ? "tiresias"
	                                    : "drake";
}
static const char *order_name(int i)
{
	return drake_victim_order_name((enum drake_victim_order)i);
}

static json_t *get_arr(struct dec *d, json_t *o, const char *path, const char *key, size_t n_want,
                       bool check_n)
{
	json_t *a = field(d, o, path, key, JSON_ARRAY);
	if (a && check_n && json_array_size(a) != n_want) {
		char what[64];
		snprintf(what, sizeof(what), "expected %zu entries, found %zu", n_want,
		         json_array_size(a));
		bad(d, path, key, what);
		return NULL;
	}
	return a;
}

static bool res_dec(struct dec *d, json_t *o, const char *path, const char *key,
                    struct drake_res *r)
{
	char p[256];
	snprintf(p, sizeof(p), "%s.%s", path, key);
	json_t *v = field(d, o, path, key, JSON_OBJECT);
	if (!v || !get_int(d, v, p, "cpuMilli", INT64_MIN, INT64_MAX, &r->cpu_milli) ||
	    !get_int(d, v, p, "memBytes", INT64_MIN, INT64_MAX, &r->mem_bytes) ||
	    !get_int(d, v, p, "gpu", INT64_MIN, INT64_MAX, &r->gpu))
		return false;
	const struct drake_res_names *names = &d->e->c.names;
	size_t known = 3;
	for (int i = 0; i < names->n; i++) {
		json_t *x = json_object_get(v, names->name[i]);
		if (!x)
			continue;
		if (!get_int(d, v, p, names->name[i], INT64_MIN, INT64_MAX, &r->ext[i]))
			return false;
		known++;
	}
	if (json_object_size(v) != known)
		return bad(d, p, NULL, "a resource not named in in.resources");
	return true;
}

/* A node mask: null (every node) or the allowed indexes. */
static bool mask_dec(struct dec *d, json_t *o, const char *path, const char *key,
                     const unsigned char **out)
{
	json_t *v = json_object_get(o, key);
	if (v && json_is_null(v)) {
		*out = NULL;
		return true;
	}
	json_t *a = get_arr(d, o, path, key, 0, false);
	if (!a)
		return false;
	unsigned char *m = block(d, d->e->c.n, 1);
	if (!m)
		return false;
	size_t i;
	json_t *x;
	json_array_foreach (a, i, x) {
		if (!json_is_integer(x) || json_integer_value(x) < 0 ||
		    (size_t)json_integer_value(x) >= d->e->c.n)
			return bad(d, path, key, "a node index out of range");
		m[json_integer_value(x)] = 1;
	}
	*out = m;
	return true;
}

static bool req_dec(struct dec *d, json_t *o, const char *path, struct drake_gang_req *q)
{
	char p[256];
	snprintf(p, sizeof(p), "%s.req", path);
	json_t *v = field(d, o, path, "req", JSON_OBJECT);
	int64_t seed;
	if (!v || !get_i(d, v, p, "ps", 0, 1 << 20, &q->n_ps) ||
	    !get_i(d, v, p, "chief", 0, 1, &q->n_chief) ||
	    !get_i(d, v, p, "minWorkers", 0, 1 << 20, &q->min_workers) ||
	    !get_i(d, v, p, "wantWorkers", 0, 1 << 20, &q->want_workers) ||
	    !get_int(d, v, p, "vgpuSeed", INT64_MIN, INT64_MAX, &seed) ||
	    !res_dec(d, v, p, "psReq", &q->ps) || !res_dec(d, v, p, "workerReq", &q->worker) ||
	    !res_dec(d, v, p, "chiefReq", &q->chief) || !mask_dec(d, v, p, "psNodes", &q->ps_ok) ||
	    !mask_dec(d, v, p, "workerNodes", &q->worker_ok) ||
	    !mask_dec(d, v, p, "chiefNodes", &q->chief_ok))
		return false;
	q->vgpu_seed = (uint64_t)seed;
	json_t *sh = get_arr(d, v, p, "shareMilli", 3, true);
	if (!sh)
		return false;
	int32_t *milli[] = {&q->ps_share.milli, &q->worker_share.milli, &q->chief_share.milli};
	for (size_t i = 0; i < 3; i++) {
		json_t *x = json_array_get(sh, i);
		if (!json_is_integer(x) || json_integer_value(x) < 0 ||
		    json_integer_value(x) > 1000)
			return bad(d, p, "shareMilli", "expected three integers in 0..1000");
		*milli[i] = (int32_t)json_integer_value(x);
	}
	return true;
}

static bool members_dec(struct dec *d, json_t *o, const char *path, const char *key, int n,
                        struct drake_round_member *m)
{
	json_t *a = get_arr(d, o, path, key, (size_t)n, true);
	if (!a)
		return false;
	for (int i = 0; i < n; i++) {
		char p[256];
		snprintf(p, sizeof(p), "%s.%s[%d]", path, key, i);
		json_t *x = json_array_get(a, (size_t)i);
		int st;
		if (!json_is_object(x))
			return bad(d, p, NULL, "expected an object");
		if (!get_enum(d, x, p, "state", state_name, 3, &st) ||
		    !get_i(d, x, p, "node", -1, (int)d->e->c.n - 1, &m[i].node) ||
		    !get_bool(d, x, p, "bound", &m[i].bound) ||
		    !get_bool(d, x, p, "finished", &m[i].finished) ||
		    !get_bool(d, x, p, "leaving", &m[i].leaving) ||
		    !get_num(d, x, p, "leavingBy", &m[i].leaving_by) ||
		    !get_num(d, x, p, "ended", &m[i].ended) ||
		    !get_str(d, x, p, "gang", true, &m[i].gang) ||
		    !get_i(d, x, p, "gangSize", 0, 1 << 20, &m[i].gang_size) ||
		    !get_str(d, x, p, "name", true, &m[i].name) ||
		    !get_str(d, x, p, "refused", true, &m[i].refused))
			return false;
		m[i].state = (enum drake_member_state)st;
	}
	return true;
}

static bool record_dec(struct dec *d, json_t *o, const char *path, struct drake_round_job *j)
{
	json_t *v = json_object_get(o, "record");
	if (!v)
		return true;
	char p[256];
	snprintf(p, sizeof(p), "%s.record", path);
	if (!json_is_object(v))
		return bad(d, p, NULL, "expected an object");
	struct drake_round_record *r = &j->rec;
	r->present = true;
	unsigned char *mem = block(d, (size_t)j->max_workers, 1);
	if (!mem || !get_str(d, v, p, "gang", true, &r->gang) ||
	    !get_i(d, v, p, "n", 0, j->max_workers, &r->n) || !get_num(d, v, p, "at", &r->at) ||
	    !get_str(d, v, p, "gaveTo", true, &r->gave_to))
		return false;
	json_t *m = get_arr(d, v, p, "member", 0, false), *x;
	size_t i;
	if (!m)
		return false;
	json_array_foreach (m, i, x) {
		if (!json_is_integer(x) || json_integer_value(x) < 0 ||
		    json_integer_value(x) >= j->max_workers)
			return bad(d, p, "member", "a worker index out of range");
		mem[json_integer_value(x)] = 1;
	}
	r->member = mem;
	json_t *pl = get_arr(d, v, p, "place", 0, false);
	if (!pl)
		return false;
	struct drake_round_place *place = block(d, json_array_size(pl), sizeof(*place));
	if (!place)
		return false;
	json_array_foreach (pl, i, x) {
		char pp[300];
		snprintf(pp, sizeof(pp), "%s.place[%zu]", p, i);
		if (!json_is_object(x))
			return bad(d, pp, NULL, "expected an object");
		if (!get_i(d, x, pp, "index", 0, j->max_workers - 1, &place[i].index) ||
		    !get_str(d, x, pp, "node", false, &place[i].node))
			return false;
	}
	r->place = place;
	r->n_place = (int)json_array_size(pl);
	return true;
}

/* in.opts.las: the tiresias policy's thresholds, interval and timer. */
static bool las_opts_dec(struct dec *d, json_t *v, struct drake_round_opts *o)
{
	const char *p = "in.opts.las";
	json_t *l = field(d, v, "in.opts", "las", JSON_OBJECT), *x;
	json_t *t = l ? get_arr(d, l, p, "thresholds", 0, false) : NULL;
	if (!t || !get_num(d, l, p, "promoteKnob", &o->las.promote_knob) ||
	    !get_num(d, l, p, "interval", &o->las_interval) ||
	    !get_num(d, l, p, "decided", &o->las_decided))
		return false;
	if (json_array_size(t) + 1 > DRAKE_LAS_MAX_QUEUES)
		return bad(d, p, "thresholds", "too many queues");
	o->las.n_queues = (int)json_array_size(t) + 1;
	size_t i;
	json_array_foreach (t, i, x) {
		if (!json_is_number(x))
			return bad(d, p, "thresholds", "expected numbers");
		o->las.threshold[i] = json_number_value(x);
	}
	return true;
}

/* The finished jobs' service (absent in the logs of drakes before it, and
 * while none is kept: empty). */
static bool history_dec(struct dec *d, json_t *v, struct drake_history *h)
{
	const char *p = "in.opts";
	json_t *a = get_arr(d, v, p, "history", 0, false), *x;
	if (!a)
		return false;
	if (json_array_size(a) > DRAKE_HISTORY_MAX)
		return bad(d, p, "history", "more entries than drake keeps");
	double *out = block(d, json_array_size(a), sizeof(double));
	if (!out)
		return false;
	size_t i;
	json_array_foreach (a, i, x) {
		if (!json_is_number(x) || !isfinite(json_number_value(x)))
			return bad(d, p, "history", "expected finite numbers");
		out[i] = json_number_value(x);
	}
	*h = (struct drake_history){out, json_array_size(a)};
	return true;
}

/* An optional "las" state of o (absent: not seen by the rule). */
static bool las_state_dec(struct dec *d, json_t *o, const char *path, struct drake_las_state *st)
{
	json_t *v = json_object_get(o, "las");
	if (!v)
		return true;
	char p[300];
	snprintf(p, sizeof(p), "%s.las", path);
	if (!json_is_object(v))
		return bad(d, p, NULL, "expected an object");
	st->seen = true;
	return get_i(d, v, p, "queue", 0, DRAKE_LAS_MAX_QUEUES - 1, &st->queue) &&
	       get_num(d, v, p, "entered", &st->entered) &&
	       get_num(d, v, p, "lastCheck", &st->last_check) &&
	       get_num(d, v, p, "executed", &st->executed) &&
	       get_num(d, v, p, "totalExecuted", &st->total_executed) &&
	       get_num(d, v, p, "pendingSinceRun", &st->pending_since_run);
}

static bool job_dec(struct dec *d, json_t *o, const char *path, struct drake_round_job *j)
{
	if (!json_is_object(o))
		return bad(d, path, NULL, "expected an object");
	j->progress = -1;
	if (!get_str(d, o, path, "name", false, &j->name) ||
	    !get_str(d, o, path, "uid", false, &j->uid) ||
	    !get_num(d, o, path, "created", &j->created) ||
	    !get_i(d, o, path, "maxWorkers", 0, 1 << 20, &j->max_workers) ||
	    !req_dec(d, o, path, &j->req) || !get_num(d, o, path, "admitted", &j->admitted) ||
	    !get_num(d, o, path, "progress", &j->progress) ||
	    !get_bool(d, o, path, "slow", &j->slow) ||
	    !get_num_inf(d, o, path, "changed", &j->changed))
		return false;
	size_t nm = (size_t)j->req.n_ps + (size_t)j->req.n_chief + (size_t)j->max_workers;
	struct drake_round_member *m = block(d, nm, sizeof(*m));
	if (!m)
		return false;
	j->ps = m;
	j->chief = m + j->req.n_ps;
	j->workers = j->chief + j->req.n_chief;
	if (!members_dec(d, o, path, "ps", j->req.n_ps, j->ps) ||
	    !members_dec(d, o, path, "chief", j->req.n_chief, j->chief) ||
	    !members_dec(d, o, path, "workers", j->max_workers, j->workers) ||
	    !record_dec(d, o, path, j))
		return false;
	char p[256];
	json_t *v = json_object_get(o, "move");
	if (v) {
		snprintf(p, sizeof(p), "%s.move", path);
		int role;
		if (!json_is_object(v))
			return bad(d, p, NULL, "expected an object");
		if (!get_enum(d, v, p, "role", role_name, DRAKE_NROLES, &role) ||
		    !get_i(d, v, p, "index", 0, 1 << 20, &j->move.index) ||
		    !get_str(d, v, p, "to", true, &j->move.to))
			return false;
		j->move.active = true;
		j->move.role = (enum drake_role)role;
	}
	if ((json_object_get(o, "service") && !get_num(d, o, path, "service", &j->service)) ||
	    !las_state_dec(d, o, path, &j->las))
		return false;
	/* a line written before jobs carried their kind's cost of a change has
	 * none: every job paid the global pause, as it replays */
	if ((v = json_object_get(o, "cost"))) {
		snprintf(p, sizeof(p), "%s.cost", path);
		if (!json_is_object(v))
			return bad(d, p, NULL, "expected an object");
		if (!get_num(d, v, p, "shrink", &j->cost.shrink) ||
		    !get_num(d, v, p, "grow", &j->cost.grow))
			return false;
	}
	if ((v = json_object_get(o, "obs"))) {
		snprintf(p, sizeof(p), "%s.obs", path);
		if (!json_is_array(v) || json_array_size(v) > DRAKE_SPEED_MAX_OBS)
			return bad(d, p, NULL, "expected an array of at most 8 observations");
		struct drake_speed_obs *ob = block(d, json_array_size(v), sizeof(*ob));
		if (!ob)
			return false;
		size_t i;
		json_t *x;
		json_array_foreach (v, i, x) {
			char pp[300];
			snprintf(pp, sizeof(pp), "%s[%zu]", p, i);
			if (!json_is_object(x))
				return bad(d, pp, NULL, "expected an object");
			if (!get_i(d, x, pp, "workers", 0, 1 << 20, &ob[i].workers) ||
			    !get_i(d, x, pp, "nodes", 0, 1 << 20, &ob[i].nodes) ||
			    !get_num(d, x, pp, "rate", &ob[i].rate))
				return false;
		}
		j->obs = ob;
		j->n_obs = (int)json_array_size(v);
	}
	if ((v = json_object_get(o, "refusal"))) {
		snprintf(p, sizeof(p), "%s.refusal", path);
		if (!json_is_object(v))
			return bad(d, p, NULL, "expected an object");
		if (!get_i(d, v, p, "tries", 1, 1 << 30, &j->refusal.tries) ||
		    !get_num(d, v, p, "at", &j->refusal.at_s) ||
		    !get_num(d, v, p, "until", &j->refusal.until_s) ||
		    !get_str(d, v, p, "pod", true, &j->refused_pod) ||
		    !get_str(d, v, p, "why", true, &j->refused_why))
			return false;
	}
	return true;
}

static bool nodes_dec(struct dec *d, json_t *in)
{
	struct drake_cluster *c = &d->e->c;
	json_t *names = get_arr(d, in, "in", "resources", 0, false), *x;
	size_t i;
	if (!names)
		return false;
	json_array_foreach (names, i, x) {
		if (!json_is_string(x) ||
		    drake_res_name_index(&c->names, json_string_value(x), true) != (int)i)
			return bad(d, "in", "resources", "expected distinct resource names");
	}
	json_t *nodes = get_arr(d, in, "in", "nodes", 0, false);
	if (!nodes)
		return false;
	struct drake_res *used = block(d, json_array_size(nodes), sizeof(*used));
	bool *sched = block(d, json_array_size(nodes), sizeof(*sched));
	if (!used || !sched)
		return false;
	json_array_foreach (nodes, i, x) {
		char p[64];
		snprintf(p, sizeof(p), "in.nodes[%zu]", i);
		const char *name;
		struct drake_res alloc = {0};
		if (!json_is_object(x))
			return bad(d, p, NULL, "expected an object");
		if (!get_str(d, x, p, "name", false, &name) || !res_dec(d, x, p, "alloc", &alloc) ||
		    !res_dec(d, x, p, "used", &used[i]) ||
		    !get_bool(d, x, p, "schedulable", &sched[i]))
			return false;
		char why[256];
		drake_err err = drake_cluster_add_node(c, name, &alloc, true, why, sizeof(why));
		if (err == DRAKE_ENOMEM)
			return (d->err = drake_errorf(err, d->msg, d->len, "out of memory")), false;
		if (err)
			return bad(d, p, "name", why);
	}
	char why[256];
	if (drake_cluster_sort(c, why, sizeof(why)))
		return bad(d, "in", "nodes", why);
	json_array_foreach (nodes, i, x) {
		char p[64];
		snprintf(p, sizeof(p), "in.nodes[%zu]", i);
		if (strcmp(c->nodes[i].name, json_string_value(json_object_get(x, "name"))) != 0)
			return bad(d, p, "name", "nodes not sorted by name");
		struct drake_node *n = &c->nodes[i];
		if (!get_bool(d, x, p, "tainted", &n->tainted) ||
		    !get_int(d, x, p, "gpuMem", 0, INT64_MAX, &n->gpu_mem))
			return false;
		drake_cluster_charge(c, i, &used[i], 1);
		drake_cluster_set_schedulable(c, i, sched[i]);
	}
	return true;
}

static const char *queue_name(int i)
{
	return drake_queue_order_name((enum drake_queue_order)i);
}

static bool opts_dec(struct dec *d, json_t *in)
{
	struct drake_round_opts *o = &d->e->opts;
	struct drake_scale_opts *s = &o->scale;
	json_t *v = field(d, in, "in", "opts", JSON_OBJECT);
	const char *p = "in.opts";
	int order, policy;
	int64_t budget, unbound;
	if (!v || !get_enum(d, v, p, "policy", policy_name, DRAKE_POLICY_TIRESIAS + 1, &policy) ||
	    !get_num(d, v, p, "dragonLastAction", &o->dragon_last_action) ||
	    !get_bool(d, v, p, "backfill", &s->backfill) ||
	    !get_num(d, v, p, "starveAfter", &s->starve_after) ||
	    !get_num(d, v, p, "idleAfter", &s->idle_after) ||
	    !get_i(d, v, p, "shrinkTries", 0, 1 << 20, &s->shrink_tries) ||
	    !get_enum(d, v, p, "victimOrder", order_name, DRAKE_VICTIM_MOST_LEFT + 1, &order) ||
	    !get_bool(d, v, p, "lonelyFirst", &s->shrink.lonely_first) ||
	    !get_num(d, v, p, "endingHold", &s->ending_hold) ||
	    !get_num(d, v, p, "keepWindow", &s->keep_window) ||
	    !get_int(d, v, p, "paceBudget", INT64_MIN, INT64_MAX, &budget) ||
	    !get_int(d, v, p, "paceUnbound", INT64_MIN, INT64_MAX, &unbound))
		return false;
	o->policy = (enum drake_round_policy)policy;
	s->shrink.order = (enum drake_victim_order)order;
	o->pace_budget = (long)budget;
	o->pace_unbound = (long)unbound;
	/* absent in the logs of drakes before them: FIFO, no threshold, every
	 * job starting narrow */
	int queue = DRAKE_QUEUE_FIFO;
	s->start_narrow = true;
	if (json_object_get(v, "startNarrow") &&
	    !get_bool(d, v, p, "startNarrow", &s->start_narrow))
		return false;
	if ((json_object_get(v, "queueOrder") &&
	     !get_enum(d, v, p, "queueOrder", queue_name, DRAKE_QUEUE_PACK + 1, &queue)) ||
	    (json_object_get(v, "ageAfter") && !get_num(d, v, p, "ageAfter", &s->age_after)) ||
	    (json_object_get(v, "serviceThreshold") &&
	     !get_num(d, v, p, "serviceThreshold", &s->service_threshold)))
		return false;
	s->queue = (enum drake_queue_order)queue;
	if (o->policy == DRAKE_POLICY_TIRESIAS && !las_opts_dec(d, v, o))
		return false;
	if (json_object_get(v, "history") && !history_dec(d, v, &s->history))
		return false;
	json_t *sp = field(d, v, p, "speed", JSON_OBJECT);
	return sp && get_num(d, sp, "in.opts.speed", "scalingLoss", &s->speed.scaling_loss) &&
	       get_num(d, sp, "in.opts.speed", "localityPenalty", &s->speed.locality_penalty) &&
	       get_num(d, sp, "in.opts.speed", "rescalePause", &s->speed.rescale_pause) &&
	       get_i(d, sp, "in.opts.speed", "nodeGpus", 0, 1 << 20, &s->speed.node_gpus);
}

static bool action_dec(struct dec *d, json_t *x, const char *p, struct drake_round_action *a)
{
	int kind, reason, job;
	a->for_job = -1;
	if (!json_is_object(x))
		return bad(d, p, NULL, "expected an object");
	if (!get_enum(d, x, p, "kind", kind_name, DRAKE_ROUND_PREEMPT + 1, &kind) ||
	    !get_enum(d, x, p, "reason", reason_name, DRAKE_NREASONS, &reason) ||
	    !get_i(d, x, p, "job", 0, (int)d->e->n - 1, &job) ||
	    !copy_str(d, x, p, "why", a->why, sizeof(a->why)))
		return false;
	a->kind = (enum drake_round_kind)kind;
	a->reason = (enum drake_round_reason)reason;
	a->job = job;
	int max_workers = d->e->jobs[job].max_workers;
	char pp[128];
	json_t *v = json_object_get(x, "gang");
	if (v) {
		snprintf(pp, sizeof(pp), "%s.gang", p);
		if (!json_is_object(v))
			return bad(d, pp, NULL, "expected an object");
		if (!copy_str(d, v, pp, "id", a->gang, sizeof(a->gang)) ||
		    !get_i(d, v, pp, "size", 0, 1 << 20, &a->size))
			return false;
	}
	json_t *pods = get_arr(d, x, p, "pods", 0, false), *y;
	size_t i;
	if (!pods)
		return false;
	a->pods = calloc(json_array_size(pods) ? json_array_size(pods) : 1, sizeof(*a->pods));
	if (!a->pods)
		return (d->err = drake_errorf(DRAKE_ENOMEM, d->msg, d->len, "out of memory")),
		       false;
	a->n_pods = (int)json_array_size(pods);
	json_array_foreach (pods, i, y) {
		snprintf(pp, sizeof(pp), "%s.pods[%zu]", p, i);
		int role;
		if (!json_is_object(y))
			return bad(d, pp, NULL, "expected an object");
		if (!get_enum(d, y, pp, "role", role_name, DRAKE_NROLES, &role) ||
		    !get_i(d, y, pp, "index", 0, 1 << 20, &a->pods[i].index) ||
		    !get_i(d, y, pp, "node", -1, (int)d->e->c.n - 1, &a->pods[i].node) ||
		    !copy_str(d, y, pp, "gpuid", a->pods[i].gpuid, sizeof(a->pods[i].gpuid)))
			return false;
		a->pods[i].role = (enum drake_role)role;
	}
	if ((v = json_object_get(x, "member"))) {
		if (!json_is_array(v))
			return bad(d, p, "member", "expected an array");
		if (!(a->member = calloc((size_t)max_workers + 1, 1)))
			return (d->err =
			            drake_errorf(DRAKE_ENOMEM, d->msg, d->len, "out of memory")),
			       false;
		json_array_foreach (v, i, y) {
			if (!json_is_integer(y) || json_integer_value(y) < 0 ||
			    json_integer_value(y) >= max_workers)
				return bad(d, p, "member", "a worker index out of range");
			a->member[json_integer_value(y)] = 1;
		}
	}
	if (json_object_get(x, "forJob") &&
	    !get_i(d, x, p, "forJob", 0, (int)d->e->n - 1, &a->for_job))
		return false;
	if (a->kind == DRAKE_ROUND_GROW && !get_num(d, x, p, "gain", &a->gain))
		return false;
	if (a->kind == DRAKE_ROUND_HOLD) {
		int st;
		if (!get_enum(d, x, p, "status", status_name, DRAKE_ADMIT_INVALID + 1, &st) ||
		    !get_bool(d, x, p, "quiet", &a->quiet))
			return false;
		a->status = (enum drake_admit_status)st;
	}
	return true;
}

static bool out_dec(struct dec *d, json_t *line)
{
	struct drake_round *r = &d->e->out;
	r->reserved_for = -1;
	json_t *out = field(d, line, "", "out", JSON_OBJECT);
	int64_t held;
	if (!out || !get_num_inf(d, out, "out", "next", &r->next) ||
	    !get_int(d, out, "out", "held", 0, INT64_MAX, &held) ||
	    !get_num(d, out, "out", "dragonLastAction", &r->dragon_last_action) ||
	    (json_object_get(out, "lasDecided") &&
	     !get_num(d, out, "out", "lasDecided", &r->las_decided)))
		return false;
	r->held = (size_t)held;
	json_t *acts = get_arr(d, out, "out", "actions", 0, false), *x;
	json_t *st = get_arr(d, out, "out", "jobs", d->e->n, true);
	if (!acts || !st)
		return false;
	size_t na = json_array_size(acts), i;
	if (!(r->act = calloc(na ? na : 1, sizeof(*r->act))) ||
	    !(r->jobs = calloc(d->e->n ? d->e->n : 1, sizeof(*r->jobs))))
		return (d->err = drake_errorf(DRAKE_ENOMEM, d->msg, d->len, "out of memory")),
		       false;
	r->n_jobs = d->e->n;
	json_array_foreach (acts, i, x) {
		char p[64];
		snprintf(p, sizeof(p), "out.actions[%zu]", i);
		r->n = i + 1;
		if (!action_dec(d, x, p, &r->act[i]))
			return false;
	}
	json_array_foreach (st, i, x) {
		char p[64];
		snprintf(p, sizeof(p), "out.jobs[%zu]", i);
		struct drake_round_status *s = &r->jobs[i];
		int cls;
		if (!json_is_object(x))
			return bad(d, p, NULL, "expected an object");
		if (!get_enum(d, x, p, "class", class_name, DRAKE_CLASS_RUNNING + 1, &cls) ||
		    !get_i(d, x, p, "members", 0, 1 << 20, &s->members) ||
		    !get_bool(d, x, p, "scalable", &s->scalable) ||
		    !get_bool(d, x, p, "running", &s->running) ||
		    !get_num(d, x, p, "lastScaled", &s->last_scaled) ||
		    !get_bool(d, x, p, "gaveToWaiting", &s->gave_to_waiting) ||
		    !get_bool(d, x, p, "record", &s->record) ||
		    !copy_str(d, x, p, "gang", s->gang, sizeof(s->gang)) ||
		    !las_state_dec(d, x, p, &s->las))
			return false;
		s->cls = (enum drake_round_class)cls;
	}
	return true;
}

drake_err round_log_decode(const char *line, struct round_log_entry *e, char *msg, size_t len)
{
	memset(e, 0, sizeof(*e));
	drake_cluster_init(&e->c);
	struct dec d = {.e = e, .msg = msg, .len = len};
	json_error_t jerr;
	json_t *root = json_loads(line, JSON_REJECT_DUPLICATES, &jerr);
	if (!root)
		return drake_errorf(DRAKE_EINVAL, msg, len, "not JSON: %s (column %d)", jerr.text,
		                    jerr.column);
	e->root = root;
	json_t *in = NULL, *jobs = NULL;
	if (!json_is_object(root))
		bad(&d, "line", NULL, "expected an object");
	else if (get_num(&d, root, "", "now", &e->now) &&
	         (in = field(&d, root, "", "in", JSON_OBJECT)) && nodes_dec(&d, in) &&
	         opts_dec(&d, in) && (jobs = get_arr(&d, in, "in", "jobs", 0, false))) {
		e->n = json_array_size(jobs);
		e->jobs = block(&d, e->n, sizeof(*e->jobs));
		for (size_t i = 0; e->jobs && i < e->n && !d.err; i++) {
			char p[64];
			snprintf(p, sizeof(p), "in.jobs[%zu]", i);
			job_dec(&d, json_array_get(jobs, i), p, &e->jobs[i]);
		}
		if (!d.err)
			out_dec(&d, root);
	}
	if (d.err)
		round_log_entry_release(e);
	return d.err;
}

void round_log_entry_release(struct round_log_entry *e)
{
	if (!e)
		return;
	drake_round_release(&e->out);
	drake_cluster_release(&e->c);
	for (size_t i = 0; i < e->n_blocks; i++)
		free(e->blocks[i]);
	free(e->blocks);
	json_decref(e->root);
	memset(e, 0, sizeof(*e));
}
