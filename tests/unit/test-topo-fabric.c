/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-topo-fabric: NICs of Grace (NVLink-C2C) nodes, NUMA nodes without
 * CPUs, and one fabric per step, on real topologies.
 *
 * The fixtures are byte-identical real exports; the cases no fixture shows
 * (GPU memory as CPU-less NUMA nodes, adapters of different kinds side by
 * side) are made here, in memory, from a real export: its text is copied,
 * a few attributes or objects changed as noted at each case, written to a
 * temporary file and loaded. Expected answers are read from the trees:
 *   p6e-gb200 (tests/topo/fixtures/gb200, see tests/topo/p6e-gb200-all.out):
 *     aarch64; package P#60 (PUs 0-71, NUMA 0): GPU 29:00.0 with EFAs
 *     rdmap39s0,40s0 on its switch, GPU 3f:00.0 with rdmap61s0,62s0; host
 *     bridges without GPU: rdmap54s0,55s0 and rdmap76s0,77s0. Package P#84
 *     (PUs 72-143, NUMA 1): GPU 9c with rdmap154s0,155s0, GPU b2 with
 *     rdmap176s0,177s0; without GPU: rdmap169s0,170s0, rdmap191s0,192s0.
 *   jwb0004: GPU k (03,44,84,c4) has mlx5_k (04,43,83,c3) on its switch,
 *     all four InfiniBand (class 0207); GPUs 0,1 on package 0, 2,3 on 1.
 *   p5en: 16 EFAs (class 0200, vendor 1d0f), 4 behind each switch of 2
 *     GPUs; 55-58:00.0 (rdmap85s0-88s0) are those of GPUs 0 and 1. */
#define _GNU_SOURCE
#include "config.h"

#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "topo.h"

#define GB200 "gb200/aws-ofi-nccl__tests__unit__fixtures__topology__p6e-gb200__topology.xml"
#define JWB0004 "psmgmt__tests__hwloc__topo.jwb0004.xml"
#define P5EN "aws-ofi-nccl__tests__unit__fixtures__topology__p5en__topology.xml"

static char dir[4096], tmpdir[] = "/tmp/rdzv-topofabric.XXXXXX";
static int ntmp;

static char *slurp(const char *file)
{
	char path[8192];
	FILE *f;
	char *buf = NULL;
	long n;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (!(f = fopen(path, "r")))
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0
	    && (buf = malloc((size_t)n + 1))) {
		if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		} else {
			buf[n] = '\0';
		}
	}
	fclose(f);
	return buf;
}

/* Replace the first `from` in *text by `to`; 0, or -1 when absent. */
static int subst(char **text, const char *from, const char *to)
{
	char *at, *out;
	size_t lf = strlen(from), lt = strlen(to), len;

	if (!*text || !(at = strstr(*text, from)))
		return -1;
	len = strlen(*text) - lf + lt;
	if (!(out = malloc(len + 1)))
		return -1;
	memcpy(out, *text, (size_t)(at - *text));
	memcpy(out + (at - *text), to, lt);
	strcpy(out + (at - *text) + lt, at + lf);
	free(*text);
	*text = out;
	return 0;
}

/* Write text to a temporary file; its path in path. */
static int spill(const char *text, char *path, size_t len)
{
	FILE *f;

	snprintf(path, len, "%s/case-%d.xml", tmpdir, ntmp++);
	if (!(f = fopen(path, "w")))
		return -1;
	fputs(text, f);
	return fclose(f);
}

static struct rdzv_topo *load_text(const char *text, const char *what)
{
	char path[8192], err[512] = "";
	struct rdzv_topo *t = NULL;

	if (!text || spill(text, path, sizeof(path)) < 0) {
		diag("%s: cannot write the case", what);
		return NULL;
	}
	if (rdzv_topo_load(path, &t, err, sizeof(err)) < 0)
		diag("%s: %s", what, err);
	return t;
}

static struct rdzv_topo *load_file(const char *file)
{
	char *text = slurp(file);
	struct rdzv_topo *t = load_text(text, file);

	free(text);
	return t;
}

