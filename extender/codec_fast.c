/*
 * codec_fast.c - the hot path of ext_args_decode(): a streaming pass with
 * yajl over an ExtenderArgs body in node-name mode, which is what
 * kube-scheduler sends on every filter and prioritize call of a
 * nodeCacheCapable extender.
 *
 * Building a jansson tree for 5,000 node names and copying them out costs
 * milliseconds; streaming them straight into the name array costs a tenth of
 * that (see make bench-extender). The pass accepts only the plain, valid
 * shape. Anything else (full Node objects, a type error, a limit hit, a NUL
 * in a string, a duplicate key) makes it step aside, and the jansson decoder
 * in codec.c decides and writes the error message: one source of truth for
 * what is accepted and what the messages say.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yajl/yajl_parse.h>

#include "extender/codec.h"
#include "extender/codec_internal.h"
#include "gang/protocol.h"

/* Where in the document the parser stands. */
enum where {
	AT_TOP,         /* the root object, expecting a key */
	AT_POD,         /* directly in Pod */
	AT_META,        /* in Pod.metadata */
	AT_LABELS,      /* in Pod.metadata.labels */
	AT_ANNOTATIONS, /* in Pod.metadata.annotations */
	AT_OWNERS,      /* in the Pod.metadata.ownerReferences array */
	AT_OWNER,       /* in one of its entries */
	AT_NAMES,       /* in the NodeNames array */
	AT_SKIP,        /* inside a value drake ignores */
};

enum field {
	F_NONE,
	F_POD,
	F_NODES,
	F_NODENAMES,
	F_METADATA,
	F_NAME,
	F_NAMESPACE,
	F_UID,
	F_LABELS,
	F_ANNOTATIONS,
	F_KEEP, /* a drake.dev/ annotation whose value comes next */
	F_OWNERS,
	F_OWNER_UID,
	F_OWNER_CONTROLLER,
	F_OTHER,
};

/* jansson refuses documents nested deeper than this; so does the fast pass. */
#define FAST_MAX_DEPTH 2000

struct fast {
	const struct ext_limits *lim;
	struct ext_args *out;
	enum where where;
	enum field pending;     /* the key whose value comes next */
	int skip_depth;         /* nesting inside an ignored value */
	enum where skip_return; /* where to go back to after it */
	char *label_key;        /* key of the label whose value comes next */
	size_t names_cap;
	unsigned seen; /* bit per field, to refuse duplicates */
	bool bail;
	yajl_handle h;
	size_t arena_used, arena_cap;
	size_t root_end; /* offset just past the root object's closing brace */
	/* the ownerReferences entry being read */
	char *ref_uid;
	bool ref_controller;
	unsigned ref_seen;
};

#define SEEN(f) (1u << (f))

static int step_aside(struct fast *f)
{
	f->bail = true;
	return 0; /* stops yajl */
}

static bool key_is(const unsigned char *k, size_t len, const char *want, bool any_case)
{
	return strlen(want) == len && (any_case ? strncasecmp((const char *)k, want, len) == 0
	                                        : memcmp(k, want, len) == 0);
}

/* A scalar or an opened container as the value of the pending key. */
static int value_done(struct fast *f)
{
	f->pending = F_NONE;
	return 1;
}

static int enter_skip(struct fast *f)
{
	f->skip_return = f->where;
	f->where = AT_SKIP;
	f->skip_depth = 1;
	f->pending = F_NONE;
	return 1;
}

static char *dup_checked(struct fast *f, const unsigned char *s, size_t len)
{
	if (len > f->lim->max_name_len)
		return NULL;
	char *d = malloc(len + 1);
	if (d) {
		memcpy(d, s, len);
		d[len] = '\0';
	}
	return d;
}

static int on_scalar(void *ctx)
{
	struct fast *f = ctx;
	if (f->where == AT_SKIP)
		return 1;
	if (f->where == AT_NAMES || f->where == AT_LABELS || f->where == AT_OWNERS)
		return step_aside(f);
	if (f->pending == F_OTHER)
		return value_done(f);
	return step_aside(f); /* a number or boolean where drake wants a string or object */
}

