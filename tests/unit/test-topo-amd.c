/* test-topo-amd: AMD GPUs and Slingshot NICs (issue 33), on real exports.
 *
 * The fixtures are byte-identical real exports (tests/topo/fixtures/README.md):
 *   eas-tioga: HPE Cray EX235a (Frontier's, LUMI-G's blade), 8 MI250X GCDs
 *     1002:7408 class 0380 (rsmi0-7 in PCI bus order c1,c6,c9,ce,d1,d6,d9,de),
 *     4 Slingshot NICs 17db:0501 (hsi0-3 at c5,cd,d5,dd), each under the host
 *     bridge of the odd GCD of its MI250X; each GCD below its own L3.
 *   tuo.SPX: 4 MI300A 1002:74a0 class 1200 (rsmi0-3), one per PCI domain,
 *     with one Slingshot NIC each (hsi0-3, subtype Slingshot).
 *   corona: 8 MI50 1002:66a1 class 0380, one ConnectX-6 mlx5_0; an ASPEED VGA.
 * The cases no fixture shows are made in memory from those texts (as in
 * test-topo-fabric): the rsmi OS devices taken out (Debian's hwloc has no
 * ROCm SMI), renamed as DRM render nodes (older exports), other PCI classes
 * and vendors, MI300A in TPX mode (3 rsmi OS devices on one function), a
 * cxi OS device instead of the interface (hwloc 2.14). */
#define _GNU_SOURCE
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "topo.h"
#include "topocache.h"

#define TIOGA "mpibind__topo-xml__eas-tioga.xml"
#define TUO "flux-core__t__hwloc-data__tuo.SPX.xml"
#define CORONA "flux-core__t__hwloc-data__corona.xml"
/* is_str / is_int with a formatted name */
#define IS_STR(got, want, ...) do { \
	char name_[256]; \
	snprintf(name_, sizeof(name_), __VA_ARGS__); \
	is_str(got, want, name_); \
} while (0)
#define IS_INT(got, want, ...) do { \
	char name_[256]; \
	snprintf(name_, sizeof(name_), __VA_ARGS__); \
	is_int(got, want, name_); \
} while (0)

#define CHIMERA "flux-sched__t__data__hwloc-data__001N__multi_gpu_types__chimera.xml"

static char dir[4096], tmpdir[] = "/tmp/rdzv-topoamd.XXXXXX";
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

/* Replace every `from` in *text by `to`; the number replaced. */
static int subst_all(char **text, const char *from, const char *to)
{
	size_t lf = strlen(from), lt = strlen(to), n = 0;
	char *out, *o;
	const char *p, *at;

	if (!*text)
		return 0;
	for (p = *text; (at = strstr(p, from)); p = at + lf)
		n++;
	if (!n || !(out = malloc(strlen(*text) + n * lt + 1)))
		return 0;
	for (p = *text, o = out; (at = strstr(p, from)); p = at + lf) {
		memcpy(o, p, (size_t)(at - p));
		o += at - p;
		memcpy(o, to, lt);
		o += lt;
	}
	strcpy(o, p);
	free(*text);
	*text = out;
	return (int)n;
}

/* Take out every OS device whose name starts with prefix (an element
 * <object type="OSDev" ... name="PREFIX..."> up to its </object>: the
 * exports' OS devices hold only info children). The number taken out. */
static int strip_osdevs(char **text, const char *prefix)
{
	char pat[64], *at, *end, *open;
	int n = 0;

	snprintf(pat, sizeof(pat), "name=\"%s", prefix);
	while (*text && (at = strstr(*text, pat))) {
		for (open = at; open > *text && strncmp(open, "<object", 7) != 0; open--)
			;
		if (!(end = strchr(at, '>')))
			break;
		if (end[-1] != '/' && (!(end = strstr(end, "</object>")) || !(end += 9)))
			break;
		while (open > *text && (open[-1] == ' ' || open[-1] == '\t'))
			open--;
		if (*end == '\n')
			end++;
		memmove(open, end, strlen(end) + 1);
		n++;
	}
	return n;
}

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

