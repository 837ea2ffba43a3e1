/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-bootstrap-net: rank 0's bootstrap server against real ranks (forked
 * children) and strangers on 127.0.0.1. The server must finish its
 * all-gathers whatever strangers do, and must fail fast, naming the rank,
 * when the rendezvous itself is wrong. */
#include "config.h"
#include "bootstrap.h"
#include "tap.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define SESSION "77.0"

static struct rdzv_boot_hello mkhello(uint32_t world, const char *host, const char *session)
{
	struct rdzv_boot_hello h;

	memset(&h, 0, sizeof(h));
	h.world = world;
	h.link_port = 1234;
	snprintf(h.host, sizeof(h.host), "%s", host);
	snprintf(h.session, sizeof(h.session), "%s", session);
	return h;
}

/* A child rank: joins, does `phases` all-gathers of "r<rank>", checks what
 * comes back. Exit 0 on success, 10 when refused, 11 when aborted, 1 else. */
static pid_t rank_child(uint16_t port, uint32_t rank, uint32_t world, uint32_t claim_world,
                        const char *session, int phases)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct rdzv_boot_hello h;
		struct rdzv_boot_client *c;
		char err[512], host[32], mine[32];
		uint32_t seq;

		alarm(20);
		snprintf(host, sizeof(host), "host%u", rank);
		h = mkhello(claim_world, host, session);
		c = rdzv_boot_client_connect("127.0.0.1", port, rank, &h, rdzv_boot_now_ms() + 5000,
		                             err, sizeof(err));
		if (!c)
			_exit(strstr(err, "refused") ? 10 : 1);
		for (seq = 1; seq <= (uint32_t)phases; seq++) {
			unsigned char *all = NULL;
			const unsigned char *ptr[64];
			uint32_t len[64], r;
			size_t alllen;
			int aborted;

			snprintf(mine, sizeof(mine), "r%u.%u", rank, seq);
			if (rdzv_boot_client_allgather(c, seq, mine, (uint32_t)strlen(mine),
			                               rdzv_boot_now_ms() + 10000, &all, &alllen,
			                               &aborted, err, sizeof(err)) < 0)
				_exit(aborted ? 11 : 1);
			if (rdzv_boot_all_unpack(all, alllen, world, ptr, len, err, sizeof(err)) < 0)
				_exit(1);
			for (r = 0; r < world; r++) {
				snprintf(mine, sizeof(mine), "r%u.%u", r, seq);
				if (len[r] != strlen(mine) || memcmp(ptr[r], mine, len[r]) != 0)
					_exit(2);
			}
			free(all);
		}
		rdzv_boot_client_destroy(c);
		_exit(0);
	}
	return pid;
}

