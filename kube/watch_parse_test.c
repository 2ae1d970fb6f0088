/*
 * watch_parse_test.c - cmocka tests for watch-stream framing and event and
 * list decoding: split chunks, blank lines, truncated, oversized and
 * malformed events, ERROR and BOOKMARK events, bad lists.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/object.h"
#include "kube/watch_parse.h"

struct seen {
	int n;
	enum kube_event_type type[8];
	char name[8][32];
	char rv[8][KUBE_RV_MAX];
	long code[8];
};

static char msg[256];

static void on_event(const struct kube_watch_event *ev, void *arg)
{
	struct seen *s = arg;
	assert_true(s->n < 8);
	s->type[s->n] = ev->type;
	struct kube_meta m;
	if (ev->object && kube_obj_meta(ev->object, &m) == DRAKE_OK)
		snprintf(s->name[s->n], sizeof(s->name[0]), "%s/%s", m.ns, m.name);
	snprintf(s->rv[s->n], KUBE_RV_MAX, "%s", ev->resource_version);
	s->code[s->n] = ev->error_code;
	s->n++;
}

#define POD(type, name, rv)                                                                        \
	"{\"type\":\"" type "\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"ml\","  \
	"\"name\":\"" name "\",\"resourceVersion\":\"" rv "\"}}}"

static drake_err feed(struct kube_watch_parser *p, const char *s, struct seen *seen)
{
	return kube_watch_parser_feed(p, s, strlen(s), on_event, seen, msg, sizeof(msg));
}

static void test_events_split_across_chunks_arrive_whole_and_in_order(void **state)
{
	struct kube_watch_parser p;
	kube_watch_parser_init(&p, 0);
	struct seen s = {0};
	const char *stream = POD("ADDED", "a", "1") "\n\n" POD("MODIFIED", "a", "2") "\r\n" POD(
	    "DELETED", "a", "3") "\n{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{"
	                         "\"resourceVersion\":\"9\"}}}\n";
	/* feed one byte at a time: the worst split */
	for (size_t i = 0; stream[i]; i++)
		assert_int_equal(
		    kube_watch_parser_feed(&p, stream + i, 1, on_event, &s, msg, sizeof(msg)),
		    DRAKE_OK);
	assert_int_equal(s.n, 4);
	assert_int_equal(s.type[0], KUBE_EVENT_ADDED);
	assert_int_equal(s.type[1], KUBE_EVENT_MODIFIED);
	assert_int_equal(s.type[2], KUBE_EVENT_DELETED);
	assert_int_equal(s.type[3], KUBE_EVENT_BOOKMARK);
	assert_string_equal(s.name[2], "ml/a");
	assert_string_equal(s.rv[1], "2");
	assert_string_equal(s.rv[3], "9");
	assert_int_equal(kube_watch_parser_pending(&p), 0);
	kube_watch_parser_release(&p);
}

static void test_truncated_event_stays_pending_and_is_not_delivered(void **state)
{
	struct kube_watch_parser p;
	kube_watch_parser_init(&p, 0);
	struct seen s = {0};
	const char *whole = POD("ADDED", "a", "1") "\n" POD("ADDED", "b", "2");
	assert_int_equal(feed(&p, whole, &s), DRAKE_OK);
	assert_int_equal(s.n, 1); /* b never got its newline */
	assert_true(kube_watch_parser_pending(&p) > 0);
	kube_watch_parser_reset(&p);
	assert_int_equal(kube_watch_parser_pending(&p), 0);
	kube_watch_parser_release(&p);
}

static void test_event_over_the_limit_is_refused(void **state)
{
	struct kube_watch_parser p;
	kube_watch_parser_init(&p, 64);
	struct seen s = {0};
	/* whole line in one chunk */
	assert_int_equal(feed(&p, POD("ADDED", "a-very-long-name-to-pass-64-bytes", "1") "\n", &s),
	                 DRAKE_ELIMIT);
	assert_non_null(strstr(msg, "larger than 64"));
	kube_watch_parser_reset(&p);
	/* the same, arriving in pieces with no newline yet */
	char big[100];
	memset(big, ' ', sizeof(big));
	assert_int_equal(kube_watch_parser_feed(&p, big, 40, on_event, &s, msg, sizeof(msg)),
	                 DRAKE_OK);
	assert_int_equal(kube_watch_parser_feed(&p, big, 40, on_event, &s, msg, sizeof(msg)),
	                 DRAKE_ELIMIT);
	assert_int_equal(s.n, 0);
	kube_watch_parser_release(&p);
}