static struct rdzv_bind_table *table(const struct rdzv_topo *t, const char *gpus, unsigned ntasks,
                                     int amd)
{
	struct rdzv_bind_req req = { gpus, NULL, ntasks, NULL, NULL, NULL, amd };
	struct rdzv_bind_table *tab = NULL;
	char err[512] = "";

	if (!t || rdzv_bind_compute(t, &req, &tab, err, sizeof(err)) < 0)
		diag("compute %s: %s", gpus ? gpus : "-", err);
	return tab;
}

/* The whole-node table (one task per GPU) as text: GPU lines, node line, rows. */
static char *table_text(const struct rdzv_topo *t)
{
	static char out[65536];
	char line[4096], gpus[512] = "";
	struct rdzv_bind_table *tab;
	size_t i, used = 0;

	out[0] = '\0';
	if (!t)
		return out;
	for (i = 0; i < rdzv_topo_gpu_count(t); i++)
		if (rdzv_topo_format_gpu(t, i, line, sizeof(line)) == 0)
			used += (size_t)snprintf(out + used, sizeof(out) - used, "%s\n", line);
	for (i = 0; i < rdzv_topo_nic_count(t); i++)
		if (rdzv_topo_format_nic(t, i, line, sizeof(line)) == 0)
			used += (size_t)snprintf(out + used, sizeof(out) - used, "%s\n", line);
	if (rdzv_topo_gpu_list(t, gpus, sizeof(gpus)) < 0)
		return out;
	tab = table(t, gpus[0] ? gpus : NULL, (unsigned)(rdzv_topo_gpu_count(t) ? rdzv_topo_gpu_count(t) : 1), 1);
	if (tab && rdzv_bind_format_node(tab, line, sizeof(line)) == 0)
		used += (size_t)snprintf(out + used, sizeof(out) - used, "%s\n", line);
	for (i = 0; tab && i < tab->nrows; i++)
		if (rdzv_bind_format_row(tab, i, line, sizeof(line)) == 0)
			used += (size_t)snprintf(out + used, sizeof(out) - used, "%s\n", line);
	rdzv_bind_table_destroy(tab);
	return out;
}

static void test_tioga(void)
{
	/* OLCF's Frontier user guide: each GCD's cores (its L3 region). */
	static const char *const cores[8] = {
		"48-55,112-119", "56-63,120-127", "16-23,80-87", "24-31,88-95",
		"0-7,64-71", "8-15,72-79", "32-39,96-103", "40-47,104-111",
	};
	static const char *const busid[8] = {
		"0000:c1:00.0", "0000:c6:00.0", "0000:c9:00.0", "0000:ce:00.0",
		"0000:d1:00.0", "0000:d6:00.0", "0000:d9:00.0", "0000:de:00.0",
	};
	char *text = slurp(TIOGA);
	struct rdzv_topo *t = load_text(text, TIOGA);
	struct rdzv_bind_table *tab = table(t, "0,1,2,3,4,5,6,7", 8, 1);
	char want[16];
	size_t i;

	IS_INT(t ? rdzv_topo_gpu_count(t) : 0, 8, "tioga: 8 MI250X GCDs found (class 0380)");
	ok(t && rdzv_topo_gpus_amd(t), "tioga: the GPUs are AMD's");
	IS_INT(t ? rdzv_topo_nic_count(t) : 0, 4, "tioga: 4 Slingshot NICs, no OpenFabrics device");
	for (i = 0; t && i < 8; i++)
		IS_STR(rdzv_topo_gpu_busid(t, i), busid[i], "tioga: GPU %zu in PCI order (rsmi%zu)", i, i);
	ok(tab && tab->amd && tab->slingshot, "tioga: the table is AMD's, its NICs Slingshot's");
	IS_STR(tab ? tab->socket_ifname : "", "=hsi0,hsi1,hsi2,hsi3",
	       "tioga: NCCL_SOCKET_IFNAME lists the 4 interfaces");
	IS_STR(tab ? tab->nccl_ib_hca : "x", "", "tioga: no NCCL_IB_HCA (no RDMA verbs device)");
	for (i = 0; tab && i < 8; i++) {
		IS_STR(tab->rows[i].cpus, cores[i], "tioga: GCD %zu gets OLCF's cores", i);
		snprintf(want, sizeof(want), "hsi%zu", i / 2);
		IS_STR(tab->rows[i].ifname, want, "tioga: GCD %zu has its MI250X's NIC", i);
		IS_STR(tab->rows[i].ucx, "", "tioga: GCD %zu: no UCX_NET_DEVICES", i);
		ok(tab->rows[i].near == (i % 2 ? RDZV_NEAR_HOSTBRIDGE : RDZV_NEAR_NUMA),
		   "tioga: GCD %zu: %s", i, i % 2 ? "its NIC's host bridge" : "its NIC's NUMA node");
	}
	rdzv_bind_table_destroy(tab);
	/* The plugin (amd = 0) still binds nothing on AMD nodes. */
	tab = table(t, "0,1", 2, 0);
	ok(tab && tab->ngpus == 0 && tab->rows[0].gpu < 0 && !tab->socket_ifname[0],
	   "tioga: without amd (the plugin), nothing to bind, no error");
	rdzv_bind_table_destroy(tab);
	rdzv_topo_destroy(t);
	free(text);
}

