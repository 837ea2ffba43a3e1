/* SPDX-License-Identifier: GPL-2.0-or-later */
/* failure.c: the glue of "a failed rank stops the step"; the
 * logic and why it is right are in lib/failure/failure.h.
 *
 *   srun, slurm_spank_init:   SLURM_KILL_BAD_EXIT=1 when the step will have
 *                             a mode and nobody chose otherwise
 *   srun, local_user_init:    the variable is taken back out of srun's
 *                             environment (srun has read it; tasks and
 *                             nested sruns must not inherit it), the guess
 *                             checked, a channel (channel.h) opened for the
 *                             nodes' reports (RDZV_STEP_REPORT)
 *   slurmstepd, user_init:    the report address read, the variable removed
 *   slurmstepd, task_exit:    the node's first bad exit sent to srun, after
 *                             what the GPU drivers reported since the step
 *                             started, once (gpuverdict.h)
 *   slurmstepd, task_post_fork (torchrun mode): a thread watches the agent's
 *                             workers; the first that fails is sent to srun
 *                             and an agent still alive 1 s later is killed
 *                             (failure.h, RDZV_AGENT_GRACE_MS)
 *   slurmstepd, exit:         the watcher stopped and joined
 *   srun, exit:               the first report that arrived, one line */
#include "config.h"
#include "channel.h"
#include "handover.h"
#include "plugin.h"
#include "hooks.h"
#include "failure.h"
#include "gpuverdict.h"
#include "liveness.h"
#include "srunargs.h"

#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

static struct {
	/* srun */
	int set_by_us;                     /* we exported SLURM_KILL_BAD_EXIT=1 */
	const struct rdzv_mode *predicted; /* the mode srun was expected to give */
	int stops;                         /* kill-on-bad-exit in effect, as known */
	struct rdzv_listener reports;      /* the nodes' reports, HELLO and ALIVE (liveness.c) */
	pthread_mutex_t mu;                /* first, have_first: the listener's thread */
	struct rdzv_failure first;         /* the first report that arrived */
	int have_first;
	struct rdzv_gpu_report gpu;        /* the worst GPU fault a node reported */
	int have_gpu;
	/* slurmstepd */
	int armed, stops_remote;
	atomic_int sent;
	uint64_t nonce;
	uint64_t start_usec;               /* the step's start, CLOCK_MONOTONIC */
	struct rdzv_gpu_cursor base;       /* the boot and AMD's RAS counts then */
	struct rdzv_channel_peer srun;
} fl = { .reports = { .sock = -1, .stop = { -1, -1 } }, .mu = PTHREAD_MUTEX_INITIALIZER };

/* A node's GPU fault (gpuverdict.h): the worst kept. Returns 1 when buf
 * was one. */
static int take_gpu(const char *buf, size_t n, const struct rdzv_channel_addr *a)
{
	struct rdzv_gpu_report r;

	if (rdzv_gpu_report_decode(buf, n, &r) < 0)
		return 0;
	if (r.job_id != a->job || r.step_id != a->step || r.nonce != a->nonce)
		return 1;
	pthread_mutex_lock(&fl.mu);
	if (!fl.have_gpu || rdzv_gpu_report_worse(&r, &fl.gpu)) {
		fl.gpu = r;
		fl.have_gpu = 1;
	}
	pthread_mutex_unlock(&fl.mu);
	return 1;
}

/* srun's listener thread: a node's failure report (the first is kept and
 * starts the liveness check), or its HELLO or ALIVE. */
static void on_report(struct rdzv_listener *l, const char *buf, size_t n,
                      const struct sockaddr *from, socklen_t fromlen, void *ctx)
{
	const struct rdzv_channel_addr *a = &l->addr;
	struct rdzv_failure f;

	(void)ctx;
	if (rdzv_live_is(buf, n)) {
		rdzv_live_srun_dgram(buf, n, from, fromlen);
		return;
	}
	if (take_gpu(buf, n, a))
		return;
	if (rdzv_failure_decode(buf, n, &f) < 0 || f.job_id != a->job || f.step_id != a->step
	    || f.nonce != a->nonce)
		return;
	pthread_mutex_lock(&fl.mu);
	if (!fl.have_first) {
		fl.first = f;
		fl.have_first = 1;
	}
	pthread_mutex_unlock(&fl.mu);
	rdzv_live_srun_check();
}

