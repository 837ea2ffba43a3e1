/* SPDX-License-Identifier: GPL-2.0-or-later */
/* bench-liveness: what srun's liveness check costs (lib/failure/liveness.h),
 * for steps of 1k to 32k nodes: srun's channel (a listener thread taking
 * HELLO and ALIVE into the table) and one check, as after a failure: PING
 * to every node, the answers taken, until every node has answered. The
 * nodes are N sockets on the loopback, each its own address (a port),
 * answered by child processes (epoll; NODES_PER_CHILD sockets each, under
 * the open-files limit), as N slurmstepds' threads would. The goal: under
 * 1 s at 32k nodes.
 *
 * Before it, the launch: every node's HELLO sent at once (the worst case:
 * a step's slurmstepds starting together, or a flood at srun's port), then
 * resent on each node's own schedule (rdzv_live_hello_delay, jitter drawn
 * per node) until srun's ACK: how many nodes srun knows once the resends
 * are spent, and how long it took until it knew them all (issue 45).
 *
 *   bench-liveness [--csv FILE] [N...]   (default 1024 4096 16384 32768) */
#define _GNU_SOURCE 1
#include "config.h"
#include "bench.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "channel.h"
#include "liveness.h"

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct rdzv_live live;
	struct rdzv_listener srun;
	uint64_t nonce;
	uint32_t n;
	uint32_t seq;
	uint32_t *ids;
	pid_t kids[16];
	int nkids;
} b = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static int64_t mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void on_srun(struct rdzv_listener *l, const char *buf, size_t n, const struct sockaddr *from,
                    socklen_t len, void *ctx)
{
	struct rdzv_live_msg m;

	(void)l;
	(void)ctx;
	char out[RDZV_LIVE_DGRAM_MAX];
	int taken;

	if (rdzv_live_decode(buf, n, &m) < 0 || m.nonce != b.nonce)
		return;
	pthread_mutex_lock(&b.mu);
	taken = rdzv_live_take(&b.live, &m, from, len, mono_ms());
	if (taken > 0)
		pthread_cond_broadcast(&b.cv);
	pthread_mutex_unlock(&b.mu);
	/* As spank/liveness.c: every HELLO taken is acknowledged. */
	if (taken >= 0 && m.kind == RDZV_LIVE_HELLO) {
		m.kind = RDZV_LIVE_ACK;
		if (rdzv_live_encode(&m, out, sizeof(out)) == 0)
			rdzv_listener_reply(l, out, strlen(out), from, len);
	}
}

static const struct rdzv_listener_ops srun_ops = { RDZV_LIVE_DGRAM_MAX, on_srun, NULL };

#define NODES_PER_CHILD 16000

/* The nodes [lo, hi) in a child process: a socket each, every HELLO sent
 * at once, each resent on its own schedule until srun's ACK (the socket
 * then connected to its source), then every PING answered. */
