/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/modes/: what each mode sets (torch, Megatron, launchers, frameworks,
 * containers), srun's verdict on Megatron's groups over the domains, and the
 * plugstack arguments that choose them. Uses lib/domains/, lib/step/,
 * lib/common/. */
/* launcher.h: finding a framework's own launcher in a step's command line.
 * Under srun a launcher that reads no Slurm variable splits the step
 * silently: `srun -N2 --rdzv=deepspeed deepspeed train.py` starts, in
 * every task, DeepSpeed's runner, which (without a hostfile) starts
 * LOCAL_SIZE workers of its own on 127.0.0.1:29500: one private world per
 * task, every one "rank 0 of 1", and the step exits 0 (measured with
 * DeepSpeed 0.19.5 on 2 nodes, doc/modes.md). torchrun and
 * `accelerate launch` do the same to the plugin's RANK and WORLD_SIZE.
 *
 * What is recognised, in the step's argv (S_JOB_ARGV) or in srun's own
 * command line after srun's options:
 *   - deepspeed, deepspeed.pt, ds (DeepSpeed's bin/ scripts: its runner),
 *     python -m deepspeed.launcher.runner;
 *   - torchrun, python -m torch.distributed.run / torch.distributed.launch;
 *   - accelerate launch, accelerate-launch, python -m accelerate.commands.launch;
 *   - each behind env [-u NAME] [VAR=value...], nohup, time [-p], nice [-n N],
 *     python's own options (-u, -X opt, -m MOD...), python SCRIPT where the
 *     script is the launcher's file (python /usr/bin/deepspeed), and inside
 *     the command string of bash/sh -c (simple commands split at ; & | ( )
 *     and newlines, leading VAR=value, exec and command skipped; quotes
 *     group words, nothing is expanded). The string's first
 *     RDZV_LAUNCHER_TEXT_MAX bytes are read.
 * A launcher whose visible flags set up the multi-node rendezvous itself
 * (deepspeed --no_ssh; torchrun --rdzv-endpoint or --master-addr, or
 * PET_RDZV_ENDPOINT/PET_MASTER_ADDR exported; accelerate launch
 * --main_process_ip or --machine_rank) is the user's deliberate set-up and
 * is only reported as "configured".
 *
 * Plain C, no spank.h: tests/unit/test-launcher.c, tests/fuzz/fuzz-launcher.c. */
#ifndef RDZV_LAUNCHER_H
#define RDZV_LAUNCHER_H

#include <stddef.h>
#include <stdint.h>

#define RDZV_LAUNCHER_TEXT_MAX 4096
#define RDZV_LAUNCHER_WORDS_MAX 128

enum rdzv_launcher_kind {
	RDZV_LAUNCHER_NONE = 0,
	RDZV_LAUNCHER_DEEPSPEED,
	RDZV_LAUNCHER_TORCHRUN,
	RDZV_LAUNCHER_ACCELERATE,
};

struct rdzv_launcher {
	enum rdzv_launcher_kind kind;
	char command[96];   /* as the user wrote it: "deepspeed", "python3 -m torch.distributed.run" */
	int in_shell;       /* found inside bash/sh -c "..." */
	char script[96];    /* the training script (first word ending in .py), or "" */
	char module[96];    /* the launcher's -m/--module target when given, or "" */
	char configured[48]; /* the flag that sets up the rendezvous itself, or "" */
};

/* The launcher in a command line (argv[0] is the program). envp (may be
 * NULL) is the step's environment, for torchrun's PET_* variables. Returns
 * 1 with *l filled, 0 when the command is none of the above. */
int rdzv_launcher_find(int argc, char *const *argv, char *const *envp, struct rdzv_launcher *l);

/* Where the task's command starts in srun's own argv (srun's options end at
 * the first word that is not one, or after "--"; option values skipped with
 * master.h's table). Returns the index, or -1 when there is none. */
int rdzv_srun_command_index(int argc, char *const *argv);

/* The refusal for a one-task-per-rank mode (torch, deepspeed, megatron,
 * lightning): a launcher found and not configured, in a step of more than
 * one task. Returns 0 (fine) or -1 with a message naming the command and
 * the command to run instead. mode names the mode in the message. */
int rdzv_launcher_check(const char *mode, int argc, char *const *argv, char *const *envp,
                        uint32_t ntasks, char *err, size_t errlen);

const char *rdzv_launcher_name(enum rdzv_launcher_kind kind);

#endif
