/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-liveness: is every node of the step still there? (lib/failure/liveness.c)
 * Bad input first: every malformed datagram is refused, whole. Then srun's
 * table: a node that said HELLO and does not answer is silent; one that
 * said BYE (its part ended) or was never heard from (not started) is not;
 * the verdict names them; a datagram not from the node's own address never
 * answers for it (issue 45). Then real sockets on the loopback: two
 * answering nodes and one that stopped answering, checked in bounded time,
 * an IPv4 peer reached from a dual-stack socket; a HELLO resent until
 * srun's ACK, whose source the node's socket is then connected to, hearing
 * no one else; a listener closed while a flood keeps its socket full. */
#include "config.h"
#include "channel.h"
#include "liveness.h"
#include "tap.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static int decodes(const char *s)
{
	struct rdzv_live_msg m;

	return rdzv_live_decode(s, strlen(s), &m) == 0;
}

static void test_wire(void)
{
	static const char *const bad[] = {
		"", "RDZVL1", "RDZVL1 ", "RDZVL2 PING 1.2 00000000000000ff 1",
		"RDZVL1 PONG 1.2 00000000000000ff 1", "RDZVL1 PING 1.2 00000000000000ff",
		"RDZVL1 PING 1.2 00000000000000ff 1 ", "RDZVL1 PING 1.2 00000000000000ff 1 2",
		"RDZVL1 PING 1 00000000000000ff 1", "RDZVL1 PING 1.2 ff 1",
		"RDZVL1 PING 1.2 00000000000000FF 1", "RDZVL1 PING 1.2 00000000000000ff -1",
		"RDZVL1 PING 1.2 00000000000000ff 4294967296", "RDZVL1 PING 1.2 00000000000000ff 99999999999",
		"RDZVL1 PING +1.2 00000000000000ff 1", "RDZVL1 HELLO 1.2 00000000000000ff 0",
		"RDZVL1 HELLO 1.2 00000000000000ff 0 ", "RDZVL1 HELLO 1.2 00000000000000ff 0 n 1",
		"RDZVL1 HELLO 1.2 00000000000000ff 0 n/1", "RDZVL1 HELLO 1.2 00000000000000ff x n1",
		"RDZVL1 ALIVE 1.2 00000000000000ff 0", "RDZVL1 ALIVE 1.2 00000000000000ff 0 1 2",
		"RDZVL1 BYE 1.2 00000000000000ff", "RDZVL1 BYE 1.2 00000000000000ff 0 1",
		"RDZVL1  PING 1.2 00000000000000ff 1", "RDZVL1 PING 01.2 00000000000000ff 1",
		"RDZVL1 ALIVE 1.2 00000000000000ff 0 00", "RDZVL1 ACK 1.2 00000000000000ff",
		"RDZVL1 ACK 1.2 00000000000000ff 0 1", "RDZVL1 ACK 1.2 00000000000000ff n1", NULL };
	static const struct rdzv_live_msg good[] = {
		{ RDZV_LIVE_HELLO, 7, 3, 0x123456789abcdef0ull, 5, 0, "gpu-node-0001.cluster" },
		{ RDZV_LIVE_PING, 7, 3, 1, 0, 42, "" },
		{ RDZV_LIVE_ALIVE, 4294967295u, 0, ~0ull, 4294967295u, 4294967295u, "" },
		{ RDZV_LIVE_BYE, 1, 2, 3, 4, 0, "" },
		{ RDZV_LIVE_ACK, 1, 2, 3, 4, 0, "" },
	};
	static const char *const kind[] = { "HELLO", "PING", "ALIVE", "BYE", "ACK" };
	char buf[RDZV_LIVE_DGRAM_MAX], big[RDZV_LIVE_DGRAM_MAX + 64];
	struct rdzv_live_msg m, hello;
	size_t i;
	int all = 1;

	for (i = 0; bad[i]; i++)
		if (decodes(bad[i])) {
			diag("accepted: '%s'", bad[i]);
			all = 0;
		}
	ok(all, "%zu malformed datagrams are all refused", i);
	ok(rdzv_live_decode("RDZVL1 BYE 1.2 00000000000000ff 0\0x", 36, &m) < 0, "a NUL inside is refused");
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memcpy(big, "RDZVL1 HELLO 1.2 00000000000000ff 0 ", 36);
	ok(!decodes(big), "a datagram longer than the channel's largest is refused");
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		ok(rdzv_live_encode(&good[i], buf, sizeof(buf)) == 0, "%s encodes: %s",
		   kind[good[i].kind], buf);
		ok(rdzv_live_decode(buf, strlen(buf), &m) == 0 && m.kind == good[i].kind
		   && m.job == good[i].job && m.step == good[i].step && m.nonce == good[i].nonce
		   && m.node_id == good[i].node_id && m.seq == good[i].seq
		   && strcmp(m.node, good[i].node) == 0, "... and decodes to the same");
	}
	hello = good[0];
	snprintf(hello.node, sizeof(hello.node), "bad name");
	ok(rdzv_live_encode(&hello, buf, sizeof(buf)) < 0, "a HELLO with a bad node name is not written");
	ok(rdzv_live_encode(&good[0], buf, 10) < 0, "a buffer too small: -1, never cut");
	ok(rdzv_live_is("RDZVL1 PING", 11) && !rdzv_live_is("RDZVF1 1.2", 10), "the channel's own datagrams are told apart");
}

