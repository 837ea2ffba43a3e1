/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-domain.c: NVLink domains: Slurm's block topology read into
 * a step's domain map, the map's text for the nodes, a node's place in its
 * domain, and Megatron's groups checked by domain. The block text is what
 * Slurm 26.05's topology/block prints (scontrol show topology; the format of
 * src/plugins/topology/block/topology_block.c, _print_topo_record). */
#include "config.h"
#include "tap.h"
#include "domain.h"
#include "domain_verdict.h"
#include "hostlist.h"
#include "megatron.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Slurm's print for b1 = n[1,3], b2 = n[2,4], BlockSizes=2,4. */
static const char *two_blocks =
	"BlockName=b1 BlockIndex=0 Nodes=n[1,3] BlockSize=2\n"
	"BlockName=b2 BlockIndex=1 Nodes=n[2,4] BlockSize=2\n"
	"AggregatedBlock=b1,b2 BlockIndex=2 Nodes=n[1-4] BlockSize=4\n";

static void test_kinds(void)
{
	enum rdzv_nvlink_domain k;

	ok(rdzv_nvlink_domain_parse("node", &k) == 0 && k == RDZV_NVLINK_NODE, "node parses");
	ok(rdzv_nvlink_domain_parse("block", &k) == 0 && k == RDZV_NVLINK_BLOCK, "block parses");
	ok(rdzv_nvlink_domain_parse("nvml", &k) == 0 && k == RDZV_NVLINK_NVML, "nvml parses");
	ok(rdzv_nvlink_domain_parse("rack", &k) < 0 && rdzv_nvlink_domain_parse("", &k) < 0
	   && rdzv_nvlink_domain_parse("Block", &k) < 0, "anything else is refused");
	is_str(rdzv_nvlink_domain_name(RDZV_NVLINK_BLOCK), "block", "names round-trip");
}

