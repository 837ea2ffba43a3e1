/* fuzz-layout.c: tasks-per-node strings (SLURM_STEP_TASKS_PER_NODE, e.g.
 * "2(x3),1"). Input: the string. Invariants: per-node lookups agree with
 * the totals (summed over every node when there are few), a node past the
 * end is refused, and a half-valid string is refused as a whole. */
#include "config.h"
#include "fuzz.h"
#include "layout.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *tpn = fuzz_string(data, size);
	char err[256];
	uint32_t nodes = 0, t = 0, node;
	uint64_t tasks = 0, sum = 0;

	if (!tpn)
		return 0;
	if (rdzv_tpn_totals(tpn, &nodes, &tasks, err, sizeof(err)) < 0) {
		FUZZ_ASSERT(rdzv_tpn_tasks_on(tpn, 0, &t, err, sizeof(err)) < 0);
		goto out;
	}
	FUZZ_ASSERT(nodes >= 1);
	FUZZ_ASSERT(tasks >= nodes); /* at least one task per node */
	FUZZ_ASSERT(rdzv_tpn_tasks_on(tpn, nodes, &t, err, sizeof(err)) < 0);
	FUZZ_ASSERT(rdzv_tpn_tasks_on(tpn, nodes - 1, &t, err, sizeof(err)) == 0);
	FUZZ_ASSERT(t >= 1);
	if (nodes <= 256) {
		for (node = 0; node < nodes; node++) {
			FUZZ_ASSERT(rdzv_tpn_tasks_on(tpn, node, &t, err, sizeof(err)) == 0);
			sum += t;
		}
		FUZZ_ASSERT(sum == tasks);
	}
out:
	free(tpn);
	return 0;
}