/* Reads on s wait up to tv (the listener's sockets are non-blocking). */
static void fcntl_block(int s, struct timeval *tv)
{
	int fl = fcntl(s, F_GETFL);

	if (fl >= 0)
		(void)fcntl(s, F_SETFL, fl & ~O_NONBLOCK);
	(void)setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, tv, sizeof(*tv));
}

static struct sockaddr_in v4(uint16_t port)
{
	struct sockaddr_in a;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

static void take(struct rdzv_live *l, enum rdzv_live_kind k, uint32_t id, uint32_t seq,
                 const char *name, int64_t at)
{
	struct rdzv_live_msg m;
	struct sockaddr_in a = v4((uint16_t)(1000 + id));

	memset(&m, 0, sizeof(m));
	m.kind = k;
	m.node_id = id;
	m.seq = seq;
	snprintf(m.node, sizeof(m.node), "%s", name ? name : "");
	rdzv_live_take(l, &m, (struct sockaddr *)&a, sizeof(a), at);
}

static void test_table(void)
{
	struct rdzv_live l;
	struct rdzv_live_msg m;
	uint32_t ids[16];
	char v[512];
	int k;

	ok(rdzv_live_init(&l, 0, 0) < 0, "a step of no node: refused");
	ok(rdzv_live_init(&l, 4, 1000) == 0, "a table of 4 nodes");
	take(&l, RDZV_LIVE_HELLO, 0, 0, "n1", 1100);
	take(&l, RDZV_LIVE_HELLO, 1, 0, "n2", 1200);
	take(&l, RDZV_LIVE_HELLO, 2, 0, "n3", 1300);
	is_int((long)rdzv_live_silent(&l, 1, ids, 16), 3, "before the check, the 3 nodes that said HELLO are silent");
	is_int((long)ids[2], 2, "... ids in order");
	take(&l, RDZV_LIVE_ALIVE, 0, 1, NULL, 5000);
	take(&l, RDZV_LIVE_ALIVE, 2, 1, NULL, 5000);
	is_int((long)rdzv_live_silent(&l, 1, ids, 16), 1, "two answered: n2 is silent (node 3 never said HELLO: not counted)");
	is_int((long)ids[0], 1, "... it is n2");
	ok(rdzv_live_verdict(&l, ids, 1, 4700, v, sizeof(v)) == 0, "the verdict");
	is_str(v, "node n2 does not answer (dead or hung: last heard 3.5 s before the failure)", "... names it and when it was last heard");
	is_int((long)rdzv_live_silent(&l, 2, ids, 16), 3, "a later check: all three must answer again");
	take(&l, RDZV_LIVE_BYE, 1, 0, NULL, 6000);
	is_int((long)rdzv_live_silent(&l, 1, ids, 16), 0, "n2 said BYE (its part ended): no longer silent");
	is_int((long)rdzv_live_silent(&l, 99, ids, 16), 2, "... for every later check");
	memset(&m, 0, sizeof(m));
	m.kind = RDZV_LIVE_ALIVE;
	m.node_id = 4;
	ok(rdzv_live_take(&l, &m, NULL, 0, 0) < 0, "a node id past the step's: refused");
	m.kind = RDZV_LIVE_PING;
	m.node_id = 0;
	ok(rdzv_live_take(&l, &m, NULL, 0, 0) < 0, "a PING is not a node's answer");
	m.kind = RDZV_LIVE_HELLO;
	ok(rdzv_live_take(&l, &m, NULL, 0, 0) < 0, "a HELLO without its source address: refused");
	rdzv_live_free(&l);
	rdzv_live_init(&l, 12, 0);
	for (k = 0; k < 12; k++) {
		char name[16];

		snprintf(name, sizeof(name), "gpu%02d", k);
		take(&l, RDZV_LIVE_HELLO, (uint32_t)k, 0, name, 100);
	}
	is_int((long)rdzv_live_silent(&l, 1, ids, 16), 12, "12 silent nodes");
	rdzv_live_verdict(&l, ids, 12, 100, v, sizeof(v));
	is_str(v, "nodes gpu00, gpu01, gpu02, gpu03, gpu04, gpu05, gpu06, gpu07 and 4 more do not answer (dead or hung: last heard 0.0 s before the failure)",
	       "the verdict names eight and counts the rest");
	ok(rdzv_live_verdict(&l, ids, 12, 100, v, 20) < 0, "a verdict that does not fit: -1");
	ok(rdzv_live_verdict(&l, ids, 0, 100, v, sizeof(v)) < 0, "no silent node: no verdict");
	/* Every silent node's name, as srun -x takes them (rdzv-hang asks the others). */
	is_int(rdzv_live_names(&l, ids, 12, v, sizeof(v)), 12, "the 12 silent nodes' names");
	is_str(v, "gpu00,gpu01,gpu02,gpu03,gpu04,gpu05,gpu06,gpu07,gpu08,gpu09,gpu10,gpu11",
	       "... all of them, comma separated, none cut");
	ok(rdzv_live_names(&l, ids, 12, v, 30) < 0 && v[0] == '\0', "names that do not fit: -1, nothing half");
	is_int(rdzv_live_names(&l, ids, 0, v, sizeof(v)), 0, "no silent node: no name");
	rdzv_live_free(&l);
}

/* srun takes a node's answers only from the address its first HELLO came
 * from: a datagram of anyone else, with the step's nonce even, is refused. */
static void test_sources(void)
{
	struct rdzv_live l;
	struct rdzv_live_msg m;
	struct sockaddr_in a = v4(2000), other_port = v4(2001), other_host = v4(2000);
	uint32_t ids[2];

	other_host.sin_addr.s_addr = htonl(0x7f000002u);
	rdzv_live_init(&l, 2, 0);
	memset(&m, 0, sizeof(m));
	m.kind = RDZV_LIVE_ALIVE;
	m.seq = 1;
	ok(rdzv_live_take(&l, &m, (struct sockaddr *)&a, sizeof(a), 1) < 0,
	   "an ALIVE for a node never heard from: refused");
	m.kind = RDZV_LIVE_HELLO;
	snprintf(m.node, sizeof(m.node), "n1");
	is_int(rdzv_live_take(&l, &m, (struct sockaddr *)&a, sizeof(a), 1), 1, "n1's HELLO fixes its address");
	is_int(rdzv_live_take(&l, &m, (struct sockaddr *)&a, sizeof(a), 2), 0,
	       "the same HELLO again: a repeat (acknowledged again)");
	ok(rdzv_live_take(&l, &m, (struct sockaddr *)&other_host, sizeof(other_host), 3) < 0,
	   "a HELLO for n1 from another host: refused");
	ok(rdzv_live_take(&l, &m, (struct sockaddr *)&other_port, sizeof(other_port), 3) < 0,
	   "... from another port of its host: refused");
	snprintf(m.node, sizeof(m.node), "n9");
	ok(rdzv_live_take(&l, &m, (struct sockaddr *)&a, sizeof(a), 3) < 0,
	   "... from its address with another name: refused");
	ok(l.v[0].len == sizeof(a) && memcmp(&l.v[0].addr, &a, sizeof(a)) == 0
	   && strcmp(l.v[0].name, "n1") == 0, "n1's address and name are still the first HELLO's");
	m.kind = RDZV_LIVE_ALIVE;
	ok(rdzv_live_take(&l, &m, (struct sockaddr *)&other_port, sizeof(other_port), 4) < 0,
	   "an ALIVE for n1 from another port: refused");
	ok(rdzv_live_take(&l, &m, (struct sockaddr *)&other_host, sizeof(other_host), 4) < 0,
	   "... from another host: refused");
	is_int((long)rdzv_live_silent(&l, 1, ids, 2), 1, "... n1 is still silent for check 1");
	is_int(rdzv_live_take(&l, &m, (struct sockaddr *)&a, sizeof(a), 4), 1, "n1's own ALIVE is taken");
	is_int((long)rdzv_live_silent(&l, 1, ids, 2), 0, "... and n1 answered check 1");
	m.kind = RDZV_LIVE_BYE;
	ok(rdzv_live_take(&l, &m, (struct sockaddr *)&other_host, sizeof(other_host), 5) < 0,
	   "a BYE for n1 from another host: refused");
	is_int((long)rdzv_live_silent(&l, 2, ids, 2), 1, "... n1 must still answer check 2");
	is_int(rdzv_live_take(&l, &m, (struct sockaddr *)&other_port, sizeof(other_port), 5), 1,
	       "a BYE from n1's host, another port (a release before ACK): taken");
	is_int((long)rdzv_live_silent(&l, 2, ids, 2), 0, "... n1's part ended");
	m.kind = RDZV_LIVE_ACK;
	ok(rdzv_live_take(&l, &m, (struct sockaddr *)&a, sizeof(a), 6) < 0, "an ACK is not a node's");
	rdzv_live_free(&l);
}

static void test_hello_delay(void)
{
	long total = 0, d;
	unsigned a;
	int all = 1, spread = 0;

	ok(rdzv_live_hello_delay(0, 0) < 0, "try 0 is the first send: no delay");
	ok(rdzv_live_hello_delay(RDZV_LIVE_HELLO_TRIES, 0) < 0, "no try past RDZV_LIVE_HELLO_TRIES");
	for (a = 1; a < RDZV_LIVE_HELLO_TRIES; a++) {
		long lo = rdzv_live_hello_delay(a, 0), hi = rdzv_live_hello_delay(a, UINT32_MAX);
		long base = lo * 2;

		if (lo <= 0 || hi < lo || hi >= base + base / 2 || (a > 1 && base < rdzv_live_hello_delay(a - 1, 0) * 2))
			all = 0;
		total += base + base / 2;
		spread += rdzv_live_hello_delay(a, 12345) != rdzv_live_hello_delay(a, 54321);
	}
	ok(all, "each delay in [d/2, 3d/2), d growing");
	ok(total <= RDZV_LIVE_HELLO_MAX_MS, "all the tries fit RDZV_LIVE_HELLO_MAX_MS (%ld ms at most)", total);
	ok(spread == RDZV_LIVE_HELLO_TRIES - 1, "two nodes' jitter differ on every try");
	d = rdzv_live_hello_delay(1, 7);
	is_int(d, rdzv_live_hello_delay(1, 7), "the same draw, the same delay");
}

/* ---- real sockets: srun's listener and two nodes that answer ---- */

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct rdzv_live live;
	struct rdzv_listener srun;
	uint32_t job, step;
	uint64_t nonce;
} w = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static void on_srun(struct rdzv_listener *l, const char *buf, size_t n, const struct sockaddr *from,
                    socklen_t len, void *ctx)
{
	struct rdzv_live_msg m;
	struct timespec t;

	(void)l;
	(void)ctx;
	if (rdzv_live_decode(buf, n, &m) < 0 || m.nonce != w.nonce)
		return;
	clock_gettime(CLOCK_MONOTONIC, &t);
	pthread_mutex_lock(&w.mu);
	if (rdzv_live_take(&w.live, &m, from, len, (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000) > 0)
		pthread_cond_broadcast(&w.cv);
	pthread_mutex_unlock(&w.mu);
}

struct node { struct rdzv_listener l; uint32_t id; };

static void on_node(struct rdzv_listener *l, const char *buf, size_t n, const struct sockaddr *from,
                    socklen_t len, void *ctx)
{
	struct node *nd = ctx;
	struct rdzv_live_msg m;
	char out[RDZV_LIVE_DGRAM_MAX];

	if (rdzv_live_decode(buf, n, &m) < 0 || m.kind != RDZV_LIVE_PING || m.nonce != w.nonce)
		return;
	m.kind = RDZV_LIVE_ALIVE;
	m.node_id = nd->id;
	if (rdzv_live_encode(&m, out, sizeof(out)) == 0)
		rdzv_listener_reply(l, out, strlen(out), from, len);
}

static const struct rdzv_listener_ops srun_ops = { RDZV_LIVE_DGRAM_MAX, on_srun, NULL };
static const struct rdzv_listener_ops node_ops = { RDZV_LIVE_DGRAM_MAX, on_node, NULL };

static void test_sockets(void)
{
	struct node nodes[3];
	struct sockaddr_storage to;
	struct sockaddr_in a;
	uint32_t ids[3];
	int stopping = 0, i, ok_all = 1;
	struct rdzv_live_check c;
	struct timespec t0, t1;
	size_t silent;
	long ms;

	w.nonce = 0xfeedfacecafef00dull;
	rdzv_listener_init(&w.srun);
	if (rdzv_listener_open(&w.srun, 9, 1) < 0 || rdzv_listener_start(&w.srun, &srun_ops, NULL) < 0
	    || rdzv_live_init(&w.live, 3, 0) < 0) {
		ok(0, "srun's listener on the loopback");
		return;
	}
	a = v4(w.srun.addr.port);
	memset(&to, 0, sizeof(to));
	memcpy(&to, &a, sizeof(a));
	for (i = 0; i < 3; i++) {
		struct rdzv_live_msg m;
		char buf[RDZV_LIVE_DGRAM_MAX];

		rdzv_listener_init(&nodes[i].l);
		nodes[i].id = (uint32_t)i;
		if (rdzv_listener_open(&nodes[i].l, 9, 1) < 0
		    || rdzv_listener_start(&nodes[i].l, &node_ops, &nodes[i]) < 0)
			ok_all = 0;
		memset(&m, 0, sizeof(m));
		m.kind = RDZV_LIVE_HELLO;
		m.nonce = w.nonce;
		m.node_id = (uint32_t)i;
		snprintf(m.node, sizeof(m.node), "n%d", i + 1);
		rdzv_live_encode(&m, buf, sizeof(buf));
		/* srun's address as a node resolves it: IPv4, sent from the
		 * node's dual-stack socket. */
		if (rdzv_live_sendto(nodes[i].l.sock, buf, strlen(buf), &to, sizeof(a)) < 0)
			ok_all = 0;
	}
	ok(ok_all, "3 nodes said HELLO to srun's IPv4 address from dual-stack sockets");
	for (i = 0; i < 200; i++) {
		uint32_t tmp[3];

		pthread_mutex_lock(&w.mu);
		silent = rdzv_live_silent(&w.live, 0, tmp, 3) + (w.live.v[0].len && w.live.v[1].len && w.live.v[2].len ? 0 : 1);
		pthread_mutex_unlock(&w.mu);
		if (!silent)
			break;
		usleep(10000);
	}
	ok(w.live.v[0].len && w.live.v[1].len && w.live.v[2].len, "srun knows the 3 nodes' addresses");
	/* Node 2 stops answering (its thread gone, as a dead slurmstepd's). */
	rdzv_listener_close(&nodes[2].l);
	c.mu = &w.mu;
	c.cv = &w.cv;
	c.stopping = &stopping;
	c.sock = w.srun.sock;
	c.job = 9;
	c.step = 1;
	c.nonce = w.nonce;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	silent = rdzv_live_run_check(&w.live, &c, 1, 1200, ids);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	is_int((long)silent, 1, "the check finds one silent node");
	is_int((long)ids[0], 2, "... n3, whose thread stopped");
	ok(ms >= 1100 && ms < 3000, "... after the check's wait (%ld ms of 1200)", ms);
	/* n3 said BYE (its part ended): the next check ends as soon as the
	 * other two have answered. */
	rdzv_listener_init(&nodes[2].l);
	pthread_mutex_lock(&w.mu);
	w.live.v[2].seq = UINT32_MAX;
	pthread_mutex_unlock(&w.mu);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	silent = rdzv_live_run_check(&w.live, &c, 2, 3000, ids);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	is_int((long)silent, 0, "check 2, n3 gone with a BYE: no node is silent");
	ok(ms < 1000, "... and the check ends when the others answered (%ld ms, not its 3000)", ms);
	stopping = 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	silent = rdzv_live_run_check(&w.live, &c, 3, 3000, ids);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	ok(ms < 500, "a check asked to stop returns at once (%ld ms, %zu silent)", ms, silent);
	stopping = 0;
	for (i = 0; i < 2; i++)
		rdzv_listener_close(&nodes[i].l);
	rdzv_listener_close(&w.srun);
	rdzv_live_free(&w.live);
}

/* Datagrams a node's responder read. */
static int node_pings;

static void count_ping(struct rdzv_listener *l, const char *buf, size_t n,
                       const struct sockaddr *from, socklen_t len, void *ctx)
{
	(void)l;
	(void)buf;
	(void)n;
	(void)from;
	(void)len;
	(void)ctx;
	__atomic_add_fetch(&node_pings, 1, __ATOMIC_SEQ_CST);
}

static int wait_count(int *c, int want, long ms)
{
	for (; ms > 0 && __atomic_load_n(c, __ATOMIC_SEQ_CST) < want; ms -= 5)
		usleep(5000);
	return __atomic_load_n(c, __ATOMIC_SEQ_CST);
}

static struct sockaddr_in port_of(int sock)
{
	struct sockaddr_storage me;
	socklen_t ml = sizeof(me);
	uint16_t port = 0;

	if (getsockname(sock, (struct sockaddr *)&me, &ml) == 0)
		port = ntohs(me.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&me)->sin6_port
		                                      : ((struct sockaddr_in *)&me)->sin_port);
	return v4(port);
}