static void test_blocks(void)
{
	struct rdzv_domains d;
	char err[512], text[256];
	uint32_t job, step;

	ok(rdzv_domains_from_blocks(two_blocks, "n[1-4]", &d, err, sizeof(err)) == 0,
	   "two blocks read: %s", err);
	ok(d.nnodes == 4 && d.ndomains == 2, "4 nodes in 2 domains (%u, %u)", d.nnodes, d.ndomains);
	/* node ids follow the step's list: n1 n2 n3 n4 */
	ok(d.node_domain[0] == d.node_domain[2] && d.node_domain[1] == d.node_domain[3]
	   && d.node_domain[0] != d.node_domain[1], "n1, n3 together; n2, n4 together");
	is_str(d.names[d.node_domain[0]], "b1", "n1 is in b1 (the aggregated block is no domain)");
	is_str(d.names[d.node_domain[1]], "b2", "n2 is in b2");
	ok(d.domain_nodes[0] == 2 && d.domain_nodes[1] == 2, "each block holds 2 nodes");
	ok(rdzv_domains_format(7, 3, &d, text, sizeof(text)) == 0, "map formats");
	is_str(text, "7.3:b1=0,2;b2=1,3", "map text");
	ok(rdzv_domains_format(7, 3, &d, text, 10) < 0, "a short buffer is refused, never cut");
	rdzv_domains_free(&d);

	ok(rdzv_domains_parse("7.3:b1=0,2;b2=1,3", 4, &job, &step, &d, err, sizeof(err)) == 0
	   && job == 7 && step == 3 && d.ndomains == 2 && d.node_domain[2] == 0
	   && d.node_domain[3] == 1, "map parses back: %s", err);
	rdzv_domains_free(&d);
	ok(rdzv_domains_parse("7.3:r1=0-17;r2=18-35", 36, &job, &step, &d, err, sizeof(err)) == 0
	   && d.node_domain[17] == 0 && d.node_domain[18] == 1, "ranges parse (two NVL72 racks)");
	rdzv_domains_free(&d);

	/* a subset of the blocks' nodes: the step's own ids */
	ok(rdzv_domains_from_blocks(two_blocks, "n[3-4]", &d, err, sizeof(err)) == 0
	   && d.nnodes == 2 && d.ndomains == 2 && strcmp(d.names[d.node_domain[0]], "b1") == 0
	   && strcmp(d.names[d.node_domain[1]], "b2") == 0, "a 2-node step of n3, n4: b1, b2");
	rdzv_domains_free(&d);

	/* refusals, each named */
	ok(rdzv_domains_from_blocks(two_blocks, "n[1-5]", &d, err, sizeof(err)) < 0
	   && strstr(err, "node n5 is in no topology block"), "a node in no block: %s", err);
	ok(rdzv_domains_from_blocks("BlockName=b1 BlockIndex=0 Nodes=n[1-2] BlockSize=2\n"
	                            "BlockName=b2 BlockIndex=1 Nodes=n[2-3] BlockSize=2\n", "n2",
	                            &d, err, sizeof(err)) < 0
	   && strstr(err, "n2 is in two topology blocks, b1 and b2"), "a node in two: %s", err);
	ok(rdzv_domains_from_blocks("SwitchName=s1 Level=0 LinkSpeed=1 Nodes=n[1-4]\n", "n1", &d,
	                            err, sizeof(err)) < 0
	   && strstr(err, "no topology block"), "topology/tree's print has no block: %s", err);
	ok(rdzv_domains_from_blocks("", "n1", &d, err, sizeof(err)) < 0, "no text at all");
	ok(rdzv_domains_from_blocks("BlockName=b:1 BlockIndex=0 Nodes=n1 BlockSize=1\n", "n1", &d,
	                            err, sizeof(err)) < 0 && strstr(err, "block name 'b:1'"),
	   "a block name we cannot carry is refused: %s", err);
	ok(rdzv_domains_from_blocks("BlockName=b1 BlockIndex=0 Nodes=n[1- BlockSize=1\n", "n1", &d,
	                            err, sizeof(err)) < 0 && strstr(err, "block b1"),
	   "a malformed Nodes= is named: %s", err);

	ok(rdzv_domains_from_blocks("BlockName=b1 BlockIndex=0 Nodes=n[1,3] Bl\n", "n1", &d, err,
	                            sizeof(err)) < 0 && strstr(err, "SLURM_TOPO_LEN"),
	   "a print cut by SLURM_TOPO_LEN is refused, named: %s", err);
	ok(rdzv_domains_from_blocks("BlockName=b1 BlockIndex=0 Nodes=n1 BlockSize=1\n"
	                            "BlockName=b1 BlockIndex=1 Nodes=n2 BlockSize=1\n", "n[1-2]",
	                            &d, err, sizeof(err)) < 0 && strstr(err, "names block b1 twice"),
	   "two blocks of one name are refused: %s", err);
	/* Past Slurm's own bounds: refused from the counts, before any host is
	 * expanded (a fuzzed step of 1.6 million hosts took 5 s to walk). */
	ok(rdzv_domains_from_blocks("BlockName=b1 BlockIndex=0 Nodes=n[1-4] BlockSize=4\n",
	                            "r[0-218]x[1-2]-g[0-218]y[02-18]", &d, err, sizeof(err)) < 0
	   && strstr(err, "1630674 nodes") && strstr(err, "RDZV_DOMAIN_NODES_MAX"),
	   "a step past Slurm's bound is refused by its count: %s", err);
	ok(rdzv_domains_from_blocks("BlockName=b1 BlockIndex=0 Nodes=a[0-65535] BlockSize=4\n"
	                            "BlockName=b2 BlockIndex=1 Nodes=b[0-65535] BlockSize=4\n"
	                            "BlockName=b3 BlockIndex=2 Nodes=c[0-65535] BlockSize=4\n"
	                            "BlockName=b4 BlockIndex=3 Nodes=d[0-65535] BlockSize=4\n"
	                            "BlockName=b5 BlockIndex=4 Nodes=e[0-1] BlockSize=4\n",
	                            "a[0-1]", &d, err, sizeof(err)) < 0
	   && strstr(err, "block b5") && strstr(err, "RDZV_DOMAIN_HOSTS_MAX"),
	   "blocks naming more hosts than Slurm's bound are refused by their count: %s", err);
	ok(rdzv_domains_parse("7.3:b1=0,2;b1=1,3", 4, &job, &step, &d, err, sizeof(err)) == 0,
	   "a map naming a domain twice parses ...");
	{
		uint32_t sz, base, nodes;

		ok(rdzv_domain_place(&d, 1, "", "2(x4)", &sz, &base, &nodes, err, sizeof(err)) < 0
		   && strstr(err, "names domain b1 twice"), "... and a node of it refuses: %s", err);
	}
	rdzv_domains_free(&d);
	ok(rdzv_domains_parse("7.3:b1=0,2", 4, &job, &step, &d, err, sizeof(err)) < 0
	   && strstr(err, "leaves 2 of the step's 4 nodes"), "a node left out: %s", err);
	ok(rdzv_domains_parse("7.3:b1=0-2;b2=2-3", 4, &job, &step, &d, err, sizeof(err)) < 0
	   && strstr(err, "node 2 in two"), "a node twice: %s", err);
	ok(rdzv_domains_parse("7.3:b1=0-4", 4, &job, &step, &d, err, sizeof(err)) < 0
	   && strstr(err, "node 4 of a 4-node step"), "out of range: %s", err);
	ok(rdzv_domains_parse("7.3:b1=1-0,2-3", 4, &job, &step, &d, err, sizeof(err)) < 0,
	   "a backwards range");
	ok(rdzv_domains_parse("7.3:=0-3", 4, &job, &step, &d, err, sizeof(err)) < 0, "no name");
	ok(rdzv_domains_parse("7:b1=0-3", 4, &job, &step, &d, err, sizeof(err)) < 0, "no step id");
	ok(rdzv_domains_parse("7.3:b1=0-3;", 4, &job, &step, &d, err, sizeof(err)) < 0,
	   "a trailing separator");
	ok(rdzv_domains_parse("7.3:b$=0-3", 4, &job, &step, &d, err, sizeof(err)) < 0,
	   "a name with a shell character");
}

