/*
 * kubeconfig.c - reads credentials for the API server: a kubeconfig file
 * (the subset kubectl writes: current-context, clusters, users, contexts)
 * parsed with libyaml's document loader, or the in-cluster service account.
 *
 * Ownership: every string in struct kube_config is malloc'd here and freed
 * by kube_config_release(); on any failure the output is released before
 * returning, so callers never free a half-filled config.
 */
#include "kube/kubeconfig.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/evp.h>
#include <yaml.h>

void kube_config_release(struct kube_config *cfg)
{
	if (!cfg)
		return;
	free(cfg->server);
	free(cfg->ca_file);
	free(cfg->ca_data);
	free(cfg->client_cert_file);
	free(cfg->client_cert_data);
	free(cfg->client_key_file);
	free(cfg->client_key_data);
	free(cfg->token);
	free(cfg->token_file);
	memset(cfg, 0, sizeof(*cfg));
}

static bool is_b64(unsigned char ch)
{
	return isalnum(ch) || ch == '+' || ch == '/';
}

drake_err kube_base64_decode_text(const char *in, size_t len, char **out, char *msg, size_t msglen)
{
	*out = NULL;
	char *clean = malloc(len + 1);
	if (!clean)
		return drake_errorf(DRAKE_ENOMEM, msg, msglen, "out of memory decoding base64");
	size_t n = 0, pad = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)in[i];
		if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r')
			continue;
		if (ch == '=') {
			pad++;
		} else if (!is_b64(ch) || pad > 0) {
			free(clean);
			return drake_errorf(DRAKE_EINVAL, msg, msglen,
			                    "invalid base64: unexpected character at offset %zu",
			                    i);
		}
		clean[n++] = (char)ch;
	}
	if (n == 0 || n % 4 != 0 || pad > 2) {
		free(clean);
		return drake_errorf(DRAKE_EINVAL, msg, msglen,
		                    "invalid base64: length %zu is not a non-zero multiple of 4",
		                    n);
	}
	if (n / 4 > (size_t)(KUBE_CONFIG_MAX_BYTES / 3 * 4)) {
		free(clean);
		return drake_errorf(DRAKE_ELIMIT, msg, msglen, "base64 field too long");
	}
	unsigned char *dec = malloc(n / 4 * 3 + 1);
	if (!dec) {
		free(clean);
		return drake_errorf(DRAKE_ENOMEM, msg, msglen, "out of memory decoding base64");
	}
	int got = EVP_DecodeBlock(dec, (const unsigned char *)clean, (int)n);
	free(clean);
	if (got < 0 || (size_t)got < pad) {
		free(dec);
		return drake_errorf(DRAKE_EINVAL, msg, msglen, "invalid base64");
	}
	size_t dlen = (size_t)got - pad; /* EVP_DecodeBlock counts padding as output */
	if (memchr(dec, '\0', dlen)) {
		free(dec);
		return drake_errorf(DRAKE_EINVAL, msg, msglen,
		                    "decoded base64 contains NUL bytes (expected PEM text)");
	}
	dec[dlen] = '\0';
	*out = (char *)dec;
	return DRAKE_OK;
}

/* ---- YAML document helpers ---- */

static const char *scalar(yaml_document_t *doc, yaml_node_t *n, size_t *len)
{
	if (!n || n->type != YAML_SCALAR_NODE)
		return NULL;
	if (len)
		*len = n->data.scalar.length;
	return (const char *)n->data.scalar.value;
}

/* The value under key in a mapping node, or NULL. First match wins. */
static yaml_node_t *map_get(yaml_document_t *doc, yaml_node_t *map, const char *key)
{
	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	size_t klen = strlen(key);
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++) {
		size_t len;
		const char *k = scalar(doc, yaml_document_get_node(doc, p->key), &len);
		if (k && len == klen && memcmp(k, key, len) == 0)
			return yaml_document_get_node(doc, p->value);
	}
	return NULL;
}