/* A node's HELLO, resent until srun acknowledges it: srun (a socket read
 * here) drops the first three, then answers ACK, and the node's socket is
 * connected to the ACK's source: from then on a datagram from another
 * socket (another port of srun's host, as a flooder's) never reaches the
 * responder's thread; srun's does. */
static struct rdzv_live_hello hh;
static int acks_connected;

static void on_node_ack(struct rdzv_listener *l, const char *buf, size_t n,
                        const struct sockaddr *from, socklen_t len, void *ctx)
{
	if (n >= 10 && memcmp(buf, "RDZVL1 ACK", 10) == 0) {
		if (rdzv_live_hello_acked(&hh, from, len) == 1)
			__atomic_add_fetch(&acks_connected, 1, __ATOMIC_SEQ_CST);
		return;
	}
	count_ping(l, buf, n, from, len, ctx);
}

static const struct rdzv_listener_ops ack_ops = { RDZV_LIVE_DGRAM_MAX, on_node_ack, NULL };

static void test_hello_acked(void)
{
	struct rdzv_listener srun, node;
	struct sockaddr_storage to, from;
	struct sockaddr_in s4, n4;
	socklen_t fl;
	char buf[RDZV_LIVE_DGRAM_MAX + 1];
	struct timespec t0, t1;
	int got = 0, i, other = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	unsigned sent;
	long ms;

	rdzv_listener_init(&srun);
	rdzv_listener_init(&node);
	node_pings = acks_connected = 0;
	if (other < 0 || rdzv_listener_open(&srun, 9, 3) < 0 || rdzv_listener_open(&node, 9, 3) < 0
	    || rdzv_listener_start(&node, &ack_ops, NULL) < 0) {
		ok(0, "sockets on the loopback");
		return;
	}
	s4 = v4(srun.addr.port);
	n4 = port_of(node.sock);
	memset(&to, 0, sizeof(to));
	memcpy(&to, &s4, sizeof(s4));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ok(rdzv_live_hello_start(&hh, node.sock, "RDZVL1 HELLO 9.3 00000000000000ff 0 n1", &to,
	                         sizeof(s4), 7) == 0,
	   "a HELLO to srun's IPv4 address from a dual-stack socket, and its resender");
	for (;;) {
		struct timeval tv = { 5, 0 };
		ssize_t r;

		fcntl_block(srun.sock, &tv);
		fl = sizeof(from);
		if ((r = recvfrom(srun.sock, buf, sizeof(buf) - 1, 0, (struct sockaddr *)&from, &fl)) <= 0)
			break;
		if (++got == 4)
			break;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	ok(got == 4, "srun got the HELLO 4 times (%d, %ld ms)", got, ms);
	ok(ms >= RDZV_LIVE_HELLO_FIRST_MS / 2 * 3 && ms < 10000, "... the resends spaced out (%ld ms)", ms);
	(void)sendto(other, "RDZVL1 PING", 11, 0, (struct sockaddr *)&n4, sizeof(n4));
	is_int(wait_count(&node_pings, 1, 2000), 1, "before srun's ACK the responder hears another socket");
	(void)sendto(srun.sock, "RDZVL1 ACK", 10, 0, (struct sockaddr *)&from, fl);
	is_int(wait_count(&acks_connected, 1, 2000), 1, "srun's ACK: the node's socket connected to its source");
	(void)sendto(srun.sock, "RDZVL1 ACK", 10, 0, (struct sockaddr *)&from, fl);
	for (i = 0; i < 50; i++)
		(void)sendto(other, "RDZVL1 PING", 11, 0, (struct sockaddr *)&n4, sizeof(n4));
	(void)sendto(srun.sock, "RDZVL1 PING", 11, 0, (struct sockaddr *)&n4, sizeof(n4));
	is_int(wait_count(&node_pings, 2, 2000), 2, "then 50 datagrams from another socket dropped, srun's one heard");
	is_int(acks_connected, 1, "... a second ACK connects nothing again");
	usleep(RDZV_LIVE_HELLO_CAP_MS * 1000 * 3 / 2 + 100000);
	sent = rdzv_live_hello_stop(&hh);
	is_int((long)sent, 4, "acknowledged: no more resends");
	ok(rdzv_live_hello_acked(&hh, (struct sockaddr *)&from, fl) == 0, "an ACK after the stop: nothing");
	ok(rdzv_live_hello_start(&hh, node.sock, "RDZVL1 HELLO 9.3 00000000000000ff 0 n1", &to,
	                         sizeof(s4), 7) == 0,
	   "a HELLO never acknowledged");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	sent = rdzv_live_hello_stop(&hh);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	ok(ms < 500, "... its resender stops at once when the node's part ends (%ld ms, %u sent)", ms, sent);
	close(other);
	rdzv_listener_close(&node);
	rdzv_listener_close(&srun);
}

/* A listener whose socket a flood keeps full closes at once: its thread
 * looks at the stop pipe before every datagram. */
static volatile int flooding;

static void *flood(void *arg)
{
	struct sockaddr_in *to = arg;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	long n;

	for (n = 0; s >= 0 && flooding && n < 50000000; n++)
		(void)sendto(s, "RDZVL1 PING 9.4 00000000000000ff 1", 34, 0, (struct sockaddr *)to, sizeof(*to));
	if (s >= 0)
		close(s);
	return NULL;
}

static void slow_ping(struct rdzv_listener *l, const char *buf, size_t n,
                      const struct sockaddr *from, socklen_t len, void *ctx)
{
	count_ping(l, buf, n, from, len, ctx);
	usleep(200); /* a handler slower than the flood */
}

static const struct rdzv_listener_ops slow_ops = { RDZV_LIVE_DGRAM_MAX, slow_ping, NULL };

static void test_flood_close(void)
{
	struct rdzv_listener node;
	struct sockaddr_in n4;
	pthread_t th[2];
	struct timespec t0, t1;
	long ms;
	int i;

	rdzv_listener_init(&node);
	node_pings = 0;
	if (rdzv_listener_open(&node, 9, 4) < 0 || rdzv_listener_start(&node, &slow_ops, NULL) < 0) {
		ok(0, "a listener on the loopback");
		return;
	}
	n4 = port_of(node.sock);
	flooding = 1;
	for (i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, flood, &n4);
	wait_count(&node_pings, 500, 5000);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rdzv_listener_close(&node);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	flooding = 0;
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	ok(node_pings >= 500, "a flood reached the listener (%d datagrams read)", node_pings);
	ok(ms < 200, "... which closed within %ld ms all the same", ms);
}

int main(void)
{
	test_wire();
	test_table();
	test_sources();
	test_hello_delay();
	test_sockets();
	test_hello_acked();
	test_flood_close();
	return done_testing();
}
