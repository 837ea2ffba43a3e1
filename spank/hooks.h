/* SPDX-License-Identifier: GPL-2.0-or-later */
/* hooks.h: the glue of the binding (spank/bind.c) and profile
 * (spank/profile.c) features, called from rdzv.c, options.c and remote.c.
 * Each returns 0, or -1 with a reason in err. Order per task: the mode's
 * variables, then the profile's entries, then binding's (so binding's
 * NCCL_IB_HCA, already inside the profile's allow-list, replaces a profile
 * default but never an enforced entry), then one apply. */
#ifndef RDZV_HOOKS_H
#define RDZV_HOOKS_H

#include <slurm/spank.h>
#include <stdint.h>

#include "envset.h"
#include "modes.h"

/* --rdzv-bind=VALUE (called in every context; validate, remember). */
int rdzv_bind_option(const char *val, char *err, size_t errlen);
/* srun/sbatch after options: refuse what can be refused early. */
int rdzv_bind_local(spank_t sp, char *err, size_t errlen);
/* slurmstepd, once per node, as root: the node model from root's cache. */
int rdzv_bind_init_post_opt(spank_t sp);
/* slurmstepd, once per node, as the user: load topology, compute the table. */
int rdzv_bind_user_init(spank_t sp, const struct rdzv_step *step, char *err, size_t errlen);
/* slurmstepd, in task t before exec: add the task's row; may set affinity. */
int rdzv_bind_task_init(spank_t sp, const struct rdzv_step *step, const struct rdzv_task *t,
                        struct rdzv_envset *env, char *err, size_t errlen);
/* The model of the node's first CUDA GPU, read from the topology binding
 * loaded in user_init; "" when binding loaded none. */
const char *rdzv_bind_gpu_model(void);
/* The step's NVIDIA GPUs on this node by PCI position (NVML's, DCGM's
 * index), known after user_init when topology= is set; the count. */
size_t rdzv_bind_step_gpus(const int **gpus);
/* Slurm's number of the GPU at PCI address pci ("0000:3b:00") on this
 * node; -1 none of the node's GPUs; -2 not known (no identity chain:
 * binding off). *local_task: the local task bound to it, -1 unknown, -2
 * none (a GPU of the node that is not the step's). */
int rdzv_bind_pci_gpu(const char *pci, int *local_task);
/* Why binding failed and the tasks run unbound (strict=no), or NULL. */
const char *rdzv_bind_fallback(void);
void rdzv_bind_exit(void);

/* --nccl-profile=VALUE */
int rdzv_profile_option(const char *val, char *err, size_t errlen);
/* srun/sbatch: validate the name against the directory, handle "list". */
int rdzv_profile_local(spank_t sp, char *err, size_t errlen);
/* slurmstepd, once per node: read and resolve the profile. */
int rdzv_profile_user_init(spank_t sp, char *err, size_t errlen);
int rdzv_profile_task_init(spank_t sp, const struct rdzv_task *t, struct rdzv_envset *env,
                           char *err, size_t errlen);
/* For the step's record: the profile chosen and the default (NULL none),
 * and a hash of what the node resolved. */
void rdzv_profile_record_info(const char **name, const char **deflt, uint64_t *hash);
/* The resolved profile's NCCL_IB_HCA allow-list, or NULL for no limit. */
const char *rdzv_profile_hca_allow(void);
void rdzv_profile_exit(void);

/* The step's record (spank/record.c): slurmstepd's user_init, the task's
 * part (task_init, after the variables are applied), each task's exit,
 * and the record written at exit. Never fail the step. */
void rdzv_record_init_post_opt(void); /* root: the tasks' socket pair */
void rdzv_record_user_init(spank_t sp);
void rdzv_record_task(const struct rdzv_task *t, const struct rdzv_envset *env,
                      const struct rdzv_envset *late);
void rdzv_record_task_exit(spank_t sp);
/* The GPU fault a failing rank's node found (failure.c): its kind
 * (rdzv_gpu_faults_total) and srun's line, for the record and metrics. */
void rdzv_record_gpu_fault(const char *kind, const char *text);
void rdzv_record_exit(spank_t sp);

#endif
