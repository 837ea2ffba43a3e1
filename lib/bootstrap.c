/* accept4 */
#define _GNU_SOURCE
#include "config.h"
#include "bootstrap.h"
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

/* ---------------------------------------------------------------- frames */

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static void put16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)(v >> 8);
	p[1] = (unsigned char)v;
}

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint16_t get16(const unsigned char *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

void rdzv_boot_hdr_pack(const struct rdzv_boot_hdr *h, unsigned char out[RDZV_BOOT_HDR_LEN])
{
	put32(out, h->magic);
	put16(out + 4, h->version);
	put16(out + 6, h->type);
	put32(out + 8, h->rank);
	put32(out + 12, h->seq);
	put32(out + 16, h->len);
}

int rdzv_boot_hdr_unpack(const unsigned char in[RDZV_BOOT_HDR_LEN], uint32_t maxlen,
                         struct rdzv_boot_hdr *h, char *err, size_t errlen)
{
	h->magic = get32(in);
	h->version = get16(in + 4);
	h->type = get16(in + 6);
	h->rank = get32(in + 8);
	h->seq = get32(in + 12);
	h->len = get32(in + 16);
	if (h->magic != RDZV_BOOT_MAGIC)
		return rdzv_err(err, errlen, "not a rdzv-preflight message (magic 0x%08x)", h->magic);
	if (h->version != RDZV_BOOT_VERSION)
		return rdzv_err(err, errlen, "protocol version %u, this build speaks %u",
		                h->version, RDZV_BOOT_VERSION);
	if (h->type < RDZV_BOOT_HELLO || h->type >= RDZV_BOOT_TYPE_END)
		return rdzv_err(err, errlen, "unknown message type %u", h->type);
	if (h->len > maxlen)
		return rdzv_err(err, errlen, "message of %u bytes exceeds the limit of %u",
		                h->len, maxlen);
	return 0;
}

void rdzv_boot_rx_init(struct rdzv_boot_rx *rx, uint32_t maxlen)
{
	memset(rx, 0, sizeof(*rx));
	rx->maxlen = maxlen;
}

void rdzv_boot_rx_reset(struct rdzv_boot_rx *rx)
{
	free(rx->payload);
	rx->payload = NULL;
	rx->hhave = 0;
	rx->phave = 0;
}

int rdzv_boot_rx_feed(struct rdzv_boot_rx *rx, const void *buf, size_t n, size_t *used,
                      char *err, size_t errlen)
{
	const unsigned char *p = buf;
	size_t u = 0, take;

	*used = 0;
	if (rx->hhave < RDZV_BOOT_HDR_LEN) {
		take = RDZV_BOOT_HDR_LEN - rx->hhave;
		if (take > n)
			take = n;
		memcpy(rx->hbuf + rx->hhave, p, take);
		rx->hhave += take;
		u = take;
		*used = u;
		if (rx->hhave < RDZV_BOOT_HDR_LEN)
			return 0;
		if (rdzv_boot_hdr_unpack(rx->hbuf, rx->maxlen, &rx->hdr, err, errlen) < 0)
			return -1;
		/* Allocate only after the header passed its checks: a stranger
		 * cannot make us reserve more than maxlen. */
		rx->payload = malloc((size_t)rx->hdr.len + 1);
		if (!rx->payload)
			return rdzv_err(err, errlen, "out of memory for a %u-byte message", rx->hdr.len);
		rx->phave = 0;
	}
	take = rx->hdr.len - rx->phave;
	if (take > n - u)
		take = n - u;
	if (take && rx->payload)
		memcpy(rx->payload + rx->phave, p + u, take);
	rx->phave += take;
	*used = u + take;
	if (rx->phave == rx->hdr.len) {
		if (rx->payload)
			rx->payload[rx->hdr.len] = '\0';
		return 1;
	}
	return 0;
}

/* ---------------------------------------------------------------- payloads */

static int printable(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7e)
			return 0;
	return 1;
}

