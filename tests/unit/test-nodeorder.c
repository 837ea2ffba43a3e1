/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-nodeorder: rank 0's node and the node order from a step layout
 * (lib/step/nodeorder.c), and their trip through the step plan. The layouts
 * are the ones measured under Slurm 26.05.5 (the measured cases, doc/modes.md):
 * topology/tree puts task 0 on node3 of node[1-4]; topology/block lays ranks
 * 0-1 on node1, 2-3 on node3, 4-5 on node2, 6-7 on node4. */
#include "config.h"
#include "master.h"
#include "nodeorder.h"
#include "tap.h"
#include "util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char err[256];

/* Build tids from "per node" arrays terminated by UINT32_MAX. */
static int from_layout(uint32_t nodes, uint32_t ntasks, uint32_t *const *tids,
                       uint32_t *master, char *order, size_t len)
{
	uint16_t tasks[64];
	uint32_t i, j;
	char *text = NULL;
	int rv;

	for (i = 0; i < nodes; i++) {
		for (j = 0; tids[i][j] != UINT32_MAX; j++)
			;
		tasks[i] = (uint16_t)j;
	}
	err[0] = '\0';
	if (rdzv_order_from_layout(nodes, ntasks, tasks, tids, master, &text, err,
	                           sizeof(err)) < 0)
		return text == NULL ? -1 : -2; /* -2: a refusal that left a text */
	rv = snprintf(order, len, "%s", text) < (int)len ? 0 : -3;
	free(text);
	return rv;
}

static uint32_t position(const char *order, uint32_t nnodes, uint32_t node)
{
	uint32_t pos = 9999;

	if (rdzv_order_position(order, nnodes, node, &pos, err, sizeof(err)) < 0)
		diag("position: %s", err);
	return pos;
}

static void test_measured(void)
{
	/* tree: 1 task per node, task 0 on node3 (index 2), 1 on node4, 2 on node1, 3 on node2 */
	uint32_t t0[] = { 2, UINT32_MAX }, t1[] = { 3, UINT32_MAX }, t2[] = { 0, UINT32_MAX },
	         t3[] = { 1, UINT32_MAX };
	uint32_t *tree[] = { t0, t1, t2, t3 };
	/* block: 2 per node, node1 0-1, node2 4-5, node3 2-3, node4 6-7 */
	uint32_t b0[] = { 0, 1, UINT32_MAX }, b1[] = { 4, 5, UINT32_MAX }, b2[] = { 2, 3, UINT32_MAX },
	         b3[] = { 6, 7, UINT32_MAX };
	uint32_t *block[] = { b0, b1, b2, b3 };
	/* cyclic, list order: ranks 0,3 / 1,4 / 2,5 */
	uint32_t c0[] = { 0, 3, UINT32_MAX }, c1[] = { 1, 4, UINT32_MAX }, c2[] = { 2, 5, UINT32_MAX };
	uint32_t *cyc[] = { c0, c1, c2 };
	/* -m arbitrary -w n3,n3,n1,n2 on node list n[1-3]: n1 {2}, n2 {3}, n3 {0,1} */
	uint32_t a0[] = { 2, UINT32_MAX }, a1[] = { 3, UINT32_MAX }, a2[] = { 0, 1, UINT32_MAX };
	uint32_t *arb[] = { a0, a1, a2 };
	uint32_t m = 99, i;
	char order[64];
	static const uint32_t tree_rank[] = { 2, 3, 0, 1 }, block_rank[] = { 0, 2, 1, 3 },
	                      arb_rank[] = { 1, 2, 0 };

	ok(from_layout(4, 4, tree, &m, order, sizeof(order)) == 0 && m == 2
	   && strcmp(order, "2-3,0-1") == 0,
	   "tree: task 0 on node index 2, order 2-3,0-1 (got %u, '%s')", m, order);
	for (i = 0; i < 4; i++)
		ok(position(order, 4, i) == tree_rank[i], "tree: node id %u is node %u in rank order",
		   i, tree_rank[i]);
	ok(from_layout(4, 8, block, &m, order, sizeof(order)) == 0 && m == 0
	   && strcmp(order, "0,2,1,3") == 0,
	   "block: task 0 on node index 0, order 0,2,1,3 (got %u, '%s')", m, order);
	for (i = 0; i < 4; i++)
		ok(position(order, 4, i) == block_rank[i],
		   "block: node id %u (ranks %u-%u) is node %u in rank order", i, block[i][0],
		   block[i][1], block_rank[i]);
	ok(from_layout(3, 6, cyc, &m, order, sizeof(order)) == 0 && m == 0 && order[0] == '\0',
	   "cyclic in list order: node 0, the identity order is written as ''");
	ok(position("", 3, 2) == 2, "'' keeps the node id as the position");
	ok(from_layout(3, 4, arb, &m, order, sizeof(order)) == 0 && m == 2
	   && strcmp(order, "2,0-1") == 0, "-m arbitrary -w n3,n3,n1,n2: master n3, order 2,0-1");
	for (i = 0; i < 3; i++)
		ok(position(order, 3, i) == arb_rank[i], "arbitrary: node id %u is node %u", i,
		   arb_rank[i]);
}

