/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/step/: the step's plan: host lists, task layouts, node order,
 * MASTER_ADDR and the port, rank 0, heterogeneous steps, srun's command line
 * and what it hands the nodes, the interface to rank 0, the step's datagram
 * channel. Uses lib/common/. */
/* channel.c: see channel.h. */
#define _GNU_SOURCE 1 /* pipe2 */
#include "config.h"
#include "channel.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

/* /dev/urandom, else pid and time. */
uint64_t rdzv_make_nonce(void)
{
	uint64_t n = 0;
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (read(fd, &n, sizeof(n)) != (ssize_t)sizeof(n))
			n = 0;
		close(fd);
	}
	return n ? n : ((uint64_t)getpid() << 32) ^ (uint64_t)time(NULL);
}

/* A datagram socket on any address (IPv6 and IPv4, else IPv4), a port of the
 * kernel's. Returns the socket (non-blocking, close-on-exec) and *port, or -1. */
int rdzv_dgram_listen(uint16_t *port)
{
	struct sockaddr_in6 a6;
	struct sockaddr_in a4;
	struct sockaddr_storage got;
	socklen_t len = sizeof(got);
	int s, off = 0;

	memset(&a6, 0, sizeof(a6));
	a6.sin6_family = AF_INET6;
	a6.sin6_addr = in6addr_any;
	s = socket(AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s >= 0 && (setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off)) < 0
	               || bind(s, (struct sockaddr *)&a6, sizeof(a6)) < 0)) {
		close(s);
		s = -1;
	}
	if (s < 0) { /* no IPv6 on this host */
		memset(&a4, 0, sizeof(a4));
		a4.sin_family = AF_INET;
		a4.sin_addr.s_addr = htonl(INADDR_ANY);
		s = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (s >= 0 && bind(s, (struct sockaddr *)&a4, sizeof(a4)) < 0) {
			close(s);
			s = -1;
		}
	}
	if (s < 0 || getsockname(s, (struct sockaddr *)&got, &len) < 0) {
		if (s >= 0)
			close(s);
		return -1;
	}
	*port = got.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&got)->sin6_port)
	                                  : ntohs(((struct sockaddr_in *)&got)->sin_port);
	return s;
}

int rdzv_hex64(const char *s, size_t n, uint64_t *v)
{
	uint64_t x = 0;
	size_t i;

	if (!s || n == 0 || n > 16)
		return -1;
	for (i = 0; i < n; i++) {
		char c = s[i];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;

		if (d < 0)
			return -1;
		x = x << 4 | (uint64_t)d;
	}
	*v = x;
	return 0;
}

int rdzv_channel_var_format(const struct rdzv_channel_addr *a, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%u.%u:%u:%016llx", a->job, a->step, a->port,
	                 (unsigned long long)a->nonce);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* Decimal digits up to stop (or the end) into *v, at most max. */
static int read_dec(const char **p, char stop, uint64_t max, uint64_t *v)
{
	const char *q = *p;

	while (*q >= '0' && *q <= '9')
		q++;
	if (*q != stop || rdzv_parse_u64n(*p, (size_t)(q - *p), 0, max, v) < 0)
		return -1;
	*p = *q ? q + 1 : q;
	return 0;
}

int rdzv_channel_var_parse(const char *s, struct rdzv_channel_addr *a, const char **rest)
{
	const char *p = s;
	uint64_t job, step, port;

	if (!s || read_dec(&p, '.', UINT32_MAX, &job) < 0 || read_dec(&p, ':', UINT32_MAX, &step) < 0
	    || read_dec(&p, ':', 65535, &port) < 0 || strnlen(p, 16) != 16
	    || rdzv_hex64(p, 16, &a->nonce) < 0 || (!rest && p[16]))
		return -1;
	a->job = (uint32_t)job;
	a->step = (uint32_t)step;
	a->port = (uint16_t)port;
	if (rest)
		*rest = p + 16;
	return 0;
}

int rdzv_channel_peer_resolve(const char *host, uint16_t port, struct rdzv_channel_peer *p)
{
	struct addrinfo hints, *res = NULL;
	char serv[8];
	int rc = -1;

	memset(p, 0, sizeof(*p));
	snprintf(serv, sizeof(serv), "%u", port);
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_DGRAM;
	hints.ai_flags = AI_NUMERICSERV;
	if (!host || getaddrinfo(host, serv, &hints, &res) != 0 || !res)
		return -1;
	if (res->ai_addrlen <= sizeof(p->to)) {
		memcpy(&p->to, res->ai_addr, res->ai_addrlen);
		p->len = res->ai_addrlen;
		rc = 0;
	}
	freeaddrinfo(res);
	return rc;
}

