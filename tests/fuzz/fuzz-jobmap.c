/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz-jobmap.c: what the admin's node work reads.
 * - A DCGM job-map claim (lib/admin/jobmap.c: root's files, but read back
 *   by every step on the node): the first input's bytes up to a NUL.
 *   Invariants: a claim that parses formats to text that parses to the
 *   same pid, start time and GPUs, and formats again to the same text.
 * - The task's command line srun reads for an image run with a cleaned
 *   environment (lib/modes/container.c, a user's words): the input cut at
 *   '\n' into argv. Invariant: the answer is NULL or the runtime's name,
 *   which is argv[0]'s last part. */
#include "config.h"
#include "fuzz.h"
#include "container.h"
#include "jobmap.h"

static void claim(const uint8_t *data, size_t size)
{
	unsigned char g1[RDZV_JOBMAP_GPUS_MAX], g2[RDZV_JOBMAP_GPUS_MAX];
	char *text = malloc(size + 1), out[8192], out2[8192];
	unsigned long long s1, s2;
	pid_t p1, p2;
	long n, n2;

	if (!text)
		return;
	memcpy(text, data, size);
	text[size] = '\0';
	if (rdzv_jobmap_claim_parse(text, &p1, &s1, g1) == 0) {
		FUZZ_ASSERT(p1 > 0);
		n = rdzv_jobmap_claim_format(p1, s1, g1, out, sizeof(out));
		FUZZ_ASSERT(n > 0 && (size_t)n < sizeof(out));
		FUZZ_ASSERT(rdzv_jobmap_claim_parse(out, &p2, &s2, g2) == 0);
		FUZZ_ASSERT(p1 == p2 && s1 == s2 && memcmp(g1, g2, sizeof(g1)) == 0);
		n2 = rdzv_jobmap_claim_format(p2, s2, g2, out2, sizeof(out2));
		FUZZ_ASSERT(n2 == n && memcmp(out, out2, (size_t)n) == 0);
	}
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_pieces p;
	const char *rt, *base;

	claim(data, size);
	if (fuzz_split(data, size, &p) < 0)
		return 0;
	rt = rdzv_container_cleans_pythonpath(p.n, p.v);
	if (rt) {
		base = strrchr(p.v[0], '/');
		base = base ? base + 1 : p.v[0];
		FUZZ_ASSERT(strcmp(rt, base) == 0);
		FUZZ_ASSERT(strcmp(rt, "apptainer") == 0 || strcmp(rt, "singularity") == 0);
	}
	free(p.buf);
	return 0;
}