static void test_bad_layouts(void)
{
	uint32_t d0[] = { 0, 1, UINT32_MAX }, d1[] = { 1, UINT32_MAX }, o1[] = { 7, UINT32_MAX },
	         n0[] = { 1, UINT32_MAX }, n1[] = { 2, UINT32_MAX };
	uint32_t *dup[] = { d0, d1 }, *range[] = { d0, o1 }, *no0[] = { n0, n1 };
	uint32_t m = 77, pos;
	char order[64], *text = NULL;
	uint16_t zero[] = { 0, 1 };

	ok(from_layout(2, 3, dup, &m, order, sizeof(order)) == -1 && strstr(err, "repeated"),
	   "a repeated task id is refused (%s)", err);
	ok(from_layout(2, 3, range, &m, order, sizeof(order)) == -1 && strstr(err, "out of range"),
	   "an out-of-range task id is refused (%s)", err);
	ok(from_layout(2, 3, no0, &m, order, sizeof(order)) == -1 && strstr(err, "task"),
	   "a layout without task 0 is refused (%s)", err);
	ok(rdzv_order_from_layout(2, 1, zero, dup, &m, &text, err, sizeof(err)) == -1 && !text,
	   "a node without tasks is refused (%s)", err);
	ok(rdzv_order_from_layout(0, 0, NULL, NULL, &m, &text, err, sizeof(err)) == -1 && !text,
	   "an empty layout is refused");
	ok(rdzv_order_from_layout(RDZV_STEP_NODES_MAX + 1, 2, zero, dup, &m, &text, err,
	                          sizeof(err)) == -1 && !text
	   && strstr(err, "RDZV_STEP_NODES_MAX") && strstr(err, "65536")
	   && strstr(err, "65537 nodes"),
	   "a step past the limit is refused, the limit named (%s)", err);
	err[0] = '\0';
	ok(rdzv_order_position("0", RDZV_STEP_NODES_MAX + 1, 0, &pos, err, sizeof(err)) == -1
	   && strstr(err, "RDZV_STEP_NODES_MAX"), "and so is its order on a node (%s)", err);
}

/* xorshift64: a fixed sequence, the same on every run. */
static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* A step of n nodes, 4 tasks each, node i holding ranks rank_of[i] * 4 ..
 * + 3: its order through the plan (srun's text, a node's parse) gives every
 * node its place. Returns the order's length, or 0 when anything failed. */
