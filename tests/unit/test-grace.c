/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-grace: a step never outlives its failed collective (lib/failure/grace.c,
 * the FAIL datagram of lib/failure/hang.c). The FAIL notice decodes like an
 * ASK and says it asks for nothing; malformed ones are refused. srun's count
 * names the ranks that never reported, with their nodes when the layout is
 * known, lists at most 8, and keeps the first report; duplicates and ranks
 * out of range change nothing; a line too long for its buffer says so. */
#include "config.h"
#include "grace.h"
#include "hang.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int starts(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

static int decode(const char *s, struct rdzv_hang_ask *a)
{
	return rdzv_hang_ask_decode(s, strlen(s), a);
}

static void test_wire(void)
{
	static const char *const bad[] = {
		"RDZVH1 FAIL", "RDZVH1 FAIL ", "RDZVH1 FAILS 7.0 ff 1 n1 4", "RDZVH1 FAIL 7 ff 1 n1 4",
		"RDZVH1 FAIL 7.0 ff n1 4", "RDZVH1 FAIL 7.0 ff 1 4", "RDZVH1 FAIL 7.0 ff 1 n1",
		"RDZVH1 FAIL 7.0 ff 1 n1 x", "RDZVH1 FAIL 7.0 ff 1 n1 4 5", "RDZVH1 FAIL 7.0 ff 1 n1 -4",
		"RDZVH1 FAIL 7.0 ff 1 n1 4294967296", "RDZVH1 FAIL 7.0 ff 1 n1 4\r",
		"RDZVH1 FAIL 7.0 zz 1 n1 4", "RDZVH1 FAIL 7.0 ff -1 n1 4", "RDZVH1 FAIL 7.0 ff 1 n/1 4",
		"RDZVH1 fail 7.0 ff 1 n1 4", "RDZVH2 FAIL 7.0 ff 1 n1 4", "RDZVH1 ASK 7.0 ff 1 n1 4", NULL
	};
	struct rdzv_hang_ask a;
	int i, refused = 0;

	ok(decode("RDZVH1 FAIL 7.0 ff 3 n2 4\nRuntimeError: Timed out waiting", &a) == 0
	   && a.notice == 1 && a.job_id == 7 && a.step_id == 0 && a.nonce == 0xff && a.rank == 3
	   && strcmp(a.node, "n2") == 0 && a.world == 4
	   && strcmp(a.what, "RuntimeError: Timed out waiting") == 0,
	   "a FAIL notice decodes: job, step, nonce, rank, node, world, what; it awaits no answer");
	ok(decode("RDZVH1 FAIL 7.0 ff 3 n2 0", &a) == 0 && a.world == 0 && a.what[0] == '\0',
	   "a FAIL of a world not known (0), without a what");
	ok(decode("RDZVH1 ASK 7.0 ff 3 n2\nx", &a) == 0 && a.notice == 0,
	   "an ASK is not a notice: its rank waits for srun's answer");
	for (i = 0; bad[i]; i++)
		refused += decode(bad[i], &a) < 0;
	is_int(refused, i, "every malformed FAIL is refused");
}

static struct rdzv_hang_ask report(uint32_t rank, const char *node, const char *what)
{
	struct rdzv_hang_ask a;

	memset(&a, 0, sizeof(a));
	a.rank = rank;
	snprintf(a.node, sizeof(a.node), "%s", node);
	snprintf(a.what, sizeof(a.what), "%s", what);
	a.notice = 1;
	return a;
}

static void test_one_never_joined(void)
{
	struct rdzv_grace g;
	struct rdzv_hang_ask a;
	uint32_t rank_node[4] = { 0, 0, 1, 1 };
	char n1[] = "n1", n2[] = "n2", *names[2] = { n1, n2 };
	struct rdzv_grace_nodes nodes = { rank_node, names, 4, 2, 1 };
	char out[1024];

	ok(rdzv_grace_init(&g, 4) == 0, "a grace for 4 ranks");
	ok(rdzv_grace_verdict(&g, &nodes, 10, "x", out, sizeof(out)) < 0,
	   "no verdict before any report");
	a = report(1, "n1", "RuntimeError: [../gloo/transport/tcp/pair.cc:598] Connection closed by peer");
	is_int(rdzv_grace_take(&g, &a), 1, "the first report starts the grace");
	a = report(0, "n1", "RuntimeError: Timed out waiting 5000ms for recv operation to complete");
	is_int(rdzv_grace_take(&g, &a), 0, "the second does not");
	is_int(rdzv_grace_take(&g, &a), 0, "nor a repeated one");
	a = report(2, "n2", "RuntimeError: Timed out");
	rdzv_grace_take(&g, &a);
	is_int(rdzv_grace_missing(&g), 1, "one rank never reported");
	ok(rdzv_grace_verdict(&g, &nodes, 10, "--rdzv-collective-grace=10s", out, sizeof(out)) == 0,
	   "a verdict");
	is_str(out, "rank 3 (node n2) never joined the collective the other ranks left (first rank 1 "
	       "(node n1): RuntimeError: [../gloo/transport/tcp/pair.cc:598] Connection closed by "
	       "peer); the step was stopped 10 s after that, still running "
	       "(--rdzv-collective-grace=10s)", "it names the rank that never joined, its node, the first report and the grace");
	ok(rdzv_grace_verdict(&g, NULL, 10, "w", out, sizeof(out)) == 0
	   && starts(out, "rank 3 never joined "),
	   "without the layout, the rank without a node");
	ok(rdzv_grace_verdict(&g, &nodes, 10, "w", out, 40) < 0 && strlen(out) == 39,
	   "a line too long for its buffer is cut and said so");
	rdzv_grace_free(&g);
}

