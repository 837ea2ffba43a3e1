/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-channel: the step's datagram channels (channel.h), written once for
 * the failure report, the hang ask and the NVLink domain exchange: the
 * variable's format and its one parser, the nonce's hex reader, and a round
 * trip on the loopback from a node's sender to srun's listener and back. */
#include "config.h"
#include "channel.h"
#include "failure.h"
#include "tap.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void test_var(void)
{
	struct rdzv_channel_addr a = { 12, 3, 40000, 0xdeadbeefULL }, b;
	const char *rest = NULL;
	char buf[RDZV_CHANNEL_VAR_MAX];
	static const char *const bad[] = {
		"", "12", "12.3", "12.3:40000", "12.3:40000:", "12.3:40000:deadbeef",
		"12.3:40000:00000000DEADBEEF", "12.3:40000:00000000deadbeefx",
		"12.3:70000:00000000deadbeef", "-1.3:40000:00000000deadbeef",
		"+12.3:40000:00000000deadbeef", " 12.3:40000:00000000deadbeef",
		"12.3: 40000:00000000deadbeef", "4294967296.3:40000:00000000deadbeef",
		"12.3:40000:0x000000deadbeef", "12,3:40000:00000000deadbeef", NULL };
	int i;

	is_int(rdzv_channel_var_format(&a, buf, sizeof(buf)), 0, "the variable formats");
	/* Byte for byte what srun wrote for RDZV_HANG_ASK and RDZV_DOMAIN_ASK
	 * before the channel was shared: a node of either age reads it. */
	is_str(buf, "12.3:40000:00000000deadbeef", "... JOB.STEP:PORT:NONCE, 16 hex digits");
	is_int(rdzv_channel_var_format(&a, buf, 10), -1, "... refused, not cut, in a short buffer");
	rdzv_channel_var_format(&a, buf, sizeof(buf));
	ok(rdzv_channel_var_parse(buf, &b, NULL) == 0 && b.job == 12 && b.step == 3
	   && b.port == 40000 && b.nonce == 0xdeadbeefULL, "... and parses back");
	for (i = 0; bad[i]; i++)
		is_int(rdzv_channel_var_parse(bad[i], &b, NULL), -1, bad[i]);
	is_int(rdzv_channel_var_parse(NULL, &b, NULL), -1, "NULL is refused");
	ok(rdzv_channel_var_parse("4294967295.4294967294:65535:ffffffffffffffff", &b, NULL) == 0
	   && b.job == 4294967295u && b.step == 4294967294u && b.port == 65535
	   && b.nonce == UINT64_MAX, "the largest ids, port and nonce");
	is_int(rdzv_channel_var_parse("1.2:0:0000000000000001", &b, NULL), 0,
	       "port 0 parses (the failure report's: srun has no socket)");
	ok(rdzv_channel_var_parse("1.2:5:0000000000000001:3", &b, &rest) == 0
	   && strcmp(rest, ":3") == 0, "with rest, what follows the nonce is the caller's");
	is_int(rdzv_channel_var_parse("1.2:5:0000000000000001:3", &b, NULL), -1,
	       "... without, nothing may follow");
	/* The failure report is the channel's variable and ":FLAGS". */
	{
		uint32_t j, s;
		uint16_t p;
		uint64_t n;
		int k;

		ok(rdzv_report_format(12, 3, 40000, 0xdeadbeefULL, 2, buf, sizeof(buf)) == 0
		   && strcmp(buf, "12.3:40000:00000000deadbeef:2") == 0,
		   "RDZV_STEP_REPORT: the variable, then the flags (%s)", buf);
		ok(rdzv_report_parse(buf, &j, &s, &p, &n, &k) == 0 && j == 12 && s == 3 && p == 40000
		   && n == 0xdeadbeefULL && k == 2, "... parsed by the channel's parser");
		is_int(rdzv_report_parse("12.3:40000:00000000deadbeef:2x", &j, &s, &p, &n, &k), -1,
		       "... nothing after the flags");
	}
}

static void test_hex(void)
{
	uint64_t v = 0;

	ok(rdzv_hex64("ab", 2, &v) == 0 && v == 0xab, "hex: 2 digits");
	ok(rdzv_hex64("ffffffffffffffff", 16, &v) == 0 && v == UINT64_MAX, "hex: 16 digits");
	is_int(rdzv_hex64("fffffffffffffffff", 17, &v), -1, "hex: 17 digits are refused");
	is_int(rdzv_hex64("", 0, &v), -1, "hex: none is refused");
	is_int(rdzv_hex64("AB", 2, &v), -1, "hex: upper case is not what srun writes");
	is_int(rdzv_hex64("a b", 3, &v), -1, "hex: a space is refused");
	ok(rdzv_hex64("12zz", 2, &v) == 0 && v == 0x12, "hex: reads n bytes, no more");
}

