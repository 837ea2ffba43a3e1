/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/step/: the step's plan: host lists, task layouts, node order,
 * MASTER_ADDR and the port, rank 0, heterogeneous steps, srun's command line
 * and what it hands the nodes, the interface to rank 0, the step's datagram
 * channel. Uses lib/common/. */
/* layout.h: Slurm's compressed tasks-per-node strings ("2(x3),1") and the
 * step facts derived from them. Linear in the string, no expansion.
 *
 * Slurm writes SLURM_STEP_TASKS_PER_NODE and SLURM_TASKS_PER_NODE with
 * uint16_array_to_str (src/common/env.c; srun_job.c has a copy): each node's
 * task count in decimal, a run of equal counts as "N(xM)", joined by ','
 * with none after the last. Its step layouts put at least one task on every
 * node of a step (srun lowers the node count rather than leave a node
 * empty), so a count of 0 is refused here, as is anything Slurm cannot
 * write: "(" without "x", a run without ')', an empty element, a stray
 * comma, a sign or a space. Accepted beyond what Slurm writes, because it
 * says the same thing: "(x1)", leading zeros, and counts above uint16_t up
 * to TPN_MAX_TASKS. */
#ifndef RDZV_LAYOUT_H
#define RDZV_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

/* One pass over the string, run by run. */
struct rdzv_tpn_iter {
	const char *s;   /* the next run's text */
	uint32_t tasks;  /* the current run: tasks on each of its nodes */
	uint32_t reps;   /* its nodes */
	uint32_t node;   /* index of its first node */
	uint64_t start;  /* the rank of its first task (tasks before the run) */
	uint64_t nodes;  /* nodes up to the run's end */
};

/* Start at tpn (NULL is refused by the first rdzv_tpn_next). */
void rdzv_tpn_begin(struct rdzv_tpn_iter *it, const char *tpn);

/* The next run into it->tasks, reps, node and start. Returns 1 (a run), 0
 * (the end) or -1 with a reason (malformed; empty; past 2^32-1 nodes). */
int rdzv_tpn_next(struct rdzv_tpn_iter *it, char *err, size_t errlen);

/* Nodes and tasks the string describes. Returns 0 or -1 with a reason. */
int rdzv_tpn_totals(const char *tpn, uint32_t *nodes, uint64_t *tasks,
                    char *err, size_t errlen);

/* Tasks on node `node` (0-based). Returns 0 or -1 (malformed, out of range). */
int rdzv_tpn_tasks_on(const char *tpn, uint32_t node, uint32_t *tasks,
                      char *err, size_t errlen);

/* Tasks on each of the n nodes, into tasks[n], in one pass. Returns 0, or
 * -1 when malformed or the string describes another number of nodes. */
int rdzv_tpn_expand(const char *tpn, uint32_t *tasks, uint32_t n, char *err, size_t errlen);

#endif
