/* SPDX-License-Identifier: GPL-2.0-or-later */
/* modefix.h: the fixtures of the mode tests (tests/unit/test-frameworks.c,
 * tests/unit/test-modes-ext.c): a step as the nodes see it, one task's
 * variables from a mode's fill (and fill_late, which runs after binding
 * with the task's final visible GPU count), and one variable's value.
 * Include after tap.h, modes.h and util.h. */
#ifndef RDZV_MODEFIX_H
#define RDZV_MODEFIX_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "modes.h"

/* A step of ntasks on nnodes, seen from node (local tasks there), whose
 * rank 0 is on n1. */
static inline struct rdzv_step modefix_step(uint32_t job, uint32_t stepid, uint16_t port,
                                            uint32_t ntasks, uint32_t nnodes, uint32_t node,
                                            uint32_t local)
{
	struct rdzv_step s;

	memset(&s, 0, sizeof(s));
	s.job_id = job;
	s.step_id = stepid;
	s.ntasks = ntasks;
	s.nnodes = nnodes;
	s.node_id = s.node_rank = node;
	s.local_ntasks = local;
	s.port = port;
	s.gpus_on_node = -1;
	snprintf(s.master_host, sizeof(s.master_host), "n1");
	snprintf(s.master_addr, sizeof(s.master_addr), "n1");
	return s;
}

/* The variables mode gives task rank (local_rank on its node) that sees
 * visible GPUs (-1: none set). NULL, with a diagnostic, when it fails. */
static inline struct rdzv_envset *fill(const char *mode, const struct rdzv_step *s,
                                       uint32_t rank, uint32_t local_rank, int visible)
{
	const struct rdzv_mode *m = rdzv_mode_find(mode);
	struct rdzv_task t = { rank, local_rank, visible };
	struct rdzv_envset *env = rdzv_envset_create();
	char err[256];

	if (!m || !env || m->fill(s, &t, env, err, sizeof(err)) < 0
	    || (m->fill_late && m->fill_late(s, &t, env, err, sizeof(err)) < 0)) {
		diag("fill %s failed: %s", mode, m ? err : "no such mode");
		rdzv_envset_destroy(env);
		return NULL;
	}
	return env;
}

static inline const char *val(const struct rdzv_envset *env, const char *name)
{
	const struct rdzv_env_entry *e = env ? rdzv_envset_find(env, name) : NULL;

	return e ? e->value : NULL;
}

#endif
