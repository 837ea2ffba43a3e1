/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/step/: the step's plan: host lists, task layouts, node order,
 * MASTER_ADDR and the port, rank 0, heterogeneous steps, srun's command line
 * and what it hands the nodes, the interface to rank 0, the step's datagram
 * channel. Uses lib/common/. */
/* channel.h: the step's datagram channels between srun and its nodes, written
 * once. srun listens on a port of the kernel's, marks the step's datagrams
 * with a random nonce, and hands the nodes "JOB.STEP:PORT:NONCE" in a
 * variable; a node resolves srun's host (SLURM_SRUN_COMM_HOST) once and sends
 * its datagrams there. Three channels use it, each with its own messages:
 * a failed rank's report (failure.h, RDZV_STEP_REPORT), a rank's hang ask
 * (hang.h, RDZV_HANG_ASK) and a node's NVLink domain (domain.h,
 * RDZV_DOMAIN_ASK). Plain C: no SPANK, so unit tests and fuzzers reach it. */
#ifndef RDZV_CHANNEL_H
#define RDZV_CHANNEL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* A datagram socket on any address (IPv6 and IPv4, else IPv4), a port of
 * the kernel's. Returns the socket (non-blocking, close-on-exec) and *port,
 * or -1. */
int rdzv_dgram_listen(uint16_t *port);

/* A random nonce for a step's datagrams (/dev/urandom, else pid and time). */
uint64_t rdzv_make_nonce(void);

/* Exactly n (1-16) lower-case hex digits at s, as every channel writes its
 * nonce. 0 with *v, or -1. */
int rdzv_hex64(const char *s, size_t n, uint64_t *v);

/* ---- the variable: "JOB.STEP:PORT:NONCE" (NONCE: 16 lower-case hex) ---- */

struct rdzv_channel_addr {
	uint32_t job, step;
	uint16_t port; /* 0: srun has no socket (failure.h's report only) */
	uint64_t nonce;
};

#define RDZV_CHANNEL_VAR_MAX 64

/* Into buf; -1 (never cut) when it does not fit. */
int rdzv_channel_var_format(const struct rdzv_channel_addr *a, char *buf, size_t len);

/* Strict: decimal ids and port without signs or spaces, a port up to 65535,
 * the nonce's 16 digits. *rest gets what follows the nonce; with rest NULL
 * nothing may follow. 0 or -1 (a of no use then). */
int rdzv_channel_var_parse(const char *s, struct rdzv_channel_addr *a, const char **rest);

/* ---- the node's side: srun's address, resolved once ---- */

struct rdzv_channel_peer {
	struct sockaddr_storage to;
	socklen_t len; /* 0: not resolved */
};

/* host (a name or an address) and port. 0, or -1 when it does not resolve. */
int rdzv_channel_peer_resolve(const char *host, uint16_t port, struct rdzv_channel_peer *p);

/* One datagram to p from a socket of its own (so any thread or process may
 * send). 0, or -1 with errno. */
int rdzv_channel_send(const struct rdzv_channel_peer *p, const char *buf, size_t n);

/* Sends msg to p and again every resend_ms until answer() takes one of the
 * datagrams that come back (returns 0 or more; less: not this ask's) or
 * wait_ms have passed. Answers are read into buf[len] (a longer one is cut
 * to len). Returns answer()'s value, -2 when none came in time, or -1 with
 * errno when there is no socket. */
int rdzv_channel_ask(const struct rdzv_channel_peer *p, const char *msg, long wait_ms,
                     long resend_ms, char *buf, size_t len,
                     int (*answer)(const char *buf, size_t n, void *ctx), void *ctx);

/* ---- srun's side: one listener per channel ---- */

struct rdzv_listener;

/* What a channel does with its datagrams, on the listener's thread. */
struct rdzv_listener_ops {
	size_t max; /* the longest datagram of the channel (longer ones are cut) */
	/* One datagram, from any sender on the network: the handler checks
	 * the step and nonce. */
	void (*dgram)(struct rdzv_listener *l, const char *buf, size_t n,
	              const struct sockaddr *from, socklen_t fromlen, void *ctx);
	/* Every datagram waiting has been handed to dgram (NULL: nothing). */
	void (*drained)(struct rdzv_listener *l, void *ctx);
};

struct rdzv_listener {
	int sock, stop[2];
	int started;
	pthread_t th;
	struct rdzv_channel_addr addr; /* job, step, port and nonce */
	const struct rdzv_listener_ops *ops;
	void *ctx;
};

/* No socket, no thread: what close() leaves, safe to close again. */
void rdzv_listener_init(struct rdzv_listener *l);

/* The step's nonce, a socket and the thread's stop pipe; addr is complete
 * afterwards (job and step as given). 0, or -1 with errno. */
int rdzv_listener_open(struct rdzv_listener *l, uint32_t job, uint32_t step);

/* The thread: ops->dgram for each datagram until rdzv_listener_close. The
 * thread takes none of the process's signals. 0, or -1. */
int rdzv_listener_start(struct rdzv_listener *l, const struct rdzv_listener_ops *ops,
                        void *ctx);

/* A datagram back to a sender (an answer). */
void rdzv_listener_reply(struct rdzv_listener *l, const char *buf, size_t n,
                         const struct sockaddr *to, socklen_t tolen);

/* Readable when the listener is being closed: a handler that waits on
 * something else polls it too. */
int rdzv_listener_stop_fd(const struct rdzv_listener *l);

/* The thread stopped and joined, the socket and pipe closed. */
void rdzv_listener_close(struct rdzv_listener *l);

#endif
