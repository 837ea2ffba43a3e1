/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-topo-amd: AMD GPUs and Slingshot NICs on real exports, and the
 * identity, visibility and MIOpen rules of AMD nodes.
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

#include "bindmode.h"
#include "envset.h"
#include "identity.h"
#include "tap.h"
#include "topo.h"
#include "topocache.h"
#include "util.h"

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
	/* A caller that binds NVIDIA GPUs only binds nothing on AMD nodes. */
	tab = table(t, "0,1", 2, 0);
	ok(tab && tab->ngpus == 0 && tab->rows[0].gpu < 0 && !tab->socket_ifname[0],
	   "tioga: without amd, nothing to bind, no error");
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

/* tuo.SPX's text as in TPX mode: after each rsmiN element two more,
 * rsmi(4+2N) and rsmi(5+2N). Returns how many were doubled (4). */
static int make_tpx(char **text)
{
	char from[64], to[256];
	int i, n = 0;

	for (i = 0; i < 4; i++) {
		snprintf(from, sizeof(from), "name=\"rsmi%d\" subtype=\"RSMI\" osdev_type=\"1\">", i);
		snprintf(to, sizeof(to), "name=\"rsmi%d\" subtype=\"RSMI\" osdev_type=\"1\"/>"
		         "<object type=\"OSDev\" name=\"rsmi%d\" subtype=\"RSMI\" osdev_type=\"1\"/>"
		         "<object type=\"OSDev\" name=\"rsmi%d\" subtype=\"RSMI\" osdev_type=\"1\">",
		         i, 4 + 2 * i, 5 + 2 * i);
		n += subst_all(text, from, to);
	}
	return n;
}

/* MI300A in TPX mode: 3 logical GPUs (rsmiN) on each PCI function. */
static void test_tpx(void)
{
	char *text = slurp(TUO);
	struct rdzv_topo *t;
	struct rdzv_bind_table *tab;
	int n;

	n = make_tpx(&text);
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

/* A fixture node: ROOT/sys/class/drm/{cardN,renderD(128+N)}/device -> the
 * PCI function of GPU N in `order` (so minors need not follow bus order),
 * ROOT/sys/bus/pci/devices/BUS/vendor, and a gres.conf listing the render
 * nodes in `gres` order. */
static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f) != 0)
		diag("cannot write %s", path);
}

static void drm_tree(const char *root, const char *const *bus, const int *order, size_t n,
                     const char *vendor)
{
	char p[8192], q[8192];
	size_t i;

	snprintf(p, sizeof(p), "mkdir -p '%s/sys/class/drm' '%s/sys/bus/pci/devices'", root, root);
	if (system(p) != 0)
		diag("mkdir %s", root);
	for (i = 0; i < n; i++) {
		const char *b = bus[order[i]];

		snprintf(p, sizeof(p), "%s/sys/bus/pci/devices/%s", root, b);
		mkdir(p, 0755);
		snprintf(p, sizeof(p), "%s/sys/bus/pci/devices/%s/vendor", root, b);
		write_file(p, vendor);
		snprintf(p, sizeof(p), "%s/sys/class/drm/renderD%zu", root, 128 + i);
		mkdir(p, 0755);
		snprintf(q, sizeof(q), "../../../devices/pci0000:c0/%s", b);
		snprintf(p, sizeof(p), "%s/sys/class/drm/renderD%zu/device", root, 128 + i);
		if (symlink(q, p) < 0)
			diag("symlink %s", p);
		snprintf(p, sizeof(p), "%s/sys/class/drm/card%zu", root, i);
		mkdir(p, 0755);
		snprintf(p, sizeof(p), "%s/sys/class/drm/card%zu/device", root, i);
		if (symlink(q, p) < 0)
			diag("symlink %s", p);
	}
	/* a connector is no DRM node of a GPU */
	snprintf(p, sizeof(p), "%s/sys/class/drm/card0-DP-1", root);
	mkdir(p, 0755);
}