static int collect(const char *host, void *ctx)
{
	char *out = ctx;
	size_t n = strlen(out);

	snprintf(out + n, 256 - n, "%s%s", n ? " " : "", host);
	return 0;
}

static void test_walk(void)
{
	struct rdzv_domains d;
	char err[512], all[256] = "";

	ok(rdzv_hostlist_each("n[1-2],gb[08-10]-ib,x", collect, all, err, sizeof(err)) == 0,
	   "a host list walked item by item");
	is_str(all, "n1 n2 gb08-ib gb09-ib gb10-ib x", "in Slurm's order, padding kept");
	ok(rdzv_hostlist_each("n[1-", collect, all, err, sizeof(err)) < 0, "a malformed list: %s",
	   err);
	/* fragmented node lists, the blocks' and the step's */
	ok(rdzv_domains_from_blocks("BlockName=r1 BlockIndex=0 Nodes=a1,a3,a5,a7 BlockSize=4\n"
	                            "BlockName=r2 BlockIndex=1 Nodes=a2,a4,a6,a8 BlockSize=4\n",
	                            "a[1-8]", &d, err, sizeof(err)) == 0 && d.ndomains == 2
	   && d.node_domain[0] == d.node_domain[6] && d.node_domain[1] == d.node_domain[7]
	   && d.node_domain[0] != d.node_domain[1], "interleaved blocks: %s", err);
	rdzv_domains_free(&d);
	ok(rdzv_domains_from_blocks("BlockName=r1 BlockIndex=0 Nodes=a[1-2] BlockSize=2\n", "a1,a2,a1",
	                            &d, err, sizeof(err)) < 0 && strstr(err, "names a1 twice"),
	   "a step list naming a node twice: %s", err);
}

