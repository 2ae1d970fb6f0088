/*
 * progress.c - `drake progress`: a training replica tells drake how far it
 * has got. It POSTs {"step":N,"value":X,"metric":...,"totalSteps":N} to
 * drake's /v1/progress with the pod's projected service-account token as
 * bearer token, which is what tells drake which pod is reporting.
 *
 * Exit codes: 0 accepted, 1 refused or not delivered (the reason on stderr),
 * 2 bad usage.
 */
#include <curl/curl.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/commands.h"
#include "common/flags.h"
#include "extender/api_codec.h"

#define SA_DIR        "/var/run/secrets/kubernetes.io/serviceaccount"
#define MAX_TOKEN     16384
#define MAX_ANSWER    65536
#define PROGRESS_PATH "/v1/progress"

struct answer {
	char buf[MAX_ANSWER];
	size_t len;
};

static size_t on_answer(char *p, size_t size, size_t n, void *arg)
{
	struct answer *a = arg;
	size_t take = size * n;
	if (take > sizeof(a->buf) - 1 - a->len)
		take = sizeof(a->buf) - 1 - a->len;
	memcpy(a->buf + a->len, p, take);
	a->len += take;
	a->buf[a->len] = '\0';
	return size * n;
}

static bool parse_int(const char *s, int64_t min, int64_t *out)
{
	char *end;
	errno = 0;
	long long v = s && *s ? strtoll(s, &end, 10) : 0;
	if (!s || !*s || *end || errno || v < min)
		return false;
	*out = v;
	return true;
}

/* The token file's content without surrounding white space; NULL with a
 * reason in msg. */
static char *read_token(const char *path, char *msg, size_t msglen)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(msg, msglen,
		         "cannot read the token %s: %s (the pod needs a projected service-account "
		         "token: automountServiceAccountToken must not be false)",
		         path, strerror(errno));
		return NULL;
	}
	char *t = calloc(1, MAX_TOKEN + 1);
	size_t n = t ? fread(t, 1, MAX_TOKEN + 1, f) : 0;
	fclose(f);
	if (!t || n > MAX_TOKEN) {
		snprintf(msg, msglen, "%s: %s", path,
		         t ? "over 16 KiB, not a token" : "out of memory");
		free(t);
		return NULL;
	}
	while (n > 0 && strchr(" \t\r\n", t[n - 1]))
		t[--n] = '\0';
	char *s = t + strspn(t, " \t\r\n");
	if (!*s || strcspn(s, " \t\r\n") != strlen(s)) {
		snprintf(msg, msglen, "%s: %s", path, *s ? "not a token" : "empty");
		free(t);
		return NULL;
	}
	memmove(t, s, strlen(s) + 1);
	return t;
}

static int usage(const struct flag *flags, size_t n)
{
	printf("usage: drake progress --step N --value X [--metric accuracy|loss] "
	       "[--total-steps N]\n\n"
	       "Reports a training replica's progress to drake (POST " PROGRESS_PATH
	       "), as the pod\n"
	       "its service-account token names. Run it inside the replica's pod; drake's\n"
	       "controller sets DRAKE_PROGRESS_URL there. Exit codes: 0 accepted, 1 refused or\n"
	       "not delivered (why on stderr), 2 bad usage.\n\nflags:\n");
	flags_usage(stdout, flags, n);
	return 0;
}

