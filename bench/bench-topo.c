/* SPDX-License-Identifier: GPL-2.0-or-later */
/* bench-topo: what binding costs per node and per task, for each real
 * topology given, with the code rdzv.so runs (lib/bind/topo.c, lib/bind/bindtable.c,
 * lib/bind/bindmode.c).
 *
 *   bench-topo [--csv FILE] [--tag TAG] XML...
 *
 * Per file:
 *   cold      load in a new process, the file dropped from the page cache
 *             first (posix_fadvise DONTNEED): a node's first step after boot
 *   new proc  load in a new process, file in the page cache: what every
 *             step's slurmstepd pays (the plugin keeps nothing between steps)
 *   repeat    load again in the same process (hwloc's and the allocator's
 *             state warm): the lower bound
 *   cached    the node model read from root's cache (topocache.h) instead
 *             of the XML, same process: what a step's slurmstepd pays once
 *             the node has the entry (root only; -1 otherwise)
 *   compute   the binding table for all the node's CUDA GPUs, one task each
 *   per task  a task's row: its variables (rdzv_bind_fill) and the CPU
 *             decision (rdzv_bind_apply_cpus, dry run)
 * helpers/rdzv-topo --bench N gives means of the same load, compute and
 * per-task work in one process. --tag names a variant run (an hwloc setting
 * in the environment, say) in the CSV rows. BENCH_BATCHES sets batches (default 7);
 * cold and new-process loads run max(5, batches) times each. */
#define _GNU_SOURCE
#include "config.h"

#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "bindmode.h"
#include "envset.h"
#include "topo.h"
#include "topocache.h"
#include "util.h"

#define ERRLEN 512
#define TARGET_US 20000.0
#define FRESH_MAX 64

struct topo_ctx {
	const char *xml;
	struct rdzv_topo *topo;
	struct rdzv_bind_req req;
	struct rdzv_bind_table *tab;
	size_t row;
	char gpus[1024];
};

static int all_gpus(size_t n, char *buf, size_t len)
{
	size_t i, used = 0;

	buf[0] = '\0';
	for (i = 0; i < n; i++) {
		int w = snprintf(buf + used, len - used, "%s%zu", i ? "," : "", i);

		if (w < 0 || (size_t)w >= len - used)
			return -1;
		used += (size_t)w;
	}
	return 0;
}

static int load_work(void *ctx, char *err, size_t errlen)
{
	struct topo_ctx *c = ctx;
	struct rdzv_topo *t = NULL;

	if (rdzv_topo_load(c->xml, &t, err, errlen) < 0)
		return -1;
	rdzv_topo_destroy(t);
	return 0;
}

static char cache_dir[] = "/tmp/rdzv-bench-cache.XXXXXX";

static int cached_work(void *ctx, char *err, size_t errlen)
{
	struct topo_ctx *c = ctx;
	struct rdzv_topo *t = NULL;
	enum rdzv_cache_outcome how;
	char note[512];

	if (rdzv_topo_load_cached(c->xml, cache_dir, &t, &how, note, sizeof(note), err, errlen) < 0)
		return -1;
	rdzv_topo_destroy(t);
	if (how != RDZV_CACHE_HIT)
		return rdzv_err(err, errlen, "cache %s: %s", rdzv_cache_outcome_name(how), note);
	return 0;
}

static int compute_work(void *ctx, char *err, size_t errlen)
{
	struct topo_ctx *c = ctx;
	struct rdzv_bind_table *tab = NULL;

	if (rdzv_bind_compute(c->topo, &c->req, &tab, err, errlen) < 0)
		return -1;
	rdzv_bind_table_destroy(tab);
	return 0;
}

static int task_work(void *ctx, char *err, size_t errlen)
{
	struct topo_ctx *c = ctx;
	struct rdzv_envset *env = rdzv_envset_create();
	enum rdzv_cpu_outcome oc;
	int isolated, rv = -1;

	if (!env)
		return rdzv_err(err, errlen, "out of memory");
	if (rdzv_bind_fill(c->tab, c->row, RDZV_BIND_AUTO, c->gpus[0] ? c->gpus : NULL,
	                   c->gpus[0] ? c->gpus : NULL, env, &isolated, err, errlen) == 0
	    && rdzv_bind_apply_cpus(c->tab, c->row, 1, &oc, err, errlen) == 0)
		rv = 0;
	rdzv_envset_destroy(env);
	c->row = (c->row + 1) % c->tab->nrows;
	return rv;
}