static int on_null(void *ctx)
{
	struct fast *f = ctx;
	if (f->where == AT_NAMES || f->where == AT_OWNERS)
		return step_aside(f);
	if (f->where == AT_LABELS || f->where == AT_ANNOTATIONS) {
		/* a null value: absent, like jansson's path */
		free(f->label_key);
		f->label_key = NULL;
		return value_done(f);
	}
	if (f->pending == F_POD || f->pending == F_NODENAMES)
		return step_aside(f); /* absent: the full decoder names what is missing */
	return value_done(f);
}

static int on_bool(void *ctx, int b)
{
	struct fast *f = ctx;
	if (f->where == AT_OWNER && f->pending == F_OWNER_CONTROLLER) {
		f->ref_controller = b;
		return value_done(f);
	}
	return on_scalar(ctx);
}

/* jansson refuses integers beyond 64 bits and reals that overflow; match it. */
static int on_number(void *ctx, const char *s, size_t len)
{
	char buf[64];
	if (len >= sizeof(buf))
		return step_aside(ctx);
	memcpy(buf, s, len);
	buf[len] = '\0';
	char *end;
	errno = 0;
	if (strpbrk(buf, ".eE")) {
		double d = strtod(buf, &end);
		if (errno == ERANGE && (d > 1 || d < -1))
			return step_aside(ctx);
	} else {
		(void)strtoll(buf, &end, 10);
		if (errno == ERANGE)
			return step_aside(ctx);
	}
	return on_scalar(ctx);
}

static int on_string(void *ctx, const unsigned char *s, size_t len)
{
	struct fast *f = ctx;
	struct ext_args *a = f->out;
	char **slot = NULL;
	if (memchr(s, '\0', len))
		return step_aside(f); /* jansson refuses NUL in any string */
	switch (f->where) {
	case AT_SKIP: return 1;
	case AT_NAMES:
		if (a->n_nodes >= f->lim->max_nodes)
			return step_aside(f);
		if (a->n_nodes == f->names_cap) {
			size_t cap = f->names_cap ? f->names_cap * 2 : 256;
			char **p = realloc(a->node_names, cap * sizeof(*p));
			if (!p)
				return step_aside(f);
			a->node_names = p;
			f->names_cap = cap;
		}
		/* Names go into one arena as long as the body: every name took
		 * at least its length plus two quotes there. */
		if (len == 0 || len > f->lim->max_name_len ||
		    f->arena_used + len + 1 > f->arena_cap)
			return step_aside(f);
		char *name = a->names_arena + f->arena_used;
		memcpy(name, s, len);
		name[len] = '\0';
		f->arena_used += len + 1;
		a->node_names[a->n_nodes] = name;
		a->n_nodes++;
		return 1;
	case AT_LABELS: {
		if (!f->label_key || a->pod.n_labels >= f->lim->max_labels)
			return step_aside(f);
		for (size_t i = 0; i < a->pod.n_labels; i++)
			if (strcmp(a->pod.labels[i].key, f->label_key) == 0)
				return step_aside(f); /* duplicate: jansson's last-wins decides */
		struct ext_label *l = realloc(a->pod.labels, (a->pod.n_labels + 1) * sizeof(*l));
		if (!l)
			return step_aside(f);
		a->pod.labels = l;
		char *v = malloc(len + 1);
		if (!v || memchr(s, '\0', len)) {
			free(v);
			return step_aside(f);
		}
		memcpy(v, s, len);
		v[len] = '\0';
		l[a->pod.n_labels].key = f->label_key;
		l[a->pod.n_labels].value = v;
		a->pod.n_labels++;
		f->label_key = NULL;
		return 1;
	}
	case AT_ANNOTATIONS: {
		if (f->pending != F_KEEP)
			return value_done(f); /* not drake's */
		if (a->pod.n_annotations >= f->lim->max_labels)
			return step_aside(f);
		for (size_t i = 0; i < a->pod.n_annotations; i++)
			if (strcmp(a->pod.annotations[i].key, f->label_key) == 0)
				return step_aside(f);
		struct ext_label *l =
		    realloc(a->pod.annotations, (a->pod.n_annotations + 1) * sizeof(*l));
		if (!l)
			return step_aside(f);
		a->pod.annotations = l;
		char *v = malloc(len + 1);
		if (!v)
			return step_aside(f);
		memcpy(v, s, len);
		v[len] = '\0';
		l[a->pod.n_annotations].key = f->label_key;
		l[a->pod.n_annotations].value = v;
		a->pod.n_annotations++;
		f->label_key = NULL;
		return value_done(f);
	}
	case AT_OWNERS: return step_aside(f); /* an entry that is not an object */
	case AT_OWNER:
		if (f->pending == F_OWNER_UID) {
			if (!(f->ref_uid = dup_checked(f, s, len)))
				return step_aside(f);
			return value_done(f);
		}
		if (f->pending == F_OTHER)
			return value_done(f);
		return step_aside(f); /* "controller" as a string */
	case AT_META:
		if (f->pending == F_NAME)
			slot = &a->pod.name;
		else if (f->pending == F_NAMESPACE)
			slot = &a->pod.ns;
		else if (f->pending == F_UID)
			slot = &a->pod.uid;
		if (slot) {
			if (!(*slot = dup_checked(f, s, len)))
				return step_aside(f);
		} else if (f->pending != F_OTHER) {
			return step_aside(f);
		}
		return value_done(f);
	default:
		if (f->pending == F_OTHER)
			return value_done(f);
		return step_aside(f); /* Pod, NodeNames or metadata given as a string */
	}
}

