/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-fabric: the NVML fabric reader against the NVML double
 * (tests/nvml-double): every struct version it reads (v1 through the old
 * call, with and without the V call in the library; v2 and v3 through the
 * V call), each fabric state, health faults, two cliques on one node, NVML
 * missing, NVML calls failing (bad input and failures first). */
#include "config.h"
#include "fabric.h"
#include "tap.h"
#include "fs-fixtures.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define UUID_A "3f2a0c1e-5b6d-4e7f-8a9b-0c1d2e3f4a5b"
#define UUID_B "00000000-0000-0000-0000-0000000000bb"

static char dir[256], data[300], lib[600], lib_nov[600];

static void write_data(const char *text)
{
	FILE *f = fopen(data, "w");

	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		printf("Bail out! cannot write %s\n", data);
		exit(1);
	}
}

/* Read with the double answering text; returns rdzv_fabric_read's rc. */
static int read_with(const char *library, const char *text, struct rdzv_fabric *f, char *err,
                     size_t errlen)
{
	write_data(text);
	err[0] = '\0';
	return rdzv_fabric_read(library, f, err, errlen);
}

static void test_missing_and_failing(void)
{
	struct rdzv_fabric f;
	char err[1024];

	ok(rdzv_fabric_read("/nonexistent/libnvidia-ml.so.1", &f, err, sizeof(err)) < 0
	   && strstr(err, "no NVML: cannot load /nonexistent/libnvidia-ml.so.1"),
	   "NVML missing: a clear error naming the library (%s)", err);
	ok(rdzv_fabric_read("libnvidia-ml.so.1x", &f, err, sizeof(err)) < 0
	   && strstr(err, "not an absolute path"), "a relative library path is refused (%s)", err);
	ok(rdzv_fabric_read("/lib/x86_64-linux-gnu/libc.so.6", &f, err, sizeof(err)) < 0
	   && strstr(err, "lacks nvmlInit_v2"), "a library that is not NVML is named (%s)", err);
	ok(read_with(lib, "fail nvmlInit_v2 9\n", &f, err, sizeof(err)) < 0
	   && strstr(err, "nvmlInit_v2 failed: driver not loaded (error 9)"),
	   "nvmlInit failing is named with NVML's reason (%s)", err);
	ok(read_with(lib, "gpu GPU-1 00000000:1B:00.0 3 " UUID_A " 7 completed 0 0x1aa\n"
	             "fail nvmlDeviceGetCount_v2 999\n", &f, err, sizeof(err)) < 0
	   && strstr(err, "nvmlDeviceGetCount_v2 failed: unknown error"),
	   "nvmlDeviceGetCount failing is named (%s)", err);
	ok(read_with(lib, "gpu GPU-1 00000000:1B:00.0 3 " UUID_A " 7 completed 0 0x1aa\n"
	             "fail nvmlDeviceGetHandleByIndex_v2 15\n", &f, err, sizeof(err)) < 0
	   && strstr(err, "nvmlDeviceGetHandleByIndex_v2(0) failed: GPU is lost (error 15)"),
	   "a handle that cannot be had is named with the index (%s)", err);
	ok(read_with(lib, "gpu GPU-1 00000000:1B:00.0 3 " UUID_A " 7 completed 0 0x1aa\n"
	             "fail nvmlDeviceGetGpuFabricInfoV 15\n", &f, err, sizeof(err)) == 0
	   && f.n == 1 && f.gpu[0].query_rc == 15,
	   "a fabric query failing is recorded per GPU, not a failed read");
	ok(rdzv_fabric_mnnvl_ready(&f, err, sizeof(err)) < 0
	   && strstr(err, "GPU 0 (00000000:1B:00.0): fabric info unreadable (NVML: GPU is lost)"),
	   "... and the verdict names it (%s)", err);
}

/* A healthy line ends in "health ok". */
static void ends_healthy(const char *line)
{
	size_t n = strlen(line);

	ok(n > 9 && strcmp(line + n - 9, "health ok") == 0, "a healthy line ends 'health ok' (%s)",
	   line);
}