static int reap(pid_t pid)
{
	int st = 0;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int raw_connect(uint16_t port)
{
	struct sockaddr_in a;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static int gather(struct rdzv_boot_server *s, uint32_t seq, int64_t ms, char *err, size_t errlen)
{
	unsigned char *all = NULL;
	size_t alllen;
	char mine[32];
	int rc;

	snprintf(mine, sizeof(mine), "r0.%u", seq);
	rc = rdzv_boot_server_allgather(s, seq, mine, (uint32_t)strlen(mine),
	                                rdzv_boot_now_ms() + ms, &all, &alllen, err, errlen);
	free(all);
	return rc;
}

static int any_note(const struct rdzv_boot_server *s, const char *needle)
{
	unsigned i;

	for (i = 0; i < rdzv_boot_server_nnotes(s); i++)
		if (strstr(rdzv_boot_server_note(s, i), needle))
			return 1;
	return 0;
}

static void test_strangers_do_not_block(void)
{
	struct rdzv_boot_server *s;
	char err[512];
	pid_t kid[3];
	int silent, http, badver, huge, i;
	unsigned char b[RDZV_BOOT_HDR_LEN];
	struct rdzv_boot_hdr h = { RDZV_BOOT_MAGIC, 9, RDZV_BOOT_HELLO, 1, 0, 0 };
	struct rdzv_boot_hdr hh = { RDZV_BOOT_MAGIC, RDZV_BOOT_VERSION, RDZV_BOOT_HELLO, 1, 0,
	                            0x7fffffffu };
	int64_t t0;

	s = rdzv_boot_server_create(0, 4, SESSION, "host0", 1, err, sizeof(err));
	ok(s != NULL, "server listens on a free port: %s", s ? "" : err);
	if (!s)
		return;
	/* Strangers arrive first, so they sit ahead of the ranks. */
	silent = raw_connect(rdzv_boot_server_port(s));
	http = raw_connect(rdzv_boot_server_port(s));
	badver = raw_connect(rdzv_boot_server_port(s));
	huge = raw_connect(rdzv_boot_server_port(s));
	ok(silent >= 0 && http >= 0 && badver >= 0 && huge >= 0, "four strangers connect");
	if (write(http, "GET / HTTP/1.1\r\nHost: x\r\n\r\n", 27) != 27)
		diag("short write");
	rdzv_boot_hdr_pack(&h, b);
	if (write(badver, b, sizeof(b)) != (ssize_t)sizeof(b))
		diag("short write");
	rdzv_boot_hdr_pack(&hh, b);
	if (write(huge, b, sizeof(b)) != (ssize_t)sizeof(b))
		diag("short write");
	for (i = 0; i < 3; i++)
		kid[i] = rank_child(rdzv_boot_server_port(s), (uint32_t)i + 1, 4, 4, SESSION, 2);
	t0 = rdzv_boot_now_ms();
	ok(gather(s, 1, 8000, err, sizeof(err)) == 0, "phase 1 completes despite strangers: %s", err);
	ok(gather(s, 2, 8000, err, sizeof(err)) == 0, "phase 2 completes: %s", err);
	ok(rdzv_boot_now_ms() - t0 < 5000, "without waiting for the silent stranger");
	for (i = 0; i < 3; i++)
		is_int(reap(kid[i]), 0, "rank sees every rank's blob in both phases");
	ok(rdzv_boot_server_rejected(s) >= 3, "three strangers refused (%u)",
	   rdzv_boot_server_rejected(s));
	ok(any_note(s, "magic"), "the HTTP probe is noted as not our protocol");
	ok(any_note(s, "version 9"), "the wrong version is noted");
	ok(any_note(s, "exceeds"), "the oversized message is noted");
	is_int(rdzv_boot_server_joined(s), 4, "four ranks joined");
	is_str(rdzv_boot_server_peer_addr(s, 2), "127.0.0.1", "rank 2's address is where it came from");
	is_str(rdzv_boot_server_hello(s, 3)->host, "host3", "rank 3's host is known");
	ok(rdzv_boot_server_hello(s, 4) == NULL, "no rank 4 in a world of 4");
	close(silent);
	close(http);
	close(badver);
	close(huge);
	rdzv_boot_server_destroy(s);
}

static void test_wrong_session_is_not_fatal(void)
{
	struct rdzv_boot_server *s;
	char err[512];
	pid_t other, good;

	s = rdzv_boot_server_create(0, 2, SESSION, "host0", 1, err, sizeof(err));
	if (!s) {
		ok(0, "server: %s", err);
		return;
	}
	other = rank_child(rdzv_boot_server_port(s), 1, 2, 2, "99.0", 1);
	usleep(200000);
	good = rank_child(rdzv_boot_server_port(s), 1, 2, 2, SESSION, 1);
	ok(gather(s, 1, 8000, err, sizeof(err)) == 0, "another step's rank 1 does not spoil ours: %s",
	   err);
	is_int(reap(other), 10, "the other step's rank is refused");
	is_int(reap(good), 0, "our rank 1 completes");
	ok(any_note(s, "session '99.0'"), "the refusal names the session");
	rdzv_boot_server_destroy(s);
}

/* The rendezvous is wrong: the gather must fail quickly with err naming it. */
static void expect_fatal(const char *name, uint32_t world, uint32_t rank_a, int rank_b,
                         uint32_t claim_world, const char *want)
{
	struct rdzv_boot_server *s;
	char err[512] = "";
	pid_t a, b = -1;
	int64_t t0;
	int rc;

	s = rdzv_boot_server_create(0, world, SESSION, "host0", 1, err, sizeof(err));
	if (!s) {
		ok(0, "server: %s", err);
		return;
	}
	a = rank_child(rdzv_boot_server_port(s), rank_a, world, world, SESSION, 1);
	/* The good rank first, so that it is the one that joins. */
	usleep(200000);
	if (rank_b >= 0)
		b = rank_child(rdzv_boot_server_port(s), (uint32_t)rank_b, world, claim_world, SESSION,
		               1);
	t0 = rdzv_boot_now_ms();
	rc = gather(s, 1, 8000, err, sizeof(err));
	ok(rc < 0, "%s: the all-gather fails", name);
	ok(rdzv_boot_now_ms() - t0 < 6000, "%s: before the timeout", name);
	ok(strstr(err, want) != NULL, "%s: the reason says '%s': %s", name, want, err);
	rdzv_boot_server_abort(s, err, rdzv_boot_now_ms() + 2500);
	rc = reap(a);
	ok(rc == 11 || rc == 10, "%s: the good rank is told (exit %d)", name, rc);
	if (b > 0)
		is_int(reap(b), 10, "the bad rank is refused");
	rdzv_boot_server_destroy(s);
}

static void test_missing_rank_is_named(void)
{
	struct rdzv_boot_server *s;
	char err[512] = "";
	pid_t a;
	int64_t t0;

	s = rdzv_boot_server_create(0, 4, SESSION, "host0", 1, err, sizeof(err));
	if (!s) {
		ok(0, "server: %s", err);
		return;
	}
	a = rank_child(rdzv_boot_server_port(s), 2, 4, 4, SESSION, 1);
	t0 = rdzv_boot_now_ms();
	ok(gather(s, 1, 1500, err, sizeof(err)) < 0, "a world of 4 with ranks 0 and 2 times out");
	ok(rdzv_boot_now_ms() - t0 < 3000, "at its deadline");
	ok(strstr(err, "2 of 4 ranks missing") != NULL, "the count is given: %s", err);
	ok(strstr(err, "ranks 1, 3") != NULL, "the missing ranks are named: %s", err);
	rdzv_boot_server_abort(s, err, 0);
	is_int(reap(a), 11, "the rank that came is told the run was aborted");
	rdzv_boot_server_destroy(s);
}

static void test_client_failures(void)
{
	struct rdzv_boot_hello h = mkhello(2, "hostx", SESSION);
	struct rdzv_boot_client *c;
	char err[512] = "";
	uint16_t port;
	int64_t t0;
	int lfd, fd;
	pid_t pid;

	/* A port nobody listens on: take one, then close it. */
	lfd = rdzv_boot_listen(0, &port, err, sizeof(err));
	close(lfd);
	t0 = rdzv_boot_now_ms();
	c = rdzv_boot_client_connect("127.0.0.1", port, 1, &h, t0 + 1200, err, sizeof(err));
	ok(c == NULL, "nothing listening: the connect fails");
	ok(rdzv_boot_now_ms() - t0 >= 900 && rdzv_boot_now_ms() - t0 < 4000,
	   "after retrying until its deadline (%lld ms)", (long long)(rdzv_boot_now_ms() - t0));
	ok(strstr(err, "cannot reach 127.0.0.1:") && strstr(err, "refused"),
	   "the reason names the address and the error: %s", err);

	c = rdzv_boot_client_connect("no-such-host.invalid", 29500, 1, &h, rdzv_boot_now_ms() + 300,
	                             err, sizeof(err));
	ok(c == NULL && strstr(err, "does not resolve"), "an unresolvable name is said so: %s", err);

	/* A service that is not a preflight: it speaks first, with garbage. */
	lfd = rdzv_boot_listen(0, &port, err, sizeof(err));
	pid = fork();
	if (pid == 0) {
		struct pollfd p = { lfd, POLLIN, 0 };

		poll(&p, 1, 5000);
		fd = accept(lfd, NULL, NULL);
		if (fd >= 0 && write(fd, "SSH-2.0-OpenSSH_9.2\r\nxxxxxxxxx", 30) < 0)
			_exit(1);
		sleep(3);
		_exit(0);
	}
	c = rdzv_boot_client_connect("127.0.0.1", port, 1, &h, rdzv_boot_now_ms() + 2000, err,
	                             sizeof(err));
	ok(c == NULL && strstr(err, "not a rdzv-preflight"),
	   "a service speaking another protocol is recognised: %s", err);
	kill(pid, SIGKILL);
	reap(pid);
	close(lfd);

	/* A service that accepts and never answers. */
	lfd = rdzv_boot_listen(0, &port, err, sizeof(err));
	t0 = rdzv_boot_now_ms();
	c = rdzv_boot_client_connect("127.0.0.1", port, 1, &h, t0 + 800, err, sizeof(err));
	ok(c == NULL && strstr(err, "did not answer"), "a silent service times out: %s", err);
	ok(rdzv_boot_now_ms() - t0 < 3000, "within the deadline");
	close(lfd);
}

static void test_rank_leaving_fails_fast(void)
{
	struct rdzv_boot_server *s;
	char err[512] = "";
	pid_t a, b;
	int64_t t0;
	int rc;

	s = rdzv_boot_server_create(0, 3, SESSION, "host0", 1, err, sizeof(err));
	if (!s) {
		ok(0, "server: %s", err);
		return;
	}
	/* rank 1 joins and exits without its blob (phases 0). */
	a = rank_child(rdzv_boot_server_port(s), 1, 3, 3, SESSION, 0);
	b = rank_child(rdzv_boot_server_port(s), 2, 3, 3, SESSION, 1);
	t0 = rdzv_boot_now_ms();
	ok(gather(s, 1, 8000, err, sizeof(err)) < 0, "a rank that leaves fails the all-gather");
	ok(rdzv_boot_now_ms() - t0 < 4000, "at once, not at the timeout");
	ok(strstr(err, "rank 1 on host1") && strstr(err, "closed"), "the rank and host are named: %s",
	   err);
	/* Rank 2 may still sit in the listen queue: linger until it heard. */
	rdzv_boot_server_abort(s, err, rdzv_boot_now_ms() + 2500);
	is_int(reap(a), 0, "the leaving rank had joined");
	rc = reap(b);
	ok(rc == 10 || rc == 11, "the others are told (exit %d)", rc);
	rdzv_boot_server_destroy(s);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	test_strangers_do_not_block();
	test_wrong_session_is_not_fatal();
	expect_fatal("duplicate rank", 3, 1, 1, 3, "duplicate rank 1");
	expect_fatal("rank out of range", 3, 1, 7, 3, "rank 7 on host7");
	expect_fatal("second rank 0", 3, 1, 0, 3, "a second rank 0");
	expect_fatal("world size mismatch", 3, 1, 2, 5, "WORLD_SIZE=5, rank 0 has 3");
	test_missing_rank_is_named();
	test_client_failures();
	test_rank_leaving_fails_fast();
	return done_testing();
}
