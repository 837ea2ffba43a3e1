/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-node-admin: what the plugin keeps for the admin on each node.
 * DCGM-exporter's job-mapping files (lib/admin/jobmap.c): a step's claim
 * makes one file per GPU, named by its index, holding its job; two jobs on
 * one GPU are both listed, once each; a release removes only what no other
 * claim holds; a claim whose process is gone (or whose pid was reused) is
 * swept; a job's epilog sweeps all its claims; files of GPUs no claim ever
 * named are left alone; junk in the claims directory is dropped, never
 * followed. The node check (lib/bind/health.c): GPU files from gres.conf,
 * the driver's list, NVML's health through the NVML double, the topology's
 * NIC ports in a fake sysfs; the first fault is the reason; a check that
 * does not end is itself the fault, in bounded time. */
#include "config.h"
#include "conf.h"
#include "health.h"
#include "jobmap.h"
#include "record.h"
#include "tap.h"
#include "fs-fixtures.h"
#include "topo.h"

#include <dirent.h>
#include <fcntl.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[512];

/* got matches the extended regular expression re. */
static void like(const char *got, const char *re, const char *name)
{
	regex_t r;
	int m = regcomp(&r, re, REG_EXTENDED | REG_NOSUB) == 0 && got
	        && regexec(&r, got, 0, NULL, 0) == 0;

	regfree(&r);
	if (!ok(m, "%s", name))
		diag("got '%s', expected /%s/", got ? got : "(null)", re);
}

static char *slurp(const char *path)
{
	static char buf[4096];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

static const char *gpu_file(const char *d, int g)
{
	char path[1024];
	const char *t;

	snprintf(path, sizeof(path), "%s/%d", d, g);
	t = slurp(path);
	return t ? t : "(none)";
}

/* The GPU files in d, as "0 3" (names that are numbers, in order). */
static const char *gpu_names(const char *d)
{
	static char out[256];
	int g;

	out[0] = '\0';
	for (g = 0; g < 64; g++) {
		char path[1024];

		snprintf(path, sizeof(path), "%s/%d", d, g);
		if (access(path, F_OK) == 0)
			snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%d", out[0] ? " " : "",
			         g);
	}
	return out;
}

/* A process of ours that stays until killed: a claim's holder. */
static pid_t holder(void)
{
	pid_t p = fork();

	if (p == 0) {
		pause();
		_exit(0);
	}
	return p;
}

