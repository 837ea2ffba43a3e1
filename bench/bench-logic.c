/* SPDX-License-Identifier: GPL-2.0-or-later */
/* bench-logic: what the plugin's logic costs, without Slurm.
 *
 *   bench-logic scale [--csv FILE] [--max-nodes N]
 *       One task's environment for steps of 1,000 to 100,000 nodes (10
 *       tasks per node: 1,000,000 tasks at the top) from worst-case inputs:
 *       compressed and uncompressed host lists, tasks-per-node strings, an
 *       arbitrary distribution's hostfile. Time per task and peak memory.
 *   bench-logic task [--csv FILE] [--topology XML] [--profiles DIR]
 *                    [--profile NAME] [--node HOST]
 *       The per-task work of task_init (mode fill, profile entries, binding
 *       row, precedence apply into an in-memory environment), per
 *       configuration, and the once-per-node work of user_init.
 *
 * Every computed value is checked against the expected answer before it is
 * timed, so an error path is never what gets measured. BENCH_BATCHES sets
 * the number of batches (default 7). */
#define _GNU_SOURCE
#include "config.h"

#include <getopt.h>
#include <stdarg.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "bindmode.h"
#include "envset.h"
#include "hostlist.h"
#include "layout.h"
#include "master.h"
#include "modes.h"
#include "port.h"
#include "rank0.h"
#include "profile.h"
#include "topo.h"
#include "topocache.h"
#include "identity.h"
#include "util.h"

#define ERRLEN 512
#define TARGET_US 20000.0 /* a batch lasts at least this long */
#define HOSTFILE_READ 65536 /* what spank/remote.c reads of SLURM_HOSTFILE */
#define PLUGIN_NODELIST_MAX 8192 /* spank/remote.c's SLURM_STEP_NODELIST buffer */
#define TASKS_PER_NODE 10

static unsigned batches = 7;

/* ---- an in-memory task environment (what spank_getenv/setenv reach) ---- */

struct memenv {
	char **v;
	size_t n, cap;
	size_t base; /* entries of the starting environment */
	char **saved; /* copies of the base entries, for reset */
};

static char *find_var(struct memenv *e, const char *name, size_t *at)
{
	size_t i, len = strlen(name);

	for (i = 0; i < e->n; i++)
		if (strncmp(e->v[i], name, len) == 0 && e->v[i][len] == '=') {
			*at = i;
			return e->v[i] + len + 1;
		}
	return NULL;
}

static int env_get(void *ctx, const char *name, char *buf, size_t buflen)
{
	size_t at;
	const char *v = find_var(ctx, name, &at);

	if (!v)
		return 0;
	return rdzv_strlcpy(buf, v, buflen) < 0 ? -1 : 1;
}

static int env_set(void *ctx, const char *name, const char *value)
{
	struct memenv *e = ctx;
	size_t at, len = strlen(name) + strlen(value) + 2;
	char *s = malloc(len);

	if (!s)
		return -1;
	snprintf(s, len, "%s=%s", name, value);
	if (find_var(e, name, &at)) {
		if (at >= e->base || e->v[at] != e->saved[at])
			free(e->v[at]); /* a base entry's saved copy stays, for reset */
		e->v[at] = s;
		return 0;
	}
	if (e->n == e->cap) {
		char **nv = realloc(e->v, (e->cap * 2 + 8) * sizeof(*nv));

		if (!nv) {
			free(s);
			return -1;
		}
		e->v = nv;
		e->cap = e->cap * 2 + 8;
	}
	e->v[e->n++] = s;
	return 0;
}

static int env_unset(void *ctx, const char *name)
{
	struct memenv *e = ctx;
	size_t at;

	if (!find_var(e, name, &at))
		return 0;
	if (at < e->base)
		return -1; /* the benchmark's environment holds no variable a profile unsets */
	free(e->v[at]);
	e->v[at] = e->v[--e->n];
	return 0;
}

/* Back to the starting environment (untimed). */
static void memenv_reset(struct memenv *e)
{
	size_t i;

	for (i = e->base; i < e->n; i++)
		free(e->v[i]);
	for (i = 0; i < e->base; i++)
		if (e->v[i] != e->saved[i]) {
			free(e->v[i]);
			e->v[i] = e->saved[i];
		}
	e->n = e->base;
}

static void memenv_destroy(struct memenv *e)
{
	size_t i;

	memenv_reset(e);
	for (i = 0; i < e->base; i++)
		free(e->saved[i]);
	free(e->saved);
	free(e->v);
	memset(e, 0, sizeof(*e));
}

/* A task's environment as slurmstepd builds it on a 3-node GPU step: the
 * user's shell variables and Slurm's ~50 (what spank_getenv searches). */
