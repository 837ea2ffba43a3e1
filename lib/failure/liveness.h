/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/failure/: how failures travel and are judged: a failed rank's report,
 * liveness, the collective grace, hang dumps, a GPU fault's verdict. Uses
 * lib/modes/, lib/step/, lib/gpu/, lib/common/. */
/* liveness.h: is every node of the step still there? (issue 38)
 *
 * Slurm learns that a node died only after SlurmdTimeout (300 s by
 * default), and meanwhile srun waits for its tasks; a node whose processes
 * are stopped (a hung kernel, a stuck driver) is never noticed. When a rank
 * fails or a collective times out, srun asks every node of the step, and
 * a node that does not answer within RDZV_LIVE_WAIT_MS is the failure's
 * first cause: the ranks that failed on the others only lost their peer.
 *
 * No periodic traffic: each node's slurmstepd says HELLO once, as the
 * step's tasks start, from a socket whose thread answers PING with ALIVE
 * (so a node whose slurmstepd is dead or stopped cannot answer); srun asks
 * only after a failure, and asks again only the nodes that have not
 * answered, every RDZV_LIVE_RESEND_MS. The datagrams travel on the failure
 * report's channel (channel.h: srun's port, the step's nonce):
 *   node -> srun   RDZVL1 HELLO JOB.STEP NONCE NODEID NODE
 *   srun -> node   RDZVL1 PING JOB.STEP NONCE SEQ
 *   node -> srun   RDZVL1 ALIVE JOB.STEP NONCE NODEID SEQ
 *   node -> srun   RDZVL1 BYE JOB.STEP NONCE NODEID   (its part of the step
 *                  ended: its slurmstepd exits and stops answering)
 *   srun -> node   RDZVL1 ACK JOB.STEP NONCE NODEID  (its HELLO was taken)
 * srun learns each node's address from its HELLO's source: no name is
 * resolved. The first HELLO of a node id fixes its address: srun takes
 * that node's ALIVE only from that address and port, its BYE only from
 * that address (releases before ACK send BYE from a socket of their own),
 * so a datagram from anyone else never answers for a node (issue 45).
 * A HELLO is resent until srun's ACK (rdzv_live_hello_delay: a bounded
 * count, growing delays with jitter), so neither a 32k-node launch whose
 * HELLOs overflow srun's socket buffer nor a flood at srun's port leaves a
 * node unknown. Releases before ACK ignore it (their decoder refuses the
 * kind) and take a repeated HELLO as a repeat: the wire stays RDZVL1.
 * Once srun's ACK came, the node's socket is connect()ed to the address
 * and port it came from, so the kernel drops a datagram from anyone else
 * before the responder's thread reads it. Plain C, no SPANK: tests/unit/test-liveness.c, fuzz-liveness,
 * bench/bench-liveness (1k-32k nodes). */
#ifndef RDZV_LIVENESS_H
#define RDZV_LIVENESS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "master.h" /* RDZV_HOST_MAX */

#define RDZV_LIVE_WAIT_MS 3000
#define RDZV_LIVE_RESEND_MS 500
#define RDZV_LIVE_DGRAM_MAX (RDZV_HOST_MAX + 96)
/* PINGs go out RDZV_LIVE_WINDOW at a time, each window sent when half of
 * the last has answered (or RDZV_LIVE_WINDOW_MS passed): the answers of a
 * large step never arrive at once, which srun's socket buffer (an
 * unprivileged process cannot raise it past net.core.rmem_max, 208 KiB by
 * default: some 270 datagrams) would drop. */
#define RDZV_LIVE_WINDOW 128
#define RDZV_LIVE_WINDOW_MS 20

enum rdzv_live_kind {
	RDZV_LIVE_HELLO,
	RDZV_LIVE_PING,
	RDZV_LIVE_ALIVE,
	RDZV_LIVE_BYE,
	RDZV_LIVE_ACK,
};

/* A node's HELLO: sent at once, then again after rdzv_live_hello_delay(1),
 * (2), ... until srun's ACK, RDZV_LIVE_HELLO_TRIES in all: the delays
 * double from RDZV_LIVE_HELLO_FIRST_MS up to RDZV_LIVE_HELLO_CAP_MS, each
 * drawn in [d/2, 3d/2) so that the nodes of one launch do not resend
 * together; all the tries of a node fit in RDZV_LIVE_HELLO_MAX_MS. */
#define RDZV_LIVE_HELLO_TRIES 12
#define RDZV_LIVE_HELLO_FIRST_MS 200
#define RDZV_LIVE_HELLO_CAP_MS 2000
#define RDZV_LIVE_HELLO_MAX_MS 30000
/* The wait before try `attempt` (1 .. RDZV_LIVE_HELLO_TRIES - 1), rnd a
 * random number; -1 when there is no such try. */
long rdzv_live_hello_delay(unsigned attempt, uint32_t rnd);

/* A node's HELLO and its resends: sent at once from sock to srun's
 * address (to, as the node resolved it), then by a thread of its own on
 * rdzv_live_hello_delay's schedule until rdzv_live_hello_acked, the tries
 * spent or rdzv_live_hello_stop. seed: different on each node of a step
 * (the jitter's). */
struct rdzv_live_hello {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int sock;
	int acked, stopping, started;
	unsigned sent; /* the HELLOs sent, the first included */
	uint32_t x;    /* the jitter's state */
	pthread_t th;
	struct sockaddr_storage to;
	socklen_t tolen;
	char msg[RDZV_LIVE_DGRAM_MAX];
};
/* 0 (the thread started, whatever became of the first send), or -1 (no
 * resends; rdzv_live_hello_acked and _stop may still be called). */
