/*
 * kubeconfig_test.c - cmocka tests for the kubeconfig reader: good files,
 * relative paths, base64 errors, missing names, limits, the in-cluster
 * service account. Temporary files live under a mkdtemp folder removed at
 * the end of each test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "kube/kubeconfig.h"

static char msg[512];

/* "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n" */
#define PEM_B64  "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkFBQUEKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo="
#define PEM_TEXT "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"

static drake_err parse(const char *yaml, struct kube_config *cfg)
{
	msg[0] = '\0';
	return kube_config_parse(yaml, strlen(yaml), "/base", cfg, msg, sizeof(msg));
}

static const char *KIND_CONFIG = "apiVersion: v1\n"
                                 "kind: Config\n"
                                 "current-context: kind-drake\n"
                                 "clusters:\n"
                                 "- name: other\n"
                                 "  cluster: {server: https://other:1}\n"
                                 "- cluster:\n"
                                 "    certificate-authority-data: " PEM_B64 "\n"
                                 "    server: https://127.0.0.1:6443/\n"
                                 "  name: kind-drake\n"
                                 "contexts:\n"
                                 "- context: {cluster: kind-drake, user: admin}\n"
                                 "  name: kind-drake\n"
                                 "users:\n"
                                 "- name: admin\n"
                                 "  user:\n"
                                 "    client-certificate-data: " PEM_B64 "\n"
                                 "    client-key-data: |\n"
                                 "      LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkFBQUEKLS0t\n"
                                 "      LS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo=\n";

static void test_kind_style_config_decodes_data_fields(void **state)
{
	struct kube_config cfg;
	assert_int_equal(parse(KIND_CONFIG, &cfg), DRAKE_OK);
	assert_string_equal(cfg.server, "https://127.0.0.1:6443");
	assert_string_equal(cfg.ca_data, PEM_TEXT);
	assert_string_equal(cfg.client_cert_data, PEM_TEXT);
	assert_string_equal(cfg.client_key_data, PEM_TEXT); /* folded over two lines */
	assert_null(cfg.ca_file);
	assert_null(cfg.token);
	assert_false(cfg.insecure_skip_verify);
	kube_config_release(&cfg);
	assert_null(cfg.server);
}

static void test_relative_paths_resolve_against_the_config_folder(void **state)
{
	struct kube_config cfg;
	assert_int_equal(parse("current-context: c\n"
	                       "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
	                       "clusters: [{name: k, cluster: {server: 'http://h:8080', "
	                       "certificate-authority: ca.crt, insecure-skip-tls-verify: true}}]\n"
	                       "users: [{name: u, user: {client-certificate: /abs/c.pem, "
	                       "client-key: k.pem, tokenFile: tok}}]\n",
	                       &cfg),
	                 DRAKE_OK);
	assert_string_equal(cfg.ca_file, "/base/ca.crt");
	assert_string_equal(cfg.client_cert_file, "/abs/c.pem");
	assert_string_equal(cfg.client_key_file, "/base/k.pem");
	assert_string_equal(cfg.token_file, "/base/tok");
	assert_true(cfg.insecure_skip_verify);
	kube_config_release(&cfg);
}

static void test_token_user_and_context_without_user(void **state)
{
	struct kube_config cfg;
	assert_int_equal(parse("current-context: c\n"
	                       "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
	                       "clusters: [{name: k, cluster: {server: https://h}}]\n"
	                       "users: [{name: u, user: {token: abc.def}}]\n",
	                       &cfg),
	                 DRAKE_OK);
	assert_string_equal(cfg.token, "abc.def");
	kube_config_release(&cfg);
	assert_int_equal(parse("current-context: c\n"
	                       "contexts: [{name: c, context: {cluster: k}}]\n"
	                       "clusters: [{name: k, cluster: {server: https://h}}]\n",
	                       &cfg),
	                 DRAKE_OK);
	assert_null(cfg.token);
	assert_null(cfg.client_cert_file);
	kube_config_release(&cfg);
}

struct bad_case {
	const char *name;
	const char *yaml;
	drake_err want;
	const char *msg_has;
};

