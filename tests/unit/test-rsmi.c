/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-rsmi: the ROCm SMI reader against the ROCm SMI double
 * (tests/rsmi-double): ROCm SMI missing or not ROCm SMI, rsmi_init and the
 * device count failing, bus ids from BDFIDs, one hive, several hives, no
 * hive, xGMI errors, per-GPU calls failing, a library without the optional
 * calls, the soname found the dynamic linker's way, and AMD GPUs counted
 * on a fake PCI tree (bad input and failures first). */
#include "config.h"
#include "rsmi.h"
#include "tap.h"
#include "fs-fixtures.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256], data[300], lib[600], lib_min[600];

/* Read with the double answering text; returns rdzv_rsmi_read's rc. */
static int read_with(const char *library, const char *text, struct rdzv_rsmi *r, char *err,
                     size_t errlen)
{
	write_file(data, text);
	err[0] = '\0';
	return rdzv_rsmi_read(library, r, err, errlen);
}

/* An MI250X node's first two GCDs, one hive, no xGMI errors. */
#define GCD0 "gpu 0xc100 0x5b2e8c1d4a3f9e01 0 0x77aa AMD Instinct MI250X\n"
#define GCD1 "gpu 0x10000c600 0x5b2e8c1d4a3f9e01 0 0x77ab AMD Instinct MI250X\n"

static void test_missing_and_failing(void)
{
	struct rdzv_rsmi r;
	char err[1024];

	ok(rdzv_rsmi_read("/nonexistent/librocm_smi64.so.1", &r, err, sizeof(err)) < 0
	   && strstr(err, "no ROCm SMI: cannot load /nonexistent/librocm_smi64.so.1: "),
	   "ROCm SMI missing: 'no ROCm SMI' naming the library (%s)", err);
	ok(rdzv_rsmi_read("librocm_smi64.so.1", &r, err, sizeof(err)) < 0
	   && strstr(err, "'librocm_smi64.so.1' is not an absolute path"),
	   "a relative library path is refused (%s)", err);
	ok(rdzv_rsmi_read("/lib/x86_64-linux-gnu/libc.so.6", &r, err, sizeof(err)) < 0
	   && strstr(err, "libc.so.6 lacks rsmi_init: not a ROCm SMI library"),
	   "a library that is not ROCm SMI is named (%s)", err);
	ok(read_with(lib, "fail rsmi_init 8\n", &r, err, sizeof(err)) < 0
	   && strcmp(err, "ROCm SMI: rsmi_init failed: initialization error (status 8)") == 0,
	   "rsmi_init failing is named with its status (%s)", err);
	ok(read_with(lib, "fail rsmi_init 4294967295\n", &r, err, sizeof(err)) < 0
	   && strstr(err, "rsmi_init failed: unknown error (status 4294967295)"),
	   "RSMI_STATUS_UNKNOWN_ERROR is named (%s)", err);
	ok(read_with(lib, GCD0 "fail rsmi_num_monitor_devices 4\n", &r, err, sizeof(err)) < 0
	   && strcmp(err, "ROCm SMI: rsmi_num_monitor_devices failed: permission denied "
	             "(status 4)") == 0 && r.n == 0,
	   "rsmi_num_monitor_devices failing is named (%s)", err);
	ok(read_with(lib, "fail rsmi_init 42\n", &r, err, sizeof(err)) < 0
	   && strstr(err, "unrecognised status (status 42)"),
	   "a status newer than rdzv is still shown by number (%s)", err);
}