static int on_map_key(void *ctx, const unsigned char *k, size_t len)
{
	struct fast *f = ctx;
	enum field fl = F_OTHER;
	if (memchr(k, '\0', len))
		return step_aside(f);
	switch (f->where) {
	case AT_SKIP: return 1;
	case AT_TOP:
		if (key_is(k, len, "Pod", true))
			fl = F_POD;
		else if (key_is(k, len, "NodeNames", true))
			fl = F_NODENAMES;
		else if (key_is(k, len, "Nodes", true))
			fl = F_NODES;
		break;
	case AT_POD:
		if (key_is(k, len, "metadata", true))
			fl = F_METADATA;
		break;
	case AT_META:
		if (key_is(k, len, "name", true))
			fl = F_NAME;
		else if (key_is(k, len, "namespace", true))
			fl = F_NAMESPACE;
		else if (key_is(k, len, "uid", true))
			fl = F_UID;
		else if (key_is(k, len, "labels", true))
			fl = F_LABELS;
		else if (key_is(k, len, "annotations", true))
			fl = F_ANNOTATIONS;
		else if (key_is(k, len, "ownerReferences", true))
			fl = F_OWNERS;
		break;
	case AT_OWNER:
		if (key_is(k, len, "uid", true))
			fl = F_OWNER_UID;
		else if (key_is(k, len, "controller", true))
			fl = F_OWNER_CONTROLLER;
		if (fl != F_OTHER) {
			if (f->ref_seen & SEEN(fl))
				return step_aside(f); /* duplicate: last-wins is jansson's */
			f->ref_seen |= SEEN(fl);
		}
		f->pending = fl;
		return 1;
	case AT_ANNOTATIONS: {
		size_t plen = strlen(DRAKE_ANNOTATION_PREFIX);
		free(f->label_key);
		f->label_key = NULL;
		if (len < plen || memcmp(k, DRAKE_ANNOTATION_PREFIX, plen) != 0) {
			f->pending = F_OTHER;
			return 1;
		}
		if (!(f->label_key = malloc(len + 1)))
			return step_aside(f);
		memcpy(f->label_key, k, len);
		f->label_key[len] = '\0';
		f->pending = F_KEEP;
		return 1;
	}
	case AT_LABELS:
		free(f->label_key);
		f->label_key = malloc(len + 1);
		if (!f->label_key || memchr(k, '\0', len))
			return step_aside(f);
		memcpy(f->label_key, k, len);
		f->label_key[len] = '\0';
		return 1;
	default: return step_aside(f);
	}
	if (fl != F_OTHER) {
		unsigned bit = SEEN(fl) << (f->where == AT_META ? 8 : 0);
		if (f->seen & bit)
			return step_aside(f); /* duplicate key: leave last-wins to jansson */
		f->seen |= bit;
	}
	f->pending = fl;
	return 1;
}

