/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/bind/: the node's topology, each task's GPU, NICs and cores, the node
 * check and its GPU gate. Uses lib/modes/, lib/step/, lib/gpu/, lib/common/. */
/* bindmode.h: --rdzv-bind values and what a task's row adds to its
 * environment.
 *
 * A value is a comma list of words:
 *   what:      auto (= gpu,nic,cpu), gpu, nic, cpu; none alone turns binding off
 *   modifiers: isolate  CUDA_VISIBLE_DEVICES (AMD: ROCR_VISIBLE_DEVICES) = the
 *                       task's GPU only
 *              verbose  print the node's table (from local task 0)
 *              dry-run  print the table, change nothing
 * Modifiers without a `what` word apply to auto ("isolate" = auto,isolate). */
#ifndef RDZV_BINDMODE_H
#define RDZV_BINDMODE_H

#include <stddef.h>

#include "envset.h"
#include "topo.h"

#define RDZV_BIND_GPU     0x01u /* CUDA_DEVICE_ORDER; a GPU per task */
#define RDZV_BIND_NIC     0x02u /* NCCL_IB_HCA, UCX_NET_DEVICES */
#define RDZV_BIND_CPU     0x04u /* sched_setaffinity to the GPU's cores */
#define RDZV_BIND_ISOLATE 0x08u /* CUDA_VISIBLE_DEVICES = the task's GPU */
#define RDZV_BIND_VERBOSE 0x10u
#define RDZV_BIND_DRYRUN  0x20u
#define RDZV_BIND_AUTO    (RDZV_BIND_GPU | RDZV_BIND_NIC | RDZV_BIND_CPU)

/* "auto, gpu, nic, cpu, isolate, verbose, dry-run, none" for messages. */
const char *rdzv_bind_mode_names(void);

/* Parse a --rdzv-bind value into flags (0 for none). Returns 0, or -1 with
 * the bad word and the valid ones named in err. */
int rdzv_bind_mode_parse(const char *s, unsigned *flags, char *err, size_t errlen);

/* Add task i's variables to env, origin "binding": CUDA_DEVICE_ORDER,
 * NCCL_IB_HCA and UCX_NET_DEVICES as defaults (a user's value wins), and
 * with isolate CUDA_VISIBLE_DEVICES, enforced over Slurm's step value but
 * only when the task's value (task_visible) is still the step's
 * (step_visible): a different one means Slurm's --gpu-bind or a task
 * prolog chose already. Sets *isolated to whether it did. A row without a
 * GPU adds nothing. Returns 0, or -1 with a reason. */
int rdzv_bind_fill(const struct rdzv_bind_table *tab, size_t i, unsigned flags,
                   const char *task_visible, const char *step_visible,
                   struct rdzv_envset *env, int *isolated, char *err, size_t errlen);

/* The same for a row chosen by rdzv_bind_task_row. */
int rdzv_bind_fill_row(const struct rdzv_bind_table *tab, const struct rdzv_bind_row *r,
                       unsigned flags, const char *task_visible, const char *step_visible,
                       struct rdzv_envset *env, int *isolated, char *err, size_t errlen);

/* A task's GPU selection variables on an AMD node (NULL: unset). */
struct rdzv_amd_vis {
	const char *rocr;        /* ROCR_VISIBLE_DEVICES: the one variable kept */
	const char *cuda;        /* CUDA_VISIBLE_DEVICES */
	const char *hip;         /* HIP_VISIBLE_DEVICES (Slurm never sets it) */
	const char *gpu_ordinal; /* GPU_DEVICE_ORDINAL */
	const char *ze;          /* ZE_AFFINITY_MASK */
};

/* Leave a task on an AMD node with one selection, ROCR_VISIBLE_DEVICES:
 * ROCr filters first, then HIP_VISIBLE_DEVICES or CUDA_VISIBLE_DEVICES (and
 * ROCclr's GPU_DEVICE_ORDINAL) select again among what is left, so the same
 * list in two of them can leave no GPU. When Slurm wrote its copies (gres
 * without an env flag: CUDA_VISIBLE_DEVICES and GPU_DEVICE_ORDINAL equal
 * to ROCR_VISIBLE_DEVICES), UNSET entries remove them (and an equal
 * ZE_AFFINITY_MASK). Any other value is the user's: kept, and named in
 * warn ("" when there is nothing to say). Nothing happens without
 * ROCR_VISIBLE_DEVICES. Returns 0, or -1 with a reason in err. */
int rdzv_bind_amd_visibility(const struct rdzv_amd_vis *v, struct rdzv_envset *env, char *warn,
                             size_t warnlen, char *err, size_t errlen);

#endif
