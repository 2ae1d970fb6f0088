/*
 * informer_test.c - cmocka tests for the cache and the list+watch informer
 * against a scripted fake API server (libevent's evhttp on 127.0.0.1):
 * paging, watch events, bookmarks, 410 Gone relist with delete sweep, bad
 * events, list failures with backoff, freeing mid-request.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "kube/cache.h"
#include "kube/client.h"
#include "kube/informer.h"
#include "kube/object.h"
#include "kube/watch_parse.h"

static char msg[256];

/* ---- cache ---- */

static struct json_t *obj(const char *json)
{
	struct kube_watch_event ev;
	char line[512];
	snprintf(line, sizeof(line), "{\"type\":\"ADDED\",\"object\":%s}", json);
	assert_int_equal(kube_watch_decode(line, strlen(line), &ev, msg, sizeof(msg)), DRAKE_OK);
	return ev.object; /* the event's reference becomes the caller's */
}

static bool count_cb(struct json_t *o, void *arg)
{
	(*(int *)arg)++;
	return true;
}

static bool count_stored(void *o, void *arg)
{
	(*(int *)arg)++;
	return true;
}

static void test_cache_indexes_by_key_owner_and_node(void **state)
{
	struct kube_cache c;
	kube_cache_init(&c);
	void *old, *stored;
	bool changed;
	char buf[256];
	for (int i = 0; i < 200; i++) { /* enough to make the table grow */
		snprintf(
		    buf, sizeof(buf),
		    "{\"metadata\":{\"name\":\"p%d\",\"namespace\":\"ml\",\"resourceVersion\":"
		    "\"1\",\"ownerReferences\":[{\"uid\":\"job%d\",\"controller\":true,\"kind\":"
		    "\"TFJob\"}]},\"spec\":{\"nodeName\":\"n%d\"}}",
		    i, i % 3, i % 5);
		struct json_t *o = obj(buf);
		assert_int_equal(kube_cache_put(&c, o, 1, NULL, &old, &changed), DRAKE_OK);
		kube_obj_unref(o);
		assert_null(old);
	}
	assert_int_equal(kube_cache_count(&c), 200);
	assert_non_null(kube_cache_get(&c, "ml", "p7"));
	assert_null(kube_cache_get(&c, "other", "p7"));
	int n = 0;
	kube_cache_by_owner(&c, "job1", count_cb, &n);
	assert_int_equal(n, 67); /* i % 3 == 1 for i < 200 */
	n = 0;
	kube_cache_by_node(&c, "n4", count_cb, &n);
	assert_int_equal(n, 40);
	/* the same resourceVersion is the same object: kept as stored, not
	 * decoded again, only marked with the new generation */
	struct json_t *held = kube_cache_get(&c, "ml", "p4");
	struct json_t *o =
	    obj("{\"metadata\":{\"name\":\"p4\",\"namespace\":\"ml\",\"resourceVersion\":\"1\"},"
	        "\"spec\":{\"nodeName\":\"n0\"}}");
	assert_int_equal(kube_cache_put(&c, o, 2, &stored, &old, &changed), DRAKE_OK);
	assert_false(changed);
	assert_null(old);
	assert_ptr_equal(stored, held);
	kube_obj_unref(o);
	n = 0;
	kube_cache_by_node(&c, "n4", count_cb, &n);
	assert_int_equal(n, 40);
	/* a new version moving node and owner re-indexes */
	o = obj("{\"metadata\":{\"name\":\"p4\",\"namespace\":\"ml\",\"resourceVersion\":\"2\"},"
	        "\"spec\":{\"nodeName\":\"n0\"}}");
	assert_int_equal(kube_cache_put(&c, o, 2, &stored, &old, &changed), DRAKE_OK);
	assert_true(changed);
	assert_ptr_equal(old, held);
	assert_ptr_equal(stored, o);
	kube_cache_drop(&c, old);
	kube_obj_unref(o);
	n = 0;
	kube_cache_by_node(&c, "n4", count_cb, &n);
	assert_int_equal(n, 39);
	n = 0;
	kube_cache_by_owner(&c, "job1", count_cb, &n);
	assert_int_equal(n, 66);
	/* sweep keeps only generation 2 */
	n = 0;
	kube_cache_sweep(&c, 2, count_stored, &n);
	assert_int_equal(n, 199);
	assert_int_equal(kube_cache_count(&c), 1);
	void *gone = kube_cache_remove(&c, "ml", "p4");
	assert_non_null(gone);
	kube_cache_drop(&c, gone);
	assert_null(kube_cache_remove(&c, "ml", "p4"));
	kube_cache_release(&c);
	kube_cache_release(NULL);
}

