/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ring.c: the CPU path. Each rank connects to its successor (addresses
 * from rank 0's plan, i.e. where each rank's connection to rank 0 came
 * from) and accepts its predecessor, so together the links prove that
 * every node reaches the next one on the network the job will use. Over the
 * ring: one timed transfer per link (link bandwidth), then NCCL's ring
 * all-reduce algorithm (reduce-scatter, all-gather: 2(n-1) steps) on
 * 64-bit integers whose sum every rank checks element by element. */
#define _GNU_SOURCE
#include "config.h"
#include "preflight.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "busbw.h"

#define RING_ITERS 3

struct ring {
	int in, out;
	uint32_t rank, world;
	int64_t deadline;
	char err[PF_TEXT];
};

/* Send slen bytes to the successor while receiving rlen from the
 * predecessor: both at once, or two ranks sending large chunks to each
 * other would wait on full socket buffers forever. */
static int exchange(struct ring *g, const void *sbuf, size_t slen, void *rbuf, size_t rlen)
{
	const unsigned char *s = sbuf;
	unsigned char *r = rbuf;
	size_t sent = 0, got = 0;

	while (sent < slen || got < rlen) {
		struct pollfd p[2] = { { g->out, POLLOUT, 0 }, { g->in, POLLIN, 0 } };
		int64_t left = g->deadline - rdzv_boot_now_ms();
		ssize_t n;

		if (left <= 0)
			return rdzv_err(g->err, sizeof(g->err), "ring transfer timed out (%zu/%zu bytes "
			                "sent, %zu/%zu received)", sent, slen, got, rlen);
		if (sent == slen)
			p[0].fd = -1;
		if (got == rlen)
			p[1].fd = -1;
		if (poll(p, 2, left > 1000 ? 1000 : (int)left) < 0 && errno != EINTR)
			return rdzv_err(g->err, sizeof(g->err), "poll: %s", strerror(errno));
		if (p[0].revents & (POLLOUT | POLLERR | POLLHUP)) {
			n = send(g->out, s + sent, slen - sent, MSG_NOSIGNAL);
			if (n < 0 && errno != EAGAIN && errno != EINTR)
				return rdzv_err(g->err, sizeof(g->err), "send to rank %u: %s",
				                (g->rank + 1) % g->world, strerror(errno));
			if (n > 0)
				sent += (size_t)n;
		}
		if (p[1].revents & (POLLIN | POLLERR | POLLHUP)) {
			n = recv(g->in, r + got, rlen - got, 0);
			if (n == 0)
				return rdzv_err(g->err, sizeof(g->err), "rank %u closed the ring link",
				                (g->rank + g->world - 1) % g->world);
			if (n < 0 && errno != EAGAIN && errno != EINTR)
				return rdzv_err(g->err, sizeof(g->err), "receive from rank %u: %s",
				                (g->rank + g->world - 1) % g->world, strerror(errno));
			if (n > 0)
				got += (size_t)n;
		}
	}
	return 0;
}

static size_t chunk_lo(size_t count, uint32_t world, uint32_t c)
{
	return (size_t)((unsigned long long)count * c / world);
}

static int allreduce(struct ring *g, uint64_t *data, uint64_t *tmp, size_t count)
{
	uint32_t n = g->world, s;

	for (s = 0; s + 1 < n; s++) {
		uint32_t sc = (g->rank + n - s) % n, rc = (g->rank + 2 * n - s - 1) % n;
		size_t slo = chunk_lo(count, n, sc), shi = chunk_lo(count, n, sc + 1);
		size_t rlo = chunk_lo(count, n, rc), rhi = chunk_lo(count, n, rc + 1), i;

		if (exchange(g, data + slo, (shi - slo) * 8, tmp, (rhi - rlo) * 8) < 0)
			return -1;
		for (i = rlo; i < rhi; i++)
			data[i] += tmp[i - rlo];
	}
	for (s = 0; s + 1 < n; s++) {
		uint32_t sc = (g->rank + 1 + n - s) % n, rc = (g->rank + n - s) % n;
		size_t slo = chunk_lo(count, n, sc), shi = chunk_lo(count, n, sc + 1);
		size_t rlo = chunk_lo(count, n, rc), rhi = chunk_lo(count, n, rc + 1);

		if (exchange(g, data + slo, (shi - slo) * 8, data + rlo, (rhi - rlo) * 8) < 0)
			return -1;
	}
	return 0;
}

static void fill(uint64_t *data, size_t count, uint32_t rank)
{
	size_t i;

	for (i = 0; i < count; i++)
		data[i] = (uint64_t)(rank + 1) * (i + 1);
}

