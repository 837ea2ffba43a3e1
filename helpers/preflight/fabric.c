/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fabric.c: each node's NVLink fabric as NVML reports it, and on nodes
 * with AMD GPUs their xGMI hives as ROCm SMI reports them. The node's
 * local rank 0 reads them once; every GPU gets one line, the node a domain
 * (or hive) and a verdict (lib/gpu/fabric.h, lib/gpu/rsmi.h), and
 * checks.c compares nodes. */
#include "config.h"
#include "preflight.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "fabric.h"
#include "rsmi.h"

/* The helper runs as the user: the user may point it at another NVML
 * ($RDZV_NVML_LIBRARY) or ROCm SMI ($RDZV_RSMI_LIBRARY). NULL: the
 * library's own name, searched the dynamic linker's way. */
static const char *user_library(const char *var)
{
	const char *l = getenv(var);

	return l && *l ? l : NULL;
}

void pf_fabric_collect(struct pf_report *r)
{
	struct rdzv_fabric *f = calloc(1, sizeof(*f));
	char why[PF_TEXT];
	unsigned i;
	int d;

	r->fabric_read = 1;
	if (!f) {
		snprintf(r->fabric_domain, sizeof(r->fabric_domain), "no NVML: out of memory");
		return;
	}
	if (rdzv_fabric_read(user_library("RDZV_NVML_LIBRARY"), f, why, sizeof(why)) < 0) {
		snprintf(r->fabric_domain, sizeof(r->fabric_domain), "%s%s",
		         strncmp(why, "no NVML", 7) ? "no NVML: " : "", why);
		free(f);
		return;
	}
	for (i = 0; i < f->n && r->nfabric < PF_MAX_FABRIC; i++)
		rdzv_fabric_gpu_line(&f->gpu[i], r->fabric[r->nfabric++], PF_TEXT);
	d = rdzv_fabric_domain_name(f, r->fabric_domain, sizeof(r->fabric_domain), why,
	                            sizeof(why));
	if (d == 0)
		snprintf(r->fabric_domain, sizeof(r->fabric_domain), "none");
	else if (d < 0)
		snprintf(r->fabric_domain, sizeof(r->fabric_domain), "mixed: %s", why);
	r->fabric_ok = rdzv_fabric_mnnvl_ready(f, r->fabric_why, sizeof(r->fabric_why)) == 0;
	free(f);
}

int pf_fabric_print(FILE *out)
{
	struct pf_report *r = calloc(1, sizeof(*r));
	size_t i;
	int rv;

	if (!r) {
		fprintf(out, "no NVML: out of memory\n");
		return 1;
	}
	pf_fabric_collect(r);
	for (i = 0; i < r->nfabric; i++)
		fprintf(out, "%s\n", r->fabric[i]);
	if (strncmp(r->fabric_domain, "no NVML", 7) == 0) {
		fprintf(out, "%s\n", r->fabric_domain);
		rv = 1;
	} else if (strncmp(r->fabric_domain, "mixed: ", 7) == 0) {
		fprintf(out, "node: %s\n", r->fabric_domain + 7);
		rv = 0;
	} else if (strcmp(r->fabric_domain, "none") == 0) {
		fprintf(out, "node: no NVLink fabric (%s)\n", r->nfabric ? "not supported"
		        : "NVML lists no GPU");
		rv = 0;
	} else {
		fprintf(out, "node: NVLink domain %s; multi-node NVLink %s%s\n", r->fabric_domain,
		        r->fabric_ok ? "ready" : "not ready: ", r->fabric_ok ? "" : r->fabric_why);
		rv = 0;
	}
	fflush(out);
	free(r);
	return rv;
}

