/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rdzv-topo: print the binding table the plugin computes for a node, from
 * the live machine or an hwloc XML file, for a given set of the step's GPUs
 * and a task count. Same code as rdzv.so (lib/bind/topo.c, lib/bind/bindtable.c).
 *
 *   rdzv-topo [--input FILE.xml] [--gpus all|LIST] [--visible LIST]
 *             [--tasks N] [--hca-allow LIST] [--cpus LIST] [--list] [--bench N]
 *             [--identity] [--root DIR] [--gres-conf FILE] [--node NAME]
 *             [--task-visible I=LIST]... [--cache DIR] */
#define _GNU_SOURCE
#include "config.h"

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bindmode.h"
#include "envset.h"
#include "identity.h"
#include "topocache.h"
#include "topo.h"
#include "util.h"

#define LINE_MAX_ 4096

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: rdzv-topo [OPTIONS]\n"
	        "Print each task's GPU, NICs and CPUs as rdzv.so --rdzv-bind computes them.\n"
	        "  -i, --input FILE     hwloc XML topology (default: this machine)\n"
	        "  -g, --gpus LIST      the step's GPUs, node indices in PCI bus-id order, as\n"
	        "                       SLURM_STEP_GPUS (default: all; 'none' for a CPU-only step)\n"
	        "  -v, --visible LIST   the step's CUDA_VISIBLE_DEVICES (default: same as --gpus)\n"
	        "  -n, --tasks N        tasks on the node (default: one per GPU)\n"
	        "  -a, --hca-allow LIST NCCL_IB_HCA-syntax allow-list (a profile's)\n"
	        "  -c, --cpus LIST      the step's CPUs (default: the topology's allowed CPUs)\n"
	        "  -l, --list           also list the node's GPUs and NIC ports\n"
	        "  -b, --bench N        time N loads+computes and the per-task work\n"
	        "  -I, --identity       map Slurm's GPU numbers to PCI devices through gres.conf,\n"
	        "                       the device minors and /proc/driver/nvidia (default: by\n"
	        "                       position) and print, per GPU, how it was established\n"
	        "  -r, --root DIR       read /proc and /sys under DIR (-I; a fixture tree)\n"
	        "  -G, --gres-conf FILE Slurm's gres.conf (default /etc/slurm/gres.conf)\n"
	        "  -N, --node NAME      this node's Slurm name, for NodeName= (default: hostname)\n"
	        "  -t, --task-visible I=LIST  task I's own CUDA_VISIBLE_DEVICES (Slurm's\n"
	        "                       --gpus-per-task, --gpu-bind); prints the row it uses\n"
	        "  -C, --cache DIR      read (and as root write) the node model cache in DIR\n"
	        "  -D, --task-cgroup I  task I's GPUs from the devices cgroup (v1) that\n"
	        "                       --root's proc/self/cgroup names; prints its row\n"
	        "  -h, --help\n"
	        "  --version\n");
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* The per-task work of task_init without touching this process: fill the
 * row's variables and decide (dry run) the CPU binding. */
static int task_work(const struct rdzv_bind_table *tab, size_t i, char *err, size_t errlen)
{
	struct rdzv_envset *env = rdzv_envset_create();
	enum rdzv_cpu_outcome oc;
	int isolated, rv = -1;

	if (!env)
		return rdzv_err(err, errlen, "out of memory");
	if (rdzv_bind_fill(tab, i, RDZV_BIND_AUTO | RDZV_BIND_ISOLATE, NULL, NULL, env, &isolated,
	                   err, errlen) == 0
	    && rdzv_bind_apply_cpus(tab, i, 1, &oc, err, errlen) == 0)
		rv = 0;
	rdzv_envset_destroy(env);
	return rv;
}

static int bench(const char *input, const struct rdzv_bind_req *req, long reps)
{
	char err[512];
	double t0, load = 0, compute = 0, task = 0;
	size_t ntask = 0;
	long r;

	for (r = 0; r < reps; r++) {
		struct rdzv_topo *t = NULL;
		struct rdzv_bind_table *tab = NULL;
		size_t i;

		t0 = now_us();
		if (rdzv_topo_load(input, &t, err, sizeof(err)) < 0)
			goto fail;
		load += now_us() - t0;
		t0 = now_us();
		if (rdzv_bind_compute(t, req, &tab, err, sizeof(err)) < 0) {
			rdzv_topo_destroy(t);
			goto fail;
		}
		compute += now_us() - t0;
		rdzv_topo_destroy(t);
		t0 = now_us();
		for (i = 0; i < tab->nrows; i++)
			if (task_work(tab, i, err, sizeof(err)) < 0) {
				rdzv_bind_table_destroy(tab);
				goto fail;
			}
		task += now_us() - t0;
		ntask += tab->nrows;
		rdzv_bind_table_destroy(tab);
	}
	printf("bench %s: load %.0f us, compute %.0f us, per task %.2f us (%ld runs)\n",
	       input ? input : "(live)", load / (double)reps, compute / (double)reps,
	       ntask ? task / (double)ntask : 0.0, reps);
	return 0;
fail:
	fprintf(stderr, "rdzv-topo: %s\n", err);
	return -1;
}