long rdzv_boot_hello_pack(const struct rdzv_boot_hello *h, unsigned char *out, size_t outlen,
                          char *err, size_t errlen)
{
	size_t hl = strnlen(h->host, sizeof(h->host));
	size_t sl = strnlen(h->session, sizeof(h->session));

	if (hl == 0 || hl > 255 || !printable(h->host, hl))
		return rdzv_err(err, errlen, "host name '%.64s' is empty, too long or not printable",
		                h->host);
	if (sl > 127 || !printable(h->session, sl))
		return rdzv_err(err, errlen, "session '%.64s' is too long or not printable",
		                h->session);
	if (outlen < 8 + hl + sl)
		return rdzv_err(err, errlen, "hello buffer too small");
	put32(out, h->world);
	put16(out + 4, h->link_port);
	out[6] = (unsigned char)hl;
	out[7] = (unsigned char)sl;
	memcpy(out + 8, h->host, hl);
	memcpy(out + 8 + hl, h->session, sl);
	return (long)(8 + hl + sl);
}

int rdzv_boot_hello_unpack(const unsigned char *p, size_t n, struct rdzv_boot_hello *h,
                           char *err, size_t errlen)
{
	size_t hl, sl;

	memset(h, 0, sizeof(*h));
	if (n < 8)
		return rdzv_err(err, errlen, "hello of %zu bytes is truncated", n);
	h->world = get32(p);
	h->link_port = get16(p + 4);
	hl = p[6];
	sl = p[7];
	if (n != 8 + hl + sl)
		return rdzv_err(err, errlen, "hello of %zu bytes announces %zu", n, 8 + hl + sl);
	if (hl == 0 || hl >= sizeof(h->host) || sl >= sizeof(h->session))
		return rdzv_err(err, errlen, "hello with a host of %zu and a session of %zu bytes",
		                hl, sl);
	if (!printable((const char *)p + 8, hl) || !printable((const char *)p + 8 + hl, sl))
		return rdzv_err(err, errlen, "hello with unprintable host or session");
	if (h->world == 0 || h->world > RDZV_BOOT_MAX_WORLD)
		return rdzv_err(err, errlen, "hello with world size %u", h->world);
	memcpy(h->host, p + 8, hl);
	memcpy(h->session, p + 8 + hl, sl);
	return 0;
}

int rdzv_boot_all_pack(const unsigned char *const *blob, const uint32_t *len, uint32_t count,
                       unsigned char **out, size_t *outlen, char *err, size_t errlen)
{
	size_t total = 4, off;
	unsigned char *buf;
	uint32_t i;

	*out = NULL;
	for (i = 0; i < count; i++) {
		total += 4 + (size_t)len[i];
		if (total > RDZV_BOOT_MAX_LEN)
			return rdzv_err(err, errlen, "all-gather of %u blobs exceeds %u bytes at rank %u",
			                count, RDZV_BOOT_MAX_LEN, i);
	}
	buf = malloc(total);
	if (!buf)
		return rdzv_err(err, errlen, "out of memory for %zu bytes", total);
	put32(buf, count);
	off = 4;
	for (i = 0; i < count; i++) {
		put32(buf + off, len[i]);
		off += 4;
		if (len[i])
			memcpy(buf + off, blob[i], len[i]);
		off += len[i];
	}
	*out = buf;
	*outlen = total;
	return 0;
}

int rdzv_boot_all_unpack(const unsigned char *p, size_t n, uint32_t want,
                         const unsigned char **ptr, uint32_t *len, char *err, size_t errlen)
{
	size_t off = 4;
	uint32_t count, i;

	if (n < 4)
		return rdzv_err(err, errlen, "all-gather payload of %zu bytes is truncated", n);
	count = get32(p);
	if (count != want)
		return rdzv_err(err, errlen, "all-gather holds %u blobs, expected %u", count, want);
	for (i = 0; i < count; i++) {
		uint32_t l;

		if (n - off < 4)
			return rdzv_err(err, errlen, "all-gather truncated at blob %u", i);
		l = get32(p + off);
		off += 4;
		if (l > n - off)
			return rdzv_err(err, errlen, "all-gather blob %u of %u bytes overruns the payload",
			                i, l);
		ptr[i] = p + off;
		len[i] = l;
		off += l;
	}
	if (off != n)
		return rdzv_err(err, errlen, "all-gather has %zu trailing bytes", n - off);
	return 0;
}

/* ---------------------------------------------------------------- sockets */

int64_t rdzv_boot_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int wait_ms(int64_t deadline)
{
	int64_t left = deadline - rdzv_boot_now_ms();

	if (left < 0)
		return 0;
	return left > 1000 ? 1000 : (int)left;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void fmt_addr(const struct sockaddr *sa, char *ip, size_t iplen, uint16_t *port)
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

		fmt_addr((struct sockaddr *)&ss, ip, sizeof(ip), bound);
	} else {
		*bound = port;
	}
	return fd;
}