static void test_cache_refuses_objects_over_its_limit(void **state)
{
	struct kube_cache c;
	kube_cache_init(&c);
	c.max = 2;
	void *old;
	bool changed;
	const char *objs[] = {"{\"metadata\":{\"name\":\"a\"}}", "{\"metadata\":{\"name\":\"b\"}}",
	                      "{\"metadata\":{\"name\":\"c\"}}"};
	for (int i = 0; i < 3; i++) {
		struct json_t *o = obj(objs[i]);
		assert_int_equal(kube_cache_put(&c, o, 1, NULL, &old, &changed),
		                 i < 2 ? DRAKE_OK : DRAKE_ELIMIT);
		kube_obj_unref(o);
	}
	struct json_t *o = obj(objs[1]); /* replacing one held is still fine */
	assert_int_equal(kube_cache_put(&c, o, 1, NULL, &old, &changed), DRAKE_OK);
	kube_cache_drop(&c, old);
	kube_obj_unref(o);
	assert_int_equal(kube_cache_count(&c), 2);
	kube_cache_release(&c);
}

/* ---- informer against a scripted server ---- */

struct env {
	struct event_base *base;
	struct evhttp *http;
	struct kube_client *client;
	struct kube_informer *inf;
	int lists, watches;
	bool fail_first_list;
	char log[1024];
	char watch_rvs[256];
	bool bookmarks_asked;
	int stop_after_watches;
	bool fail_first_watch; /* answer the first watch 500: a broken watch */
	char at_list[512];     /* at each list request: the informer's synced state */
};

static void reply(struct evhttp_request *req, int code, const char *body)
{
	struct evbuffer *b = evbuffer_new();
	evbuffer_add_printf(b, "%s", body);
	evhttp_send_reply(req, code, "x", b);
	evbuffer_free(b);
}

#define ITEM(name, rv)                                                                             \
	"{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"ml\",\"resourceVersion\":\"" rv "\"" \
	"}}"
#define EV(type, name, rv) "{\"type\":\"" type "\",\"object\":" ITEM(name, rv) "}\n"