static void test_place(void)
{
	struct rdzv_domains d;
	char err[512];
	uint32_t job, step, size, base, nodes;

	/* 26.05, topology/block b1 = n[1,3], b2 = n[2,4], 2 tasks per node:
	 * Slurm lays ranks n1 0-1, n3 2-3, n2 4-5, n4 6-7 (node order 0,2,1,3). */
	ok(rdzv_domains_parse("9.0:b1=0,2;b2=1,3", 4, &job, &step, &d, err, sizeof(err)) == 0,
	   "map");
	ok(rdzv_domain_place(&d, 2, "0,2,1,3", "2(x4)", &size, &base, &nodes, err, sizeof(err)) == 0
	   && size == 4 && base == 2 && nodes == 2, "n3: 4 tasks in b1, its first is b1's 2 (%u %u %u)",
	   size, base, nodes);
	ok(rdzv_domain_place(&d, 1, "0,2,1,3", "2(x4)", &size, &base, &nodes, err, sizeof(err)) == 0
	   && size == 4 && base == 0, "n2: first of b2");
	ok(rdzv_domain_place(&d, 3, "", "1,2,3,4", &size, &base, &nodes, err, sizeof(err)) == 0
	   && size == 6 && base == 2, "list order, uneven tasks: n4 after n2 in b2 (%u %u)", size,
	   base);
	ok(rdzv_domain_place(&d, 2, "0,2,1", "2(x4)", &size, &base, &nodes, err, sizeof(err)) < 0
	   && rdzv_domain_place(&d, 2, "0,2,2,3", "2(x4)", &size, &base, &nodes, err,
	                        sizeof(err)) < 0, "an order missing a node, or naming one twice");
	ok(rdzv_domain_place(&d, 4, "", "2(x4)", &size, &base, &nodes, err, sizeof(err)) < 0,
	   "a node outside the map");
	ok(rdzv_domain_place(&d, 1, "", "2(x3)", &size, &base, &nodes, err, sizeof(err)) < 0,
	   "tasks per node for fewer nodes than the map");
	ok(rdzv_domain_place(&d, 1, "", "2(x5)", &size, &base, &nodes, err, sizeof(err)) < 0,
	   "tasks per node for more nodes than the map");
	rdzv_domains_free(&d);
}

/* Tasks per node read by layout.c's reader, with Slurm's rules: what this
 * file's own reader once let through is refused now. */
static void test_place_tpn(void)
{
	static const char *const bad[] = {
		"0,2,2,2",   /* a node without tasks: every node of a Slurm step has one */
		"2,0(x3)",   /* the same, in a run */
		"2(x4),",    /* a trailing comma: Slurm puts none after the last */
		"2(x4",      /* a run without ')' */
		"2(4)",      /* a run without 'x' */
		"2x4",       /* 'x' without '(' */
		"100000001(x4)", /* more tasks on a node than layout.c allows */
		"",
	};
	struct rdzv_domains d;
	char err[512];
	uint32_t job, step, size = 77, base = 77, nodes = 77;
	size_t i;

	ok(rdzv_domains_parse("9.0:b1=0,2;b2=1,3", 4, &job, &step, &d, err, sizeof(err)) == 0,
	   "map");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		ok(rdzv_domain_place(&d, 1, "", bad[i], &size, &base, &nodes, err, sizeof(err)) < 0
		   && strstr(err, "does not describe the step's 4 nodes"),
		   "tasks per node '%s' refused (%s)", bad[i], err);
	}
	ok(rdzv_domain_place(&d, 3, "", "1,2(x1),3,4", &size, &base, &nodes, err, sizeof(err)) == 0
	   && size == 6 && base == 2, "\"(x1)\" reads as one node (%u %u)", size, base);
	ok(rdzv_domain_place(&d, 1, "", "02(x4)", &size, &base, &nodes, err, sizeof(err)) == 0
	   && size == 4 && base == 0, "leading zeros are a number");
	rdzv_domains_free(&d);
}

