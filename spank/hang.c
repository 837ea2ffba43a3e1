/* SPDX-License-Identifier: GPL-2.0-or-later */
/* hang.c: the glue of --rdzv-debug=hang (lib/failure/hang.h,
 * rdzv-hang(1)).
 *
 *   slurmstepd, task_init (as the user, in the task before exec): when the
 *   user (--rdzv-debug=hang) or the site (debug=hang) asks for it, makes the
 *   step's directory TMP/rdzv-hang.UID/JOB.STEP (the user's own, 0700;
 *   refused when someone else's is in the way) and exports
 *     RDZV_HANG_DIR=that directory, RDZV_HANG_SIGNAL=41,
 *     PYTHONPATH=hang_python=[:the task's PYTHONPATH]
 *   so that every Python process of the task, torchrun's workers included,
 *   registers faulthandler there (helpers/python/sitecustomize.py).
 *   None of this is set, made or read when it is off (the two cases below
 *   aside). Runs as the user: the
 *   directory and files are the user's, under the user's TMPDIR.
 *   First: hang_python='s sitecustomize.py must be there as the
 *   task sees it (pyxis's container: inside it); without it the step would
 *   be armed in name only. The user's own --rdzv-debug=hang or
 *   --rdzv-collective-timeout is then refused, with the path and the fix;
 *   a site default (debug=, collective_timeout=) or torchrun's forwarding
 *   is a warning, once per node. With container_env=yes, outside pyxis,
 *   the task's APPTAINER_BIND and SINGULARITY_BIND get
 *   hang_python:hang_python:ro and the step's directory appended (the
 *   user's binds kept): Apptainer binds them into any image the task runs.
 *   --rdzv-collective-timeout / collective_timeout= add
 *     RDZV_COLLECTIVE_TIMEOUT=SECONDS
 *   which sitecustomize.py makes torch.distributed's default timeout.
 *   Under --rdzv=torchrun (armed or not) the task gets PYTHONPATH and
 *     RDZV_FORWARD_SIGNALS=USR1,USR2 (unless the user set it)
 *   so that torchrun's agent forwards Slurm's warning signals to workers
 *   that Slurm cannot reach (sitecustomize.py, doc/modes.md).
 *
 *   srun, local_user_init (armed steps only): a listener (channel.h) for the
 *   asks of ranks whose collective timed out (lib/failure/hang.h);
 *   RDZV_HANG_ASK exported to the step. The first ask runs rdzv-hang
 *   (hang_helper=) on the step, once, as the user (srun is the user's); its
 *   table goes to srun's stderr, its verdict to the failure line
 *   (failure.c, handed over by srun.c), and every rank that asked is
 *   answered so that it exits.
 *   srun, exit: the listener stopped (a running rdzv-hang is stopped too). */
#define _GNU_SOURCE 1 /* pipe2 */
#include "config.h"
#include "plugin.h"
#include "channel.h"
#include "hooks.h"
#include "handover.h"
#include "hang.h"
#include "liveness.h"
#include "container.h"
#include "container_hooks.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* mkdir DIR 0700, or an existing one that is a directory of this user's
 * that nobody else can write. Returns 0 or -1 with err. */
static int own_dir(const char *dir, char *err, size_t errlen)
{
	struct stat st;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot make %s: %s", dir, strerror(errno));
		return -1;
	}
	if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid()
	    || (st.st_mode & 022)) {
		snprintf(err, errlen, "%s is not a directory of this user's that only this user can "
		         "write: not used", dir);
		return -1;
	}
	return 0;
}

uint32_t rdzv_hang_timeout(void)
{
	return rdzv.opts.collective_timeout >= 0 ? (uint32_t)rdzv.opts.collective_timeout
	                                         : rdzv.conf.collective_timeout;
}

/* --rdzv-debug wins; else debug= or a collective timeout (whose end names
 * the culprit only when armed). */
int rdzv_hang_armed(void)
{
	if (rdzv.opts.debug_hang >= 0)
		return rdzv.opts.debug_hang;
	return rdzv.conf.debug_hang || rdzv_hang_timeout() > 0;
}

/* What armed the step, as the user or plugstack.conf wrote it; *asked: the
 * user's own option (--rdzv-debug=hang, --rdzv-collective-timeout). */