static struct rdzv_bind_table *table(const struct rdzv_topo *t, const char *gpus, unsigned ntasks,
                                     const char *allow)
{
	struct rdzv_bind_req req = { gpus, NULL, ntasks, allow, NULL, NULL, 0 };
	struct rdzv_bind_table *tab = NULL;
	char err[512] = "";

	if (!t || rdzv_bind_compute(t, &req, &tab, err, sizeof(err)) < 0)
		diag("compute %s: %s", gpus ? gpus : "-", err);
	return tab;
}

static const char *ucx(const struct rdzv_bind_table *tab, size_t i)
{
	return tab && i < tab->nrows ? tab->rows[i].ucx : "(no table)";
}

/* The whole-node table as text: GPU lines, node line, rows. */
static char *table_text(const struct rdzv_topo *t, const char *allow)
{
	static char out[65536];
	char line[4096], gpus[256] = "";
	struct rdzv_bind_table *tab;
	size_t i, used = 0;

	out[0] = '\0';
	if (!t)
		return out;
	rdzv_topo_gpu_list(t, gpus, sizeof(gpus));
	if (!(tab = table(t, gpus, (unsigned)rdzv_topo_gpu_count(t), allow)))
		return out;
	for (i = 0; rdzv_topo_format_gpu(t, i, line, sizeof(line)) == 0; i++)
		used += (size_t)snprintf(out + used, sizeof(out) - used, "%s\n", line);
	if (rdzv_bind_format_node(tab, line, sizeof(line)) == 0)
		used += (size_t)snprintf(out + used, sizeof(out) - used, "%s\n", line);
	for (i = 0; i < tab->nrows && rdzv_bind_format_row(tab, i, line, sizeof(line)) == 0; i++)
		used += (size_t)snprintf(out + used, sizeof(out) - used, "%s\n", line);
	rdzv_bind_table_destroy(tab);
	return out;
}

/* p6e-gb200: the 8 EFAs on host bridges without GPU serve the GPUs of
 * their package, two each in PCI order, on top of each GPU's switch pair. */
static void test_gb200_c2c(void)
{
	struct rdzv_topo *t = load_file(GB200);
	struct rdzv_bind_table *tab = table(t, "0,1,2,3", 4, NULL);
	char *text;

	is_str(ucx(tab, 0), "rdmap39s0:1,rdmap40s0:1,rdmap54s0:1,rdmap55s0:1",
	       "gb200: GPU 29 takes its switch pair and the first c2c pair of package 0");
	is_str(ucx(tab, 1), "rdmap61s0:1,rdmap62s0:1,rdmap76s0:1,rdmap77s0:1",
	       "gb200: GPU 3f its switch pair and the second c2c pair");
	is_str(ucx(tab, 2), "rdmap154s0:1,rdmap155s0:1,rdmap169s0:1,rdmap170s0:1",
	       "gb200: GPU 9c likewise on package 1");
	is_str(ucx(tab, 3), "rdmap176s0:1,rdmap177s0:1,rdmap191s0:1,rdmap192s0:1",
	       "gb200: GPU b2 likewise");
	ok(tab && tab->rows[0].near == RDZV_NEAR_SWITCH && tab->rows[0].c2c,
	   "gb200: the level is switch, plus c2c");
	ok(tab && strlen(tab->nccl_ib_hca) > 0 && strstr(tab->nccl_ib_hca, "rdmap54s0:1")
	   && strstr(tab->nccl_ib_hca, "rdmap192s0:1") && !tab->fabric[0],
	   "gb200: all 16 EFAs are in NCCL_IB_HCA, one fabric");
	rdzv_bind_table_destroy(tab);

	/* Without its GPU-local EFAs a GPU's best is c2c, split the same way. */
	tab = table(t, "0,1,2,3", 4, "^=rdmap39s0,rdmap40s0,rdmap61s0,rdmap62s0,rdmap154s0,"
	            "rdmap155s0,rdmap176s0,rdmap177s0");
	is_str(ucx(tab, 1), "rdmap76s0:1,rdmap77s0:1", "gb200 c2c only: GPU 3f takes the second pair");
	ok(tab && tab->rows[1].near == RDZV_NEAR_C2C && !tab->rows[1].c2c,
	   "gb200 c2c only: the level is c2c itself");
	rdzv_bind_table_destroy(tab);
	/* GPU 1's own pair only: GPU 0 gets it at NUMA level (not c2c: that
	 * pair sits on GPU 1's host bridge). */
	tab = table(t, "0,1", 2, "=rdmap61s0,rdmap62s0");
	ok(tab && tab->rows[0].near == RDZV_NEAR_NUMA && !tab->rows[0].c2c,
	   "gb200: another GPU's switch NIC in the same NUMA node is numa");
	rdzv_bind_table_destroy(tab);
	rdzv_topo_destroy(t);

	/* The same tree on an x86 machine is no C2C node: no c2c NICs. */
	text = slurp(GB200);
	ok(subst(&text, "name=\"Architecture\" value=\"aarch64\"",
	         "name=\"Architecture\" value=\"x86_64\"") == 0, "gb200 as x86_64: case made");
	t = load_text(text, "gb200 as x86_64");
	tab = table(t, "0,1,2,3", 4, NULL);
	is_str(ucx(tab, 0), "rdmap39s0:1,rdmap40s0:1",
	       "not a C2C node: a GPU keeps only its switch pair (GPU-less host bridges are numa)");
	rdzv_bind_table_destroy(tab);
	rdzv_topo_destroy(t);
	free(text);
}

