/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-preflight-xgmi: rdzv-preflight's AMD GPU table through the ROCm SMI
 * double (tests/rsmi-double) on a fake PCI tree: what a node's local rank
 * 0 records (nothing on a node without AMD GPUs, where ROCm SMI is not even
 * loaded; "no ROCm SMI" on one with them; GPU, bus id, xGMI hive and health
 * otherwise), that it survives the wire, the xgmi check's verdict, and the
 * summary's table and JSON (absent on NVIDIA nodes). */
#include "config.h"
#include "preflight.h"
#include "tap.h"
#include "fs-fixtures.h"
#include "pf-fixtures.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256], data[300], lib[600], sys_amd[300], sys_none[300], initlog[300];

/* summary.c names the build; the GPU code is not linked here. */
const char *pf_gpu_build(void)
{
	return "built without CUDA/NCCL";
}

/* A rank's report without a CUDA GPU: the GPU count unknown. */
static void mk(struct pf_report *r, uint32_t rank, uint32_t world, const char *host,
               uint32_t local, uint32_t lworld)
{
	pf_mk(r, rank, world, host, local, lworld, NULL);
	r->gpu_count = -1;
}

/* Collect on a node whose PCI tree is sysfs, the double answering text. */
static void collect(struct pf_report *r, const char *sysfs, const char *text)
{
	mk(r, 0, 1, "n1", 0, 1);
	write_file(data, text);
	pf_xgmi_collect(r, sysfs);
}

#define HIVE "0x5b2e8c1d4a3f9e01"
#define GCD0 "gpu 0xc100 " HIVE " 0 0x77aa AMD Instinct MI250X\n"
#define GCD1 "gpu 0xc600 " HIVE " 0 0x77ab AMD Instinct MI250X\n"
#define LINE0 "GPU 0 (0000:c1:00.0): AMD Instinct MI250X, xGMI hive " HIVE ", xGMI ok"
#define LINE1 "GPU 1 (0000:c6:00.0): AMD Instinct MI250X, xGMI hive " HIVE ", xGMI ok"

static void test_collect(void)
{
	struct pf_report r;
	char text[2000];
	size_t off = 0;
	unsigned i;

	/* An NVIDIA node: ROCm SMI installed (the double) but never loaded. */
	setenv("RDZV_RSMI_LIBRARY", lib, 1);
	unlink(initlog);
	snprintf(text, sizeof(text), "log %s\n" GCD0, initlog);
	collect(&r, sys_none, text);
	ok(!r.xgmi_read && r.nxgmi == 0 && r.xgmi_hive[0] == '\0',
	   "no AMD GPU on the PCI bus: nothing recorded");
	ok(access(initlog, F_OK) != 0, "... and ROCm SMI was not even initialised");

	/* An AMD node without ROCm SMI. */
	setenv("RDZV_RSMI_LIBRARY", "/nonexistent/librocm_smi64.so.1", 1);
	collect(&r, sys_amd, GCD0);
	ok(r.xgmi_read && r.nxgmi == 0
	   && strncmp(r.xgmi_hive, "no ROCm SMI: cannot load /nonexistent/librocm_smi64.so.1: ",
	              58) == 0, "AMD GPUs and no ROCm SMI: said (%s)", r.xgmi_hive);
	setenv("RDZV_RSMI_LIBRARY", lib, 1);
	collect(&r, sys_amd, "fail rsmi_init 8\n");
	is_str(r.xgmi_hive, "no ROCm SMI: rsmi_init failed: initialization error (status 8)",
	       "rsmi_init failing: 'no ROCm SMI' with the call and status");

	/* ROCm SMI lists nothing where the PCI bus shows GPUs. */
	collect(&r, sys_amd, "# the driver is not loaded\n");
	ok(r.xgmi_read && r.nxgmi == 0 && !r.xgmi_ok, "ROCm SMI lists no GPU: recorded, not ok");
	is_str(r.xgmi_why, "ROCm SMI lists no GPU, the PCI bus shows 2 AMD GPUs (is the amdgpu "
	       "driver loaded?)", "... and why");

	/* One hive. */
	snprintf(text, sizeof(text), "log %s\n" GCD0 GCD1, initlog);
	collect(&r, sys_amd, text);
	ok(r.xgmi_read && r.xgmi_ok && r.nxgmi == 2, "two GCDs in one hive: read, ok");
	ok(access(initlog, F_OK) == 0, "... ROCm SMI initialised on the AMD node");
	is_str(r.xgmi_hive, HIVE, "the node's hive");
	is_str(r.xgmi[0], LINE0, "GPU 0's line");
	is_str(r.xgmi[1], LINE1, "GPU 1's line");

	/* Several hives, and xGMI errors. */
	collect(&r, sys_amd, GCD0 "gpu 0xc600 0x99 2 0x77ab AMD Instinct MI250X\n");
	is_str(r.xgmi_hive, "several: the GPUs of this node are not in one xGMI hive: GPU 0 "
	       "(0000:c1:00.0) xGMI hive " HIVE "; GPU 1 (0000:c6:00.0) xGMI hive 0x99",
	       "two hives on one node: both named");
	ok(!r.xgmi_ok, "an xGMI error: not ok");
	is_str(r.xgmi_why, "GPU 1 (0000:c6:00.0): xGMI multiple errors", "... the GPU named");

	/* No hive (PCIe-only GPUs). */
	collect(&r, sys_amd, "gpu 0xc100 0 0\ngpu 0xc600 0 0\n");
	ok(r.xgmi_ok && strcmp(r.xgmi_hive, "none") == 0, "GPUs in no hive: hive none, ok");

	/* More GPUs than lines: the last line says how many more. */
	for (i = 0; i < 10; i++)
		off += (size_t)snprintf(text + off, sizeof(text) - off, "gpu 0x%x " HIVE " 0\n",
		                        (0x11u + i) << 8);
	collect(&r, sys_amd, text);
	ok(r.nxgmi == PF_MAX_XGMI && strcmp(r.xgmi_hive, HIVE) == 0,
	   "ten GPUs: %d lines, the hive from all ten", PF_MAX_XGMI);
	is_str(r.xgmi[PF_MAX_XGMI - 1], "... and 3 more GPUs (rdzv-preflight --xgmi lists every "
	       "one)", "... the last line counts the rest");
}

