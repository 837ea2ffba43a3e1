/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/modes/: what each mode sets (torch, Megatron, launchers, frameworks,
 * containers), srun's verdict on Megatron's groups over the domains, and the
 * plugstack arguments that choose them. Uses lib/domains/, lib/step/,
 * lib/common/. */
/* modes.h: the rendezvous modes (--rdzv=MODE). Adding a mode is one entry
 * in the table in modes.c plus its fill function. */
#ifndef RDZV_MODES_H
#define RDZV_MODES_H

#include <stddef.h>
#include <stdint.h>

#include "envset.h"
#include "fill.h"
#include "step.h"

#define RDZV_MODE_ONE_TASK_PER_NODE 0x1u /* a launcher per node (torchrun) */
#define RDZV_MODE_REFUSES_LAUNCHERS 0x2u /* one task per rank: a framework's own
                                          * launcher under srun is refused (launcher.h) */

/* Mode-specific checks of the step as a whole (Megatron's layout, ...),
 * run once per node in slurmstepd and, where the facts exist, in srun before
 * launch. Returns 0 (fine), 1 (fine, with a warning for the user in err) or
 * -1 (refuse, with the reason in err). */
typedef int (*rdzv_mode_check_f)(const struct rdzv_step *step, char *err, size_t errlen);

struct rdzv_mode {
	const char *name;
	const char *summary;
	unsigned flags;
	/* Add the mode's variables for one task. NULL for "off". */
	int (*fill)(const struct rdzv_step *step, const struct rdzv_task *task,
	            struct rdzv_envset *env, char *err, size_t errlen);
	/* Whole-step check, NULL for modes without one. */
	rdzv_mode_check_f check;
	/* Variables added after binding, from the task's final environment:
	 * task->visible_gpus is then the count of its final
	 * CUDA_VISIBLE_DEVICES (JAX's device ids). NULL when none. */
	int (*fill_late)(const struct rdzv_step *step, const struct rdzv_task *task,
	                 struct rdzv_envset *env, char *err, size_t errlen);
	/* A step-wide note for --rdzv-verbose (why a variable was or was not
	 * set). Returns 1 with the note in buf, 0 when there is none. */
	int (*explain)(const struct rdzv_step *step, char *buf, size_t len);
	/* Where the mode tells ranks to meet; a user's export of these is kept
	 * and checked (rdzv_master_check_user). NULL when the mode has none. */
	const char *addr_var;      /* MASTER_ADDR */
	const char *port_var;      /* MASTER_PORT */
	const char *hostport_var;  /* JAX_COORDINATOR_ADDRESS ("host:port") */
};

/* The mode called name, or NULL. */
const struct rdzv_mode *rdzv_mode_find(const char *name);

/* "off, torch, torchrun, ..." for messages. */
const char *rdzv_mode_names(void);

/* All modes, terminated by an entry whose name is NULL. */
const struct rdzv_mode *rdzv_modes(void);

/* Checks a step against the mode's rules (e.g. one task per node) and the
 * mode's own check, with a message that tells the user what to change.
 * Returns 0, 1 when the step may run but err holds a warning the user
 * should see (once, not per task), or -1 when it must not run. */
int rdzv_mode_check_step(const struct rdzv_mode *mode, const struct rdzv_step *step,
                         char *err, size_t errlen);


/* Whether Megatron mode sets CUDA_DEVICE_MAX_CONNECTIONS=1: 1 (yes) or 0
 * (no), with the reason in why either way. Only tensor or context
 * parallelism > 1 given on the step's command line counts: without it (a
 * wrapper "srun bash train.sh" hides the flags) Megatron may run FSDP, whose
 * check refuses the variable. */
int rdzv_megatron_connections(const struct rdzv_step *step, char *why, size_t whylen);

/* The variables every torch-like mode sets (RANK, LOCAL_RANK, ...). Exposed
 * so that other modes (deepspeed, megatron) build on it. */

int rdzv_fill_torch(const struct rdzv_step *step, const struct rdzv_task *task,
                    struct rdzv_envset *env, char *err, size_t errlen);

#endif
