/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/modes/: what each mode sets (torch, Megatron, launchers, frameworks,
 * containers), srun's verdict on Megatron's groups over the domains, and the
 * plugstack arguments that choose them. Uses lib/domains/, lib/step/,
 * lib/common/. */
/* frameworks.h: what the frameworks need beyond the variables, as measured
 * (DeepSpeed 0.19.5, Lightning 2.x, JAX 0.11 under Slurm; doc/modes.md):
 * a launcher that reads no Slurm variable splits a step into private worlds
 * and Lightning refuses layouts at start-up, so srun checks first. Here:
 * the lightning mode, and the whole-step checks of the torch, deepspeed,
 * lightning and jax modes (rdzv_mode_check_f, lib/modes/modes.h). The mode table in modes.c points
 * here. Plain C: tests/unit/test-frameworks.c.
 *
 * A check runs in srun before launch (srun.c: step->local_ntasks is 0
 * there, srun's own environ in step->envp) and once per node in slurmstepd
 * (the step's environment). Refusals (-1) happen in both; warnings (1) only
 * on the nodes, where the step's real environment is known, and rank 0
 * prints them once. */
#ifndef RDZV_FRAMEWORKS_H
#define RDZV_FRAMEWORKS_H

#include <stddef.h>

#include "envset.h"
#include "step.h"

/* lightning: what Lightning's SLURMEnvironment reads besides SLURM_*:
 * MASTER_ADDR, MASTER_PORT (rank 0's node, the step's port), and RANK,
 * LOCAL_RANK, WORLD_SIZE, NODE_RANK for the script's own use; never
 * TORCHELASTIC_* (TORCHELASTIC_RUN_ID makes Lightning pick its TorchElastic
 * environment and drop its Slurm features: a leftover one is unset), nor
 * GROUP_RANK and LOCAL_WORLD_SIZE (with RANK and LOCAL_RANK, what Lightning
 * before 1.6 took for torchelastic). */
int rdzv_fill_lightning(const struct rdzv_step *step, const struct rdzv_task *task,
                        struct rdzv_envset *env, char *err, size_t errlen);

/* torch: the step's command must not be a launcher that replaces the
 * plugin's ranks (launcher.h). */
int rdzv_check_torch(const struct rdzv_step *step, char *err, size_t errlen);

/* deepspeed: the launcher refusal, then a warning when an exported
 * OMPI_COMM_WORLD_LOCAL_RANK differs from some task's LOCAL_RANK: DeepSpeed's
 * engine asserts they are equal when the variable is set (a leftover of an
 * mpirun wrapper kills the run). */
int rdzv_check_deepspeed(const struct rdzv_step *step, char *err, size_t errlen);

/* lightning: the launcher refusal, and what Lightning rejects at start-up:
 * a step of several tasks without SLURM_NTASKS_PER_NODE (RuntimeError
 * "You set --ntasks=N ... Use --ntasks-per-node"), tasks per node different
 * from the GPUs per node when the step has GPUs (ValueError: devices
 * "auto" are the GPUs a task sees). On the nodes, a warning for a job named
 * bash or interactive (Lightning then ignores its SLURM environment). */
int rdzv_check_lightning(const struct rdzv_step *step, char *err, size_t errlen);

/* jax: a warning on the nodes when OMPI_MCA_orte_hnp_uri is exported: JAX's
 * cluster detection tries Open MPI before Slurm and then fails on the
 * missing OMPI_COMM_WORLD_* variables. */
int rdzv_check_jax(const struct rdzv_step *step, char *err, size_t errlen);

/* The launcher refusal for the megatron mode's check (modes.c). */
int rdzv_check_launcher(const char *mode, const struct rdzv_step *step, char *err,
                        size_t errlen);

#endif