int rdzv_live_hello_start(struct rdzv_live_hello *h, int sock, const char *msg,
                          const struct sockaddr_storage *to, socklen_t tolen, uint32_t seed);
/* srun's ACK (its step, nonce and node id checked by the caller), from
 * `from`: the resends stop and, the first time, sock is connected to that
 * address and port, the one srun's PINGs come from (not always the
 * address the node resolved: a host of several addresses answers from
 * the one its route to the node picks). From then on the kernel drops
 * every datagram of anyone else before the responder reads it. 1 when it
 * connected sock now, 0 when it was already, -1 when connect failed. */
int rdzv_live_hello_acked(struct rdzv_live_hello *h, const struct sockaddr *from, socklen_t len);
/* The thread stopped and joined (an ACK after it connects nothing).
 * Returns how many HELLOs were sent. */
unsigned rdzv_live_hello_stop(struct rdzv_live_hello *h);

struct rdzv_live_msg {
	enum rdzv_live_kind kind;
	uint32_t job, step;
	uint64_t nonce;
	uint32_t node_id; /* HELLO, ALIVE, BYE, ACK */
	uint32_t seq;     /* PING, ALIVE */
	char node[RDZV_HOST_MAX]; /* HELLO */
};

/* Into buf; -1 when it does not fit or a field is not valid. */
int rdzv_live_encode(const struct rdzv_live_msg *m, char *buf, size_t len);
/* Strict: every field, nothing more; a node name of host-name characters.
 * 0 or -1. */
int rdzv_live_decode(const char *buf, size_t n, struct rdzv_live_msg *m);
/* Is this datagram one of the channel's (its first word)? */
int rdzv_live_is(const char *buf, size_t n);

/* srun's view of the step's nodes. */
struct rdzv_live_node {
	struct sockaddr_storage addr;
	socklen_t len;         /* 0: never heard from */
	int64_t heard_ms;      /* the last HELLO or ALIVE (monotonic ms) */
	uint32_t seq;          /* the last check it answered; UINT32_MAX: it said BYE */
	char name[RDZV_HOST_MAX];
};

struct rdzv_live {
	uint32_t n;            /* the step's nodes */
	struct rdzv_live_node *v;
	uint64_t answers;      /* ALIVEs taken that answered a newer check */
	int64_t start_ms;      /* when srun started listening */
};

int rdzv_live_init(struct rdzv_live *l, uint32_t nnodes, int64_t now_ms);
void rdzv_live_free(struct rdzv_live *l);

/* A node's HELLO, ALIVE or BYE, already checked against the step and
 * nonce: its address (HELLO), its answer to check seq (ALIVE), its end
 * (BYE: every later check counts it as answered). 1 when it changed what
 * is known, 0 when not (a repeat, to be acknowledged again for a HELLO),
 * -1 when refused: a node id out of range, a PING or ACK, a HELLO for a
 * known node from another address or with another name, an ALIVE not
 * from the node's address and port, a BYE not from its address. */
int rdzv_live_take(struct rdzv_live *l, const struct rdzv_live_msg *m, const struct sockaddr *from,
                   socklen_t fromlen, int64_t now_ms);

/* The nodes that said HELLO and have neither answered check seq nor said
 * BYE: their ids into ids[max]; returns how many there are (all of them,
 * even past max). A node never heard from is not counted: it may not have
 * started yet when another failed (a node that died before its HELLO is
 * Slurm's launch failure). */
size_t rdzv_live_silent(const struct rdzv_live *l, uint32_t seq, uint32_t *ids, size_t max);

/* One line naming the silent nodes, the first cause:
 *   "node n2 does not answer (dead or hung: last heard 4.2 s before the
 *    failure)", "nodes n2, n5 do not answer (...)", eight names at most
 *   ("... and 3 more"). ids from rdzv_live_silent, at_ms when the failure
 * came. Returns 0, or -1 when buf is too small or ids is empty. */
int rdzv_live_verdict(const struct rdzv_live *l, const uint32_t *ids, size_t nids, int64_t at_ms,
                      char *buf, size_t len);

/* The silent nodes' names (those heard from: a node never heard from has
 * none), comma separated, as srun -w and -x take them, into buf. Returns
 * how many, or -1 (buf emptied) when they do not fit. */
int rdzv_live_names(const struct rdzv_live *l, const uint32_t *ids, size_t nids, char *buf,
                    size_t len);

/* The check: srun's thread pings every node that said HELLO and has not
 * answered seq (sent from sock, the channel's socket), again every
 * RDZV_LIVE_RESEND_MS, until all answered, *stopping is set or wait_ms
 * have passed; the channel's thread meanwhile takes the ALIVEs into l
 * under *mu and signals *cv. Called without *mu held; returns with it
 * released: how many nodes are still silent, their ids in ids[l->n]. */
struct rdzv_live_check {
	pthread_mutex_t *mu;
	pthread_cond_t *cv;
	const int *stopping;
	int sock;
	uint32_t job, step;
	uint64_t nonce;
};
size_t rdzv_live_run_check(struct rdzv_live *l, const struct rdzv_live_check *c, uint32_t seq,
                           long wait_ms, uint32_t *ids);

/* One datagram from sock (a socket of channel.c's, dual-stack or IPv4)
 * to an address of either family. 0, or -1 with errno. */
int rdzv_live_sendto(int sock, const char *buf, size_t n, const struct sockaddr_storage *to,
                     socklen_t tolen);



#endif