/* The first failure report that arrived (1, into *f), or 0: handed to
 * liveness.c, which names it as a silent node's consequence. */
static int srun_first(struct rdzv_failure *f)
{
	int have;

	pthread_mutex_lock(&fl.mu);
	if ((have = fl.have_first))
		*f = fl.first;
	pthread_mutex_unlock(&fl.mu);
	return have;
}

int rdzv_failure_srun_stopping(void)
{
	int have;

	pthread_mutex_lock(&fl.mu);
	have = fl.have_first && fl.stops;
	pthread_mutex_unlock(&fl.mu);
	return have;
}

static const struct rdzv_listener_ops report_ops = { RDZV_FAILURE_DGRAM_MAX, on_report, NULL };

void rdzv_failure_srun_init(int ac, char **av)
{
	struct rdzv_kbe_in in;
	enum rdzv_kbe_action a;

	memset(&in, 0, sizeof(in));
	in.arg_kbe = -1;
	if (ac < 0 || rdzv_srun_arg_failure(ac, av, &in.arg_mode, &in.arg_kbe) < 0)
		in.arg_mode = NULL; /* srun refuses the line itself */
	in.spank_env = getenv(RDZV_SPANK_OPT_ENV);
	in.rdzv_mode = getenv("RDZV_MODE");
	in.env_fallback = rdzv.conf.env_fallback;
	in.site = rdzv.conf.mode;
	in.kbe_env = getenv(RDZV_KBE_VAR);
	in.conf_kbe = rdzv.conf.kill_on_bad_exit;
	a = rdzv_kbe_decide(&in, &fl.predicted);
	if (a == RDZV_KBE_SET && setenv(RDZV_KBE_VAR, "1", 1) == 0) {
		fl.set_by_us = 1;
		fl.stops = 1;
	} else {
		fl.stops = rdzv_kbe_effective(in.arg_kbe, in.kbe_env);
	}
}

void rdzv_failure_srun_start(const struct rdzv_srun_step *s)
{
	const struct rdzv_mode *mode = s->mode;
	int has = mode && mode->fill, guessed = fl.predicted && fl.predicted->fill;
	char text[96];

	/* srun has read it (before its command line): the step's tasks get
	 * srun's environment after this hook and must not inherit it. */
	if (fl.set_by_us)
		unsetenv(RDZV_KBE_VAR);
	rdzv_handover_clear(&rdzv_env_process, RDZV_HO_REPORT); /* an outer step's */
	if (has && !guessed && rdzv.conf.kill_on_bad_exit && !getenv(RDZV_KBE_VAR))
		slurm_spank_log(RDZV_TAG ": warning: --rdzv=%s was not visible before srun read its "
		                "options: a failed rank will not stop this step; add -K "
		                "(--kill-on-bad-exit)", mode->name);
	else if (!has && fl.set_by_us)
		slurm_spank_log(RDZV_TAG ": warning: this step has no rendezvous mode, yet srun "
		                "was told to stop it on a failed task (kill-on-bad-exit); add -K0 "
		                "to keep it running");
	if (!has && !fl.set_by_us)
		return;
	if (!s->has_ids)
		return;
	/* Without a mode no node reports: the address only carries the flags. */
	if (has && rdzv_listener_open(&fl.reports, s->job, s->step) < 0) {
		slurm_spank_log(RDZV_TAG ": warning: cannot open the socket the nodes report "
		                "failures to: a failed rank will not be named");
		fl.reports.addr.port = 0;
	} else if (has && rdzv_listener_start(&fl.reports, &report_ops, NULL) == 0) {
		/* A failure's first cause: a node that no longer answers. */
		if (fl.stops)
			rdzv_live_srun_start(&fl.reports, s->has_counts ? s->nnodes : 0, srun_first);
	}
	if (!has) {
		fl.reports.addr.job = s->job;
		fl.reports.addr.step = s->step;
		fl.reports.addr.nonce = rdzv_make_nonce();
	}
	/* srun copied its environment, SLURM_KILL_BAD_EXIT=1 included, into
	 * the step's before this hook: the flag tells slurmstepd to remove it. */
	if (rdzv_report_format(s->job, s->step, fl.reports.addr.port, fl.reports.addr.nonce,
	                       (fl.set_by_us ? RDZV_REPORT_SET : 0) | (fl.stops ? RDZV_REPORT_STOPS : 0), text,
	                       sizeof(text)) < 0
	    || rdzv_handover_put(&rdzv_env_process, RDZV_HO_REPORT, text, NULL, 0) < 0)
		rdzv_listener_close(&fl.reports);
}