static void test_versions(void)
{
	struct rdzv_fabric f;
	char err[1024], line[512];
#define ONE(v) "gpu GPU-1 00000000:1B:00.0 " v " " UUID_A " 7 completed 0 0x1aa 1\n"
	char text[300];

	/* v1: a library without the V call (driver before R550) */
	snprintf(text, sizeof(text), "%s", ONE("3"));
	ok(read_with(lib_nov, text, &f, err, sizeof(err)) == 0 && f.n == 1 && f.gpu[0].version == 1
	   && !f.gpu[0].have_health && f.gpu[0].clique == 7
	   && f.gpu[0].state == RDZV_FABRIC_COMPLETED, "no V call: v1 through the old call (%s)", err);
	is_str(f.gpu[0].busid, "00000000:1B:00.0", "the bus id comes from nvmlDeviceGetPciInfo_v3");
	is_str(f.gpu[0].uuid, "GPU-1", "the GPU's UUID from nvmlDeviceGetUUID");
	rdzv_fabric_gpu_line(&f.gpu[0], line, sizeof(line));
	is_str(line, "GPU 0 (00000000:1B:00.0): cluster " UUID_A ", clique 7, state completed, "
	       "health not reported (fabric info v1)", "a v1 line says health is not reported");
	ok(rdzv_fabric_mnnvl_ready(&f, err, sizeof(err)) == 0,
	   "v1 completed without health: ready (nothing to say otherwise) %s", err);

	/* the V call answers NOT_SUPPORTED: back to the old call */
	snprintf(text, sizeof(text), "%s", ONE("1"));
	ok(read_with(lib, text, &f, err, sizeof(err)) == 0 && f.gpu[0].version == 1
	   && !f.gpu[0].have_health, "V call NOT_SUPPORTED: v1 through the old call");

	/* v2 only: v3 gets VERSION_MISMATCH, v2 answers with health */
	snprintf(text, sizeof(text), "%s", ONE("2"));
	ok(read_with(lib, text, &f, err, sizeof(err)) == 0 && f.gpu[0].version == 2
	   && f.gpu[0].have_health && !f.gpu[0].have_summary && f.gpu[0].health_mask == 0x1aa,
	   "V v2: after v3's version mismatch, v2 with its health mask");
	rdzv_fabric_gpu_line(&f.gpu[0], line, sizeof(line));
	ends_healthy(line);

	/* v3: health mask and summary */
	snprintf(text, sizeof(text), "%s", ONE("3"));
	ok(read_with(lib, text, &f, err, sizeof(err)) == 0 && f.gpu[0].version == 3
	   && f.gpu[0].have_summary && f.gpu[0].summary == 1, "V v3: health mask and summary");
	ok(rdzv_fabric_mnnvl_ready(&f, err, sizeof(err)) == 0, "healthy v3: ready %s", err);
}