static int on_start_map(void *ctx)
{
	struct fast *f = ctx;
	if (f->where == AT_SKIP)
		return ++f->skip_depth > FAST_MAX_DEPTH ? step_aside(f) : 1;
	if (f->where == AT_TOP && f->pending == F_NONE && !(f->seen & SEEN(F_NONE))) {
		f->seen |= SEEN(F_NONE); /* the root object itself */
		return 1;
	}
	if (f->where == AT_TOP && f->pending == F_POD) {
		f->where = AT_POD;
		return value_done(f);
	}
	if (f->where == AT_POD && f->pending == F_METADATA) {
		f->where = AT_META;
		return value_done(f);
	}
	if (f->where == AT_META && f->pending == F_LABELS) {
		f->where = AT_LABELS;
		return value_done(f);
	}
	if (f->where == AT_META && f->pending == F_ANNOTATIONS) {
		f->where = AT_ANNOTATIONS;
		return value_done(f);
	}
	if (f->where == AT_OWNERS) {
		f->where = AT_OWNER;
		f->ref_uid = NULL;
		f->ref_controller = false;
		f->ref_seen = 0;
		return 1;
	}
	if (f->pending == F_OTHER)
		return enter_skip(f);
	return step_aside(f); /* e.g. "Nodes": {...}: full-Node mode */
}

static int on_end_map(void *ctx)
{
	struct fast *f = ctx;
	switch (f->where) {
	case AT_SKIP:
		if (--f->skip_depth == 0)
			f->where = f->skip_return;
		return 1;
	case AT_LABELS:
	case AT_ANNOTATIONS: f->where = AT_META; return 1;
	case AT_OWNER:
		f->where = AT_OWNERS;
		/* The first controller is the owner; its uid must be there. */
		if (f->ref_controller && !f->out->pod.owner_uid) {
			if (!f->ref_uid || !f->ref_uid[0])
				return step_aside(f);
			f->out->pod.owner_uid = f->ref_uid;
			f->ref_uid = NULL;
		}
		free(f->ref_uid);
		f->ref_uid = NULL;
		return 1;
	case AT_META: f->where = AT_POD; return 1;
	case AT_POD: f->where = AT_TOP; return 1;
	default:
		/* The root closed. yajl treats a token cut off by the end of input
		 * as "more may come" rather than trailing garbage, so where the
		 * document ends is checked by hand (see codec_args_decode_fast). */
		f->root_end = yajl_get_bytes_consumed(f->h);
		return 1;
	}
}

static int on_start_array(void *ctx)
{
	struct fast *f = ctx;
	if (f->where == AT_SKIP)
		return ++f->skip_depth > FAST_MAX_DEPTH ? step_aside(f) : 1;
	if (f->where == AT_TOP && f->pending == F_NODENAMES) {
		f->where = AT_NAMES;
		f->out->node_cache_mode = true;
		return value_done(f);
	}
	if (f->where == AT_META && f->pending == F_OWNERS) {
		f->where = AT_OWNERS;
		return value_done(f);
	}
	if (f->pending == F_OTHER)
		return enter_skip(f);
	return step_aside(f);
}

static int on_end_array(void *ctx)
{
	struct fast *f = ctx;
	if (f->where == AT_SKIP) {
		if (--f->skip_depth == 0)
			f->where = f->skip_return;
	} else if (f->where == AT_NAMES) {
		f->where = AT_TOP;
	} else if (f->where == AT_OWNERS) {
		f->where = AT_META;
	}
	return 1;
}

static const yajl_callbacks callbacks = {
    .yajl_null = on_null,
    .yajl_boolean = on_bool,
    .yajl_number = on_number,
    .yajl_string = on_string,
    .yajl_start_map = on_start_map,
    .yajl_map_key = on_map_key,
    .yajl_end_map = on_end_map,
    .yajl_start_array = on_start_array,
    .yajl_end_array = on_end_array,
};

/*
 * yajl checks that strings are UTF-8 by shape only, and maps a lone
 * surrogate escape to '?'; jansson refuses overlong forms, surrogates and
 * code points past U+10FFFF, written raw or as \u escapes. Bodies with any of
 * those go to jansson. (JSON allows non-ASCII only inside strings, so the
 * whole body can be checked in one pass; for ASCII it is a high-bit test.)
 */
/* Whether the 8 bytes at p are all printable ASCII other than '\\', the
 * bytes plain_text() passes without a second look. Each test may flag a
 * word that holds no such byte (a borrow running on), never the reverse; a
 * flagged word is only looked at byte by byte. */
static bool word_plain(const unsigned char *p)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	uint64_t x;
	memcpy(&x, p, sizeof(x));
	uint64_t control = (x - ones * 0x20) & ~x & highs;
	uint64_t b = x ^ (ones * '\\');
	uint64_t backslash = (b - ones) & ~b & highs;
	return ((x & highs) | control | backslash) == 0;
}

