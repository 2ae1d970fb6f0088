/* stop_test.c - SIGTERM and SIGINT end drake-train with 128 + the signal,
 * not by the signal's default action (which PID 1 in a container never
 * gets). */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "examples/train/stop.h"

/* The status of a child that installs the handlers and raises sig. */
static int status_after(int sig)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		stop_on_term();
		raise(sig);
		_exit(0); /* the signal did not end it */
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return st;
}

static void test_sigterm_exits_143(void **state)
{
	int st = status_after(SIGTERM);
	assert_true(WIFEXITED(st)); /* exited by the handler, not killed by the default */
	assert_int_equal(WEXITSTATUS(st), 143);
}

static void test_sigint_exits_130(void **state)
{
	int st = status_after(SIGINT);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 130);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sigterm_exits_143),
	    cmocka_unit_test(test_sigint_exits_130),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