static void test_jobmap(void)
{
	char map[600], path[1024], err[256];
	int a[] = { 0, 3 }, b[] = { 3, 5 }, c[] = { 6 };
	pid_t p1 = holder(), p2 = holder(), p3 = holder();
	unsigned long long s1 = rdzv_proc_starttime(NULL, p1), s2 = rdzv_proc_starttime(NULL, p2),
	                   s3 = rdzv_proc_starttime(NULL, p3);

	ok(s1 > 0 && s2 > 0, "a live process has a start time");
	is_int((long)rdzv_proc_starttime(NULL, 0), 0, "pid 0: none");
	snprintf(map, sizeof(map), "%s/map", dir);
	is_int(rdzv_jobmap_claim(map, NULL, 7, 0, a, 2, p1, s1, err, sizeof(err)), -1,
	       "a directory that does not exist is refused");
	like(err, "map", "... naming it");
	mkdir(map, 0755);
	/* An admin's own file for a GPU we never claim stays. */
	snprintf(path, sizeof(path), "%s/9", map);
	write_file(path, "site\n");
	is_int(rdzv_jobmap_claim(map, NULL, 7, 0, a, 2, p1, s1, err, sizeof(err)), 0,
	       "job 7 step 0 claims GPUs 0 and 3");
	is_str(gpu_names(map), "0 3 9", "a file per GPU claimed (and the admin's 9)");
	is_str(gpu_file(map, 0), "7\n", "GPU 0's file holds job 7, as dcgm-exporter reads it");
	is_int(rdzv_jobmap_claim(map, NULL, 8, 2, b, 2, p2, s2, err, sizeof(err)), 0,
	       "job 8 step 2 claims GPUs 3 and 5");
	is_str(gpu_file(map, 3), "7\n8\n", "GPU 3, shared, lists both jobs");
	is_int(rdzv_jobmap_claim(map, NULL, 7, 1, b, 1, p1, s1, err, sizeof(err)), 0,
	       "job 7 step 1 claims GPU 3 too");
	is_str(gpu_file(map, 3), "7\n8\n", "... each job once");
	is_int(rdzv_jobmap_release(map, NULL, 7, 0, err, sizeof(err)), 0, "job 7 step 0 ends");
	is_str(gpu_names(map), "3 5 9", "GPU 0 is free: its file is gone");
	is_str(gpu_file(map, 3), "7\n8\n", "GPU 3 still lists job 7 (its step 1 holds it)");
	is_int(rdzv_jobmap_release(map, NULL, 7, 0, err, sizeof(err)), 0,
	       "a release without a claim is not an error");
	/* Step 2 of job 8's slurmstepd is killed: the next claim sweeps it. */
	kill(p2, SIGKILL);
	waitpid(p2, NULL, 0);
	is_int(rdzv_jobmap_claim(map, NULL, 9, 0, c, 1, p3, s3, err, sizeof(err)), 0,
	       "job 9 claims GPU 6 after job 8's holder was killed");
	is_str(gpu_names(map), "3 6 9", "job 8's claim was swept: GPU 5's file is gone");
	is_str(gpu_file(map, 3), "7\n", "... and GPU 3 lists job 7 alone");
	/* A pid reused by another process: its start time differs. */
	is_int(rdzv_jobmap_claim(map, NULL, 10, 0, c, 1, p3, s3 + 1, err, sizeof(err)), 0,
	       "job 10's claim names a pid whose start time is not its own");
	is_str(gpu_file(map, 6), "9\n10\n", "GPU 6 lists jobs 9 and 10");
	is_int(rdzv_jobmap_sweep(map, NULL, 0, err, sizeof(err)), 1,
	       "the sweep drops the claim of a reused pid");
	is_str(gpu_file(map, 6), "9\n", "GPU 6 lists job 9 alone");
	/* Junk in the claims directory: dropped, a link never followed. */
	snprintf(path, sizeof(path), "%s/" RDZV_JOBMAP_CLAIMS "/11.0", map);
	write_file(path, "garbage 1 2\n99999\n");
	snprintf(path, sizeof(path), "%s/" RDZV_JOBMAP_CLAIMS "/12.0", map);
	ok(symlink("/etc/passwd", path) == 0, "a link planted as a claim");
	is_int(rdzv_jobmap_sweep(map, NULL, 0, err, sizeof(err)), 2,
	       "a malformed claim and a link are dropped");
	ok(access("/etc/passwd", F_OK) == 0, "... the link's target untouched");
	/* The job's epilog: every claim of job 7 goes, live or not. */
	is_int(rdzv_jobmap_sweep(map, NULL, 7, err, sizeof(err)), 1, "job 7's epilog sweeps its claim");
	is_str(gpu_names(map), "6 9", "GPU 3 is free");
	is_int(rdzv_jobmap_release(map, NULL, 9, 0, err, sizeof(err)), 0, "job 9 ends");
	is_str(gpu_names(map), "9", "no file is left but the admin's own");
	snprintf(path, sizeof(path), "%s/" RDZV_JOBMAP_CLAIMS, map);
	chmod(path, 0777);
	is_int(rdzv_jobmap_claim(map, NULL, 13, 0, c, 1, p3, s3, err, sizeof(err)), -1,
	       "a claims directory others can write is refused");
	like(err, "writable by others", "... saying so");
	kill(p1, SIGKILL);
	kill(p3, SIGKILL);
	waitpid(p1, NULL, 0);
	waitpid(p3, NULL, 0);
}