/* GPU memory as NUMA nodes without CPUs (hwloc 2.10+ on bare-metal Grace:
 * subtype GPUMemory). Added to the gb200 export two ways: under each
 * package (nodes 3,4 on P#60, 5,6 on P#84), and under the machine. */
static char *gb200_gpu_memory(int under_packages, int x86)
{
	static const char *const numa =
		"<object type=\"NUMANode\" os_index=\"%d\" cpuset=\"0x0\" complete_cpuset=\"0x0\" "
		"nodeset=\"0x%08x\" complete_nodeset=\"0x%08x\" gp_index=\"%d\" "
		"local_memory=\"201863462912\" subtype=\"GPUMemory\"/>\n";
	char *text = slurp(GB200), add[4][512], pkg[2][4096];
	int i, bad = 0;

	for (i = 0; i < 4; i++)
		snprintf(add[i], sizeof(add[i]), numa, 3 + i, 1u << (3 + i), 1u << (3 + i), 9000 + i);
	/* Machine: the nodes exist (they are in complete_nodeset already). */
	bad |= subst(&text, "nodeset=\"0x00000003\" complete_nodeset=\"0x00000003,0xfbfbfbfb\" "
	             "allowed_nodeset=\"0x00000003\"",
	             "nodeset=\"0x0000007b\" complete_nodeset=\"0x00000003,0xfbfbfbfb\" "
	             "allowed_nodeset=\"0x0000007b\"");
	if (under_packages) {
		snprintf(pkg[0], sizeof(pkg[0]), "nodeset=\"0x00000019\" complete_nodeset="
		         "\"0x00000003,0xfbfbfbf9\" gp_index=\"3\">\n%s%s", add[0], add[1]);
		snprintf(pkg[1], sizeof(pkg[1]), "nodeset=\"0x00000062\" complete_nodeset="
		         "\"0x00000003,0xfbfbfbfa\" gp_index=\"365\">\n%s%s", add[2], add[3]);
		bad |= subst(&text, "nodeset=\"0x00000001\" complete_nodeset=\"0x00000003,0xfbfbfbf9\" "
		             "gp_index=\"3\">\n", pkg[0]);
		bad |= subst(&text, "nodeset=\"0x00000002\" complete_nodeset=\"0x00000003,0xfbfbfbfa\" "
		             "gp_index=\"365\">\n", pkg[1]);
	} else {
		snprintf(pkg[0], sizeof(pkg[0]), "%s%s%s%s    <object type=\"Package\" os_index=\"60\"",
		         add[0], add[1], add[2], add[3]);
		bad |= subst(&text, "    <object type=\"Package\" os_index=\"60\"", pkg[0]);
	}
	if (x86)
		bad |= subst(&text, "name=\"Architecture\" value=\"aarch64\"",
		             "name=\"Architecture\" value=\"x86_64\"");
	if (bad) {
		free(text);
		return NULL;
	}
	return text;
}

