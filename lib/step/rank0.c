/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/step/: the step's plan: host lists, task layouts, node order,
 * MASTER_ADDR and the port, rank 0, heterogeneous steps, srun's command line
 * and what it hands the nodes, the interface to rank 0, the step's datagram
 * channel. Uses lib/common/. */
/* rank0.c: see rank0.h. */
#include "config.h"
#include "rank0.h"
#include "handover.h"
#include "nodeorder.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rdzv_rank0_plan(const char *text, uint32_t job_id, uint32_t step_id, uint32_t nnodes,
                    struct rdzv_plan *plan, char *err, size_t errlen)
{
	struct rdzv_plan p;

	if (strlen(text) > rdzv_order_text_max(nnodes) + RDZV_HOST_MAX + 64)
		return rdzv_err(err, errlen, "%s is longer than a plan for %u nodes can be",
		                RDZV_HO_PLAN, nnodes);
	if (rdzv_plan_parse(text, &p, err, errlen) < 0)
		return -1;
	if (p.job_id != job_id || p.step_id != step_id)
		return 0;
	*plan = p;
	return 1;
}

static int arbitrary(const char *dist)
{
	return strncmp(dist, "arbitrary", 9) == 0;
}

/* srun's plan without the layout: srun decided, this node checks. Under
 * block, cyclic and plane rank 0 runs on node 0 of the step, read here from
 * SLURM_STEP_NODELIST (the same on every node; srun does not see it and
 * leaves the host empty). An arbitrary layout is srun's. */
static int plan_no_layout(const struct rdzv_rank0_in *in, char *host, struct rdzv_rank0 *out,
                          char *err, size_t errlen)
{
	snprintf(out->order_source, sizeof(out->order_source), "%s",
	         arbitrary(in->dist)
	             ? "srun's -m arbitrary node list; node order of SLURM_STEP_NODELIST"
	             : "node 0 and the order of SLURM_STEP_NODELIST (srun had no layout)");
	if (arbitrary(in->dist) && !host[0])
		return rdzv_err(err, errlen, "-m arbitrary, but srun's %s names no host for rank 0",
		                RDZV_STEP_PLAN_VAR);
	if (arbitrary(in->dist))
		return 0;
	if (rdzv_master_host(in->nodelist, in->dist, NULL, out->host, sizeof(out->host), err,
	                     errlen) < 0)
		return -1;
	if (!host[0])
		snprintf(host, RDZV_HOST_MAX, "%s", out->host);
	if (strcmp(out->host, host) != 0)
		return rdzv_err(err, errlen, "srun named %s as rank 0's node, but under "
		                "distribution '%s' it is %s, node 0 of SLURM_STEP_NODELIST", host,
		                in->dist[0] ? in->dist : "block", out->host);
	return 0;
}

/* srun handed a plan over for this step. */
static int from_plan(const struct rdzv_rank0_in *in, struct rdzv_rank0 *out, char *err,
                     size_t errlen)
{
	const struct rdzv_plan *plan = in->plan;
	char host[RDZV_HOST_MAX];

	snprintf(host, sizeof(host), "%s", plan->host);
	if (plan->order_known) {
		/* srun read the step's layout from slurmctld (local.c): rank 0's
		 * node and the node order are Slurm's own, whatever the
		 * distribution or topology order. */
		if (!host[0])
			return rdzv_err(err, errlen, "srun's %s has a node order but no node for "
			                "rank 0", RDZV_STEP_PLAN_VAR);
		if (rdzv_order_position(plan->order, in->nnodes, in->node_id, &out->node_rank, err,
		                        errlen) < 0)
			return -1;
		snprintf(out->order_source, sizeof(out->order_source), "%s",
		         plan->order[0] ? "the step layout, asked of slurmctld by srun (node order "
		                          "differs from the node list)"
		                        : "the step layout, asked of slurmctld by srun");
	} else if (plan_no_layout(in, host, out, err, errlen) < 0) {
		return -1;
	}
	snprintf(out->host, sizeof(out->host), "%s", host);
	if (plan->port_from_option) {
		out->port = plan->port;
		out->port_source = "--rdzv-port";
	} else if (in->resv[0]) {
		if (rdzv_resv_ports_first(in->resv, &out->port, err, errlen) < 0)
			return -1;
		out->port_source = "SLURM_STEP_RESV_PORTS";
		out->from_resv = 1;
	} else {
		out->port = plan->port;
		out->port_source = "job/step id, by srun";
	}
	return 0;
}

