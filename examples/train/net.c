/*
 * net.c - sockets for net.h. A worker's socket is blocking with timeouts
 * (one request in flight, nothing else to do meanwhile); connecting is
 * non-blocking so each address gets a bounded attempt.
 */
#include "examples/train/net.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

double net_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int net_listen(int port, char *msg, size_t len)
{
	int one = 1, zero = 0;
	int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0) {
		struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons(port)};
		a6.sin6_addr = in6addr_any;
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&a6, sizeof(a6)) == 0 && listen(fd, 128) == 0)
			return fd;
		close(fd);
	}
	/* no IPv6 on this host (or pod): IPv4 alone */
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		drake_errorf(DRAKE_EIO, msg, len, "socket: %s", strerror(errno));
		return -1;
	}
	struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_port = htons(port)};
	a4.sin_addr.s_addr = htonl(INADDR_ANY);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a4, sizeof(a4)) != 0 || listen(fd, 128) != 0) {
		drake_errorf(DRAKE_EIO, msg, len, "cannot listen on port %d: %s", port,
		             strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static void set_timeouts(int fd, double io_timeout)
{
	struct timeval tv = {(time_t)io_timeout,
	                     (suseconds_t)((io_timeout - (double)(time_t)io_timeout) * 1e6)};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* One address, within timeout; 0 or an errno. */
static int connect_one(int fd, const struct addrinfo *ai, double timeout)
{
	int fl = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	int rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
	if (rc != 0 && errno != EINPROGRESS)
		return errno;
	if (rc != 0) {
		struct pollfd p = {fd, POLLOUT, 0};
		int n = poll(&p, 1, (int)(timeout * 1000));
		if (n == 0)
			return ETIMEDOUT;
		if (n < 0)
			return errno;
		int soerr = 0;
		socklen_t sl = sizeof(soerr);
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
		if (soerr)
			return soerr;
	}
	fcntl(fd, F_SETFL, fl);
	return 0;
}

int net_connect(const char *host, int port, double timeout, double io_timeout, char *msg,
                size_t len)
{
	char service[16];
	snprintf(service, sizeof(service), "%d", port);
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_family = AF_UNSPEC}, *res = NULL;
	int g = getaddrinfo(host, service, &hints, &res);
	if (g != 0) {
		drake_errorf(DRAKE_EIO, msg, len, "cannot resolve %s: %s", host,
		             g == EAI_SYSTEM ? strerror(errno) : gai_strerror(g));
		return -1;
	}
	int err = 0;
	for (const struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) {
			err = errno;
			continue;
		}
		err = connect_one(fd, ai, timeout);
		if (err == 0) {
			freeaddrinfo(res);
			set_timeouts(fd, io_timeout);
			return fd;
		}
		close(fd);
	}
	freeaddrinfo(res);
	drake_errorf(DRAKE_EIO, msg, len, "cannot connect to %s:%d: %s", host, port, strerror(err));
	return -1;
}

static drake_err io_error(const char *what, ssize_t n, char *msg, size_t len)
{
	if (n == 0)
		return drake_errorf(DRAKE_EIO, msg, len, "%s: the PS closed the connection", what);
	if (errno == EAGAIN || errno == EWOULDBLOCK)
		return drake_errorf(DRAKE_ETIMEOUT, msg, len, "%s: no answer in time", what);
	return drake_errorf(DRAKE_EIO, msg, len, "%s: %s", what, strerror(errno));
}

drake_err net_send(int fd, const struct proto_msg *m, uint8_t *buf, size_t cap, char *msg,
                   size_t len)
{
	size_t n = proto_encode(m, buf, cap);
	if (n == 0)
		return drake_errorf(DRAKE_EINVAL, msg, len,
		                    "cannot encode a %s (a value not finite?)",
		                    proto_type_name(m->type));
	for (size_t off = 0; off < n;) {
		ssize_t w = send(fd, buf + off, n - off, MSG_NOSIGNAL);
		if (w <= 0) {
			if (w < 0 && errno == EINTR)
				continue;
			return io_error("send", w, msg, len);
		}
		off += (size_t)w;
	}
	return DRAKE_OK;
}

static drake_err recv_all(int fd, uint8_t *p, size_t n, char *msg, size_t len)
{
	for (size_t off = 0; off < n;) {
		ssize_t r = recv(fd, p + off, n - off, 0);
		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			return io_error("receive", r, msg, len);
		}
		off += (size_t)r;
	}
	return DRAKE_OK;
}

drake_err net_recv(int fd, struct proto_msg *m, double *params, size_t pcap, uint8_t *buf,
                   size_t cap, char *msg, size_t len)
{
	uint8_t hdr[PROTO_HEADER];
	enum proto_type type;
	uint32_t plen;
	drake_err e = recv_all(fd, hdr, sizeof(hdr), msg, len);
	if (!e)
		e = proto_header(hdr, &type, &plen, msg, len);
	if (!e && plen > cap)
		e = drake_errorf(DRAKE_ELIMIT, msg, len, "a %s of %u bytes, over the %zu expected",
		                 proto_type_name(type), plen, cap);
	if (!e)
		e = recv_all(fd, buf, plen, msg, len);
	if (!e)
		e = proto_decode(type, buf, plen, m, params, pcap, msg, len);
	return e;
}