/* Read ROCm SMI into r; pci is how many AMD GPUs the PCI bus shows. */
static void xgmi_read(struct pf_report *r, unsigned pci)
{
	struct rdzv_rsmi *f = calloc(1, sizeof(*f));
	char why[PF_TEXT];
	uint64_t hive = 0;
	unsigned i, lines;
	int h;

	r->xgmi_read = 1;
	if (!f) {
		snprintf(r->xgmi_hive, sizeof(r->xgmi_hive), "no ROCm SMI: out of memory");
		return;
	}
	if (rdzv_rsmi_read(user_library("RDZV_RSMI_LIBRARY"), f, why, sizeof(why)) < 0) {
		snprintf(r->xgmi_hive, sizeof(r->xgmi_hive), "%s%s",
		         strncmp(why, "no ROCm SMI", 11) ? "no ROCm SMI: " : "",
		         strncmp(why, "ROCm SMI: ", 10) ? why : why + 10);
		free(f);
		return;
	}
	if (f->n == 0) {
		snprintf(r->xgmi_hive, sizeof(r->xgmi_hive), "none");
		snprintf(r->xgmi_why, sizeof(r->xgmi_why), "ROCm SMI lists no GPU, the PCI bus shows "
		         "%u AMD GPU%s (is the amdgpu driver loaded?)", pci, pci == 1 ? "" : "s");
		free(f);
		return;
	}
	/* Past the last line that fits, one line says how many more. */
	lines = f->n <= PF_MAX_XGMI ? f->n : PF_MAX_XGMI - 1;
	for (i = 0; i < lines; i++)
		rdzv_rsmi_gpu_line(&f->gpu[i], r->xgmi[r->nxgmi++], PF_TEXT);
	if (lines < f->n)
		snprintf(r->xgmi[r->nxgmi++], PF_TEXT, "... and %u more GPUs (rdzv-preflight --xgmi "
		         "lists every one)", f->n - lines);
	h = rdzv_rsmi_hive(f, &hive, why, sizeof(why));
	if (h > 0)
		snprintf(r->xgmi_hive, sizeof(r->xgmi_hive), "0x%" PRIx64, hive);
	else if (h == 0)
		snprintf(r->xgmi_hive, sizeof(r->xgmi_hive), "none");
	else
		snprintf(r->xgmi_hive, sizeof(r->xgmi_hive), "several: %s", why);
	r->xgmi_ok = rdzv_rsmi_xgmi_ok(f, r->xgmi_why, sizeof(r->xgmi_why)) == 0;
	free(f);
}

void pf_xgmi_collect(struct pf_report *r, const char *sysfs)
{
	unsigned pci = rdzv_rsmi_pci_gpus(sysfs);

	/* ROCm SMI may be installed where no AMD GPU is (Debian pulls it in
	 * with other packages): on a node whose PCI bus shows no AMD GPU it is
	 * not even loaded, and the report is what it was before. */
	if (pci)
		xgmi_read(r, pci);
}

int pf_xgmi_print(FILE *out, const char *sysfs)
{
	struct rdzv_rsmi *f = calloc(1, sizeof(*f));
	struct pf_report *r = calloc(1, sizeof(*r));
	char line[PF_TEXT], why[PF_TEXT];
	unsigned i, pci = rdzv_rsmi_pci_gpus(sysfs);
	int rv = 0, read;

	if (!f || !r) {
		fprintf(out, "no ROCm SMI: out of memory\n");
		free(f);
		free(r);
		return 1;
	}
	/* Asked for: ROCm SMI is read whatever the PCI bus shows, and every
	 * GPU gets its line, not only the report's first PF_MAX_XGMI. */
	if ((read = rdzv_rsmi_read(user_library("RDZV_RSMI_LIBRARY"), f, why, sizeof(why))) == 0)
		for (i = 0; i < f->n; i++) {
			rdzv_rsmi_gpu_line(&f->gpu[i], line, sizeof(line));
			fprintf(out, "%s\n", line);
		}
	if (!pci && (read < 0 || f->n == 0)) {
		if (read == 0)
			fprintf(out, "no AMD GPU: the PCI bus shows none, ROCm SMI lists none\n");
		else
			fprintf(out, "no AMD GPU: the PCI bus shows none (%s)\n", why);
		rv = 1;
		goto out;
	}
	xgmi_read(r, pci);
	if (strncmp(r->xgmi_hive, "no ROCm SMI", 11) == 0) {
		fprintf(out, "%s\n", r->xgmi_hive);
		rv = 1;
	} else if (r->nxgmi == 0) {
		fprintf(out, "node: %s\n", r->xgmi_why);
		rv = 1;
	} else if (strncmp(r->xgmi_hive, "several: ", 9) == 0) {
		fprintf(out, "node: %s%s%s\n", r->xgmi_hive + 9, r->xgmi_ok ? "" : "; ",
		        r->xgmi_why);
	} else {
		int none = strcmp(r->xgmi_hive, "none") == 0;

		fprintf(out, "node: %s%s%s%s\n", none ? "no xGMI hive" : "xGMI hive ",
		        none ? "" : r->xgmi_hive, r->xgmi_ok ? ", xGMI ok" : "; xGMI errors: ",
		        r->xgmi_ok ? "" : r->xgmi_why);
	}
out:
	fflush(out);
	free(f);
	free(r);
	return rv;
}
