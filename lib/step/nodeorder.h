/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/step/: the step's plan: host lists, task layouts, node order,
 * MASTER_ADDR and the port, rank 0, heterogeneous steps, srun's command line
 * and what it hands the nodes, the interface to rank 0, the step's datagram
 * channel. Uses lib/common/. */
/* nodeorder.h: where rank 0 runs and in which order a step's nodes hold the
 * ranks, from the step's real layout (Slurm's slurm_step_layout_t, asked of
 * slurmctld once per step by srun).
 *
 * Slurm numbers a step's nodes (SLURM_NODEID) in the order of the step's node
 * list, and until 26.05 laid the tasks in that order too, so node 0 held task
 * 0. From 26.05 on, with a topology plugin (topology/tree, topology/block),
 * tasks follow topology order while node ids stay in list order: task 0 can
 * run on any node, and node ids no longer follow the ranks. The order here is
 * the one torchrun's ranks follow: node A comes before node B when A's lowest
 * task id is lower. */
#ifndef RDZV_NODEORDER_H
#define RDZV_NODEORDER_H

#include <stddef.h>
#include <stdint.h>

/* The most nodes a step may have for its node order and domain map (the
 * texts are sized from the step's nodes, with no other limit): Slurm's own
 * bound, 65,536 hosts (its hostlist refuses a range of more, MAX_RANGE in
 * src/common/hostlist.c), never met by a real step. Larger is refused from
 * the count alone, before any host is expanded: a hostile environment or a
 * fuzzed list of 1.6 million hosts took 5 s to walk (issue 48). */
#define RDZV_STEP_NODES_MAX 65536u

/* The longest order text a step of nnodes nodes can have (each node id
 * once, a separator after each), with its NUL. */
size_t rdzv_order_text_max(uint32_t nnodes);

/* From a layout: node_cnt nodes, tasks[i] task ids in tids[i] (node i in the
 * step's node list order). Sets *master_node to the node holding task 0 and
 * *order to a string (malloc'd, the caller frees it) of the node ids in rank
 * order as ranges ("2-3,0-1"), or "" when that is the node list order
 * itself: any order of any step up to RDZV_STEP_NODES_MAX nodes, never
 * refused for its length. Refuses a layout where a node has no task, a task
 * id repeats or is out of range, or task 0 is missing. O(nodes + tasks)
 * time. Returns 0, or -1 with the reason and *order NULL. */
int rdzv_order_from_layout(uint32_t node_cnt, uint32_t task_cnt, const uint16_t *tasks,
                           uint32_t *const *tids, uint32_t *master_node, char **order,
                           char *err, size_t errlen);

/* Position (0-based, in rank order) of node node_id in a step of nnodes nodes,
 * from an order text of rdzv_order_from_layout ("" is the identity). Checks
 * that the text is a permutation of 0..nnodes-1 (each id once, in range;
 * nnodes at most RDZV_STEP_NODES_MAX). O(nodes + text), any length.
 * Returns 0 or -1 with the reason. */
int rdzv_order_position(const char *order, uint32_t nnodes, uint32_t node_id,
                        uint32_t *position, char *err, size_t errlen);

/* Every node's place at once: pos[node id] = its place in rank order
 * (pos has nnodes entries), with the checks of rdzv_order_position. O(nodes
 * + text). Returns 0 or -1 with the reason. */
int rdzv_order_positions(const char *order, uint32_t nnodes, uint32_t *pos, char *err,
                         size_t errlen);

#endif