static void test_identity(void)
{
	static const char *const bus[8] = {
		"0000:c1:00.0", "0000:c6:00.0", "0000:c9:00.0", "0000:ce:00.0",
		"0000:d1:00.0", "0000:d6:00.0", "0000:d9:00.0", "0000:de:00.0",
	};
	/* renderD(128+i) is the function of GPU order[i] */
	static const int order[8] = { 3, 0, 1, 2, 7, 6, 5, 4 };
	char *text = slurp(TIOGA);
	struct rdzv_topo *t = load_text(text, TIOGA);
	struct rdzv_identity *id = NULL;
	struct rdzv_identity_req req = { 0 };
	struct rdzv_bind_table *tab = NULL;
	struct rdzv_bind_req breq = { 0 };
	char root[4200], gres[4300], cg[8800], line[512], err[512] = "";
	int gpus[8];
	size_t k, n;

	snprintf(root, sizeof(root), "%s/node", tmpdir);
	drm_tree(root, bus, order, 8, "0x1002\n");
	snprintf(gres, sizeof(gres), "%s/gres.conf", tmpdir);
	/* Slurm's GPU k is the k-th file: renderD135 first */
	write_file(gres, "NodeName=n1 Name=gpu File=/dev/dri/renderD135\n"
	                 "NodeName=n1 Name=gpu File=/dev/dri/renderD[128-134]\n"
	                 "NodeName=n2 Name=gpu File=/dev/nvidia0\n");
	req.root = root;
	req.gres_conf = gres;
	req.node = "n1";
	ok(t && rdzv_identity_read(t, &req, &id, err, sizeof(err)) == 0 && id,
	   "AMD identity read (%s)", err);
	if (!id) {
		rdzv_topo_destroy(t);
		free(text);
		return;
	}
	ok(!id->positional && id->amd, "AMD identity: by gres.conf and sysfs, not by position (%s)",
	   id->why);
	IS_INT(id->n, 8, "AMD identity: 8 of Slurm's GPUs");
	IS_INT(rdzv_identity_gpu(id, 0), order[7], "Slurm GPU 0 = renderD135 = GPU %d", order[7]);
	for (k = 1; k < 8; k++)
		IS_INT(rdzv_identity_gpu(id, k), order[k - 1], "Slurm GPU %zu = renderD%zu = GPU %d",
		       k, 127 + k, order[k - 1]);
	ok(rdzv_identity_format(id, (size_t)order[7], line, sizeof(line)) == 0, "format");
	IS_STR(line, "slurm 0 file /dev/dri/renderD135 minor 135 busid 0000:d1:00.0 source name+sysfs",
	       "AMD identity line");
	/* The table follows it: Slurm's GPUs 0,1 are GCDs 4 and 3. */
	breq.step_gpus = "0,1";
	breq.visible = "0,1";
	breq.ntasks = 2;
	breq.ident = id;
	breq.amd = 1;
	ok(rdzv_bind_compute(t, &breq, &tab, err, sizeof(err)) == 0 && tab, "table (%s)", err);
	if (tab) {
		IS_INT(tab->rows[0].gpu, 4, "task 0: Slurm GPU 0 is GCD 4");
		IS_STR(tab->rows[0].cpus, "0-7,64-71", "task 0: GCD 4's cores");
		IS_STR(tab->rows[0].ifname, "hsi2", "task 0: GCD 4's NIC");
		IS_INT(tab->rows[1].gpu, 3, "task 1: Slurm GPU 1 is GCD 3");
		IS_STR(tab->rows[1].ifname, "hsi1", "task 1: GCD 3's NIC");
		IS_STR(tab->rows[1].visible, "1", "task 1: its ROCR_VISIBLE_DEVICES entry");
	}
	rdzv_bind_table_destroy(tab);
	/* The task's devices cgroup (v1) names render node 226:130 = GCD 1. */
	snprintf(cg, sizeof(cg), "mkdir -p '%s/proc/self' '%s/sys/fs/cgroup/devices/slurm/job_1/step_0/task_0'",
	         root, root);
	if (system(cg) != 0)
		diag("mkdir cgroup");
	snprintf(cg, sizeof(cg), "%s/proc/self/cgroup", root);
	write_file(cg, "4:devices:/slurm/job_1/step_0/task_0\n");
	snprintf(cg, sizeof(cg), "%s/sys/fs/cgroup/devices/slurm/job_1/step_0/task_0/devices.list", root);
	write_file(cg, "c 195:0 rwm\nc 226:130 rw\nc 226:2 rw\n");
	n = rdzv_identity_cgroup_gpus(id, root, gpus, 8);
	ok(n == 2 && gpus[0] == 1 && gpus[1] == 1,
	   "cgroup 226:2 (card2) and 226:130 (renderD130) are GCD 1; 195:0 is no AMD GPU (n=%zu)", n);
	rdzv_identity_destroy(id);
	id = NULL;
	/* Another node's NVIDIA file on an AMD node: refused, by position. */
	req.node = "n2";
	ok(rdzv_identity_read(t, &req, &id, err, sizeof(err)) == 0 && id && id->positional
	   && strstr(id->why, "File=/dev/nvidia0 is not an AMD GPU's DRM node"),
	   "an NVIDIA file on an AMD node falls back to position: %s", id ? id->why : err);
	rdzv_identity_destroy(id);
	id = NULL;
	/* AutoDetect=rsmi: ROCm SMI's order, PCI order. */
	write_file(gres, "AutoDetect=rsmi\n");
	req.node = "n1";
	ok(rdzv_identity_read(t, &req, &id, err, sizeof(err)) == 0 && id && !id->positional
	   && id->v[0].source == RDZV_ID_RSMI && rdzv_identity_gpu(id, 5) == 5
	   && strstr(id->why, "AutoDetect=rsmi: Slurm numbers GPUs in ROCm SMI's order"),
	   "AutoDetect=rsmi: PCI order, said so: %s", id ? id->why : err);
	rdzv_identity_destroy(id);
	id = NULL;
	/* No DRM node in sysfs: position, and why. */
	req.root = tmpdir;
	ok(rdzv_identity_read(t, &req, &id, err, sizeof(err)) == 0 && id && id->positional
	   && strstr(id->why, "/sys/class/drm"), "no sysfs DRM nodes: by position: %s",
	   id ? id->why : err);
	rdzv_identity_destroy(id);
	rdzv_topo_destroy(t);
	free(text);
}

