/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rdzv-hostfile: write a DeepSpeed hostfile ("host slots=N" per line) for
 * the current Slurm allocation, for users who keep the `deepspeed` launcher
 * (which reads --hostfile, default /job/hostfile, and fans out over ssh or
 * pdsh). With --rdzv=deepspeed no hostfile is needed at all.
 *
 *   rdzv-hostfile [-o FILE] [--slots=auto|gpus|tasks|N] [--nodelist=LIST]
 *
 * Nodes: --nodelist, else SLURM_STEP_NODELIST (inside a step), else
 * SLURM_JOB_NODELIST (a batch script or salloc shell). Host lists are read
 * with lib/step/hostlist.h, never expanded whole.
 * Slots per node:
 *   gpus   SLURM_GPUS_PER_NODE ("8", "h100:8", "a100:2,v100:1": the counts
 *          summed), else the GPUs Slurm gave on this node (SLURM_STEP_GPUS,
 *          SLURM_JOB_GPUS, then CUDA_VISIBLE_DEVICES), taken for every node:
 *          Slurm exports no other node's GPU list, so allocations with
 *          different GPU counts per node need --gpus-per-node;
 *   tasks  SLURM_STEP_TASKS_PER_NODE, else SLURM_TASKS_PER_NODE ("8(x2),4"),
 *          node by node (lib/step/layout.h);
 *   auto   gpus when any GPU source exists, else tasks, else 1 (default);
 *   N      the same number everywhere.
 * Exit status: 0, 1 (a source is missing or malformed: the message names
 * it), 2 (usage). */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"
#include "layout.h"
#include "util.h"

#define PROG "rdzv-hostfile"
#define ERRLEN 512
#define SLOTS_MAX 1000000u

enum slots_kind { SLOTS_AUTO, SLOTS_GPUS, SLOTS_TASKS, SLOTS_FIXED };

static void usage(FILE *f)
{
	fprintf(f, "usage: " PROG " [-o FILE] [--slots=auto|gpus|tasks|N] [--nodelist=LIST]\n"
	        "Writes a DeepSpeed hostfile (\"host slots=N\" per node) for this Slurm "
	        "allocation.\n"
	        "  -o, --output FILE   write to FILE instead of standard output\n"
	        "  -s, --slots WHAT    auto (GPUs, else tasks, else 1), gpus, tasks, or a number\n"
	        "  -n, --nodelist LIST nodes to use instead of SLURM_STEP_NODELIST or "
	        "SLURM_JOB_NODELIST\n"
	        "  -h, --help          this text\n"
	        "  --version           the release (spank-rdzv's), then exit\n");
}

static const char *env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

/* Entries of a comma list ("0,1,3"), or -1 when empty. */
static long count_list(const char *s)
{
	long n = 1;

	if (!s || !*s)
		return -1;
	for (; *s; s++)
		n += *s == ',';
	return n;
}

/* SLURM_GPUS_PER_NODE: comma-separated "[type:]count" items (the form of
 * --gpus-per-node); the counts are summed. Returns 0 or -1. */
static int parse_gpus_per_node(const char *s, uint64_t *total, char *err, size_t errlen)
{
	uint64_t sum = 0;

	while (*s) {
		size_t n = strcspn(s, ",");
		const char *colon = memchr(s, ':', n), *num = s;
		uint64_t v;

		while (colon) { /* the count follows the last ':' of the item */
			num = colon + 1;
			colon = memchr(num, ':', n - (size_t)(num - s));
		}
		if (rdzv_parse_u64n(num, n - (size_t)(num - s), 0, SLOTS_MAX, &v) < 0)
			return rdzv_err(err, errlen, "SLURM_GPUS_PER_NODE='%.64s': '%.*s' has no GPU "
			                "count", s, (int)(n > 32 ? 32 : n), s);
		sum += v;
		s += n;
		if (*s == ',')
			s++;
	}
	if (sum == 0 || sum > SLOTS_MAX)
		return rdzv_err(err, errlen, "SLURM_GPUS_PER_NODE gives %llu GPUs per node",
		                (unsigned long long)sum);
	*total = sum;
	return 0;
}

/* GPUs per node, when some source says. Returns 1 (found), 0 (no source)
 * or -1 (a malformed source). */
static int gpus_per_node(uint64_t *n, char *err, size_t errlen)
{
	static const char *const lists[] = { "SLURM_STEP_GPUS", "SLURM_JOB_GPUS",
	                                     "CUDA_VISIBLE_DEVICES" };
	size_t i;

	if (env("SLURM_GPUS_PER_NODE")) {
		return parse_gpus_per_node(env("SLURM_GPUS_PER_NODE"), n, err, errlen) < 0 ? -1 : 1;
	}
	for (i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		long c = count_list(env(lists[i]));

		if (c > 0) {
			*n = (uint64_t)c;
			return 1;
		}
	}
	return 0;
}

