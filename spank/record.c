/* SPDX-License-Identifier: GPL-2.0-or-later */
/* record.c: each node's record of a step (lib/admin/record.h), in slurmstepd.
 *
 *   init_post_opt (root)     a SOCK_SEQPACKET pair, its buffer large enough
 *                            for every task's part (SO_SNDBUFFORCE)
 *   user_init (as the user)  kept for a step with a mode or one srun
 *                            refused, closed otherwise; before the tasks fork
 *   task_init (the task)     the task's part (its variables as applied, its
 *                            CPUs) sent as one message, non-blocking, before
 *                            exec; the socket is close-on-exec
 *   task_exit (root)         the rank's exit status and when
 *   exit (root)              the parts received (each checked: one JSON
 *                            object of at most RDZV_RECORD_TASK_MAX bytes,
 *                            since the task could be anyone's), the record
 *                            built and written to record_dir= (never a path
 *                            a user names: the admin's directory, checked,
 *                            files made without following links) and sent
 *                            to syslog (record_syslog=)
 * Nothing here fails the step: a record that cannot be made is said in
 * slurmd's log. */
#define _GNU_SOURCE 1 /* sched_getaffinity */
#include "config.h"
#include "plugin.h"
#include "hooks.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "metrics.h"
#include "record.h"
#include "util.h"

static struct {
	int on;
	int sock[2];                  /* [0] slurmstepd reads, [1] the tasks write */
	int64_t start;
	struct rdzv_record_exit *exits;
	size_t nexits, cap;
	const char *gpu_kind;         /* the GPU fault found (failure.c), or NULL */
	char gpu_text[512];
} rec = { 0, { -1, -1 }, 0, NULL, 0, 0, NULL, "" };

/* Exits are compared across nodes (which failed first): the wall clock,
 * which clusters keep in step (NTP, PTP). */
static int64_t wall_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* A record or the metrics asked for by the site. */
static int wanted(void)
{
	return rdzv.conf.record_dir[0] || rdzv.conf.record_syslog >= 0 || rdzv.conf.metrics_dir[0];
}

void rdzv_record_init_post_opt(void)
{
	int size = (int)RDZV_RECORD_SOCKBUF;

	if (!wanted())
		return;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, rec.sock) < 0) {
		slurm_verbose(RDZV_TAG ": record: no socket pair (%s): the tasks' variables are "
		              "left out", strerror(errno));
		rec.sock[0] = rec.sock[1] = -1;
		return;
	}
	/* Within the site's net.core.wmem_max, never past it (SO_SNDBUFFORCE
	 * would give every step memory the admin did not grant): a smaller
	 * buffer holds fewer tasks' parts, and the record says how many it
	 * lacks. */
	(void)setsockopt(rec.sock[1], SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
}

static void close_socks(void)
{
	if (rec.sock[0] >= 0)
		close(rec.sock[0]);
	if (rec.sock[1] >= 0)
		close(rec.sock[1]);
	rec.sock[0] = rec.sock[1] = -1;
}

void rdzv_record_gpu_fault(const char *kind, const char *text)
{
	rec.gpu_kind = kind;
	snprintf(rec.gpu_text, sizeof(rec.gpu_text), "%s", text);
}

void rdzv_record_user_init(spank_t sp)
{
	(void)sp;
	/* Steps the plugin serves: a mode, or one srun refused. */
	if (!wanted() || (!rdzv.refused && !(rdzv.active && rdzv.mode && rdzv.mode->fill))) {
		close_socks();
		return;
	}
	rec.on = 1;
	rec.start = (int64_t)time(NULL);
}

/* The task's CPUs as a list ("0-3,8"), from its affinity after binding. */
static void task_cpus(char *buf, size_t len)
{
	cpu_set_t set;
	size_t o = 0;
	int c, start = -1;

	buf[0] = '\0';
	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return;
	for (c = 0; c <= CPU_SETSIZE; c++) {
		int in = c < CPU_SETSIZE && CPU_ISSET(c, &set);

		if (in && start < 0)
			start = c;
		if (!in && start >= 0) {
			int n = c - 1 == start ? snprintf(buf + o, len - o, "%s%d", o ? "," : "", start)
			                       : snprintf(buf + o, len - o, "%s%d-%d", o ? "," : "",
			                                  start, c - 1);

			if (n < 0 || (size_t)n >= len - o) {
				buf[0] = '\0';
				return;
			}
			o += (size_t)n;
			start = -1;
		}
	}
}

