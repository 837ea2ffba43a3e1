/* SPDX-License-Identifier: GPL-2.0-or-later */
/* recfix.h: the record's fixtures, for its tests (tests/unit/test-record.c,
 * tests/unit/test-stability.c): a node of a step, and a task's variables
 * with every outcome a record writes (set, enforced over the user's value,
 * the user's value kept, removed); the kept value holds a quote, so that
 * the record's escaping is met; a failed step as the metrics count it. */
#ifndef RDZV_RECFIX_H
#define RDZV_RECFIX_H

#include <stdlib.h>
#include <string.h>

#include "envset.h"
#include "metrics.h"
#include "record.h"

/* Node n2 of job 12's step 3 (6 torch tasks on 3 nodes, 2 here, rank 0 on
 * n1, profile h100) with these exits; no task's part yet. */
static inline void recfix_node(struct rdzv_record_node *n, const struct rdzv_record_exit *exits,
                               size_t nexits)
{
	memset(n, 0, sizeof(*n));
	n->job = 12;
	n->step = 3;
	n->node = "n2";
	n->nnodes = 3;
	n->ntasks = 6;
	n->local_ntasks = 2;
	n->mode = "torch";
	n->rank0_host = "n1";
	n->port = 31519;
	n->profile = "h100";
	n->profile_hash = 0xabcdef;
	n->exits = exits;
	n->nexits = nexits;
}

static inline struct rdzv_envset *recfix_task_env(void)
{
	struct rdzv_envset *e = rdzv_envset_create();
	char err[128];

	rdzv_envset_add(e, "RANK", "3", RDZV_SET_ENFORCE, "rdzv", err, sizeof(err));
	rdzv_envset_add(e, "NCCL_IB_HCA", "=mlx5_0:1", RDZV_SET_ENFORCE, "profile h100", err,
	                sizeof(err));
	rdzv_envset_add(e, "MASTER_PORT", "29500", RDZV_SET_DEFAULT, "rdzv", err, sizeof(err));
	rdzv_envset_add(e, "NCCL_DEBUG", NULL, RDZV_SET_UNSET, "profile h100", err, sizeof(err));
	e->v[0].outcome = RDZV_OUT_SET;
	e->v[1].outcome = RDZV_OUT_ENFORCED;
	e->v[1].user_value = strdup("mlx5_9");
	e->v[2].outcome = RDZV_OUT_USER_KEPT;
	e->v[2].user_value = strdup("1234\"x");
	e->v[3].outcome = RDZV_OUT_UNSET;
	return e;
}

/* A torch step that failed by a task's exit under profile (hash 0x1234). */
static inline void recfix_failed_step(struct rdzv_metrics_step *st, const char *profile)
{
	memset(st, 0, sizeof(*st));
	st->mode = "torch";
	st->cause = "exit";
	st->profile = profile;
	st->profile_hash = 0x1234;
	st->end = 1765000000;
}

#endif