static void test_wire_and_verdict(void)
{
	struct pf_report reps[3], back;
	struct pf_verdict v;
	struct pf_run run;
	const struct pf_check *c;
	char *blob = NULL, err[256];
	size_t len = 0;

	mk(&reps[0], 0, 3, "n1", 0, 2);
	mk(&reps[1], 1, 3, "n1", 1, 2);
	mk(&reps[2], 2, 3, "n2", 0, 1);
	run_init(&run, reps, 3);
	pf_verdict_compute(&run, &v);
	ok(!find(&v, "xgmi"), "no node with AMD GPUs: no xgmi check");
	ok(pf_report_encode(&reps[0], &blob, &len) == 0 && !strstr(blob, "xgmi"),
	   "... and no xgmi key on the wire");
	free(blob);

	setenv("RDZV_RSMI_LIBRARY", lib, 1);
	write_file(data, GCD0 GCD1);
	pf_xgmi_collect(&reps[0], sys_amd);
	pf_xgmi_collect(&reps[2], sys_amd);
	ok(pf_report_encode(&reps[0], &blob, &len) == 0
	   && pf_report_decode(blob, len, &back, err, sizeof(err)) == 0 && back.xgmi_read
	   && back.xgmi_ok && strcmp(back.xgmi_hive, HIVE) == 0 && back.nxgmi == 2
	   && strcmp(back.xgmi[1], LINE1) == 0, "the AMD GPUs survive the wire");
	free(blob);
	pf_verdict_compute(&run, &v);
	c = find(&v, "xgmi");
	ok(c && c->status == PF_PASS && strcmp(c->text, "2 nodes with AMD GPUs, each node's GPUs "
	   "in one xGMI hive or none, no xGMI errors") == 0 && has_detail(c, "n2: xGMI hive " HIVE),
	   "both nodes in one hive each: pass (%s)", c ? c->text : "-");

	/* Hive ids are node-local: two nodes in different hives is no finding. */
	write_file(data, "gpu 0xc100 0x42 0\n");
	mk(&reps[2], 2, 3, "n2", 0, 1);
	pf_xgmi_collect(&reps[2], sys_amd);
	pf_verdict_compute(&run, &v);
	c = find(&v, "xgmi");
	ok(c && c->status == PF_PASS, "nodes in different hives: still a pass (xGMI ends at the "
	   "node)");

	write_file(data, GCD0 "gpu 0xc600 0x99 1\n");
	mk(&reps[2], 2, 3, "n2", 0, 1);
	pf_xgmi_collect(&reps[2], sys_amd);
	pf_verdict_compute(&run, &v);
	c = find(&v, "xgmi");
	ok(c && c->status == PF_WARN
	   && has_detail(c, "n2: the GPUs of this node are not in one xGMI hive: GPU 0 "
	                 "(0000:c1:00.0) xGMI hive " HIVE "; GPU 1 (0000:c6:00.0) xGMI hive 0x99; "
	                 "between hives RCCL goes over PCIe")
	   && has_detail(c, "n2: xGMI errors: GPU 1 (0000:c6:00.0): xGMI error")
	   && has_detail(c, "n1: xGMI hive " HIVE),
	   "a node in two hives with an xGMI error: a warning naming the node and GPUs");
	ok(v.failed == 0, "... a warning, not a failure");

	setenv("RDZV_RSMI_LIBRARY", "/nonexistent/librocm_smi64.so.1", 1);
	mk(&reps[2], 2, 3, "n2", 0, 1);
	pf_xgmi_collect(&reps[2], sys_amd);
	pf_verdict_compute(&run, &v);
	c = find(&v, "xgmi");
	ok(c && c->status == PF_WARN && has_detail(c, "n2: no ROCm SMI: cannot load"),
	   "one node without ROCm SMI while the other has it: a warning");
	mk(&reps[0], 0, 3, "n1", 0, 2);
	pf_xgmi_collect(&reps[0], sys_amd);
	pf_verdict_compute(&run, &v);
	c = find(&v, "xgmi");
	ok(c && c->status == PF_SKIP && strcmp(c->text, "not checked: no ROCm SMI on any of 2 "
	   "nodes with AMD GPUs") == 0, "no ROCm SMI anywhere: skipped, said (%s)",
	   c ? c->text : "-");
	setenv("RDZV_RSMI_LIBRARY", lib, 1);
}