static const char *armed_by(int launcher, int *asked)
{
	*asked = 1;
	if (rdzv.opts.debug_hang == 1)
		return "--rdzv-debug=hang";
	if (rdzv.opts.collective_timeout > 0)
		return "--rdzv-collective-timeout";
	*asked = 0;
	if (rdzv.opts.debug_hang < 0 && rdzv.conf.debug_hang)
		return "debug=hang (plugstack.conf)";
	if (rdzv_hang_timeout() > 0)
		return "collective_timeout= (plugstack.conf)";
	return launcher ? "--rdzv=torchrun" : "--rdzv-debug=hang";
}

/* hang_python='s sitecustomize.py as this task sees it (task_init: the
 * user's credentials; in pyxis's container, the container's files): NULL
 * when it is a file the user can read whose first lines name spank-rdzv,
 * else why not (Python would then load the image's or Debian's own
 * sitecustomize, which arms nothing). */
static const char *sitecustomize_missing(char *path, size_t len)
{
	char head[512];
	struct stat st;
	ssize_t n;
	int fd;

	snprintf(path, len, "%s/sitecustomize.py", rdzv.conf.hang_python);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
		return errno == EACCES ? "not readable by the user" : "missing";
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return "not a file";
	}
	n = read(fd, head, sizeof(head) - 1);
	close(fd);
	if (n < 0)
		return "not readable by the user";
	head[n > 0 ? n : 0] = '\0';
	return strstr(head, "spank-rdzv") ? NULL : "the file there is not spank-rdzv's";
}

/* Apptainer (and Singularity) read APPTAINER_BIND / SINGULARITY_BIND from
 * the environment of the `apptainer` command a task runs: entries are
 * appended to both, after the user's own binds (lib/modes/container.h); a
 * user who set only one of the two gets the same value in both (Apptainer
 * 1.4.5 warns when they differ, says INFO for SINGULARITY_BIND alone). */
static int add_binds(spank_t sp, const char *const *entries, size_t n)
{
	static const char *const names[2] = { "APPTAINER_BIND", "SINGULARITY_BIND" };
	char *have[2] = { NULL, NULL }, *val = NULL;
	size_t i;
	int rv = -1;

	for (i = 0; i < 2; i++)
		if (rdzv_job_getenv_dup(sp, names[i], &have[i]) < 0)
			goto out;
	for (i = 0; i < 2; i++) {
		const char *base = have[i] && *have[i] ? have[i] : have[1 - i];

		free(val);
		if (!(val = rdzv_container_bind_append(base, entries, n))
		    || spank_setenv(sp, names[i], val, 1) != ESPANK_SUCCESS)
			goto out;
	}
	rv = 0;
out:
	free(val);
	free(have[0]);
	free(have[1]);
	return rv;
}

/* The step's own variables also as APPTAINERENV_NAME and
 * SINGULARITYENV_NAME, as the task has them (overwritten: an outer step's
 * copies are stale; removed when the task has no NAME), so that they reach
 * an image under --cleanenv/--containall too; in an armed step, also the
 * Slurm variables by which rdzv-hang's collector knows the step's
 * processes (--cleanenv drops them). PYTHONPATH is not among them:
 * APPTAINERENV_PYTHONPATH would replace an image's own PYTHONPATH. */
static int carry_vars(spank_t sp)
{
	static const char *const names[] = { "RDZV_HANG_DIR", "RDZV_HANG_SIGNAL", RDZV_HANG_ASK_VAR,
		                             "RDZV_HANG_WAIT", "RDZV_COLLECTIVE_TIMEOUT",
		                             "RDZV_FORWARD_SIGNALS",
		                             /* armed steps only: how rdzv-hang's
		                              * collector finds the step's processes,
		                              * and srun's host for RDZV_HANG_ASK */
		                             "SLURM_JOB_ID", "SLURM_STEP_ID", "SLURMD_NODENAME",
		                             "SLURM_SRUN_COMM_HOST" };
	static const char *const prefixes[] = { "APPTAINERENV_", "SINGULARITYENV_" };
	char val[512], name[64];
	size_t i, k;
	int armed = rdzv_job_getenv(sp, "RDZV_HANG_DIR", val, sizeof(val)) > 0;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int have = rdzv_job_getenv(sp, names[i], val, sizeof(val));

		if (!armed && strncmp(names[i], "SLURM", 5) == 0)
			continue; /* not ours to copy */

		if (have < 0)
			continue; /* a user's value too long to copy here: left alone */
		for (k = 0; k < 2; k++) {
			snprintf(name, sizeof(name), "%s%s", prefixes[k], names[i]);
			if (have > 0 ? spank_setenv(sp, name, val, 1) != ESPANK_SUCCESS
			             : (spank_unsetenv(sp, name), 0))
				return -1;
		}
	}
	return 0;
}