/* A scalar under key, or NULL if absent. A present non-scalar is an error. */
static drake_err map_str(yaml_document_t *doc, yaml_node_t *map, const char *key, const char *where,
                         const char **out, size_t *len, char *msg, size_t msglen)
{
	*out = NULL;
	yaml_node_t *v = map_get(doc, map, key);
	if (!v)
		return DRAKE_OK;
	*out = scalar(doc, v, len);
	if (!*out)
		return drake_errorf(DRAKE_EINVAL, msg, msglen, "%s: %s must be a string", where,
		                    key);
	if (memchr(*out, '\0', *len))
		return drake_errorf(DRAKE_EINVAL, msg, msglen, "%s: %s contains a NUL byte", where,
		                    key);
	return DRAKE_OK;
}

/* Finds the entry {name: <name>, <field>: {...}} in the named list. */
static yaml_node_t *find_named(yaml_document_t *doc, yaml_node_t *root, const char *list,
                               const char *name, const char *field)
{
	yaml_node_t *seq = map_get(doc, root, list);
	if (!seq || seq->type != YAML_SEQUENCE_NODE)
		return NULL;
	for (yaml_node_item_t *it = seq->data.sequence.items.start;
	     it < seq->data.sequence.items.top; it++) {
		yaml_node_t *e = yaml_document_get_node(doc, *it);
		const char *n = scalar(doc, map_get(doc, e, "name"), NULL);
		if (n && strcmp(n, name) == 0) {
			yaml_node_t *body = map_get(doc, e, field);
			return body ? body : e; /* an entry with no body means all defaults */
		}
	}
	return NULL;
}

static drake_err dup_str(const char *s, size_t len, char **out, char *msg, size_t msglen)
{
	*out = strndup(s, len);
	if (!*out)
		return drake_errorf(DRAKE_ENOMEM, msg, msglen, "out of memory");
	return DRAKE_OK;
}

/* Copies a path, resolving it against base_dir when it is relative. */
static drake_err dup_path(const char *p, size_t len, const char *base_dir, char **out, char *msg,
                          size_t msglen)
{
	if (len == 0)
		return DRAKE_OK;
	if (p[0] == '/' || !base_dir || !*base_dir)
		return dup_str(p, len, out, msg, msglen);
	if (asprintf(out, "%s/%.*s", base_dir, (int)len, p) < 0) {
		*out = NULL;
		return drake_errorf(DRAKE_ENOMEM, msg, msglen, "out of memory");
	}
	return DRAKE_OK;
}

/* Reads "file" and "data" variants of one credential (data wins, as in kubectl). */
static drake_err file_or_data(yaml_document_t *doc, yaml_node_t *m, const char *where,
                              const char *fkey, const char *dkey, const char *base_dir,
                              char **file_out, char **data_out, char *msg, size_t msglen)
{
	const char *f, *d;
	size_t flen = 0, dlen = 0;
	drake_err e = map_str(doc, m, fkey, where, &f, &flen, msg, msglen);
	if (e == DRAKE_OK)
		e = map_str(doc, m, dkey, where, &d, &dlen, msg, msglen);
	if (e != DRAKE_OK)
		return e;
	if (d && dlen > 0) {
		char inner[256];
		e = kube_base64_decode_text(d, dlen, data_out, inner, sizeof(inner));
		if (e != DRAKE_OK)
			return drake_errorf(e, msg, msglen, "%s: %s: %s", where, dkey, inner);
		return DRAKE_OK;
	}
	if (f)
		return dup_path(f, flen, base_dir, file_out, msg, msglen);
	return DRAKE_OK;
}

static drake_err parse_bool(const char *s, const char *where, bool *out, char *msg, size_t msglen)
{
	if (!strcasecmp(s, "true")) {
		*out = true;
		return DRAKE_OK;
	}
	if (!strcasecmp(s, "false") || !*s) {
		*out = false;
		return DRAKE_OK;
	}
	return drake_errorf(DRAKE_EINVAL, msg, msglen,
	                    "%s: insecure-skip-tls-verify: not a bool: %.40s", where, s);
}