void rdzv_record_task(const struct rdzv_task *t, const struct rdzv_envset *env,
                      const struct rdzv_envset *late)
{
	struct rdzv_jw w;
	char cpus[4096];
	const char *text;

	if (!rec.on || rec.sock[1] < 0)
		return;
	task_cpus(cpus, sizeof(cpus));
	rdzv_jw_init(&w, RDZV_RECORD_TASK_MAX);
	rdzv_record_task_json(&w, t->rank, t->local_rank, cpus[0] ? cpus : NULL, env, late);
	if ((text = rdzv_jw_text(&w)) && !w.full)
		(void)send(rec.sock[1], text, w.len, MSG_DONTWAIT | MSG_NOSIGNAL);
	rdzv_jw_free(&w);
}

void rdzv_record_task_exit(spank_t sp)
{
	uint32_t rank = 0;
	int status = 0;

	if (!rec.on || spank_get_item(sp, S_TASK_GLOBAL_ID, &rank) != ESPANK_SUCCESS
	    || spank_get_item(sp, S_TASK_EXIT_STATUS, &status) != ESPANK_SUCCESS)
		return;
	if (rec.nexits == rec.cap) {
		size_t cap = rec.cap ? rec.cap * 2 : 16;
		struct rdzv_record_exit *x = realloc(rec.exits, cap * sizeof(*x));

		if (!x)
			return;
		rec.exits = x;
		rec.cap = cap;
	}
	rec.exits[rec.nexits].rank = rank + rdzv.step.task_offset;
	rec.exits[rec.nexits].status = status;
	rec.exits[rec.nexits].ms = wall_ms();
	rec.nexits++;
}

/* The tasks' parts waiting on the socket, each checked. */
static size_t take_parts(char ***parts)
{
	size_t n = 0, cap = 0;
	char *buf = malloc(RDZV_RECORD_TASK_MAX + 1);

	*parts = NULL;
	if (!buf || rec.sock[0] < 0) {
		free(buf);
		return 0;
	}
	for (;;) {
		ssize_t k = recv(rec.sock[0], buf, RDZV_RECORD_TASK_MAX + 1, MSG_DONTWAIT | MSG_TRUNC);
		char **p;

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		if ((size_t)k > RDZV_RECORD_TASK_MAX || buf[0] != '{'
		    || !rdzv_json_valid(buf, (size_t)k))
			continue; /* not a part this plugin wrote: left out */
		if (n == cap) {
			cap = cap ? cap * 2 : 8;
			if (!(p = realloc(*parts, cap * sizeof(char *))))
				break;
			*parts = p;
		}
		if (!((*parts)[n] = strndup(buf, (size_t)k)))
			break;
		n++;
	}
	free(buf);
	return n;
}

static int write_file(const char *text, size_t len)
{
	char name[RDZV_HOST_MAX + 64], err[RDZV_ERRLEN];

	if (rdzv_record_name(rdzv.step.slurm_job_id, rdzv.step.step_id, rdzv.stepd_node, name,
	                     sizeof(name)) < 0) {
		slurm_error(RDZV_TAG ": record: step %u.%u: no file name for node '%s'",
		            rdzv.step.slurm_job_id, rdzv.step.step_id, rdzv.stepd_node);
		return -1;
	}
	if (rdzv_record_write(rdzv.conf.record_dir, name, text, len, err, sizeof(err)) < 0) {
		slurm_error(RDZV_TAG ": record: step %u.%u: %s", rdzv.step.slurm_job_id,
		            rdzv.step.step_id, err);
		return -1;
	}
	return 0;
}

/* The node's first cause of failure: srun's or the node's refusal, else
 * the earliest failed task's (exits are in the order slurmstepd saw them). */
static const char *first_cause(void)
{
	size_t i;

	if (rdzv.refused)
		return "refused_by_srun";
	if (rdzv.error[0])
		return "refused_by_node";
	for (i = 0; i < rec.nexits; i++) {
		int st = rec.exits[i].status;

		if (WIFSIGNALED(st))
			return "signal";
		if (WIFEXITED(st) && WEXITSTATUS(st) != 0)
			return "exit";
	}
	return NULL;
}

/* node_exporter's textfile (metrics_dir=): this step added. */
static void update_metrics(const struct rdzv_record_node *n, int record_error)
{
	struct rdzv_metrics_step ms;
	char err[RDZV_ERRLEN];

	memset(&ms, 0, sizeof(ms));
	ms.mode = n->mode ? n->mode : "none";
	ms.cause = first_cause();
	ms.profile = n->profile ? n->profile : n->profile_default;
	ms.profile_hash = n->profile_hash;
	ms.bind_fallback = rdzv_bind_fallback() != NULL;
	ms.record_error = record_error;
	ms.gpu_fault = rec.gpu_kind;
	ms.end = n->end;
	if (rdzv_metrics_update(rdzv.conf.metrics_dir, &ms, err, sizeof(err)) < 0)
		slurm_error(RDZV_TAG ": metrics: step %u.%u: %s", n->job, n->step, err);
}