static const struct bad_case BAD[] = {
    {"no current-context", "clusters: []\n", DRAKE_EINVAL, "no current-context"},
    {"empty current-context", "current-context: ''\n", DRAKE_EINVAL, "no current-context"},
    {"current-context names a missing context",
     "current-context: gone\ncontexts: [{name: c, context: {cluster: k}}]\n", DRAKE_ENOTFOUND,
     "context gone not found"},
    {"context names a missing cluster",
     "current-context: c\ncontexts: [{name: c, context: {cluster: k}}]\n", DRAKE_ENOTFOUND,
     "cluster k not found"},
    {"context names a missing user",
     "current-context: c\ncontexts: [{name: c, context: {cluster: k, user: u}}]\n"
     "clusters: [{name: k, cluster: {server: https://h}}]\n",
     DRAKE_ENOTFOUND, "user u not found"},
    {"cluster without server",
     "current-context: c\ncontexts: [{name: c, context: {cluster: k}}]\n"
     "clusters: [{name: k, cluster: {}}]\n",
     DRAKE_EINVAL, "no server"},
    {"server that is not a URL",
     "current-context: c\ncontexts: [{name: c, context: {cluster: k}}]\n"
     "clusters: [{name: k, cluster: {server: ftp://h}}]\n",
     DRAKE_EINVAL, "not an http(s) URL"},
    {"base64 with a bad character",
     "current-context: c\ncontexts: [{name: c, context: {cluster: k}}]\n"
     "clusters: [{name: k, cluster: {server: https://h, certificate-authority-data: 'ab$d'}}]\n",
     DRAKE_EINVAL, "certificate-authority-data: invalid base64"},
    {"base64 with a bad length",
     "current-context: c\ncontexts: [{name: c, context: {cluster: k}}]\n"
     "clusters: [{name: k, cluster: {server: https://h, certificate-authority-data: abcde}}]\n",
     DRAKE_EINVAL, "multiple of 4"},
    {"base64 with padding in the middle",
     "current-context: c\ncontexts: [{name: c, context: {cluster: k, user: u}}]\n"
     "clusters: [{name: k, cluster: {server: https://h}}]\n"
     "users: [{name: u, user: {client-key-data: 'ab==cdef', client-certificate: c}}]\n",
     DRAKE_EINVAL, "client-key-data: invalid base64"},
    {"base64 that decodes to a NUL byte",
     "current-context: c\ncontexts: [{name: c, context: {cluster: k}}]\n"
     "clusters: [{name: k, cluster: {server: https://h, certificate-authority-data: AAAA}}]\n",
     DRAKE_EINVAL, "NUL"},
    {"certificate without key",
     "current-context: c\ncontexts: [{name: c, context: {cluster: k, user: u}}]\n"
     "clusters: [{name: k, cluster: {server: https://h}}]\n"
     "users: [{name: u, user: {client-certificate: c.pem}}]\n",
     DRAKE_EINVAL, "together"},
    {"insecure flag that is not a bool",
     "current-context: c\ncontexts: [{name: c, context: {cluster: k}}]\n"
     "clusters: [{name: k, cluster: {server: https://h, insecure-skip-tls-verify: maybe}}]\n",
     DRAKE_EINVAL, "not a bool"},
    {"server given as a list",
     "current-context: c\ncontexts: [{name: c, context: {cluster: k}}]\n"
     "clusters: [{name: k, cluster: {server: [a]}}]\n",
     DRAKE_EINVAL, "server must be a string"},
    {"token with a newline (header injection)",
     "current-context: c\ncontexts: [{name: c, context: {cluster: k, user: u}}]\n"
     "clusters: [{name: k, cluster: {server: https://h}}]\n"
     "users: [{name: u, user: {token: \"a\\r\\nX-Evil: 1\"}}]\n",
     DRAKE_EINVAL, "control characters"},
    {"YAML syntax error", "current-context: [unclosed\n", DRAKE_EINVAL, "YAML error at line"},
    {"document that is a list", "- a\n- b\n", DRAKE_EINVAL, "not a YAML mapping"},
    {"empty document", "", DRAKE_EINVAL, "not a YAML mapping"},
};

static void test_bad_configs_fail_with_a_message(void **state)
{
	for (size_t i = 0; i < sizeof(BAD) / sizeof(BAD[0]); i++) {
		struct kube_config cfg;
		drake_err e = parse(BAD[i].yaml, &cfg);
		if (e != BAD[i].want || !strstr(msg, BAD[i].msg_has))
			fail_msg("case '%s': got %s '%s', want %s containing '%s'", BAD[i].name,
			         drake_strerror(e), msg, drake_strerror(BAD[i].want),
			         BAD[i].msg_has);
		assert_null(cfg.server); /* released on failure */
	}
}

