/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-layout: Slurm's tasks-per-node strings (SLURM_STEP_TASKS_PER_NODE).
 * Invalid input first. */
#include "config.h"
#include "layout.h"
#include "tap.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static char err[256];

static void refused(const char *tpn, const char *why)
{
	uint32_t nodes = 77, t = 77;
	uint64_t tasks = 77;
	int rc;

	err[0] = '\0';
	rc = rdzv_tpn_totals(tpn, &nodes, &tasks, err, sizeof(err));
	if (!ok(rc == -1 && err[0] && nodes == 77 && tasks == 77,
	        "totals refuse '%s' (%s) and leave the outputs alone", tpn ? tpn : "(null)", why))
		diag("rc %d err '%s' nodes %u tasks %llu", rc, err, nodes, (unsigned long long)tasks);
	err[0] = '\0';
	rc = rdzv_tpn_tasks_on(tpn, 0, &t, err, sizeof(err));
	ok(rc == -1 && err[0] && t == 77, "tasks_on refuses '%s' (%s)", tpn ? tpn : "(null)", why);
}

static void test_invalid(void)
{
	uint32_t t;

	refused(NULL, "no string");
	refused("", "empty");
	refused("0", "zero tasks on a node");
	refused("2(x0)", "zero repeats");
	refused("2(3)", "repeat without x");
	refused("2(x3", "unclosed repeat");
	refused("2(x)", "repeat without a count");
	refused("2(", "cut after '('");
	refused("2(x3)1", "text after a repeat");
	refused("2,", "trailing comma");
	refused(",2", "leading comma");
	refused("2,,3", "empty element");
	refused("a", "a letter");
	refused("2a", "a letter after a number");
	refused(" 2", "a leading space");
	refused("2 ", "a trailing space");
	refused("-1", "a negative count");
	refused("+1", "a sign");
	refused("2(x-1)", "a negative repeat");
	refused("100000001", "more tasks on one node than any machine has");
	refused("99999999999999999999999", "a number of 23 digits");
	refused("1(x4294967296)", "more repeats than 32 bits hold");
	refused("1(x4294967295),1", "more nodes than 32 bits hold in total");
	refused("1(x18446744073709551616)", "a repeat overflowing 64 bits");
	/* What the three readers this one replaced let through. */
	refused("0(x2)", "zero tasks in a run (Slurm's steps have a task on every node)");
	refused("2,0", "zero tasks on a later node");
	refused("2x3", "'x' without '('");
	refused("2(y3)", "'(' followed by another letter than 'x'");
	refused("2(x3]", "a run closed by another character than ')'");
	refused("2(x3),", "a trailing comma after a run");
	refused("4294967296", "more tasks than 32 bits hold");

	err[0] = '\0';
	is_int(rdzv_tpn_tasks_on("2(x3),1", 4, &t, err, sizeof(err)), -1,
	       "a node past the last one is an error");
	ok(strstr(err, "node 4 past the 4 nodes") != NULL, "the reason names the node and the count");
	is_int(rdzv_tpn_tasks_on("2(x3),1", UINT32_MAX, &t, err, sizeof(err)), -1,
	       "node UINT32_MAX is an error");
	is_int(rdzv_tpn_tasks_on("1,x", 0, &t, err, sizeof(err)), -1,
	       "a string bad after the node asked for is refused whole");
}

struct layout {
	const char *tpn;
	uint32_t nodes;
	uint64_t tasks;
	const char *per_node; /* tasks on each node, space separated */
};

static const struct layout layouts[] = {
	{ "1", 1, 1, "1" },
	{ "8", 1, 8, "8" },
	{ "2(x3),1", 4, 7, "2 2 2 1" },
	{ "3,2,1", 3, 6, "3 2 1" },
	{ "1,2(x2),3", 4, 8, "1 2 2 3" },
	{ "4(x1)", 1, 4, "4" },
	{ "8(x2)", 2, 16, "8 8" },
	{ "1(x3),2(x2),1", 6, 8, "1 1 1 2 2 1" },
	{ "100000000", 1, 100000000, "100000000" },
	{ "007", 1, 7, "7" },
};