/* All of Slurm's GPU numbers on the node: "0,...,n-1" of the gres list. */
static int slurm_gpu_list(const struct rdzv_identity *id, char *buf, size_t len)
{
	size_t i, used = 0;

	buf[0] = '\0';
	for (i = 0; i < id->n; i++) {
		int w = snprintf(buf + used, len - used, "%s%zu", i ? "," : "", i);

		if (w < 0 || (size_t)w >= len - used)
			return -1;
		used += (size_t)w;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "gpus", required_argument, NULL, 'g' },
		{ "visible", required_argument, NULL, 'v' },
		{ "tasks", required_argument, NULL, 'n' },
		{ "hca-allow", required_argument, NULL, 'a' },
		{ "cpus", required_argument, NULL, 'c' },
		{ "list", no_argument, NULL, 'l' },
		{ "bench", required_argument, NULL, 'b' },
		{ "identity", no_argument, NULL, 'I' },
		{ "root", required_argument, NULL, 'r' },
		{ "gres-conf", required_argument, NULL, 'G' },
		{ "node", required_argument, NULL, 'N' },
		{ "task-visible", required_argument, NULL, 't' },
		{ "cache", required_argument, NULL, 'C' },
		{ "task-cgroup", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *input = NULL, *gpus = "all";
	/* AMD nodes: what their tasks would get (the plugin binds NVIDIA only yet) */
	struct rdzv_bind_req req = { .amd = 1 };
	struct rdzv_topo *t = NULL;
	struct rdzv_bind_table *tab = NULL;
	char err[512], line[LINE_MAX_], allbuf[LINE_MAX_];
	uint64_t ntasks = 0, reps = 0;
	int c, list = 0, rv = 1, identity = 0;
	size_t i;
	struct rdzv_identity_req ireq = { NULL, "/etc/slurm/gres.conf", NULL };
	struct rdzv_identity *ident = NULL;
	const char *taskvis[64];
	size_t ntaskvis = 0;
	const char *cache = NULL;
	enum rdzv_cache_outcome how = RDZV_CACHE_OFF;
	char node[256] = "", note[512] = "";
	uint64_t cgtask = 0;
	int want_cg = 0;

	while ((c = getopt_long(argc, argv, "i:g:v:n:a:c:lb:Ir:G:N:t:C:D:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			input = optarg;
			break;
		case 'g':
			gpus = optarg;
			break;
		case 'v':
			req.visible = optarg;
			break;
		case 'n':
			if (rdzv_parse_u64(optarg, 1, 4096, &ntasks) < 0) {
				fprintf(stderr, "rdzv-topo: --tasks=%s: want 1-4096\n", optarg);
				return 2;
			}
			break;
		case 'a':
			req.hca_allow = optarg;
			break;
		case 'c':
			req.step_cpus = optarg;
			break;
		case 'l':
			list = 1;
			break;
		case 'b':
			if (rdzv_parse_u64(optarg, 1, 1000000, &reps) < 0) {
				fprintf(stderr, "rdzv-topo: --bench=%s: want 1-1000000\n", optarg);
				return 2;
			}
			break;
		case 'I':
			identity = 1;
			break;
		case 'r':
			ireq.root = optarg;
			break;
		case 'G':
			ireq.gres_conf = optarg;
			break;
		case 'N':
			ireq.node = optarg;
			break;
		case 't':
			if (ntaskvis == sizeof(taskvis) / sizeof(taskvis[0]) || !strchr(optarg, '=')) {
				fprintf(stderr, "rdzv-topo: --task-visible=%s: want I=LIST (at most 64)\n",
				        optarg);
				return 2;
			}
			taskvis[ntaskvis++] = optarg;
			break;
		case 'C':
			cache = optarg;
			break;
		case 'D':
			if (rdzv_parse_u64(optarg, 0, 4095, &cgtask) < 0) {
				fprintf(stderr, "rdzv-topo: --task-cgroup=%s: want a task index\n", optarg);
				return 2;
			}
			want_cg = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			rdzv_print_version("rdzv-topo");
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	if (rdzv_topo_load_cached(input, cache, &t, &how, note, sizeof(note), err, sizeof(err)) < 0)
		goto fail;
	if (cache)
		printf("cache: %s%s%s\n", rdzv_cache_outcome_name(how), note[0] ? ": " : "", note);
	if (identity) {
		if (!ireq.node && gethostname(node, sizeof(node) - 1) == 0)
			ireq.node = node;
		if (rdzv_identity_read(t, &ireq, &ident, err, sizeof(err)) < 0)
			goto fail;
		req.ident = ident;
		printf("identity: %s%s\n", ident->positional ? "by position: " : "",
		       ident->why);
		for (i = 0; i < rdzv_topo_gpu_count(t); i++)
			if (rdzv_identity_format(ident, i, line, sizeof(line)) == 0)
				printf("gpu %zu %s: %s\n", i, rdzv_topo_gpu_busid(t, i), line);
	}
	if (strcmp(gpus, "all") == 0) {
		if ((ident ? slurm_gpu_list(ident, allbuf, sizeof(allbuf))
	           : rdzv_topo_gpu_list(t, allbuf, sizeof(allbuf))) < 0) {
			snprintf(err, sizeof(err), "too many GPUs");
			goto fail;
		}
		req.step_gpus = allbuf;
	} else if (strcmp(gpus, "none") != 0) {
		req.step_gpus = gpus;
	}
	if (!ntasks) {
		/* One task per step GPU, at least one. */
		ntasks = 1;
		if (req.step_gpus && *req.step_gpus)
			for (ntasks = 1, i = 0; req.step_gpus[i]; i++)
				ntasks += req.step_gpus[i] == ',';
	}
	req.ntasks = (unsigned)ntasks;
	if (list) {
		for (i = 0; rdzv_topo_format_gpu(t, i, line, sizeof(line)) == 0; i++)
			printf("%s\n", line);
		for (i = 0; rdzv_topo_format_nic(t, i, line, sizeof(line)) == 0; i++)
			printf("%s\n", line);
	}
	if (rdzv_bind_compute(t, &req, &tab, err, sizeof(err)) < 0)
		goto fail;
	if (rdzv_bind_format_node(tab, line, sizeof(line)) == 0)
		printf("%s\n", line);
	for (i = 0; i < tab->nrows; i++)
		if (rdzv_bind_format_row(tab, i, line, sizeof(line)) == 0)
			printf("%s\n", line);
	for (i = 0; i < ntaskvis; i++) {
		const struct rdzv_bind_row *r;
		enum rdzv_task_row tr;
		char why[512];
		uint64_t ti;
		const char *eq = strchr(taskvis[i], '=');
		char num[16];

		snprintf(num, sizeof(num), "%.*s", (int)(eq - taskvis[i]), taskvis[i]);
		if (rdzv_parse_u64(num, 0, 4095, &ti) < 0 || ti >= tab->nrows) {
			snprintf(err, sizeof(err), "--task-visible=%s: no task %s", taskvis[i], num);
			goto fail;
		}
		r = rdzv_bind_task_row(tab, (size_t)ti, eq + 1, ident, 0, &tr, why, sizeof(why));
		if (!r) {
			printf("task %s visible %s: skipped: %s\n", num, eq + 1, why);
			continue;
		}
		printf("task %s visible %s: gpu %d %s, UCX_NET_DEVICES%s%s, cpus %s%s%s\n", num, eq + 1,
		       r->gpu, r->busid, r->ucx[0] ? "=" : " ", r->ucx[0] ? r->ucx : "unset", r->cpus,
		       why[0] ? "; " : "", why);
	}
	if (want_cg) {
		int g[64];
		size_t ng = ident ? rdzv_identity_cgroup_gpus(ident, ireq.root, g, 64) : 0;
		const struct rdzv_bind_row *r = NULL;
		enum rdzv_task_row tr;
		char why[512] = "no devices cgroup with NVIDIA minors (or no --identity)";

		if (cgtask >= tab->nrows) {
			snprintf(err, sizeof(err), "--task-cgroup=%llu: no such task",
			         (unsigned long long)cgtask);
			goto fail;
		}
		if (ng)
			r = rdzv_bind_task_row_gpus(tab, (size_t)cgtask, g, ng, &tr, why, sizeof(why));
		if (!r)
			printf("task %llu cgroup: skipped: %s\n", (unsigned long long)cgtask, why);
		else
			printf("task %llu cgroup: gpu %d %s, UCX_NET_DEVICES%s%s, cpus %s%s%s\n",
			       (unsigned long long)cgtask, r->gpu, r->busid, r->ucx[0] ? "=" : " ",
			       r->ucx[0] ? r->ucx : "unset", r->cpus, why[0] ? "; " : "", why);
	}
	if (reps && bench(input, &req, (long)reps) < 0)
		goto done;
	rv = 0;
	goto done;
fail:
	fprintf(stderr, "rdzv-topo: %s\n", err);
done:
	rdzv_bind_table_destroy(tab);
	rdzv_identity_destroy(ident);
	rdzv_topo_destroy(t);
	return rv;
}