/* The node model cached by root (topocache.c) gives the same AMD table,
 * Slingshot NICs included (fabric slingshot is a valid cached fabric). */
static void test_cache_roundtrip(const char *file)
{
	char *text = slurp(file), *want, *ser, err[256] = "";
	struct rdzv_topo *t = load_text(text, file), *u = NULL;

	want = strdup(table_text(t));
	ser = t ? rdzv_topo_serialize(t, "amd-test") : NULL;
	ok(ser && rdzv_topo_deserialize(ser, "amd-test", &u, err, sizeof(err)) == 0,
	   "%s: the model is cached and read back %s", file, err);
	IS_STR(table_text(u), want ? want : "", "%s: the cached model's table is the XML's", file);
	rdzv_topo_destroy(u);
	rdzv_topo_destroy(t);
	free(ser);
	free(want);
	free(text);
}

/* The same export without ROCm SMI (Debian's hwloc), or with DRM render
 * nodes in its place (older exports), binds alike. */
static void test_without_rsmi(const char *file, int nrsmi)
{
	char *text = slurp(file), *drm = slurp(file), *want;
	struct rdzv_topo *t = load_text(text, file), *u;
	char num[16], to[32];
	int i;

	want = strdup(table_text(t));
	ok(want && strstr(want, "hip:0"), "%s: AMD GPUs in the table", file);
	IS_INT(strip_osdevs(&text, "rsmi"), nrsmi, "%s: %d rsmi OS devices taken out", file, nrsmi);
	u = load_text(text, file);
	IS_INT(u ? (int)rdzv_topo_gpu_count(u) : -1, nrsmi, "%s without rsmi: %d GPUs", file, nrsmi);
	IS_STR(table_text(u), want ? want : "", "%s without rsmi: the same table", file);
	rdzv_topo_destroy(u);
	for (i = nrsmi - 1; i >= 0; i--) { /* rsmi10 before rsmi1 */
		snprintf(num, sizeof(num), "\"rsmi%d\"", i);
		snprintf(to, sizeof(to), "\"renderD%d\"", 128 + i);
		subst_all(&drm, num, to);
	}
	u = load_text(drm, file);
	IS_STR(table_text(u), want ? want : "", "%s with renderD OS devices: the same table", file);
	rdzv_topo_destroy(u);
	rdzv_topo_destroy(t);
	free(want);
	free(text);
	free(drm);
}