static void tune(int fd)
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
			int rc = poll(&pfd, 1, wait_ms(deadline));

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
	tune(fd);
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
		sleep_ms(deadline - now < backoff ? (long)(deadline - now) : backoff);
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
			poll(&pfd, 1, wait_ms(deadline));
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
					poll(&pfd, 1, wait_ms(deadline));
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

/* ---------------------------------------------------------------- server */

#define MAX_PENDING 64        /* connections that have not said hello yet */
#define HELLO_GRACE_MS 10000  /* a silent connection is dropped after this */
#define NNOTES 8
#define NOTE_LEN 256

struct peer {
	int fd;
	int is_rank;
	uint32_t rank;
	int64_t since;
	char addr[RDZV_BOOT_ADDR_MAX + 8]; /* ip:port, for messages */
	char ip[RDZV_BOOT_ADDR_MAX];
	struct rdzv_boot_rx rx;
};

struct slot {
	struct rdzv_boot_hello *hello; /* NULL until the rank said hello */
	int told;                      /* aborting: the rank heard why */
	char ip[RDZV_BOOT_ADDR_MAX];
	struct peer *peer;
	uint32_t seq;                  /* phase of blob, 0 for none */
	unsigned char *blob;
	uint32_t blen;
};

struct rdzv_boot_server {
	int lfd;
	uint16_t port;
	uint32_t world, joined, cur_seq;
	char session[RDZV_BOOT_SESSION_MAX];
	struct slot *slot;
	struct peer **peer;
	size_t npeer, cappeer;
	unsigned rejected, nnotes;
	char notes[NNOTES][NOTE_LEN];
	char fatal[512];
	int failed;
	const char *aborting;          /* the reason every late rank is refused with */
	uint32_t ntold;
};

static void note(struct rdzv_boot_server *s, const char *fmt, ...) RDZV_PRINTF(2, 3);
static void note(struct rdzv_boot_server *s, const char *fmt, ...)
{
	va_list ap;

	if (s->nnotes == NNOTES) {
		memmove(s->notes[0], s->notes[1], (NNOTES - 1) * NOTE_LEN);
		s->nnotes--;
	}
	va_start(ap, fmt);
	vsnprintf(s->notes[s->nnotes++], NOTE_LEN, fmt, ap);
	va_end(ap);
}

static void fatal(struct rdzv_boot_server *s, const char *fmt, ...) RDZV_PRINTF(2, 3);
static void fatal(struct rdzv_boot_server *s, const char *fmt, ...)
{
	va_list ap;

	if (s->failed)
		return; /* the first cause is the one worth reporting */
	va_start(ap, fmt);
	vsnprintf(s->fatal, sizeof(s->fatal), fmt, ap);
	va_end(ap);
	s->failed = 1;
}

static void drop_peer(struct rdzv_boot_server *s, size_t i)
{
	struct peer *p = s->peer[i];

	if (p->is_rank && p->rank < s->world)
		s->slot[p->rank].peer = NULL;
	close(p->fd);
	rdzv_boot_rx_reset(&p->rx);
	free(p);
	s->peer[i] = s->peer[--s->npeer];
}

static void reject(struct rdzv_boot_server *s, size_t i, const char *why)
{
	struct peer *p = s->peer[i];

	/* Best effort and short: the stranger may not read at all. */
	rdzv_boot_send_frame(p->fd, RDZV_BOOT_REJECT, 0, 0, why, (uint32_t)strlen(why),
	                     rdzv_boot_now_ms() + 100, NULL, 0);
	s->rejected++;
	note(s, "refused %s: %s", p->addr, why);
	drop_peer(s, i);
}