static void test_many(void)
{
	struct rdzv_grace g;
	struct rdzv_hang_ask a;
	char out[1024];
	uint32_t r;

	rdzv_grace_init(&g, 100);
	a = report(0, "n1", "RuntimeError: Timed out");
	rdzv_grace_take(&g, &a);
	a = report(100, "n9", "out of range");
	is_int(rdzv_grace_take(&g, &a), 0, "a rank out of range is a report, not the first");
	is_int(rdzv_grace_missing(&g), 99, "it names nobody: 99 ranks never reported");
	for (r = 1; r < 90; r++) {
		a = report(r, "n1", "x");
		rdzv_grace_take(&g, &a);
	}
	ok(rdzv_grace_verdict(&g, NULL, 30, "the default", out, sizeof(out)) == 0, "a verdict");
	ok(starts(out, "rank 90 and 9 more (ranks 91, 92, 93, 94, 95, 96, 97, 98, ...) never joined "),
	   "10 missing: the first, then 8 listed and the rest left out");
	diag("%s", out);
	for (; r < 100; r++) {
		a = report(r, "n1", "x");
		rdzv_grace_take(&g, &a);
	}
	ok(rdzv_grace_verdict(&g, NULL, 30, "the default", out, sizeof(out)) == 0
	   && starts(out, "every rank left its collective with an error (first rank 0 (node n1)"),
	   "all reported: every rank left with an error, the first named");
	rdzv_grace_free(&g);

	rdzv_grace_init(&g, 0);
	a = report(3, "n2", "");
	rdzv_grace_take(&g, &a);
	ok(rdzv_grace_verdict(&g, NULL, 5, "w", out, sizeof(out)) == 0
	   && strcmp(out, "a collective failed (first rank 3 (node n2)); the step was stopped 5 s "
	             "after that, still running (w)") == 0,
	   "ranks not known, no world in the report: the first report only");
	diag("%s", out);
	rdzv_grace_free(&g);
}

/* torchrun: srun's tasks are the nodes' agents; the workers' world comes
 * with their FAIL, and a worker's node is its agent's (ranks per task). */
static void test_workers(void)
{
	struct rdzv_grace g;
	struct rdzv_hang_ask a;
	uint32_t rank_node[2] = { 1, 0 }; /* task 0 on n2, task 1 on n1 */
	char n1[] = "n1", n2[] = "n2", *names[2] = { n1, n2 };
	struct rdzv_grace_nodes nodes = { rank_node, names, 2, 2, 2 };
	char out[1024];

	rdzv_grace_init(&g, 0);
	a = report(1, "n2", "RuntimeError: Timed out");
	a.notice = 0; /* an ASK (the excepthook's): no world */
	is_int(rdzv_grace_take(&g, &a), 1, "a worker's ASK without a world is the first report");
	is_int((int)g.ntasks, 0, "... the ranks still unknown");
	a.notice = 1;
	a.world = 4;
	is_int(rdzv_grace_take(&g, &a), 0, "its FAIL with its world (4) follows");
	is_int((int)g.ntasks, 4, "... and sets the ranks: 4");
	is_int((int)g.nseen, 1, "... rank 1, which asked before, is counted once");
	a = report(0, "n2", "x");
	a.world = 8; /* another world later: the first one stays */
	rdzv_grace_take(&g, &a);
	a = report(2, "n1", "x");
	rdzv_grace_take(&g, &a);
	is_int((int)g.ntasks, 4, "a later world changes nothing");
	ok(rdzv_grace_verdict(&g, &nodes, 5, "w", out, sizeof(out)) == 0
	   && starts(out, "rank 3 (node n1) never joined the collective the other ranks left (first rank 1 (node n2)"),
	   "worker rank 3 is named, on task 1's node (2 workers a node)");
	diag("%s", out);
	nodes.per_task = 0;
	ok(rdzv_grace_verdict(&g, &nodes, 5, "w", out, sizeof(out)) == 0
	   && starts(out, "rank 3 never joined"), "workers per node not known: no node");
	rdzv_grace_free(&g);
	rdzv_grace_init(&g, 0);
	a = report(0, "n1", "x");
	a.world = RDZV_GRACE_WORLD_MAX + 1;
	rdzv_grace_take(&g, &a);
	is_int((int)g.ntasks, 0, "a world past RDZV_GRACE_WORLD_MAX is not held");
	rdzv_grace_free(&g);
}

int main(void)
{
	test_wire();
	test_one_never_joined();
	test_many();
	test_workers();
	return done_testing();
}
