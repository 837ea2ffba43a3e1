/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/failure/: how failures travel and are judged: a failed rank's report,
 * liveness, the collective grace, hang dumps, a GPU fault's verdict. Uses
 * lib/modes/, lib/step/, lib/gpu/, lib/common/. */
/* liveness.c: is every node of the step still there? See liveness.h. */
#include "config.h"
#include "liveness.h"
#include "channel.h"
#include "hostlist.h"
#include "util.h"

#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

static const char *const kinds[] = { "HELLO", "PING", "ALIVE", "BYE", "ACK" };

int rdzv_live_encode(const struct rdzv_live_msg *m, char *buf, size_t len)
{
	int h, n = -1;

	if ((unsigned)m->kind >= sizeof(kinds) / sizeof(kinds[0])
	    || (m->kind == RDZV_LIVE_HELLO
	        && (!m->node[0] || !rdzv_host_name_ok(m->node, strlen(m->node)))))
		return -1;
	/* "RDZVL1 KIND JOB.STEP NONCE ", then the kind's own fields. */
	h = snprintf(buf, len, "RDZVL1 %s %u.%u %016" PRIx64 " ", kinds[m->kind], m->job, m->step,
	             m->nonce);
	if (h < 0 || (size_t)h >= len)
		return -1;
	switch (m->kind) {
	case RDZV_LIVE_HELLO:
		n = snprintf(buf + h, len - (size_t)h, "%u %s", m->node_id, m->node);
		break;
	case RDZV_LIVE_PING:
		n = snprintf(buf + h, len - (size_t)h, "%u", m->seq);
		break;
	case RDZV_LIVE_ALIVE:
		n = snprintf(buf + h, len - (size_t)h, "%u %u", m->node_id, m->seq);
		break;
	case RDZV_LIVE_BYE:
	case RDZV_LIVE_ACK:
		n = snprintf(buf + h, len - (size_t)h, "%u", m->node_id);
		break;
	}
	return n < 0 || (size_t)n >= len - (size_t)h ? -1 : 0;
}

int rdzv_live_is(const char *buf, size_t n)
{
	return buf && n >= 7 && memcmp(buf, "RDZVL1 ", 7) == 0;
}

/* A decimal number of at most 10 digits that fits 32 bits: no sign, no
 * leading zero (one spelling per number). */
static const char *u32(const char *p, uint32_t *v)
{
	uint64_t x = 0;
	int d = 0;

	if (p[0] == '0' && p[1] >= '0' && p[1] <= '9')
		return NULL;
	while (*p >= '0' && *p <= '9' && d < 11) {
		x = x * 10 + (uint64_t)(*p++ - '0');
		d++;
	}
	if (d == 0 || d > 10 || x > UINT32_MAX)
		return NULL;
	*v = (uint32_t)x;
	return p;
}

int rdzv_live_decode(const char *buf, size_t n, struct rdzv_live_msg *m)
{
	char text[RDZV_LIVE_DGRAM_MAX + 1];
	const char *p;
	size_t k, hl;
	int kind = -1;

	memset(m, 0, sizeof(*m));
	if (!buf || n == 0 || n > RDZV_LIVE_DGRAM_MAX || memchr(buf, '\0', n)
	    || !rdzv_live_is(buf, n))
		return -1;
	memcpy(text, buf, n);
	text[n] = '\0';
	p = text + 7;
	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		size_t kl = strlen(kinds[k]);

		if (strncmp(p, kinds[k], kl) == 0 && p[kl] == ' ') {
			kind = (int)k;
			p += kl + 1;
			break;
		}
	}
	if (kind < 0 || !(p = u32(p, &m->job)) || *p++ != '.' || !(p = u32(p, &m->step))
	    || *p++ != ' ' || rdzv_hex64(p, 16, &m->nonce) < 0)
		goto bad;
	p += 16;
	if (*p++ != ' ')
		goto bad;
	m->kind = (enum rdzv_live_kind)kind;
	switch (m->kind) {
	case RDZV_LIVE_HELLO:
		if (!(p = u32(p, &m->node_id)) || *p++ != ' ')
			goto bad;
		hl = strlen(p);
		if (hl == 0 || hl >= sizeof(m->node) || !rdzv_host_name_ok(p, hl))
			goto bad;
		memcpy(m->node, p, hl + 1);
		return 0;
	case RDZV_LIVE_PING:
		if (!(p = u32(p, &m->seq)) || *p)
			goto bad;
		return 0;
	case RDZV_LIVE_ALIVE:
		if (!(p = u32(p, &m->node_id)) || *p++ != ' ' || !(p = u32(p, &m->seq)) || *p)
			goto bad;
		return 0;
	case RDZV_LIVE_BYE:
	case RDZV_LIVE_ACK:
		if (!(p = u32(p, &m->node_id)) || *p)
			goto bad;
		return 0;
	}