static void test_devices(void)
{
	struct rdzv_rsmi r;
	char err[1024], line[512];
	uint64_t hive = 0;

	ok(read_with(lib, "# no GPU\n", &r, err, sizeof(err)) == 0 && r.n == 0 && r.total == 0,
	   "no GPU: read, nothing listed (%s)", err);
	is_int(rdzv_rsmi_hive(&r, &hive, err, sizeof(err)), 0, "no GPU: no hive");

	ok(read_with(lib, GCD0 GCD1, &r, err, sizeof(err)) == 0 && r.n == 2 && r.total == 2,
	   "two GCDs read (%s)", err);
	is_int(r.gpu[0].index, 0, "GPU 0's index");
	is_int(r.gpu[1].index, 1, "GPU 1's index");
	ok(r.gpu[0].bdfid == 0xc100u && r.gpu[1].bdfid == 0x10000c600u,
	   "the BDFIDs as ROCm SMI gave them");
	is_str(r.gpu[0].busid, "0000:c1:00.0", "BDFID 0xc100 is bus c1, device 0, function 0");
	is_str(r.gpu[1].busid, "0001:c6:00.0", "BDFID 0x10000c600 is domain 1, bus c6");
	ok(r.gpu[0].hive_rc == 0 && r.gpu[0].hive == 0x5b2e8c1d4a3f9e01u, "GPU 0's hive id");
	ok(r.gpu[0].xgmi_rc == 0 && r.gpu[0].xgmi == RDZV_XGMI_NO_ERRORS, "GPU 0: no xGMI errors");
	ok(r.gpu[0].have_unique && r.gpu[0].unique_id == 0x77aa, "GPU 0's unique id");
	is_str(r.gpu[0].name, "AMD Instinct MI250X", "GPU 0's name from rsmi_dev_name_get");
	rdzv_rsmi_gpu_line(&r.gpu[0], line, sizeof(line));
	is_str(line, "GPU 0 (0000:c1:00.0): AMD Instinct MI250X, xGMI hive 0x5b2e8c1d4a3f9e01, "
	       "xGMI ok", "GPU 0's line");
	ok(rdzv_rsmi_hive(&r, &hive, err, sizeof(err)) == 1 && hive == 0x5b2e8c1d4a3f9e01u,
	   "both GCDs in one hive: the node's hive (%s)", err);
	ok(rdzv_rsmi_xgmi_ok(&r, err, sizeof(err)) == 0 && err[0] == '\0', "no xGMI fault");
}

static void test_bus_ids(void)
{
	static const struct {
		uint64_t bdfid;
		const char *want;
	} c[] = {
		{ 0x0, "0000:00:00.0" },
		{ 0xc1 << 8, "0000:c1:00.0" },
		{ (0x29u << 8) | (0x1fu << 3) | 7u, "0000:29:1f.7" },
		{ (0x10000ull << 32) | (0x03u << 8), "10000:03:00.0" },
		/* the reserved bits 16-31 are no part of the address */
		{ 0xf0000000ull | (0xc1u << 8), "0000:c1:00.0" },
		{ (0xffffffffull << 32) | 0xffffu, "ffffffff:ff:1f.7" },
	};
	char buf[32];
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		rdzv_rsmi_busid(c[i].bdfid, buf, sizeof(buf));
		is_str(buf, c[i].want, "BDFID formatting");
	}
}

static void test_hives(void)
{
	struct rdzv_rsmi r;
	char err[1024], line[512];
	uint64_t hive = 0;

	/* two hives on one node (a board whose xGMI links are split) */
	ok(read_with(lib, GCD0 "gpu 0xc600 0x99 0 0x77ab AMD Instinct MI250X\n", &r, err,
	             sizeof(err)) == 0 && r.n == 2, "two GPUs, two hives: read");
	ok(rdzv_rsmi_hive(&r, &hive, err, sizeof(err)) < 0
	   && strcmp(err, "the GPUs of this node are not in one xGMI hive: GPU 0 (0000:c1:00.0) "
	             "xGMI hive 0x5b2e8c1d4a3f9e01; GPU 1 (0000:c6:00.0) xGMI hive 0x99") == 0,
	   "several hives: every GPU named with its hive (%s)", err);

	/* one in a hive, one in none */
	ok(read_with(lib, GCD0 "gpu 0xc600 0 0\n", &r, err, sizeof(err)) == 0
	   && rdzv_rsmi_hive(&r, &hive, err, sizeof(err)) < 0
	   && strstr(err, "GPU 1 (0000:c6:00.0) no xGMI hive"),
	   "a GPU in no hive beside one in a hive is named (%s)", err);

	/* no hive at all: PCIe-only GPUs (hive 0, or NOT_SUPPORTED) */
	ok(read_with(lib, "gpu 0xc100 0 0\ngpu 0xc600 0x5 0\nfail rsmi_dev_xgmi_hive_id_get 2 1\n",
	             &r, err, sizeof(err)) == 0 && r.gpu[1].hive_rc == RDZV_RSMI_NOT_SUPPORTED
	   && rdzv_rsmi_hive(&r, &hive, err, sizeof(err)) == 0,
	   "hive 0 and NOT_SUPPORTED are both no hive: the node has none");
	rdzv_rsmi_gpu_line(&r.gpu[1], line, sizeof(line));
	is_str(line, "GPU 1 (0000:c6:00.0): no xGMI hive, xGMI ok",
	       "a GPU with no name and no hive: the line says so");

	/* the hive call failing otherwise: named, and no hive to agree on */
	ok(read_with(lib, GCD0 GCD1 "fail rsmi_dev_xgmi_hive_id_get 3 1\n", &r, err,
	             sizeof(err)) == 0 && r.gpu[1].hive_rc == 3, "the hive query failing is recorded");
	rdzv_rsmi_gpu_line(&r.gpu[1], line, sizeof(line));
	is_str(line, "GPU 1 (0001:c6:00.0): AMD Instinct MI250X, xGMI hive unreadable: "
	       "rsmi_dev_xgmi_hive_id_get: file error (status 3), xGMI ok",
	       "... and the line names the call and its status");
	ok(rdzv_rsmi_hive(&r, &hive, err, sizeof(err)) < 0
	   && strstr(err, "GPU 1 (0001:c6:00.0) xGMI hive unreadable"),
	   "... and the node's hive is not guessed (%s)", err);
}