/* How many NUMA nodes hwloc itself sees, and how many of them are GPU
 * memory. (hwloc gives every NUMA node the cpuset of the object it hangs
 * from: a node without CPUs of its own shows its parent's, and is told
 * apart only by its subtype and by sharing that cpuset with a CPU's node.) */
static void count_numa(const char *text, int *all, int *gpumem)
{
	hwloc_topology_t topo;
	hwloc_obj_t n = NULL;

	*all = *gpumem = -1;
	if (!text || hwloc_topology_init(&topo) < 0)
		return;
	if (hwloc_topology_set_xmlbuffer(topo, text, (int)strlen(text) + 1) == 0
	    && hwloc_topology_load(topo) == 0) {
		*all = *gpumem = 0;
		while ((n = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, n))) {
			(*all)++;
			*gpumem += n->subtype && strcmp(n->subtype, "GPUMemory") == 0;
		}
	}
	hwloc_topology_destroy(topo);
}

static void check_rows_real_cpus(const struct rdzv_bind_table *tab, const char *what)
{
	hwloc_bitmap_t real = hwloc_bitmap_alloc(), got = hwloc_bitmap_alloc();
	size_t i;
	int good = tab && real && got && tab->nrows == 4;

	hwloc_bitmap_set_range(real, 0, 143);
	for (i = 0; good && i < tab->nrows; i++)
		good = hwloc_bitmap_list_sscanf(got, tab->rows[i].cpus) == 0 && !hwloc_bitmap_iszero(got)
		       && hwloc_bitmap_isincluded(got, real) && !tab->rows[i].cpus_far;
	ok(good, "%s: every task's CPU set is non-empty, of real PUs (0-143), local to its GPU", what);
	hwloc_bitmap_free(real);
	hwloc_bitmap_free(got);
}

static void test_cpuless_numa(void)
{
	static const char *const how[2] = { "GPU memory under the machine",
	                                    "GPU memory under the packages" };
	struct rdzv_topo *plain = load_file(GB200);
	char want[65536], want_numa[65536];
	int under;

	snprintf(want, sizeof(want), "%s", table_text(plain, NULL));
	snprintf(want_numa, sizeof(want_numa), "%s", table_text(plain, "=rdmap61s0,rdmap62s0"));
	rdzv_topo_destroy(plain);
	for (under = 0; under < 2; under++) {
		char *text = gb200_gpu_memory(under, 0);
		struct rdzv_topo *t;
		struct rdzv_bind_table *tab;
		int all, gpumem;

		count_numa(text, &all, &gpumem);
		ok(all == 6 && gpumem == 4, "%s: hwloc sees 6 NUMA nodes, 4 of GPU memory (%d, %d)",
		   how[under], all, gpumem);
		t = load_text(text, how[under]);
		is_str(table_text(t, NULL), want, "... the whole-node table is the export's own");
		tab = table(t, "0,1,2,3", 4, NULL);
		check_rows_real_cpus(tab, how[under]);
		rdzv_bind_table_destroy(tab);
		/* NUMA locality: GPU 29 and GPU 3f's EFAs hang off package P#60,
		 * whose one NUMA node with CPUs is node 0 (the GPU memory nodes
		 * 3,4 in its nodeset are no second locality). */
		tab = table(t, "0,1", 2, "=rdmap61s0,rdmap62s0");
		ok(tab && tab->rows[0].near == RDZV_NEAR_NUMA,
		   "%s: another GPU's NIC on the same package is still numa, not package", how[under]);
		rdzv_bind_table_destroy(tab);
		is_str(table_text(t, "=rdmap61s0,rdmap62s0"), want_numa, "... the same table as the export's");
		rdzv_topo_destroy(t);
		free(text);
	}
	/* GPUMemory nodes mark a C2C node even where the CPU is not Arm. */
	{
		char *text = gb200_gpu_memory(1, 1);
		struct rdzv_topo *t = load_text(text, "gb200 x86_64 with GPUMemory nodes");

		is_str(table_text(t, NULL), want,
		       "GPUMemory NUMA nodes make a C2C node: the c2c NICs are used as on Grace");
		rdzv_topo_destroy(t);
		free(text);
	}
}

