/* stop.c - see stop.h. */
#include "examples/train/stop.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

static void on_signal(int sig)
{
	/* async-signal-safe only: write and _exit */
	static const char term[] = "drake-train: SIGTERM: stopping\n";
	static const char intr[] = "drake-train: SIGINT: stopping\n";
	const char *m = sig == SIGTERM ? term : intr;
	ssize_t n = write(STDERR_FILENO, m, strlen(m));
	(void)n;
	_exit(128 + sig);
}

void stop_on_term(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
}
