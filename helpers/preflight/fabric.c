/* fabric.c: each node's NVLink fabric as NVML reports it (issue 26). The
 * node's local rank 0 reads it once; every GPU gets one line, the node a
 * domain and a verdict (lib/gpu/fabric.h), and checks.c compares nodes. */
#include "config.h"
#include "preflight.h"

#include <stdlib.h>
#include <string.h>

#include "fabric.h"

/* The helper runs as the user: the user may point it at another NVML. */
static const char *library(void)
{
	const char *l = getenv("RDZV_NVML_LIBRARY");

	return l && *l ? l : NULL;
}

void pf_fabric_collect(struct pf_report *r)
{
	struct rdzv_fabric *f = calloc(1, sizeof(*f));
	unsigned char cluster[16];
	char uuid[RDZV_FABRIC_UUID_TEXT], why[PF_TEXT];
	unsigned clique, i;
	int d;

	r->fabric_read = 1;
	if (!f) {
		snprintf(r->fabric_domain, sizeof(r->fabric_domain), "no NVML: out of memory");
		return;
	}
	if (rdzv_fabric_read(library(), f, why, sizeof(why)) < 0) {
		snprintf(r->fabric_domain, sizeof(r->fabric_domain), "%s%s",
		         strncmp(why, "no NVML", 7) ? "no NVML: " : "", why);
		free(f);
		return;
	}
	for (i = 0; i < f->n && r->nfabric < PF_MAX_FABRIC; i++)
		rdzv_fabric_gpu_line(&f->gpu[i], r->fabric[r->nfabric++], PF_TEXT);
	d = rdzv_fabric_domain(f, cluster, &clique, why, sizeof(why));
	if (d > 0) {
		rdzv_fabric_uuid_text(cluster, uuid, sizeof(uuid));
		snprintf(r->fabric_domain, sizeof(r->fabric_domain), "%s/%u", uuid, clique);
	} else if (d == 0) {
		snprintf(r->fabric_domain, sizeof(r->fabric_domain), "none");
	} else {
		snprintf(r->fabric_domain, sizeof(r->fabric_domain), "mixed: %s", why);
	}
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