static int write_hostfile(FILE *out, const char *nodes, enum slots_kind kind, uint64_t fixed,
                          char *err, size_t errlen)
{
	const char *tpn = env("SLURM_STEP_TASKS_PER_NODE");
	const char *tpn_name = "SLURM_STEP_TASKS_PER_NODE";
	char host[RDZV_HOST_MAX], sub[ERRLEN];
	uint64_t gpus = 0, tasks_total;
	uint32_t tpn_nodes;
	long count, i;
	int rc;

	if ((count = rdzv_hostlist_count(nodes, sub, sizeof(sub))) < 0)
		return rdzv_err(err, errlen, "node list '%.64s': %s", nodes, sub);
	if (count == 0)
		return rdzv_err(err, errlen, "node list '%.64s' names no node", nodes);
	if (!tpn) {
		tpn = env("SLURM_TASKS_PER_NODE");
		tpn_name = "SLURM_TASKS_PER_NODE";
	}
	if (kind == SLOTS_AUTO || kind == SLOTS_GPUS) {
		if ((rc = gpus_per_node(&gpus, err, errlen)) < 0)
			return -1;
		if (rc == 0 && kind == SLOTS_GPUS)
			return rdzv_err(err, errlen, "--slots=gpus: no GPUs in the allocation (none "
			                "of SLURM_GPUS_PER_NODE, SLURM_STEP_GPUS, SLURM_JOB_GPUS, "
			                "CUDA_VISIBLE_DEVICES is set)");
		if (rc > 0 || !tpn) {
			fixed = rc > 0 ? gpus : 1;
			kind = SLOTS_FIXED;
		} else {
			kind = SLOTS_TASKS;
		}
	}
	if (kind == SLOTS_TASKS) {
		if (!tpn)
			return rdzv_err(err, errlen, "--slots=tasks: neither SLURM_STEP_TASKS_PER_NODE "
			                "nor SLURM_TASKS_PER_NODE is set");
		if (rdzv_tpn_totals(tpn, &tpn_nodes, &tasks_total, sub, sizeof(sub)) < 0)
			return rdzv_err(err, errlen, "%s='%.64s': %s", tpn_name, tpn, sub);
		if ((long)tpn_nodes != count)
			return rdzv_err(err, errlen, "%s='%.64s' describes %u nodes, but the node list "
			                "'%.64s' has %ld", tpn_name, tpn, tpn_nodes, nodes, count);
	}
	for (i = 0; i < count; i++) {
		uint64_t slots = fixed;

		if (rdzv_hostlist_nth(nodes, (size_t)i, host, sizeof(host), sub, sizeof(sub)) < 0)
			return rdzv_err(err, errlen, "node list '%.64s': %s", nodes, sub);
		if (kind == SLOTS_TASKS) {
			uint32_t t;

			if (rdzv_tpn_tasks_on(tpn, (uint32_t)i, &t, sub, sizeof(sub)) < 0)
				return rdzv_err(err, errlen, "%s: %s", tpn_name, sub);
			slots = t;
		}
		if (fprintf(out, "%s slots=%llu\n", host, (unsigned long long)slots) < 0)
			return rdzv_err(err, errlen, "write error: %s", strerror(errno));
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "slots", required_argument, NULL, 's' },
		{ "nodelist", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *output = NULL, *nodes = NULL;
	enum slots_kind kind = SLOTS_AUTO;
	uint64_t fixed = 0;
	char err[ERRLEN];
	FILE *out = stdout;
	int c;

	while ((c = getopt_long(argc, argv, "o:s:n:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 'n':
			nodes = optarg;
			break;
		case 's':
			if (strcmp(optarg, "auto") == 0)
				kind = SLOTS_AUTO;
			else if (strcmp(optarg, "gpus") == 0)
				kind = SLOTS_GPUS;
			else if (strcmp(optarg, "tasks") == 0)
				kind = SLOTS_TASKS;
			else if (rdzv_parse_u64(optarg, 1, SLOTS_MAX, &fixed) == 0)
				kind = SLOTS_FIXED;
			else {
				fprintf(stderr, PROG ": --slots=%s: expected auto, gpus, tasks or a "
				        "number from 1 to %u\n", optarg, SLOTS_MAX);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			rdzv_print_version("rdzv-hostfile");
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, PROG ": unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (!nodes && !(nodes = env("SLURM_STEP_NODELIST")) && !(nodes = env("SLURM_JOB_NODELIST"))) {
		fprintf(stderr, PROG ": no node list: run inside a Slurm allocation (sbatch, salloc, "
		        "srun) or pass --nodelist\n");
		return 1;
	}
	if (output && !(out = fopen(output, "w"))) {
		fprintf(stderr, PROG ": %s: %s\n", output, strerror(errno));
		return 1;
	}
	if (write_hostfile(out, nodes, kind, fixed, err, sizeof(err)) < 0) {
		fprintf(stderr, PROG ": %s\n", err);
		if (output) {
			fclose(out);
			remove(output);
		}
		return 1;
	}
	if ((output ? fclose(out) : fflush(out)) != 0) {
		fprintf(stderr, PROG ": %s: %s\n", output ? output : "standard output",
		        strerror(errno));
		return 1;
	}
	return 0;
}