static void on_http(struct evhttp_request *req, void *arg)
{
	struct env *e = arg;
	struct evkeyvalq q;
	const char *query = evhttp_uri_get_query(evhttp_request_get_evhttp_uri(req));
	evhttp_parse_query_str(query ? query : "", &q);
	const char *watch = evhttp_find_header(&q, "watch");
	const char *cont = evhttp_find_header(&q, "continue");
	if (!watch) {
		e->lists++;
		const char *why = kube_informer_unsynced_why(e->inf);
		char line[200];
		snprintf(line, sizeof(line), "%s%d:%s", e->at_list[0] ? "; " : "", e->lists,
		         why ? why : "synced");
		if (strlen(e->at_list) + strlen(line) < sizeof(e->at_list))
			strcat(e->at_list, line);
		if (e->fail_first_list && e->lists == 1)
			reply(req, 500, "boom");
		else if (!cont && e->lists <= 2)
			reply(req, 200,
			      "{\"metadata\":{\"resourceVersion\":\"10\",\"continue\":\"tok+/1\"},"
			      "\"items\":[" ITEM("a", "1") "]}");
		else if (cont && !strcmp(cont, "tok+/1"))
			reply(req, 200,
			      "{\"metadata\":{\"resourceVersion\":\"10\"},\"items\":[" ITEM(
			          "b", "2") "]}");
		else
			reply(req, 200,
			      "{\"metadata\":{\"resourceVersion\":\"20\"},\"items\":[" ITEM(
			          "a", "11") "," ITEM("d", "20") "]}");
		evhttp_clear_headers(&q);
		return;
	}
	e->watches++;
	const char *rv = evhttp_find_header(&q, "resourceVersion");
	const char *bm = evhttp_find_header(&q, "allowWatchBookmarks");
	e->bookmarks_asked = bm && !strcmp(bm, "true");
	strcat(e->watch_rvs, rv ? rv : "-");
	strcat(e->watch_rvs, " ");
	const char *body = NULL;
	if (e->fail_first_watch && e->watches == 1) {
		if (e->watches >= e->stop_after_watches)
			event_base_loopbreak(e->base);
		evhttp_clear_headers(&q);
		reply(req, 500, "{\"kind\":\"Status\",\"code\":500}");
		return;
	}
	switch (e->watches) {
	case 1:
		body = EV("MODIFIED", "a", "11") EV("ADDED", "c", "12")
		    EV("DELETED", "b", "13") "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{"
		                             "\"resourceVersion\":\"14\"}}}\n";
		break;
	case 2:
		body = "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410}}\n";
		break;
	case 3: body = "{bad json\n"; break;
	}
	if (e->watches >= e->stop_after_watches)
		event_base_loopbreak(e->base);
	evhttp_clear_headers(&q);
	if (!body)
		return; /* held open until the test ends */
	reply(req, 200, body);
}

static void log_event(struct env *e, const char *what, struct json_t *o)
{
	struct kube_meta m;
	assert_int_equal(kube_obj_meta(o, &m), DRAKE_OK);
	char line[64];
	snprintf(line, sizeof(line), "%s %s/%s@%s; ", what, m.ns, m.name, m.rv);
	strcat(e->log, line);
}

static void on_add(void *o, void *arg)
{
	log_event(arg, "add", o);
}
static void on_update(void *old, void *o, void *arg)
{
	log_event(arg, "update", o);
}
static void on_delete(void *o, void *arg)
{
	log_event(arg, "delete", o);
}

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));
	e->base = event_base_new();
	e->http = evhttp_new(e->base);
	evhttp_set_gencb(e->http, on_http, e);
	struct evhttp_bound_socket *bs = evhttp_bind_socket_with_handle(e->http, "127.0.0.1", 0);
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	getsockname(evhttp_bound_socket_get_fd(bs), (struct sockaddr *)&sa, &len);
	char server[64];
	snprintf(server, sizeof(server), "http://127.0.0.1:%d", ntohs(sa.sin_port));
	struct kube_config cfg = {.server = server};
	struct kube_client_options o = {.timeout_ms = 10000, .max_body = 1 << 20};
	e->client = kube_client_new(e->base, &cfg, &o, msg, sizeof(msg));
	struct kube_informer_options io = {.name = "pods",
	                                   .path = "/api/v1/pods",
	                                   .page_size = 1,
	                                   .backoff_min_ms = 10,
	                                   .backoff_max_ms = 40};
	struct kube_informer_handlers h = {on_add, on_update, on_delete, e};
	e->inf = kube_informer_new(e->base, e->client, &io, &h, msg, sizeof(msg));
	assert_non_null(e->inf);
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;
	kube_informer_free(e->inf);
	kube_client_free(e->client);
	evhttp_free(e->http);
	event_base_free(e->base);
	free(e);
	return 0;
}

static void run(struct env *e, int ms)
{
	struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
	event_base_loopexit(e->base, &tv);
	event_base_dispatch(e->base);
}