bad:
	memset(m, 0, sizeof(*m));
	return -1;
}

int rdzv_live_init(struct rdzv_live *l, uint32_t nnodes, int64_t now_ms)
{
	memset(l, 0, sizeof(*l));
	if (nnodes == 0 || !(l->v = calloc(nnodes, sizeof(*l->v))))
		return -1;
	l->n = nnodes;
	l->start_ms = now_ms;
	return 0;
}

void rdzv_live_free(struct rdzv_live *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

long rdzv_live_hello_delay(unsigned attempt, uint32_t rnd)
{
	long d = RDZV_LIVE_HELLO_FIRST_MS;
	unsigned i;

	if (attempt == 0 || attempt >= RDZV_LIVE_HELLO_TRIES)
		return -1;
	for (i = 1; i < attempt && d < RDZV_LIVE_HELLO_CAP_MS; i++)
		d *= 2;
	if (d > RDZV_LIVE_HELLO_CAP_MS)
		d = RDZV_LIVE_HELLO_CAP_MS;
	return d / 2 + (long)(rnd % (uint32_t)d);
}

/* The jitter: xorshift32 (spread, not secrecy). */
static uint32_t next_rnd(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

static void *resend_hello(void *arg)
{
	struct rdzv_live_hello *h = arg;
	unsigned attempt;

	pthread_mutex_lock(&h->mu);
	for (attempt = 1; !h->acked && !h->stopping; attempt++) {
		struct timespec until;
		long d = rdzv_live_hello_delay(attempt, next_rnd(&h->x));

		if (d < 0)
			break;
		rdzv_realtime_in(&until, d);
		while (!h->acked && !h->stopping)
			if (pthread_cond_timedwait(&h->cv, &h->mu, &until) != 0)
				break;
		if (h->acked || h->stopping)
			break;
		pthread_mutex_unlock(&h->mu);
		(void)rdzv_live_sendto(h->sock, h->msg, strlen(h->msg), &h->to, h->tolen);
		pthread_mutex_lock(&h->mu);
		h->sent++;
	}
	pthread_mutex_unlock(&h->mu);
	return NULL;
}

int rdzv_live_hello_start(struct rdzv_live_hello *h, int sock, const char *msg,
                          const struct sockaddr_storage *to, socklen_t tolen, uint32_t seed)
{
	/* Statically initialised, never destroyed: srun's ACK may still come
	 * (the responder's thread) after rdzv_live_hello_stop. */
	const pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	const pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
	sigset_t all, old;

	memset(h, 0, sizeof(*h));
	h->mu = mu;
	h->cv = cv;
	if (strlen(msg) >= sizeof(h->msg) || tolen > sizeof(h->to))
		return -1;
	h->sock = sock;
	h->x = seed ? seed : 0x9e3779b9u; /* xorshift never leaves 0 */
	memcpy(h->msg, msg, strlen(msg) + 1);
	memcpy(&h->to, to, tolen);
	h->tolen = tolen;
	(void)rdzv_live_sendto(sock, h->msg, strlen(h->msg), &h->to, h->tolen);
	h->sent = 1;
	/* The thread takes none of the process's signals (slurmstepd's). */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	h->started = pthread_create(&h->th, NULL, resend_hello, h) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return h->started ? 0 : -1;
}

int rdzv_live_hello_acked(struct rdzv_live_hello *h, const struct sockaddr *from, socklen_t len)
{
	int first;

	pthread_mutex_lock(&h->mu);
	first = !h->acked && !h->stopping;
	h->acked = 1;
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->mu);
	/* The first ACK only: srun acknowledges each resend, all from the
	 * same socket. */
	if (!first || !from)
		return 0;
	return connect(h->sock, from, len) == 0 ? 1 : -1;
}

unsigned rdzv_live_hello_stop(struct rdzv_live_hello *h)
{
	pthread_mutex_lock(&h->mu);
	h->stopping = 1;
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->mu);
	if (h->started)
		pthread_join(h->th, NULL);
	h->started = 0;
	return h->sent;
}

/* The same host: family and address (an IPv4 peer of a dual-stack socket
 * comes as ::ffff:a.b.c.d, always the same way from one socket). With
 * port, the same socket too. */
static int same_peer(const struct sockaddr_storage *a, socklen_t alen, const struct sockaddr *b,
                     socklen_t blen, int port)
{
	if (!alen || !b || a->ss_family != b->sa_family)
		return 0;
	if (a->ss_family == AF_INET && alen >= sizeof(struct sockaddr_in)
	    && blen >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;

		return x->sin_addr.s_addr == y->sin_addr.s_addr && (!port || x->sin_port == y->sin_port);
	}
	if (a->ss_family == AF_INET6 && alen >= sizeof(struct sockaddr_in6)
	    && blen >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;

		return memcmp(&x->sin6_addr, &y->sin6_addr, sizeof(x->sin6_addr)) == 0
		       && x->sin6_scope_id == y->sin6_scope_id && (!port || x->sin6_port == y->sin6_port);
	}
	return 0;
}