static drake_err read_cluster(yaml_document_t *doc, yaml_node_t *cl, const char *base_dir,
                              struct kube_config *out, char *msg, size_t msglen)
{
	const char *where = "cluster";
	const char *s;
	size_t len = 0;
	drake_err e = map_str(doc, cl, "server", where, &s, &len, msg, msglen);
	if (e != DRAKE_OK)
		return e;
	while (s && len > 0 && s[len - 1] == '/')
		len--;
	if (!s || len == 0)
		return drake_errorf(DRAKE_EINVAL, msg, msglen, "cluster has no server");
	if (!(len > 8 && !strncmp(s, "https://", 8)) && !(len > 7 && !strncmp(s, "http://", 7)))
		return drake_errorf(DRAKE_EINVAL, msg, msglen,
		                    "cluster server %.*s is not an http(s) URL",
		                    (int)(len > 80 ? 80 : len), s);
	if ((e = dup_str(s, len, &out->server, msg, msglen)) != DRAKE_OK)
		return e;
	e = file_or_data(doc, cl, where, "certificate-authority", "certificate-authority-data",
	                 base_dir, &out->ca_file, &out->ca_data, msg, msglen);
	if (e != DRAKE_OK)
		return e;
	if ((e = map_str(doc, cl, "insecure-skip-tls-verify", where, &s, &len, msg, msglen)))
		return e;
	if (s)
		return parse_bool(s, where, &out->insecure_skip_verify, msg, msglen);
	return DRAKE_OK;
}

static drake_err read_user(yaml_document_t *doc, yaml_node_t *u, const char *base_dir,
                           struct kube_config *out, char *msg, size_t msglen)
{
	const char *where = "user";
	drake_err e =
	    file_or_data(doc, u, where, "client-certificate", "client-certificate-data", base_dir,
	                 &out->client_cert_file, &out->client_cert_data, msg, msglen);
	if (e == DRAKE_OK)
		e = file_or_data(doc, u, where, "client-key", "client-key-data", base_dir,
		                 &out->client_key_file, &out->client_key_data, msg, msglen);
	if (e != DRAKE_OK)
		return e;
	const char *s;
	size_t len = 0;
	if ((e = map_str(doc, u, "token", where, &s, &len, msg, msglen)))
		return e;
	if (s && len > 0) {
		if (len > KUBE_TOKEN_MAX_BYTES)
			return drake_errorf(DRAKE_ELIMIT, msg, msglen,
			                    "user: token longer than %d bytes",
			                    KUBE_TOKEN_MAX_BYTES);
		for (size_t i = 0; i < len; i++)
			if (iscntrl((unsigned char)s[i]))
				return drake_errorf(DRAKE_EINVAL, msg, msglen,
				                    "user: token contains control characters");
		if ((e = dup_str(s, len, &out->token, msg, msglen)))
			return e;
	}
	if ((e = map_str(doc, u, "tokenFile", where, &s, &len, msg, msglen)))
		return e;
	if (s && len > 0 && !out->token)
		return dup_path(s, len, base_dir, &out->token_file, msg, msglen);
	bool has_cert = out->client_cert_file || out->client_cert_data;
	bool has_key = out->client_key_file || out->client_key_data;
	if (has_cert != has_key)
		return drake_errorf(
		    DRAKE_EINVAL, msg, msglen,
		    "user: client certificate and client key must be given together");
	return DRAKE_OK;
}