/* torchrun mode: the agent forwards Slurm's warning signals to its workers
 * (sitecustomize.py). The user's own value wins. */
#define RDZV_FORWARD_VAR "RDZV_FORWARD_SIGNALS"
#define RDZV_FORWARD_DEFAULT "USR1,USR2"

int rdzv_hang_task_init(spank_t sp, uint32_t rank, int first_local, int launcher, char *err,
                        size_t errlen)
{
	char tmp[RDZV_PATH_MAX], dir[RDZV_PATH_MAX + 64], step_dir[RDZV_PATH_MAX + 96];
	char sig[16], secs[16], *pp = NULL, *path = NULL, sc[RDZV_PATH_MAX + 32];
	char bind_py[2 * RDZV_PATH_MAX + 8], bind_dir[2 * (RDZV_PATH_MAX + 96) + 8];
	uint32_t job = 0, step = 0, timeout = rdzv_hang_timeout();
	size_t need;
	int rc, armed = rdzv_hang_armed();
	const char *why;

	(void)rank;
	if (!armed && !timeout && !launcher)
		return 0;
	/* Is hang_python='s sitecustomize.py there, as the task will see it?
	 * Without it PYTHONPATH arms nothing and the step would run armed in
	 * name only: the user's own option is refused, a site
	 * default or torchrun's forwarding is a warning (once per node). */
	if ((why = sitecustomize_missing(sc, sizeof(sc)))) {
		int asked, joined = rdzv_container_joined();
		const char *what = armed_by(launcher, &asked);

		if (joined)
			snprintf(err, errlen, "%s: hang_python=%s has no spank-rdzv sitecustomize.py "
			         "inside the container (pyxis/enroot does not mount it), so %s would do "
			         "nothing there (no rank answers rdzv-hang, no collective timeout, no "
			         "signal forwarding): mount it with --container-mounts=%s:%s:ro (the "
			         "administrator: an enroot mounts.d line)", what, rdzv.conf.hang_python,
			         what, rdzv.conf.hang_python, rdzv.conf.hang_python);
		else
			snprintf(err, errlen, "%s: hang_python=%s has no spank-rdzv sitecustomize.py "
			         "(%s), so %s would do nothing (no rank answers rdzv-hang, no collective "
			         "timeout, no signal forwarding): the administrator installs spank-rdzv's "
			         "helpers/python there or sets hang_python= in plugstack.conf to where "
			         "it is", what, rdzv.conf.hang_python, why, what);
		if (asked) {
			size_t l = strlen(err);

			snprintf(err + l, errlen - l, "; the step is refused: run it without %s to "
			         "run it unarmed", what);
			return first_local ? -1 : -2;
		}
		if (first_local)
			fprintf(stderr, RDZV_TAG ": warning: %s: %s\n",
			        rdzv.nodename[0] ? rdzv.nodename : "?", err);
		err[0] = '\0';
		sc[0] = '\0'; /* nothing to bind */
	}
	if (launcher) {
		char have[64];

		if (rdzv_job_getenv(sp, RDZV_FORWARD_VAR, have, sizeof(have)) == 0
		    && spank_setenv(sp, RDZV_FORWARD_VAR, RDZV_FORWARD_DEFAULT, 1) != ESPANK_SUCCESS) {
			snprintf(err, errlen, "torchrun: cannot set the task's environment");
			return -1;
		}
	}
	if (timeout) {
		snprintf(secs, sizeof(secs), "%u", (unsigned)timeout);
		if (spank_setenv(sp, "RDZV_COLLECTIVE_TIMEOUT", secs, 1) != ESPANK_SUCCESS) {
			snprintf(err, errlen, "--rdzv-collective-timeout: cannot set the task's environment");
			return -1;
		}
	}
	if (!armed) {
		step_dir[0] = '\0';
		goto python;
	}
	if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS
	    || spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS)
		return 0;
	/* The task's TMPDIR when it is an absolute path, else /tmp. */
	if (rdzv_job_getenv(sp, "TMPDIR", tmp, sizeof(tmp)) <= 0 || tmp[0] != '/')
		snprintf(tmp, sizeof(tmp), "/tmp");
	snprintf(dir, sizeof(dir), "%s/rdzv-hang.%u", tmp, (unsigned)getuid());
	snprintf(step_dir, sizeof(step_dir), "%s/%u.%u", dir, job, step);
	if (own_dir(dir, err, errlen) < 0 || own_dir(step_dir, err, errlen) < 0) {
		/* Not fatal: the step runs, unarmed; said once per node. */
		if (first_local)
			fprintf(stderr, RDZV_TAG ": warning: --rdzv-debug=hang: %s; rdzv-hang will not "
			        "see this node's ranks\n", err);
		err[0] = '\0';
		if (!timeout && !launcher)
			return 0;
		step_dir[0] = '\0'; /* the timeout still holds */
	}