/* A step of nnodes x tpn ranks, laid by Slurm in the node order given. */
static void lay(uint32_t *rank_node, const uint32_t *order, uint32_t nnodes, uint32_t tpn)
{
	uint32_t i, j;

	for (i = 0; i < nnodes; i++)
		for (j = 0; j < tpn; j++)
			rank_node[i * tpn + j] = order[i];
}

static int megatron(const char *const *args, int n, struct rdzv_megatron_layout *l)
{
	char err[256], copy[16][64];
	char *argv[17];
	int i;

	for (i = 0; i < n && i < 16; i++) {
		snprintf(copy[i], sizeof(copy[i]), "%s", args[i]);
		argv[i] = copy[i];
	}
	argv[n] = NULL;
	return rdzv_megatron_read(n, argv, NULL, l, err, sizeof(err));
}

static void test_groups(void)
{
	struct rdzv_domains d;
	struct rdzv_megatron_layout l;
	struct rdzv_megatron_domains md;
	char err[1024];
	uint32_t job, step, rank_node[8];
	static const uint32_t topo_order[4] = { 0, 2, 1, 3 }; /* n1 n3 n2 n4 */
	static const uint32_t list_order[4] = { 0, 1, 2, 3 };
	static char n1[] = "n1", n2[] = "n2", n3[] = "n3", n4[] = "n4";
	char *names[4] = { n1, n2, n3, n4 };
	static const char *tp4[] = { "train.py", "--tensor-model-parallel-size", "4" };
	static const char *tp8[] = { "train.py", "--tensor-model-parallel-size", "8" };
	static const char *ep4[] = { "train.py", "--expert-model-parallel-size", "4" };
	static const char *ep8[] = { "train.py", "--expert-model-parallel-size", "8" };
	static const char *cp4[] = { "train.py", "--context-parallel-size", "4",
	                             "--tensor-model-parallel-size", "2" };
	static const char *ep2etp2[] = { "train.py", "--expert-model-parallel-size", "2",
	                                 "--expert-tensor-parallel-size", "2" };

	ok(rdzv_domains_parse("9.0:b1=0,2;b2=1,3", 4, &job, &step, &d, err, sizeof(err)) == 0,
	   "map");
	memset(&md, 0, sizeof(md));
	md.d = &d;
	md.rank_node = rank_node;
	md.node_names = names;
	md.source = "test blocks";
	md.ntasks = 8;
	md.tasks_per_node = 2;
	md.max_domain_nodes = 2;
	lay(rank_node, topo_order, 4, 2);

	ok(megatron(tp4, 3, &l) == 0 && rdzv_megatron_check_domains(&l, 8, &md, err, sizeof(err)) == 0,
	   "TP=4 in topology order: groups 0-3 (b1) and 4-7 (b2) fit: %s", err);
	ok(megatron(tp8, 3, &l) == 0 && rdzv_megatron_check_domains(&l, 8, &md, err, sizeof(err)) < 0,
	   "TP=8 spans both blocks");
	ok(strstr(err, "TP=8 (--tensor-model-parallel-size): the group of ranks 0-7 would span "
	           "NVLink domains b1 (ranks 0-3 on n1, n3) and b2 (ranks 4-7 on n2, n4)") != NULL,
	   "names ranks, nodes and both blocks: %s", err);
	ok(strstr(err, "more than the 2 nodes") != NULL, "no segment fits: says so");
	ok(megatron(ep4, 3, &l) == 0 && rdzv_megatron_check_domains(&l, 8, &md, err, sizeof(err)) == 0,
	   "EP=4 fits");
	ok(megatron(ep8, 3, &l) == 0 && rdzv_megatron_check_domains(&l, 8, &md, err, sizeof(err)) < 0
	   && strstr(err, "EP=8 (--expert-model-parallel-size)") && strstr(err, "b1")
	   && strstr(err, "b2"), "EP=8 refused naming both blocks: %s", err);
	/* CP=4 with TP=2: CP groups are ranks 2 apart: {0,2,4,6}: spans b1, b2 */
	ok(megatron(cp4, 5, &l) == 0 && rdzv_megatron_check_domains(&l, 8, &md, err, sizeof(err)) < 0
	   && strstr(err, "CP=4") && strstr(err, "ranks 0..6") && strstr(err, "ranks 0, 2 on n1, n3"),
	   "CP=4 x TP=2: strided group named: %s", err);
	ok(megatron(ep2etp2, 5, &l) == 0
	   && rdzv_megatron_check_domains(&l, 8, &md, err, sizeof(err)) == 0,
	   "EP=2 x ETP=2: groups of 4 ranks fit");

	/* List order (a topology ignored, or an older Slurm): TP=4's first
	 * group is n1 (b1) and n2 (b2): refused, and --segment=2 is the fix. */
	lay(rank_node, list_order, 4, 2);
	md.max_domain_nodes = 18;
	ok(megatron(tp4, 3, &l) == 0 && rdzv_megatron_check_domains(&l, 8, &md, err, sizeof(err)) < 0
	   && strstr(err, "ranks 0-3 would span NVLink domains b1 (ranks 0-1 on n1) and b2 "
	             "(ranks 2-3 on n2)") && strstr(err, "--segment=2 (sbatch from 25.05"),
	   "TP=4 across n1 and n2: refused with --segment=2: %s", err);
	md.tasks_per_node = 0;
	ok(rdzv_megatron_check_domains(&l, 8, &md, err, sizeof(err)) < 0
	   && !strstr(err, "--segment"), "uneven tasks: no segment advice");
	ok(rdzv_megatron_check_domains(&l, 8, NULL, err, sizeof(err)) == 0,
	   "no domains: nothing to check here");
	rdzv_domains_free(&d);

	/* EP's world divisibility (parallel_state.py) */
	{
		struct rdzv_megatron_place p;
		static const char *ep3[] = { "train.py", "--expert-model-parallel-size", "3" };

		memset(&p, 0, sizeof(p));
		p.ntasks = 8;
		p.nnodes = 4;
		p.by_domain = 1;
		ok(megatron(ep3, 3, &l) == 0 && rdzv_megatron_check(&l, &p, err, sizeof(err)) < 0
		   && strstr(err, "ETP x EP x PP = 1 x 3 x 1 = 3"), "EP=3 on 8 ranks: %s", err);
		ok(megatron(tp8, 3, &l) == 0 && rdzv_megatron_check(&l, &p, err, sizeof(err)) == 0,
		   "by domain, TP=8 over 4 nodes of 2 tasks passes the node check (groups are "
		   "checked by domain)");
		p.by_domain = 0;
		p.tasks_per_node = "2(x4)";
		ok(rdzv_megatron_check(&l, &p, err, sizeof(err)) < 0
		   && strstr(err, "TP=8 is larger than the 2 tasks on node 0"),
		   "nvlink_domain=node keeps today's refusal: %s", err);
	}
}