/* Partitions: the three render nodes of an MI300A function in TPX mode
 * are its three logical GPUs, in minor order. */
static void test_identity_tpx(void)
{
	static const char *const bus[4] = {
		"0000:02:00.0", "0001:02:00.0", "0002:02:00.0", "0003:02:00.0",
	};
	static const int order[12] = { 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3 };
	char *text = slurp(TUO), root[4200], gres[4300], err[512] = "";
	struct rdzv_identity *id = NULL;
	struct rdzv_identity_req req = { 0 };
	struct rdzv_topo *t;

	make_tpx(&text);
	t = load_text(text, "tuo TPX");
	snprintf(root, sizeof(root), "%s/tpx", tmpdir);
	drm_tree(root, bus, order, 12, "0x1002\n");
	snprintf(gres, sizeof(gres), "%s/gres-tpx.conf", tmpdir);
	write_file(gres, "Name=gpu File=/dev/dri/renderD[137-139]\n"
	                 "Name=gpu File=/dev/dri/renderD[128-136]\n");
	req.root = root;
	req.gres_conf = gres;
	ok(t && rdzv_topo_gpu_count(t) == 12 && rdzv_identity_read(t, &req, &id, err, sizeof(err)) == 0
	   && id && !id->positional, "TPX identity by sysfs (%s)", id ? id->why : err);
	if (id) {
		IS_INT(rdzv_identity_gpu(id, 0), 9, "TPX: Slurm GPU 0 = renderD137 = APU 3's first GPU");
		IS_INT(rdzv_identity_gpu(id, 2), 11, "TPX: Slurm GPU 2 = renderD139 = APU 3's third GPU");
		IS_INT(rdzv_identity_gpu(id, 4), 1, "TPX: Slurm GPU 4 = renderD129 = APU 0's second GPU");
		IS_INT(rdzv_identity_gpu(id, 6), 3, "TPX: Slurm GPU 6 = renderD131 = APU 1's first GPU");
	}
	rdzv_identity_destroy(id);
	rdzv_topo_destroy(t);
	free(text);
}