static void test_health(void)
{
	struct rdzv_rsmi r;
	char err[1024], line[512];

	ok(read_with(lib, GCD0 "gpu 0x10000c600 0x5b2e8c1d4a3f9e01 1 0x77ab AMD Instinct MI250X\n"
	             "gpu 0x10000c900 0x5b2e8c1d4a3f9e01 2 0x77ac AMD Instinct MI250X\n", &r, err,
	             sizeof(err)) == 0 && r.n == 3 && r.gpu[1].xgmi == RDZV_XGMI_ERROR
	   && r.gpu[2].xgmi == RDZV_XGMI_MULTIPLE_ERRORS, "xGMI error states read");
	rdzv_rsmi_gpu_line(&r.gpu[1], line, sizeof(line));
	is_str(line, "GPU 1 (0001:c6:00.0): AMD Instinct MI250X, xGMI hive 0x5b2e8c1d4a3f9e01, "
	       "xGMI error", "one xGMI error: on the line");
	ok(rdzv_rsmi_xgmi_ok(&r, err, sizeof(err)) < 0
	   && strcmp(err, "GPU 1 (0001:c6:00.0): xGMI error; GPU 2 (0001:c9:00.0): xGMI multiple "
	             "errors") == 0, "the faulty GPUs are named, each with its fault (%s)", err);

	ok(read_with(lib, GCD0 GCD1 "fail rsmi_dev_xgmi_error_status 2\n", &r, err,
	             sizeof(err)) == 0 && r.gpu[0].xgmi_rc == RDZV_RSMI_NOT_SUPPORTED,
	   "xGMI status not supported: recorded");
	rdzv_rsmi_gpu_line(&r.gpu[0], line, sizeof(line));
	is_str(line, "GPU 0 (0000:c1:00.0): AMD Instinct MI250X, xGMI hive 0x5b2e8c1d4a3f9e01, "
	       "xGMI health not reported", "... the line says not reported");
	ok(rdzv_rsmi_xgmi_ok(&r, err, sizeof(err)) == 0, "... and it is no fault");

	ok(read_with(lib, GCD0 "fail rsmi_dev_xgmi_error_status 4\n", &r, err, sizeof(err)) == 0,
	   "xGMI status refused: still a read");
	rdzv_rsmi_gpu_line(&r.gpu[0], line, sizeof(line));
	ok(strstr(line, "xGMI health unreadable: rsmi_dev_xgmi_error_status: permission denied "
	          "(status 4)") != NULL, "... named with the call and status (%s)", line);
}

static void test_per_gpu_failures(void)
{
	struct rdzv_rsmi r;
	char err[1024], line[512];

	ok(read_with(lib, GCD0 GCD1 "fail rsmi_dev_pci_id_get 2 0\n", &r, err, sizeof(err)) == 0
	   && r.n == 2 && r.gpu[0].pci_rc == 2 && r.gpu[0].busid[0] == '\0'
	   && strcmp(r.gpu[1].busid, "0001:c6:00.0") == 0,
	   "the bus id query failing for one GPU is recorded, the others read");
	rdzv_rsmi_gpu_line(&r.gpu[0], line, sizeof(line));
	is_str(line, "GPU 0: bus id unreadable: rsmi_dev_pci_id_get: not supported (status 2), "
	       "AMD Instinct MI250X, xGMI hive 0x5b2e8c1d4a3f9e01, xGMI ok",
	       "... its line names the call and status");
	ok(read_with(lib, GCD0 "fail rsmi_dev_name_get 2\nfail rsmi_dev_unique_id_get 2\n", &r,
	             err, sizeof(err)) == 0 && r.gpu[0].name[0] == '\0' && !r.gpu[0].have_unique,
	   "the optional name and unique id failing: left out, not an error");
	ok(read_with(lib, "gpu 0xc100 0x5 0 0 AMD Instinct MI300A\n", &r, err, sizeof(err)) == 0
	   && !r.gpu[0].have_unique && strcmp(r.gpu[0].name, "AMD Instinct MI300A") == 0,
	   "a zero unique id (MI300A) identifies nothing: not kept");
	ok(read_with(lib_min, GCD0 GCD1, &r, err, sizeof(err)) == 0 && r.n == 2
	   && r.gpu[0].name[0] == '\0' && !r.gpu[0].have_unique
	   && strcmp(r.gpu[1].busid, "0001:c6:00.0") == 0,
	   "a ROCm SMI without the optional calls still reads every GPU (%s)", err);
	rdzv_rsmi_gpu_line(&r.gpu[0], line, sizeof(line));
	is_str(line, "GPU 0 (0000:c1:00.0): xGMI hive 0x5b2e8c1d4a3f9e01, xGMI ok",
	       "... its line has no name");
}