static void test_states(void)
{
	static const struct {
		const char *state, *want;
	} cases[] = {
		{ "in-progress", "GPU 0 (00000000:1B:00.0): fabric state in progress, not completed" },
		{ "not-started", "GPU 0 (00000000:1B:00.0): fabric state not started, not completed" },
		{ "not-supported", "GPU 0 (00000000:1B:00.0): no NVLink fabric (NVML: not supported)" },
	};
	struct rdzv_fabric f;
	unsigned char cl[16];
	unsigned clique;
	char err[1024], text[300], line[512];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(text, sizeof(text), "gpu GPU-1 00000000:1B:00.0 3 " UUID_A " 7 %s 0 0x1aa 1\n",
		         cases[i].state);
		ok(read_with(lib, text, &f, err, sizeof(err)) == 0 && f.n == 1,
		   "state %s read", cases[i].state);
		ok(rdzv_fabric_mnnvl_ready(&f, err, sizeof(err)) < 0 && strstr(err, cases[i].want),
		   "state %s: not ready, GPU and state named (%s)", cases[i].state, err);
	}
	ok(rdzv_fabric_domain(&f, cl, &clique, err, sizeof(err)) == 0,
	   "only unsupported GPUs: no domain (0), not an error");
	rdzv_fabric_gpu_line(&f.gpu[0], line, sizeof(line));
	is_str(line, "GPU 0 (00000000:1B:00.0): not supported (no NVLink fabric)",
	       "the preflight line says not supported plainly");

	/* every query NOT_SUPPORTED (an H100 PCIe, an H200 without NVSwitch fabric) */
	ok(read_with(lib, "gpu GPU-1 00000000:1B:00.0 0 " UUID_A " 0 not-supported 0 0\n", &f, err,
	             sizeof(err)) == 0 && f.gpu[0].query_rc == RDZV_NVML_ERROR_NOT_SUPPORTED,
	   "queries NOT_SUPPORTED: recorded, not an error");
	rdzv_fabric_gpu_line(&f.gpu[0], line, sizeof(line));
	is_str(line, "GPU 0 (00000000:1B:00.0): not supported (no NVLink fabric)",
	       "... and said the same way");
	ok(rdzv_fabric_mnnvl_ready(&f, err, sizeof(err)) < 0 && strstr(err, "no NVLink fabric"),
	   "... not ready for MNNVL (%s)", err);

	/* the registration's status */
	ok(read_with(lib, "gpu GPU-1 00000000:1B:00.0 3 " UUID_A " 7 completed 10 0x1aa 1\n", &f,
	             err, sizeof(err)) == 0 && f.gpu[0].status == 10, "status read");
	ok(rdzv_fabric_mnnvl_ready(&f, err, sizeof(err)) < 0
	   && strstr(err, "fabric registration failed (status: timeout)"),
	   "a failed registration is named with its status (%s)", err);

	ok(read_with(lib, "# no GPU\n", &f, err, sizeof(err)) == 0 && f.n == 0
	   && rdzv_fabric_mnnvl_ready(&f, err, sizeof(err)) < 0 && strstr(err, "NVML lists no GPU"),
	   "no GPU: not ready, said (%s)", err);
}

static void test_health(void)
{
	struct rdzv_fabric f;
	char err[1024], buf[512];

	/* every 2-bit field "false" (2) and configuration "none" (1): healthy */
	ok(rdzv_fabric_health_faults(0x1aa, 1, 1, buf, sizeof(buf)) == 0 && !buf[0],
	   "all fields false: no fault");
	ok(rdzv_fabric_health_faults(0, 0, 0, buf, sizeof(buf)) == 0,
	   "all fields 'not supported': no fault");
	ok(rdzv_fabric_health_faults(0x1a9, 0, 0, buf, sizeof(buf)) == 1
	   && strcmp(buf, "degraded bandwidth") == 0, "bit 0: degraded bandwidth (%s)", buf);
	ok(rdzv_fabric_health_faults(0x1a6, 0, 0, buf, sizeof(buf)) == 1
	   && strcmp(buf, "route recovery in progress") == 0, "bits 2-3: route recovery (%s)", buf);
	ok(rdzv_fabric_health_faults(0x19a, 0, 0, buf, sizeof(buf)) == 1
	   && strcmp(buf, "route unhealthy") == 0, "bits 4-5: route unhealthy (%s)", buf);
	ok(rdzv_fabric_health_faults(0x16a, 0, 0, buf, sizeof(buf)) == 1
	   && strcmp(buf, "access timeout recovery in progress") == 0,
	   "bits 6-7: access timeout recovery (%s)", buf);
	ok(rdzv_fabric_health_faults(0x5aa, 0, 0, buf, sizeof(buf)) == 1
	   && strcmp(buf, "incorrect configuration: insufficient NVLinks") == 0,
	   "bits 8-11: incorrect configuration decoded (%s)", buf);
	ok(rdzv_fabric_health_faults(0x1aa, 1, 2, buf, sizeof(buf)) == 1
	   && strcmp(buf, "health summary unhealthy") == 0, "v3 summary unhealthy (%s)", buf);
	ok(rdzv_fabric_health_faults(0x455, 0, 0, buf, sizeof(buf)) == 5,
	   "several faults counted (%s)", buf);

	ok(read_with(lib, "gpu GPU-1 00000000:1B:00.0 3 " UUID_A " 7 completed 0 0x1aa 1\n"
	             "gpu GPU-2 00000000:2B:00.0 3 " UUID_A " 7 completed 0 0x1a9 1\n",
	             &f, err, sizeof(err)) == 0 && f.n == 2, "two GPUs read");
	ok(rdzv_fabric_mnnvl_ready(&f, err, sizeof(err)) < 0
	   && strcmp(err, "GPU 1 (00000000:2B:00.0): fabric health: degraded bandwidth") == 0,
	   "degraded bandwidth: not ready, GPU and fault named (%s)", err);
	rdzv_fabric_gpu_line(&f.gpu[1], buf, sizeof(buf));
	ok(strstr(buf, "health: degraded bandwidth") != NULL, "the line shows the fault (%s)", buf);
}