int rdzv_live_take(struct rdzv_live *l, const struct rdzv_live_msg *m, const struct sockaddr *from,
                   socklen_t fromlen, int64_t now_ms)
{
	struct rdzv_live_node *nd;
	int changed = 0;

	if (m->kind == RDZV_LIVE_PING || m->kind == RDZV_LIVE_ACK || m->node_id >= l->n)
		return -1;
	nd = &l->v[m->node_id];
	if (m->kind == RDZV_LIVE_HELLO) {
		if (!from || fromlen == 0 || fromlen > (socklen_t)sizeof(nd->addr))
			return -1;
		/* The first HELLO of a node id is its: a later one from
		 * elsewhere, or with another name, is not (a forger's, or
		 * a stray of another step that guessed the nonce). */
		if (nd->len)
			return same_peer(&nd->addr, nd->len, from, fromlen, 1)
			               && strcmp(nd->name, m->node) == 0
			           ? 0
			           : -1;
		memcpy(&nd->addr, from, fromlen);
		nd->len = fromlen;
		snprintf(nd->name, sizeof(nd->name), "%s", m->node);
		changed = 1;
	} else if (!same_peer(&nd->addr, nd->len, from, fromlen, m->kind == RDZV_LIVE_ALIVE)) {
		return -1;
	} else if (m->kind == RDZV_LIVE_BYE) {
		changed = nd->seq != UINT32_MAX;
		nd->seq = UINT32_MAX;
	} else if (m->seq > nd->seq) {
		nd->seq = m->seq;
		l->answers++;
		changed = 1;
	}
	nd->heard_ms = now_ms;
	return changed;
}

size_t rdzv_live_silent(const struct rdzv_live *l, uint32_t seq, uint32_t *ids, size_t max)
{
	size_t n = 0;
	uint32_t i;

	for (i = 0; i < l->n; i++) {
		if (!l->v[i].len || l->v[i].seq >= seq)
			continue;
		if (n < max)
			ids[n] = i;
		n++;
	}
	return n;
}