static void test_config_over_the_size_limit_is_refused(void **state)
{
	size_t n = KUBE_CONFIG_MAX_BYTES + 1;
	char *big = malloc(n + 1);
	assert_non_null(big);
	memset(big, '#', n);
	big[n] = '\0';
	struct kube_config cfg;
	assert_int_equal(kube_config_parse(big, n, NULL, &cfg, msg, sizeof(msg)), DRAKE_ELIMIT);
	free(big);
}

static void test_config_with_too_many_yaml_nodes_is_refused(void **state)
{
	/* small in bytes, but more nodes than KUBE_CONFIG_MAX_NODES */
	size_t n = KUBE_CONFIG_MAX_NODES + 1;
	char *y = malloc(2 * n + 64);
	assert_non_null(y);
	char *p = y + sprintf(y, "current-context: c\nx: [");
	for (size_t i = 0; i < n; i++) {
		*p++ = '1';
		*p++ = ',';
	}
	strcpy(p - 1, "]\n");
	struct kube_config cfg;
	assert_int_equal(parse(y, &cfg), DRAKE_ELIMIT);
	assert_non_null(strstr(msg, "nodes"));
	free(y);
}

static void test_token_over_the_size_limit_is_refused(void **state)
{
	size_t n = KUBE_TOKEN_MAX_BYTES + 1;
	const char *head =
	    "current-context: c\ncontexts: [{name: c, context: {cluster: k, user: u}}]\n"
	    "clusters: [{name: k, cluster: {server: https://h}}]\n"
	    "users: [{name: u, user: {token: ";
	char *y = malloc(strlen(head) + n + 8);
	assert_non_null(y);
	strcpy(y, head);
	memset(y + strlen(head), 't', n);
	strcpy(y + strlen(head) + n, "}}]\n");
	struct kube_config cfg;
	assert_int_equal(parse(y, &cfg), DRAKE_ELIMIT);
	free(y);
}

static void test_base64_decoder(void **state)
{
	char *out;
	assert_int_equal(kube_base64_decode_text("aGk=\n", 5, &out, msg, sizeof(msg)), DRAKE_OK);
	assert_string_equal(out, "hi");
	free(out);
	assert_int_equal(kube_base64_decode_text("aG l0", 5, &out, msg, sizeof(msg)), DRAKE_OK);
	assert_string_equal(out, "hit");
	free(out);
	assert_int_equal(kube_base64_decode_text("", 0, &out, msg, sizeof(msg)), DRAKE_EINVAL);
	assert_int_equal(kube_base64_decode_text("a===", 4, &out, msg, sizeof(msg)), DRAKE_EINVAL);
	assert_int_equal(kube_base64_decode_text("aGk-", 4, &out, msg, sizeof(msg)), DRAKE_EINVAL);
	assert_null(out);
}

/* ---- files ---- */

static char dir[64];