/* A 63-byte block name (RDZV_DOMAIN_NAME_MAX - 1), numbered. */
static void long_name(char *out, uint32_t k)
{
	snprintf(out, RDZV_DOMAIN_NAME_MAX, "nvl72-rack%05u-", k);
	memset(out + strlen(out), 'x', RDZV_DOMAIN_NAME_MAX - 1 - strlen(out));
	out[RDZV_DOMAIN_NAME_MAX - 1] = '\0';
}

/* Slurm's largest step (65,536 nodes: every other tray of 7,282 NVL72
 * racks named with 63 bytes) through srun's map and a node's reading, past
 * the old 96 KiB cap: nothing refused, every node in its block. */
static void test_large_from_blocks(void)
{
	enum { N = 65536, POOL = 2 * N, RACK = 18 };
	uint32_t racks = (POOL + RACK - 1) / RACK, r, i, wrong = 0, job, step, size, base, nodes;
	size_t cap = (size_t)racks * 128 + 64, used = 0, lcap = (size_t)N * 8 + 16, lused;
	char *topo = malloc(cap), *list = malloc(lcap), *text = NULL, name[RDZV_DOMAIN_NAME_MAX];
	char err[512] = "";
	struct rdzv_domains d, back;
	int rc;

	for (r = 0; r < racks; r++) {
		long_name(name, r);
		used += (size_t)snprintf(topo + used, cap - used, "BlockName=%s BlockIndex=%u "
		                         "Nodes=gb[%06u-%06u] BlockSize=%u\n", name, r,
		                         r * RACK + 1, r * RACK + RACK, RACK);
	}
	lused = (size_t)snprintf(list, lcap, "gb[");
	for (i = 0; i < N; i++) /* node i is gb(2i + 1): odd trays */
		lused += (size_t)snprintf(list + lused, lcap - lused, "%s%06u", i ? "," : "",
		                          2 * i + 1);
	snprintf(list + lused, lcap - lused, "]");
	rc = rdzv_domains_from_blocks(topo, list, &d, err, sizeof(err));
	ok(rc == 0 && d.nnodes == N && d.ndomains == racks, "65536 nodes in %u racks with "
	   "63-byte names: the map is read (%s)", racks, err);
	if (rc < 0)
		goto out;
	rc = rdzv_domains_text(31, 0, &d, &text, err, sizeof(err));
	ok(rc == 0 && text && strlen(text) > 98304, "its text, %zu bytes, is made (%s)",
	   text ? strlen(text) : 0, err);
	if (rc < 0)
		goto out;
	rc = rdzv_domains_parse(text, N, &job, &step, &back, err, sizeof(err));
	ok(rc == 0 && job == 31 && step == 0 && back.ndomains == racks,
	   "and a node reads it back (%s)", err);
	if (rc < 0)
		goto out;
	for (i = 0; i < N; i++) {
		long_name(name, (2 * i) / RACK); /* gb(2i + 1) is in rack 2i / 18 */
		wrong += strcmp(back.names[back.node_domain[i]], name) != 0;
	}
	ok(wrong == 0, "every node is in its rack's domain (%u wrong)", wrong);
	/* the last node, gb131071, in rack 7281 (gb131059-gb131076, of which
	 * the step has the odd ones up to gb131071: 7), the 7th in list order */
	rc = rdzv_domain_place(&back, N - 1, "", "4(x65536)", &size, &base, &nodes, err,
	                       sizeof(err));
	ok(rc == 0 && nodes == 7 && size == 28 && base == 24,
	   "the last node's place: 7 nodes, 28 tasks, its first is the 25th (%u %u %u %s)", nodes,
	   size, base, err);
	rdzv_domains_free(&back);
out:
	rdzv_domains_free(&d);
	free(text);
	free(list);
	free(topo);
}

