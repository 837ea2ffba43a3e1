/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz-het.c: a heterogeneous step's numbering from the step's environment
 * (lib/step/het.c), read by every node in slurmstepd. Input: the first line
 * is "JOB NODE NNODES NTASKS" (this slurmstepd's SPANK items), each following
 * line one NAME=VALUE of the environment. Invariants: the result is 1, 0 or
 * -1; on 1 the node and rank 0's node are named, this component's nodes and
 * tasks lie inside the step's, and the step is bigger than the component. */
#include "config.h"
#include "fuzz.h"
#include "het.h"

static struct fuzz_pieces P;

static const char *get(void *ctx, const char *name)
{
	size_t n = strlen(name);
	int i;

	(void)ctx;
	for (i = P.n - 1; i >= 1; i--)
		if (strncmp(P.v[i], name, n) == 0 && P.v[i][n] == '=')
			return P.v[i] + n + 1;
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rdzv_het h;
	unsigned job = 0, node = 0, nnodes = 0, ntasks = 0;
	char err[256];
	int rc;

	if (fuzz_split(data, size, &P) < 0)
		return 0;
	if (sscanf(P.v[0], "%u %u %u %u", &job, &node, &nnodes, &ntasks) == 4 && nnodes
	    && node < nnodes && ntasks >= nnodes) {
		rc = rdzv_het_read(get, NULL, job, node, nnodes, ntasks, &h, err, sizeof(err));
		FUZZ_ASSERT(rc >= -1 && rc <= 1);
		if (rc == 1) {
			FUZZ_ASSERT(h.node[0] && h.master[0]);
			FUZZ_ASSERT(h.node_offset + nnodes <= h.nnodes);
			FUZZ_ASSERT(h.task_offset + ntasks <= h.ntasks);
			FUZZ_ASSERT(h.ntasks != ntasks && h.comp < h.ncomp);
		}
	}
	fuzz_pieces_free(&P);
	return 0;
}