static void test_layouts(void)
{
	size_t i;

	for (i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
		const struct layout *l = &layouts[i];
		uint32_t nodes = 0, n, t;
		uint64_t tasks = 0;
		char got[512];
		size_t used = 0;
		int rc;

		rc = rdzv_tpn_totals(l->tpn, &nodes, &tasks, err, sizeof(err));
		ok(rc == 0 && nodes == l->nodes && tasks == l->tasks,
		   "'%s' describes %u nodes and %llu tasks", l->tpn, l->nodes,
		   (unsigned long long)l->tasks);
		got[0] = '\0';
		for (n = 0; n < l->nodes; n++) {
			if (rdzv_tpn_tasks_on(l->tpn, n, &t, err, sizeof(err)) < 0) {
				snprintf(got, sizeof(got), "error on node %u: %s", n, err);
				break;
			}
			used += (size_t)snprintf(got + used, sizeof(got) - used, "%s%u", n ? " " : "", t);
		}
		{
			char name[128];

			snprintf(name, sizeof(name), "'%s' puts %s tasks on its nodes", l->tpn, l->per_node);
			is_str(got, l->per_node, name);
		}
	}
}

/* Large layouts are computed from the string, never expanded. */
static void test_large(void)
{
	uint32_t nodes = 0, t = 0;
	uint64_t tasks = 0;

	is_int(rdzv_tpn_totals("100000000(x4294967295)", &nodes, &tasks, err, sizeof(err)), 0,
	       "the largest layout is accepted");
	is_int(nodes, 4294967295u, "it has 2^32-1 nodes");
	is_int(tasks, 429496729500000000ULL, "and 100000000 * (2^32-1) tasks without overflow");
	is_int(rdzv_tpn_tasks_on("1(x4294967294),5", 4294967294u, &t, err, sizeof(err)), 0,
	       "the last of 2^32-1 nodes is found");
	is_int(t, 5, "and holds the last element's tasks");
}

/* The iterator the readers share: runs with their first node and rank. */
static void test_iter(void)
{
	struct rdzv_tpn_iter it;
	char got[256];
	size_t used = 0;
	int rc;

	rdzv_tpn_begin(&it, "2(x3),1,4(x2)");
	got[0] = '\0';
	while ((rc = rdzv_tpn_next(&it, err, sizeof(err))) > 0)
		used += (size_t)snprintf(got + used, sizeof(got) - used, "%s%u*%u@%u/%llu",
		                         used ? " " : "", it.tasks, it.reps, it.node,
		                         (unsigned long long)it.start);
	is_int(rc, 0, "the iterator ends with 0");
	is_str(got, "2*3@0/0 1*1@3/6 4*2@4/7", "runs: tasks*nodes@first node/first rank");
	is_int(rdzv_tpn_next(&it, err, sizeof(err)), 0, "and stays at the end");

	rdzv_tpn_begin(&it, "2,x");
	ok(rdzv_tpn_next(&it, err, sizeof(err)) == 1 && it.tasks == 2, "a good first run is read");
	err[0] = '\0';
	ok(rdzv_tpn_next(&it, err, sizeof(err)) == -1 && strstr(err, "bad task count"),
	   "then the bad one is refused (%s)", err);
	rdzv_tpn_begin(&it, NULL);
	is_int(rdzv_tpn_next(&it, NULL, 0), -1, "NULL is refused, with no room for a reason");
	rdzv_tpn_begin(&it, "");
	is_int(rdzv_tpn_next(&it, NULL, 0), -1, "empty is refused");
}

int main(void)
{
	test_invalid();
	test_layouts();
	test_large();
	test_iter();
	return done_testing();
}
