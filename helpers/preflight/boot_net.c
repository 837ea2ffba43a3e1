/* SPDX-License-Identifier: GPL-2.0-or-later */
/* boot_net.c: the bootstrap's sockets (listen, dial, framed send and receive)
 * and its client side. accept4 needs _GNU_SOURCE. */
#define _GNU_SOURCE
#include "config.h"
#include "bootstrap.h"
#include "boot-priv.h"
#include "util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* ---------------------------------------------------------------- sockets */

int64_t rdzv_boot_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int rdzv_boot_wait_ms(int64_t deadline)
{
	int64_t left = deadline - rdzv_boot_now_ms();

	if (left < 0)
		return 0;
	return left > 1000 ? 1000 : (int)left;
}

void rdzv_boot_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

void rdzv_boot_fmt_addr(const struct sockaddr *sa, char *ip, size_t iplen, uint16_t *port)
{
	const void *a = NULL;

	*port = 0;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)sa;

		a = &in->sin_addr;
		*port = ntohs(in->sin_port);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)(const void *)sa;

		/* Dual-stack sockets see IPv4 peers as ::ffff:a.b.c.d; other
		 * ranks dial the plain IPv4 form. */
		if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
			inet_ntop(AF_INET, in6->sin6_addr.s6_addr + 12, ip, (socklen_t)iplen);
			*port = ntohs(in6->sin6_port);
			return;
		}
		a = &in6->sin6_addr;
		*port = ntohs(in6->sin6_port);
	}
	if (!a || !inet_ntop(sa->sa_family, a, ip, (socklen_t)iplen))
		rdzv_strlcpy(ip, "?", iplen);
}

int rdzv_boot_listen(uint16_t port, uint16_t *bound, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int fd, one = 1, zero = 0;

	memset(&ss, 0, sizeof(ss));
	fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd >= 0) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

		/* One socket for IPv4 and IPv6 peers: MASTER_ADDR may resolve
		 * to either on other nodes. */
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
		in6->sin6_family = AF_INET6;
		in6->sin6_addr = in6addr_any;
		in6->sin6_port = htons(port);
		sl = sizeof(*in6);
	} else {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;

		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0)
			return rdzv_err(err, errlen, "socket: %s", strerror(errno));
		in->sin_family = AF_INET;
		in->sin_addr.s_addr = htonl(INADDR_ANY);
		in->sin_port = htons(port);
		sl = sizeof(*in);
	}
	/* A previous step's connections in TIME_WAIT must not keep the
	 * rendezvous port from being reused. */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, sl) < 0) {
		int e = errno;

		close(fd);
		return rdzv_err(err, errlen, "cannot listen on port %u: %s%s", port, strerror(e),
		                e == EADDRINUSE ? " (another process holds it)" : "");
	}
	if (listen(fd, 1024) < 0) {
		int e = errno;

		close(fd);
		return rdzv_err(err, errlen, "listen on port %u: %s", port, strerror(e));
	}
	sl = sizeof(ss);
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
		char ip[RDZV_BOOT_ADDR_MAX];

		rdzv_boot_fmt_addr((struct sockaddr *)&ss, ip, sizeof(ip), bound);
	} else {
		*bound = port;
	}
	return fd;
}

void rdzv_boot_tune(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* One connection attempt to one address; 0 or -1 with errno's reason. */
static int try_connect(const struct addrinfo *ai, int64_t deadline, int *fdp, int *why)
{
	int fd, e = 0;
	socklen_t el = sizeof(e);
	struct pollfd pfd;

	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
	if (fd < 0) {
		*why = errno;
		return -1;
	}
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
		if (errno != EINPROGRESS) {
			*why = errno;
			close(fd);
			return -1;
		}
		pfd.fd = fd;
		pfd.events = POLLOUT;
		for (;;) {
			int rc = poll(&pfd, 1, rdzv_boot_wait_ms(deadline));

			if (rc > 0)
				break;
			if (rc < 0 && errno == EINTR)
				continue;
			if (rc == 0 && rdzv_boot_now_ms() < deadline)
				continue;
			*why = rc == 0 ? ETIMEDOUT : errno;
			close(fd);
			return -1;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) < 0)
			e = errno;
		if (e) {
			*why = e;
			close(fd);
			return -1;
		}
	}
	rdzv_boot_tune(fd);
	*fdp = fd;
	return 0;
}