struct rdzv_boot_server *rdzv_boot_server_create(uint16_t port, uint32_t world,
                                                 const char *session, const char *host,
                                                 uint16_t link_port, char *err, size_t errlen)
{
	struct rdzv_boot_server *s;

	if (world == 0 || world > RDZV_BOOT_MAX_WORLD) {
		rdzv_err(err, errlen, "world size %u out of range 1..%u", world, RDZV_BOOT_MAX_WORLD);
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		goto oom;
	s->lfd = -1;
	s->world = world;
	if (rdzv_strlcpy(s->session, session ? session : "", sizeof(s->session)) < 0) {
		rdzv_err(err, errlen, "session '%.32s...' too long", session);
		goto fail;
	}
	s->slot = calloc(world, sizeof(*s->slot));
	s->cappeer = 16;
	s->peer = calloc(s->cappeer, sizeof(*s->peer));
	if (!s->slot || !s->peer)
		goto oom;
	s->slot[0].hello = calloc(1, sizeof(struct rdzv_boot_hello));
	if (!s->slot[0].hello)
		goto oom;
	s->slot[0].hello->world = world;
	s->slot[0].hello->link_port = link_port;
	rdzv_strlcpy(s->slot[0].hello->host, host ? host : "?", RDZV_BOOT_HOST_MAX);
	rdzv_strlcpy(s->slot[0].hello->session, s->session, RDZV_BOOT_SESSION_MAX);
	s->joined = 1;
	s->lfd = rdzv_boot_listen(port, &s->port, err, errlen);
	if (s->lfd < 0)
		goto fail;
	return s;
oom:
	rdzv_err(err, errlen, "out of memory");
fail:
	rdzv_boot_server_destroy(s);
	return NULL;
}

void rdzv_boot_server_destroy(struct rdzv_boot_server *s)
{
	uint32_t r;

	if (!s)
		return;
	while (s->npeer)
		drop_peer(s, s->npeer - 1);
	if (s->slot) {
		for (r = 0; r < s->world; r++) {
			free(s->slot[r].hello);
			free(s->slot[r].blob);
		}
	}
	free(s->slot);
	free(s->peer);
	if (s->lfd >= 0)
		close(s->lfd);
	free(s);
}

uint16_t rdzv_boot_server_port(const struct rdzv_boot_server *s)
{
	return s->port;
}

const struct rdzv_boot_hello *rdzv_boot_server_hello(const struct rdzv_boot_server *s, uint32_t r)
{
	return r < s->world ? s->slot[r].hello : NULL;
}

const char *rdzv_boot_server_peer_addr(const struct rdzv_boot_server *s, uint32_t r)
{
	return r < s->world && s->slot[r].hello ? s->slot[r].ip : NULL;
}

uint32_t rdzv_boot_server_joined(const struct rdzv_boot_server *s)
{
	return s->joined;
}

unsigned rdzv_boot_server_rejected(const struct rdzv_boot_server *s)
{
	return s->rejected;
}

unsigned rdzv_boot_server_nnotes(const struct rdzv_boot_server *s)
{
	return s->nnotes;
}

const char *rdzv_boot_server_note(const struct rdzv_boot_server *s, unsigned i)
{
	return i < s->nnotes ? s->notes[i] : NULL;
}

static int npending(const struct rdzv_boot_server *s)
{
	size_t i;
	int n = 0;

	for (i = 0; i < s->npeer; i++)
		n += !s->peer[i]->is_rank;
	return n;
}

static void accept_new(struct rdzv_boot_server *s)
{
	for (;;) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		struct peer *p;
		uint16_t port;
		int fd = accept4(s->lfd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0)
			return; /* EAGAIN, or a transient error: poll again */
		if (npending(s) >= MAX_PENDING) {
			size_t i, oldest = s->npeer;

			/* A flood of silent strangers must not exhaust file
			 * descriptors: the oldest one goes. */
			for (i = 0; i < s->npeer; i++)
				if (!s->peer[i]->is_rank &&
				    (oldest == s->npeer || s->peer[i]->since < s->peer[oldest]->since))
					oldest = i;
			if (oldest < s->npeer)
				reject(s, oldest, "too many connections without a hello");
		}
		if (s->npeer == s->cappeer) {
			struct peer **np = realloc(s->peer, 2 * s->cappeer * sizeof(*np));

			if (!np) {
				close(fd);
				return;
			}
			s->peer = np;
			s->cappeer *= 2;
		}
		p = calloc(1, sizeof(*p));
		if (!p) {
			close(fd);
			return;
		}
		tune(fd);
		p->fd = fd;
		p->since = rdzv_boot_now_ms();
		fmt_addr((struct sockaddr *)&ss, p->ip, sizeof(p->ip), &port);
		snprintf(p->addr, sizeof(p->addr), "%s:%u", p->ip, port);
		rdzv_boot_rx_init(&p->rx, RDZV_BOOT_MAX_LEN);
		s->peer[s->npeer++] = p;
	}
}

/* A whole frame from a connection that has not said hello yet. Returns 1
 * when the peer stays (it became a rank), 0 when it was dropped. */