static drake_err parse_doc(yaml_document_t *doc, const char *base_dir, struct kube_config *out,
                           char *msg, size_t msglen)
{
	yaml_node_t *root = yaml_document_get_root_node(doc);
	if (!root || root->type != YAML_MAPPING_NODE)
		return drake_errorf(DRAKE_EINVAL, msg, msglen, "kubeconfig is not a YAML mapping");
	if (doc->nodes.top - doc->nodes.start > KUBE_CONFIG_MAX_NODES)
		return drake_errorf(DRAKE_ELIMIT, msg, msglen, "kubeconfig has more than %d nodes",
		                    KUBE_CONFIG_MAX_NODES);
	const char *cur, *cname, *uname;
	size_t len;
	drake_err e = map_str(doc, root, "current-context", "kubeconfig", &cur, &len, msg, msglen);
	if (e != DRAKE_OK)
		return e;
	if (!cur || !*cur)
		return drake_errorf(DRAKE_EINVAL, msg, msglen, "kubeconfig has no current-context");
	yaml_node_t *ctx = find_named(doc, root, "contexts", cur, "context");
	if (!ctx)
		return drake_errorf(DRAKE_ENOTFOUND, msg, msglen, "context %.100s not found", cur);
	if ((e = map_str(doc, ctx, "cluster", "context", &cname, &len, msg, msglen)))
		return e;
	if (!cname || !*cname)
		return drake_errorf(DRAKE_EINVAL, msg, msglen, "context %.100s names no cluster",
		                    cur);
	if ((e = map_str(doc, ctx, "user", "context", &uname, &len, msg, msglen)))
		return e;
	yaml_node_t *cl = find_named(doc, root, "clusters", cname, "cluster");
	if (!cl)
		return drake_errorf(DRAKE_ENOTFOUND, msg, msglen, "cluster %.100s not found",
		                    cname);
	if ((e = read_cluster(doc, cl, base_dir, out, msg, msglen)))
		return e;
	if (uname && *uname) {
		yaml_node_t *u = find_named(doc, root, "users", uname, "user");
		if (!u)
			return drake_errorf(DRAKE_ENOTFOUND, msg, msglen, "user %.100s not found",
			                    uname);
		if ((e = read_user(doc, u, base_dir, out, msg, msglen)))
			return e;
	}
	return DRAKE_OK;
}

drake_err kube_config_parse(const char *buf, size_t len, const char *base_dir,
                            struct kube_config *out, char *msg, size_t msglen)
{
	memset(out, 0, sizeof(*out));
	if (len > KUBE_CONFIG_MAX_BYTES)
		return drake_errorf(DRAKE_ELIMIT, msg, msglen, "kubeconfig larger than %d bytes",
		                    KUBE_CONFIG_MAX_BYTES);
	yaml_parser_t parser;
	yaml_document_t doc;
	if (!yaml_parser_initialize(&parser))
		return drake_errorf(DRAKE_ENOMEM, msg, msglen, "cannot start the YAML parser");
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	if (!yaml_parser_load(&parser, &doc)) {
		drake_err e = drake_errorf(
		    DRAKE_EINVAL, msg, msglen, "kubeconfig YAML error at line %zu: %s",
		    parser.problem_mark.line + 1, parser.problem ? parser.problem : "unknown");
		yaml_parser_delete(&parser);
		return e;
	}
	drake_err e = parse_doc(&doc, base_dir, out, msg, msglen);
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	if (e != DRAKE_OK)
		kube_config_release(out);
	return e;
}

/* Reads a whole small file into a NUL-terminated buffer. */
static drake_err slurp(const char *path, size_t limit, char **out, size_t *outlen, char *msg,
                       size_t msglen)
{
	*out = NULL;
	FILE *f = fopen(path, "rb");
	if (!f)
		return drake_errorf(errno == ENOENT ? DRAKE_ENOTFOUND : DRAKE_EIO, msg, msglen,
		                    "%s: %s", path, strerror(errno));
	char *buf = malloc(limit + 2);
	if (!buf) {
		fclose(f);
		return drake_errorf(DRAKE_ENOMEM, msg, msglen, "out of memory reading %s", path);
	}
	size_t n = fread(buf, 1, limit + 1, f);
	bool err = ferror(f);
	fclose(f);
	if (err) {
		free(buf);
		return drake_errorf(DRAKE_EIO, msg, msglen, "%s: read error", path);
	}
	if (n > limit) {
		free(buf);
		return drake_errorf(DRAKE_ELIMIT, msg, msglen, "%s: larger than %zu bytes", path,
		                    limit);
	}
	buf[n] = '\0';
	*out = buf;
	*outlen = n;
	return DRAKE_OK;
}