int rdzv_live_verdict(const struct rdzv_live *l, const uint32_t *ids, size_t nids, int64_t at_ms,
                      char *buf, size_t len)
{
	char names[RDZV_HOST_MAX * 8 + 128], tail[128];
	size_t i, off = 0, shown;
	int64_t last = -1;
	int n;

	if (!len || nids == 0)
		return -1;
	shown = nids > 8 ? 8 : nids; /* names beyond eight are counted */
	names[0] = '\0';
	for (i = 0; i < shown; i++) {
		const struct rdzv_live_node *nd = &l->v[ids[i]];

		if (nd->len && nd->heard_ms > last)
			last = nd->heard_ms;
		/* A node never heard from has no name here: its place. */
		if (nd->len)
			n = snprintf(names + off, sizeof(names) - off, "%s%s", i ? ", " : "", nd->name);
		else
			n = snprintf(names + off, sizeof(names) - off, "%s#%u of the step", i ? ", " : "",
			             ids[i]);
		if (n < 0 || (size_t)n >= sizeof(names) - off)
			return -1;
		off += (size_t)n;
	}
	if (nids > shown
	    && snprintf(names + off, sizeof(names) - off, " and %zu more", nids - shown) < 0)
		return -1;
	if (last >= 0 && at_ms >= last)
		snprintf(tail, sizeof(tail), "dead or hung: last heard %.1f s before the failure",
		         (double)(at_ms - last) / 1000.0);
	else if (last >= 0)
		snprintf(tail, sizeof(tail), "dead or hung");
	else
		snprintf(tail, sizeof(tail), "dead or hung: never heard from since the step started");
	n = snprintf(buf, len, "%s %s %s (%s)", nids == 1 ? "node" : "nodes", names,
	             nids == 1 ? "does not answer" : "do not answer", tail);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

int rdzv_live_names(const struct rdzv_live *l, const uint32_t *ids, size_t nids, char *buf,
                    size_t len)
{
	size_t i, off = 0;
	int named = 0, n;

	if (!len)
		return -1;
	buf[0] = '\0';
	for (i = 0; i < nids; i++) {
		const struct rdzv_live_node *nd = &l->v[ids[i]];

		if (!nd->len)
			continue; /* never heard from: no name */
		n = snprintf(buf + off, len - off, "%s%s", off ? "," : "", nd->name);
		if (n < 0 || (size_t)n >= len - off) {
			buf[0] = '\0';
			return -1;
		}
		off += (size_t)n;
		named++;
	}
	return named;
}

/* to as sock reaches it: a dual-stack socket (channel.c's) reaches an
 * IPv4 peer through its mapped address, ::ffff:a.b.c.d, written into *m6;
 * *len the address's length. */
static const struct sockaddr *reach(int sock, const struct sockaddr_storage *to, socklen_t tolen,
                                    struct sockaddr_in6 *m6, socklen_t *len)
{
	const struct sockaddr_in *a4 = (const struct sockaddr_in *)to;
	struct sockaddr_storage me;
	socklen_t ml = sizeof(me);

	*len = tolen;
	if (to->ss_family != AF_INET || getsockname(sock, (struct sockaddr *)&me, &ml) < 0
	    || me.ss_family != AF_INET6)
		return (const struct sockaddr *)to;
	memset(m6, 0, sizeof(*m6));
	m6->sin6_family = AF_INET6;
	m6->sin6_port = a4->sin_port;
	m6->sin6_addr.s6_addr[10] = 0xff;
	m6->sin6_addr.s6_addr[11] = 0xff;
	memcpy(&m6->sin6_addr.s6_addr[12], &a4->sin_addr, 4);
	*len = sizeof(*m6);
	return (const struct sockaddr *)m6;
}

int rdzv_live_sendto(int sock, const char *buf, size_t n, const struct sockaddr_storage *to,
                     socklen_t tolen)
{
	struct sockaddr_in6 m6;
	socklen_t len;
	const struct sockaddr *a = reach(sock, to, tolen, &m6, &len);

	return sendto(sock, buf, n, 0, a, len) < 0 ? -1 : 0;
}

/* Waits, *mu held, until `want` more answers than `since` have come, or
 * ms have passed. */
static void wait_answers(struct rdzv_live *l, const struct rdzv_live_check *c, uint64_t since,
                         uint64_t want, long ms)
{
	struct timespec until;

	rdzv_realtime_in(&until, ms);
	while (l->answers - since < want && !*c->stopping)
		if (pthread_cond_timedwait(c->cv, c->mu, &until) != 0)
			break;
}

/* The silent nodes' addresses are copied under the lock (a HELLO may move
 * one), then pinged a window at a time without it (the channel's thread
 * keeps taking answers). Called and returns with *mu held. */
static void ping_silent(struct rdzv_live *l, const struct rdzv_live_check *c, uint32_t seq,
                        const uint32_t *ids, size_t n)
{
	struct rdzv_live_msg m;
	char buf[RDZV_LIVE_DGRAM_MAX];
	struct rdzv_live_node *to = malloc((n ? n : 1) * sizeof(*to));
	size_t i, k;

	if (!to)
		return;
	for (i = 0; i < n; i++)
		to[i] = l->v[ids[i]];
	memset(&m, 0, sizeof(m));
	m.kind = RDZV_LIVE_PING;
	m.job = c->job;
	m.step = c->step;
	m.nonce = c->nonce;
	m.seq = seq;
	if (rdzv_live_encode(&m, buf, sizeof(buf)) < 0) {
		free(to);
		return;
	}
	for (i = 0; i < n && !*c->stopping; i += k) {
		uint64_t since = l->answers;

		k = n - i < RDZV_LIVE_WINDOW ? n - i : RDZV_LIVE_WINDOW;
		pthread_mutex_unlock(c->mu);
		for (size_t j = i; j < i + k; j++)
			(void)rdzv_live_sendto(c->sock, buf, strlen(buf), &to[j].addr, to[j].len);
		pthread_mutex_lock(c->mu);
		if (i + k < n)
			wait_answers(l, c, since, k / 2, RDZV_LIVE_WINDOW_MS);
	}
	free(to);
}

size_t rdzv_live_run_check(struct rdzv_live *l, const struct rdzv_live_check *c, uint32_t seq,
                           long wait_ms, uint32_t *ids)
{
	int64_t start = rdzv_now_ms(), next = start;
	size_t silent;

	pthread_mutex_lock(c->mu);
	for (;;) {
		int64_t now = rdzv_now_ms();
		struct timespec until;
		long wait;

		silent = rdzv_live_silent(l, seq, ids, l->n);
		if (silent == 0 || *c->stopping || now - start >= wait_ms)
			break;
		if (now >= next) {
			ping_silent(l, c, seq, ids, silent);
			next = now + RDZV_LIVE_RESEND_MS;
			continue;
		}
		wait = (long)(next - now);
		if (wait > wait_ms - (long)(now - start))
			wait = wait_ms - (long)(now - start);
		rdzv_realtime_in(&until, wait);
		pthread_cond_timedwait(c->cv, c->mu, &until);
	}
	pthread_mutex_unlock(c->mu);
	return silent;
}