void rdzv_failure_srun_stop(const char *verdict, int timed_out, int said)
{
	char buf[RDZV_FAILURE_DGRAM_MAX], line[RDZV_FAILURE_DGRAM_MAX + 128];
	const struct rdzv_channel_addr *a = &fl.reports.addr;
	struct rdzv_failure f;
	const char *what = timed_out ? "a collective timed out" : "a collective failed";
	ssize_t n;

	if (fl.reports.sock < 0) {
		if (verdict && !said)
			fprintf(stderr, RDZV_TAG ": %s: %s\n", what, verdict);
		return;
	}
	rdzv_live_srun_stop();
	/* Without the listener's thread the reports wait on the socket. */
	while (!fl.reports.started && (n = recv(fl.reports.sock, buf, sizeof(buf), 0)) > 0) {
		if (take_gpu(buf, (size_t)n, a))
			continue;
		if (rdzv_failure_decode(buf, (size_t)n, &f) < 0 || f.job_id != a->job
		    || f.step_id != a->step || f.nonce != a->nonce)
			continue;
		fl.first = f;
		fl.have_first = 1;
		break;
	}
	rdzv_listener_close(&fl.reports); /* the thread joined: first is final */
	if (said) /* the step's grace ended it, and said why */
		return;
	if (fl.have_first) {
		f = fl.first;
		/* The GPU fault first: the cause, before its consequence. */
		if (fl.have_gpu && rdzv_gpu_report_format(&fl.gpu, f.rank, line, sizeof(line)) == 0)
			fprintf(stderr, "%s\n", line);
		if (rdzv_failure_format(&f, fl.stops, line, sizeof(line)) == 0) {
			/* After a collective timed out (hang.c): whom the ranks
			 * waited for, not only the first that gave up. */
			if (verdict)
				fprintf(stderr, "%s; %s: %s\n", line, what, verdict);
			else
				fprintf(stderr, "%s\n", line);
			fflush(stderr);
			verdict = NULL;
		}
	}
	if (verdict)
		fprintf(stderr, RDZV_TAG ": %s: %s\n", what, verdict);
}