python:
	snprintf(sig, sizeof(sig), "%d", RDZV_HANG_SIGNAL);
	rc = rdzv_job_getenv_dup(sp, "PYTHONPATH", &pp);
	need = strlen(rdzv.conf.hang_python) + (rc > 0 && pp && *pp ? strlen(pp) + 1 : 0) + 1;
	if (!(path = malloc(need))) {
		free(pp);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (rc > 0 && pp && *pp)
		snprintf(path, need, "%s:%s", rdzv.conf.hang_python, pp);
	else
		snprintf(path, need, "%s", rdzv.conf.hang_python);
	rc = (step_dir[0] && (spank_setenv(sp, "RDZV_HANG_DIR", step_dir, 1) != ESPANK_SUCCESS
	                      || spank_setenv(sp, "RDZV_HANG_SIGNAL", sig, 1) != ESPANK_SUCCESS))
	     || spank_setenv(sp, "PYTHONPATH", path, 1) != ESPANK_SUCCESS;
	free(path);
	free(pp);
	if (rc) {
		snprintf(err, errlen, "--rdzv-debug=hang: cannot set the task's environment");
		return -1;
	}
	/* Apptainer: the directory is bound read-only into any image the
	 * task runs (images do not have it: Python would load the image's own
	 * sitecustomize.py), and the step's directory read-write (rdzv-hang
	 * reads the ranks' stacks there, also under --contain, whose /tmp is
	 * the container's). pyxis's container is joined already: nothing a
	 * task sets reaches enroot's mounts (the check above said so). */
	if (sc[0] && rdzv.conf.container_env && !rdzv_container_joined()) {
		const char *ent[2];
		size_t n = 0;

		if (!rdzv_container_bind_path_ok(rdzv.conf.hang_python)
		    || (step_dir[0] && !rdzv_container_bind_path_ok(step_dir))) {
			if (first_local)
				fprintf(stderr, RDZV_TAG ": warning: %s: hang_python=%s or %s holds a ',' or "
				        "':', which APPTAINER_BIND cannot carry: inside an Apptainer image the "
				        "step is not armed unless the user binds them\n",
				        rdzv.nodename[0] ? rdzv.nodename : "?", rdzv.conf.hang_python,
				        step_dir[0] ? step_dir : "-");
		} else {
			snprintf(bind_py, sizeof(bind_py), "%s:%s:ro", rdzv.conf.hang_python,
			         rdzv.conf.hang_python);
			ent[n++] = bind_py;
			if (step_dir[0]) {
				snprintf(bind_dir, sizeof(bind_dir), "%s:%s", step_dir, step_dir);
				ent[n++] = bind_dir;
			}
			if (add_binds(sp, ent, n) < 0 || carry_vars(sp) < 0) {
				snprintf(err, errlen, "--rdzv-debug=hang: cannot set the task's APPTAINER_BIND "
				         "or APPTAINERENV_ copies");
				return -1;
			}
		}
	}
	if (rdzv.verbose && first_local)
		fprintf(stderr, RDZV_TAG ": %s:   debug=hang: RDZV_HANG_DIR=%s, collective timeout %s, "
		        "PYTHONPATH starts with %s\n", rdzv.nodename[0] ? rdzv.nodename : "?",
		        step_dir[0] ? step_dir : "(none)", timeout ? secs : "PyTorch's",
		        rdzv.conf.hang_python);
	return 0;
}