static int on_hello(struct rdzv_boot_server *s, size_t i)
{
	struct peer *p = s->peer[i];
	struct rdzv_boot_hello h, *keep;
	struct slot *sl;
	char why[1024];
	uint32_t r = p->rx.hdr.rank;

	if (s->aborting) {
		/* The run failed already: tell a late rank at once. */
		if (p->rx.hdr.type == RDZV_BOOT_HELLO && r < s->world && !s->slot[r].told) {
			s->slot[r].told = 1;
			s->ntold++;
		}
		reject(s, i, s->aborting);
		return 0;
	}
	if (p->rx.hdr.type != RDZV_BOOT_HELLO) {
		snprintf(why, sizeof(why), "expected a hello, got message type %u", p->rx.hdr.type);
		reject(s, i, why);
		return 0;
	}
	if (rdzv_boot_hello_unpack(p->rx.payload, p->rx.hdr.len, &h, why, sizeof(why)) < 0) {
		reject(s, i, why);
		return 0;
	}
	if (strcmp(h.session, s->session) != 0) {
		/* Another step's rank on a reused port: not ours, not fatal. */
		snprintf(why, sizeof(why), "session '%s' is not this step's '%s'", h.session,
		         s->session);
		reject(s, i, why);
		return 0;
	}
	/* From here on the peer belongs to this step, so a disagreement
	 * means the rendezvous variables are wrong: fail the run. */
	if (h.world != s->world) {
		snprintf(why, sizeof(why), "rank %u on %s (%s) has WORLD_SIZE=%u, rank 0 has %u",
		         r, h.host, p->addr, h.world, s->world);
		fatal(s, "%s", why);
		if (r < s->world)
			s->slot[r].told = 1; /* it heard why: no need to wait for it */
		reject(s, i, why);
		return 0;
	}
	if (r == 0 || r >= s->world) {
		snprintf(why, sizeof(why), "rank %u on %s (%s) is %s", r, h.host, p->addr,
		         r == 0 ? "a second rank 0" : "out of range for WORLD_SIZE");
		fatal(s, "%s", why);
		reject(s, i, why);
		return 0;
	}
	sl = &s->slot[r];
	if (sl->hello) {
		snprintf(why, sizeof(why), "duplicate rank %u: on %s (%s) and on %s (%s)", r,
		         sl->hello->host, sl->ip, h.host, p->addr);
		fatal(s, "%s", why);
		reject(s, i, why);
		return 0;
	}
	keep = malloc(sizeof(*keep));
	if (!keep) {
		reject(s, i, "rank 0 is out of memory");
		return 0;
	}
	*keep = h;
	if (rdzv_boot_send_frame(p->fd, RDZV_BOOT_WELCOME, 0, 0, NULL, 0,
	                         rdzv_boot_now_ms() + 1000, why, sizeof(why)) < 0) {
		free(keep);
		note(s, "rank %u at %s left before the welcome: %s", r, p->addr, why);
		drop_peer(s, i);
		return 0;
	}
	sl->hello = keep;
	rdzv_strlcpy(sl->ip, p->ip, sizeof(sl->ip));
	sl->peer = p;
	p->is_rank = 1;
	p->rank = r;
	s->joined++;
	return 1;
}

/* A whole frame from a rank. Returns 0, or -1 when the run failed. */
static int on_rank_frame(struct rdzv_boot_server *s, struct peer *p)
{
	struct slot *sl = &s->slot[p->rank];
	const struct rdzv_boot_hdr *h = &p->rx.hdr;

	if (h->type != RDZV_BOOT_GATHER || h->seq != s->cur_seq || sl->seq == s->cur_seq ||
	    h->rank != p->rank) {
		fatal(s, "rank %u on %s (%s) sent message type %u for phase %u (rank field %u) "
		         "during phase %u", p->rank, sl->hello->host, p->addr, h->type, h->seq,
		         h->rank, s->cur_seq);
		return -1;
	}
	free(sl->blob);
	sl->blob = p->rx.payload;
	sl->blen = h->len;
	sl->seq = h->seq;
	p->rx.payload = NULL;
	return 0;
}

/* Read what peer i has. Returns 1 when the peer is still there, 0 when it
 * was dropped. */
