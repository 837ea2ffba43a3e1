/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz-plan.c: the step plan srun hands to the nodes (RDZV_STEP_PLAN, read
 * in slurmstepd from the job's environment, which a user can set) and srun's
 * own command line scanned for -w/--nodelist/-F. Input: the first line is a
 * plan; every following line is one word of an srun command line.
 * Invariants: an accepted plan has a port in range and a host (maybe empty)
 * that fits, and formats back (into a buffer sized as spank/srun.c sizes
 * it; one byte less is refused) to a string that parses to the same plan,
 * node order included, and rdzv_plan_text gives the same text; an accepted
 * order that a node of its step reads (rdzv_order_positions) is the order
 * srun writes back from the layout it describes (rdzv_order_from_layout:
 * the same place for every node); the
 * command-line scan returns a value that fits its buffer and never reads
 * past argc; the first line read as an exported JAX_COORDINATOR_ADDRESS
 * (rdzv_hostport_split) gives a non-empty host that fits and a port in
 * range. The plan read as a node reads it for its step (rdzv_rank0_plan)
 * agrees with the parser, and a node placing rank 0 from it (the second
 * line its node list, the third its distribution) gets a host that fits
 * and a place inside the step, or a reason. */
#include "config.h"
#include "fuzz.h"
#include "master.h"
#include "nodeorder.h"
#include "port.h"
#include "rank0.h"

/* The nodes an order names, summed over its ranges (0: not "a" / "a-b"
 * ranges, or more than 4096 nodes: skipped). */
static uint32_t order_nodes(const char *o)
{
	uint64_t n = 0;

	while (*o) {
		char *end;
		unsigned long a = strtoul(o, &end, 10), b = a;

		if (end == o || *o < '0' || *o > '9')
			return 0;
		if (*end == '-') {
			o = end + 1;
			if (*o < '0' || *o > '9')
				return 0;
			b = strtoul(o, &end, 10);
		}
		if (b < a || b - a >= 4096 || (n += b - a + 1) > 4096)
			return 0;
		o = end;
		if (*o == ',')
			o++;
		else if (*o)
			return 0;
	}
	return (uint32_t)n;
}

/* A valid order through srun's side and back: node i holds task pos[i]. */
static void order_round_trip(const char *order)
{
	uint32_t n = order_nodes(order), i, master = 0;
	uint32_t *pos, *again, *cells, **tids;
	uint16_t *tasks;
	char err[256], *text = NULL;

	if (n == 0)
		return;
	pos = calloc(n, sizeof(*pos));
	again = calloc(n, sizeof(*again));
	cells = calloc(n, sizeof(*cells));
	tids = calloc(n, sizeof(*tids));
	tasks = calloc(n, sizeof(*tasks));
	FUZZ_ASSERT(pos && again && cells && tids && tasks);
	if (rdzv_order_positions(order, n, pos, err, sizeof(err)) == 0) {
		for (i = 0; i < n; i++) {
			cells[i] = pos[i];
			tids[i] = &cells[i];
			tasks[i] = 1;
		}
		FUZZ_ASSERT(rdzv_order_from_layout(n, n, tasks, tids, &master, &text, err,
		                                   sizeof(err)) == 0 && text);
		FUZZ_ASSERT(pos[master] == 0);
		FUZZ_ASSERT(strlen(text) < rdzv_order_text_max(n));
		FUZZ_ASSERT(rdzv_order_positions(text, n, again, err, sizeof(err)) == 0);
		FUZZ_ASSERT(memcmp(pos, again, n * sizeof(*pos)) == 0);
		free(text);
	}
	free(pos);
	free(again);
	free(cells);
	free(tids);
	free(tasks);
}

/* The plan as a node of its step reads and uses it (rank0.h). */
static void rank0_from(const char *text, const struct rdzv_plan *plan, const char *nodelist,
                       const char *dist)
{
	static const struct rdzv_port_range range = { 29500, 29999 };
	uint32_t nnodes = plan->order_known && plan->order ? order_nodes(plan->order) : 4;
	struct rdzv_rank0_in in;
	struct rdzv_rank0 r;
	struct rdzv_plan q;
	char err[256];
	int rc;

	if (nnodes == 0)
		nnodes = 1;
	rc = rdzv_rank0_plan(text, plan->job_id, plan->step_id, nnodes, &q, err, sizeof(err));
	FUZZ_ASSERT(rc == 1 || rc == -1);
	FUZZ_ASSERT(rdzv_rank0_plan(text, plan->job_id + 1, plan->step_id, nnodes, &q, err,
	                            sizeof(err)) <= 0);
	if (rc != 1)
		return;
	memset(&in, 0, sizeof(in));
	in.plan = &q;
	in.nodelist = nodelist;
	in.dist = dist;
	in.resv = "";
	in.job_id = q.job_id;
	in.step_id = q.step_id;
	in.nnodes = nnodes;
	in.node_id = nnodes - 1;
	in.range = &range;
	in.cause = in.advice = "-";
	if (rdzv_rank0_place(&in, &r, err, sizeof(err)) == 0) {
		FUZZ_ASSERT(strlen(r.host) < sizeof(r.host) && r.node_rank < nnodes);
		FUZZ_ASSERT(r.port >= RDZV_PORT_MIN && r.port_source);
	} else {
		FUZZ_ASSERT(err[0] != '\0');
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_pieces p;
	struct rdzv_plan plan, again;
	char err[256], *text, out[64];
	size_t textlen;
	int is_file = 0, rc;

	if (fuzz_split(data, size, &p) < 0)
		return 0;
	if (rdzv_plan_parse(p.v[0], &plan, err, sizeof(err)) == 0) {
		FUZZ_ASSERT(plan.port >= RDZV_PORT_MIN);
		FUZZ_ASSERT(strlen(plan.host) < sizeof(plan.host));
		/* As spank/srun.c sizes it: the host, the node order and the rest. */
		textlen = sizeof(plan.host) + (plan.order ? strlen(plan.order) : 0) + 64;
		FUZZ_ASSERT((text = malloc(textlen)) != NULL);
		FUZZ_ASSERT(rdzv_plan_format(&plan, text, textlen) == 0);
		FUZZ_ASSERT(rdzv_plan_parse(text, &again, err, sizeof(err)) == 0);
		FUZZ_ASSERT(again.job_id == plan.job_id && again.step_id == plan.step_id
		            && again.port == plan.port
		            && again.port_from_option == plan.port_from_option
		            && strcmp(again.host, plan.host) == 0
		            && again.order_known == plan.order_known
		            && strcmp(again.order ? again.order : "", plan.order ? plan.order : "") == 0);
		{
			char *sized = rdzv_plan_text(&plan);

			FUZZ_ASSERT(sized && strcmp(sized, text) == 0);
			free(sized);
		}
		/* One byte short of what it needs: refused, never cut. */
		FUZZ_ASSERT(rdzv_plan_format(&plan, text, strlen(text)) < 0);
		free(text);
		if (plan.order_known && plan.order)
			order_round_trip(plan.order);
		rank0_from(p.v[0], &plan, p.n > 1 ? p.v[1] : "n[1-4]", p.n > 2 ? p.v[2] : "");
	}
	{
		char host[64];
		uint16_t port = 0;

		if (rdzv_hostport_split(p.v[0], host, sizeof(host), &port, err, sizeof(err)) == 0)
			FUZZ_ASSERT(host[0] != '\0' && strlen(host) < sizeof(host)
			            && port >= RDZV_PORT_MIN);
	}
	/* p.v[0] stands for argv[0] ("srun"). */
	rc = rdzv_srun_arg_nodelist(p.n, p.v, out, sizeof(out), &is_file, err, sizeof(err));
	FUZZ_ASSERT(rc >= -1 && rc <= 1);
	if (rc == 1)
		FUZZ_ASSERT(strlen(out) < sizeof(out) && (is_file == 0 || is_file == 1));
	fuzz_pieces_free(&p);
	return 0;
}
