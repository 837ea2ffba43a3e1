/* SPDX-License-Identifier: GPL-2.0-or-later */
/* slurmctld.h: what srun asks slurmctld for a step, through srun's own
 * libslurm (libslurmfull, loaded before the plugin; the plugin does not
 * link it, so each call is looked up at run time). Each function asks one
 * thing; srun.c decides what to do with the answer. */
#ifndef RDZV_SLURMCTLD_H
#define RDZV_SLURMCTLD_H

#include <stddef.h>
#include <stdint.h>

#include "hostlist.h" /* RDZV_HOST_MAX */

/* The step's layout, copied out of Slurm's. */
struct rdzv_srun_layout {
	char host[RDZV_HOST_MAX];   /* the node of rank 0 */
	char *order;                /* the node order (nodeorder.h), to free */
	char *node_list;            /* the layout's node list, to free */
	uint32_t nnodes, ntasks;
	/* with ranks only: */
	uint32_t tasks_per_node;    /* the same on every node, else 0 */
	uint32_t *rank_node;        /* [ntasks]: each rank's node */
	char **node_names;          /* [nnodes] */
};

/* The step's real layout, asked of slurmctld once per step (the step
 * exists by local_user_init: srun created it before calling the hook).
 * with_ranks: also each rank's node and the node names (NVLink domains).
 * Returns 0; -1 without a layout (err: why); -2 with a layout whose ranks
 * by node could not be read (ranks_err: why). */
int rdzv_slurm_step_layout(uint32_t job, uint32_t step, int with_ranks,
                           struct rdzv_srun_layout *lay, char *ranks_err, size_t ranks_errlen,
                           char *err, size_t errlen);
void rdzv_srun_layout_free(struct rdzv_srun_layout *lay);
/* Only rank_node and node_names freed (NULL after): the rest kept. */
void rdzv_srun_layout_drop_ranks(struct rdzv_srun_layout *lay);

/* Slurm's topology blocks as scontrol show topology prints them, of the
 * topology of partition (NULL: the cluster default). verbose: say which
 * topology. Returns 0 with *text to free, or -1 with err. */
int rdzv_slurm_topo_blocks(const char *partition, int verbose, char **text, char *err,
                           size_t errlen);

/* Completes job (srun made it for a step that was refused). 0 or -1. */
int rdzv_slurm_complete_job(uint32_t job);
/* srun, after its liveness check named a silent node (SIGKILL), or a
 * collective's grace ended (SIGTERM, then SIGKILL): sig to the step through
 * slurmctld (the living nodes signal their tasks). 0 or -1. */
int rdzv_slurm_kill_step(uint32_t job, uint32_t step, int sig);

#endif