static int read_peer(struct rdzv_boot_server *s, size_t i)
{
	struct peer *p = s->peer[i];
	unsigned char buf[4096];
	char why[256];
	ssize_t n = recv(p->fd, buf, sizeof(buf), 0);
	size_t off = 0;

	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return 1;
	if (n <= 0) {
		if (p->is_rank)
			fatal(s, "rank %u on %s (%s) closed its connection%s%s", p->rank,
			      s->slot[p->rank].hello->host, p->addr, n < 0 ? ": " : "",
			      n < 0 ? strerror(errno) : " (the process exited or was killed)");
		else
			note(s, "%s closed before saying hello", p->addr);
		drop_peer(s, i);
		return 0;
	}
	while (off < (size_t)n) {
		size_t used;
		int st = rdzv_boot_rx_feed(&p->rx, buf + off, (size_t)n - off, &used, why, sizeof(why));

		off += used;
		if (st < 0) {
			if (p->is_rank) {
				fatal(s, "rank %u on %s (%s) sent garbage: %s", p->rank,
				      s->slot[p->rank].hello->host, p->addr, why);
				drop_peer(s, i);
			} else {
				reject(s, i, why);
			}
			return 0;
		}
		if (st == 0)
			break;
		if (!p->is_rank) {
			if (!on_hello(s, i))
				return 0;
		} else if (on_rank_frame(s, p) < 0) {
			drop_peer(s, i);
			return 0;
		}
		rdzv_boot_rx_reset(&p->rx);
	}
	return 1;
}

/* One round of poll over the listener and every connection. */
static void pump(struct rdzv_boot_server *s, int64_t deadline)
{
	struct pollfd *pfd;
	struct peer **snap;
	size_t n = s->npeer, i, j;
	int64_t now;

	pfd = calloc(n + 1, sizeof(*pfd));
	snap = calloc(n + 1, sizeof(*snap));
	if (!pfd || !snap) {
		free(pfd);
		free(snap);
		sleep_ms(10);
		return;
	}
	pfd[0].fd = s->lfd;
	pfd[0].events = POLLIN;
	for (i = 0; i < n; i++) {
		pfd[i + 1].fd = s->peer[i]->fd;
		pfd[i + 1].events = POLLIN;
		snap[i] = s->peer[i];
	}
	if (poll(pfd, n + 1, wait_ms(deadline)) > 0) {
		/* Peers may be dropped (and the array reordered) while
		 * handling events: find each by identity. */
		for (i = 0; i < n; i++) {
			if (!pfd[i + 1].revents)
				continue;
			for (j = 0; j < s->npeer && s->peer[j] != snap[i]; j++)
				;
			if (j < s->npeer)
				read_peer(s, j);
		}
		if (pfd[0].revents & POLLIN)
			accept_new(s);
	}
	now = rdzv_boot_now_ms();
	for (i = 0; i < s->npeer;) {
		if (!s->peer[i]->is_rank && now - s->peer[i]->since > HELLO_GRACE_MS)
			reject(s, i, "no hello in time");
		else
			i++;
	}
	free(pfd);
	free(snap);
}

/* "3 (on n2), 5" for the ranks that lack phase seq: hosts are known for
 * ranks that said hello. */
static void list_missing(const struct rdzv_boot_server *s, uint32_t seq, char *out, size_t outlen)
{
	size_t off = 0;
	uint32_t r, shown = 0, missing = 0;

	out[0] = '\0';
	for (r = 1; r < s->world; r++) {
		const struct slot *sl = &s->slot[r];
		int w;

		if (sl->hello && sl->seq == seq)
			continue;
		missing++;
		if (shown == 16 || off + 64 >= outlen)
			continue;
		if (sl->hello)
			w = snprintf(out + off, outlen - off, "%s%u (on %s, joined but sent nothing)",
			             shown ? ", " : "", r, sl->hello->host);
		else
			w = snprintf(out + off, outlen - off, "%s%u", shown ? ", " : "", r);
		if (w > 0)
			off += (size_t)w;
		shown++;
	}
	if (missing > shown && off + 32 < outlen)
		snprintf(out + off, outlen - off, " and %u more", missing - shown);
}