/* The longest map of 65,536 nodes: 4,096 domains of 63-byte names whose
 * nodes are scattered (node i in domain i % 4096: every id written alone). */
static void test_large_scattered(void)
{
	enum { N = 65536, DOMS = 4096 };
	struct rdzv_domains d, back;
	uint32_t i, wrong = 0, job, step;
	char *text = NULL, err[512] = "";
	int rc;

	memset(&d, 0, sizeof(d));
	d.nnodes = N;
	d.ndomains = DOMS;
	d.node_domain = malloc(N * sizeof(uint32_t));
	d.names = malloc(DOMS * sizeof(*d.names));
	d.domain_nodes = calloc(DOMS, sizeof(uint32_t));
	for (i = 0; i < DOMS; i++)
		long_name(d.names[i], i);
	for (i = 0; i < N; i++)
		d.node_domain[i] = i % DOMS;
	rc = rdzv_domains_text(7, 1, &d, &text, err, sizeof(err));
	ok(rc == 0 && text && strlen(text) > 6 * 98304, "a scattered map of 65536 nodes: %zu "
	   "bytes (%s)", text ? strlen(text) : 0, err);
	rc = text ? rdzv_domains_parse(text, N, &job, &step, &back, err, sizeof(err)) : -1;
	ok(rc == 0 && back.ndomains == DOMS, "read back (%s)", err);
	for (i = 0; rc == 0 && i < N; i++)
		wrong += strcmp(back.names[back.node_domain[i]], d.names[i % DOMS]) != 0;
	ok(rc == 0 && wrong == 0, "every node in its domain (%u wrong)", wrong);
	if (rc == 0)
		rdzv_domains_free(&back);
	if (text)
		ok(rdzv_domains_format(7, 1, &d, text, strlen(text)) < 0,
		   "into a buffer one byte short: refused, never cut");
	rc = rdzv_domains_parse("7.1:b=0", RDZV_DOMAIN_NODES_MAX + 1, &job, &step, &back, err,
	                        sizeof(err));
	ok(rc < 0 && strstr(err, "RDZV_DOMAIN_NODES_MAX") && strstr(err, "65537"),
	   "a step past the limit: the limit is named (%s)", err);
	rdzv_domains_free(&d);
	free(text);
}