/* A port this node derives alone: the precedence of port.h. */
static int derive_port(const struct rdzv_rank0_in *in, const char *resv, const char *derived,
                       struct rdzv_rank0 *out, char *err, size_t errlen)
{
	struct rdzv_port_range eph, *ephp = NULL;
	enum rdzv_port_source src;

	if (in->ephemeral_path && rdzv_ephemeral_range_read(in->ephemeral_path, &eph) == 0)
		ephp = &eph;
	if (rdzv_port_choose(in->option_port, resv, in->job_id, in->step_id, in->range, ephp,
	                     &out->port, &src, err, errlen) < 0)
		return -1;
	out->port_source = src == RDZV_PORT_FROM_DERIVED ? derived : rdzv_port_source_name(src);
	out->from_resv = src == RDZV_PORT_FROM_RESV;
	return 0;
}

/* No plan for this step: srun ran without the plugin (a submit host
 * without this plugstack line, or srun --async, whose steps run no
 * srun-side hook). Each node decides alone, which agrees except under
 * -m arbitrary -w and for nodes with different ip_local_port_range files. */
static int no_plan(const struct rdzv_rank0_in *in, struct rdzv_rank0 *out, char *err,
                   size_t errlen)
{
	char why[512];

	snprintf(out->order_source, sizeof(out->order_source), "node 0 and the order of "
	         "SLURM_STEP_NODELIST (no plan from srun: %s)", in->cause);
	if (rdzv_master_host(in->nodelist, in->dist, in->hosttext, out->host, sizeof(out->host),
	                     why, sizeof(why)) < 0)
		return rdzv_err(err, errlen, "%s; srun handed over no step layout: %s", why,
		                in->advice);
	return derive_port(in, in->resv, "job/step id, on this node", out, err, errlen);
}

int rdzv_rank0_place(const struct rdzv_rank0_in *in, struct rdzv_rank0 *out, char *err,
                     size_t errlen)
{
	const struct rdzv_het *het = in->het;

	memset(out, 0, sizeof(*out));
	out->port_source = "?";
	out->node_rank = in->node_id;
	if (in->plan)
		return from_plan(in, out, err, errlen);
	if (!het)
		return no_plan(in, out, err, errlen);
	/* Every component's nodes number the step alike from the step's
	 * environment; each component has its own reserved ports. */
	snprintf(out->order_source, sizeof(out->order_source), "the heterogeneous step's "
	         "components in order (%u of %u; its nodes from SLURM_NODEID %u, ranks from %u)",
	         het->comp, het->ncomp, het->node_offset, het->task_offset);
	snprintf(out->host, sizeof(out->host), "%s", het->master);
	if (derive_port(in, "", "the het leader's job/step id, on this node", out, err,
	                errlen) < 0)
		return -1;
	out->from_resv = 0;
	return 0;
}

int rdzv_rank0_check_task0(int runs_task0, const char *nodename, const struct rdzv_rank0 *r,
                           int het, int has_plan, const char *advice, char *err,
                           size_t errlen)
{
	if (!runs_task0 || strcmp(r->host, nodename) == 0)
		return 0;
	/* A node order guessed from the node list, where Slurm 26.05 lays
	 * tasks in topology order, places rank 0 where nothing listens. */
	return rdzv_err(err, errlen, "task 0 runs on this node (%s), but rank 0's node was taken "
	                "to be %s (from %s): Slurm laid the step's tasks in another order than "
	                "its node list (26.05's topology order)%s%s",
	                nodename[0] ? nodename : "?", r->host, r->order_source,
	                het ? ": a heterogeneous step is numbered from its node lists, which "
	                      "cannot show it; lay its first component without a topology "
	                      "order (e.g. -m block with one switch)"
	                : has_plan ? ", and srun could not read the step's layout from slurmctld "
	                             "(srun -v says why)"
	                           : ", and without srun's plan the nodes cannot know it; ",
	                het || has_plan ? "" : advice);
}

void rdzv_rank0_port_note(const struct rdzv_rank0 *r, int verbose, const char *ephemeral_path,
                          char *buf, size_t len)
{
	struct rdzv_port_range eph;

	snprintf(buf, len, "%s", r->port_source);
	/* Only when asked, and reading the range once: the launch pays nothing. */
	if (r->from_resv && verbose && ephemeral_path
	    && rdzv_ephemeral_range_read(ephemeral_path, &eph) == 0 && r->port >= eph.lo
	    && r->port <= eph.hi)
		snprintf(buf, len, "%s, inside this node's ephemeral range %u-%u", r->port_source,
		         eph.lo, eph.hi);
}