/* ---- srun: the asks of ranks whose collective timed out ---- */

#define ASKERS_MAX 256
#define HELPER_TIMEOUT_MS 45000 /* rdzv-hang's squeue, then its collectors' -t */
#define HELPER_COLLECT_S "20"    /* rdzv-hang -t: its collectors' limit */
#define HELPER_KILL_MS 5000     /* SIGTERM, then SIGKILL */
/* With silent nodes: within the verdict's hold (RDZV_LIVE_HOLD_MS) */
#define HELPER_SILENT_MS (RDZV_LIVE_HOLD_MS - 1000)
#define HELPER_SILENT_COLLECT_S "2"
#define HELPER_SILENT_KILL_MS 500
#define HELPER_LINE_MAX 8192

static struct {
	struct rdzv_listener l;
	pthread_mutex_t mu;
	char verdict[1024]; /* rdzv-hang's verdict line, without "rdzv-hang: " */
	int timed_out;      /* an ask said "timed out" or "timeout" */
	/* the listener thread's own */
	struct sockaddr_storage who[ASKERS_MAX];
	socklen_t wlen[ASKERS_MAX];
	int nwho, asked, said;
} hs = { .l = { .sock = -1, .stop = { -1, -1 } }, .mu = PTHREAD_MUTEX_INITIALIZER };

/* One line of rdzv-hang's output: to srun's stderr; the verdict kept. */
static void take_line(const char *l, size_t n)
{
	if (!n)
		return;
	fprintf(stderr, "%.*s\n", (int)n, l);
	if (n > 11 && strncmp(l, "rdzv-hang: ", 11) == 0) {
		pthread_mutex_lock(&hs.mu);
		snprintf(hs.verdict, sizeof(hs.verdict), "%.*s", (int)(n - 11), l + 11);
		pthread_mutex_unlock(&hs.mu);
	}
}

/* rdzv-hang -t 20 JOB.STEP, its stdout passed on line by line (however
 * many ranks: the verdict is its last line), stopped when it outlives
 * HELPER_TIMEOUT_MS or srun is done (SIGTERM, SIGKILL HELPER_KILL_MS
 * later). With nsilent nodes that do not answer (liveness.c), it asks
 * only the others (-x, their names when known) and has what is left of
 * the verdict's hold: the living ranks' places come, and srun ends within
 * seconds of the verdict (issue 49). */
