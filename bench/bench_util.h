/*
 * bench_util.h - what the benchmarks share: a monotonic clock, a free
 * loopback port, sorting doubles, and a process's memory as the kernel
 * reports it. Header-only: each benchmark is its own program.
 */
#ifndef DRAKE_BENCH_UTIL_H
#define DRAKE_BENCH_UTIL_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

static inline double bench_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A TCP port nothing listens on now, on loopback; exits when there is none. */
static inline int bench_free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t l = sizeof(a);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(fd, (struct sockaddr *)&a, &l)) {
		perror("bench: free port");
		exit(1);
	}
	close(fd);
	return ntohs(a.sin_port);
}

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* A "Field:   N kB" line of /proc/PID/status (VmRSS, VmHWM), in KiB; -1
 * when the process or the field is gone. */
static inline long bench_status_kib(pid_t pid, const char *field)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	size_t fl = strlen(field);
	FILE *f = fopen(path, "r");
	long kib = -1;
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, field, fl) == 0 && line[fl] == ':') {
			kib = strtol(line + fl + 1, NULL, 10);
			break;
		}
	if (f)
		fclose(f);
	return kib;
}

#endif