static const char *entry(const struct rdzv_envset *env, const char *name, enum rdzv_policy *pol)
{
	const struct rdzv_env_entry *e = rdzv_envset_find(env, name);

	if (e && pol)
		*pol = e->policy;
	return e ? (e->value ? e->value : "(unset)") : NULL;
}

static void test_visibility(void)
{
	struct rdzv_envset *env = rdzv_envset_create();
	struct rdzv_amd_vis v = { 0 };
	char warn[512], err[256];
	enum rdzv_policy pol = RDZV_SET_DEFAULT;

	/* Slurm without an env flag: the same list in all four. */
	v.rocr = v.cuda = v.gpu_ordinal = v.ze = "0,1,2,3";
	ok(rdzv_bind_amd_visibility(&v, env, warn, sizeof(warn), err, sizeof(err)) == 0,
	   "no-flag mode");
	ok(entry(env, "CUDA_VISIBLE_DEVICES", &pol) && pol == RDZV_SET_UNSET,
	   "no-flag mode: Slurm's CUDA_VISIBLE_DEVICES removed");
	ok(entry(env, "GPU_DEVICE_ORDINAL", &pol) && pol == RDZV_SET_UNSET,
	   "no-flag mode: Slurm's GPU_DEVICE_ORDINAL removed");
	ok(entry(env, "ZE_AFFINITY_MASK", &pol) && pol == RDZV_SET_UNSET,
	   "no-flag mode: Slurm's ZE_AFFINITY_MASK removed");
	ok(!entry(env, "ROCR_VISIBLE_DEVICES", NULL), "no-flag mode: ROCR_VISIBLE_DEVICES kept as is");
	IS_STR(warn, "", "no-flag mode: nothing to warn about");
	rdzv_envset_destroy(env);
	/* Narrowed per task alike (--gpus-per-task), plus the user's HIP_VISIBLE_DEVICES. */
	env = rdzv_envset_create();
	v.rocr = v.cuda = v.gpu_ordinal = v.ze = "2";
	v.hip = "0";
	ok(rdzv_bind_amd_visibility(&v, env, warn, sizeof(warn), err, sizeof(err)) == 0
	   && entry(env, "CUDA_VISIBLE_DEVICES", &pol) && pol == RDZV_SET_UNSET
	   && !entry(env, "HIP_VISIBLE_DEVICES", NULL), "per-task lists: Slurm's copies removed, HIP kept");
	IS_STR(warn, "HIP_VISIBLE_DEVICES=0 (not Slurm's) selects again among the GPUs "
	       "ROCR_VISIBLE_DEVICES=2 leaves, by position in that list; kept",
	       "the user's HIP_VISIBLE_DEVICES is named");
	rdzv_envset_destroy(env);
	/* amd_gpu_env: only ROCR_VISIBLE_DEVICES is Slurm's; the user's CUDA_VISIBLE_DEVICES stays. */
	env = rdzv_envset_create();
	v.rocr = "1";
	v.cuda = "1";
	v.gpu_ordinal = v.ze = v.hip = NULL;
	ok(rdzv_bind_amd_visibility(&v, env, warn, sizeof(warn), err, sizeof(err)) == 0
	   && env->n == 0, "amd_gpu_env: nothing removed");
	IS_STR(warn, "CUDA_VISIBLE_DEVICES=1 (not Slurm's) selects again among the GPUs "
	       "ROCR_VISIBLE_DEVICES=1 leaves, by position in that list; kept",
	       "amd_gpu_env: the user's CUDA_VISIBLE_DEVICES is named");
	v.rocr = NULL;
	ok(rdzv_bind_amd_visibility(&v, env, warn, sizeof(warn), err, sizeof(err)) == 0
	   && env->n == 0 && !warn[0], "no ROCR_VISIBLE_DEVICES: nothing done, nothing said");
	rdzv_envset_destroy(env);
}