/* The summary and JSON of a run, in memory. */
static char *render(const struct pf_run *run, int json)
{
	struct pf_verdict v;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	pf_verdict_compute(run, &v);
	if (json)
		pf_json_print(f, run, &v);
	else
		pf_summary_print(f, run, &v);
	fclose(f);
	return buf;
}

static void test_summary(void)
{
	struct pf_report reps[2];
	struct pf_run run;
	char *out;

	mk(&reps[0], 0, 2, "n1", 0, 1);
	mk(&reps[1], 1, 2, "n2", 0, 1);
	run_init(&run, reps, 2);
	out = render(&run, 0);
	ok(out && !strstr(out, "xGMI") && !strstr(out, "ROCm"),
	   "an NVIDIA or CPU run: no AMD table in the summary");
	free(out);
	out = render(&run, 1);
	ok(out && !strstr(out, "xgmi"), "... nor in the JSON");
	free(out);

	write_file(data, GCD0 GCD1);
	pf_xgmi_collect(&reps[0], sys_amd);
	setenv("RDZV_RSMI_LIBRARY", "/nonexistent/librocm_smi64.so.1", 1);
	pf_xgmi_collect(&reps[1], sys_amd);
	setenv("RDZV_RSMI_LIBRARY", lib, 1);
	out = render(&run, 0);
	ok(out && strstr(out, "\n  AMD GPUs, xGMI (ROCm SMI):\n"
	                      "  n1               " LINE0 "\n"
	                      "  n1               " LINE1 "\n"
	                      "  n2               no ROCm SMI: cannot load "
	                      "/nonexistent/librocm_smi64.so.1: "),
	   "the summary's table: one line per GPU, 'no ROCm SMI' for the node without it");
	ok(out && strstr(out, "  WARN  xgmi "), "... and the xgmi check's line");
	if (out)
		diag("%s", strstr(out, "\n  AMD GPUs") ? strstr(out, "\n  AMD GPUs") + 1 : out);
	free(out);
	out = render(&run, 1);
	ok(out && strstr(out, ",\"xgmi\":{\"hive\":\"" HIVE "\",\"ok\":true,\"why\":\"\","
	                      "\"gpus\":[\"" LINE0 "\",\"" LINE1 "\"]}"),
	   "the JSON carries each node's xGMI hive and GPU lines");
	free(out);
}

int main(void)
{
	char p[400];

	opts.outlier = 0.7;
	snprintf(env.master_addr, sizeof(env.master_addr), "n1");
	env.master_port = 29500;
	double_path(lib, sizeof(lib), "RDZV_RSMI_DOUBLE_DIR", "tests/rsmi-double/.libs",
	            "librsmi-double.so");
	if (access(lib, R_OK) != 0)
		skip_all("the ROCm SMI double is not built (make check builds it)");
	temp_dir(dir, sizeof(dir), "test-preflight-xgmi");
	snprintf(data, sizeof(data), "%s/rsmi.txt", dir);
	snprintf(initlog, sizeof(initlog), "%s/inits.log", dir);
	setenv("RDZV_RSMI_DOUBLE", data, 1);
	/* An MI250X node: a GCD, its audio function, another GCD, a NIC; and an
	 * NVIDIA node. */
	snprintf(sys_amd, sizeof(sys_amd), "%s/amd", dir);
	pci_dev(sys_amd, "0000:c1:00.0", "0x1002\n", "0x038000\n");
	pci_dev(sys_amd, "0000:c1:00.1", "0x1002\n", "0x040300\n");
	pci_dev(sys_amd, "0000:c6:00.0", "0x1002\n", "0x038000\n");
	pci_dev(sys_amd, "0000:41:00.0", "0x17db\n", "0x020000\n");
	snprintf(sys_none, sizeof(sys_none), "%s/nvidia", dir);
	pci_dev(sys_none, "0000:3b:00.0", "0x10de\n", "0x030200\n");
	test_collect();
	test_wire_and_verdict();
	test_summary();
	snprintf(p, sizeof(p), "rm -rf -- '%s'", dir);
	if (system(p) != 0)
		diag("could not remove %s", dir);
	return done_testing();
}