static void test_informer_pages_watches_and_relists_on_gone(void **state)
{
	struct env *e = *state;
	e->stop_after_watches = 4;
	assert_false(kube_informer_synced(e->inf));
	assert_int_equal(kube_informer_start(e->inf), DRAKE_OK);
	assert_int_equal(kube_informer_start(e->inf), DRAKE_ESTATE);
	run(e, 15000);
	assert_int_equal(e->watches, 4);
	assert_true(kube_informer_synced(e->inf));
	struct kube_informer *arr[] = {e->inf};
	assert_true(kube_informers_synced(arr, 1));
	assert_true(e->bookmarks_asked);
	/* watch 1 from the list's rv, 2 from the bookmark's, 3 after the 410
	 * relist, 4 after the bad event's relist */
	assert_string_equal(e->watch_rvs, "10 14 20 20 ");
	assert_string_equal(e->log, "add ml/a@1; add ml/b@2; "                      /* two pages */
	                            "update ml/a@11; add ml/c@12; delete ml/b@13; " /* watch 1 */
	                            "add ml/d@20; delete ml/c@12; " /* relist after 410 */
	); /* relist after bad event: no change */
	assert_int_equal(kube_informer_list_count(e->inf), 3);
	assert_int_equal(kube_cache_count(kube_informer_cache(e->inf)), 2);
	assert_non_null(kube_informer_get(e->inf, "ml", "d"));
	assert_null(kube_informer_get(e->inf, "ml", "c"));
}

static void test_a_broken_watch_makes_the_cache_unsynced_until_it_relisted(void **state)
{
	struct env *e = *state;
	e->fail_first_watch = true;
	e->stop_after_watches = 2;
	assert_int_equal(kube_informer_start(e->inf), DRAKE_OK);
	run(e, 15000);
	/* lists 1-2: the first list's pages; 3: the relist after the broken
	 * watch (not a watch again from rv 10), made while the informer said
	 * why it was not synced */
	assert_string_equal(e->at_list, "1:first list not complete; 2:first list not complete; "
	                                "3:watch failed (HTTP 500), relisting");
	assert_true(kube_informer_synced(e->inf));
	assert_null(kube_informer_unsynced_why(e->inf));
	assert_int_equal(kube_informer_list_count(e->inf), 2);
	assert_string_equal(e->watch_rvs, "10 20 ");
}

static void test_a_410_makes_the_cache_unsynced_until_it_relisted(void **state)
{
	struct env *e = *state;
	e->stop_after_watches = 3;
	assert_int_equal(kube_informer_start(e->inf), DRAKE_OK);
	run(e, 15000);
	/* watch 2 answers 410 Gone; the relist is list 3 (one page) */
	assert_string_equal(e->at_list, "1:first list not complete; 2:first list not complete; "
	                                "3:watch expired (HTTP 410), relisting");
	assert_true(kube_informer_synced(e->inf));
}

static void test_failed_list_is_retried_after_backoff(void **state)
{
	struct env *e = *state;
	e->fail_first_list = true;
	e->stop_after_watches = 1;
	assert_int_equal(kube_informer_start(e->inf), DRAKE_OK);
	run(e, 15000);
	assert_true(kube_informer_synced(e->inf));
	assert_int_equal(e->lists, 3); /* failed, then two pages */
}

static void test_free_while_list_in_flight_is_safe(void **state)
{
	struct env *e = *state;
	assert_int_equal(kube_informer_start(e->inf), DRAKE_OK);
	kube_informer_free(e->inf); /* the list request is still queued in the client */
	e->inf = NULL;
	run(e, 100);
	assert_false(kube_informer_synced(NULL));
}

static void test_informer_rejects_bad_options(void **state)
{
	struct env *e = *state;
	struct kube_informer_options io = {.path = "api/v1/pods"};
	assert_null(kube_informer_new(e->base, e->client, &io, NULL, msg, sizeof(msg)));
	assert_int_equal(kube_informer_start(NULL), DRAKE_EINVAL);
	kube_informer_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cache_indexes_by_key_owner_and_node),
	    cmocka_unit_test(test_cache_refuses_objects_over_its_limit),
	    cmocka_unit_test_setup_teardown(test_informer_pages_watches_and_relists_on_gone, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(test_failed_list_is_retried_after_backoff, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(
	        test_a_broken_watch_makes_the_cache_unsynced_until_it_relisted, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_a_410_makes_the_cache_unsynced_until_it_relisted,
	                                    setup, teardown),
	    cmocka_unit_test_setup_teardown(test_free_while_list_in_flight_is_safe, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(test_informer_rejects_bad_options, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