/* Element i must be (i+1) * n(n+1)/2 (mod 2^64, as computed). */
static int verify(const uint64_t *data, size_t count, uint32_t world, char *err, size_t errlen)
{
	uint64_t tri = (uint64_t)world * (world + 1) / 2;
	size_t i;

	for (i = 0; i < count; i++)
		if (data[i] != tri * (i + 1))
			return rdzv_err(err, errlen, "all-reduce result wrong at element %zu of %zu: got "
			                "%llu, want %llu", i, count, (unsigned long long)data[i],
			                (unsigned long long)(tri * (i + 1)));
	return 0;
}

/* Take the predecessor's link from the listener; strangers are closed. */
static int accept_pred(int lfd, struct ring *g, uint32_t pred)
{
	while (rdzv_boot_now_ms() < g->deadline) {
		struct pollfd p = { lfd, POLLIN, 0 };
		struct rdzv_boot_hdr h;
		unsigned char *payload = NULL;
		int64_t until;
		int fd;

		if (poll(&p, 1, 200) <= 0)
			continue;
		fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		until = rdzv_boot_now_ms() + 5000;
		if (until > g->deadline)
			until = g->deadline;
		if (rdzv_boot_recv_frame(fd, until, &h, &payload, NULL, 0) == 0 &&
		    h.type == RDZV_BOOT_LINK && h.rank == pred) {
			free(payload);
			return fd;
		}
		free(payload);
		close(fd);
	}
	return -1;
}

void pf_ring_run(int lfd, const struct pf_env *e, const struct pf_report *reps,
                 const struct pf_plan *plan, uint64_t bytes, int64_t deadline,
                 struct pf_result *res)
{
	struct ring g = { -1, -1, e->rank, e->world, deadline, "" };
	uint32_t succ = (e->rank + 1) % e->world, pred = (e->rank + e->world - 1) % e->world;
	size_t count = bytes / 8, i;
	uint64_t *data = NULL, *tmp = NULL;
	unsigned char token = 1, back = 0;
	int64_t t0;
	double total = 0;

	if (count < e->world)
		count = e->world; /* every rank owns at least one element */
	res->ring_bytes = (uint64_t)count * 8;
	data = malloc(count * 8);
	tmp = malloc(count * 8); /* a whole buffer: the link test receives one */
	if (!data || !tmp) {
		PF_FAILF(res->ring_err, "out of memory for %zu bytes", count * 8);
		goto out;
	}
	if (e->world > 1) {
		g.out = rdzv_boot_dial(plan->addr[succ], plan->port[succ], deadline, g.err,
		                       sizeof(g.err));
		if (g.out < 0) {
			PF_FAILF(res->ring_err, "rank %u cannot reach its ring successor rank %u (%s): %s",
			         e->rank, succ, reps[succ].host, g.err);
			goto out;
		}
		if (rdzv_boot_send_frame(g.out, RDZV_BOOT_LINK, e->rank, 0, NULL, 0, deadline, g.err,
		                         sizeof(g.err)) < 0) {
			PF_FAILF(res->ring_err, "rank %u cannot open its link to rank %u (%s): %s",
			         e->rank, succ, reps[succ].host, g.err);
			goto out;
		}
		g.in = accept_pred(lfd, &g, pred);
		if (g.in < 0) {
			PF_FAILF(res->ring_err, "rank %u got no ring link from rank %u (%s) in time",
			         e->rank, pred, reps[pred].host);
			goto out;
		}
		/* Neighbours are both here: time the link from now. */
		if (exchange(&g, &token, 1, &back, 1) < 0)
			goto fail;
		t0 = rdzv_boot_now_ms();
		fill(data, count, e->rank);
		if (exchange(&g, data, count * 8, tmp, count * 8) < 0)
			goto fail;
		res->link_gbps = (double)count * 8 / 1e9 /
		                 ((double)(rdzv_boot_now_ms() - t0 + 1) / 1000.0);
	}
	for (i = 0; i <= RING_ITERS; i++) {
		int64_t a;

		fill(data, count, e->rank);
		a = rdzv_boot_now_ms();
		if (e->world > 1 && allreduce(&g, data, tmp, count) < 0)
			goto fail;
		if (i > 0) /* the first one warms up buffers and connections */
			total += (double)(rdzv_boot_now_ms() - a) / 1000.0;
		if (verify(data, count, e->world, g.err, sizeof(g.err)) < 0)
			goto fail;
	}
	res->ring_seconds = total / RING_ITERS;
	if (res->ring_seconds <= 0)
		res->ring_seconds = 0.0005; /* below the clock's millisecond */
	rdzv_bw_compute(RDZV_COLL_ALLREDUCE, res->ring_bytes, res->ring_seconds, e->world,
	                &res->ring_algbw, &res->ring_busbw, NULL, 0);
	res->ring_ok = 1;
	goto out;
fail:
	PF_FAILF(res->ring_err, "rank %u ring (to rank %u on %s, from rank %u on %s): %s", e->rank,
	         succ, reps[succ].host, pred, reps[pred].host, g.err);
out:
	if (g.in >= 0)
		close(g.in);
	if (g.out >= 0)
		close(g.out);
	free(data);
	free(tmp);
}