static size_t round_trip(uint32_t n, const uint32_t *rank_of, const char *what)
{
	uint32_t **tids = calloc(n, sizeof(*tids)), *cells = calloc((size_t)n * 4, sizeof(*cells));
	uint32_t *pos = calloc(n, sizeof(*pos)), i, m = 0, bad = 0;
	uint16_t *tasks = calloc(n, sizeof(*tasks));
	char *order = NULL, *text = NULL;
	struct rdzv_plan p, q;
	size_t len = 0;

	for (i = 0; i < n; i++) {
		uint32_t j;

		for (j = 0; j < 4; j++)
			cells[(size_t)i * 4 + j] = rank_of[i] * 4 + j;
		tids[i] = &cells[(size_t)i * 4];
		tasks[i] = 4;
	}
	memset(&p, 0, sizeof(p));
	p.job_id = 31;
	p.port = 30000;
	snprintf(p.host, sizeof(p.host), "gb00001");
	p.order_known = 1;
	err[0] = '\0';
	i = (uint32_t)rdzv_order_from_layout(n, n * 4, tasks, tids, &m, &order, err, sizeof(err));
	ok(i == 0 && order && rank_of[m] == 0, "%s: %u nodes, an order of %zu bytes %s", what, n,
	   order ? strlen(order) : 0, err);
	if (!order)
		goto out;
	len = strlen(order);
	ok(len < rdzv_order_text_max(n), "%s: within rdzv_order_text_max (%zu)", what,
	   rdzv_order_text_max(n));
	p.order = order;
	text = rdzv_plan_text(&p);
	ok(text && rdzv_plan_parse(text, &q, err, sizeof(err)) == 0 && q.order_known
	   && strcmp(q.order, order) == 0, "%s: the plan carries it", what);
	ok(text && rdzv_order_positions(q.order, n, pos, err, sizeof(err)) == 0,
	   "%s: a node reads it back", what);
	for (i = 0; text && i < n; i++)
		bad += pos[i] != rank_of[i];
	ok(text && bad == 0, "%s: every node's place is its rank (%u wrong)", what, bad);
	ok(text && rdzv_order_position(q.order, n, n - 1, &i, err, sizeof(err)) == 0
	   && i == rank_of[n - 1], "%s: the last node's place alone", what);
out:
	free(text);
	free(order);
	free(pos);
	free(tasks);
	free(cells);
	free(tids);
	return len;
}

/* Orders far past the old 96 KiB cap: Slurm's largest step
 * (65,536 nodes) in a random order and in the longest order there is (every
 * node alone: descending ids), nothing refused, nothing dropped. */
static void test_large(void)
{
	enum { N = 65536 };
	uint32_t *rank_of = malloc(N * sizeof(*rank_of)), i;
	uint64_t x = 88172645463325252ull;

	for (i = 0; i < N; i++)
		rank_of[i] = i;
	for (i = N - 1; i > 0; i--) { /* Fisher-Yates */
		uint32_t j = (uint32_t)(rnd(&x) % (i + 1)), t = rank_of[i];

		rank_of[i] = rank_of[j];
		rank_of[j] = t;
	}
	ok(round_trip(N, rank_of, "random") > 98304, "the random order is past the old cap");
	for (i = 0; i < N; i++)
		rank_of[i] = N - 1 - i;
	/* every id written alone, with a comma between: (10 + 90 * 2 + 900 *
	 * 3 + 9000 * 4 + 55536 * 5) + 65535 bytes */
	ok(round_trip(N, rank_of, "descending") == 316570 + 65535,
	   "the descending order writes every id once, alone");
	for (i = 0; i < 100; i++)
		rank_of[i] = 99 - i;
	ok(round_trip(100, rank_of, "descending 100") == rdzv_order_text_max(100) - 1 - 10 - 1,
	   "100 nodes: as long as rdzv_order_text_max allows but the one-digit ids' and the "
	   "last separator's room");
	free(rank_of);
}

static void test_bad_orders(void)
{
	const char *bad[] = { "0,0", "0-2", "3", "1,", ",1", "a", "2-1", "0--1", "0,1,2",
	                      "99999999999", "0 1", NULL };
	uint32_t pos;
	size_t i;

	for (i = 0; bad[i]; i++) {
		pos = 4242;
		err[0] = '\0';
		ok(rdzv_order_position(bad[i], 2, 0, &pos, err, sizeof(err)) == -1 && err[0]
		   && pos == 4242, "order '%s' for 2 nodes is refused (%s)", bad[i], err);
	}
	ok(rdzv_order_position("1,0", 2, 2, &pos, err, sizeof(err)) == -1,
	   "a node id outside the step is refused");
	ok(rdzv_order_position(NULL, 2, 0, &pos, err, sizeof(err)) == -1, "no order is refused");
}