static void run_helper(int nsilent, char *silent)
{
	char js[32], tmo[] = HELPER_COLLECT_S, short_tmo[] = HELPER_SILENT_COLLECT_S, opt[] = "-t";
	char xopt[] = "-x", *argv[7], *line;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, all;
	int p[2], st, killed = 0, a = 0;
	size_t len = 0;
	long deadline = rdzv_now_ms() + (nsilent ? HELPER_SILENT_MS : HELPER_TIMEOUT_MS);
	long kill_ms = nsilent ? HELPER_SILENT_KILL_MS : HELPER_KILL_MS;
	pid_t pid;

	snprintf(js, sizeof(js), "%u.%u", hs.l.addr.job, hs.l.addr.step);
	argv[a++] = rdzv.conf.hang_helper;
	argv[a++] = opt;
	argv[a++] = nsilent ? short_tmo : tmo;
	if (nsilent && silent[0]) {
		argv[a++] = xopt;
		argv[a++] = silent;
	}
	argv[a++] = js;
	argv[a] = NULL;
	if (!(line = malloc(HELPER_LINE_MAX)) || pipe2(p, O_CLOEXEC) < 0) {
		free(line);
		return;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], STDOUT_FILENO);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	posix_spawnattr_init(&at);
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawnattr_setsigmask(&at, &none);     /* not this thread's mask */
	posix_spawnattr_setsigdefault(&at, &all);   /* nor srun's handlers */
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	st = posix_spawn(&pid, argv[0], &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(p[1]);
	if (st != 0) {
		fprintf(stderr, RDZV_TAG ": cannot run %s: %s\n", argv[0], strerror(st));
		close(p[0]);
		free(line);
		return;
	}
	for (;;) {
		struct pollfd pf[2] = { { p[0], POLLIN, 0 }, { rdzv_listener_stop_fd(&hs.l), POLLIN, 0 } };
		long left = deadline - rdzv_now_ms();
		char buf[4096];
		ssize_t n, i;

		if (left <= 0 || (poll(pf, 2, (int)left) > 0 && (pf[1].revents & POLLIN))) {
			kill(pid, SIGTERM);
			killed = 1;
			break;
		}
		if (!(pf[0].revents & (POLLIN | POLLHUP)))
			continue;
		n = read(p[0], buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (i = 0; i < n; i++) {
			if (buf[i] == '\n') {
				take_line(line, len);
				len = 0;
			} else if (len < HELPER_LINE_MAX) { /* a longer line is cut */
				line[len++] = buf[i];
			}
		}
	}
	take_line(line, len); /* a last line without its newline */
	close(p[0]);
	free(line);
	for (st = 0;; st += 50) {
		pid_t w = waitpid(pid, NULL, killed ? WNOHANG : 0);

		if (w < 0 && errno == EINTR)
			continue;
		if (w != 0)
			break;
		if (st == kill_ms)
			kill(pid, SIGKILL);
		usleep(50000);
	}
	if (killed)
		fprintf(stderr, RDZV_TAG ": %s %s was stopped (after %ld s, or srun ended first)\n",
		        argv[0], js, (nsilent ? HELPER_SILENT_MS : HELPER_TIMEOUT_MS) / 1000L);
	fflush(stderr);
}

/* One ask: remembered, to be answered once rdzv-hang has run. */
static void on_ask(struct rdzv_listener *l, const char *buf, size_t n,
                   const struct sockaddr *from, socklen_t flen, void *ctx)
{
	struct rdzv_hang_ask a;

	(void)ctx;
	if (rdzv_hang_ask_decode(buf, n, &a) < 0 || a.job_id != l->addr.job
	    || a.step_id != l->addr.step || a.nonce != l->addr.nonce)
		return;
	rdzv_grace_srun_report(&a); /* the step's grace starts with the first */
	if (a.notice) { /* told as the collective raised: no answer awaited */
		rdzv_live_srun_check();
		return;
	}
	if (strstr(a.what, "imed out") || strstr(a.what, "imeout"))
		hs.timed_out = 1;
	if (!hs.said++) /* the first ask of the step */
		fprintf(stderr, RDZV_TAG ": rank %u (node %s) left a collective with an error%s%s; "
		        "asking every rank of the step where it is\n", a.rank, a.node,
		        a.what[0] ? ": " : "", a.what);
	if (hs.nwho < ASKERS_MAX) {
		memcpy(&hs.who[hs.nwho], from, flen);
		hs.wlen[hs.nwho++] = flen;
	}
	/* A collective failed: is every node still there? (liveness.c) */
	rdzv_live_srun_check();
}

/* Every ask waiting: one run of rdzv-hang (the step's first), then the
 * answers, so that each rank that asked exits. */
static void on_asks_drained(struct rdzv_listener *l, void *ctx)
{
	char done[128];
	int i;

	(void)ctx;
	if (hs.nwho && !hs.asked) {
		/* The nodes that do not answer, if the check the asks started
		 * finds any: not asked (their collectors would never start). */
		size_t room = 128 * 1024;
		char *silent = malloc(room);
		int nsilent;

		hs.asked = 1;
		nsilent = silent ? rdzv_live_srun_wait(RDZV_LIVE_WAIT_MS + 1000, silent, room) : 0;
		fflush(stderr);
		rdzv_grace_srun_helper(1);
		run_helper(nsilent, silent);
		rdzv_grace_srun_helper(0);
		rdzv_live_srun_release();
		free(silent);
	}
	if (rdzv_hang_done_format(l->addr.job, l->addr.step, l->addr.nonce, done, sizeof(done)) == 0)
		for (i = 0; i < hs.nwho; i++)
			rdzv_listener_reply(l, done, strlen(done), (struct sockaddr *)&hs.who[i],
			                    hs.wlen[i]);
	hs.nwho = 0;
}

static const struct rdzv_listener_ops ask_ops = { RDZV_HANG_DGRAM_MAX, on_ask, on_asks_drained };

/* The user asked for a timeout or hang diagnosis that an image run with a
 * cleaned environment never sees (its Python gets no PYTHONPATH, so the
 * image's own sitecustomize runs and PyTorch keeps its 30 minutes): said
 * at start, with the fix (tests/0111). */
static void cleanenv_warning(const struct rdzv_srun_step *s)
{
	const char *rt = rdzv_container_cleans_pythonpath(s->prog_argc, s->prog_argv);
	char what[96];

	if (!rt || !rdzv.conf.hang_python[0])
		return;
	if (rdzv.opts.collective_timeout >= 0)
		snprintf(what, sizeof(what), "--rdzv-collective-timeout");
	else if (rdzv.opts.debug_hang == 1)
		snprintf(what, sizeof(what), "--rdzv-debug=hang");
	else
		return;
	slurm_spank_log(RDZV_TAG ": warning: %s has no effect inside '%s %s --cleanenv': the image's "
	                "Python gets no PYTHONPATH, so it runs without the plugin's sitecustomize "
	                "(PyTorch's own 30-minute timeout, no hang report); add --env PYTHONPATH=%s to "
	                "the %s line", what, rt, s->prog_argv[1], rdzv.conf.hang_python, rt);
}

void rdzv_hang_srun_start(const struct rdzv_srun_step *s)
{
	char text[RDZV_CHANNEL_VAR_MAX];

	unsetenv(RDZV_HANG_ASK_VAR); /* an outer step's */
	rdzv_handover_clear(&rdzv_env_process, RDZV_HO_HANG_ASK);
	cleanenv_warning(s);
	if (!rdzv_hang_armed() || !s->has_ids)
		return;
	if (rdzv_listener_open(&hs.l, s->job, s->step) < 0
	    || rdzv_channel_var_format(&hs.l.addr, text, sizeof(text)) < 0
	    || rdzv_listener_start(&hs.l, &ask_ops, NULL) < 0)
		goto fail;
	/* srun merges its environment into the step's after this hook; the
	 * nodes give the tasks RDZV_HANG_ASK (rdzv_hang_user_init). */
	if (rdzv_handover_put(&rdzv_env_process, RDZV_HO_HANG_ASK, text, NULL, 0) == 0)
		return;
	rdzv_listener_close(&hs.l);
	return;
fail:
	slurm_spank_log(RDZV_TAG ": warning: --rdzv-debug=hang: cannot listen for the ranks' "
	                "timeouts: a timed-out collective will not name the rank it waited for");
	rdzv_listener_close(&hs.l);
}

/* The node's side of the ask: srun's address for this step, handed over
 * as SLURM_RDZV_HANG_ASK (which reaches the node under every --export),
 * given to the tasks as RDZV_HANG_ASK (sitecustomize.py reads it). One of
 * another step's is not given; a user's own RDZV_HANG_ASK is kept. */
void rdzv_hang_user_init(spank_t sp)
{
	struct rdzv_channel_addr a;
	char *text = NULL;
	uint32_t job = 0, step = 0;

	if (rdzv_step_take(sp, RDZV_HO_HANG_ASK, NULL, &text, NULL, 0) <= 0)
		return;
	if (spank_get_item(sp, S_JOB_ID, &job) == ESPANK_SUCCESS
	    && spank_get_item(sp, S_JOB_STEPID, &step) == ESPANK_SUCCESS) {
		if (rdzv_channel_var_parse(text, &a, NULL) == 0 && a.job == job && a.step == step
		    && spank_setenv(sp, RDZV_HANG_ASK_VAR, text, 1) != ESPANK_SUCCESS)
			slurm_spank_log(RDZV_TAG ": warning: --rdzv-debug=hang: cannot give the "
			                "tasks srun's address: a timed-out collective will not name "
			                "the rank it waited for");
	}
	free(text);
}

const char *rdzv_hang_srun_stop(int *timed_out)
{
	rdzv_listener_close(&hs.l); /* a running rdzv-hang is stopped too */
	*timed_out = hs.timed_out;
	return hs.verdict[0] ? hs.verdict : NULL;
}
