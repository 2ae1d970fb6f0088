/*
 * tfconfig_parse.c - decodes TF_CONFIG (tfconfig.h) with jansson. Every
 * refusal names the field and what was expected, because the person reading
 * it is looking at a pod's environment, not at this code.
 */
#include "examples/train/tfconfig.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

static const char *const type_names[TFC_NTYPES] = {"chief", "ps", "worker", "evaluator"};

const char *tfc_type_name(enum tfc_type t)
{
	return t < TFC_NTYPES ? type_names[t] : "?";
}

static int type_of(const char *s)
{
	for (int t = 0; t < TFC_NTYPES; t++)
		if (!strcasecmp(s, type_names[t]))
			return t;
	if (!strcasecmp(s, "master")) /* TensorFlow's name for the chief before 1.x */
		return TFC_CHIEF;
	return -1;
}

void tfc_release(struct tf_config *c)
{
	if (!c)
		return;
	for (int t = 0; t < TFC_NTYPES; t++) {
		for (int i = 0; c->ep[t] && i < c->slots[t]; i++)
			free(c->ep[t][i]);
		free(c->ep[t]);
		c->ep[t] = NULL;
		c->slots[t] = 0;
	}
}

drake_err tfc_split_address(const char *addr, char *host, size_t hostlen, int *port, char *msg,
                            size_t len)
{
	const char *colon;
	size_t hl;
	const char *h = addr;
	if (addr[0] == '[') {
		const char *close = strchr(addr, ']');
		if (!close || close[1] != ':')
			return drake_errorf(DRAKE_EINVAL, msg, len, "\"%s\" is not [IPv6]:port",
			                    addr);
		h = addr + 1;
		hl = (size_t)(close - h);
		colon = close + 1;
	} else {
		colon = strrchr(addr, ':');
		if (!colon)
			return drake_errorf(DRAKE_EINVAL, msg, len,
			                    "\"%s\" has no port (expected host:port)", addr);
		hl = (size_t)(colon - addr);
		if (memchr(addr, ':', hl))
			return drake_errorf(DRAKE_EINVAL, msg, len,
			                    "\"%s\": an IPv6 address needs brackets, [addr]:port",
			                    addr);
	}
	if (hl == 0)
		return drake_errorf(DRAKE_EINVAL, msg, len, "\"%s\" has no host", addr);
	if (hl > TFC_HOST_MAX || hl >= hostlen)
		return drake_errorf(DRAKE_ELIMIT, msg, len,
		                    "\"%s\": the host is over %d characters", addr, TFC_HOST_MAX);
	for (size_t i = 0; i < hl; i++)
		if ((unsigned char)h[i] <= ' ' || h[i] == '/' || h[i] == '@')
			return drake_errorf(DRAKE_EINVAL, msg, len,
			                    "\"%s\": the host has a character a host name cannot",
			                    addr);
	char *end;
	errno = 0;
	long p = colon[1] >= '0' && colon[1] <= '9' ? strtol(colon + 1, &end, 10) : -1;
	if (p < 1 || p > 65535 || errno || *end)
		return drake_errorf(DRAKE_EINVAL, msg, len,
		                    "\"%s\": the port must be a number in 1..65535", addr);
	memcpy(host, h, hl);
	host[hl] = '\0';
	*port = (int)p;
	return DRAKE_OK;
}

static drake_err check_endpoint(const json_t *v, const char *type, const char *idx, char *msg,
                                size_t len)
{
	if (!json_is_string(v))
		return drake_errorf(DRAKE_EINVAL, msg, len,
		                    "cluster.%s[%s]: expected a \"host:port\" string, got %s", type,
		                    idx, json_is_object(v) ? "an object" : "another type");
	char host[TFC_HOST_MAX + 1], why[384];
	int port;
	if (tfc_split_address(json_string_value(v), host, sizeof(host), &port, why, sizeof(why)) !=
	    DRAKE_OK)
		return drake_errorf(DRAKE_EINVAL, msg, len, "cluster.%s[%s]: %s", type, idx, why);
	return DRAKE_OK;
}

/* Index keys of the sparse form: "0", "12"; no sign, no leading zeros. */
static int parse_index_key(const char *k)
{
	if (!*k || strlen(k) > 9 || (k[0] == '0' && k[1]))
		return -1;
	for (const char *p = k; *p; p++)
		if (*p < '0' || *p > '9')
			return -1;
	return atoi(k);
}