/* srun's side of the round trip: records the datagrams, answers each. */
struct seen {
	pthread_mutex_t mu;
	int n, drained;
	char last[64];
};

static void on_dgram(struct rdzv_listener *l, const char *buf, size_t n,
                     const struct sockaddr *from, socklen_t flen, void *ctx)
{
	struct seen *s = ctx;
	char answer[64];

	pthread_mutex_lock(&s->mu);
	s->n++;
	snprintf(s->last, sizeof(s->last), "%.*s", (int)n, buf);
	pthread_mutex_unlock(&s->mu);
	if (strncmp(buf, "ask ", 4) == 0) {
		snprintf(answer, sizeof(answer), "answer %016llx", (unsigned long long)l->addr.nonce);
		rdzv_listener_reply(l, answer, strlen(answer), from, flen);
	}
}

static void on_drained(struct rdzv_listener *l, void *ctx)
{
	struct seen *s = ctx;

	(void)l;
	pthread_mutex_lock(&s->mu);
	s->drained++;
	pthread_mutex_unlock(&s->mu);
}

static int take_answer(const char *buf, size_t n, void *ctx)
{
	char want[64];

	snprintf(want, sizeof(want), "answer %016llx", *(unsigned long long *)ctx);
	return n == strlen(want) && memcmp(buf, want, n) == 0 ? 7 : -1;
}

static int never(const char *buf, size_t n, void *ctx)
{
	(void)buf;
	(void)n;
	(void)ctx;
	return -1;
}

static void test_round_trip(void)
{
	static const struct rdzv_listener_ops ops = { 64, on_dgram, on_drained };
	struct seen s = { PTHREAD_MUTEX_INITIALIZER, 0, 0, "" };
	struct rdzv_listener l;
	struct rdzv_channel_addr a;
	struct rdzv_channel_peer peer;
	char var[RDZV_CHANNEL_VAR_MAX], buf[64];
	unsigned long long nonce;
	int i, n = 0;

	rdzv_listener_init(&l);
	rdzv_listener_close(&l); /* closing what was never opened is harmless */
	if (rdzv_listener_open(&l, 41, 2) < 0) {
		ok(1, "# SKIP no datagram socket here");
		return;
	}
	ok(l.addr.port != 0 && l.addr.job == 41 && l.addr.step == 2, "srun listens (port %u)",
	   l.addr.port);
	is_int(rdzv_listener_start(&l, &ops, &s), 0, "... on its thread");
	/* What the node gets, and what it does with it. */
	ok(rdzv_channel_var_format(&l.addr, var, sizeof(var)) == 0
	   && rdzv_channel_var_parse(var, &a, NULL) == 0 && a.port == l.addr.port
	   && a.nonce == l.addr.nonce, "the node reads srun's port and nonce (%s)", var);
	is_int(rdzv_channel_peer_resolve("localhost", a.port, &peer), 0, "srun's host resolves");
	is_int(rdzv_channel_send(&peer, "report 1", 8), 0, "a node sends a datagram");
	for (i = 0; i < 200; i++) { /* up to 2 s */
		pthread_mutex_lock(&s.mu);
		n = s.n;
		pthread_mutex_unlock(&s.mu);
		if (n)
			break;
		usleep(10000);
	}
	ok(n == 1 && strcmp(s.last, "report 1") == 0, "... srun's handler gets it (%d)", n);
	nonce = (unsigned long long)a.nonce;
	is_int(rdzv_channel_ask(&peer, "ask 1", 2000, 100, buf, sizeof(buf), take_answer, &nonce), 7,
	       "a node's ask is answered, and the answer is the node's to judge");
	/* The listener says "drained" after the handler has answered, so the
	 * node may hold the answer first: wait for it (a loaded machine). */
	for (i = 0; i < 500; i++) { /* up to 5 s */
		pthread_mutex_lock(&s.mu);
		n = s.drained;
		pthread_mutex_unlock(&s.mu);
		if (n >= 2)
			break;
		usleep(10000);
	}
	ok(n >= 2, "the handler hears when the queue is drained (%d)", n);
	is_int(rdzv_channel_ask(&peer, "ask 2", 300, 100, buf, sizeof(buf), never, NULL), -2,
	       "an ask no answer satisfies ends when its time is up");
	rdzv_listener_close(&l);
	ok(l.sock == -1 && !l.started, "srun closes the channel");
	rdzv_listener_close(&l);
	ok(1, "... twice is harmless");
	memset(&peer, 0, sizeof(peer));
	is_int(rdzv_channel_send(&peer, "x", 1), -1, "an unresolved peer sends nothing");
	is_int(rdzv_channel_peer_resolve("no-such-host.invalid", 1, &peer), -1,
	       "a host that does not resolve is refused");
}

int main(void)
{
	test_var();
	test_hex();
	test_round_trip();
	return done_testing();
}