static int memenv_init(struct memenv *e, const char *visible)
{
	static const char *const base[] = {
		"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/home/user", "USER=user",
		"SHELL=/bin/bash", "LANG=C.UTF-8", "PWD=/home/user/run", "TERM=xterm",
		"LOGNAME=user", "SHLVL=1", "OMP_NUM_THREADS=1", "PYTHONUNBUFFERED=1",
		"CUDA_HOME=/usr/local/cuda", "LD_LIBRARY_PATH=/usr/local/cuda/lib64",
		"SLURM_CLUSTER_NAME=rdzvtest", "SLURM_CONF=/etc/slurm/slurm.conf",
		"SLURM_CPUS_ON_NODE=8", "SLURM_CPU_BIND=quiet,mask_cpu:0xFF",
		"SLURM_DISTRIBUTION=block", "SLURM_GPUS_ON_NODE=4", "SLURM_GTIDS=4,5,6,7",
		"SLURM_JOBID=1234", "SLURM_JOB_ACCOUNT=root", "SLURM_JOB_CPUS_PER_NODE=8(x3)",
		"SLURM_JOB_GID=0", "SLURM_JOB_GPUS=0,1,2,3", "SLURM_JOB_ID=1234",
		"SLURM_JOB_NAME=train", "SLURM_JOB_NODELIST=n[1-3]", "SLURM_JOB_NUM_NODES=3",
		"SLURM_JOB_PARTITION=gpu", "SLURM_JOB_QOS=normal", "SLURM_JOB_UID=0",
		"SLURM_JOB_USER=root", "SLURM_LAUNCH_NODE_IPADDR=127.0.0.1", "SLURM_LOCALID=1",
		"SLURM_MPI_TYPE=none", "SLURM_NNODES=3", "SLURM_NODEID=1",
		"SLURM_NODELIST=n[1-3]", "SLURM_NPROCS=12", "SLURM_NTASKS=12",
		"SLURM_NTASKS_PER_NODE=4", "SLURM_PRIO_PROCESS=0", "SLURM_PROCID=5",
		"SLURM_SRUN_COMM_HOST=127.0.0.1", "SLURM_SRUN_COMM_PORT=40000",
		"SLURM_STEPID=0", "SLURM_STEP_GPUS=0,1,2,3", "SLURM_STEP_ID=0",
		"SLURM_STEP_LAUNCHER_PORT=40000", "SLURM_STEP_NODELIST=n[1-3]",
		"SLURM_STEP_NUM_NODES=3", "SLURM_STEP_NUM_TASKS=12",
		"SLURM_STEP_TASKS_PER_NODE=4(x3)", "SLURM_SUBMIT_DIR=/home/user/run",
		"SLURM_SUBMIT_HOST=login1", "SLURM_TASKS_PER_NODE=4(x3)", "SLURM_TASK_PID=4242",
		"SLURM_TOPOLOGY_ADDR=n2", "SLURM_TOPOLOGY_ADDR_PATTERN=node",
		"SLURM_UMASK=0022", "SLURMD_NODENAME=n2", "GPU_DEVICE_ORDINAL=0,1,2,3",
		NULL,
	};
	size_t i, n = 0;

	memset(e, 0, sizeof(*e));
	while (base[n])
		n++;
	e->cap = n + 64;
	if (!(e->v = calloc(e->cap, sizeof(*e->v))) || !(e->saved = calloc(n + 1, sizeof(char *))))
		return -1;
	for (i = 0; i < n; i++)
		if (!(e->saved[i] = strdup(base[i])))
			return -1;
	e->base = n;
	if (visible) {
		size_t len = strlen("CUDA_VISIBLE_DEVICES=") + strlen(visible) + 1;

		if (!(e->saved[n] = malloc(len)))
			return -1;
		snprintf(e->saved[n], len, "CUDA_VISIBLE_DEVICES=%s", visible);
		e->base = n + 1;
	}
	memcpy(e->v, e->saved, e->base * sizeof(char *));
	e->n = e->base;
	return 0;
}

/* ---- scale: one task's environment from huge step descriptions ---- */

struct scale_case {
	const char *name;
	const char *what; /* which input is at its worst */
	uint32_t nnodes;
	uint64_t ntasks;
	char *nodelist;
	char *tpn;
	const char *dist;
	char hostfile[256];  /* arbitrary: SLURM_HOSTFILE, "" otherwise */
	size_t input_bytes;  /* bytes of every input: lists and hostfile */
	char want_node[RDZV_HOST_MAX];
	char want_master[RDZV_HOST_MAX];
	uint32_t want_local;
	/* per call */
	struct memenv env;
	char got_rank[32];
};

/* A growing string. */
struct sbuf {
	char *s;
	size_t n, cap;
};