static void test_domain(void)
{
	struct rdzv_fabric f;
	unsigned char cl[16];
	unsigned clique = 0;
	char err[1024], uuid[RDZV_FABRIC_UUID_TEXT];

	ok(read_with(lib, "gpu GPU-1 00000000:1B:00.0 3 " UUID_A " 7 completed 0 0x1aa 1\n"
	             "gpu GPU-2 00000000:2B:00.0 2 " UUID_A " 7 completed 0 0x1aa\n"
	             "gpu GPU-3 00000000:3B:00.0 3 " UUID_A " 7 completed 0 0x1aa 1\n",
	             &f, err, sizeof(err)) == 0 && f.n == 3, "three GPUs (mixed struct versions)");
	ok(rdzv_fabric_domain(&f, cl, &clique, err, sizeof(err)) == 1 && clique == 7,
	   "one domain: cluster and clique");
	rdzv_fabric_uuid_text(cl, uuid, sizeof(uuid));
	is_str(uuid, UUID_A, "the cluster UUID is printed like a UUID");
	ok(rdzv_fabric_mnnvl_ready(&f, err, sizeof(err)) == 0, "healthy node: ready %s", err);

	ok(read_with(lib, "gpu GPU-1 00000000:1B:00.0 3 " UUID_A " 7 completed 0 0x1aa 1\n"
	             "gpu GPU-2 00000000:2B:00.0 3 " UUID_A " 9 completed 0 0x1aa 1\n",
	             &f, err, sizeof(err)) == 0, "two cliques read");
	ok(rdzv_fabric_domain(&f, cl, &clique, err, sizeof(err)) < 0
	   && strstr(err, "GPU 0 (00000000:1B:00.0) cluster " UUID_A " clique 7")
	   && strstr(err, "GPU 1 (00000000:2B:00.0) cluster " UUID_A " clique 9"),
	   "two cliques on one node: both GPUs and cliques named, no guess (%s)", err);
	ok(rdzv_fabric_mnnvl_ready(&f, err, sizeof(err)) < 0 && strstr(err, "not in one NVLink domain"),
	   "... and not ready (%s)", err);

	ok(read_with(lib, "gpu GPU-1 00000000:1B:00.0 3 " UUID_A " 7 completed 0 0x1aa 1\n"
	             "gpu GPU-2 00000000:2B:00.0 3 " UUID_B " 7 completed 0 0x1aa 1\n",
	             &f, err, sizeof(err)) == 0
	   && rdzv_fabric_domain(&f, cl, &clique, err, sizeof(err)) < 0 && strstr(err, UUID_B),
	   "two clusters with the same clique number: named (%s)", err);

	ok(read_with(lib, "gpu GPU-1 00000000:1B:00.0 3 " UUID_A " 7 completed 0 0x1aa 1\n"
	             "gpu GPU-2 00000000:2B:00.0 3 " UUID_A " 7 in-progress 0 0x1aa 1\n",
	             &f, err, sizeof(err)) == 0
	   && rdzv_fabric_domain(&f, cl, &clique, err, sizeof(err)) < 0
	   && strstr(err, "GPU 1 (00000000:2B:00.0) cluster " UUID_A " clique 7, state in progress"),
	   "a GPU still registering makes the domain unknown, named (%s)", err);

	/* HGX/DGX H100 with a fabric manager: completed, but a zero cluster UUID
	 * (a single-node NVSwitch fabric): no multi-node domain, not MNNVL-ready */
	ok(read_with(lib, "gpu GPU-1 00000000:1B:00.0 3 00000000-0000-0000-0000-000000000000 0 "
	             "completed 0 0x1aa 1\n"
	             "gpu GPU-2 00000000:2B:00.0 3 00000000-0000-0000-0000-000000000000 0 "
	             "completed 0 0x1aa 1\n", &f, err, sizeof(err)) == 0
	   && rdzv_fabric_domain(&f, cl, &clique, err, sizeof(err)) == 0,
	   "a zero cluster UUID is no multi-node domain");
	ok(rdzv_fabric_mnnvl_ready(&f, err, sizeof(err)) < 0
	   && strstr(err, "GPU 0 (00000000:1B:00.0): cluster UUID is zero: no multi-node NVLink"),
	   "... and not MNNVL-ready, said (%s)", err);
	/* a failed registration status keeps a GPU out of the domain */
	ok(read_with(lib, "gpu GPU-1 00000000:1B:00.0 3 " UUID_A " 7 completed 0 0x1aa 1\n"
	             "gpu GPU-2 00000000:2B:00.0 3 " UUID_A " 7 completed 999 0x1aa 1\n",
	             &f, err, sizeof(err)) == 0
	   && rdzv_fabric_domain(&f, cl, &clique, err, sizeof(err)) < 0
	   && strstr(err, "GPU 1 (00000000:2B:00.0) no fabric"),
	   "a GPU whose registration failed makes the domain unknown, named (%s)", err);

	/* ConstrainDevices: another job's GPU is listed but closed */
	ok(read_with(lib, "gpu GPU-1 00000000:1B:00.0 3 " UUID_A " 7 completed 0 0x1aa 1\n"
	             "gpu GPU-2 00000000:2B:00.0 3 " UUID_A " 9 in-progress 0 0x1a9 1\n"
	             "deny 1\n", &f, err, sizeof(err)) == 0 && f.n == 2 && f.gpu[1].skipped,
	   "a GPU whose handle is refused is skipped, not an error");
	ok(rdzv_fabric_mnnvl_ready(&f, err, sizeof(err)) == 0
	   && rdzv_fabric_domain(&f, cl, &clique, err, sizeof(err)) == 1 && clique == 7,
	   "... and left out of the verdict and the domain");
	ok(read_with(lib, "gpu GPU-1 00000000:1B:00.0 3 " UUID_A " 7 completed 0 0x1aa 1\ndeny 0\n",
	             &f, err, sizeof(err)) == 0
	   && rdzv_fabric_mnnvl_ready(&f, err, sizeof(err)) < 0
	   && strstr(err, "NVML lists 1 GPUs, none accessible"), "no accessible GPU: said (%s)", err);
}

