/* SPDX-License-Identifier: GPL-2.0-or-later */
/* liveness.c: the glue of lib/failure/liveness.h: a node that died or hangs
 * is named in seconds, and the step ends without waiting for slurmctld.
 *
 *   slurmstepd, user_init (a step whose failures srun hears): a socket and
 *     one thread that answers srun's PING with ALIVE; a HELLO to srun,
 *     resent by a second thread until srun's ACK (bounded, with jitter),
 *     whose source the socket is then connected to
 *   slurmstepd, exit: both threads stopped, BYE from the socket
 *   srun: the report channel's thread (failure.c) hands HELLO, ALIVE and
 *     BYE here (each HELLO taken is acknowledged); the first failure report, or a rank's ask after a collective
 *     failed (hang.c), starts one checker thread: PING to every node, again
 *     every RDZV_LIVE_RESEND_MS to those that have not answered, for
 *     RDZV_LIVE_WAIT_MS. Every node answered: nothing more (the failure is
 *     the rank's own, named at srun's exit as before). Some did not: they
 *     are the first cause: srun says so at once, signals the step
 *     (SIGKILL, through slurmctld, so the living nodes end their tasks),
 *     completes the job when srun made it for this step, and exits 1,
 *     rather than wait for tasks on a node that cannot end them. When the
 *     hang diagnosis waits for this check (rdzv_live_srun_wait, hang.c),
 *     it asks only the living nodes, and the signal and the exit wait for
 *     it, RDZV_LIVE_HOLD_MS at most (issue 49). */
#define _GNU_SOURCE 1
#include "config.h"
#include "plugin.h"
#include "channel.h"
#include "failure.h"
#include "liveness.h"
#include "slurmctld.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

/* ---------------------------------------------------------------- srun */

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int on, started, stopping;
	int ended;  /* the check ended: nsilent nodes did not answer */
	int held;   /* the hang diagnosis runs on the living nodes: the exit waits */
	int waiting; /* the hang diagnosis waits for the check's end */
	size_t nsilent;
	char *silent; /* their names, comma separated (NULL: none, or too many) */
	struct rdzv_listener *l;
	int (*first)(struct rdzv_failure *f); /* failure.c's first report */
	struct rdzv_live live;
	pthread_t th;
	int64_t at_ms;
} ls = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

void rdzv_live_srun_start(struct rdzv_listener *l, uint32_t nnodes,
                          int (*first)(struct rdzv_failure *f))
{
	if (nnodes < 2 || rdzv_live_init(&ls.live, nnodes, rdzv_now_ms()) < 0)
		return; /* one node: its own failures are never another's */
	ls.l = l;
	ls.first = first;
	ls.on = 1;
}

void rdzv_live_srun_dgram(const char *buf, size_t n, const struct sockaddr *from, socklen_t len)
{
	struct rdzv_live_msg m;
	char out[RDZV_LIVE_DGRAM_MAX];
	int taken;

	if (!ls.on || rdzv_live_decode(buf, n, &m) < 0 || m.job != ls.l->addr.job
	    || m.step != ls.l->addr.step || m.nonce != ls.l->addr.nonce)
		return;
	pthread_mutex_lock(&ls.mu);
	taken = rdzv_live_take(&ls.live, &m, from, len, rdzv_now_ms());
	if (taken > 0)
		pthread_cond_broadcast(&ls.cv);
	pthread_mutex_unlock(&ls.mu);
	/* Every HELLO taken, a repeat too (the node missed the last ACK),
	 * is acknowledged: the node stops resending. */
	if (taken >= 0 && m.kind == RDZV_LIVE_HELLO) {
		m.kind = RDZV_LIVE_ACK;
		if (rdzv_live_encode(&m, out, sizeof(out)) == 0)
			rdzv_listener_reply(ls.l, out, strlen(out), from, len);
	}
}