static int sb_add(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int sb_add(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int w;

	va_start(ap, fmt);
	w = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (w < 0)
		return -1;
	if (!b->s || b->cap - b->n <= (size_t)w) {
		size_t cap = b->cap ? b->cap : 4096;
		char *ns;

		while (cap - b->n <= (size_t)w)
			cap *= 2;
		if (!(ns = realloc(b->s, cap)))
			return -1;
		b->s = ns;
		b->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
	va_end(ap);
	b->n += (size_t)w;
	return 0;
}

/* "gpu[000001-N]": every node, one range. */
static char *list_range(uint32_t n)
{
	struct sbuf b = { 0 };

	return sb_add(&b, "gpu[000001-%06u]", n) < 0 ? NULL : b.s;
}

/* "gpu[000001,000003,...]" (bracket items) or "gpu000001,gpu000003,..."
 * (comma items): every other node of a larger cluster, so that nothing
 * compresses into a range: the longest list Slurm can hand a step. */
static char *list_items(uint32_t n, int bracket, char *last, size_t lastlen)
{
	struct sbuf b = { 0 };
	uint32_t i;

	if (bracket && sb_add(&b, "gpu[") < 0)
		goto fail;
	for (i = 0; i < n; i++)
		if (sb_add(&b, bracket ? "%s%06u" : "%sgpu%06u", i ? "," : "", 2 * i + 1) < 0)
			goto fail;
	if (bracket && sb_add(&b, "]") < 0)
		goto fail;
	snprintf(last, lastlen, "gpu%06u", 2 * (n - 1) + 1);
	return b.s;
fail:
	free(b.s);
	return NULL;
}

/* Tasks per node summing to 10 per node. compressed: "10(xA),9,11,10(xB)";
 * else "9,11,9,11,...": alternating counts, which Slurm cannot compress. */
static char *tpn_string(uint32_t n, int compressed, uint32_t *last)
{
	struct sbuf b = { 0 };
	uint32_t i;

	if (compressed) {
		*last = 10;
		return sb_add(&b, "10(x%u),9,11,10(x%u)", n / 2, n - n / 2 - 2) < 0 ? NULL : b.s;
	}
	for (i = 0; i < n; i++)
		if (sb_add(&b, "%s%u", i ? "," : "", i % 2 ? 11 : 9) < 0) {
			free(b.s);
			return NULL;
		}
	*last = (n - 1) % 2 ? 11 : 9;
	return b.s;
}

/* A hostfile of every task, one line each, in reverse node order: task 0
 * runs on the last node, so only the file can name the master. */
static int write_hostfile(struct scale_case *c, char *err, size_t errlen)
{
	const char *tmp = getenv("TMPDIR");
	FILE *f;
	uint64_t t;
	int fd;

	snprintf(c->hostfile, sizeof(c->hostfile), "%s/rdzv-bench-hostfile.XXXXXX",
	         tmp && *tmp ? tmp : "/tmp");
	if ((fd = mkstemp(c->hostfile)) < 0 || !(f = fdopen(fd, "w")))
		return rdzv_err(err, errlen, "cannot create %s", c->hostfile);
	fprintf(f, "# arbitrary distribution: one line per task\n");
	for (t = 0; t < c->ntasks; t++)
		fprintf(f, "gpu%06u\n", c->nnodes - (uint32_t)(t / TASKS_PER_NODE));
	c->input_bytes = (size_t)ftell(f);
	if (fclose(f) != 0)
		return rdzv_err(err, errlen, "cannot write %s", c->hostfile);
	snprintf(c->want_master, sizeof(c->want_master), "gpu%06u", c->nnodes);
	return 0;
}

/* One task's environment: the last task of the last node (the worst place
 * in every list). Counts come from the tasks-per-node string, as a
 * consumer without SPANK items would get them (the plugin reads them from
 * SPANK, and the megatron check reads the string). */
static int scale_task(void *ctx, char *err, size_t errlen)
{
	struct scale_case *c = ctx;
	struct rdzv_step st;
	struct rdzv_task t;
	struct rdzv_port_range range = { RDZV_DEFAULT_PORT_LO, RDZV_DEFAULT_PORT_HI };
	struct rdzv_port_range eph = { 32768, 60999 };
	struct rdzv_env_ops ops = { env_get, env_set, env_unset, &c->env };
	struct rdzv_envset *env = NULL;
	enum rdzv_port_source src;
	char node[RDZV_HOST_MAX], *text = NULL;
	uint64_t tasks;
	uint32_t nodes, local;
	size_t at;
	int rv = -1;

	memset(&st, 0, sizeof(st));
	if (rdzv_tpn_totals(c->tpn, &nodes, &tasks, err, errlen) < 0
	    || rdzv_tpn_tasks_on(c->tpn, nodes - 1, &local, err, errlen) < 0)
		goto fail;
	st.job_id = 4242;
	st.nnodes = nodes;
	st.node_id = st.node_rank = nodes - 1;
	st.ntasks = (uint32_t)tasks;
	st.local_ntasks = local;
	st.gpus_on_node = -1;
	if (rdzv_hostlist_nth(c->nodelist, st.node_id, node, sizeof(node), err, errlen) < 0)
		goto fail;
	if (c->hostfile[0] && !(text = rdzv_read_head(c->hostfile, HOSTFILE_READ))) {
		rdzv_err(err, errlen, "cannot read %s", c->hostfile);
		goto fail;
	}
	if (rdzv_master_host(c->nodelist, c->dist, text, st.master_host, sizeof(st.master_host),
	                     err, errlen) < 0)
		goto fail;
	/* MASTER_ADDR as the node name: the one lookup per node is measured
	 * by "task" (it does not depend on the step's size). */
	memcpy(st.master_addr, st.master_host, sizeof(st.master_addr));
	if (rdzv_port_choose(0, "", st.job_id, st.step_id, &range, &eph, &st.port, &src, err,
	                     errlen) < 0)
		goto fail;
	t.rank = st.ntasks - 1;
	t.local_rank = local - 1;
	t.visible_gpus = -1;
	if (!(env = rdzv_envset_create())) {
		rdzv_err(err, errlen, "out of memory");
		goto fail;
	}
	if (rdzv_fill_torch(&st, &t, env, err, errlen) < 0
	    || rdzv_envset_apply(env, &ops, err, errlen) < 0)
		goto fail;
	if (nodes != c->nnodes || tasks != c->ntasks || local != c->want_local
	    || strcmp(node, c->want_node) != 0 || strcmp(st.master_host, c->want_master) != 0) {
		rdzv_err(err, errlen, "%s: wrong answer: %u nodes %llu tasks, last node %s with %u "
		         "tasks, master %s", c->name, nodes, (unsigned long long)tasks, node, local,
		         st.master_host);
		goto fail;
	}
	snprintf(c->got_rank, sizeof(c->got_rank), "%s", find_var(&c->env, "RANK", &at));
	rv = 0;
fail:
	free(text);
	rdzv_envset_destroy(env);
	return rv;
}

static void scale_reset(void *ctx)
{
	memenv_reset(&((struct scale_case *)ctx)->env);
}

enum scale_kind {
	SC_COMPRESSED,
	SC_BRACKET_ITEMS,
	SC_COMMA_ITEMS,
	SC_TPN_UNCOMPRESSED,
	SC_HOSTFILE,
	SC_ALL_WORST,
	SC_KINDS,
};

static const char *const kind_name[SC_KINDS] = {
	"compressed", "bracket-items", "comma-items", "tpn-uncompressed", "hostfile",
	"all-worst",
};

static int scale_build(struct scale_case *c, enum scale_kind k, uint32_t n, char *err,
                       size_t errlen)
{
	int items = k == SC_BRACKET_ITEMS || k == SC_COMMA_ITEMS || k == SC_ALL_WORST;
	int tpn_plain = k == SC_TPN_UNCOMPRESSED || k == SC_ALL_WORST;

	memset(c, 0, sizeof(*c));
	c->name = kind_name[k];
	c->nnodes = n;
	c->ntasks = (uint64_t)n * TASKS_PER_NODE;
	c->dist = k == SC_HOSTFILE || k == SC_ALL_WORST ? "arbitrary" : "block";
	if (items) {
		c->nodelist = list_items(n, k == SC_BRACKET_ITEMS, c->want_node, sizeof(c->want_node));
		snprintf(c->want_master, sizeof(c->want_master), "gpu000001");
	} else if (k == SC_COMPRESSED) {
		/* "gpu[00001-N-3],x[1-3]": the shape of the example */
		struct sbuf b = { 0 };

		c->nodelist = sb_add(&b, "gpu[%05u-%05u],x[1-3]", 1u, n - 3) < 0 ? NULL : b.s;
		snprintf(c->want_node, sizeof(c->want_node), "x3");
		snprintf(c->want_master, sizeof(c->want_master), "gpu00001");
	} else {
		c->nodelist = list_range(n);
		snprintf(c->want_node, sizeof(c->want_node), "gpu%06u", n);
		snprintf(c->want_master, sizeof(c->want_master), "gpu000001");
	}
	c->tpn = tpn_string(n, !tpn_plain, &c->want_local);
	if (!c->nodelist || !c->tpn)
		return rdzv_err(err, errlen, "out of memory building the inputs");
	if ((k == SC_HOSTFILE || k == SC_ALL_WORST) && write_hostfile(c, err, errlen) < 0)
		return -1;
	/* every input the task's computation reads: lists, and the hostfile */
	c->input_bytes += strlen(c->nodelist) + strlen(c->tpn);
	return memenv_init(&c->env, NULL) < 0 ? rdzv_err(err, errlen, "out of memory") : 0;
}

static void scale_free(struct scale_case *c)
{
	if (c->hostfile[0])
		unlink(c->hostfile);
	free(c->nodelist);
	free(c->tpn);
	memenv_destroy(&c->env);
}

struct scale_result {
	int ok;
	char err[ERRLEN];
	struct bench_stat s;
	size_t input_bytes, nodelist_bytes;
	long rss_before, rss_after;
	char rank[32];
};

/* Each case in its own process, so that its peak memory is its own. */
static int scale_one(enum scale_kind k, uint32_t n, struct scale_result *r)
{
	int fd[2];
	pid_t pid;
	ssize_t got;
	int status;

	memset(r, 0, sizeof(*r));
	if (pipe(fd) < 0)
		return -1;
	fflush(NULL);
	if ((pid = fork()) < 0)
		return -1;
	if (pid == 0) {
		struct scale_case c;
		struct scale_result me;

		close(fd[0]);
		memset(&me, 0, sizeof(me));
		if (scale_build(&c, k, n, me.err, sizeof(me.err)) == 0) {
			me.input_bytes = c.input_bytes;
			me.nodelist_bytes = strlen(c.nodelist);
			me.rss_before = bench_maxrss_kib();
			if (bench_time(scale_task, scale_reset, &c, batches, TARGET_US, &me.s, me.err,
			               sizeof(me.err)) == 0)
				me.ok = 1;
			me.rss_after = bench_maxrss_kib();
			snprintf(me.rank, sizeof(me.rank), "%s", c.got_rank);
		}
		scale_free(&c);
		if (write(fd[1], &me, sizeof(me)) != (ssize_t)sizeof(me))
			_exit(1);
		_exit(0);
	}
	close(fd[1]);
	got = read(fd[0], r, sizeof(*r));
	close(fd[0]);
	waitpid(pid, &status, 0);
	if (got != (ssize_t)sizeof(*r)) {
		snprintf(r->err, sizeof(r->err), "case process died (status %d)", status);
		r->ok = 0;
	}
	return 0;
}

static int cmd_scale(uint32_t max_nodes)
{
	static const uint32_t sizes[] = { 1000, 10000, 100000 };
	double base[SC_KINDS] = { 0 };
	int k, fails = 0;
	size_t i;

	printf("\n== Scale of the logic: one task's environment (last task of the last node), "
	       "%u tasks per node ==\n", TASKS_PER_NODE);
	printf("%-17s %8s %9s %10s %10s %10s %10s %7s %9s %8s\n", "input", "nodes", "tasks",
	       "in_bytes", "median_us", "min_us", "max_us", "x_1k", "rss_kib", "+rss_kib");
	for (k = 0; k < SC_KINDS; k++)
		for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			struct scale_result r;
			char extra[256], cfg[64];
			double ratio;

			if (sizes[i] > max_nodes)
				continue;
			if (scale_one((enum scale_kind)k, sizes[i], &r) < 0 || !r.ok) {
				printf("%-17s %8u  FAILED: %s\n", kind_name[k], sizes[i], r.err);
				fails++;
				continue;
			}
			if (i == 0)
				base[k] = r.s.median;
			ratio = base[k] > 0 ? r.s.median / base[k] : -1;
			printf("%-17s %8u %9llu %10zu %10.2f %10.2f %10.2f %7.1f %9ld %8ld%s\n",
			       kind_name[k], sizes[i], (unsigned long long)sizes[i] * TASKS_PER_NODE,
			       r.input_bytes, r.s.median, r.s.min, r.s.max, ratio, r.rss_after,
			       r.rss_after - r.rss_before,
			       r.nodelist_bytes >= PLUGIN_NODELIST_MAX ? "  (*)" : "");
			snprintf(cfg, sizeof(cfg), "nodes=%u", sizes[i]);
			snprintf(extra, sizeof(extra),
			         "tasks=%llu;input_bytes=%zu;nodelist_bytes=%zu;peak_rss_kib=%ld;"
			         "rss_growth_kib=%ld;calls_per_batch=%lu;rank=%s",
			         (unsigned long long)sizes[i] * TASKS_PER_NODE, r.input_bytes,
			         r.nodelist_bytes, r.rss_after, r.rss_after - r.rss_before, r.s.calls,
			         r.rank);
			bench_csv_row("scale", kind_name[k], cfg, &r.s, "us", ratio, extra);
		}
	printf("x_1k: median over the same input at 1,000 nodes. +rss_kib: peak RSS growth "
	       "while computing (inputs already built).\n"
	       "(*) SLURM_STEP_NODELIST of %d bytes or more: spank/remote.c's buffer refuses it "
	       "(\"missing or too long\").\n", PLUGIN_NODELIST_MAX);
	return fails ? -1 : 0;
}

/* ---- task: task_init's per-task work, and user_init's per-node work ---- */

struct task_ctx {
	int torch, profile, bind;
	struct rdzv_step st;
	struct rdzv_envset *prof;          /* resolved profile (user_init's) */
	struct rdzv_bind_table *tab;       /* the node's table (user_init's) */
	const char *step_visible;
	unsigned local;                    /* next local task */
	struct memenv env;
};

static int count_list(const char *s)
{
	int n = 1;

	if (!*s)
		return 0;
	for (; *s; s++)
		n += *s == ',';
	return n;
}

/* task_init of spank/remote.c, spank/profile.c and spank/bind.c for one
 * task, through the in-memory environment. */
static int task_init_work(void *ctx, char *err, size_t errlen)
{
	struct task_ctx *c = ctx;
	struct rdzv_env_ops ops = { env_get, env_set, env_unset, &c->env };
	struct rdzv_task t = { 0, 0, -1 };
	struct rdzv_envset *env = NULL;
	char visible[1024];
	size_t i;
	int have, isolated = 0, rv = -1;

	t.local_rank = c->local;
	t.rank = c->st.node_id * c->st.local_ntasks + c->local;
	have = env_get(&c->env, "CUDA_VISIBLE_DEVICES", visible, sizeof(visible));
	t.visible_gpus = have > 0 ? count_list(visible) : -1;
	if (!(env = rdzv_envset_create()))
		return rdzv_err(err, errlen, "out of memory");
	if (c->torch && rdzv_fill_torch(&c->st, &t, env, err, errlen) < 0)
		goto fail;
	for (i = 0; c->profile && i < c->prof->n; i++) {
		const struct rdzv_env_entry *e = &c->prof->v[i];

		if (rdzv_envset_add(env, e->name, e->value, e->policy, e->origin, err, errlen) < 0)
			goto fail;
	}
	if (c->bind) {
		enum rdzv_cpu_outcome oc;

		have = env_get(&c->env, "CUDA_VISIBLE_DEVICES", visible, sizeof(visible));
		if (rdzv_bind_fill(c->tab, t.local_rank, RDZV_BIND_AUTO, have > 0 ? visible : NULL,
		                   c->step_visible, env, &isolated, err, errlen) < 0
		    || rdzv_bind_apply_cpus(c->tab, t.local_rank, 1, &oc, err, errlen) < 0)
			goto fail;
	}
	if (rdzv_envset_apply(env, &ops, err, errlen) < 0)
		goto fail;
	rv = 0;
fail:
	rdzv_envset_destroy(env);
	return rv;
}

static void task_reset(void *ctx)
{
	struct task_ctx *c = ctx;

	memenv_reset(&c->env);
	c->local = (c->local + 1) % c->st.local_ntasks;
}

/* One sched_setaffinity to the mask the process already has: the real
 * (non dry-run) binding's extra system call. */
static int setaffinity_work(void *ctx, char *err, size_t errlen)
{
	cpu_set_t *set = ctx;

	if (sched_setaffinity(0, sizeof(*set), set) < 0)
		return rdzv_err(err, errlen, "sched_setaffinity failed");
	return 0;
}

struct node_ctx {
	const char *topology, *profiles, *profile, *master;
	char step_cpus[RDZV_CPULIST_MAX];
};

/* user_init's rendezvous part (spank/remote.c compute_step): this node's
 * name, rank 0's node and port as a node without srun's plan decides them
 * (rank0.h: the ephemeral range, the port), the master's one name lookup. */
static int node_rdzv_work(void *ctx, char *err, size_t errlen)
{
	struct node_ctx *c = ctx;
	struct rdzv_port_range range = { RDZV_DEFAULT_PORT_LO, RDZV_DEFAULT_PORT_HI };
	struct rdzv_rank0_in in;
	struct rdzv_rank0 r;
	char node[RDZV_HOST_MAX], addr[RDZV_HOST_MAX];
	char list[RDZV_HOST_MAX + 16];

	snprintf(list, sizeof(list), "%s,n[2-3]", c->master);
	memset(&in, 0, sizeof(in));
	in.nodelist = list;
	in.dist = "block";
	in.resv = "";
	in.job_id = 4242;
	in.nnodes = 3;
	in.node_id = 1;
	in.range = &range;
	in.ephemeral_path = "/proc/sys/net/ipv4/ip_local_port_range";
	in.cause = in.advice = "";
	if (rdzv_hostlist_nth(list, 1, node, sizeof(node), err, errlen) < 0
	    || rdzv_rank0_place(&in, &r, err, errlen) < 0
	    || rdzv_master_addr(r.host, RDZV_ADDR_NAME, addr, sizeof(addr), err, errlen) < 0)
		return -1;
	return 0;
}

static int resolve_profile(const char *dir, const char *name, struct rdzv_envset **out,
                           char *err, size_t errlen)
{
	struct rdzv_profile_dir d;
	struct rdzv_profile_pick pick;
	struct rdzv_profile_source src = { rdzv_profile_dir_read, &d };
	struct rdzv_envset *set = NULL;
	int rv = -1;

	if (rdzv_profile_dir_open(&d, dir, 0, err, errlen) < 0
	    || rdzv_profile_pick(NULL, NULL, name, NULL, &pick, err, errlen) < 0)
		return -1;
	if (!(set = rdzv_envset_create()))
		return rdzv_err(err, errlen, "out of memory");
	if (rdzv_profile_resolve(&pick, &src, set, NULL, err, errlen) < 0)
		goto fail;
	*out = set;
	set = NULL;
	rv = 0;
fail:
	rdzv_envset_destroy(set);
	return rv;
}

/* user_init's profile part: open the directory, pick, resolve. */
static int node_profile_work(void *ctx, char *err, size_t errlen)
{
	struct node_ctx *c = ctx;
	struct rdzv_envset *set = NULL;

	if (resolve_profile(c->profiles, c->profile, &set, err, errlen) < 0)
		return -1;
	rdzv_envset_destroy(set);
	return 0;
}

static int bind_table(const char *xml, const char *step_cpus, const char *hca_allow,
                      struct rdzv_bind_table **out, char *err, size_t errlen)
{
	struct rdzv_topo *t = NULL;
	struct rdzv_bind_req req = { 0 };
	int rv;

	if (rdzv_topo_load(xml, &t, err, errlen) < 0)
		return -1;
	req.step_gpus = "0,1,2,3";
	req.visible = "0,1,2,3";
	req.ntasks = 4;
	req.hca_allow = hca_allow;
	req.step_cpus = step_cpus;
	rv = rdzv_bind_compute(t, &req, out, err, errlen);
	rdzv_topo_destroy(t);
	return rv;
}

/* user_init's binding part: load the topology, compute the table. */
static int node_bind_work(void *ctx, char *err, size_t errlen)
{
	struct node_ctx *c = ctx;
	struct rdzv_bind_table *tab = NULL;
	char cpus[RDZV_CPULIST_MAX];

	if (rdzv_affinity_cpulist(cpus, sizeof(cpus), err, errlen) < 0
	    || bind_table(c->topology, cpus, NULL, &tab, err, errlen) < 0)
		return -1;
	rdzv_bind_table_destroy(tab);
	return 0;
}

/* user_init's binding part as the plugin runs it now: the model from
 * root's cache (primed once), each GPU's identity, the table. */
static char bind_cache[] = "/tmp/rdzv-bench-logic-cache.XXXXXX";

static int node_bind_cached_work(void *ctx, char *err, size_t errlen)
{
	struct node_ctx *c = ctx;
	struct rdzv_topo *t = NULL;
	struct rdzv_identity *id = NULL;
	struct rdzv_identity_req ireq = { NULL, "/etc/slurm/gres.conf", "n1" };
	struct rdzv_bind_req req = { 0 };
	struct rdzv_bind_table *tab = NULL;
	enum rdzv_cache_outcome how;
	char cpus[RDZV_CPULIST_MAX], note[512];
	int rv = -1;

	if (rdzv_affinity_cpulist(cpus, sizeof(cpus), err, errlen) < 0
	    || rdzv_topo_load_cached(c->topology, bind_cache, &t, &how, note, sizeof(note), err,
	                             errlen) < 0)
		return -1;
	if (how != RDZV_CACHE_HIT && how != RDZV_CACHE_WRITTEN) {
		rdzv_err(err, errlen, "cache %s: %s", rdzv_cache_outcome_name(how), note);
		goto fail;
	}
	if (rdzv_identity_read(t, &ireq, &id, err, errlen) < 0)
		goto fail;
	req.step_gpus = "0,1,2,3";
	req.visible = "0,1,2,3";
	req.ntasks = 4;
	req.step_cpus = cpus;
	req.ident = id;
	if (rdzv_bind_compute(t, &req, &tab, err, errlen) < 0)
		goto fail;
	rv = 0;
fail:
	rdzv_bind_table_destroy(tab);
	rdzv_identity_destroy(id);
	rdzv_topo_destroy(t);
	return rv;
}

static void print_row(const char *section, const char *kase, const char *config,
                      const struct bench_stat *s, double ratio, const char *extra)
{
	printf("%-40s %10.2f %10.2f %10.2f %8lu", config, s->median, s->min, s->max, s->calls);
	if (ratio >= 0)
		printf(" %8.2f", ratio);
	printf("\n");
	bench_csv_row(section, kase, config, s, "us", ratio, extra);
}

static int cmd_task(const char *topology, const char *profiles, const char *profile,
                    const char *master)
{
	static const struct {
		const char *name;
		int torch, profile, bind;
	} cfgs[] = {
		{ "off", 0, 0, 0 },
		{ "torch", 1, 0, 0 },
		{ "torch+profile", 1, 1, 0 },
		{ "torch+bind", 1, 0, 1 },
		{ "torch+bind+profile", 1, 1, 1 },
	};
	char err[ERRLEN], extra[256];
	struct task_ctx c;
	struct node_ctx nc;
	struct bench_stat s, base;
	cpu_set_t set;
	size_t i;
	int rv = -1;

	memset(&c, 0, sizeof(c));
	memset(&base, 0, sizeof(base));
	c.st.job_id = 4242;
	c.st.nnodes = 3;
	c.st.node_id = c.st.node_rank = 1;
	c.st.ntasks = 12;
	c.st.local_ntasks = 4;
	c.st.port = 29517;
	c.st.gpus_on_node = 4;
	snprintf(c.st.master_host, sizeof(c.st.master_host), "n1");
	snprintf(c.st.master_addr, sizeof(c.st.master_addr), "n1");
	c.step_visible = "0,1,2,3";
	if (memenv_init(&c.env, c.step_visible) < 0) {
		fprintf(stderr, "bench-logic: out of memory\n");
		return -1;
	}
	if (profiles && resolve_profile(profiles, profile, &c.prof, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench-logic: profile %s in %s: %s\n", profile, profiles, err);
		goto fail;
	}
	if (topology && bind_table(topology, NULL, c.prof && rdzv_envset_find(c.prof, "NCCL_IB_HCA")
	                           ? rdzv_envset_find(c.prof, "NCCL_IB_HCA")->value : NULL,
	                           &c.tab, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench-logic: topology %s: %s\n", topology, err);
		goto fail;
	}
	printf("\n== task_init: per-task work (mode fill, profile entries, binding row, "
	       "precedence apply into a %zu-variable environment) ==\n", c.env.base);
	printf("%-40s %10s %10s %10s %8s %8s\n", "config", "median_us", "min_us", "max_us",
	       "calls", "x_off");
	for (i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++) {
		if ((cfgs[i].profile && !c.prof) || (cfgs[i].bind && !c.tab))
			continue;
		c.torch = cfgs[i].torch;
		c.profile = cfgs[i].profile;
		c.bind = cfgs[i].bind;
		c.local = 0;
		if (bench_time(task_init_work, task_reset, &c, batches, TARGET_US, &s, err,
		               sizeof(err)) < 0) {
			fprintf(stderr, "bench-logic: task %s: %s\n", cfgs[i].name, err);
			goto fail;
		}
		if (i == 0)
			base = s;
		snprintf(extra, sizeof(extra), "profile=%s;topology=%s",
		         cfgs[i].profile ? profile : "", cfgs[i].bind ? topology : "");
		print_row("task_init", "per-task", cfgs[i].name, &s,
		          base.median > 0 ? s.median / base.median : -1, extra);
	}
	if (c.tab && sched_getaffinity(0, sizeof(set), &set) == 0) {
		if (bench_time(setaffinity_work, NULL, &set, batches, TARGET_US, &s, err,
		               sizeof(err)) < 0) {
			fprintf(stderr, "bench-logic: %s\n", err);
			goto fail;
		}
		print_row("task_init", "per-task", "+ sched_setaffinity (bind, not dry run)", &s, -1,
		          "");
	}

	printf("\n== user_init: once-per-node work ==\n");
	printf("%-40s %10s %10s %10s %8s\n", "part", "median_us", "min_us", "max_us", "calls");
	memset(&nc, 0, sizeof(nc));
	nc.topology = topology;
	nc.profiles = profiles;
	nc.profile = profile;
	nc.master = master;
	if (bench_time(node_rdzv_work, NULL, &nc, batches, TARGET_US, &s, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench-logic: user_init rendezvous (master %s): %s\n", master, err);
		goto fail;
	}
	snprintf(extra, sizeof(extra), "master=%s", master);
	print_row("user_init", "per-node", "rendezvous (master lookup + port)", &s, -1, extra);
	if (profiles) {
		if (bench_time(node_profile_work, NULL, &nc, batches, TARGET_US, &s, err,
		               sizeof(err)) < 0) {
			fprintf(stderr, "bench-logic: user_init profile: %s\n", err);
			goto fail;
		}
		snprintf(extra, sizeof(extra), "profile=%s", profile);
		print_row("user_init", "per-node", "profile (open dir + resolve)", &s, -1, extra);
	}
	if (topology) {
		if (bench_time(node_bind_work, NULL, &nc, batches, TARGET_US, &s, err,
		               sizeof(err)) < 0) {
			fprintf(stderr, "bench-logic: user_init binding: %s\n", err);
			goto fail;
		}
		snprintf(extra, sizeof(extra), "topology=%s", topology);
		print_row("user_init", "per-node", "binding (load XML + compute table)", &s, -1, extra);
		if (geteuid() == 0 && mkdtemp(bind_cache)) {
			char cmd[128];

			if (bench_time(node_bind_cached_work, NULL, &nc, batches, TARGET_US, &s, err,
			               sizeof(err)) < 0) {
				fprintf(stderr, "bench-logic: user_init binding (cached): %s\n", err);
				goto fail;
			}
			print_row("user_init", "per-node", "binding (cached model + identity + table)", &s,
			          -1, extra);
			snprintf(cmd, sizeof(cmd), "rm -rf %s", bind_cache);
			if (system(cmd) != 0)
				fprintf(stderr, "bench-logic: could not remove %s\n", bind_cache);
		}
	}
	rv = 0;
fail:
	rdzv_envset_destroy(c.prof);
	rdzv_bind_table_destroy(c.tab);
	memenv_destroy(&c.env);
	return rv;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: bench-logic scale [--csv FILE] [--max-nodes N]\n"
	           "       bench-logic task [--csv FILE] [--topology XML] [--profiles DIR "
	           "--profile NAME] [--node HOST]\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "csv", required_argument, NULL, 'c' },
		{ "max-nodes", required_argument, NULL, 'm' },
		{ "topology", required_argument, NULL, 't' },
		{ "profiles", required_argument, NULL, 'p' },
		{ "profile", required_argument, NULL, 'P' },
		{ "node", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmd, *csv = NULL, *topology = NULL, *profiles = NULL, *profile = NULL;
	const char *master = "localhost";
	uint64_t max_nodes = 100000;
	int c, rv;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	cmd = argv[1];
	optind = 2;
	while ((c = getopt_long(argc, argv, "c:m:t:p:P:n:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': csv = optarg; break;
		case 'm':
			if (rdzv_parse_u64(optarg, 1000, 100000, &max_nodes) < 0) {
				fprintf(stderr, "bench-logic: --max-nodes=%s: want 1000-100000\n", optarg);
				return 2;
			}
			break;
		case 't': topology = optarg; break;
		case 'p': profiles = optarg; break;
		case 'P': profile = optarg; break;
		case 'n': master = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc || (profiles && !profile)) {
		usage(stderr);
		return 2;
	}
	batches = bench_batches(7);
	if (bench_csv_open(csv) < 0) {
		fprintf(stderr, "bench-logic: cannot open %s\n", csv);
		return 2;
	}
	if (strcmp(cmd, "scale") == 0)
		rv = cmd_scale((uint32_t)max_nodes);
	else if (strcmp(cmd, "task") == 0)
		rv = cmd_task(topology, profiles, profile, master);
	else {
		usage(stderr);
		rv = -1;
	}
	bench_csv_close();
	fflush(stdout);
	return rv < 0 ? 1 : 0;
}