int progress_main(int argc, char **argv)
{
	const char *step_s = NULL, *value_s = NULL, *metric = NULL, *total_s = NULL, *url = NULL;
	const char *token_file = NULL, *ca_file = NULL, *ca_pem = NULL;
	double timeout = 0;
	const struct flag flags[] = {
	    {"step", NULL, FLAG_STRING, &step_s, NULL, "global training step, >= 0 (required)"},
	    {"value", NULL, FLAG_STRING, &value_s, NULL,
	     "the metric's value at that step (required)"},
	    {"metric", NULL, FLAG_STRING, &metric, "accuracy",
	     "accuracy (higher is better) or loss (lower is better)"},
	    {"total-steps", NULL, FLAG_STRING, &total_s, NULL,
	     "steps the training will run in all, when known"},
	    {"url", "DRAKE_PROGRESS_URL", FLAG_STRING, &url, NULL,
	     "drake's progress endpoint, https://<drake service>/v1/progress (set by drake's "
	     "controller)"},
	    {"token-file", "DRAKE_PROGRESS_TOKEN_FILE", FLAG_STRING, &token_file, SA_DIR "/token",
	     "the pod's projected service-account token"},
	    {"ca-file", "DRAKE_PROGRESS_CA", FLAG_STRING, &ca_file, SA_DIR "/ca.crt",
	     "CA bundle that verifies drake's serving certificate"},
	    {"ca-pem", "DRAKE_PROGRESS_CA_PEM", FLAG_STRING, &ca_pem, NULL,
	     "the same CA bundle as PEM text (set by drake's controller with --progress-ca-file); "
	     "used instead of --ca-file when given"},
	    {"timeout", "DRAKE_PROGRESS_TIMEOUT", FLAG_DURATION, &timeout, "10s",
	     "give up after this long"},
	};
	size_t nflags = sizeof(flags) / sizeof(flags[0]);
	enum flags_outcome outcome;
	char msg[512];
	if (flags_parse(flags, nflags, argc, argv, &outcome, msg, sizeof(msg)) != DRAKE_OK) {
		fprintf(stderr, "drake progress: %s\n", msg);
		return 2;
	}
	if (outcome == FLAGS_HELP)
		return usage(flags, nflags);
	int64_t step, total = 0;
	char *end = NULL;
	double value = value_s && *value_s ? strtod(value_s, &end) : NAN;
	if (!parse_int(step_s, 0, &step)) {
		fprintf(stderr, "drake progress: --step: a whole number >= 0 is required\n");
		return 2;
	}
	if (!end || *end || !isfinite(value)) {
		fprintf(stderr, "drake progress: --value: a finite number is required\n");
		return 2;
	}
	if (strcmp(metric, "accuracy") != 0 && strcmp(metric, "loss") != 0) {
		fprintf(stderr, "drake progress: --metric must be accuracy or loss\n");
		return 2;
	}
	if (total_s && !parse_int(total_s, 1, &total)) {
		fprintf(stderr, "drake progress: --total-steps: a whole number >= 1 is required\n");
		return 2;
	}
	if (!url || !*url) {
		fprintf(stderr, "drake progress: no drake to report to: set DRAKE_PROGRESS_URL "
		                "(drake's controller sets it in TFJob pods) or --url\n");
		return 2;
	}
	if (strncmp(url, "https://", 8) != 0) {
		fprintf(stderr, "drake progress: --url must be https://: the token must not travel "
		                "in clear\n");
		return 2;
	}
	char *token = read_token(token_file, msg, sizeof(msg));
	if (!token) {
		fprintf(stderr, "drake progress: %s\n", msg);
		return 1;
	}
	char body[256], total_part[48] = "";
	if (total)
		snprintf(total_part, sizeof(total_part), ",\"totalSteps\":%lld", (long long)total);
	snprintf(body, sizeof(body), "{\"step\":%lld,\"value\":%.17g,\"metric\":\"%s\"%s}",
	         (long long)step, value, metric, total_part);
	char *auth = malloc(strlen(token) + 32);
	if (!auth) {
		free(token);
		fprintf(stderr, "drake progress: out of memory\n");
		return 1;
	}
	sprintf(auth, "Authorization: Bearer %s", token);
	free(token);

	int rc = 1;
	struct answer *a = calloc(1, sizeof(*a));
	CURL *h = a && curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? curl_easy_init() : NULL;
	struct curl_slist *hdrs = NULL;
	if (h) {
		hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
		hdrs = curl_slist_append(hdrs, auth);
	}
	if (!h || !hdrs) {
		fprintf(stderr, "drake progress: cannot set up the HTTP client\n");
		goto out;
	}
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "https");
	if (ca_pem && *ca_pem) {
		struct curl_blob blob = {(void *)ca_pem, strlen(ca_pem), CURL_BLOB_COPY};
		curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &blob);
	} else {
		curl_easy_setopt(h, CURLOPT_CAINFO, ca_file);
	}
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(timeout * 1000));
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_answer);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, a);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "drake-progress");
	char cerr[CURL_ERROR_SIZE] = "";
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, cerr);
	CURLcode cc = curl_easy_perform(h);
	long code = 0;
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	if (cc != CURLE_OK) {
		fprintf(stderr, "drake progress: could not reach drake at %s: %s\n", url,
		        cerr[0] ? cerr : curl_easy_strerror(cc));
	} else if (code == 202) {
		printf("drake accepted step %lld\n", (long long)step);
		rc = 0;
	} else {
		char why[768];
		api_error_message(a->buf, a->len, why, sizeof(why));
		struct curl_header *ra = NULL;
		bool retry = code == 429 && curl_easy_header(h, "Retry-After", 0, CURLH_HEADER, -1,
		                                             &ra) == CURLHE_OK;
		fprintf(stderr, "drake progress: refused (HTTP %ld): %s%s%s%s\n", code,
		        why[0] ? why : a->buf, retry ? " (retry after " : "",
		        retry ? ra->value : "", retry ? " s)" : "");
	}
out:
	curl_slist_free_all(hdrs);
	if (h)
		curl_easy_cleanup(h);
	memset(auth, 0, strlen(auth));
	free(auth);
	free(a);
	curl_global_cleanup();
	return rc;
}