static void write_file(const char *name, const char *text)
{
	char p[128];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int make_dir(void **state)
{
	strcpy(dir, "/tmp/drake-kubeconfig-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_load_file_resolves_paths_next_to_it(void **state)
{
	write_file(
	    "config",
	    "current-context: c\n"
	    "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
	    "clusters: [{name: k, cluster: {server: https://h, certificate-authority: ca.pem}}]\n"
	    "users: [{name: u, user: {tokenFile: token}}]\n");
	char p[128];
	snprintf(p, sizeof(p), "%s/config", dir);
	struct kube_config cfg;
	assert_int_equal(kube_config_load(p, &cfg, msg, sizeof(msg)), DRAKE_OK);
	char want[160];
	snprintf(want, sizeof(want), "%s/ca.pem", dir);
	assert_string_equal(cfg.ca_file, want);
	kube_config_release(&cfg);

	snprintf(p, sizeof(p), "%s/missing", dir);
	assert_int_equal(kube_config_load(p, &cfg, msg, sizeof(msg)), DRAKE_ENOTFOUND);
	assert_non_null(strstr(msg, "missing"));
}

static void test_load_file_reports_its_path_on_error(void **state)
{
	write_file("bad", "current-context: nowhere\n");
	char p[128];
	snprintf(p, sizeof(p), "%s/bad", dir);
	struct kube_config cfg;
	assert_int_equal(kube_config_load(p, &cfg, msg, sizeof(msg)), DRAKE_ENOTFOUND);
	assert_non_null(strstr(msg, p));
	assert_non_null(strstr(msg, "context nowhere not found"));
}

static void test_token_file_reader(void **state)
{
	char p[128], *tok;
	write_file("token", "eyJhbGc.payload.sig\n\n");
	snprintf(p, sizeof(p), "%s/token", dir);
	assert_int_equal(kube_token_read(p, &tok, msg, sizeof(msg)), DRAKE_OK);
	assert_string_equal(tok, "eyJhbGc.payload.sig");
	free(tok);
	write_file("token", "a\nb");
	assert_int_equal(kube_token_read(p, &tok, msg, sizeof(msg)), DRAKE_EINVAL);
	write_file("token", "  \n");
	assert_int_equal(kube_token_read(p, &tok, msg, sizeof(msg)), DRAKE_EINVAL);
	char *big = malloc(KUBE_TOKEN_MAX_BYTES + 2);
	assert_non_null(big);
	memset(big, 'x', KUBE_TOKEN_MAX_BYTES + 1);
	big[KUBE_TOKEN_MAX_BYTES + 1] = '\0';
	write_file("token", big);
	free(big);
	assert_int_equal(kube_token_read(p, &tok, msg, sizeof(msg)), DRAKE_ELIMIT);
}

static void test_in_cluster_service_account(void **state)
{
	write_file("token", "sa-token\n");
	write_file("ca.crt", PEM_TEXT);
	struct kube_config cfg;
	assert_int_equal(kube_config_in_cluster("10.96.0.1", "443", dir, &cfg, msg, sizeof(msg)),
	                 DRAKE_OK);
	assert_string_equal(cfg.server, "https://10.96.0.1:443");
	assert_non_null(strstr(cfg.token_file, "/token"));
	assert_non_null(strstr(cfg.ca_file, "/ca.crt"));
	assert_null(cfg.token); /* re-read per request: projected tokens rotate */
	kube_config_release(&cfg);

	assert_int_equal(kube_config_in_cluster("fd00::1", "6443", dir, &cfg, msg, sizeof(msg)),
	                 DRAKE_OK);
	assert_string_equal(cfg.server, "https://[fd00::1]:6443");
	kube_config_release(&cfg);

	assert_int_equal(kube_config_in_cluster(NULL, "443", dir, &cfg, msg, sizeof(msg)),
	                 DRAKE_ENOTFOUND);
	assert_int_equal(kube_config_in_cluster("h", "44x", dir, &cfg, msg, sizeof(msg)),
	                 DRAKE_EINVAL);
	assert_int_equal(
	    kube_config_in_cluster("h", "443", "/nonexistent-sa", &cfg, msg, sizeof(msg)),
	    DRAKE_ENOTFOUND);
	assert_null(cfg.server);
}

static void test_release_is_safe_on_null_and_twice(void **state)
{
	kube_config_release(NULL);
	struct kube_config cfg;
	assert_int_equal(parse(KIND_CONFIG, &cfg), DRAKE_OK);
	kube_config_release(&cfg);
	kube_config_release(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_kind_style_config_decodes_data_fields),
	    cmocka_unit_test(test_relative_paths_resolve_against_the_config_folder),
	    cmocka_unit_test(test_token_user_and_context_without_user),
	    cmocka_unit_test(test_bad_configs_fail_with_a_message),
	    cmocka_unit_test(test_config_over_the_size_limit_is_refused),
	    cmocka_unit_test(test_token_over_the_size_limit_is_refused),
	    cmocka_unit_test(test_config_with_too_many_yaml_nodes_is_refused),
	    cmocka_unit_test(test_base64_decoder),
	    cmocka_unit_test_setup_teardown(test_load_file_resolves_paths_next_to_it, make_dir,
	                                    remove_dir),
	    cmocka_unit_test_setup_teardown(test_load_file_reports_its_path_on_error, make_dir,
	                                    remove_dir),
	    cmocka_unit_test_setup_teardown(test_token_file_reader, make_dir, remove_dir),
	    cmocka_unit_test_setup_teardown(test_in_cluster_service_account, make_dir, remove_dir),
	    cmocka_unit_test(test_release_is_safe_on_null_and_twice),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