/* The record to syslog: whole when it is small, else without the tasks'
 * parts (syslog daemons cut long messages; the file keeps them). */
static void send_syslog(struct rdzv_record_node *n, const char *text, size_t len)
{
	struct rdzv_jw w;

	rdzv_jw_init(&w, RDZV_RECORD_SYSLOG_MAX);
	if (len > RDZV_RECORD_SYSLOG_MAX) {
		n->tasks_lost += n->ntasks_parts;
		n->ntasks_parts = 0;
		if (rdzv_record_node_json(n, &w) < 0 || !(text = rdzv_jw_text(&w)) || w.full)
			text = NULL;
	}
	/* The facility given with each message: openlog/closelog would change
	 * the process-wide ident, facility and socket that Slurm's own logging
	 * in slurmstepd uses. The text is JSON, its control bytes escaped. */
	if (text)
		syslog(rdzv.conf.record_syslog | LOG_INFO, RDZV_TAG ": %s", text);
	rdzv_jw_free(&w);
}

void rdzv_record_exit(spank_t sp)
{
	struct rdzv_record_node n;
	struct rdzv_jw w;
	char **parts = NULL, *slurm = NULL;
	const char *text = NULL;
	size_t i, nparts;
	int record_error = 0;

	if (!rec.on) {
		close_socks();
		return;
	}
	if (rec.sock[1] >= 0)
		close(rec.sock[1]);
	rec.sock[1] = -1;
	nparts = take_parts(&parts);
	memset(&n, 0, sizeof(n));
	n.job = rdzv.step.slurm_job_id;
	n.step = rdzv.step.step_id;
	n.het = rdzv.step.het;
	n.task_offset = rdzv.step.task_offset;
	n.node = rdzv.stepd_node[0] ? rdzv.stepd_node : NULL;
	n.node_id = rdzv.step.node_id;
	n.node_rank = rdzv.step.node_rank;
	n.nnodes = rdzv.step.nnodes;
	n.ntasks = rdzv.step.ntasks;
	n.local_ntasks = rdzv.step.local_ntasks;
	n.mode = rdzv.mode ? rdzv.mode->name : NULL;
	n.rank0_host = rdzv.step.master_host[0] ? rdzv.step.master_host : NULL;
	n.master_addr = rdzv.step.master_addr[0] ? rdzv.step.master_addr : NULL;
	n.port = rdzv.step.port;
	n.port_source = rdzv.port_source[0] ? rdzv.port_source : NULL;
	n.plugin_version = PACKAGE_VERSION;
	n.srun_version = rdzv.srun_version[0] ? rdzv.srun_version : NULL;
	if (spank_get_item(sp, S_SLURM_VERSION, &slurm) == ESPANK_SUCCESS)
		n.slurm_version = slurm;
	rdzv_profile_record_info(&n.profile, &n.profile_default, &n.profile_hash);
	n.bind_mode = rdzv_bind_resolve(&rdzv.opts, &rdzv.conf);
	n.error = rdzv.error[0] ? rdzv.error : NULL;
	n.refused = rdzv.refused;
	n.gpu_fault = rec.gpu_kind ? rec.gpu_text : NULL;
	n.gpu_fault_kind = rec.gpu_kind;
	n.tasks = (const char *const *)parts;
	n.ntasks_parts = nparts;
	n.tasks_lost = rdzv.step.local_ntasks > nparts ? rdzv.step.local_ntasks - nparts : 0;
	n.exits = rec.exits;
	n.nexits = rec.nexits;
	n.start = rec.start;
	n.end = (int64_t)time(NULL);
	rdzv_jw_init(&w, RDZV_RECORD_MAX);
	if (rdzv_record_node_json(&n, &w) < 0 || !(text = rdzv_jw_text(&w))) {
		text = NULL;
		slurm_error(RDZV_TAG ": record: step %u.%u: out of memory", n.job, n.step);
		record_error = 1;
	} else if (rdzv.conf.record_dir[0]) {
		record_error = write_file(text, w.len) < 0;
	}
	if (text && rdzv.conf.record_syslog >= 0)
		send_syslog(&n, text, w.len);
	if (rdzv.conf.metrics_dir[0])
		update_metrics(&n, record_error);
	rdzv_jw_free(&w);
	for (i = 0; i < nparts; i++)
		free(parts[i]);
	free(parts);
	close_socks();
	free(rec.exits);
	memset(&rec, 0, sizeof(rec));
	rec.sock[0] = rec.sock[1] = -1;
}
