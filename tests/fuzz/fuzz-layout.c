/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz-layout.c: the readers of one-line inputs the library shares.
 * Input: one string, read three ways.
 * - As Slurm's tasks-per-node string (SLURM_STEP_TASKS_PER_NODE, e.g.
 *   "2(x3),1"): per-node lookups agree with the totals (summed over every
 *   node when there are few), a node past the end is refused, a half-valid
 *   string is refused as a whole, and the iterator every reader walks with
 *   gives runs of at least one task on at least one node, each starting
 *   where the last ended, summing to the totals (and ends in -1 exactly
 *   when the totals refuse).
 * - As a range list ("2-3,0-1": the node order, the domain map): every item
 *   read is A <= B within the caller's max, and a refused number leaves the
 *   text where it was.
 * - As a %n path template (topology=, nvml_library=): what is accepted
 *   fits the buffer, a template that wants no node name reads the same
 *   without one, and one that wants it is refused without one. */
#include "config.h"
#include "fuzz.h"
#include "layout.h"
#include "util.h"

static void tpn_iterate(const char *tpn, int valid, uint32_t nodes, uint64_t tasks)
{
	struct rdzv_tpn_iter it;
	uint64_t end = 0, sum = 0;
	int rc;

	rdzv_tpn_begin(&it, tpn);
	while ((rc = rdzv_tpn_next(&it, NULL, 0)) > 0) {
		FUZZ_ASSERT(it.tasks >= 1 && it.reps >= 1);
		FUZZ_ASSERT(it.node == end && it.start == sum);
		end += it.reps;
		sum += (uint64_t)it.tasks * it.reps;
		FUZZ_ASSERT(it.nodes == end && end <= UINT32_MAX);
	}
	FUZZ_ASSERT(rc == (valid ? 0 : -1));
	if (valid)
		FUZZ_ASSERT(end == nodes && sum == tasks);
}

static void tpn(const char *s)
{
	char err[256];
	uint32_t nodes = 0, t = 0, node, few[256];
	uint64_t tasks = 0, sum = 0;

	if (rdzv_tpn_totals(s, &nodes, &tasks, err, sizeof(err)) < 0) {
		FUZZ_ASSERT(rdzv_tpn_tasks_on(s, 0, &t, err, sizeof(err)) < 0);
		tpn_iterate(s, 0, 0, 0);
		return;
	}
	tpn_iterate(s, 1, nodes, tasks);
	FUZZ_ASSERT(nodes >= 1);
	FUZZ_ASSERT(tasks >= nodes); /* at least one task per node */
	FUZZ_ASSERT(rdzv_tpn_tasks_on(s, nodes, &t, err, sizeof(err)) < 0);
	FUZZ_ASSERT(rdzv_tpn_tasks_on(s, nodes - 1, &t, err, sizeof(err)) == 0);
	FUZZ_ASSERT(t >= 1);
	if (nodes <= 256) {
		FUZZ_ASSERT(rdzv_tpn_expand(s, few, nodes, err, sizeof(err)) == 0);
		for (node = 0; node < nodes; node++) {
			FUZZ_ASSERT(rdzv_tpn_tasks_on(s, node, &t, err, sizeof(err)) == 0);
			FUZZ_ASSERT(few[node] == t);
			sum += t;
		}
		FUZZ_ASSERT(sum == tasks);
		if (nodes > 1)
			FUZZ_ASSERT(rdzv_tpn_expand(s, few, nodes - 1, err, sizeof(err)) < 0);
	}
}

static void ranges(const char *s)
{
	const char *p = s, *was;
	uint32_t a, b, max = 1000 + UINT32_MAX / 8 * (uint32_t)(s[0] & 7);

	for (;;) {
		was = p;
		if (rdzv_read_range(&p, max, &a, &b) < 0)
			break;
		FUZZ_ASSERT(p > was && a <= b && b <= max);
		FUZZ_ASSERT((a < b) == (memchr(was, '-', (size_t)(p - was)) != NULL));
		if (*p != ',')
			break;
		p++;
	}
	p = s;
	if (rdzv_read_u32(&p, max, &a) < 0)
		FUZZ_ASSERT(p == s);
	else
		FUZZ_ASSERT(p > s && a <= max);
}

static void path(const char *tmpl)
{
	char out[64], bare[64], err[256];
	int with = rdzv_path_node(tmpl, "n1", out, sizeof(out), err, sizeof(err));
	int without = rdzv_path_node(tmpl, NULL, bare, sizeof(bare), err, sizeof(err));

	FUZZ_ASSERT(with == 0 || with == -1);
	if (with == 0)
		FUZZ_ASSERT(strlen(out) < sizeof(out));
	if (!rdzv_path_wants_node(tmpl)) {
		FUZZ_ASSERT(with == without);
		if (with == 0)
			FUZZ_ASSERT(strcmp(out, bare) == 0);
	} else {
		FUZZ_ASSERT(without == -1);
		FUZZ_ASSERT(rdzv_path_node(tmpl, "../x", out, sizeof(out), err, sizeof(err)) == -1);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_string(data, size);

	if (!s)
		return 0;
	tpn(s);
	ranges(s);
	path(s);
	free(s);
	return 0;
}
