/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/modes/: what each mode sets (torch, Megatron, launchers, frameworks,
 * containers), srun's verdict on Megatron's groups over the domains, and the
 * plugstack arguments that choose them. Uses lib/domains/, lib/step/,
 * lib/common/. */
/* megatron.h: Megatron-LM's parallel layout, read from the step's command
 * line, and the checks that refuse a layout before it wastes GPUs.
 *
 * Megatron numbers ranks with tensor parallelism fastest (its default
 * order "tp-cp-ep-dp-pp", megatron/core/parallel_state.py): the ranks
 * k*TP .. k*TP+TP-1 form one tensor-parallel group, whose all-reduces in
 * every layer must ride NVLink, so such a group must not straddle nodes. */
#ifndef RDZV_MEGATRON_H
#define RDZV_MEGATRON_H

#include <stddef.h>
#include <stdint.h>

#define RDZV_MEGATRON_SIZE_MAX 1048576u /* far beyond any machine; refuses typos */

/* Where one size came from: a command line option, an environment variable
 * (a run.sh that builds the command line from TP_SIZE...), or Megatron's
 * default of 1. */
struct rdzv_megatron_size {
	uint64_t n;
	char from[48];
};

struct rdzv_megatron_layout {
	struct rdzv_megatron_size tp, pp, cp;
	struct rdzv_megatron_size ep;  /* --expert-model-parallel-size, EP_SIZE */
	struct rdzv_megatron_size etp; /* --expert-tensor-parallel-size; default TP */
	char fp8[48];     /* the FP8 option given ("--fp8-format hybrid"), or "" */
	int fsdp;         /* --use-torch-fsdp2 or --use-megatron-fsdp given */
};

/* Read the layout. The command line wins over the environment (it is what
 * Megatron parses); the environment is read only for a size the command
 * line does not give: TP_SIZE, PP_SIZE, CP_SIZE, EP_SIZE (envp may be NULL).
 * Returns 0, or -1 naming the bad option or variable and its value. */
int rdzv_megatron_read(int argc, char *const *argv, char *const *envp,
                       struct rdzv_megatron_layout *l, char *err, size_t errlen);

/* How the step's tasks sit on nodes. */
struct rdzv_megatron_place {
	uint32_t ntasks;            /* world size */
	uint32_t nnodes;
	const char *tasks_per_node; /* "8(x2)" (Slurm's form), or NULL when unknown */
	uint32_t local_ntasks;      /* tasks on the node doing the check; 0 unknown */
	uint32_t node_id;           /* that node's index (for messages) */
	const char *distribution;   /* SLURM_DISTRIBUTION, or NULL/"" = block */
	uint32_t plane_size;        /* SLURM_DIST_PLANESIZE for plane; 0 unknown */
	int by_domain;              /* 1: NVLink reaches beyond the node (nvlink_domain=
	                             * block|nvml): only the sizes are checked here; the
	                             * groups by domain in rdzv_megatron_check_domains */
};

/* Refuse a world size of ntasks tasks not divisible by TP*PP*CP, or by
 * ETP*EP*PP where experts are split, with the numbers in the message: what
 * srun's command line alone can decide (-n, or -N with --ntasks-per-node).
 * Returns 0 or -1. */
int rdzv_megatron_check_world(const struct rdzv_megatron_layout *l, uint32_t ntasks, char *err,
                              size_t errlen);

/* Refuse, with the numbers in the message:
 *   - a world size not divisible by TP*PP*CP (rdzv_megatron_check_world);
 *   - TP larger than the tasks of a node (the group cannot fit on one node);
 *   - a block layout whose node boundaries cut a TP group (a node whose task
 *     count is not a multiple of TP);
 *   - cyclic distribution over several nodes with TP > 1 (consecutive ranks
 *     are on different nodes), plane=N with N not a multiple of TP.
 * An arbitrary distribution (SLURM_HOSTFILE) is checked for divisibility only.
 * Returns 0 or -1. */
int rdzv_megatron_check(const struct rdzv_megatron_layout *l,
                        const struct rdzv_megatron_place *p, char *err, size_t errlen);

/* The step's ranks on nodes and the nodes in NVLink domains (domain.h),
 * known in srun from the step's layout and Slurm's topology blocks. */
struct rdzv_domains;
struct rdzv_megatron_domains {
	const struct rdzv_domains *d;
	const uint32_t *rank_node;   /* [ntasks]: each rank's node id */
	uint32_t ntasks;             /* rank_node's length: the layout's task count */
	char *const *node_names;     /* [nnodes] */
	const char *source;          /* how domains were found, for messages */
	uint32_t tasks_per_node;     /* when every node has as many; 0 uneven */
	uint32_t max_domain_nodes;   /* nodes of the largest domain, 0 unknown */
};

/* Megatron's tensor-, context- and expert-parallel groups, formed as
 * Megatron core forms them (order tp-cp-ep-dp-pp: a TP group is TP
 * consecutive ranks, a CP group CP ranks TP apart, an EP group EP ranks ETP
 * apart), each inside one NVLink domain. Refuses the first group that spans
 * domains, naming ranks, nodes and domains, with the --segment that would
 * keep it inside one. Returns 0 or -1. */
int rdzv_megatron_check_domains(const struct rdzv_megatron_layout *l, uint32_t ntasks,
                                const struct rdzv_megatron_domains *md, char *err,
                                size_t errlen);

/* Whether a GPU model (nvidia-smi / hwloc "GPUModel" form, e.g. "NVIDIA
 * H100 80GB HBM3", "Tesla V100-SXM2-16GB") runs FP8 tensor cores: 1 (Ada,
 * Hopper, Blackwell, MI300), 0 (older), -1 (unknown model). */
int rdzv_gpu_fp8_capable(const char *model);

/* When FP8 was asked for on a GPU known to lack it, write a warning naming
 * the GPU model and return 1; otherwise return 0. */
int rdzv_megatron_fp8_warning(const struct rdzv_megatron_layout *l, const char *gpu_model,
                              char *msg, size_t msglen);

#endif
