/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/step/: the step's plan: host lists, task layouts, node order,
 * MASTER_ADDR and the port, rank 0, heterogeneous steps, srun's command line
 * and what it hands the nodes, the interface to rank 0, the step's datagram
 * channel. Uses lib/common/. */
/* het.h: a heterogeneous step (srun ... : ..., or --het-group=0,1) as one
 * world.
 *
 * Each component of such a step is run by its own slurmstepd with its own
 * job id, node ids and task count (the SPANK items), while Slurm numbers the
 * tasks and nodes across components: SLURM_PROCID = the component's task
 * offset + the task's id in its component, SLURM_NODEID likewise, and
 * SLURM_JOB_ID is the het leader's on every component (src/slurmd/
 * slurmstepd/task.c, exec_task). The step's environment, the same on every
 * node, describes the whole step: SLURM_STEP_NODELIST (sorted by name),
 * SLURM_STEP_TASKS_PER_NODE (in that order), SLURM_STEP_NUM_NODES/TASKS, and
 * each component's nodes as SLURM_JOB_NODELIST_HET_GROUP_K and its job id
 * as SLURM_JOB_ID_HET_GROUP_K (K < SLURM_HET_SIZE). Measured on 22.05,
 * 24.11 and 26.05: components on n[3-4] (1 task each) and n[1-2] (2 each)
 * give SLURM_NODEID 0,1 to n3,n4 and 2,3 to n1,n2, SLURM_PROCID 0,1 and
 * 2-5, SLURM_STEP_TASKS_PER_NODE=2(x2),1(x2).
 *
 * srun runs its plugins' local_user_init once for the whole het step, and
 * merges their environment into one component's launch only (src/srun/
 * srun.c, _launch_one_app): nothing srun computes reaches every node. So
 * each node derives the numbering from the environment alone: components in
 * order, each component's step nodes (its job's nodes that the step names)
 * in the step list's order, tasks numbered through them. */
#ifndef RDZV_HET_H
#define RDZV_HET_H

#include <stddef.h>
#include <stdint.h>

#include "master.h" /* RDZV_HOST_MAX */

struct rdzv_het {
	uint32_t ncomp;           /* components the step spans */
	uint32_t comp;            /* this node's component (its index among them) */
	uint32_t leader_job;      /* SLURM_JOB_ID: the same on every component */
	uint32_t nnodes, ntasks;  /* the whole step's */
	uint32_t node_offset;     /* global node id of the component's first node */
	uint32_t task_offset;     /* global id of the component's first task */
	char node[RDZV_HOST_MAX]; /* this node's name */
	char master[RDZV_HOST_MAX]; /* the first node of the step's first component */
};

/* Reads the step from get(ctx, NAME) (the step's environment; NULL when
 * unset). comp_job, comp_node, comp_nnodes, comp_ntasks: this slurmstepd's
 * SPANK items. Returns 1 for a het step (h filled), 0 for any other step,
 * -1 with the reason when the environment and the items disagree. */
int rdzv_het_read(const char *(*get)(void *ctx, const char *name), void *ctx,
                  uint32_t comp_job, uint32_t comp_node, uint32_t comp_nnodes,
                  uint32_t comp_ntasks, struct rdzv_het *h, char *err, size_t errlen);

#endif