/* Drop the file's pages from the page cache (clean pages of a file nobody
 * maps go at once). Returns 0, or -1 when the kernel refused. */
static int drop_cache(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	if (fd < 0)
		return -1;
	rc = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
	return rc == 0 ? 0 : -1;
}

/* One load in a new process (after dropping the cache when cold): its
 * microseconds, or -1. The child is forked from this small process, so
 * hwloc has not run in it yet, as in a new slurmstepd. */
static double fresh_load(const char *xml, int cold)
{
	int fd[2], status;
	double us = -1;
	pid_t pid;

	if (pipe(fd) < 0)
		return -1;
	fflush(NULL);
	if ((pid = fork()) < 0) {
		close(fd[0]);
		close(fd[1]);
		return -1;
	}
	if (pid == 0) {
		struct rdzv_topo *t = NULL;
		char err[ERRLEN];
		double t0, dt = -1;

		close(fd[0]);
		if (!cold || drop_cache(xml) == 0) {
			t0 = bench_now_us();
			if (rdzv_topo_load(xml, &t, err, sizeof(err)) == 0)
				dt = bench_now_us() - t0;
			rdzv_topo_destroy(t);
		}
		if (write(fd[1], &dt, sizeof(dt)) != (ssize_t)sizeof(dt))
			_exit(1);
		_exit(0);
	}
	close(fd[1]);
	if (read(fd[0], &us, sizeof(us)) != (ssize_t)sizeof(us))
		us = -1;
	close(fd[0]);
	waitpid(pid, &status, 0);
	return us;
}