static void *checker(void *arg)
{
	uint32_t *ids = calloc(ls.live.n, sizeof(*ids));
	char verdict[RDZV_HOST_MAX * 9 + 256], then[RDZV_FAILURE_DGRAM_MAX + 64];
	struct rdzv_live_check c = { &ls.mu, &ls.cv, &ls.stopping, ls.l->sock, ls.l->addr.job,
		                     ls.l->addr.step, ls.l->addr.nonce };
	struct rdzv_failure first;
	size_t silent;

	(void)arg;
	if (!ids)
		return NULL;
	silent = rdzv_live_run_check(&ls.live, &c, 1, RDZV_LIVE_WAIT_MS, ids);
	pthread_mutex_lock(&ls.mu);
	if (silent == 0 || ls.stopping
	    || rdzv_live_verdict(&ls.live, ids, silent, ls.at_ms, verdict, sizeof(verdict)) < 0) {
		ls.ended = 1;
		pthread_cond_broadcast(&ls.cv); /* the hang diagnosis asks every node */
		pthread_mutex_unlock(&ls.mu);
		free(ids);
		return NULL;
	}
	/* The silent nodes' names for the hang diagnosis (srun -x): bounded
	 * by what one argument may hold. */
	{
		size_t room = (size_t)silent * RDZV_HOST_MAX + 1;

		if (room <= 128 * 1024 && (ls.silent = malloc(room))
		    && rdzv_live_names(&ls.live, ids, silent, ls.silent, room) <= 0) {
			free(ls.silent);
			ls.silent = NULL;
		}
	}
	ls.nsilent = silent;
	ls.ended = 1;
	ls.held = ls.waiting > 0; /* set here: the waiter may not run before the exit */
	pthread_cond_broadcast(&ls.cv);
	pthread_mutex_unlock(&ls.mu);
	then[0] = '\0';
	/* The first report failure.c kept: here, its consequence. */
	if (ls.first && ls.first(&first) && rdzv_failure_format(&first, 0, then, sizeof(then)) == 0
	    && strncmp(then, RDZV_TAG ": ", strlen(RDZV_TAG) + 2) == 0)
		memmove(then, then + strlen(RDZV_TAG) + 2, strlen(then) - strlen(RDZV_TAG) - 1);
	fprintf(stderr, RDZV_TAG ": %s; the step was stopped%s%s%s\n", verdict,
	        then[0] ? " (then " : "", then, then[0] ? ": a consequence)" : "");
	fflush(stderr);
	/* The hang diagnosis, asking the living nodes, shows where their
	 * ranks are before they are signalled (bounded). */
	pthread_mutex_lock(&ls.mu);
	if (ls.held) {
		struct timespec until;

		rdzv_realtime_in(&until, RDZV_LIVE_HOLD_MS);
		while (ls.held && !ls.stopping
		       && pthread_cond_timedwait(&ls.cv, &ls.mu, &until) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&ls.mu);
	/* The living nodes end their tasks; srun, which would wait for the
	 * silent nodes' tasks until slurmctld gives them up (SlurmdTimeout),
	 * exits now. */
	(void)rdzv_slurm_kill_step(ls.l->addr.job, ls.l->addr.step, SIGKILL);
	if (rdzv.srun_allocates)
		(void)rdzv_slurm_complete_job(ls.l->addr.job);
	free(ids);
	_exit(1);
}

void rdzv_live_srun_check(void)
{
	if (!ls.on)
		return;
	pthread_mutex_lock(&ls.mu);
	if (!ls.started && !ls.stopping) {
		ls.at_ms = rdzv_now_ms();
		if (pthread_create(&ls.th, NULL, checker, NULL) == 0)
			ls.started = 1;
	}
	pthread_mutex_unlock(&ls.mu);
}

int rdzv_live_srun_wait(long wait_ms, char *silent, size_t len)
{
	int n = 0;

	if (len)
		silent[0] = '\0';
	if (!ls.on)
		return 0;
	pthread_mutex_lock(&ls.mu);
	if (ls.started) {
		struct timespec until;

		rdzv_realtime_in(&until, wait_ms);
		ls.waiting++;
		while (!ls.ended && !ls.stopping
		       && pthread_cond_timedwait(&ls.cv, &ls.mu, &until) != ETIMEDOUT)
			;
		ls.waiting--;
		if (ls.ended && ls.nsilent) {
			n = ls.nsilent > INT32_MAX ? INT32_MAX : (int)ls.nsilent;
			if (ls.silent && strlen(ls.silent) < len)
				memcpy(silent, ls.silent, strlen(ls.silent) + 1);
			ls.held = 1;
		}
	}
	pthread_mutex_unlock(&ls.mu);
	return n;
}

void rdzv_live_srun_release(void)
{
	if (!ls.on)
		return;
	pthread_mutex_lock(&ls.mu);
	ls.held = 0;
	pthread_cond_broadcast(&ls.cv);
	pthread_mutex_unlock(&ls.mu);
}

void rdzv_live_srun_stop(void)
{
	int started;

	if (!ls.on)
		return;
	pthread_mutex_lock(&ls.mu);
	ls.stopping = 1;
	started = ls.started;
	pthread_cond_broadcast(&ls.cv);
	pthread_mutex_unlock(&ls.mu);
	if (started)
		pthread_join(ls.th, NULL);
	rdzv_live_free(&ls.live);
	free(ls.silent);
	ls.silent = NULL;
	ls.on = ls.started = ls.ended = ls.held = 0;
	ls.nsilent = 0;
}

/* ---------------------------------------------------------------- node */

static struct {
	struct rdzv_listener l;
	int on;
	uint32_t job, step, node_id;
	uint64_t nonce;
	struct rdzv_channel_peer srun; /* as resolved from SLURM_SRUN_COMM_HOST */
	struct rdzv_live_hello hello;   /* resent until srun's ACK */
} ln = { .l = { .sock = -1, .stop = { -1, -1 } } };

/* srun's datagrams, checked for the step and nonce; once srun's first ACK
 * came, the socket is connected to its address and port, and only srun's
 * datagrams reach here. */
static void on_ping(struct rdzv_listener *l, const char *buf, size_t n, const struct sockaddr *from,
                    socklen_t len, void *ctx)
{
	struct rdzv_live_msg m;
	char out[RDZV_LIVE_DGRAM_MAX];

	(void)ctx;
	if (rdzv_live_decode(buf, n, &m) < 0 || m.job != ln.job || m.step != ln.step
	    || m.nonce != ln.nonce)
		return;
	if (m.kind == RDZV_LIVE_ACK && m.node_id == ln.node_id
	    && rdzv_live_hello_acked(&ln.hello, from, len) < 0)
		slurm_verbose(RDZV_TAG ": liveness: cannot connect to srun's address: %s",
		              strerror(errno));
	if (m.kind != RDZV_LIVE_PING)
		return;
	m.kind = RDZV_LIVE_ALIVE;
	m.node_id = ln.node_id;
	if (rdzv_live_encode(&m, out, sizeof(out)) == 0)
		rdzv_listener_reply(l, out, strlen(out), from, len);
}

static const struct rdzv_listener_ops ping_ops = { RDZV_LIVE_DGRAM_MAX, on_ping, NULL };

void rdzv_live_node_start(uint32_t job, uint32_t step, uint64_t nonce, uint32_t node_id,
                          const char *node, const struct rdzv_channel_peer *srun)
{
	struct rdzv_live_msg m;
	char buf[RDZV_LIVE_DGRAM_MAX];
	int resent;

	if (!srun->len || !node || !node[0])
		return;
	memset(&m, 0, sizeof(m));
	m.kind = RDZV_LIVE_HELLO;
	m.job = job;
	m.step = step;
	m.nonce = nonce;
	m.node_id = node_id;
	snprintf(m.node, sizeof(m.node), "%s", node);
	if (rdzv_live_encode(&m, buf, sizeof(buf)) < 0)
		return;
	ln.job = job;
	ln.step = step;
	ln.nonce = nonce;
	ln.node_id = node_id;
	ln.srun = *srun;
	if (rdzv_listener_open(&ln.l, job, step) < 0) {
		slurm_verbose(RDZV_TAG ": liveness: no socket for srun's asks: %s", strerror(errno));
		return;
	}
	/* The HELLO (its state ready) before the thread that takes srun's
	 * ACK; an ACK that comes first waits on the socket. The jitter
	 * differs on every node of the launch. */
	resent = rdzv_live_hello_start(&ln.hello, ln.l.sock, buf, &srun->to, srun->len,
	                               (uint32_t)(nonce ^ (nonce >> 32)) ^ (node_id * 2654435761u));
	if (rdzv_listener_start(&ln.l, &ping_ops, NULL) < 0) {
		slurm_verbose(RDZV_TAG ": liveness: no thread for srun's asks");
		(void)rdzv_live_hello_stop(&ln.hello);
		rdzv_listener_close(&ln.l);
		return;
	}
	ln.on = 1;
	if (resent < 0)
		slurm_verbose(RDZV_TAG ": liveness: HELLO sent once, no thread to resend it");
}

void rdzv_live_node_stop(void)
{
	struct rdzv_live_msg m;
	char buf[RDZV_LIVE_DGRAM_MAX];

	if (!ln.on)
		return;
	(void)rdzv_live_hello_stop(&ln.hello);
	/* This node's part of the step ended: it stops answering, and srun
	 * must not take that for a death. From the responder's socket: srun
	 * takes a BYE only from the node's address. */
	memset(&m, 0, sizeof(m));
	m.kind = RDZV_LIVE_BYE;
	m.job = ln.job;
	m.step = ln.step;
	m.nonce = ln.nonce;
	m.node_id = ln.node_id;
	if (rdzv_live_encode(&m, buf, sizeof(buf)) == 0)
		(void)rdzv_live_sendto(ln.l.sock, buf, strlen(buf), &ln.srun.to, ln.srun.len);
	rdzv_listener_close(&ln.l);
	ln.on = 0;
}