/* Set the PCI class and vendor:device of function busid ("0000:43:00.0"):
 * newtype is the first 16 characters of pci_type ("0200 [15b3:101b]"). */
static int retype(char **text, const char *busid, const char *newtype)
{
	char key[128], *at;

	snprintf(key, sizeof(key), "pci_busid=\"%s\" pci_type=\"", busid);
	if (!*text || !(at = strstr(*text, key)) || strlen(newtype) != 16
	    || strlen(at + strlen(key)) < 16)
		return -1;
	memcpy(at + strlen(key), newtype, 16);
	return 0;
}

/* Fabric of every chosen port and of NCCL_IB_HCA: one kind only. */
static void test_one_fabric(void)
{
	static const char *const jwb_busid[4] = { "0000:04:00.0", "0000:43:00.0", "0000:83:00.0",
	                                          "0000:c3:00.0" };
	struct rdzv_topo *t;
	struct rdzv_bind_table *tab;
	char *text;
	int i, bad;

	/* jwb0004, mlx5_1 (43:00.0, GPU 1's) in Ethernet mode: InfiniBand serves
	 * three GPUs at their switch, Ethernet one: InfiniBand. GPU 1 then takes
	 * the InfiniBand port of its package, mlx5_0, not its own RoCE one. */
	text = slurp(JWB0004);
	ok(retype(&text, jwb_busid[1], "0200 [15b3:101b]") == 0, "jwb0004 + 1 RoCE: case made");
	t = load_text(text, "jwb0004 + 1 RoCE");
	tab = table(t, "0,1,2,3", 4, NULL);
	is_str(tab ? tab->nccl_ib_hca : "", "=mlx5_0:1,mlx5_2:1,mlx5_3:1",
	       "IB + 1 RoCE: NCCL_IB_HCA holds InfiniBand ports only");
	is_str(ucx(tab, 1), "mlx5_0:1",
	       "IB + 1 RoCE: GPU 1 uses InfiniBand on its package, not its RoCE NIC");
	ok(tab && tab->rows[1].near == RDZV_NEAR_PACKAGE, "... at package level");
	is_str(tab ? tab->fabric : "", "infiniband (3 ports); left out: ethernet (1)",
	       "IB + 1 RoCE: the table says which fabric and what was left out");
	rdzv_bind_table_destroy(tab);
	rdzv_topo_destroy(t);
	free(text);

	/* Three in Ethernet mode: Ethernet serves three GPUs at their switch. */
	text = slurp(JWB0004);
	for (i = 0, bad = 0; i < 3; i++)
		bad |= retype(&text, jwb_busid[i], "0200 [15b3:101b]");
	ok(!bad, "jwb0004 + 3 RoCE: case made");
	t = load_text(text, "jwb0004 + 3 RoCE");
	tab = table(t, "0,1,2,3", 4, NULL);
	is_str(tab ? tab->nccl_ib_hca : "", "=mlx5_0:1,mlx5_1:1,mlx5_2:1",
	       "1 IB + 3 RoCE: the Ethernet fabric, which serves more GPUs at their switch");
	is_str(ucx(tab, 3), "mlx5_2:1", "1 IB + 3 RoCE: GPU 3 takes RoCE mlx5_2 of its package");
	rdzv_bind_table_destroy(tab);
	/* The admin's allow-list pins InfiniBand: only its port is usable. */
	tab = table(t, "0,1,2,3", 4, "=mlx5_3");
	is_str(tab ? tab->nccl_ib_hca : "", "=mlx5_3:1",
	       "an allow-list of InfiniBand ports pins InfiniBand");
	ok(tab && !tab->fabric[0] && strcmp(ucx(tab, 0), "mlx5_3:1") == 0,
	   "... every GPU gets it, and no other kind was usable");
	rdzv_bind_table_destroy(tab);
	rdzv_topo_destroy(t);
	free(text);

	/* Two and two: equal at every level and in ports; the stable order
	 * (InfiniBand first) decides. */
	text = slurp(JWB0004);
	bad = retype(&text, jwb_busid[0], "0200 [15b3:101b]") | retype(&text, jwb_busid[1],
	                                                                  "0200 [15b3:101b]");
	ok(!bad, "jwb0004 2 IB + 2 RoCE: case made");
	t = load_text(text, "jwb0004 2 IB + 2 RoCE");
	tab = table(t, "0,1,2,3", 4, NULL);
	is_str(tab ? tab->nccl_ib_hca : "", "=mlx5_2:1,mlx5_3:1", "a tie goes to InfiniBand, every time");
	rdzv_bind_table_destroy(tab);
	/* A step on package 0 alone, whose GPUs have RoCE at their switch: the
	 * choice is the node's, so that a step holding GPUs 0,1 here and 2,3 on
	 * a node of the same model uses one fabric on both. */
	tab = table(t, "0,1", 2, NULL);
	is_str(tab ? tab->nccl_ib_hca : "", "=mlx5_2:1,mlx5_3:1",
	       "the choice is the node's: GPUs 0,1 alone still use InfiniBand");
	rdzv_bind_table_destroy(tab);
	rdzv_topo_destroy(t);
	free(text);

	/* p5en with the 4 NICs of GPUs 0,1 as InfiniBand HCAs beside 12 EFAs:
	 * EFA serves 6 GPUs at their switch, InfiniBand 2: EFA; GPUs 0,1 get
	 * EFAs of their package. */
	text = slurp(P5EN);
	for (i = 0, bad = 0; i < 4; i++) {
		char busid[16];

		snprintf(busid, sizeof(busid), "0000:%02x:00.0", 0x55 + i);
		bad |= retype(&text, busid, "0207 [15b3:1021]");
	}
	ok(!bad, "p5en 4 IB + 12 EFA: case made");
	t = load_text(text, "p5en 4 IB + 12 EFA");
	tab = table(t, "0,1,2,3,4,5,6,7", 8, NULL);
	ok(tab && !strstr(tab->nccl_ib_hca, "rdmap85s0") && !strstr(tab->nccl_ib_hca, "rdmap88s0")
	   && strstr(tab->nccl_ib_hca, "rdmap110s0") && strstr(tab->nccl_ib_hca, "rdmap163s0"),
	   "EFA + IB: NCCL_IB_HCA holds the 12 EFAs only (%s)", tab ? tab->nccl_ib_hca : "");
	ok(tab && !strstr(ucx(tab, 0), "rdmap8") && !strstr(ucx(tab, 1), "rdmap8") && ucx(tab, 0)[0]
	   && ucx(tab, 1)[0], "EFA + IB: GPUs 0,1 use EFAs too (%s; %s)", ucx(tab, 0), ucx(tab, 1));
	is_str(tab ? tab->fabric : "", "efa (12 ports); left out: infiniband (4)",
	       "EFA + IB: the fabric line");
	rdzv_bind_table_destroy(tab);
	rdzv_topo_destroy(t);
	free(text);
}

int main(void)
{
	const char *env = getenv("RDZV_TOPOLOGIES"), *top = getenv("top_srcdir");
	struct stat st;
	char cmd[200];

	if (env && *env)
		snprintf(dir, sizeof(dir), "%s", env);
	else
		snprintf(dir, sizeof(dir), "%s/tests/topo/fixtures", top ? top : "..");
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		/* They belong to the repository: missing is a failure, not a skip. */
		ok(0, "topology fixtures at %s (tests/topo/fixtures)", dir);
		return done_testing();
	}
	if (!mkdtemp(tmpdir))
		skip_all("cannot make a temporary directory");
	is_str(rdzv_near_name(RDZV_NEAR_C2C), "c2c", "the c2c level has a name");
	is_str(rdzv_fabric_name(RDZV_FABRIC_EFA), "efa", "fabrics have names");
	test_gb200_c2c();
	test_cpuless_numa();
	test_one_fabric();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd) != 0)
		diag("could not remove %s", tmpdir);
	return done_testing();
}