/* nvlink_domain=nvml: srun's verdict from what the nodes told it. Nodes
 * naming one clique share a domain; a node without a fabric is its own,
 * named after it; the groups are then checked as under block. */
static void test_verdict(void)
{
	static char n1[] = "n1", n2[] = "n2", n3[] = "n3", n4[] = "n4";
	char *names[4] = { n1, n2, n3, n4 };
	char told[4][RDZV_DOMAIN_NAME_MAX] = { "U.7", "U.9", "U.7", "U.9" };
	static const uint32_t topo_order[4] = { 0, 2, 1, 3 }; /* n1 n3 n2 n4 */
	static const uint32_t list_order[4] = { 0, 1, 2, 3 };
	static const char *tp4[] = { "train.py", "--tensor-model-parallel-size", "4" };
	struct rdzv_megatron_layout l;
	struct rdzv_domains d;
	uint32_t rank_node[8];
	char err[1024];

	ok(rdzv_domains_from_reports(4, (const char(*)[RDZV_DOMAIN_NAME_MAX])told, names, &d, err,
	                             sizeof(err)) == 0
	   && d.ndomains == 2 && d.node_domain[0] == d.node_domain[2]
	   && d.node_domain[1] == d.node_domain[3] && d.node_domain[0] != d.node_domain[1]
	   && d.domain_nodes[0] == 2 && d.domain_nodes[1] == 2,
	   "reports: n1, n3 in U.7; n2, n4 in U.9");
	is_str(d.names[0], "U.7", "domains in name order");
	rdzv_domains_free(&d);
	told[3][0] = '\0';
	ok(rdzv_domains_from_reports(4, (const char(*)[RDZV_DOMAIN_NAME_MAX])told, names, &d, err,
	                             sizeof(err)) == 0 && d.ndomains == 3,
	   "a node without a fabric is a domain of its own");
	is_str(d.names[d.node_domain[3]], "n4(node)", "named after the node");
	rdzv_domains_free(&d);
	snprintf(told[3], sizeof(told[3]), "U.9");

	lay(rank_node, topo_order, 4, 2);
	ok(megatron(tp4, 3, &l) == 0
	   && rdzv_domains_verdict(&l, 4, 8, (const char(*)[RDZV_DOMAIN_NAME_MAX])told, rank_node,
	                           names, err, sizeof(err)) == 1,
	   "TP=4 in clique order: OK (%s)", err);
	lay(rank_node, list_order, 4, 2);
	ok(rdzv_domains_verdict(&l, 4, 8, (const char(*)[RDZV_DOMAIN_NAME_MAX])told, rank_node,
	                        names, err, sizeof(err)) == 0
	   && strstr(err, "ranks 0-3 would span NVLink domains U.7 (ranks 0-1 on n1) and U.9 "
	                  "(ranks 2-3 on n2)")
	   && strstr(err, "nvlink_domain=nvml: each node's GPU fabric clique"),
	   "TP=4 across cliques: REFUSE, naming ranks, nodes, cliques and the source: %s", err);
}

int main(void)
{
	test_kinds();
	test_blocks();
	test_walk();
	test_place();
	test_place_tpn();
	test_groups();
	test_verdict();
	test_large_from_blocks();
	test_large_scattered();
	return done_testing();
}
