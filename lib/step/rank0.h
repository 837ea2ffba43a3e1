/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/step/: the step's plan: host lists, task layouts, node order,
 * MASTER_ADDR and the port, rank 0, heterogeneous steps, srun's command line
 * and what it hands the nodes, the interface to rank 0, the step's datagram
 * channel. Uses lib/common/. */
/* rank0.h: rank 0's node and port as a node of the step decides them in
 * slurmstepd (user_init), from srun's plan when srun handed one over for
 * this step, from the step's own facts when not. Plain C over what the glue
 * read from Slurm, so that unit tests and fuzzers reach every branch:
 *
 *  - a plan with the step's layout: rank 0's node and the node order are
 *    Slurm's own (srun asked slurmctld);
 *  - a plan without it: srun decided, this node checks that rank 0's node
 *    is node 0 of SLURM_STEP_NODELIST (block, cyclic, plane) or takes srun's
 *    host (-m arbitrary);
 *  - a heterogeneous step: the components in order, the leader's ids;
 *  - no plan: each node decides alone, from the node list (or the hostfile
 *    under -m arbitrary) and the port precedence of port.h. */
#ifndef RDZV_RANK0_H
#define RDZV_RANK0_H

#include <stddef.h>
#include <stdint.h>

#include "het.h"
#include "master.h"
#include "port.h"

/* srun's plan text (RDZV_STEP_PLAN, taken from the step's environment) for
 * a step of nnodes nodes: 1 with *plan filled (plan->order points into
 * text, which the caller keeps), 0 when the plan is another step's (a step
 * started from inside another inherits it), -1 when it is too long for the
 * step or does not parse. */
int rdzv_rank0_plan(const char *text, uint32_t job_id, uint32_t step_id, uint32_t nnodes,
                    struct rdzv_plan *plan, char *err, size_t errlen);

struct rdzv_rank0_in {
	const struct rdzv_plan *plan;  /* srun's plan for this step; NULL none */
	const struct rdzv_het *het;    /* a heterogeneous step (no plan); NULL otherwise */
	const char *nodelist;          /* SLURM_STEP_NODELIST */
	const char *dist;              /* SLURM_DISTRIBUTION, "" unset */
	const char *resv;              /* SLURM_STEP_RESV_PORTS, "" unset */
	const char *hosttext;          /* no plan, -m arbitrary: SLURM_HOSTFILE's head, or NULL */
	uint32_t job_id, step_id, nnodes, node_id;
	uint16_t option_port;          /* --rdzv-port, 0 when not given */
	const struct rdzv_port_range *range; /* plugstack port_range= */
	const char *ephemeral_path;    /* ip_local_port_range, read when a port is derived */
	const char *cause, *advice;    /* why no plan, short and with what to do */
};

struct rdzv_rank0 {
	char host[RDZV_HOST_MAX];      /* rank 0's node, as Slurm names it */
	uint32_t node_rank;            /* this node's place in rank order */
	uint16_t port;
	const char *port_source;       /* where the port came from (static text) */
	int from_resv;                 /* the port is SLURM_STEP_RESV_PORTS's */
	char order_source[256];        /* where rank 0's node and the order came from */
};

/* Returns 0 with out filled, or -1 with the reason (the user's message). */
int rdzv_rank0_place(const struct rdzv_rank0_in *in, struct rdzv_rank0 *out, char *err,
                     size_t errlen);

/* The node that runs task 0 knows it: rank 0 taken to be elsewhere would
 * leave every rank waiting where nothing listens. runs_task0: Slurm's
 * answer for this node; has_plan: srun handed a plan over. Returns 0, or
 * -1 with why (and what to do). */
int rdzv_rank0_check_task0(int runs_task0, const char *nodename, const struct rdzv_rank0 *r,
                           int het, int has_plan, const char *advice, char *err,
                           size_t errlen);

/* Where the port came from, for --rdzv-verbose: a reserved port inside the
 * node's ephemeral range may be held by any program's outgoing connection,
 * and rank 0 then cannot bind it; said, naming the range (read from
 * ephemeral_path only then). */
void rdzv_rank0_port_note(const struct rdzv_rank0 *r, int verbose, const char *ephemeral_path,
                          char *buf, size_t len);

#endif