static bool plain_text(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		if (n - i >= 8 && word_plain(s + i)) {
			i += 8;
			continue;
		}
		unsigned char c = s[i];
		if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
			return false; /* yajl takes \f and \v as white space; JSON does not */
		if (c < 0x80) {
			if (c == '\\' && i + 3 < n && s[i + 1] == 'u' && (s[i + 2] | 0x20) == 'd' &&
			    ((s[i + 3] >= '8' && s[i + 3] <= '9') ||
			     ((s[i + 3] | 0x20) >= 'a' && (s[i + 3] | 0x20) <= 'f')))
				return false; /* an escaped surrogate */
			i += c == '\\' ? 2 : 1;
			continue;
		}
		size_t need = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : 1;
		if (c < 0xc2 || c > 0xf4)
			return false;
		unsigned cp = c & (0x3f >> need);
		for (size_t k = 1; k <= need; k++) {
			if (i + k >= n || (s[i + k] & 0xc0) != 0x80)
				return false;
			cp = (cp << 6) | (s[i + k] & 0x3f);
		}
		if ((need == 2 && cp < 0x800) || (need == 3 && cp < 0x10000) || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += need + 1;
	}
	return true;
}

bool codec_args_decode_fast(const char *body, size_t len, const struct ext_limits *lim,
                            struct ext_args *out)
{
	memset(out, 0, sizeof(*out));
	if (!plain_text((const unsigned char *)body, len))
		return false;
	struct fast f = {.lim = lim, .out = out, .where = AT_TOP};
	yajl_handle h = yajl_alloc(&callbacks, NULL, &f);
	if (!h)
		return false;
	f.h = h;
	f.arena_cap = len + 1;
	if (!(out->names_arena = malloc(f.arena_cap))) {
		yajl_free(h);
		return false;
	}
	bool ok = yajl_parse(h, (const unsigned char *)body, len) == yajl_status_ok &&
	          yajl_complete_parse(h) == yajl_status_ok && !f.bail && f.root_end > 0;
	yajl_free(h);
	for (size_t i = f.root_end; ok && i < len; i++)
		ok = body[i] == ' ' || body[i] == '\t' || body[i] == '\n' || body[i] == '\r';
	free(f.label_key);
	free(f.ref_uid);
	/* Only the complete, plain shape is taken; the rest goes to jansson. */
	ok = ok && out->pod.name && out->pod.name[0] && out->node_cache_mode &&
	     (f.seen & SEEN(F_NODENAMES));
	if (ok && !out->pod.ns)
		ok = (out->pod.ns = strdup("default")) != NULL;
	else if (ok && !out->pod.ns[0]) {
		free(out->pod.ns);
		ok = (out->pod.ns = strdup("default")) != NULL;
	}
	if (ok && !out->pod.uid)
		ok = (out->pod.uid = strdup("")) != NULL;
	if (ok && !out->pod.owner_uid)
		ok = (out->pod.owner_uid = strdup("")) != NULL;
	if (ok && !out->node_names)
		ok = (out->node_names = calloc(1, sizeof(char *))) != NULL;
	if (!ok)
		ext_args_release(out);
	return ok;
}

static bool str_eq(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

bool codec_args_equal(const struct ext_args *a, const struct ext_args *b)
{
	if (a->node_cache_mode != b->node_cache_mode || a->n_nodes != b->n_nodes ||
	    a->pod.n_labels != b->pod.n_labels || !str_eq(a->pod.name, b->pod.name) ||
	    !str_eq(a->pod.ns, b->pod.ns) || !str_eq(a->pod.uid, b->pod.uid) ||
	    !str_eq(a->pod.owner_uid, b->pod.owner_uid))
		return false;
	for (size_t i = 0; i < a->n_nodes; i++)
		if (!str_eq(a->node_names[i], b->node_names[i]))
			return false;
	for (size_t i = 0; i < a->pod.n_labels; i++)
		if (!str_eq(ext_pod_label(&b->pod, a->pod.labels[i].key), a->pod.labels[i].value))
			return false;
	if (a->pod.n_annotations != b->pod.n_annotations)
		return false;
	for (size_t i = 0; i < a->pod.n_annotations; i++)
		if (!str_eq(ext_pod_annotation(&b->pod, a->pod.annotations[i].key),
		            a->pod.annotations[i].value))
			return false;
	return true;
}