static void test_pci_count(void)
{
	char root[300], p[400];

	snprintf(root, sizeof(root), "%s/sys", dir);
	is_int(rdzv_rsmi_pci_gpus(root), 0, "no PCI tree: no AMD GPU");
	snprintf(p, sizeof(p), "%s/sys/bus/pci/devices", dir);
	mkdirs(p);
	pci_dev(root, "0000:c1:00.0", "0x1002\n", "0x038000\n"); /* MI250X GCD */
	pci_dev(root, "0000:c1:00.1", "0x1002\n", "0x040300\n"); /* its audio: not a GPU */
	pci_dev(root, "0000:05:00.0", "0x1002\n", "0x120000\n"); /* MI300X */
	pci_dev(root, "0000:3b:00.0", "0x10de\n", "0x030200\n"); /* an NVIDIA GPU */
	pci_dev(root, "0000:41:00.0", "0x17db\n", "0x020000\n"); /* a Slingshot NIC */
	is_int(rdzv_rsmi_pci_gpus(root), 2, "AMD display and accelerator functions counted, "
	       "nothing else");
}

/* With no library named, the soname is found the dynamic linker's way:
 * this test runs itself again with LD_LIBRARY_PATH naming a directory
 * where librocm_smi64.so.1 is the double (ld.so reads the variable only at
 * start). */
static void test_soname(const char *self)
{
	char libdir[400], link[500], cmd[1600];
	int rc;

	snprintf(libdir, sizeof(libdir), "%s/lib", dir);
	snprintf(link, sizeof(link), "%s/" RDZV_RSMI_SONAME, libdir);
	if (mkdir(libdir, 0700) < 0 || symlink(lib, link) < 0) {
		ok(0, "cannot set up %s", link);
		return;
	}
	write_file(data, GCD0);
	snprintf(cmd, sizeof(cmd), "LD_LIBRARY_PATH='%s' RDZV_TEST_RSMI_SONAME=1 '%s'", libdir,
	         self);
	rc = system(cmd);
	ok(rc == 0, "no library named: " RDZV_RSMI_SONAME " is loaded from the search path");
	unlink(link);
	rmdir(libdir);
}

/* The child of test_soname: exit 0 when the default load reads the double. */
static int soname_child(void)
{
	struct rdzv_rsmi r;
	char err[1024] = "";

	if (rdzv_rsmi_read(NULL, &r, err, sizeof(err)) == 0 && r.n == 1
	    && strcmp(r.gpu[0].busid, "0000:c1:00.0") == 0)
		return 0;
	fprintf(stderr, "# soname child: %s (n %u)\n", err, r.n);
	return 1;
}

int main(int argc, char **argv)
{
	(void)argc;
	if (getenv("RDZV_TEST_RSMI_SONAME"))
		return soname_child();
	double_path(lib, sizeof(lib), "RDZV_RSMI_DOUBLE_DIR", "tests/rsmi-double/.libs",
	            "librsmi-double.so");
	double_path(lib_min, sizeof(lib_min), "RDZV_RSMI_DOUBLE_DIR", "tests/rsmi-double/.libs",
	            "librsmi-double-min.so");
	if (access(lib, R_OK) != 0 || access(lib_min, R_OK) != 0)
		skip_all("the ROCm SMI double is not built (make check builds it)");
	temp_dir(dir, sizeof(dir), "test-rsmi");
	snprintf(data, sizeof(data), "%s/rsmi.txt", dir);
	setenv("RDZV_RSMI_DOUBLE", data, 1);
	test_missing_and_failing();
	test_devices();
	test_bus_ids();
	test_hives();
	test_health();
	test_per_gpu_failures();
	test_pci_count();
	test_soname(argv[0]);
	unlink(data);
	{
		/* the fake PCI tree and the data file's directory, by name */
		char cmd[400];

		snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", dir);
		if (system(cmd) != 0)
			diag("could not remove %s", dir);
	}
	return done_testing();
}