static void test_plan_order(void)
{
	struct rdzv_plan p, q;
	char buf[256];

	memset(&p, 0, sizeof(p));
	p.job_id = 200001;
	p.step_id = 0;
	p.port = 30000;
	snprintf(p.host, sizeof(p.host), "node3");
	p.order_known = 1;
	p.order = "2-3,0-1";
	ok(rdzv_plan_format(&p, buf, sizeof(buf)) == 0
	   && strcmp(buf, "200001.0:30000:derived:node3:L2-3,0-1") == 0, "a plan carries the order (%s)",
	   buf);
	ok(rdzv_plan_parse(buf, &q, err, sizeof(err)) == 0 && q.order_known
	   && strcmp(q.order, "2-3,0-1") == 0 && strcmp(q.host, "node3") == 0,
	   "and parses back with host and order");
	p.order = "";
	ok(rdzv_plan_format(&p, buf, sizeof(buf)) == 0 && rdzv_plan_parse(buf, &q, err, sizeof(err)) == 0
	   && q.order_known && q.order[0] == '\0', "the list order travels as 'L' (%s)", buf);
	ok(rdzv_plan_parse("5.0:30000:derived:n1", &q, err, sizeof(err)) == 0 && !q.order_known,
	   "a plan without an order says the order is unknown");
	ok(rdzv_plan_parse("5.0:30000:derived:n1:X1", &q, err, sizeof(err)) == -1,
	   "an order without its 'L' is refused");
	ok(rdzv_plan_parse("5.0:30000:derived:n1:L1;0", &q, err, sizeof(err)) == -1,
	   "an order with other characters is refused");
	ok(rdzv_plan_parse("5.0:30000:derived:n:1:L0", &q, err, sizeof(err)) == -1,
	   "a host with ':' is refused");
}

/* The range-list reader the node order and the domain map share
 * (lib/common/util.c). */
static void test_ranges(void)
{
	static const char *const bad[] = { "", "-1", "a", "1-", "1-1", "2-1", "+1",
	                                   "4294967296", "1-4294967296",
	                                   "000000000000000000001", NULL };
	const char *p;
	uint32_t a = 7, b = 7, pos[3];
	size_t i;

	p = "12,3";
	ok(rdzv_read_range(&p, UINT32_MAX, &a, &b) == 0 && a == 12 && b == 12 && *p == ',',
	   "'12': one node, the reader stops at ','");
	p = "2-5x";
	ok(rdzv_read_range(&p, UINT32_MAX, &a, &b) == 0 && a == 2 && b == 5 && *p == 'x',
	   "'2-5': a range");
	p = "0-4294967295";
	ok(rdzv_read_range(&p, UINT32_MAX, &a, &b) == 0 && a == 0 && b == UINT32_MAX,
	   "the whole 32-bit range");
	p = "4294967295";
	ok(rdzv_read_range(&p, UINT32_MAX - 1, &a, &b) == -1, "a number above the caller's max");
	for (i = 0; bad[i]; i++) {
		p = bad[i];
		ok(rdzv_read_range(&p, UINT32_MAX, &a, &b) == -1, "'%s' is not a range", bad[i]);
	}
	p = "x";
	ok(rdzv_read_u32(&p, UINT32_MAX, &a) == -1 && *p == 'x', "no digits: *p unmoved");
	/* The node order's own reader took at most 10 digits; the shared one,
	 * like the domain map's, takes leading zeros up to 20. */
	ok(rdzv_order_positions("00000000002,0-1", 3, pos, err, sizeof(err)) == 0 && pos[2] == 0
	   && pos[0] == 1 && pos[1] == 2, "an order with an 11-digit '2' reads as node 2 (%s)",
	   err);
}

int main(void)
{
	test_measured();
	test_bad_layouts();
	test_large();
	test_bad_orders();
	test_ranges();
	test_plan_order();
	return done_testing();
}
