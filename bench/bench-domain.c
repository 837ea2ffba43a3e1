/* SPDX-License-Identifier: GPL-2.0-or-later */
/* bench-domain.c: what nvlink_domain=block costs, for steps of one
 * NVL72 rack to a 3000-rack machine (18 nodes a rack, 4 tasks a node):
 *   srun   Slurm's block text read into the step's domain map
 *          (rdzv_domains_from_blocks), the map's text for the nodes
 *          (rdzv_domains_format) and Megatron's TP=72 groups checked by domain
 *          (rdzv_domain_check_groups): once per step, in srun;
 *   node   the map parsed and the node's place in its domain found
 *          (rdzv_domains_parse + rdzv_domain_place): once per node per step.
 * srun's slurmctld look-up itself (slurm_load_topo) is timed inside srun by
 * --rdzv-verbose (the layout line) and by run-bench.sh's layout part.
 * Usage: bench-domain [--csv FILE] */
#include "config.h"
#include "bench.h"
#include "domain.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PER_RACK 18
#define TPN 4
#define TARGET_US 200000.0

struct ctx {
	char *blocks, list[64], *map, order[4], tpn[32];
	uint32_t nnodes, *rank_node;
};

static int srun_work(void *p, char *err, size_t errlen)
{
	struct ctx *c = p;
	struct rdzv_domains d;
	int rc;

	if (rdzv_domains_from_blocks(c->blocks, c->list, &d, err, errlen) < 0)
		return -1;
	free(c->map);
	rc = rdzv_domains_text(1, 2, &d, &c->map, err, errlen);
	if (rc == 0)
		rc = rdzv_domain_check_groups(&d, c->nnodes * TPN, c->rank_node, NULL, 1,
		                              PER_RACK * TPN, "TP=72", err, errlen);
	rdzv_domains_free(&d);
	if (rc < 0 && !err[0])
		snprintf(err, errlen, "the map does not fit");
	return rc;
}

static int node_work(void *p, char *err, size_t errlen)
{
	struct ctx *c = p;
	struct rdzv_domains d;
	uint32_t job, step, size, base, nodes;
	int rc;

	if (rdzv_domains_parse(c->map, c->nnodes, &job, &step, &d, err, errlen) < 0)
		return -1;
	rc = rdzv_domain_place(&d, c->nnodes - 1, c->order, c->tpn, &size, &base, &nodes, err,
	                       errlen);
	rdzv_domains_free(&d);
	return rc;
}

int main(int argc, char **argv)
{
	static const uint32_t racks[] = { 1, 8, 64, 1024, 3000 };
	unsigned batches = bench_batches(7);
	size_t i;

	if (argc == 3 && strcmp(argv[1], "--csv") == 0)
		bench_csv_open(argv[2]);
	printf("%-8s %8s %8s  %14s  %14s\n", "racks", "nodes", "tasks", "srun (ms)", "node (ms)");
	for (i = 0; i < sizeof(racks) / sizeof(racks[0]); i++) {
		struct ctx c;
		struct bench_stat s1, s2;
		char err[512] = "", extra[64];
		size_t cap = (size_t)racks[i] * 100 + 64, used = 0;
		uint32_t r, t;

		memset(&c, 0, sizeof(c));
		c.nnodes = racks[i] * PER_RACK;
		c.blocks = malloc(cap);
		c.rank_node = malloc((size_t)c.nnodes * TPN * sizeof(uint32_t));
		if (!c.blocks || !c.rank_node)
			return 1;
		for (r = 0; r < racks[i]; r++)
			used += (size_t)snprintf(c.blocks + used, cap - used, "BlockName=rack%u "
			                         "BlockIndex=%u Nodes=gb[%05u-%05u] BlockSize=%u\n", r, r,
			                         r * PER_RACK + 1, r * PER_RACK + PER_RACK, PER_RACK);
		snprintf(c.list, sizeof(c.list), "gb[%05u-%05u]", 1u, c.nnodes);
		snprintf(c.tpn, sizeof(c.tpn), "%u(x%u)", TPN, c.nnodes);
		for (t = 0; t < c.nnodes * TPN; t++)
			c.rank_node[t] = t / TPN;
		if (bench_time(srun_work, NULL, &c, batches, TARGET_US, &s1, err, sizeof(err)) < 0
		    || bench_time(node_work, NULL, &c, batches, TARGET_US, &s2, err, sizeof(err)) < 0) {
			fprintf(stderr, "bench-domain: %u racks: %s\n", racks[i], err);
			return 1;
		}
		printf("%-8u %8u %8u  %14.3f  %14.3f\n", racks[i], c.nnodes, c.nnodes * TPN,
		       s1.median / 1000, s2.median / 1000);
		snprintf(extra, sizeof(extra), "nodes=%u;tasks=%u", c.nnodes, c.nnodes * TPN);
		bench_csv_row("domains", "srun-map-and-check", "block", &s1, "us", -1, extra);
		bench_csv_row("domains", "node-parse-and-place", "block", &s2, "us", -1, extra);
		free(c.blocks);
		free(c.map);
		free(c.rank_node);
	}
	bench_csv_close();
	return 0;
}
