/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-topo-model: the GPU model read from a topology (for Megatron's FP8
 * warning) on the real server topologies, and what the FP8 rule makes of it.
 * Expected models read from each XML: the GPU's NVML/CUDA OS device's
 * GPUModel info where the export has one (ipa20, p5en, lassen, g4dnmetal),
 * else the PCI object's PCIDevice name (p4d); JUWELS exports carry neither
 * (PCI ids only). Tioga's AMD GCDs carry their rsmi OS device's GPUModel
 * (the model is read; the plugin does not use it on AMD nodes yet, and
 * MI200 has no FP8). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "megatron.h"
#include "tap.h"
#include "topo.h"

static char dir[1024];

static void check(const char *file, int want_rc, const char *want, int fp8)
{
	char path[1400], model[64] = "", err[256];
	struct rdzv_topo *t = NULL;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (!ok(rdzv_topo_load(path, &t, err, sizeof(err)) == 0, "%s loads", file)) {
		diag("%s", err);
		return;
	}
	rc = rdzv_topo_gpu_model(t, 0, model, sizeof(model));
	is_int(rc, want_rc, "GPU model of the first CUDA GPU is found only where the export names it");
	if (want_rc == 0) {
		is_str(model, want, "the model is the one the XML names");
		is_int(rdzv_gpu_fp8_capable(model), fp8, "FP8 capability follows from the model");
	}
	rdzv_topo_destroy(t);
}

int main(void)
{
	const char *env = getenv("RDZV_TOPOLOGIES"), *top = getenv("top_srcdir");
	char buf[8];
	struct stat st;

	ok(rdzv_topo_gpu_model(NULL, 0, buf, sizeof(buf)) < 0, "no topology: no model");
	if (env && *env)
		snprintf(dir, sizeof(dir), "%s", env);
	else
		snprintf(dir, sizeof(dir), "%s/tests/topo/fixtures", top ? top : "..");
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		/* They belong to the repository: missing is a failure, not a skip. */
		ok(0, "topology fixtures at %s (tests/topo/fixtures)", dir);
		return done_testing();
	}
	check("flux-core__t__hwloc-data__ipa20.xml", 0, "NVIDIA H100 80GB HBM3", 1);
	check("aws-ofi-nccl__tests__unit__fixtures__topology__p5en__topology.xml", 0, "NVIDIA H200", 1);
	check("aws-ofi-nccl__tests__unit__fixtures__topology__p4d__topology.xml", 0,
	      "GA100 [A100 SXM4 40GB]", 0);
	check("mpibind__topo-xml__coral-lassen.xml", 0, "Tesla V100-SXM2-16GB", 0);
	check("mpibind__topo-xml__g4dnmetal.xml", 0, "Tesla T4", 0);
	check("psmgmt__tests__hwloc__topo.jwb0004.xml", -1, NULL, 0);
	check("mpibind__topo-xml__eas-tioga.xml", 0, "AMD INSTINCT MI200 (MCM) OAM LC MBA HPE C2", 0);
	/* a buffer too small for the name is an error, not a truncated model */
	{
		char path[1400], err[256];
		struct rdzv_topo *t = NULL;

		snprintf(path, sizeof(path), "%s/flux-core__t__hwloc-data__ipa20.xml", dir);
		if (rdzv_topo_load(path, &t, err, sizeof(err)) == 0)
			ok(rdzv_topo_gpu_model(t, 0, buf, sizeof(buf)) < 0,
			   "a model longer than the buffer is refused, not cut");
		ok(rdzv_topo_gpu_model(t, 99, buf, sizeof(buf)) < 0, "a GPU index past the end is refused");
		rdzv_topo_destroy(t);
	}
	return done_testing();
}