/* Which PCI functions are AMD GPUs: by vendor and class. */
static void test_classes(void)
{
	char *text = slurp(TIOGA);
	struct rdzv_topo *t;
	int n;

	strip_osdevs(&text, "rsmi");
	n = subst_all(&text, "\"0380 [1002:7408]", "\"1200 [1002:74a1]");
	IS_INT(n, 8, "tioga as MI300X ids: 8 functions changed");
	t = load_text(text, "1200");
	IS_INT(t ? (int)rdzv_topo_gpu_count(t) : -1, 8, "class 1200 (MI300X), no OS device: GPUs");
	rdzv_topo_destroy(t);
	subst_all(&text, "\"1200 [1002:74a1]", "\"0300 [1002:6860]");
	t = load_text(text, "0300");
	IS_INT(t ? (int)rdzv_topo_gpu_count(t) : -1, 0,
	       "class 0300 AMD without rsmi or renderD: not taken for a GPU (a VGA)");
	rdzv_topo_destroy(t);
	free(text);
	text = slurp(TIOGA);
	subst_all(&text, "\"0380 [1002:7408]", "\"0300 [1002:6860]");
	t = load_text(text, "0300+rsmi");
	IS_INT(t ? (int)rdzv_topo_gpu_count(t) : -1, 8, "class 0300 AMD with rsmi (MI25): GPUs");
	rdzv_topo_destroy(t);
	free(text);
	text = slurp(TIOGA);
	subst_all(&text, "\"0380 [1002:7408]", "\"0380 [1a03:7408]");
	t = load_text(text, "vendor");
	IS_INT(t ? (int)rdzv_topo_gpu_count(t) : -1, 0, "class 0380 of another vendor: no GPU");
	rdzv_topo_destroy(t);
	free(text);

	/* chimera: NVIDIA and AMD (1002:6863, class 0300, DRM): the CUDA GPU only. */
	text = slurp(CHIMERA);
	t = load_text(text, CHIMERA);
	ok(t && rdzv_topo_gpu_count(t) == 1 && !rdzv_topo_gpus_amd(t),
	   "chimera (NVIDIA + AMD): the CUDA GPU only, as before");
	rdzv_topo_destroy(t);
	free(text);
}

/* MI300A in TPX mode: 3 logical GPUs (rsmiN) on each PCI function. */
static void test_tpx(void)
{
	char *text = slurp(TUO), from[64], to[256];
	struct rdzv_topo *t;
	struct rdzv_bind_table *tab;
	int i, n = 0;

	/* After each rsmiN element, two more: rsmi(4+2N), rsmi(5+2N). */
	for (i = 0; i < 4; i++) {
		snprintf(from, sizeof(from), "name=\"rsmi%d\" subtype=\"RSMI\" osdev_type=\"1\">", i);
		snprintf(to, sizeof(to), "name=\"rsmi%d\" subtype=\"RSMI\" osdev_type=\"1\"/>"
		         "<object type=\"OSDev\" name=\"rsmi%d\" subtype=\"RSMI\" osdev_type=\"1\"/>"
		         "<object type=\"OSDev\" name=\"rsmi%d\" subtype=\"RSMI\" osdev_type=\"1\">",
		         i, 4 + 2 * i, 5 + 2 * i);
		n += subst_all(&text, from, to);
	}
	IS_INT(n, 4, "tuo TPX: 2 OS devices added on each of the 4 functions");
	t = load_text(text, "tuo TPX");
	IS_INT(t ? (int)rdzv_topo_gpu_count(t) : -1, 12, "tuo TPX: 12 logical GPUs");
	IS_STR(t ? rdzv_topo_gpu_busid(t, 3) : "", "0001:02:00.0",
	       "tuo TPX: GPUs 0-2 are the first APU, 3-5 the second");
	tab = table(t, "0,1,2,3,4,5,6,7,8,9,10,11", 12, 1);
	ok(tab && !strcmp(tab->rows[0].cpus, "0-7,96-103") && !strcmp(tab->rows[1].cpus, "8-15,104-111")
	   && !strcmp(tab->rows[2].cpus, "16-23,112-119"),
	   "tuo TPX: the 3 GPUs of an APU split its 24 cores (%s | %s | %s)",
	   tab ? tab->rows[0].cpus : "", tab ? tab->rows[1].cpus : "", tab ? tab->rows[2].cpus : "");
	ok(tab && !strcmp(tab->rows[0].ifname, "hsi0") && !strcmp(tab->rows[2].ifname, "hsi0")
	   && !strcmp(tab->rows[3].ifname, "hsi1"), "tuo TPX: the 3 GPUs of an APU share its NIC");
	rdzv_bind_table_destroy(tab);
	rdzv_topo_destroy(t);
	/* Without rsmi the partitions cannot be seen: one GPU per function. */
	strip_osdevs(&text, "rsmi");
	t = load_text(text, "tuo TPX without rsmi");
	IS_INT(t ? (int)rdzv_topo_gpu_count(t) : -1, 4, "tuo TPX without rsmi: 4 GPUs (documented limit)");
	rdzv_topo_destroy(t);
	free(text);
}