static void test_malformed_events_are_refused_with_a_reason(void **state)
{
	static const struct {
		const char *line, *why;
	} bad[] = {
	    {"{not json", "not JSON"},
	    {"[1,2]", "no known type"},
	    {"{\"type\":\"EXPLODED\",\"object\":{}}", "no known type"},
	    {"{\"type\":\"ADDED\"}", "has no object"},
	    {"{\"type\":\"ADDED\",\"object\":[]}", "has no object"},
	    {"{\"type\":\"ADDED\",\"object\":{\"metadata\":{}}}", "no metadata.name"},
	    {"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"\"}}}", "no metadata.name"},
	    {"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"namespace\":5}}}",
	     "namespace is not a string"},
	    {"{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":"
	     "7}}}",
	     "resourceVersion is not a short string"},
	    {"{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{}}}", "without resourceVersion"},
	    {"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\""
	     "0123456789012345678901234567890123456789012345678901234567890123456789"
	     "0123456789012345678901234567890123456789012345678901234567890123456789\"}}}",
	     "resourceVersion is not a short string"}, /* over KUBE_RV_MAX */
	    {"{\"type\":\"ADDED\",\"type\":\"DELETED\",\"object\":{}}", "not JSON"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct kube_watch_event ev;
		drake_err e =
		    kube_watch_decode(bad[i].line, strlen(bad[i].line), &ev, msg, sizeof(msg));
		if (e != DRAKE_EINVAL || !strstr(msg, bad[i].why))
			fail_msg("line %s: got %s '%s', want '%s'", bad[i].line, drake_strerror(e),
			         msg, bad[i].why);
		assert_null(ev.object);
	}
	/* through the framer: the bad event stops the feed, later ones are not delivered */
	struct kube_watch_parser p;
	kube_watch_parser_init(&p, 0);
	struct seen s = {0};
	assert_int_equal(
	    feed(&p, POD("ADDED", "a", "1") "\n{oops}\n" POD("ADDED", "b", "2") "\n", &s),
	    DRAKE_EINVAL);
	assert_int_equal(s.n, 1);
	kube_watch_parser_release(&p);
}

static void test_error_event_carries_the_status_code(void **state)
{
	struct kube_watch_parser p;
	kube_watch_parser_init(&p, 0);
	struct seen s = {0};
	assert_int_equal(feed(&p,
	                      "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,"
	                      "\"reason\":\"Expired\",\"message\":\"too old resource version\"}}\n",
	                      &s),
	                 DRAKE_OK);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.type[0], KUBE_EVENT_ERROR);
	assert_int_equal(s.code[0], 410);
	kube_watch_parser_release(&p);
}

static void test_list_decodes_items_rv_and_continue(void **state)
{
	const char *list =
	    "{\"metadata\":{\"resourceVersion\":\"55\",\"continue\":\"abc+/=\"},\"items\":["
	    "{\"metadata\":{\"name\":\"a\",\"namespace\":\"ml\",\"resourceVersion\":\"1\"}},"
	    "{\"metadata\":{\"name\":\"b\",\"namespace\":\"ml\",\"resourceVersion\":\"2\"}}]}";
	struct seen s = {0};
	char rv[KUBE_RV_MAX], cont[64];
	assert_int_equal(kube_list_decode(list, strlen(list), on_event, &s, rv, cont, sizeof(cont),
	                                  msg, sizeof(msg)),
	                 DRAKE_OK);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.name[1], "ml/b");
	assert_string_equal(rv, "55");
	assert_string_equal(cont, "abc+/=");
	const char *empty = "{\"metadata\":{\"resourceVersion\":\"7\"},\"items\":null}";
	assert_int_equal(kube_list_decode(empty, strlen(empty), on_event, &s, rv, cont,
	                                  sizeof(cont), msg, sizeof(msg)),
	                 DRAKE_OK);
	assert_string_equal(cont, "");
}

static void test_bad_lists_deliver_nothing(void **state)
{
	static const char *bad[] = {
	    "{\"items\":[]}",
	    "{\"metadata\":{\"resourceVersion\":\"1\"},\"items\":{}}",
	    "{\"metadata\":{\"resourceVersion\":\"1\"},\"items\":[{\"metadata\":{\"name\":\"a\"}},{"
	    "}]}",
	    "truncated {\"metadata\":",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct seen s = {0};
		char rv[KUBE_RV_MAX], cont[64];
		assert_int_equal(kube_list_decode(bad[i], strlen(bad[i]), on_event, &s, rv, cont,
		                                  sizeof(cont), msg, sizeof(msg)),
		                 DRAKE_EINVAL);
		assert_int_equal(s.n, 0);
	}
	/* a continue token over the caller's buffer */
	const char *l =
	    "{\"metadata\":{\"resourceVersion\":\"1\",\"continue\":\"0123456789\"},\"items\":[]}";
	struct seen s = {0};
	char rv[KUBE_RV_MAX], cont[8];
	assert_int_equal(
	    kube_list_decode(l, strlen(l), on_event, &s, rv, cont, sizeof(cont), msg, sizeof(msg)),
	    DRAKE_ELIMIT);
}

static void test_list_over_the_item_limit_is_refused(void **state)
{
	size_t n = KUBE_LIST_ITEMS_MAX + 1;
	const char *item = "{\"metadata\":{\"name\":\"a\"}},";
	size_t cap = n * strlen(item) + 100;
	char *body = malloc(cap);
	assert_non_null(body);
	char *p = body + sprintf(body, "{\"metadata\":{\"resourceVersion\":\"1\"},\"items\":[");
	for (size_t i = 0; i < n; i++)
		p += sprintf(p, "%s", item);
	strcpy(p - 1, "]}");
	struct seen s = {0};
	char rv[KUBE_RV_MAX], cont[8];
	assert_int_equal(kube_list_decode(body, strlen(body), on_event, &s, rv, cont, sizeof(cont),
	                                  msg, sizeof(msg)),
	                 DRAKE_ELIMIT);
	assert_int_equal(s.n, 0);
	free(body);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_events_split_across_chunks_arrive_whole_and_in_order),
	    cmocka_unit_test(test_truncated_event_stays_pending_and_is_not_delivered),
	    cmocka_unit_test(test_event_over_the_limit_is_refused),
	    cmocka_unit_test(test_malformed_events_are_refused_with_a_reason),
	    cmocka_unit_test(test_error_event_carries_the_status_code),
	    cmocka_unit_test(test_list_decodes_items_rv_and_continue),
	    cmocka_unit_test(test_bad_lists_deliver_nothing),
	    cmocka_unit_test(test_list_over_the_item_limit_is_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