/* The node's domain under nvlink_domain=nvml: one name form, NVML read
 * once per node (a later read answers what the first one saw), and the
 * notes --rdzv-verbose prints. */
static void test_node_domain(void)
{
	struct rdzv_fabric_once o;
	struct rdzv_fabric f;
	char err[1024], dom[RDZV_FABRIC_DOMAIN_TEXT], note[1024];

	ok(read_with(lib, "gpu GPU-1 00000000:1B:00.0 3 " UUID_A " 7 completed 0 0x1aa 1\n",
	             &f, err, sizeof(err)) == 0
	   && rdzv_fabric_domain_name(&f, dom, sizeof(dom), err, sizeof(err)) == 1,
	   "one GPU in a fabric: a domain name");
	is_str(dom, UUID_A ".7", "the one form: CLUSTER-UUID.CLIQUE");

	memset(&o, 0, sizeof(o));
	write_data("gpu GPU-1 00000000:1B:00.0 3 " UUID_A " 7 completed 0 0x1aa 1\n");
	ok(rdzv_fabric_node_domain(&o, lib, "n1", dom, sizeof(dom), note, sizeof(note), err,
	                           sizeof(err)) == 0, "node domain read");
	is_str(dom, UUID_A ".7", "node domain in the one form");
	is_str(note, UUID_A ".7 (nvlink_domain=nvml: NVML's cluster UUID and clique of every GPU "
	       "here); the step's other nodes are not seen before launch", "its note");
	/* NVML now answers otherwise: the node's read is not repeated. */
	write_data("gpu GPU-1 00000000:1B:00.0 3 " UUID_B " 9 completed 0 0x1aa 1\n");
	ok(rdzv_fabric_node_domain(&o, lib, "n1", dom, sizeof(dom), note, sizeof(note), err,
	                           sizeof(err)) == 0 && strcmp(dom, UUID_A ".7") == 0,
	   "NVML read once per node: the second ask answers the first read (%s)", dom);
	ok(rdzv_fabric_read_once(&o, lib, err, sizeof(err)) == o.f && o.f,
	   "the MNNVL check gets the same read");
	rdzv_fabric_once_free(&o);
	ok(rdzv_fabric_node_domain(&o, lib, "n1", dom, sizeof(dom), note, sizeof(note), err,
	                           sizeof(err)) == 0 && strcmp(dom, UUID_B ".9") == 0,
	   "a new step reads again");
	rdzv_fabric_once_free(&o);

	write_data("gpu GPU-1 00000000:1B:00.0 3 " UUID_A " 7 completed 0 0x1aa 1\n"
	           "gpu GPU-2 00000000:2B:00.0 3 " UUID_A " 9 completed 0 0x1aa 1\n");
	ok(rdzv_fabric_node_domain(&o, lib, "n2", dom, sizeof(dom), note, sizeof(note), err,
	                           sizeof(err)) < 0 && dom[0] == '\0'
	   && strncmp(err, "nvlink_domain=nvml: node n2: the GPUs of this node are not in one "
	                   "NVLink domain:", 80) == 0,
	   "two cliques on one node refuse, naming the node: %s", err);
	rdzv_fabric_once_free(&o);
	write_data("gpu GPU-1 00000000:1B:00.0 3 " UUID_A " 7 not-supported 0 0x1aa 1\n");
	ok(rdzv_fabric_node_domain(&o, lib, "n3", dom, sizeof(dom), note, sizeof(note), err,
	                           sizeof(err)) == 0 && dom[0] == '\0', "no fabric: no domain");
	is_str(note, "none (nvlink_domain=nvml): no GPU of this node is in an NVLink fabric",
	       "said in the note");
	rdzv_fabric_once_free(&o);
	ok(rdzv_fabric_node_domain(&o, "/nonexistent/libnvidia-ml.so.1", "n3", dom, sizeof(dom),
	                           note, sizeof(note), err, sizeof(err)) == 0 && dom[0] == '\0'
	   && strncmp(note, "unknown (nvlink_domain=nvml): ", 30) == 0,
	   "no NVML: unknown, said in the note (%s)", note);
	ok(rdzv_fabric_read_once(&o, "/nonexistent/libnvidia-ml.so.1", err, sizeof(err)) == NULL
	   && strstr(note, err), "the failed read is kept, with its reason");
	rdzv_fabric_once_free(&o);
}

int main(void)
{
	double_path(lib, sizeof(lib), "RDZV_NVML_DOUBLE_DIR", "tests/nvml-double/.libs",
	            "libnvml-double.so");
	double_path(lib_nov, sizeof(lib_nov), "RDZV_NVML_DOUBLE_DIR", "tests/nvml-double/.libs",
	            "libnvml-double-nov.so");
	if (access(lib, R_OK) != 0 || access(lib_nov, R_OK) != 0)
		skip_all("the NVML double is not built (make check builds it)");
	temp_dir(dir, sizeof(dir), "test-fabric");
	snprintf(data, sizeof(data), "%s/nvml.txt", dir);
	setenv("RDZV_NVML_DOUBLE", data, 1);
	test_missing_and_failing();
	test_versions();
	test_states();
	test_health();
	test_domain();
	test_node_domain();
	unlink(data);
	rmdir(dir);
	return done_testing();
}
