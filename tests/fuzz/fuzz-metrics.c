/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz-metrics.c: the node_exporter textfile the plugin reads back before
 * adding a step (lib/admin/metrics.c), which anyone with root on the node
 * could have edited. Input: the file. Invariants: at most the table's
 * size; a step can be added; the text written, read again, gives the same
 * text (only well-formed series survive a round). */
#include "config.h"
#include "fuzz.h"
#include "metrics.h"

static struct rdzv_metrics m, again;
static char text[RDZV_METRICS_FILE_MAX], text2[RDZV_METRICS_FILE_MAX];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rdzv_metrics_step st = { "torch", "exit", "p", 1, 0, 0, 1, "xid_node" };
	long n, n2;

	rdzv_metrics_read(&m, (const char *)data, size);
	FUZZ_ASSERT(m.n <= RDZV_METRICS_SERIES_MAX);
	if (rdzv_metrics_step(&m, &st) < 0)
		return 0; /* the table is full: the plugin says so */
	n = rdzv_metrics_text(&m, text, sizeof(text));
	if (n < 0)
		return 0;
	rdzv_metrics_read(&again, text, (size_t)n);
	n2 = rdzv_metrics_text(&again, text2, sizeof(text2));
	FUZZ_ASSERT(n2 == n && memcmp(text, text2, (size_t)n) == 0);
	return 0;
}