static void nodes(uint32_t lo, uint32_t hi, const struct sockaddr_in *to)
{
	uint32_t n = hi - lo, i, x = 2463534242u ^ lo;
	int *socks = calloc(n, sizeof(int)), ep = epoll_create1(EPOLL_CLOEXEC);
	int64_t *next = calloc(n, sizeof(int64_t));
	unsigned *tries = calloc(n, sizeof(unsigned));
	char (*hello)[RDZV_LIVE_DGRAM_MAX] = calloc(n, sizeof(*hello));
	struct epoll_event ev[256];

	if (!socks || ep < 0 || !next || !tries || !hello)
		_exit(1);
	for (i = 0; i < n; i++) {
		struct sockaddr_in me;
		struct epoll_event e;
		struct rdzv_live_msg m;

		/* A loopback address per 8192 nodes: one address's ports
		 * (the ephemeral range) would not hold 32k. */
		memset(&me, 0, sizeof(me));
		me.sin_family = AF_INET;
		me.sin_addr.s_addr = htonl(0x7f000001u + (((lo + i) / 8192 + 1) << 8));
		if ((socks[i] = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0
		    || bind(socks[i], (struct sockaddr *)&me, sizeof(me)) < 0) {
			fprintf(stderr, "bench-liveness: node socket %u: %s\n", lo + i, strerror(errno));
			_exit(1);
		}
		e.events = EPOLLIN;
		e.data.u32 = i;
		epoll_ctl(ep, EPOLL_CTL_ADD, socks[i], &e);
		memset(&m, 0, sizeof(m));
		m.kind = RDZV_LIVE_HELLO;
		m.job = 1;
		m.nonce = b.nonce;
		m.node_id = lo + i;
		snprintf(m.node, sizeof(m.node), "gpu-%05u", lo + i);
		rdzv_live_encode(&m, hello[i], sizeof(hello[i]));
	}
	/* Every HELLO at once, as rdzv_live_hello_start sends its first. */
	for (i = 0; i < n; i++) {
		(void)sendto(socks[i], hello[i], strlen(hello[i]), 0, (const struct sockaddr *)to,
		             sizeof(*to));
		tries[i] = 1;
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		next[i] = mono_ms() + rdzv_live_hello_delay(1, x);
	}
	for (;;) {
		int64_t now = mono_ms();
		int k, j;

		/* rdzv_live_hello_start's thread, one per node: the next try
		 * on its own delay, until ACK or the tries are spent. */
		for (i = 0; i < n; i++) {
			long d;

			if (next[i] > now)
				continue;
			(void)sendto(socks[i], hello[i], strlen(hello[i]), 0, (const struct sockaddr *)to,
			             sizeof(*to));
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			d = rdzv_live_hello_delay(++tries[i], x);
			next[i] = d < 0 ? INT64_MAX : now + d;
		}
		k = epoll_wait(ep, ev, 256, 20);
		for (j = 0; j < k; j++) {
			uint32_t id = ev[j].data.u32;
			char buf[RDZV_LIVE_DGRAM_MAX + 1], out[RDZV_LIVE_DGRAM_MAX];
			struct rdzv_live_msg m;
			ssize_t r;

			struct sockaddr_storage from;
			socklen_t fl = sizeof(from);

			while ((r = recvfrom(socks[id], buf, sizeof(buf) - 1, MSG_DONTWAIT,
			                     (struct sockaddr *)&from, &fl)) > 0) {
				socklen_t flen = fl;

				fl = sizeof(from);
				if (rdzv_live_decode(buf, (size_t)r, &m) < 0)
					continue;
				/* rdzv_live_hello_acked: no more resends, and the
				 * socket connected to the ACK's source. */
				if (m.kind == RDZV_LIVE_ACK && next[id] != INT64_MAX) {
					next[id] = INT64_MAX;
					(void)connect(socks[id], (struct sockaddr *)&from, flen);
				} else if (m.kind == RDZV_LIVE_PING) {
					m.kind = RDZV_LIVE_ALIVE;
					m.node_id = lo + id;
					if (rdzv_live_encode(&m, out, sizeof(out)) == 0)
						(void)send(socks[id], out, strlen(out), 0);
				}
			}
		}
	}
}

static int one_check(void *arg, char *err, size_t errlen)
{
	int stopping = 0;
	struct rdzv_live_check c = { &b.mu, &b.cv, &stopping, b.srun.sock, 1, 0, b.nonce };
	size_t silent;

	(void)arg;
	silent = rdzv_live_run_check(&b.live, &c, ++b.seq, 10000, b.ids);
	if (silent) {
		snprintf(err, errlen, "%zu of %u nodes did not answer check %u", silent, b.n, b.seq);
		return -1;
	}
	return 0;
}

/* srun's listener and the nodes' processes; returns once srun knows every
 * node or the nodes' resends are spent: *hello_known of n, after
 * *hello_ms. */
static int setup(uint32_t n, uint32_t *hello_known, int64_t *hello_ms, char *err, size_t errlen)
{
	struct sockaddr_in to;
	uint32_t lo, known = 0;
	int64_t end, start;

	b.n = n;
	b.seq = 0;
	b.nkids = 0;
	b.nonce = rdzv_make_nonce();
	if (!(b.ids = calloc(n, sizeof(uint32_t))) || rdzv_live_init(&b.live, n, mono_ms()) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rdzv_listener_init(&b.srun);
	if (rdzv_listener_open(&b.srun, 1, 0) < 0 || rdzv_listener_start(&b.srun, &srun_ops, NULL) < 0) {
		snprintf(err, errlen, "srun's listener: %s", strerror(errno));
		return -1;
	}
	b.srun.addr.nonce = b.nonce;
	memset(&to, 0, sizeof(to));
	to.sin_family = AF_INET;
	to.sin_port = htons(b.srun.addr.port);
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (lo = 0; lo < n && b.nkids < 16; lo += NODES_PER_CHILD) {
		uint32_t hi = n - lo < NODES_PER_CHILD ? n : lo + NODES_PER_CHILD;
		pid_t p = fork();

		if (p == 0)
			nodes(lo, hi, &to);
		if (p < 0) {
			snprintf(err, errlen, "fork: %s", strerror(errno));
			return -1;
		}
		b.kids[b.nkids++] = p;
	}
	start = mono_ms();
	for (end = start + RDZV_LIVE_HELLO_MAX_MS + 2000; mono_ms() < end;) {
		uint32_t i;

		known = 0;
		pthread_mutex_lock(&b.mu);
		for (i = 0; i < n; i++)
			known += b.live.v[i].len != 0;
		pthread_mutex_unlock(&b.mu);
		if (known == n)
			break;
		usleep(5000);
	}
	*hello_ms = mono_ms() - start;
	*hello_known = known;
	return 0;
}

static void teardown(void)
{
	int i;

	rdzv_listener_close(&b.srun);
	for (i = 0; i < b.nkids; i++) {
		kill(b.kids[i], SIGKILL);
		waitpid(b.kids[i], NULL, 0);
	}
	b.nkids = 0;
	free(b.ids);
	rdzv_live_free(&b.live);
	b.ids = NULL;
}

int main(int argc, char **argv)
{
	static const uint32_t def[] = { 1024, 4096, 16384, 32768 };
	uint32_t sizes[16];
	size_t ns = 0, k;
	const char *csv = NULL;
	struct rlimit rl;
	char err[256] = "";
	int i = 1, rv = 0;

	if (i + 1 < argc && strcmp(argv[i], "--csv") == 0) {
		csv = argv[i + 1];
		i += 2;
	}
	for (; i < argc && ns < 16; i++)
		sizes[ns++] = (uint32_t)strtoul(argv[i], NULL, 10);
	if (!ns)
		for (ns = 0; ns < sizeof(def) / sizeof(def[0]); ns++)
			sizes[ns] = def[ns];
	/* One socket per simulated node, NODES_PER_CHILD per process. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < NODES_PER_CHILD + 64) {
		rl.rlim_cur = rl.rlim_max < NODES_PER_CHILD + 64 ? rl.rlim_max : NODES_PER_CHILD + 64;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (csv)
		bench_csv_open(csv);
	printf("\n== Liveness: srun asks every node of the step after a failure (PING, every "
	       "ALIVE taken)\n");
	printf("%8s %12s %12s %12s\n", "nodes", "median ms", "min ms", "max ms");
	for (k = 0; k < ns; k++) {
		struct bench_stat st, hs;
		char config[32], extra[64];
		uint32_t known;
		int64_t hms;

		if (setup(sizes[k], &known, &hms, err, sizeof(err)) < 0) {
			fprintf(stderr, "bench-liveness: %u nodes: %s\n", sizes[k], err);
			teardown();
			rv = 1;
			continue;
		}
		printf("%8u HELLO at once: %u known after the resends, in %lld ms\n", sizes[k], known,
		       (long long)hms);
		snprintf(config, sizeof(config), "nodes=%u", sizes[k]);
		snprintf(extra, sizeof(extra), "known=%u", known);
		hs.median = hs.min = hs.max = (double)hms * 1000.0;
		hs.batches = 1;
		hs.calls = 1;
		bench_csv_row("liveness", "hello-at-once", config, &hs, "us", -1, extra);
		if (known != sizes[k]) {
			fprintf(stderr, "bench-liveness: %u nodes: %u never known to srun\n", sizes[k],
			        sizes[k] - known);
			rv = 1;
		}
		if (bench_time(one_check, NULL, NULL, bench_batches(7), 1, &st, err, sizeof(err)) < 0) {
			fprintf(stderr, "bench-liveness: %u nodes: %s\n", sizes[k], err);
			rv = 1;
		} else {
			printf("%8u %12.3f %12.3f %12.3f\n", sizes[k], st.median / 1000.0,
			       st.min / 1000.0, st.max / 1000.0);
			bench_csv_row("liveness", "check", config, &st, "us", -1, "");
		}
		teardown();
	}
	bench_csv_close();
	return rv;
}