static drake_err endpoints(const json_t *v, const char *type, enum tfc_type t, struct tf_config *c,
                           char *msg, size_t len)
{
	char idx[32];
	if (json_is_array(v)) {
		size_t n = json_array_size(v);
		if (n > TFC_TASKS_MAX)
			return drake_errorf(DRAKE_ELIMIT, msg, len,
			                    "cluster.%s: %zu endpoints, over the limit of %d", type,
			                    n, TFC_TASKS_MAX);
		c->ep[t] = calloc(n ? n : 1, sizeof(char *));
		if (!c->ep[t])
			return drake_errorf(DRAKE_ENOMEM, msg, len, "out of memory");
		c->slots[t] = (int)n;
		for (size_t i = 0; i < n; i++) {
			snprintf(idx, sizeof(idx), "%zu", i);
			const json_t *e = json_array_get(v, i);
			drake_err err = check_endpoint(e, type, idx, msg, len);
			if (err)
				return err;
			if (!(c->ep[t][i] = strdup(json_string_value(e))))
				return drake_errorf(DRAKE_ENOMEM, msg, len, "out of memory");
		}
		return DRAKE_OK;
	}
	if (!json_is_object(v))
		return drake_errorf(DRAKE_EINVAL, msg, len,
		                    "cluster.%s: expected a list of \"host:port\" strings (or an "
		                    "object keyed by index)",
		                    type);
	const char *k;
	const json_t *e;
	int slots = 0;
	json_object_foreach ((json_t *)v, k, e) {
		int i = parse_index_key(k);
		if (i < 0)
			return drake_errorf(
			    DRAKE_EINVAL, msg, len,
			    "cluster.%s: key \"%s\" is not a task index (0, 1, ...)", type, k);
		if (i >= TFC_TASKS_MAX)
			return drake_errorf(DRAKE_ELIMIT, msg, len,
			                    "cluster.%s: index %d is over the limit of %d", type, i,
			                    TFC_TASKS_MAX - 1);
		drake_err err = check_endpoint(e, type, k, msg, len);
		if (err)
			return err;
		if (i + 1 > slots)
			slots = i + 1;
	}
	c->ep[t] = calloc(slots ? (size_t)slots : 1, sizeof(char *));
	if (!c->ep[t])
		return drake_errorf(DRAKE_ENOMEM, msg, len, "out of memory");
	c->slots[t] = slots;
	json_object_foreach ((json_t *)v, k, e) {
		if (!(c->ep[t][parse_index_key(k)] = strdup(json_string_value(e))))
			return drake_errorf(DRAKE_ENOMEM, msg, len, "out of memory");
	}
	return DRAKE_OK;
}

static drake_err parse_task(const json_t *task, struct tf_config *c, char *msg, size_t len)
{
	if (!json_is_object(task))
		return drake_errorf(DRAKE_EINVAL, msg, len,
		                    "\"task\" is missing or not an object: expected "
		                    "{\"type\":\"worker\",\"index\":0}");
	const json_t *type = json_object_get(task, "type");
	if (!json_is_string(type))
		return drake_errorf(DRAKE_EINVAL, msg, len,
		                    "task.type is missing or not a string (chief, ps, worker or "
		                    "evaluator)");
	int t = type_of(json_string_value(type));
	if (t < 0)
		return drake_errorf(DRAKE_EINVAL, msg, len,
		                    "task.type \"%s\" is not chief, ps, worker or evaluator",
		                    json_string_value(type));
	c->type = (enum tfc_type)t;
	const json_t *index = json_object_get(task, "index");
	json_int_t i = 0;
	if (index && json_is_string(index)) { /* TensorFlow's int() takes "1" too */
		int k = parse_index_key(json_string_value(index));
		if (k < 0)
			return drake_errorf(DRAKE_EINVAL, msg, len,
			                    "task.index \"%s\" is not a whole number >= 0",
			                    json_string_value(index));
		i = k;
	} else if (index && !json_is_null(index)) {
		if (!json_is_integer(index) || json_integer_value(index) < 0)
			return drake_errorf(DRAKE_EINVAL, msg, len,
			                    "task.index must be a whole number >= 0");
		i = json_integer_value(index);
	}
	if (i >= TFC_TASKS_MAX)
		return drake_errorf(DRAKE_ELIMIT, msg, len,
		                    "task.index %lld is over the limit of %d", (long long)i,
		                    TFC_TASKS_MAX - 1);
	c->index = (int)i;
	if (c->type == TFC_EVALUATOR && c->slots[TFC_EVALUATOR] == 0)
		return DRAKE_OK;
	if (c->index >= c->slots[c->type] || !c->ep[c->type][c->index])
		return drake_errorf(DRAKE_EINVAL, msg, len,
		                    "the task %s %d is not in cluster.%s (%d endpoint%s listed)",
		                    type_names[c->type], c->index, type_names[c->type],
		                    c->slots[c->type], c->slots[c->type] == 1 ? "" : "s");
	return DRAKE_OK;
}

drake_err tfc_parse(const char *text, struct tf_config *c, char *msg, size_t len)
{
	memset(c, 0, sizeof(*c));
	size_t n = strlen(text);
	if (n > TFC_JSON_MAX)
		return drake_errorf(DRAKE_ELIMIT, msg, len, "%zu bytes, over the limit of %d", n,
		                    TFC_JSON_MAX);
	json_error_t jerr;
	json_t *root = json_loadb(text, n, JSON_REJECT_DUPLICATES, &jerr);
	if (!root)
		return drake_errorf(DRAKE_EINVAL, msg, len, "not JSON: %s (line %d, column %d)",
		                    jerr.text, jerr.line, jerr.column);
	drake_err err = DRAKE_OK;
	const json_t *cluster = json_object_get(root, "cluster");
	if (!json_is_object(root)) {
		err = drake_errorf(DRAKE_EINVAL, msg, len, "expected a JSON object");
		goto out;
	}
	if (!json_is_object(cluster)) {
		err = drake_errorf(DRAKE_EINVAL, msg, len,
		                   "\"cluster\" is missing or not an object: expected "
		                   "{\"ps\":[\"host:port\"],\"worker\":[...]}");
		goto out;
	}
	const char *k;
	const json_t *v;
	bool seen[TFC_NTYPES] = {false};
	json_object_foreach ((json_t *)cluster, k, v) {
		int t = type_of(k);
		if (t < 0)
			continue; /* a job drake-train has no use for; TensorFlow allows any */
		if (seen[t]) {
			err = drake_errorf(DRAKE_EINVAL, msg, len,
			                   "cluster names the %s twice (\"chief\" and \"master\")",
			                   type_names[t]);
			goto out;
		}
		seen[t] = true;
		if ((err = endpoints(v, k, (enum tfc_type)t, c, msg, len)) != DRAKE_OK)
			goto out;
	}
	err = parse_task(json_object_get(root, "task"), c, msg, len);
out:
	json_decref(root);
	if (err)
		tfc_release(c);
	return err;
}
