/*
 * tls_test.c - the TLS bufferevent of an accepted connection: made and
 * freed whole, and when libevent cannot make it (an allocation it makes
 * fails: libevent's allocator is the test's), nothing freed twice and
 * nothing leaked (make asan runs this under ASan, which reports either).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>

#include "extender/tls.h"

/* libevent's allocator: the next allocation fails when fail_next is set. */
static int fail_next;

static void *lev_malloc(size_t n)
{
	if (fail_next) {
		fail_next = 0;
		return NULL;
	}
	return malloc(n);
}

static void *lev_realloc(void *p, size_t n)
{
	return realloc(p, n);
}

static void a_connection_bufferevent_is_made_and_freed_whole(void **state)
{
	(void)state;
	struct event_base *base = event_base_new();
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
	assert_non_null(base);
	assert_non_null(ctx);
	struct bufferevent *bev = tls_server_bufferevent(base, ctx, BUFFEREVENT_SSL_ACCEPTING);
	assert_non_null(bev);
	assert_non_null(bufferevent_openssl_get_ssl(bev));
	bufferevent_free(bev); /* frees the SSL object with it */
	SSL_CTX_free(ctx);
	event_base_free(base);
}

/* libevent fails to allocate the bufferevent after it was handed the SSL
 * object: it frees the object itself; freeing it again would be a double
 * free, not freeing it at all a leak (before the fix, drake freed it). */
static void a_failure_in_libevent_frees_the_ssl_object_once(void **state)
{
	(void)state;
	struct event_base *base = event_base_new();
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
	assert_non_null(base);
	fail_next = 1;
	assert_null(tls_server_bufferevent(base, ctx, BUFFEREVENT_SSL_ACCEPTING));
	assert_int_equal(fail_next, 0); /* the failure was libevent's */
	SSL_CTX_free(ctx);
	event_base_free(base);
}

int main(void)
{
	event_set_mem_functions(lev_malloc, lev_realloc, free); /* before any libevent call */
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(a_connection_bufferevent_is_made_and_freed_whole),
	    cmocka_unit_test(a_failure_in_libevent_frees_the_ssl_object_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