int rdzv_boot_dial(const char *host, uint16_t port, int64_t deadline, char *err, size_t errlen)
{
	char ports[8], reason[160] = "no attempt made";
	struct addrinfo hints, *res, *ai;
	long backoff = 100;
	int64_t now;

	snprintf(ports, sizeof(ports), "%u", port);
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	for (;;) {
		int rc = getaddrinfo(host, ports, &hints, &res);

		if (rc != 0) {
			snprintf(reason, sizeof(reason), "name does not resolve: %s", gai_strerror(rc));
		} else {
			for (ai = res; ai; ai = ai->ai_next) {
				int fd, why = 0;
				/* Each attempt gets a few seconds so that a black-holed
				 * first address does not eat the whole timeout. */
				int64_t until = rdzv_boot_now_ms() + 5000;

				if (until > deadline)
					until = deadline;
				if (try_connect(ai, until, &fd, &why) == 0) {
					freeaddrinfo(res);
					return fd;
				}
				snprintf(reason, sizeof(reason), "%s", strerror(why));
			}
			freeaddrinfo(res);
		}
		now = rdzv_boot_now_ms();
		if (now >= deadline)
			break;
		/* The last attempt happens at the deadline, so that a rank 0
		 * starting late is still found. */
		rdzv_boot_sleep_ms(deadline - now < backoff ? (long)(deadline - now) : backoff);
		if (backoff < 1000)
			backoff *= 2;
	}
	return rdzv_err(err, errlen, "cannot reach %s:%u: %s", host, port, reason);
}

static int write_all(int fd, const void *buf, size_t n, int64_t deadline, char *err,
                     size_t errlen)
{
	const unsigned char *p = buf;

	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w > 0) {
			p += w;
			n -= (size_t)w;
			continue;
		}
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
			struct pollfd pfd = { fd, POLLOUT, 0 };

			if (rdzv_boot_now_ms() >= deadline)
				return rdzv_err(err, errlen, "send timed out");
			poll(&pfd, 1, rdzv_boot_wait_ms(deadline));
			continue;
		}
		return rdzv_err(err, errlen, "send: %s", w < 0 ? strerror(errno) : "no progress");
	}
	return 0;
}

int rdzv_boot_send_frame(int fd, uint16_t type, uint32_t rank, uint32_t seq, const void *payload,
                         uint32_t len, int64_t deadline, char *err, size_t errlen)
{
	struct rdzv_boot_hdr h = { RDZV_BOOT_MAGIC, RDZV_BOOT_VERSION, type, rank, seq, len };
	unsigned char hb[RDZV_BOOT_HDR_LEN];

	rdzv_boot_hdr_pack(&h, hb);
	if (write_all(fd, hb, sizeof(hb), deadline, err, errlen) < 0)
		return -1;
	if (len && write_all(fd, payload, len, deadline, err, errlen) < 0)
		return -1;
	return 0;
}

int rdzv_boot_recv_frame(int fd, int64_t deadline, struct rdzv_boot_hdr *h,
                         unsigned char **payload, char *err, size_t errlen)
{
	struct rdzv_boot_rx rx;
	unsigned char b;
	int rv = -1;

	*payload = NULL;
	rdzv_boot_rx_init(&rx, RDZV_BOOT_MAX_LEN);
	/* Byte-wise for the header, then straight into the payload: never
	 * read past this frame, whose successor belongs to the next call. */
	for (;;) {
		unsigned char *dst = &b;
		size_t want = 1, used;
		ssize_t r;
		int st;

		if (rx.hhave == RDZV_BOOT_HDR_LEN && rx.payload) {
			dst = rx.payload + rx.phave;
			want = rx.hdr.len - rx.phave;
		}
		if (want == 0) {
			st = rdzv_boot_rx_feed(&rx, &b, 0, &used, err, errlen);
		} else {
			r = recv(fd, dst, want, 0);
			if (r == 0) {
				rdzv_err(err, errlen, "connection closed by the peer");
				goto fail;
			}
			if (r < 0) {
				if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
					struct pollfd pfd = { fd, POLLIN, 0 };

					if (rdzv_boot_now_ms() >= deadline) {
						rdzv_err(err, errlen, "no answer in time");
						goto fail;
					}
					poll(&pfd, 1, rdzv_boot_wait_ms(deadline));
					continue;
				}
				rdzv_err(err, errlen, "recv: %s", strerror(errno));
				goto fail;
			}
			if (dst == &b) {
				st = rdzv_boot_rx_feed(&rx, &b, 1, &used, err, errlen);
			} else {
				rx.phave += (size_t)r;
				st = rdzv_boot_rx_feed(&rx, &b, 0, &used, err, errlen);
			}
		}
		if (st < 0)
			goto fail;
		if (st == 1)
			break;
	}
	*h = rx.hdr;
	*payload = rx.payload;
	rx.payload = NULL;
	rv = 0;
