/* SPDX-License-Identifier: GPL-2.0-or-later */
/* container_hooks.h: glue of the container rule, called from local.c
 * and remote.c (spank/container.c says when). Each returns 0, or -1 with a
 * reason in err. */
#ifndef RDZV_CONTAINER_HOOKS_H
#define RDZV_CONTAINER_HOOKS_H

#include <slurm/spank.h>

#include "envset.h"
#include "modes.h"

int rdzv_container_local(spank_t sp, char *err, size_t errlen);
int rdzv_container_user_init(spank_t sp, char *err, size_t errlen);
int rdzv_container_restore_task(spank_t sp, const struct rdzv_envset *env,
                                const struct rdzv_env_ops *ops, char *err, size_t errlen);
void rdzv_container_report_task(spank_t sp, const struct rdzv_task *t,
                                const struct rdzv_envset *env);
/* Apptainer: every variable of the task's applied sets (late may be NULL)
 * also as APPTAINERENV_NAME, unless plugstack.conf says container_env=no;
 * under --rdzv-verbose the node's first task says so in one line. */
int rdzv_container_carry_task(spank_t sp, const struct rdzv_task *t,
                              const struct rdzv_envset *env, const struct rdzv_envset *late,
                              const struct rdzv_env_ops *ops, char *err, size_t errlen);
/* 1 when this task has joined pyxis's container (pyxis listed before rdzv
 * in plugstack.conf, and the task's mount namespace is no longer
 * slurmstepd's): a path it looks at is the container's. */
int rdzv_container_joined(void);
void rdzv_container_exit(void);

#endif
