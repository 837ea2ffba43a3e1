/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rdzv-hang: which rank of a hung step is not where the others are, and
 * where each rank is (rdzv-hang(1)).
 *
 *   rdzv-hang [--timeout SECS] [--exclude NODES] [JOB[.STEP]]
 *
 * Default: the running steps of the caller's job (SLURM_JOB_ID). For each
 * step, one collector per node runs inside the job (srun --overlap, one task
 * per node of the step, no GPU): it finds the step's ranks among the
 * caller's own processes (/proc: SLURM_JOB_ID, SLURM_STEP_ID and RANK in
 * their environment), sends each the dump signal only when its status shows
 * it caught it (armed by --rdzv-debug=hang: helpers/python/sitecustomize.py
 * registered faulthandler), and prints what faulthandler wrote. The front
 * end prints one line per rank and the verdict (lib/failure/hang.h). Nothing
 * is stopped: faulthandler writes from its signal handler and the process
 * goes on.
 *
 *   rdzv-hang --collect JOB.STEP   the collector (what srun runs per node)
 *
 * --exclude NODES: no collector on these nodes (a host list): srun's plugin
 * passes the nodes that do not answer (spank/liveness.c), whose collectors
 * would never start, so that the living ranks' places come at once
 * (issue 49); their ranks are listed without a dump. SIGTERM or SIGINT
 * stops the collectors and shows what came.
 *
 * Exit status: 0 (all ranks answered and agree), 3 (ranks named by the
 * verdict, or ranks that did not answer), 1 (error: no step, srun failed),
 * 2 (usage). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "failure.h" /* rdzv_environ_rank: the torchrun watcher reads RANK the same way */
#include "hang.h"
#include "hostlist.h"
#include "util.h"

#define PROG "rdzv-hang"
#define MAX_PROCS 1024
#define MAX_RANKS 65536
#define ENV_MAX (1024 * 1024)

extern char **environ;

/* SIGTERM or SIGINT: the collectors are stopped, what came is shown. */
static volatile sig_atomic_t stop_asked;

static void on_stop(int sig)
{
	(void)sig;
	stop_asked = 1;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: " PROG " [--timeout SECS] [--exclude NODES] [JOB[.STEP]]\n"
	        "For each running step of JOB (default: this job, SLURM_JOB_ID), prints where each\n"
	        "rank is (the torch.distributed call it waits in and its innermost frame of the\n"
	        "user's program) and names the ranks that are not where most are. The step must\n"
	        "run with --rdzv-debug=hang (or debug=hang in plugstack.conf).\n"
	        "  -t, --timeout SECS  give up on a step's collectors after SECS (default 30)\n"
	        "  -x, --exclude NODES ask no rank on these nodes (a host list: nodes that do not\n"
	        "                      answer); their ranks are listed without a dump\n"
	        "  -h, --help          this text\n"
	        "  --version           the release (spank-rdzv's), then exit\n");
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* NAME's value in an environ block, or NULL. */
static const char *env_in(const char *env, size_t n, const char *name)
{
	size_t len = strlen(name), i = 0;

	while (i < n) {
		const char *z = memchr(env + i, '\0', n - i);
		size_t e = z ? (size_t)(z - (env + i)) : n - i;

		if (e > len && memcmp(env + i, name, len) == 0 && env[i + len] == '=')
			return z ? env + i + len + 1 : NULL;
		i += e + 1;
	}
	return NULL;
}