static int fresh_stats(const char *xml, int cold, unsigned n, struct bench_stat *s)
{
	double v[FRESH_MAX];
	unsigned i;

	for (i = 0; i < n && i < FRESH_MAX; i++)
		if ((v[i] = fresh_load(xml, cold)) < 0)
			return -1;
	bench_stat_of(v, i, s);
	s->calls = 1;
	return 0;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* "psmgmt__tests__hwloc__topo.jwb0004.xml" -> "jwb0004": the machine. */
static void short_name(const char *path, char *out, size_t len)
{
	const char *b = base_name(path), *s = strrchr(b, '_'), *dot;
	size_t n;

	s = s ? s + 1 : b;
	if (strncmp(s, "topo.", 5) == 0)
		s += 5;
	if (strcmp(s, "topology.xml") == 0) {
		/* aws-ofi-nccl's ".../p4d__topology.xml": the directory names it */
		const char *end = strstr(b, "__topology.xml"), *st = end;

		while (st > b && st[-1] != '_')
			st--;
		n = (size_t)(end - st);
		snprintf(out, len, "%.*s", (int)n, st);
		return;
	}
	dot = strrchr(s, '.');
	n = dot ? (size_t)(dot - s) : strlen(s);
	snprintf(out, len, "%.*s", (int)n, s);
}

static const char *tag; /* --tag, NULL: none */

static void row(const char *name, const char *what, const struct bench_stat *s,
                const char *unit, const char *extra)
{
	char config[128];

	snprintf(config, sizeof(config), "%s%s%s", what, tag ? "/" : "", tag ? tag : "");
	bench_csv_row("topology", name, config, s, unit, -1, extra);
}

static int one_file(const char *xml, unsigned batches)
{
	struct topo_ctx c;
	struct bench_stat cold, fresh, repeat, compute, task, cached = { 0 };
	struct stat st;
	char err[ERRLEN], name[64], extra[512];
	unsigned nfresh = batches > 5 ? batches : 5;
	size_t ngpus;
	int rv = -1, cold_ok;

	memset(&c, 0, sizeof(c));
	c.xml = xml;
	short_name(xml, name, sizeof(name));
	if (stat(xml, &st) < 0) {
		printf("%-12s cannot stat %s\n", name, xml);
		return -1;
	}
	cold_ok = fresh_stats(xml, 1, nfresh, &cold) == 0;
	if (fresh_stats(xml, 0, nfresh, &fresh) < 0) {
		printf("%-12s FAILED: cannot load in a new process\n", name);
		return -1;
	}
	if (bench_time(load_work, NULL, &c, batches, TARGET_US, &repeat, err, sizeof(err)) < 0
	    || rdzv_topo_load(xml, &c.topo, err, sizeof(err)) < 0)
		goto fail;
	ngpus = rdzv_topo_gpu_count(c.topo);
	cached.median = -1;
	if (geteuid() == 0) {
		struct rdzv_topo *t = NULL;
		enum rdzv_cache_outcome how;
		char note[512];

		/* Prime the entry (written as root), then time hits. */
		if (rdzv_topo_load_cached(xml, cache_dir, &t, &how, note, sizeof(note), err,
		                          sizeof(err)) < 0)
			goto fail;
		rdzv_topo_destroy(t);
		if (bench_time(cached_work, NULL, &c, batches, TARGET_US, &cached, err, sizeof(err)) < 0)
			goto fail;
	}
	if (all_gpus(ngpus, c.gpus, sizeof(c.gpus)) < 0) {
		snprintf(err, sizeof(err), "too many GPUs");
		goto fail;
	}
	c.req.step_gpus = c.gpus;
	c.req.ntasks = ngpus ? (unsigned)ngpus : 1;
	if (bench_time(compute_work, NULL, &c, batches, TARGET_US, &compute, err, sizeof(err)) < 0
	    || rdzv_bind_compute(c.topo, &c.req, &c.tab, err, sizeof(err)) < 0
	    || bench_time(task_work, NULL, &c, batches, TARGET_US, &task, err, sizeof(err)) < 0)
		goto fail;
	printf("%-12s %6lld %4zu %4zu %9.0f %9.0f %9.0f %9.0f %9.0f %9.2f\n", name,
	       (long long)st.st_size / 1024, ngpus, rdzv_topo_nic_count(c.topo),
	       cold_ok ? cold.median : -1.0, fresh.median, repeat.median, cached.median,
	       compute.median, task.median);
	snprintf(extra, sizeof(extra), "file=%s;kib=%lld;gpus=%zu;nics=%zu;tasks=%u",
	         base_name(xml), (long long)st.st_size / 1024, ngpus, rdzv_topo_nic_count(c.topo),
	         c.req.ntasks);
	if (cold_ok)
		row(name, "load-cold", &cold, "us", extra);
	row(name, "load-new-process", &fresh, "us", extra);
	row(name, "load-repeat", &repeat, "us", extra);
	if (cached.median >= 0)
		row(name, "load-cached", &cached, "us", extra);
	row(name, "compute", &compute, "us", extra);
	row(name, "per-task", &task, "us", extra);
	rv = 0;
fail:
	if (rv < 0)
		printf("%-12s FAILED: %s\n", name, err);
	rdzv_bind_table_destroy(c.tab);
	rdzv_topo_destroy(c.topo);
	return rv;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "csv", required_argument, NULL, 'c' },
		{ "tag", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *csv = NULL;
	unsigned batches;
	int c, i, fails = 0;

	while ((c = getopt_long(argc, argv, "c:t:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			csv = optarg;
			break;
		case 't':
			tag = optarg;
			break;
		case 'h':
			printf("usage: bench-topo [--csv FILE] [--tag TAG] XML...\n");
			return 0;
		default:
			fprintf(stderr, "usage: bench-topo [--csv FILE] [--tag TAG] XML...\n");
			return 2;
		}
	}
	if (optind == argc) {
		fprintf(stderr, "usage: bench-topo [--csv FILE] [--tag TAG] XML...\n");
		return 2;
	}
	batches = bench_batches(7);
	if (bench_csv_open(csv) < 0) {
		fprintf(stderr, "bench-topo: cannot open %s\n", csv);
		return 2;
	}
	printf("\n== Topology%s%s: load and binding table per node, row per task (microseconds, "
	       "medians) ==\n", tag ? ", " : "", tag ? tag : "");
	printf("%-12s %6s %4s %4s %9s %9s %9s %9s %9s %9s\n", "machine", "KiB", "gpus", "nics",
	       "cold", "new_proc", "repeat", "cached", "compute", "per_task");
	if (geteuid() == 0 && !mkdtemp(cache_dir)) {
		fprintf(stderr, "bench-topo: cannot make %s\n", cache_dir);
		return 2;
	}
	for (i = optind; i < argc; i++)
		fails += one_file(argv[i], batches) < 0;
	if (geteuid() == 0) {
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", cache_dir);
		if (system(cmd) != 0)
			fprintf(stderr, "bench-topo: could not remove %s\n", cache_dir);
	}
	printf("cold: new process, file dropped from the page cache; new_proc: new process "
	       "(each step's slurmstepd without the cache); repeat: same process; cached: the model "
	       "from root's cache; compute: table for all GPUs, one "
	       "task each; per_task: a task's variables and CPU decision.\n");
	bench_csv_close();
	return fails ? 1 : 0;
}
