/* SPDX-License-Identifier: GPL-2.0-or-later */
/* boot_server.c: the bootstrap server rank 0 runs: accepts ranks, checks their
 * hello, gathers and scatters blobs, and names who is missing on a timeout. */
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
		rdzv_boot_tune(fd);
		p->fd = fd;
		p->since = rdzv_boot_now_ms();
		rdzv_boot_fmt_addr((struct sockaddr *)&ss, p->ip, sizeof(p->ip), &port);
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
		rdzv_boot_sleep_ms(10);
		return;
	}
	pfd[0].fd = s->lfd;
	pfd[0].events = POLLIN;
	for (i = 0; i < n; i++) {
		pfd[i + 1].fd = s->peer[i]->fd;
		pfd[i + 1].events = POLLIN;
		snap[i] = s->peer[i];
	}
	if (poll(pfd, n + 1, rdzv_boot_wait_ms(deadline)) > 0) {
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

		if (poll(&pfd, 1, rdzv_boot_wait_ms(until)) > 0 && recv(pfd.fd, junk, sizeof(junk), 0) > 0)
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