static int parse_u32(const char *s, uint32_t *out)
{
	uint64_t v;

	if (!s || rdzv_parse_u64(s, 0, UINT32_MAX, &v) < 0)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/* JOB or JOB.STEP (numeric). step: -1 when not given. */
static int parse_jobstep(const char *s, uint32_t *job, long *step)
{
	char buf[64], *dot;
	uint32_t v;

	if (strlen(s) >= sizeof(buf))
		return -1;
	snprintf(buf, sizeof(buf), "%s", s);
	*step = -1;
	if ((dot = strchr(buf, '.'))) {
		*dot = '\0';
		if (parse_u32(dot + 1, &v) < 0)
			return -1;
		*step = (long)v;
	}
	return parse_u32(buf, job);
}

/* ---- the collector, on each node ---- */

struct cand {
	long pid;
	int pidfd; /* held from before the checks to the signal: no pid reuse */
	uint32_t rank;
	unsigned long long start; /* clock ticks since boot */
	char path[1100];
	off_t size0;
	int sent;
};

static unsigned long long proc_start(long pid)
{
	char path[64], buf[2048], *p;
	unsigned long long v = 0;
	int field;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if (rdzv_read_small(path, buf, sizeof(buf)) <= 0 || !(p = strrchr(buf, ')')))
		return 0;
	/* Fields after ") ": state is field 3; starttime is field 22. */
	for (field = 2; *p && field < 22; p++)
		if (*p == ' ')
			field++;
	sscanf(p, "%llu", &v);
	return v;
}

/* The parent's pid (field 4 of /proc/PID/stat), 0 when unknown. */
static long proc_ppid(long pid)
{
	char path[64], buf[2048], *p;
	long v = 0;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if (rdzv_read_small(path, buf, sizeof(buf)) <= 0 || !(p = strrchr(buf, ')')))
		return 0;
	if (sscanf(p, ") %*c %ld", &v) != 1)
		return 0;
	return v;
}

/* c[i] is a launcher, not a rank, when a candidate below it claims another
 * rank: a torchrun agent whose RANK came from an image's %environment or
 * ENV (inside `apptainer exec`) is older than its workers and
 * would otherwise be taken for the rank its RANK says. A rank's data loader
 * workers claim its own rank and do not count. */
static void drop_launchers(struct cand *c, int nc)
{
	int i, j, depth, *launcher = calloc((size_t)(nc ? nc : 1), sizeof(int));

	if (!launcher)
		return;
	for (j = 0; j < nc; j++) {
		long p = proc_ppid(c[j].pid);

		for (depth = 0; p > 1 && depth < 64; depth++, p = proc_ppid(p))
			for (i = 0; i < nc; i++)
				if (i != j && c[i].pid == p && c[i].rank != c[j].rank)
					launcher[i] = 1;
	}
	for (i = 0; i < nc; i++)
		if (launcher[i])
			c[i].pid = 0;
	free(launcher);
}

#ifdef SYS_pidfd_open
static int pidfd_of(long pid)
{
	return (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
}

static int send_sig(const struct cand *c)
{
	if (c->pidfd >= 0)
		return (int)syscall(SYS_pidfd_send_signal, c->pidfd, RDZV_HANG_SIGNAL, NULL, 0);
	/* No pidfd (a kernel before 5.3): the start time checked again. */
	return proc_start(c->pid) == c->start ? kill((pid_t)c->pid, RDZV_HANG_SIGNAL) : -1;
}
#else
static int pidfd_of(long pid)
{
	(void)pid;
	return -1;
}

static int send_sig(const struct cand *c)
{
	return proc_start(c->pid) == c->start ? kill((pid_t)c->pid, RDZV_HANG_SIGNAL) : -1;
}
#endif

static int collect(const char *jobstep)
{
	uint32_t job, world = 0, w;
	long step;
	char jobs[16], steps[24], node[256], *env;
	const char *v;
	struct cand *c;
	int nc = 0, i, j, answered = 0;
	DIR *proc;
	struct dirent *d;
	uid_t uid = getuid();
	long self = (long)getpid(), t0;
	static char dump[RDZV_HANG_DUMP_MAX + 1];

	if (parse_jobstep(jobstep, &job, &step) < 0 || step < 0) {
		fprintf(stderr, PROG ": --collect needs JOB.STEP, got '%s'\n", jobstep);
		return 2;
	}
	snprintf(jobs, sizeof(jobs), "%u", job);
	snprintf(steps, sizeof(steps), "%ld", step);
	snprintf(node, sizeof(node), "%s", getenv("SLURMD_NODENAME") ? getenv("SLURMD_NODENAME") : "?");
	env = malloc(ENV_MAX);
	c = calloc(MAX_PROCS, sizeof(*c));
	if (!env || !c) {
		fprintf(stderr, PROG ": out of memory\n");
		free(env);
		free(c);
		return 1;
	}
	for (i = 0; i < MAX_PROCS; i++)
		c[i].pidfd = -1;
	if (!(proc = opendir("/proc"))) {
		fprintf(stderr, PROG ": %s: cannot read /proc: %s\n", node, strerror(errno));
		free(env);
		free(c);
		return 1;
	}
	while ((d = readdir(proc)) && nc < MAX_PROCS) {
		char path[64], status[8192];

		if (c[nc].pidfd >= 0) /* the last one was not kept */
			close(c[nc].pidfd);
		c[nc].pidfd = -1;
		{ /* a block: its declarations after the reset above */
			struct stat st;
			const char *dir;
			uint32_t rank;
			long pid;
			ssize_t n;

			if (d->d_name[0] < '1' || d->d_name[0] > '9')
				continue;
			pid = strtol(d->d_name, NULL, 10);
			snprintf(path, sizeof(path), "/proc/%ld", pid);
			if (pid == self || stat(path, &st) < 0 || st.st_uid != uid)
				continue;
			/* A pidfd first: whatever is checked below is then the process
			 * that gets the signal, never a reused pid. */
			c[nc].pidfd = pidfd_of(pid);
			snprintf(path, sizeof(path), "/proc/%ld/environ", pid);
			if ((n = rdzv_read_small(path, env, ENV_MAX)) <= 0)
				continue;
			if (!(v = env_in(env, (size_t)n, "SLURM_JOB_ID")) || strcmp(v, jobs) != 0
			    || !(v = env_in(env, (size_t)n, "SLURM_STEP_ID")) || strcmp(v, steps) != 0
			    /* this node's: nodes may share one /proc (slurmd -N) */
			    || ((v = env_in(env, (size_t)n, "SLURMD_NODENAME")) && strcmp(v, node) != 0)
			    || !(dir = env_in(env, (size_t)n, "RDZV_HANG_DIR")) || dir[0] != '/'
			    || rdzv_environ_rank(env, (size_t)n, &rank) < 0)
				continue;
			if (!world && parse_u32(env_in(env, (size_t)n, "WORLD_SIZE"), &w) == 0)
				world = w;
			snprintf(path, sizeof(path), "/proc/%ld/status", pid);
			/* Only a process that catches the signal gets it: its
			 * default action would end the process. */
			if (rdzv_read_small(path, status, sizeof(status)) <= 0
			    || rdzv_hang_sigcgt(status, strlen(status), RDZV_HANG_SIGNAL) != 1)
				continue;
			snprintf(c[nc].path, sizeof(c[nc].path), "%s/%ld.stack", dir, pid);
			if (lstat(c[nc].path, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != uid)
				continue;
			c[nc].pid = pid;
			c[nc].rank = rank;
			c[nc].size0 = st.st_size;
			c[nc].start = proc_start(pid);
			nc++;
		}
	}
	if (nc < MAX_PROCS && c[nc].pidfd >= 0)
		close(c[nc].pidfd);
	closedir(proc);
	drop_launchers(c, nc);
	/* A rank's own process is the oldest of those with its RANK (spawned
	 * data loader workers inherit RANK and arm themselves too). */
	for (i = 0; i < nc; i++)
		for (j = 0; j < nc; j++)
			if (i != j && c[j].pid && c[i].pid && c[i].rank == c[j].rank
			    && (c[j].start < c[i].start || (c[j].start == c[i].start && c[j].pid < c[i].pid)))
				c[i].pid = 0;
	for (i = 0; i < nc; i++) {
		if (c[i].pid && send_sig(&c[i]) == 0)
			c[i].sent = 1;
		if (c[i].pidfd >= 0)
			close(c[i].pidfd);
	}
	if (world)
		printf("@world %u\n", world);
	/* faulthandler writes from the handler: the file grows, then stays.
	 * Wait until every signalled file has grown and been still for 100 ms
	 * (3 s at most). */
	t0 = rdzv_now_ms();
	{
		off_t last[MAX_PROCS];
		long still[MAX_PROCS];

		for (i = 0; i < nc; i++) {
			last[i] = c[i].size0;
			still[i] = 0;
		}
		for (;;) {
			int pending = 0;

			sleep_ms(20);
			for (i = 0; i < nc; i++) {
				struct stat st;

				if (!c[i].sent || still[i] < 0)
					continue;
				if (lstat(c[i].path, &st) < 0) {
					still[i] = -1;
					continue;
				}
				if (st.st_size != last[i]) {
					last[i] = st.st_size;
					still[i] = rdzv_now_ms();
				}
				if (st.st_size == c[i].size0 || rdzv_now_ms() - still[i] < 100)
					pending++;
				else
					still[i] = -1; /* done */
			}
			if (!pending || rdzv_now_ms() - t0 > 3000)
				break;
		}
	}
	for (i = 0; i < nc; i++) {
		int fd;
		ssize_t n, got = 0;

		if (!c[i].sent)
			continue;
		fd = open(c[i].path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			continue;
		if (lseek(fd, c[i].size0, SEEK_SET) == c[i].size0)
			while (got < RDZV_HANG_DUMP_MAX
			       && (n = read(fd, dump + got, (size_t)(RDZV_HANG_DUMP_MAX - got))) > 0)
				got += n;
		close(fd);
		if (got <= 0)
			continue;
		dump[got] = '\0';
		/* A record's text never holds a line that starts with '@'. */
		printf("@rank %u node %s pid %ld\n", c[i].rank, node, c[i].pid);
		for (j = 0; j < got; j++)
			if (dump[j] != '@' || (j > 0 && dump[j - 1] != '\n'))
				putchar(dump[j]);
		if (dump[got - 1] != '\n')
			putchar('\n');
		printf("@end\n");
		answered++;
	}
	if (!answered)
		printf("@note %s: no rank of step %u.%ld here answered (none runs with "
		       "--rdzv-debug=hang, or none is a Python process)\n", node, job, step);
	fflush(stdout);
	free(env);
	free(c);
	return 0;
}

/* ---- the front end ---- */

/* Runs argv with stdout into a malloc()ed buffer (*out), killed after
 * timeout_s. Returns the exit status (as waitpid's), -1 on error. */
static int run_capture(char **argv, char **envp, int timeout_s, char **out, size_t *outlen)
{
	int p[2], status = 0, killed = 0;
	long t;
	pid_t pid;
	size_t cap = 65536, len = 0;
	char *buf = malloc(cap);
	long deadline = rdzv_now_ms() + (long)timeout_s * 1000;

	if (!buf || pipe(p) < 0) {
		free(buf);
		return -1;
	}
	if ((pid = fork()) < 0) {
		close(p[0]);
		close(p[1]);
		free(buf);
		return -1;
	}
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		environ = envp;
		execvp(argv[0], argv);
		fprintf(stderr, PROG ": cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(p[1]);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	for (;;) {
		ssize_t n;

		if (stop_asked) {
			kill(pid, SIGTERM);
			fprintf(stderr, PROG ": %s stopped (asked to stop)\n", argv[0]);
			killed = 1;
			break;
		}
		if (rdzv_now_ms() > deadline) {
			kill(pid, SIGTERM);
			fprintf(stderr, PROG ": %s did not end within %d s: stopped\n", argv[0], timeout_s);
			killed = 1;
			break;
		}
		if (len + 4096 > cap) {
			char *nb = cap < 64u * 1024 * 1024 ? realloc(buf, cap * 2) : NULL;

			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		n = read(p[0], buf + len, cap - len - 1);
		if (n > 0) {
			len += (size_t)n;
			continue;
		}
		if (n == 0)
			break;
		if (errno != EAGAIN && errno != EINTR)
			break;
		sleep_ms(10);
	}
	close(p[0]);
	/* srun ends on SIGTERM (it cancels the collectors' step); 5 s more
	 * (1 s when this program was asked to stop), then SIGKILL. */
	for (t = 0; waitpid(pid, &status, killed ? WNOHANG : 0) == 0; t += 50) {
		if (t == (stop_asked ? 1000 : 5000))
			kill(pid, SIGKILL);
		sleep_ms(50);
	}
	buf[len] = '\0';
	*out = buf;
	*outlen = len;
	return status;
}

/* A malloc()ed argv of copies (the literals are const here). */
static char **argv_of(const char *const *in)
{
	size_t n = 0, i;
	char **v;

	while (in[n])
		n++;
	if (!(v = calloc(n + 1, sizeof(*v))))
		return NULL;
	for (i = 0; i < n; i++)
		if (!(v[i] = strdup(in[i]))) {
			while (i--)
				free(v[i]);
			free(v);
			return NULL;
		}
	return v;
}

static void argv_free(char **v)
{
	size_t i;

	for (i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* A variable srun reads as one of its options (srun(1), INPUT ENVIRONMENT
 * VARIABLES) that would change the collectors' layout, inherited from the
 * batch script's job (SLURM_NTASKS=64 would make 32 collectors a node). */
static int srun_input(const char *e)
{
	static const char *const names[] = {
		"SLURM_NTASKS=", "SLURM_NPROCS=", "SLURM_NTASKS_PER_NODE=", "SLURM_NTASKS_PER_SOCKET=",
		"SLURM_NTASKS_PER_CORE=", "SLURM_NTASKS_PER_GPU=", "SLURM_CPUS_PER_TASK=",
		"SLURM_TRES_PER_TASK=", "SLURM_CPUS_PER_GPU=", "SLURM_GPUS=", "SLURM_GPUS_PER_NODE=",
		"SLURM_GPUS_PER_TASK=", "SLURM_GPUS_PER_SOCKET=", "SLURM_MEM_PER_CPU=",
		"SLURM_MEM_PER_GPU=", "SLURM_MEM_PER_NODE=", "SLURM_DISTRIBUTION=", "SLURM_HOSTFILE=",
		"SLURM_CPU_BIND=", "SLURM_EXACT=", "SLURM_EXCLUSIVE=", "SLURM_ARBITRARY_NODELIST=",
		"SLURM_UNBUFFERED_IO=", "SLURM_LABELIO=", "SLURM_CONTAINER=", NULL
	};
	int i;

	for (i = 0; names[i]; i++)
		if (strncmp(e, names[i], strlen(names[i])) == 0)
			return 1;
	return 0;
}

/* The environment for the collectors' srun: the caller's, without what
 * would give the collector step a rendezvous mode (the batch script's
 * --rdzv as Slurm exports it, RDZV_MODE) or a debug mode. */
static char **collector_env(void)
{
	size_t n = 0, i, k = 0;
	char **e;

	while (environ[n])
		n++;
	if (!(e = calloc(n + 1, sizeof(*e))))
		return NULL;
	for (i = 0; i < n; i++) {
		if (strncmp(environ[i], "_SLURM_SPANK_OPTION_rdzv_", 25) == 0
		    || strncmp(environ[i], "RDZV_MODE=", 10) == 0
		    || strncmp(environ[i], "RDZV_DEBUG=", 11) == 0
		    || strncmp(environ[i], "SLURM_KILL_BAD_EXIT=", 20) == 0 || srun_input(environ[i]))
			continue;
		e[k++] = environ[i];
	}
	return e;
}

struct step {
	uint32_t job, step;
	char nodes[4096];
};

/* The job's running steps (squeue -s), or the one asked for. */
static int list_steps(uint32_t job, long want, struct step *s, int max, char **envp)
{
	char jobs[16], *out = NULL, *line, *save = NULL, **argv;
	const char *args[] = { "squeue", "-h", "-s", "-j", jobs, "-o", "%i %N", NULL };
	size_t len;
	int st, n = 0;
	long self = -1;
	const char *me = getenv("SLURM_JOB_ID"), *mystep = getenv("SLURM_STEP_ID");
	uint32_t v;

	if (me && mystep && parse_u32(me, &v) == 0 && v == job && parse_u32(mystep, &v) == 0)
		self = (long)v;
	snprintf(jobs, sizeof(jobs), "%u", job);
	if (!(argv = argv_of(args)))
		return -1;
	st = run_capture(argv, envp, 30, &out, &len);
	argv_free(argv);
	if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, PROG ": squeue -s -j %u failed\n", job);
		free(out);
		return -1;
	}
	for (line = strtok_r(out, "\n", &save); line && n < max; line = strtok_r(NULL, "\n", &save)) {
		char id[64], nodes[4096];
		uint32_t j;
		long stp;

		if (sscanf(line, "%63s %4095s", id, nodes) != 2 || parse_jobstep(id, &j, &stp) < 0
		    || stp < 0 || j != job || (want < 0 && stp == self) || (want >= 0 && stp != want))
			continue; /* batch, extern, interactive, this step unless asked for */
		s[n].job = j;
		s[n].step = (uint32_t)stp;
		snprintf(s[n].nodes, sizeof(s[n].nodes), "%s", nodes);
		n++;
	}
	free(out);
	return n;
}

/* srun --label's output ("%*d: line" per line, the collectors' lines
 * interleaved as they came) regrouped: every task's lines together, in task
 * order, labels removed; unlabelled lines are dropped. A malloc()ed string,
 * or NULL. */
static char *unlabel(const char *out, long tasks)
{
	size_t *len = calloc((size_t)tasks, sizeof(*len)), total = 0, at = 0;
	char **buf = calloc((size_t)tasks, sizeof(*buf)), *all = NULL;
	const char *p, *e, *q;
	long t, k;

	if (!len || !buf)
		goto out;
	for (p = out; *p; p = e) {
		char *nb;

		e = strchr(p, '\n');
		e = e ? e + 1 : p + strlen(p);
		for (q = p; q < e && *q == ' '; q++)
			;
		for (k = 0; q < e && *q >= '0' && *q <= '9' && k <= tasks; q++)
			k = k * 10 + (*q - '0');
		if (q == p || q + 1 >= e || q[0] != ':' || q[1] != ' ' || k >= tasks
		    || q[-1] < '0' || q[-1] > '9')
			continue;
		q += 2;
		if (!(nb = realloc(buf[k], len[k] + (size_t)(e - q) + 2)))
			goto out;
		buf[k] = nb;
		memcpy(buf[k] + len[k], q, (size_t)(e - q));
		len[k] += (size_t)(e - q);
		if (e[-1] != '\n')
			buf[k][len[k]++] = '\n';
		total += (size_t)(e - q) + 1;
	}
	if (!(all = malloc(total + 1)))
		goto out;
	for (t = 0; t < tasks; t++) {
		if (buf[t])
			memcpy(all + at, buf[t], len[t]);
		at += buf[t] ? len[t] : 0;
	}
	all[at] = '\0';
out:
	for (t = 0; buf && t < tasks; t++)
		free(buf[t]);
	free(buf);
	free(len);
	return all;
}

static int by_rank(const void *a, const void *b)
{
	const struct rdzv_hang_rank *x = a, *y = b;

	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* The step's nodes that --exclude does not name, comma separated. */
struct keep {
	const char *excl;
	char *list;
	size_t len, cap;
	long kept;
	char err[256];
};

static int keep_host(const char *host, void *ctx)
{
	struct keep *k = ctx;
	size_t n = strlen(host);
	int has = rdzv_hostlist_has(k->excl, host, k->err, sizeof(k->err));

	if (has < 0)
		return -1;
	if (has)
		return 0;
	if (k->len + n + 2 > k->cap) {
		size_t cap = k->cap ? k->cap * 2 : 4096;
		char *nl;

		while (cap < k->len + n + 2)
			cap *= 2;
		if (!(nl = realloc(k->list, cap))) {
			snprintf(k->err, sizeof(k->err), "out of memory");
			return -1;
		}
		k->list = nl;
		k->cap = cap;
	}
	if (k->len)
		k->list[k->len++] = ',';
	memcpy(k->list + k->len, host, n + 1);
	k->len += n;
	k->kept++;
	return 0;
}

static int one_step(const struct step *s, const char *self, int timeout_s, const char *excl,
                    char **envp)
{
	char js[32], nn[24], err[256], where[512], verdict[8192], *out = NULL, *p, *end, **argv;
	char jobid[16];
	const char *args[] = { "srun", "--jobid", jobid, "--overlap", "-N", nn, "-n", nn, "-w",
		               s->nodes, "--ntasks-per-node=1", "--label", "--quiet", "-K0",
		               "--gres=none", self, "--collect", js, NULL };
	struct rdzv_hang_rank *r = NULL;
	struct keep k = { excl, NULL, 0, 0, 0, "" };
	size_t len, n = 0, cap = 0, i;
	uint32_t world = 0;
	long count;
	int st, named, rc = 0;

	snprintf(jobid, sizeof(jobid), "%u", s->job);
	snprintf(js, sizeof(js), "%u.%u", s->job, s->step);
	if ((count = rdzv_hostlist_count(s->nodes, err, sizeof(err))) <= 0) {
		fprintf(stderr, PROG ": step %s: node list %s: %s\n", js, s->nodes, err);
		return 1;
	}
	if (excl) {
		if (rdzv_hostlist_each(s->nodes, keep_host, &k, err, sizeof(err)) != 0) {
			fprintf(stderr, PROG ": step %s: --exclude %s: %s\n", js, excl,
			        k.err[0] ? k.err : err);
			free(k.list);
			return 1;
		}
		if (k.kept < count)
			printf("%s: not asked: the ranks on %s (%ld of the step's %ld nodes: they do not "
			       "answer)\n", js, excl, count - k.kept, count);
		if (k.kept == 0) {
			fflush(stdout);
			free(k.list);
			printf("step %s:\n%s: no node of the step left to ask\n", js, PROG);
			return 3;
		}
		args[9] = k.list;
		count = k.kept;
	}
	snprintf(nn, sizeof(nn), "%ld", count);
	argv = argv_of(args);
	free(k.list);
	if (!argv)
		return 1;
	st = run_capture(argv, envp, timeout_s, &out, &len);
	argv_free(argv);
	if (st < 0) {
		fprintf(stderr, PROG ": step %s: cannot run srun\n", js);
		return 1;
	}
	/* Each collector's lines together: srun interleaves the nodes'. */
	p = unlabel(out, count);
	free(out);
	out = p;
	for (p = out; p && *p; p = end) {
		end = strchr(p, '\n');
		end = end ? end + 1 : p + strlen(p);
		if (strncmp(p, "@world ", 7) == 0) {
			uint32_t w;
			char wb[16];

			snprintf(wb, sizeof(wb), "%.*s", (int)(end - p - 8 > 0 ? end - p - 8 : 0), p + 7);
			if (parse_u32(wb, &w) == 0 && w <= MAX_RANKS && w > world)
				world = w;
		} else if (strncmp(p, "@note ", 6) == 0) {
			printf("%s: %.*s", js, (int)(end - p - 6), p + 6);
			if (end[-1] != '\n')
				putchar('\n');
		} else if (strncmp(p, "@rank ", 6) == 0) {
			struct rdzv_hang_rank one;
			char *body = end, *stop;
			long pid;

			memset(&one, 0, sizeof(one));
			if (rdzv_hang_record_header(p, (size_t)(end - p - (end[-1] == '\n')), &one.rank,
			                            one.node, sizeof(one.node), &pid) < 0)
				continue;
			stop = strstr(end - 1, "\n@end\n"); /* from the header's newline: an empty body too */
			stop = stop ? stop + 1 : body + strlen(body);
			one.have = rdzv_hang_parse(body, (size_t)(stop - body), &one.w) == 0;
			end = *stop ? stop + 5 : stop;
			if (n == cap) {
				struct rdzv_hang_rank *nr = cap < MAX_RANKS ? realloc(r, (cap ? cap * 2 : 64) * sizeof(*r)) : NULL;

				if (!nr)
					break;
				r = nr;
				cap = cap ? cap * 2 : 64;
			}
			r[n++] = one;
		}
	}
	free(out);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fprintf(stderr, PROG ": step %s: srun for the collectors ended with status %d%s\n", js,
		        WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st),
		        n ? " (what came is shown)" : "");
	/* Ranks of the world that sent nothing are named too. */
	if (world) {
		uint8_t *seen = calloc(world, 1);

		for (i = 0; seen && i < n; i++)
			if (r[i].rank < world)
				seen[r[i].rank] = 1;
		for (i = 0; seen && i < world; i++) {
			if (seen[i])
				continue;
			if (n == cap) {
				struct rdzv_hang_rank *nr = realloc(r, (cap ? cap * 2 : 64) * sizeof(*r));

				if (!nr)
					break;
				r = nr;
				cap = cap ? cap * 2 : 64;
			}
			memset(&r[n], 0, sizeof(r[n]));
			r[n].rank = (uint32_t)i;
			snprintf(r[n].node, sizeof(r[n].node), "?");
			n++;
		}
		free(seen);
	}
	if (n)
		qsort(r, n, sizeof(*r), by_rank);
	printf("step %s:\n", js);
	for (i = 0; i < n; i++) {
		if (r[i].have)
			rdzv_hang_where_text(&r[i].w, where, sizeof(where));
		else
			snprintf(where, sizeof(where), "no dump (not armed, not Python, or gone)");
		printf("  rank %-5u %-16s %s\n", r[i].rank, r[i].node, where);
	}
	named = rdzv_hang_verdict(r, n, verdict, sizeof(verdict));
	if (named < 0)
		snprintf(verdict, sizeof(verdict), PROG ": (verdict too long to print)");
	printf("%s\n", verdict);
	fflush(stdout);
	for (i = 0; i < n; i++)
		rc |= !r[i].have;
	free(r);
	return named != 0 || rc || n == 0 ? 3 : 0; /* -1: a verdict too long to print names ranks */
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "timeout", required_argument, NULL, 't' },
		{ "exclude", required_argument, NULL, 'x' },
		{ "collect", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *collect_js = NULL, *arg, *excl = NULL;
	struct sigaction sa;
	char self[4096], err[256];
	int timeout_s = 30, c, n, i, rc = 0, r;
	uint32_t job, v;
	long step;
	struct step *steps;
	char **envp;
	ssize_t sl;

	while ((c = getopt_long(argc, argv, "t:x:h", longopts, NULL)) != -1) {
		switch (c) {
		case 't':
			if (parse_u32(optarg, &v) < 0 || v < 1 || v > 3600) {
				fprintf(stderr, PROG ": --timeout %s: expected 1-3600 seconds\n", optarg);
				return 2;
			}
			timeout_s = (int)v;
			break;
		case 'x':
			if (rdzv_hostlist_count(optarg, err, sizeof(err)) < 0) {
				fprintf(stderr, PROG ": --exclude %s: %s (expected a host list, "
				        "e.g. n2 or n[2-3],n7)\n", optarg, err);
				return 2;
			}
			excl = optarg;
			break;
		case 'C':
			collect_js = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			rdzv_print_version("rdzv-hang");
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (collect_js)
		return collect(collect_js);
	/* Stopped by a signal, or by its parent's end (srun's plugin runs it):
	 * the collectors stop and what came is shown. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	{
		pid_t parent = getppid();

		if (prctl(PR_SET_PDEATHSIG, SIGTERM) == 0 && getppid() != parent)
			stop_asked = 1;
	}
	if (optind < argc - 1) {
		usage(stderr);
		return 2;
	}
	arg = optind < argc ? argv[optind] : getenv("SLURM_JOB_ID");
	if (!arg) {
		fprintf(stderr, PROG ": no job given and SLURM_JOB_ID is not set (run it in the "
		        "batch script, or give JOB or JOB.STEP)\n");
		return 2;
	}
	if (parse_jobstep(arg, &job, &step) < 0) {
		fprintf(stderr, PROG ": '%s': expected JOB or JOB.STEP (numbers)\n", arg);
		return 2;
	}
	/* The collectors run this very program on the nodes. */
	if ((sl = readlink("/proc/self/exe", self, sizeof(self) - 1)) <= 0) {
		fprintf(stderr, PROG ": cannot find this program's path: %s\n", strerror(errno));
		return 1;
	}
	self[sl] = '\0';
	if (!(envp = collector_env()) || !(steps = calloc(64, sizeof(*steps)))) {
		fprintf(stderr, PROG ": out of memory\n");
		return 1;
	}
	n = list_steps(job, step, steps, 64, envp);
	if (n < 0)
		return 1;
	if (n == 0) {
		if (step >= 0)
			fprintf(stderr, PROG ": step %u.%ld is not running\n", job, step);
		else
			fprintf(stderr, PROG ": job %u has no running step to look at\n", job);
		return 1;
	}
	for (i = 0; i < n; i++) {
		r = one_step(&steps[i], self, timeout_s, excl, envp);
		if (r == 1)
			rc = 1;
		else if (r && !rc)
			rc = r;
	}
	free(steps);
	free(envp);
	return rc;
}