int rdzv_channel_send(const struct rdzv_channel_peer *p, const char *buf, size_t n)
{
	int s, rc, e;

	if (!p->len) {
		errno = EDESTADDRREQ;
		return -1;
	}
	if ((s = socket(p->to.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	rc = sendto(s, buf, n, 0, (const struct sockaddr *)&p->to, p->len) < 0 ? -1 : 0;
	e = errno;
	close(s);
	errno = e;
	return rc;
}

int rdzv_channel_ask(const struct rdzv_channel_peer *p, const char *msg, long wait_ms,
                     long resend_ms, char *buf, size_t len,
                     int (*answer)(const char *buf, size_t n, void *ctx), void *ctx)
{
	long deadline = rdzv_now_ms() + wait_ms;
	int s, rc = -2;

	if (!p->len) {
		errno = EDESTADDRREQ;
		return -1;
	}
	if ((s = socket(p->to.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	while (rc == -2) {
		long left = deadline - rdzv_now_ms(), until;
		struct pollfd pf = { s, POLLIN, 0 };

		if (left <= 0)
			break;
		(void)sendto(s, msg, strlen(msg), 0, (const struct sockaddr *)&p->to, p->len);
		until = rdzv_now_ms() + (left < resend_ms ? left : resend_ms);
		for (;;) {
			long w = until - rdzv_now_ms();
			ssize_t n;
			int v;

			if (w <= 0 || poll(&pf, 1, (int)w) <= 0)
				break;
			n = recv(s, buf, len, 0);
			if (n <= 0)
				continue;
			if ((v = answer(buf, (size_t)n, ctx)) >= 0) {
				rc = v;
				break;
			}
		}
	}
	close(s);
	return rc;
}

void rdzv_listener_init(struct rdzv_listener *l)
{
	memset(l, 0, sizeof(*l));
	l->sock = l->stop[0] = l->stop[1] = -1;
}

int rdzv_listener_open(struct rdzv_listener *l, uint32_t job, uint32_t step)
{
	l->addr.job = job;
	l->addr.step = step;
	l->addr.nonce = rdzv_make_nonce();
	if ((l->sock = rdzv_dgram_listen(&l->addr.port)) < 0 || pipe2(l->stop, O_CLOEXEC) < 0) {
		int e = errno;

		rdzv_listener_close(l);
		errno = e;
		return -1;
	}
	return 0;
}

/* Has rdzv_listener_close written to the stop pipe? */
static int stop_asked(const struct rdzv_listener *l)
{
	struct pollfd pf = { l->stop[0], POLLIN, 0 };

	return poll(&pf, 1, 0) > 0;
}

static void *listen_thread(void *arg)
{
	struct rdzv_listener *l = arg;
	char *buf = malloc(l->ops->max + 1);

	if (!buf)
		return NULL;
	for (;;) {
		struct pollfd pf[2] = { { l->sock, POLLIN, 0 }, { l->stop[0], POLLIN, 0 } };
		struct sockaddr_storage from;
		socklen_t flen;
		ssize_t n;

		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pf[1].revents)
			break;
		/* The stop pipe is looked at before every datagram: a sender
		 * that keeps the socket full (a flood) cannot hold the close. */
		while (!stop_asked(l) && (flen = sizeof(from),
		                          (n = recvfrom(l->sock, buf, l->ops->max, 0,
		                                        (struct sockaddr *)&from, &flen)) >= 0)) {
			buf[n] = '\0';
			l->ops->dgram(l, buf, (size_t)n, (struct sockaddr *)&from, flen, l->ctx);
		}
		if (stop_asked(l))
			break;
		if (l->ops->drained)
			l->ops->drained(l, l->ctx);
	}
	free(buf);
	return NULL;
}

int rdzv_listener_start(struct rdzv_listener *l, const struct rdzv_listener_ops *ops, void *ctx)
{
	sigset_t all, old;

	if (l->sock < 0 || l->started)
		return -1;
	l->ops = ops;
	l->ctx = ctx;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	l->started = pthread_create(&l->th, NULL, listen_thread, l) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return l->started ? 0 : -1;
}

void rdzv_listener_reply(struct rdzv_listener *l, const char *buf, size_t n,
                         const struct sockaddr *to, socklen_t tolen)
{
	(void)sendto(l->sock, buf, n, 0, to, tolen);
}

int rdzv_listener_stop_fd(const struct rdzv_listener *l)
{
	return l->stop[0];
}

void rdzv_listener_close(struct rdzv_listener *l)
{
	if (l->started) {
		if (write(l->stop[1], "x", 1) < 0) {
			/* our own pipe: cannot fail but for EINTR */
		}
		pthread_join(l->th, NULL);
		l->started = 0;
	}
	if (l->sock >= 0)
		close(l->sock);
	if (l->stop[0] >= 0)
		close(l->stop[0]);
	if (l->stop[1] >= 0)
		close(l->stop[1]);
	l->sock = l->stop[0] = l->stop[1] = -1;
}