/* hwloc 2.14 adds cxiN OS devices; a NIC with only those is named cxiN,
 * and an OpenFabrics-typed cxi device is not taken for an RDMA port. */
static void test_cxi(void)
{
	char *text = slurp(TUO);
	struct rdzv_topo *t;
	struct rdzv_bind_table *tab;
	char line[256];
	int i, n = 0;

	for (i = 0; i < 4; i++) {
		char from[64], to[64];

		snprintf(from, sizeof(from), "name=\"hsi%d\"", i);
		snprintf(to, sizeof(to), "name=\"cxi%d\"", i);
		n += subst_all(&text, from, to);
	}
	IS_INT(n, 4, "tuo: interfaces renamed cxiN");
	n = subst_all(&text, "name=\"cxi0\" subtype=\"Slingshot\" osdev_type=\"2\"",
	              "name=\"cxi0\" osdev_type=\"3\"");
	IS_INT(n, 1, "tuo: cxi0 made an OpenFabrics-typed device without subtype");
	t = load_text(text, "tuo cxi");
	IS_INT(t ? (int)rdzv_topo_nic_count(t) : -1, 4, "tuo cxi: 4 NICs, none counted twice");
	ok(t && rdzv_topo_format_nic(t, 0, line, sizeof(line)) == 0
	   && !strcmp(line, "nic cxi0:1 0000:01:00.0 state unknown"), "tuo cxi: %s", line);
	tab = table(t, "0,1,2,3", 4, 1);
	IS_STR(tab ? tab->socket_ifname : "", "=cxi0,cxi1,cxi2,cxi3", "tuo cxi: the list names them");
	rdzv_bind_table_destroy(tab);
	rdzv_topo_destroy(t);
	free(text);
}

int main(void)
{
	const char *env = getenv("RDZV_TOPOLOGIES"), *top = getenv("top_srcdir");
	char cmd[128];
	struct stat st;

	if (env && *env)
		snprintf(dir, sizeof(dir), "%s", env);
	else
		snprintf(dir, sizeof(dir), "%s/tests/topo/fixtures", top ? top : "..");
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		ok(0, "topology fixtures at %s (tests/topo/fixtures)", dir);
		return done_testing();
	}
	if (!mkdtemp(tmpdir)) {
		ok(0, "a temporary directory");
		return done_testing();
	}
	test_tioga();
	test_cache_roundtrip(TIOGA);
	test_cache_roundtrip(TUO);
	test_cache_roundtrip(CORONA);
	test_without_rsmi(TIOGA, 8);
	test_without_rsmi(TUO, 4);
	test_without_rsmi(CORONA, 8);
	test_classes();
	test_tpx();
	test_cxi();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		diag("cannot remove %s", tmpdir);
	return done_testing();
}