int rdzv_boot_server_allgather(struct rdzv_boot_server *s, uint32_t seq, const void *mine,
                               uint32_t len, int64_t deadline, unsigned char **all,
                               size_t *alllen, char *err, size_t errlen)
{
	const unsigned char **blob = NULL;
	uint32_t *blen = NULL, r, have;
	int rv = -1;

	*all = NULL;
	if (seq <= s->cur_seq)
		return rdzv_err(err, errlen, "all-gather phase %u after phase %u", seq, s->cur_seq);
	s->cur_seq = seq;
	free(s->slot[0].blob);
	s->slot[0].blob = malloc(len + 1u);
	if (!s->slot[0].blob)
		return rdzv_err(err, errlen, "out of memory");
	if (len)
		memcpy(s->slot[0].blob, mine, len);
	s->slot[0].blen = len;
	s->slot[0].seq = seq;
	for (;;) {
		if (s->failed)
			return rdzv_err(err, errlen, "%s", s->fatal);
		for (have = 0, r = 0; r < s->world; r++)
			have += s->slot[r].hello && s->slot[r].seq == seq;
		if (have == s->world) {
			/* One look at what else is waiting: a second rank 1
			 * that arrived with the others must fail the run. */
			pump(s, 0);
			if (s->failed)
				return rdzv_err(err, errlen, "%s", s->fatal);
			break;
		}
		if (rdzv_boot_now_ms() >= deadline) {
			char miss[1024];

			list_missing(s, seq, miss, sizeof(miss));
			return rdzv_err(err, errlen, "%u of %u ranks missing at phase %u: rank%s %s",
			                s->world - have, s->world, seq, s->world - have > 1 ? "s" : "",
			                miss);
		}
		pump(s, deadline);
	}
	blob = calloc(s->world, sizeof(*blob));
	blen = calloc(s->world, sizeof(*blen));
	if (!blob || !blen) {
		rdzv_err(err, errlen, "out of memory");
		goto fail;
	}
	for (r = 0; r < s->world; r++) {
		blob[r] = s->slot[r].blob;
		blen[r] = s->slot[r].blen;
	}
	if (rdzv_boot_all_pack(blob, blen, s->world, all, alllen, err, errlen) < 0)
		goto fail;
	for (r = 1; r < s->world; r++) {
		char why[160];

		if (rdzv_boot_send_frame(s->slot[r].peer->fd, RDZV_BOOT_ALL, 0, seq, *all,
		                         (uint32_t)*alllen, deadline + 5000, why, sizeof(why)) < 0) {
			rdzv_err(err, errlen, "cannot send phase %u to rank %u on %s (%s): %s", seq, r,
			         s->slot[r].hello->host, s->slot[r].ip, why);
			goto fail;
		}
	}
	rv = 0;
fail:
	if (rv < 0) {
		free(*all);
		*all = NULL;
	}
	free(blob);
	free(blen);
	return rv;
}

void rdzv_boot_server_abort(struct rdzv_boot_server *s, const char *reason, int64_t linger_until)
{
	int64_t until = rdzv_boot_now_ms() + 2000;
	uint32_t r;

	size_t i;

	for (i = 0; i < s->npeer; i++) {
		struct peer *p = s->peer[i];

		/* Ranks waiting for a welcome are told too, so that every rank
		 * of the step ends with the reason, not with a dropped line. */
		rdzv_boot_send_frame(p->fd, p->is_rank ? RDZV_BOOT_ABORT : RDZV_BOOT_REJECT, 0,
		                     s->cur_seq, reason, (uint32_t)strlen(reason), until, NULL, 0);
		shutdown(p->fd, SHUT_WR);
	}
	/* Closing a socket with unread input (a rank's blob for the next
	 * phase) makes the kernel send a reset, which can destroy the reason
	 * before the rank reads it: drain until each rank hangs up. */
	until = rdzv_boot_now_ms() + 1000;
	while (s->npeer && rdzv_boot_now_ms() < until) {
		struct pollfd pfd = { s->peer[0]->fd, POLLIN, 0 };
		unsigned char junk[4096];

		if (poll(&pfd, 1, wait_ms(until)) > 0 && recv(pfd.fd, junk, sizeof(junk), 0) > 0)
			continue;
		if (pfd.revents)
			drop_peer(s, 0);
	}
	while (s->npeer)
		drop_peer(s, s->npeer - 1);
	s->aborting = reason;
	s->ntold = 0;
	for (r = 0; r < s->world; r++) {
		s->slot[r].told = r == 0 || s->slot[r].hello || s->slot[r].told;
		s->ntold += (uint32_t)s->slot[r].told;
	}
	/* A rank that starts late would otherwise retry until its own
	 * timeout: keep answering, with the reason, until all have heard. */
	while (s->ntold < s->world && rdzv_boot_now_ms() < linger_until)
		pump(s, linger_until);
	s->aborting = NULL;
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