static uint64_t now_usec(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

/* The node's report address: RDZV_STEP_REPORT's port on srun's host as the
 * nodes reach it (SLURM_SRUN_COMM_HOST, which srun sets for the step). */
void rdzv_failure_user_init(spank_t sp)
{
	char *text = NULL, host[RDZV_HOST_MAX];
	uint32_t job, step;
	uint16_t p;
	int rc, set = 0;

	if (!rdzv.active)
		return;
	fl.start_usec = now_usec();
	rdzv_gpu_cursor_baseline(rdzv.conf.identity_root, &fl.base);
	rc = rdzv_step_take(sp, RDZV_HO_REPORT, RDZV_REPORT_VAR, &text, NULL, 0);
	if (rc == 0)
		return;
	rc = rc < 0 || rdzv_report_parse(text, &job, &step, &p, &fl.nonce, &set) < 0
	     || job != rdzv.step.job_id || step != rdzv.step.step_id ? -1 : 0;
	free(text);
	if (rc < 0)
		return;
	if (set & RDZV_REPORT_SET)
		spank_unsetenv(sp, RDZV_KBE_VAR); /* the plugin's, not the user's */
	fl.stops_remote = (set & RDZV_REPORT_STOPS) != 0;
	if (!rdzv.mode || !rdzv.mode->fill || !p
	    || rdzv_job_getenv(sp, "SLURM_SRUN_COMM_HOST", host, sizeof(host)) <= 0)
		return;
	fl.armed = rdzv_channel_peer_resolve(host, p, &fl.srun) == 0;
	/* srun may ask whether this node is still there (liveness.c): only
	 * when a failure stops the step, and with a node count srun checks. */
	if (fl.armed && fl.stops_remote && rdzv.step.nnodes > 1)
		rdzv_live_node_start(rdzv.step.job_id, rdzv.step.step_id, fl.nonce, rdzv.step.node_id,
		                     rdzv.nodename, &fl.srun);
}

/* The PET_NPROC_PER_NODE torchrun got: the user's, else the mode's rule. */
static uint32_t workers(spank_t sp)
{
	char buf[32];
	uint64_t v;

	if (rdzv_job_getenv(sp, "PET_NPROC_PER_NODE", buf, sizeof(buf)) > 0)
		return rdzv_parse_u64(buf, 1, 1u << 20, &v) == 0 ? (uint32_t)v : 0;
	return rdzv.step.gpus_on_node > 0 ? (uint32_t)rdzv.step.gpus_on_node : 1;
}

/* Sends f to srun: the node's first failure only. */
static void send_failure(struct rdzv_failure *f)
{
	char buf[RDZV_FAILURE_DGRAM_MAX];

	f->job_id = rdzv.step.job_id;
	f->step_id = rdzv.step.step_id;
	f->nonce = fl.nonce;
	snprintf(f->node, sizeof(f->node), "%s", rdzv.nodename[0] ? rdzv.nodename : "?");
	if (rdzv_failure_encode(f, buf, sizeof(buf)) < 0)
		return;
	if (rdzv_channel_send(&fl.srun, buf, strlen(buf)) < 0)
		slurm_verbose(RDZV_TAG ": cannot report rank %u's exit to srun: %s", f->rank,
		              strerror(errno));
}

/* What the GPU drivers reported since the step started, the worst, to
 * srun before the failure (gpuverdict.h): once per node, as root, in the
 * exit path of the first failed task (sp: its rank's map), or in the
 * torchrun watcher's thread for a worker (sp NULL: no rank for the GPU,
 * and nothing kept for the record, which slurmstepd's exit may be writing
 * meanwhile); the kernel log's read is bounded (kmsg.h). */
static void gpu_verdict(spank_t sp, uint32_t failed_rank)
{
	/* The kernel log's path (%n) from slurmd's own name, never the step's
	 * node list, which the client assembled (rule 7); the node as the
	 * user's step names it for srun's line. */
	const char *node = rdzv.nodename[0] ? rdzv.nodename : "";
	const char *self = rdzv.stepd_node;
	struct rdzv_xid_table table = { 0 };
	struct rdzv_gpufault_req req = { 0 };
	char kmsg[RDZV_PATH_MAX], err[RDZV_ERRLEN], buf[RDZV_GPU_DGRAM_MAX];
	struct rdzv_gpu_report r;
	struct rdzv_gpufault g;
	uint32_t global = 0;
	uint64_t now = now_usec();
	int local = -1;

	if (rdzv_xid_table_load(&table, rdzv.conf.xid_table[0] ? rdzv.conf.xid_table
	                                                      : RDZV_XID_TABLE_DEFAULT, err,
	                        sizeof(err)) < 0)
		slurm_verbose(RDZV_TAG ": GPU faults: Xid table: %s", err);
	if (rdzv_path_node(rdzv.conf.kmsg[0] ? rdzv.conf.kmsg : RDZV_KMSG_DEFAULT, self, kmsg,
	                   sizeof(kmsg), err, sizeof(err)) < 0) {
		slurm_verbose(RDZV_TAG ": GPU faults not looked at: kmsg=: %s", err);
		goto out;
	}
	req.root = rdzv.conf.identity_root;
	req.kmsg = kmsg;
	req.table = &table;
	req.cursor = &fl.base;
	req.since_usec = fl.start_usec;
	if (rdzv_gpufault_look(&req, &g) <= 0) {
		if (g.note[0])
			slurm_verbose(RDZV_TAG ": GPU faults: %s", g.note);
		goto out;
	}
	memset(&r, 0, sizeof(r));
	r.job_id = rdzv.step.job_id;
	r.step_id = rdzv.step.step_id;
	r.nonce = fl.nonce;
	snprintf(r.node, sizeof(r.node), "%s", node[0] ? node : "?");
	r.f = g.worst;
	r.gpu = rdzv_bind_pci_gpu(g.worst.pci, &local);
	r.rank = sp && local >= 0
	         && spank_get_item(sp, S_JOB_LOCAL_TO_GLOBAL_ID, (uint32_t)local, &global)
	                    == ESPANK_SUCCESS ? (int64_t)global + rdzv.step.task_offset : -1;
	if (local == -2)
		r.rank = -2; /* not one of the step's GPUs */
	r.before_ms = g.worst.ts_usec && g.worst.ts_usec <= now
	              ? (long)((now - g.worst.ts_usec) / 1000) : -1;
	if (rdzv_gpu_report_format(&r, failed_rank, buf, sizeof(buf)) == 0) {
		slurm_info("%s", buf);
		if (sp)
			rdzv_record_gpu_fault(rdzv_gpu_report_kind(&r), buf);
	}
	if (rdzv_gpu_report_encode(&r, buf, sizeof(buf)) > 0
	    && rdzv_channel_send(&fl.srun, buf, strlen(buf)) < 0)
		slurm_verbose(RDZV_TAG ": cannot report a GPU fault to srun: %s", strerror(errno));
out:
	rdzv_xid_table_free(&table);
}

void rdzv_failure_task_exit(spank_t sp)
{
	struct rdzv_failure f;
	int status = 0;

	if (!fl.armed || atomic_load(&fl.sent)
	    || spank_get_item(sp, S_TASK_EXIT_STATUS, &status) != ESPANK_SUCCESS
	    || !rdzv_failure_is_bad(status))
		return;
	memset(&f, 0, sizeof(f));
	if (spank_get_item(sp, S_TASK_GLOBAL_ID, &f.rank) != ESPANK_SUCCESS)
		return;
	f.rank += rdzv.step.task_offset;
	if (atomic_exchange(&fl.sent, 1))
		return; /* the watcher named a worker first */
	f.status = status;
	/* The node's user_init error: task_init ended the task with it before
	 * its program ran (remote.c), and its stderr may not reach srun. */
	if (rdzv.error[0])
		rdzv_failure_set_reason(&f, rdzv.error);
	f.per_node = (rdzv.mode->flags & RDZV_MODE_ONE_TASK_PER_NODE) != 0;
	f.workers = f.per_node ? workers(sp) : 0;
	gpu_verdict(sp, f.rank);
	send_failure(&f);
}

/* The torchrun watcher (failure.h). Agents: the node's torchrun tasks. */
#define WATCH_AGENTS 8
#define WATCH_WORKERS 256
#define WATCH_TICK_MS 50

struct worker {
	int pid;
	int pidfd;       /* taken before its parent was checked; -1: none */
	int seen_dead;   /* its zombie was seen */
	int has_rank;
	int alive_ticks; /* seen alive without a worker's environment */
	uint32_t rank;
};

struct agent {
	int pid;
	int pidfd;                      /* taken at task_post_fork; -1: none */
	unsigned long long start;       /* its start time then (stat field 22) */
	uint32_t node_rank, workers;    /* the task's global id, PET_NPROC_PER_NODE */
	int done;     /* exited, or the watcher stood down for it */
	long kill_at; /* ms on the monotonic clock; 0: not due */
	struct worker w[WATCH_WORKERS];
	int nw;
};

static struct {
	pthread_mutex_t mu;
	pthread_t th;
	int started;
	atomic_int stop;
	struct agent a[WATCH_AGENTS];
	int na;
} wd = { .mu = PTHREAD_MUTEX_INITIALIZER };

/* What the watcher knows of a process: /proc/PID/stat, parsed. */
struct proc {
	char state;
	int ppid, code;
	unsigned long long start;
};

/* /proc/PID/stat of pid. With a pidfd taken before this read (fd >= 0),
 * it is proven to be fd's process: fd's process still unreaped after the
 * read means nobody else held the pid during it (a zombie keeps its pid).
 * 0, or -1 (gone, reaped, or not the process fd names). */
static int proc_read(int pid, int fd, struct proc *ps)
{
	char path[64], buf[1024];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	n = rdzv_read_small(path, buf, sizeof(buf));
	if (n <= 0 || rdzv_proc_stat_parse(buf, (size_t)n, &ps->state, &ps->ppid, &ps->code,
	                                   &ps->start) < 0)
		return -1;
	return fd >= 0 && rdzv_pidfd_signal(fd, 0) < 0 ? -1 : 0;
}

/* Whether the agent's pid is still the task slurmstepd forked: its pidfd's
 * process, or without pidfds, slurmstepd's child with the start time seen
 * at task_post_fork (the only way to tell it from a later process that took
 * the pid once slurmstepd reaped the task). */
static int agent_is_ours(const struct agent *a, struct proc *ps)
{
	if (proc_read(a->pid, a->pidfd, ps) < 0)
		return 0;
	return a->pidfd >= 0 || (ps->ppid == (int)getpid() && ps->start == a->start);
}

/* SIGKILL to the agent, never to a process that took its pid: through its
 * pidfd, or, where the kernel has none, after its parent and start time
 * were checked again this instant (the window left is between that read
 * and kill(2): microseconds, with slurmstepd the only one that reaps it). */
static int agent_kill(const struct agent *a)
{
	struct proc ps;

	if (a->pidfd >= 0)
		return rdzv_pidfd_signal(a->pidfd, SIGKILL);
	if (!agent_is_ours(a, &ps)) {
		errno = ESRCH;
		return -1;
	}
	return kill(a->pid, SIGKILL); /* rdzv: proven pid (agent_is_ours, this instant) */
}

/* The agent's children, over all its threads. */
static int agent_children(int pid, int *pids, int max)
{
	char path[96], buf[4096];
	struct dirent *d;
	DIR *dir;
	int n = 0, k;
	ssize_t len;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	if (!(dir = opendir(path)))
		return -1;
	while ((d = readdir(dir)) && n < max) {
		if (d->d_name[0] < '0' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.20s/children", pid, d->d_name);
		if ((len = rdzv_read_small(path, buf, sizeof(buf))) <= 0)
			continue;
		if ((k = rdzv_pid_list_parse(buf, (size_t)len, pids + n, max - n)) > 0)
			n += k;
	}
	closedir(dir);
	return n;
}

/* NAME=... (name with its '=') among the entries of an environ block. */
static int env_has(const char *env, size_t n, const char *name)
{
	size_t len = strlen(name), i = 0;

	while (i < n) {
		const char *z = memchr(env + i, '\0', n - i);
		size_t e = z ? (size_t)(z - (env + i)) : n - i;

		if (e >= len && memcmp(env + i, name, len) == 0)
			return 1;
		i += e + 1;
	}
	return 0;
}

/* The agent's child pid, as a worker: known already, or taken now, its
 * pidfd first and then its parent checked (the fd is then proven to be the
 * agent's child: a pid the agent has not reaped is not reused). NULL when
 * the table is full or pid is no longer the agent's child. */
static struct worker *find_worker(struct agent *a, int pid)
{
	struct worker *w;
	struct proc ps;
	int i, fd;

	for (i = 0; i < a->nw; i++)
		if (a->w[i].pid == pid)
			return &a->w[i];
	if (a->nw == WATCH_WORKERS)
		return NULL;
	fd = rdzv_pidfd_open(pid);
	if (proc_read(pid, fd, &ps) < 0 || ps.ppid != a->pid) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	w = &a->w[a->nw++];
	memset(w, 0, sizeof(*w));
	w->pid = pid;
	w->pidfd = fd;
	return w;
}

static void watch_agent(struct agent *a, long now)
{
	int kids[WATCH_WORKERS], nk, i, j;
	char path[64], env[65536];
	struct worker *w;
	struct proc ps;
	ssize_t n;

	if (!agent_is_ours(a, &ps) || ps.state == 'Z' || ps.state == 'X') {
		if (a->kill_at)
			slurm_info(RDZV_TAG ": torchrun (pid %d) ended before its deadline: "
			           "not signalled", a->pid);
		a->done = 1;
		return;
	}
	if (a->kill_at) {
		if (now >= a->kill_at) {
			if (agent_kill(a) == 0)
				slurm_info(RDZV_TAG ": torchrun (pid %d) is still running after its "
				           "worker failed (PyTorch 1.x waits 300 s in its exit barrier): "
				           "killed it to stop the step", a->pid);
			else
				slurm_info(RDZV_TAG ": torchrun (pid %d) ended before its deadline: "
				           "not signalled (%s)", a->pid, strerror(errno));
			a->done = 1;
		}
		return;
	}
	if ((nk = agent_children(a->pid, kids, WATCH_WORKERS)) < 0)
		return;
	/* A known worker gone before its status was seen: the agent reaps
	 * faster than this (torchrun 2.x) and names the failure itself. */
	for (i = 0; i < a->nw; i++) {
		for (j = 0; j < nk && kids[j] != a->w[i].pid; j++)
			;
		if (j == nk && !a->w[i].seen_dead) {
			a->done = 1;
			return;
		}
	}
	for (i = 0; i < nk; i++) {
		if (!(w = find_worker(a, kids[i])) || w->seen_dead)
			continue;
		if (proc_read(w->pid, w->pidfd, &ps) < 0 || ps.ppid != a->pid)
			continue;
		if (ps.state != 'Z') {
			if (!w->has_rank) {
				snprintf(path, sizeof(path), "/proc/%d/environ", w->pid);
				n = rdzv_read_small(path, env, sizeof(env));
				/* A torchrun worker: the agent set RANK and
				 * TORCHELASTIC_RUN_ID (not a wrapper's grep); the
				 * rank named to srun only when the pidfd's process
				 * outlived the read (the environment was its own). */
				if (n > 0 && rdzv_environ_rank(env, (size_t)n, &w->rank) == 0
				    && env_has(env, (size_t)n, "TORCHELASTIC_RUN_ID=")
				    && (w->pidfd < 0 || rdzv_pidfd_signal(w->pidfd, 0) == 0))
					w->has_rank = 1;
				else
					w->alive_ticks++;
			}
			continue;
		}
		w->seen_dead = 1;
		if (!rdzv_failure_is_bad(ps.code))
			continue;
		if (WIFSIGNALED(ps.code) && WTERMSIG(ps.code) == SIGTERM) {
			a->done = 1; /* the agent or Slurm is stopping the workers */
			return;
		}
		/* Seen alive on two ticks without a worker's environment: not
		 * torchrun's worker (a wrapper's grep). A worker that died
		 * before its environment was read (a fast exit) still counts,
		 * named by the node's rank. */
		if (!w->has_rank && w->alive_ticks >= 2)
			continue;
		if (atomic_exchange(&fl.sent, 1)) {
			a->done = 1; /* named already: the agent's exit was */
			return;
		}
		{
			struct rdzv_failure f;

			memset(&f, 0, sizeof(f));
			f.rank = w->has_rank ? w->rank : a->node_rank;
			f.per_node = !w->has_rank;
			f.workers = w->has_rank ? 0 : a->workers;
			f.status = ps.code;
			gpu_verdict(NULL, f.rank);
			send_failure(&f);
		}
		a->kill_at = now + RDZV_AGENT_GRACE_MS;
		return;
	}
}

static void *watcher(void *arg)
{
	struct timespec tick = { 0, WATCH_TICK_MS * 1000000L };
	int i, live;

	(void)arg;
	while (!atomic_load(&wd.stop)) {
		nanosleep(&tick, NULL);
		pthread_mutex_lock(&wd.mu);
		for (i = 0, live = 0; i < wd.na; i++)
			if (!wd.a[i].done) {
				watch_agent(&wd.a[i], rdzv_now_ms());
				live += !wd.a[i].done;
			}
		pthread_mutex_unlock(&wd.mu);
		(void)live; /* more agents may come: run until the step's exit */
	}
	return NULL;
}

void rdzv_failure_task_post_fork(spank_t sp)
{
	char pet[32], **argv = NULL;
	uint32_t node_rank = 0;
	pid_t pid = 0;
	int argc = 0;
	sigset_t all, old;

	if (!fl.armed || !fl.stops_remote || !rdzv.mode
	    || !(rdzv.mode->flags & RDZV_MODE_ONE_TASK_PER_NODE)
	    || spank_get_item(sp, S_TASK_PID, &pid) != ESPANK_SUCCESS || pid <= 0)
		return;
	if (spank_get_item(sp, S_JOB_ARGV, &argc, &argv) != ESPANK_SUCCESS)
		argc = 0;
	if (rdzv_torchrun_max_restarts(argc, argv, rdzv_job_getenv(sp, "PET_MAX_RESTARTS", pet,
	                                                            sizeof(pet)) > 0 ? pet : NULL))
		return; /* torchrun restarts its workers itself */
	if (spank_get_item(sp, S_TASK_GLOBAL_ID, &node_rank) != ESPANK_SUCCESS)
		node_rank = 0;
	node_rank += rdzv.step.task_offset;
	pthread_mutex_lock(&wd.mu);
	if (wd.na < WATCH_AGENTS) {
		struct agent *a = &wd.a[wd.na];
		struct proc ps;

		memset(a, 0, sizeof(*a));
		a->node_rank = node_rank;
		a->workers = workers(sp);
		a->pid = (int)pid;
		/* The task is slurmstepd's child, not yet reaped (it has not
		 * run task_init): its pid is surely it, so the pidfd is. */
		a->pidfd = rdzv_pidfd_open(pid);
		if (a->pidfd < 0)
			slurm_debug(RDZV_TAG ": no pidfd for task %d (%s): its parent and start "
			            "time are checked before it is signalled", (int)pid, strerror(errno));
		if (proc_read(a->pid, a->pidfd, &ps) == 0) {
			a->start = ps.start;
			wd.na++;
		} else if (a->pidfd >= 0) {
			close(a->pidfd);
		}
	}
	if (!wd.started) {
		/* The thread takes no signals of slurmstepd's. */
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		wd.started = pthread_create(&wd.th, NULL, watcher, NULL) == 0;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	pthread_mutex_unlock(&wd.mu);
}

void rdzv_failure_remote_exit(void)
{
	int i, j;

	rdzv_live_node_stop();
	if (!wd.started)
		return;
	atomic_store(&wd.stop, 1);
	pthread_join(wd.th, NULL);
	wd.started = 0;
	for (i = 0; i < wd.na; i++) {
		if (wd.a[i].pidfd >= 0)
			close(wd.a[i].pidfd);
		for (j = 0; j < wd.a[i].nw; j++)
			if (wd.a[i].w[j].pidfd >= 0)
				close(wd.a[i].w[j].pidfd);
	}
	wd.na = 0;
}