drake_err kube_token_read(const char *path, char **out, char *msg, size_t msglen)
{
	size_t n;
	drake_err e = slurp(path, KUBE_TOKEN_MAX_BYTES, out, &n, msg, msglen);
	if (e != DRAKE_OK)
		return e;
	while (n > 0 && isspace((unsigned char)(*out)[n - 1]))
		(*out)[--n] = '\0';
	for (size_t i = 0; i < n; i++) {
		if (iscntrl((unsigned char)(*out)[i])) {
			free(*out);
			*out = NULL;
			return drake_errorf(DRAKE_EINVAL, msg, msglen,
			                    "%s: token contains control characters", path);
		}
	}
	if (n == 0) {
		free(*out);
		*out = NULL;
		return drake_errorf(DRAKE_EINVAL, msg, msglen, "%s: empty token", path);
	}
	return DRAKE_OK;
}

drake_err kube_config_in_cluster(const char *host, const char *port, const char *sa_dir,
                                 struct kube_config *out, char *msg, size_t msglen)
{
	memset(out, 0, sizeof(*out));
	if (!host || !*host || !port || !*port)
		return drake_errorf(DRAKE_ENOTFOUND, msg, msglen,
		                    "not in a cluster: KUBERNETES_SERVICE_HOST/PORT unset");
	if (strspn(port, "0123456789") != strlen(port) || strlen(port) > 5)
		return drake_errorf(DRAKE_EINVAL, msg, msglen, "bad KUBERNETES_SERVICE_PORT %.20s",
		                    port);
	bool v6 = strchr(host, ':') != NULL;
	if (asprintf(&out->server, v6 ? "https://[%s]:%s" : "https://%s:%s", host, port) < 0)
		out->server = NULL;
	if (asprintf(&out->ca_file, "%s/ca.crt", sa_dir) < 0)
		out->ca_file = NULL;
	if (asprintf(&out->token_file, "%s/token", sa_dir) < 0)
		out->token_file = NULL;
	if (!out->server || !out->ca_file || !out->token_file) {
		kube_config_release(out);
		return drake_errorf(DRAKE_ENOMEM, msg, msglen, "out of memory");
	}
	/* Read the token once now, so a missing service account fails at start-up. */
	char *tok = NULL;
	drake_err e = kube_token_read(out->token_file, &tok, msg, msglen);
	free(tok);
	if (e != DRAKE_OK)
		kube_config_release(out);
	return e;
}

drake_err kube_config_load(const char *path, struct kube_config *out, char *msg, size_t msglen)
{
	if (!path)
		return kube_config_in_cluster(getenv("KUBERNETES_SERVICE_HOST"),
		                              getenv("KUBERNETES_SERVICE_PORT"), KUBE_SA_DIR, out,
		                              msg, msglen);
	memset(out, 0, sizeof(*out));
	char *buf;
	size_t n;
	drake_err e = slurp(path, KUBE_CONFIG_MAX_BYTES, &buf, &n, msg, msglen);
	if (e != DRAKE_OK)
		return e;
	char *dir = strdup(path);
	if (!dir) {
		free(buf);
		return drake_errorf(DRAKE_ENOMEM, msg, msglen, "out of memory");
	}
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	char inner[512];
	e = kube_config_parse(buf, n, slash ? (*dir ? dir : "/") : ".", out, inner, sizeof(inner));
	if (e != DRAKE_OK)
		drake_errorf(e, msg, msglen, "%s: %s", path, inner);
	free(dir);
	free(buf);
	return e;
}