/* A GPU device file: a link to /dev/null, a character device. */
static void gpu_dev(const char *d, int k)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/dev/nvidia%d", d, k);
	if (symlink("/dev/null", path) < 0) {
		printf("Bail out! symlink %s\n", path);
		exit(1);
	}
}

/* rdzv_health_run in a child process of the test that has no file
 * descriptor left (RLIMIT_NOFILE at the three it holds): its outcome as
 * the exit status, or -1. A FIFO gres.conf would hold an in-process
 * check for ever: the child's own alarm (5 s) ends it then. */
static int not_run_without_fds(const struct rdzv_health_req *req)
{
	struct rlimit rl = { 3, 3 };
	struct rdzv_health h;
	int status, fd;
	pid_t pid = fork();

	if (pid == 0) {
		alarm(5);
		for (fd = 3; fd < 1024; fd++)
			close(fd);
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			_exit(100);
		_exit((int)rdzv_health_run(req, 60000, &h) == RDZV_HEALTH_NOT_RUN
		              && strncmp(h.fault, "node check not run: cannot open a pipe: ", 40) == 0
		          ? RDZV_HEALTH_NOT_RUN
		          : 101);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* The NVML double's four healthy GPUs (each case appends its fault). */
#define FOUR_GPUS                                                                    \
	"gpu GPU-0 0000:07:00.0 0 00000000000000000000000000000000 0 not-supported 0 0\n" \
	"gpu GPU-1 0000:0f:00.0 0 00000000000000000000000000000000 0 not-supported 0 0\n" \
	"gpu GPU-2 0000:47:00.0 0 00000000000000000000000000000000 0 not-supported 0 0\n" \
	"gpu GPU-3 0000:4e:00.0 0 00000000000000000000000000000000 0 not-supported 0 0\n"

static void test_health(const char *fixtures, const char *nvml)
{
	char root[600], path[1024], gres[700], text[1024];
	struct rdzv_health_req req = { 0 };
	struct rdzv_health h;
	struct rdzv_topo *t = NULL;
	size_t i, n;
	int k, first = -1;

	snprintf(root, sizeof(root), "%s/root", dir);
	snprintf(path, sizeof(path), "%s/dev", root);
	mkdir(root, 0755);
	mkdir(path, 0755);
	for (k = 0; k < 4; k++)
		gpu_dev(root, k);
	snprintf(gres, sizeof(gres), "%s/gres.conf", dir);
	snprintf(text, sizeof(text), "AutoDetect=off\nNodeName=g[1-2] Name=gpu File=%s/dev/nvidia[0-3]\n"
	         "NodeName=c1 Name=tmpdisk Count=1\n", root);
	write_file(gres, text);
	req.root = root;
	req.gres_conf = gres;
	req.node = "g1";
	req.nvml_library = "/nonexistent/libnvidia-ml.so.1";
	is_int(rdzv_health_check(&req, &h), 0, "4 GPU files, no driver list, no NVML: healthy");
	is_int(h.gpus, 4, "... 4 GPU files checked");
	like(h.notes, "NVML not checked", "... and NVML's absence is noted");
	req.node = "c1";
	is_int(rdzv_health_check(&req, &h), 0, "a node without GPU lines is healthy");
	like(h.notes, "GPU files not checked", "... noting why");
	req.node = "g1";
	snprintf(path, sizeof(path), "%s/dev/nvidia2", root);
	unlink(path);
	is_int(rdzv_health_check(&req, &h), 1, "a missing GPU file is a fault");
	snprintf(text, sizeof(text), "GPU 2 missing: %s/dev/nvidia2", root);
	is_str(h.fault, text, "... naming Slurm's GPU and its file");
	write_file(path, "");
	is_int(rdzv_health_check(&req, &h), 1, "a GPU file that is no device is a fault");
	like(h.fault, "not a device", "... saying so");
	unlink(path);
	gpu_dev(root, 2);
	/* NVML through the double: a count that differs, then health. */
	snprintf(path, sizeof(path), "%s/nvml.txt", dir);
	setenv("RDZV_NVML_DOUBLE", path, 1);
	write_file(path, "gpu GPU-0 0000:07:00.0 0 00000000000000000000000000000000 0 not-supported 0 0\n"
	           "gpu GPU-1 0000:0f:00.0 0 00000000000000000000000000000000 0 not-supported 0 0\n"
	           "gpu GPU-2 0000:47:00.0 0 00000000000000000000000000000000 0 not-supported 0 0\n");
	req.nvml_library = nvml;
	is_int(rdzv_health_check(&req, &h), 1, "NVML sees 3 GPUs where gres.conf names 4: a fault");
	is_str(h.fault, "NVML sees 3 GPUs, gres.conf names 4", "... with both counts");
	write_file(path, FOUR_GPUS);
	is_int(rdzv_health_check(&req, &h), 0, "NVML's 4 healthy GPUs: healthy");
	is_int(h.nvml_gpus, 4, "... NVML counted 4");
	write_file(path, FOUR_GPUS
	           "retired 1\n");
	is_int(rdzv_health_check(&req, &h), 1, "retired pages pending: a fault");
	is_str(h.fault, "GPU 1 retired pages pending (reset the GPU)", "... on GPU 1");
	write_file(path, FOUR_GPUS
	           "remap 3 failed\n");
	is_int(rdzv_health_check(&req, &h), 1, "a failed row remapping: a fault");
	like(h.fault, "^GPU 3 row remapping failed", "... on GPU 3");
	write_file(path, FOUR_GPUS
	           "recovery 2 0\nrecovery 1 2\n");
	is_int(rdzv_health_check(&req, &h), 1, "NVML's recovery action not none: a fault");
	is_str(h.fault, "GPU 1 NVML recovery action: node reboot (2)", "... naming the GPU and the action");
	write_file(path, FOUR_GPUS
	           "recovery 1 4\nfail nvmlDeviceGetFieldValues 3\n");
	is_int(rdzv_health_check(&req, &h), 0, "a driver without the field (NOT_SUPPORTED): healthy");
	write_file(path, FOUR_GPUS
	           "fail nvmlInit_v2 9\n");
	is_int(rdzv_health_check(&req, &h), 1, "NVML that does not start: a fault");
	like(h.fault, "^NVML does not start", "... saying so");
	/* NVML's first initialisation, slow (no persistence mode): past the
	 * bound it is its own outcome, never a GPU's fault; within, healthy. */
	write_file(path, FOUR_GPUS
	           "slow-init 1500\n");
	is_int(rdzv_health_run(&req, 1000, &h), RDZV_HEALTH_UNFINISHED,
	       "NVML's init taking 1.5 s, a bound of 1 s: unfinished");
	is_str(h.fault, "node check unfinished after 1 s (health_timeout=1s)",
	       "... its own reason, naming the setting");
	ok(h.ms >= 1000 && h.ms < 1400, "... at the bound (%ld ms)", h.ms);
	is_int(h.nvml_gpus, -1, "... and no GPU count of a check that did not end");
	is_int(rdzv_health_run(&req, 3000, &h), RDZV_HEALTH_OK, "a bound of 3 s: healthy");
	ok(h.nvml_gpus == 4, "... NVML counted 4, in %ld ms", h.ms);
	req.nvml_library = "/nonexistent/libnvidia-ml.so.1";
	/* The driver's list: GPU 1's minor is not in it. Device files of
	 * NVIDIA's major (195) need root's mknod. */
	for (k = 0; k < 4; k++) {
		if (k == 1)
			continue;
		snprintf(path, sizeof(path), "mkdir -p %s/proc/driver/nvidia/gpus/0000:0%d:00.0", root, k);
		ok(system(path) == 0, "the driver's entry of GPU %d", k);
		snprintf(path, sizeof(path), "%s/proc/driver/nvidia/gpus/0000:0%d:00.0/information", root,
		         k);
		snprintf(text, sizeof(text), "Model: \t NVIDIA A100\nDevice Minor: \t %d\n", k);
		write_file(path, text);
	}
	is_int(rdzv_health_check(&req, &h), 0, "files of another major (links to /dev/null) are not "
	       "held to the NVIDIA driver's list");
	if (geteuid() == 0) {
		for (k = 0; k < 4; k++) {
			snprintf(path, sizeof(path), "%s/dev/nvidia%d", root, k);
			unlink(path);
			ok(mknod(path, S_IFCHR | 0600, makedev(195, (unsigned)k)) == 0,
			   "/dev/nvidia%d as NVIDIA's device 195:%d", k, k);
		}
		is_int(rdzv_health_check(&req, &h), 1, "a GPU whose minor the driver lists no more: a fault");
		snprintf(text, sizeof(text), "GPU 1 off the bus: %s/dev/nvidia1 (minor 1) is not among "
		         "the driver's GPUs", root);
		is_str(h.fault, text, "... naming it (fallen off the bus)");
		snprintf(path, sizeof(path), "mkdir -p %s/proc/driver/nvidia/gpus/0000:01:00.0", root);
		ok(system(path) == 0, "GPU 1 back in the driver's list");
		snprintf(path, sizeof(path), "%s/proc/driver/nvidia/gpus/0000:01:00.0/information", root);
		write_file(path, "Device Minor: 1\n");
		is_int(rdzv_health_check(&req, &h), 0, "... healthy again");
	} else {
		diag("not root: the driver-list check on NVIDIA device numbers is left out");
	}
	/* NICs: every usable port of the topology ACTIVE, then one down, one gone. */
	snprintf(path, sizeof(path), "%s/psmgmt__tests__hwloc__topo.jwb0004.xml", fixtures);
	if (rdzv_topo_load(path, &t, text, sizeof(text)) < 0) {
		ok(0, "topology %s loads: %s", path, text);
		return;
	}
	n = rdzv_topo_nic_count(t);
	ok(n > 0, "the JUWELS Booster node has RDMA ports (%zu)", n);
	for (i = 0; i < n; i++) {
		const char *name;
		int port, fabric, usable;

		if (rdzv_topo_nic_info(t, i, &name, &port, &fabric, &usable) < 0 || !usable)
			continue;
		if (first < 0)
			first = (int)i;
		snprintf(text, sizeof(text), "mkdir -p %s/sys/class/infiniband/%s/ports/%d", root, name,
		         port);
		if (system(text) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/sys/class/infiniband/%s/ports/%d/state", root, name, port);
		write_file(path, "4: ACTIVE\n");
	}
	req.topo = t;
	is_int(rdzv_health_check(&req, &h), 0, "every port ACTIVE: healthy");
	ok(h.nics > 0, "... %d ports checked", h.nics);
	if (first >= 0) {
		const char *name;
		int port, fabric, usable;

		rdzv_topo_nic_info(t, (size_t)first, &name, &port, &fabric, &usable);
		snprintf(path, sizeof(path), "%s/sys/class/infiniband/%s/ports/%d/state", root, name, port);
		write_file(path, "1: DOWN\n");
		is_int(rdzv_health_check(&req, &h), 1, "a port DOWN: a fault");
		snprintf(text, sizeof(text), "NIC %s:%d 1: DOWN", name, port);
		is_str(h.fault, text, "... naming the port and its state");
		snprintf(text, sizeof(text), "rm -r %s/sys/class/infiniband/%s", root, name);
		ok(system(text) == 0, "the NIC removed");
		is_int(rdzv_health_check(&req, &h), 1, "an absent NIC: a fault");
		snprintf(text, sizeof(text), "NIC %s absent", name);
		like(h.fault, text, "... naming it");
		/* In a child, bounded: the same fault, and the time it took. */
		is_int(rdzv_health_run(&req, 5000, &h), RDZV_HEALTH_FAULT,
		       "the check in a child process finds the same fault");
		like(h.fault, text, "... and brings it back");
		ok(h.ms >= 0 && h.ms < 5000, "... in %ld ms", h.ms);
	}
	rdzv_topo_destroy(t);
	/* A check that never ends: a GPU file on a FIFO with no writer would
	 * not block stat(); a gres.conf that is a FIFO blocks its reader. */
	snprintf(path, sizeof(path), "%s/gres-fifo", dir);
	ok(mkfifo(path, 0600) == 0, "a gres.conf that blocks its reader (a FIFO)");
	req.gres_conf = path;
	req.topo = NULL;
	is_int(rdzv_health_run(&req, 300, &h), RDZV_HEALTH_UNFINISHED,
	       "a check that does not end: unfinished, not a fault");
	is_str(h.fault, "node check unfinished after 300 ms (health_timeout=300ms)", "... saying so");
	ok(h.ms >= 300 && h.ms < 3000, "... after its limit (%ld ms)", h.ms);
	/* No child for it (no file descriptor left for its pipe): not run in
	 * this process instead, where the FIFO would hold it for ever. */
	is_int(not_run_without_fds(&req), RDZV_HEALTH_NOT_RUN,
	       "no pipe for the child: not run, in a process whose files are all taken");
	unlink(path);
}

/* rdzv-preflight --node and rdzv-profile read the rdzv.so line of a
 * plugstack.conf: a bad argument is named with the file and line. */
static void test_plugstack(void)
{
	char path[700], err[1024], want[900];
	struct rdzv_conf c;

	snprintf(path, sizeof(path), "%s/plugstack.conf", dir);
	write_file(path, "# site\noptional /x/other.so a=b\nrequired /x/rdzv.so health_check=maybe\n");
	rdzv_conf_defaults(&c);
	is_int(rdzv_conf_read_plugstack(path, &c, err, sizeof(err)), -1, "a bad rdzv.so line is refused");
	snprintf(want, sizeof(want), "%s:3: plugstack argument health_check=maybe: valid values are "
	         "yes, no", path);
	is_str(err, want, "... naming the file, the line and the valid values");
	write_file(path, "required /x/rdzv_node.so health_check=yes\nrequired /x/rdzv.so "
	           "health_check=yes gres_conf=/etc/g.conf\n");
	rdzv_conf_defaults(&c);
	is_int(rdzv_conf_read_plugstack(path, &c, err, sizeof(err)), 0, "rdzv.so's line is read");
	is_str(c.gres_conf, "/etc/g.conf", "... its own (rdzv_node.so's line is not rdzv.so's)");
	is_int(c.health_check, 1, "... health_check=yes");
	write_file(path, "required /x/rdzv_node.so health_check=yes\n");
	is_int(rdzv_conf_read_plugstack(path, &c, err, sizeof(err)), -1, "no rdzv.so line: refused");
	like(err, "no rdzv.so line", "... saying so");
}

int main(void)
{
	const char *env = getenv("RDZV_TOPOLOGIES"), *top = getenv("top_srcdir");
	char fixtures[512], nvml[1024], cmd[700];

	if (env && *env)
		snprintf(fixtures, sizeof(fixtures), "%s", env);
	else
		snprintf(fixtures, sizeof(fixtures), "%s/tests/topo/fixtures", top ? top : "..");
	double_path(nvml, sizeof(nvml), "RDZV_NVML_DOUBLE_DIR", "tests/nvml-double/.libs",
	            "libnvml-double.so");
	temp_dir(dir, sizeof(dir), "test-node-admin");
	test_plugstack();
	test_jobmap();
	if (access(nvml, R_OK) != 0)
		ok(0, "the NVML double at %s (make check builds it)", nvml);
	else
		test_health(fixtures, nvml);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		diag("could not remove %s", dir);
	return done_testing();
}