fail:
	rdzv_boot_rx_reset(&rx);
	return rv;
}

/* ---------------------------------------------------------------- client */

struct rdzv_boot_client {
	int fd;
	uint32_t rank;
	char where[RDZV_BOOT_HOST_MAX + 8];
};

struct rdzv_boot_client *rdzv_boot_client_connect(const char *host, uint16_t port, uint32_t rank,
                                                  const struct rdzv_boot_hello *hello,
                                                  int64_t deadline, char *err, size_t errlen)
{
	struct rdzv_boot_client *c;
	unsigned char hb[8 + RDZV_BOOT_HOST_MAX + RDZV_BOOT_SESSION_MAX];
	unsigned char *payload = NULL;
	struct rdzv_boot_hdr h;
	char why[256];
	long n;

	c = calloc(1, sizeof(*c));
	if (!c) {
		rdzv_err(err, errlen, "out of memory");
		return NULL;
	}
	c->fd = -1;
	c->rank = rank;
	snprintf(c->where, sizeof(c->where), "%s:%u", host, port);
	n = rdzv_boot_hello_pack(hello, hb, sizeof(hb), err, errlen);
	if (n < 0)
		goto fail;
	c->fd = rdzv_boot_dial(host, port, deadline, err, errlen);
	if (c->fd < 0)
		goto fail;
	if (rdzv_boot_send_frame(c->fd, RDZV_BOOT_HELLO, rank, 0, hb, (uint32_t)n, deadline, why,
	                         sizeof(why)) < 0 ||
	    rdzv_boot_recv_frame(c->fd, deadline, &h, &payload, why, sizeof(why)) < 0) {
		rdzv_err(err, errlen, "connected to %s but the rendezvous did not answer: %s "
		         "(is another service on that port?)", c->where, why);
		goto fail;
	}
	if (h.type == RDZV_BOOT_REJECT) {
		rdzv_err(err, errlen, "rank 0 at %s refused rank %u: %s", c->where, rank,
		         (const char *)payload);
		goto fail;
	}
	if (h.type != RDZV_BOOT_WELCOME) {
		rdzv_err(err, errlen, "rank 0 at %s answered the hello with message type %u",
		         c->where, h.type);
		goto fail;
	}
	free(payload);
	return c;
fail:
	free(payload);
	rdzv_boot_client_destroy(c);
	return NULL;
}

void rdzv_boot_client_destroy(struct rdzv_boot_client *c)
{
	if (!c)
		return;
	if (c->fd >= 0)
		close(c->fd);
	free(c);
}

int rdzv_boot_client_allgather(struct rdzv_boot_client *c, uint32_t seq, const void *mine,
                               uint32_t len, int64_t deadline, unsigned char **all,
                               size_t *alllen, int *aborted, char *err, size_t errlen)
{
	unsigned char *payload = NULL;
	struct rdzv_boot_hdr h;
	char why[256];

	*all = NULL;
	*aborted = 0;
	if (rdzv_boot_send_frame(c->fd, RDZV_BOOT_GATHER, c->rank, seq, mine, len, deadline, why,
	                         sizeof(why)) < 0)
		return rdzv_err(err, errlen, "cannot send phase %u to rank 0 at %s: %s", seq,
		                c->where, why);
	if (rdzv_boot_recv_frame(c->fd, deadline, &h, &payload, why, sizeof(why)) < 0)
		return rdzv_err(err, errlen, "no phase %u answer from rank 0 at %s: %s", seq,
		                c->where, why);
	if (h.type == RDZV_BOOT_ABORT) {
		*aborted = 1;
		rdzv_err(err, errlen, "%s", (const char *)payload);
		free(payload);
		return -1;
	}
	if (h.type != RDZV_BOOT_ALL || h.seq != seq) {
		free(payload);
		return rdzv_err(err, errlen, "rank 0 at %s sent message type %u phase %u, expected "
		                "phase %u", c->where, h.type, h.seq, seq);
	}
	*all = payload;
	*alllen = h.len;
	return 0;
}