/* isolate narrows ROCR_VISIBLE_DEVICES on AMD nodes; no CUDA_DEVICE_ORDER. */
static void test_fill(void)
{
	char *text = slurp(TIOGA), err[256] = "";
	struct rdzv_topo *t = load_text(text, TIOGA);
	struct rdzv_bind_table *tab = table(t, "0,1,2,3", 4, 1);
	struct rdzv_envset *env = rdzv_envset_create();
	enum rdzv_policy pol = RDZV_SET_DEFAULT;
	int iso = 0;

	ok(tab && rdzv_bind_fill(tab, 2, RDZV_BIND_AUTO | RDZV_BIND_ISOLATE, "0,1,2,3", "0,1,2,3",
	                         env, &iso, err, sizeof(err)) == 0 && iso, "isolate (%s)", err);
	IS_STR(entry(env, "ROCR_VISIBLE_DEVICES", &pol), "2", "isolate: ROCR_VISIBLE_DEVICES=2");
	ok(pol == RDZV_SET_ENFORCE, "isolate: enforced over Slurm's list");
	ok(!entry(env, "CUDA_VISIBLE_DEVICES", NULL) && !entry(env, "CUDA_DEVICE_ORDER", NULL),
	   "isolate: no CUDA variable for an AMD task");
	rdzv_envset_destroy(env);
	rdzv_bind_table_destroy(tab);
	rdzv_topo_destroy(t);
	free(text);
}

static void test_private_dir(void)
{
	char p[4200], q[4200], err[512];
	struct stat st;

	snprintf(p, sizeof(p), "%s/miopen", tmpdir);
	ok(rdzv_private_dir(p, err, sizeof(err)) == 0 && stat(p, &st) == 0
	   && (st.st_mode & 0777) == 0700 && st.st_uid == geteuid(), "made 0700, the caller's (%s)",
	   err);
	ok(rdzv_private_dir(p, err, sizeof(err)) == 0, "an existing private directory is used");
	chmod(p, 0755);
	ok(rdzv_private_dir(p, err, sizeof(err)) < 0 && strstr(err, "open to others (mode 755)"),
	   "a directory open to others is refused: %s", err);
	snprintf(q, sizeof(q), "%s/miopen-link", tmpdir);
	if (symlink(p, q) < 0)
		diag("symlink");
	ok(rdzv_private_dir(q, err, sizeof(err)) < 0 && strstr(err, "is a symbolic link"),
	   "a link is refused, never followed: %s", err);
	snprintf(q, sizeof(q), "%s/miopen-file", tmpdir);
	write_file(q, "x");
	ok(rdzv_private_dir(q, err, sizeof(err)) < 0 && strstr(err, "is not a directory"),
	   "a file is refused: %s", err);
	snprintf(q, sizeof(q), "%s/no/such/dir", tmpdir);
	ok(rdzv_private_dir(q, err, sizeof(err)) < 0 && strstr(err, "cannot create"),
	   "a missing parent is named: %s", err);
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
	test_identity();
	test_identity_tpx();
	test_visibility();
	test_fill();
	test_private_dir();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		diag("cannot remove %s", tmpdir);
	return done_testing();
}
