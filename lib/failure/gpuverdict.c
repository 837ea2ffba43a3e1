/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/failure/: how failures travel and are judged: a failed rank's report,
 * liveness, the collective grace, hang dumps, a GPU fault's verdict. Uses
 * lib/modes/, lib/step/, lib/gpu/, lib/common/. */
/* gpuverdict.c: the GPU fault in the verdict; see gpuverdict.h. */
#include "config.h"
#include "gpuverdict.h"
#include "util.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define MAGIC "RDZVG1 "

int rdzv_gpu_report_encode(const struct rdzv_gpu_report *r, char *buf, size_t len)
{
	int n = snprintf(buf, len, MAGIC "%u.%u %016" PRIx64 " %s %d %" PRId64 " %u %d %ld %s %s %"
	                 PRIu64 "\n%s", r->job_id, r->step_id, r->nonce, r->node, r->gpu, r->rank,
	                 r->f.xid, r->f.node_fault ? 1 : 0, r->before_ms, r->f.pci[0] ? r->f.pci : "-",
	                 rdzv_xid_action_name(r->f.action), r->f.ue, r->f.meaning);

	return n < 0 || (size_t)n >= len ? -1 : n;
}

static int host_ok(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')
		      || (s[i] >= '0' && s[i] <= '9') || s[i] == '-' || s[i] == '.' || s[i] == '_'))
			return 0;
	return i > 0;
}

int rdzv_gpu_report_decode(const char *buf, size_t n, struct rdzv_gpu_report *r)
{
	char text[RDZV_GPU_DGRAM_MAX + 1], node[RDZV_HOST_MAX], pci[RDZV_PCI_MAX], action[24], *nl;
	unsigned long long nonce, ue;
	long long rank;
	int fault, used = 0, i, act;
	unsigned xid;
	long before;

	memset(r, 0, sizeof(*r));
	if (n >= sizeof(text) || n < sizeof(MAGIC) || memcmp(buf, MAGIC, sizeof(MAGIC) - 1) != 0
	    || memchr(buf, '\0', n))
		return -1;
	memcpy(text, buf, n);
	text[n] = '\0';
	if (!(nl = strchr(text, '\n')))
		return -1;
	*nl = '\0';
	if (sscanf(text, MAGIC "%u.%u %16llx %255s %d %lld %u %d %ld %15s %23s %llu%n", &r->job_id,
	           &r->step_id, &nonce, node, &r->gpu, &rank, &xid, &fault, &before, pci, action,
	           &ue, &used) != 12 || text + used != nl)
		return -1;
	if (!host_ok(node) || (size_t)snprintf(r->node, sizeof(r->node), "%s", node) >= sizeof(r->node)
	    || r->gpu < -2 || rank < -2 || (fault != 0 && fault != 1) || before < -1)
		return -1;
	for (act = 0; act <= RDZV_XID_UNKNOWN; act++)
		if (strcmp(action, rdzv_xid_action_name((enum rdzv_xid_action)act)) == 0)
			break;
	if (act > RDZV_XID_UNKNOWN)
		return -1;
	if (strcmp(pci, "-") != 0) {
		if (strlen(pci) != 10)
			return -1;
		snprintf(r->f.pci, sizeof(r->f.pci), "%s", pci);
	}
	if (strlen(nl + 1) >= sizeof(r->f.meaning))
		return -1;
	for (i = 0; nl[1 + i]; i++)
		if ((unsigned char)nl[1 + i] < 0x20 || nl[1 + i] == 0x7f)
			return -1;
	snprintf(r->f.meaning, sizeof(r->f.meaning), "%s", nl + 1);
	r->nonce = nonce;
	r->rank = rank;
	r->f.xid = xid;
	r->f.node_fault = fault;
	r->f.action = (enum rdzv_xid_action)act;
	r->f.ue = ue;
	r->before_ms = before;
	return 0;
}

int rdzv_gpu_report_worse(const struct rdzv_gpu_report *a, const struct rdzv_gpu_report *b)
{
	return a->f.node_fault > b->f.node_fault;
}

const char *rdzv_gpu_report_kind(const struct rdzv_gpu_report *r)
{
	return !r->f.xid ? "ras" : r->f.node_fault ? "xid_node" : "xid_app";
}

int rdzv_gpu_report_format(const struct rdzv_gpu_report *r, int64_t failed_rank, char *buf,
                           size_t len)
{
	char gpu[RDZV_HOST_MAX + 96], what[200], when[96];
	int n;

	if (r->gpu >= 0 && r->rank == -2)
		snprintf(gpu, sizeof(gpu), "GPU %d of node %s (not one of the step's GPUs)", r->gpu,
		         r->node);
	else if (r->gpu >= 0 && r->rank >= 0)
		snprintf(gpu, sizeof(gpu), "GPU %d of node %s (rank %" PRId64 ")", r->gpu, r->node,
		         r->rank);
	else if (r->gpu >= 0)
		snprintf(gpu, sizeof(gpu), "GPU %d of node %s", r->gpu, r->node);
	else if (r->gpu == -2)
		snprintf(gpu, sizeof(gpu), "GPU %s of node %s", r->f.pci[0] ? r->f.pci : "?", r->node);
	else
		snprintf(gpu, sizeof(gpu), "GPU %s of node %s (not one of the step's GPUs)",
		         r->f.pci[0] ? r->f.pci : "?", r->node);
	if (r->f.xid)
		snprintf(what, sizeof(what), "Xid %u, %s", r->f.xid, r->f.meaning);
	else
		snprintf(what, sizeof(what), "an uncorrectable RAS error (%s, %" PRIu64 " new)",
		         r->f.meaning, r->f.ue);
	when[0] = '\0';
	if (r->before_ms >= 0 && failed_rank >= 0)
		snprintf(when, sizeof(when), ", %ld.%ld s before rank %" PRId64 " exited",
		         r->before_ms / 1000, r->before_ms % 1000 / 100, failed_rank);
	else if (failed_rank >= 0)
		snprintf(when, sizeof(when), ", before rank %" PRId64 " exited", failed_rank);
	n = snprintf(buf, len, "rdzv: %s: %s%s: %s", gpu, what, when,
	             r->f.node_fault ? "a node fault"
	                             : r->f.action == RDZV_XID_UNKNOWN
	                                       ? "an Xid the table does not know, not a node fault"
	                                       : "the application's, not a node fault");
	return n < 0 || (size_t)n >= len ? -1 : 0;
}
