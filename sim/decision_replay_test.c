/* decision_replay_test.c - `drake sim --replay` on a small recorded log:
 * a round replayed as logged, one whose logged output was changed, one
 * refused for its shares, a malformed line and a partial last line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gang/gang_testutil.h"
#include "reconciler/round_codec.h"
#include "sim/decision_replay.h"

/* The line the controller logs for one new job of 1 PS and 2 workers on
 * "a:8:0 b:8:8" at now 100; share: its workers ask half a GPU each. */
static char *logged(int share)
{
	struct drake_cluster c;
	assert_int_equal(cluster_from(&c, "a:8:0 b:8:8"), 0);
	struct drake_round_member m[4];
	for (int i = 0; i < 4; i++)
		m[i] = (struct drake_round_member){.state = DRAKE_MEMBER_WAITING, .node = -1};
	struct drake_round_job j = {.name = "ml/a",
	                            .uid = "u1",
	                            .created = 5,
	                            .req = gpu_job(1, 1, 2),
	                            .max_workers = 3,
	                            .ps = m,
	                            .workers = m + 1,
	                            .progress = -1};
	if (share) {
		j.req.worker.gpu = 0;
		j.req.worker_share.milli = share;
	}
	struct drake_round_opts o = {.pace_budget = 64};
	drake_scale_defaults(&o.scale);
	struct drake_round r;
	assert_int_equal(drake_round(&c, &j, 1, 100, &o, &r), DRAKE_OK);
	char *line = round_log_line(&c, &j, 1, 100, &o, &r);
	assert_non_null(line);
	drake_round_release(&r);
	drake_cluster_release(&c);
	return line;
}

/* Replays text written to a file; out gets what it printed. */
static int replay(const char *text, struct decision_replay_counts *n, char **out)
{
	char path[] = "/tmp/decision-replay-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	size_t len;
	FILE *f = open_memstream(out, &len);
	assert_non_null(f);
	int rc = decision_replay(path, f, n);
	fclose(f);
	unlink(path);
	return rc;
}

static char *join(const char *a, const char *b, const char *c, const char *d)
{
	size_t n = strlen(a) + strlen(b) + strlen(c) + strlen(d) + 8;
	char *s = malloc(n);
	assert_non_null(s);
	snprintf(s, n, "%s%s%s%s", a, b, c, d);
	return s;
}

static void a_log_replayed_as_logged_has_no_difference(void **state)
{
	(void)state;
	char *l = logged(0), *out = NULL;
	/* the last line cut mid-way: reported and skipped, not a failure */
	char *text = join(l, "\n", l, "\n");
	text[strlen(text) - strlen(l) / 2] = 0;
	struct decision_replay_counts n;
	assert_int_equal(replay(text, &n, &out), 0);
	assert_int_equal(n.read, 2);
	assert_int_equal(n.replayed, 1);
	assert_int_equal(n.differing, 0);
	assert_int_equal(n.skipped, 1);
	assert_non_null(strstr(out, "line 2: skipped, partial last line"));
	assert_non_null(strstr(out, "2 rounds read, 1 replayed, 0 differing, 1 skipped"));
	free(out);
	free(text);
	free(l);
}

static void a_changed_output_is_shown_with_its_first_difference(void **state)
{
	(void)state;
	char *l = logged(0), *s = logged(500), *out = NULL;
	/* the admitted workers' node changed on the logged side only */
	char *at = strstr(l, "\"role\":\"worker\",\"index\":0,\"node\":0");
	assert_non_null(at);
	char *changed = strdup(l);
	changed[at - l + strlen("\"role\":\"worker\",\"index\":0,\"node\":")] = '1';
	char *text = join(l, "\n", changed, "\n");
	char *text2 = join(text, s, "\n", "");
	struct decision_replay_counts n;
	assert_int_equal(replay(text2, &n, &out), 1);
	assert_int_equal(n.read, 3);
	assert_int_equal(n.replayed, 2);
	assert_int_equal(n.differing, 1);
	assert_int_equal(n.skipped, 1);
	assert_int_equal(n.malformed, 0);
	assert_non_null(strstr(out, "line 2 (now 100.000): differs at out.actions[0].pods[1].node "
	                            "(admit fits of ml/a): logged 1, recomputed 0"));
	assert_non_null(strstr(out, "line 3: skipped, refused: job ml/a asks a KubeShare share"));
	free(out);
	free(text);
	free(text2);
	free(changed);
	free(s);
	free(l);
}

static void a_malformed_complete_line_fails_the_replay(void **state)
{
	(void)state;
	char *l = logged(0), *out = NULL;
	char *text = join("{\"now\":1}\n", l, "\n", "");
	struct decision_replay_counts n;
	assert_int_equal(replay(text, &n, &out), 1);
	assert_int_equal(n.replayed, 1);
	assert_int_equal(n.malformed, 1);
	assert_non_null(strstr(out, "line 1: skipped, in: missing"));
	free(out);
	free(text);
	free(l);
	struct decision_replay_counts m;
	assert_int_equal(decision_replay("/nonexistent/decision.log", stderr, &m), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(a_log_replayed_as_logged_has_no_difference),
	    cmocka_unit_test(a_changed_output_is_shown_with_its_first_difference),
	    cmocka_unit_test(a_malformed_complete_line_fails_the_replay),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
