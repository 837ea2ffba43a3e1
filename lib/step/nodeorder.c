/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/step/: the step's plan: host lists, task layouts, node order,
 * MASTER_ADDR and the port, rank 0, heterogeneous steps, srun's command line
 * and what it hands the nodes, the interface to rank 0, the step's datagram
 * channel. Uses lib/common/. */
#include "config.h"
#include "nodeorder.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned digits(uint32_t v)
{
	unsigned n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

size_t rdzv_order_text_max(uint32_t nnodes)
{
	return (size_t)nnodes * (digits(nnodes ? nnodes - 1 : 0) + 1) + 1;
}

static void put_u32(char *out, size_t *at, uint32_t v)
{
	*at += rdzv_put_u32(out + *at, v);
}

/* Append "a" or "a-b" (with a leading comma unless first) to out, which
 * rdzv_order_text_max sized: a range of k ids takes at most k ids' room. */
static void put_range(char *out, size_t *at, uint32_t a, uint32_t b)
{
	if (*at)
		out[(*at)++] = ',';
	put_u32(out, at, a);
	if (a != b) {
		out[(*at)++] = '-';
		put_u32(out, at, b);
	}
	out[*at] = '\0';
}

/* The text of the nodes in rank order: node_at[t] holds task t; a node's
 * place is where its lowest task id comes. O(nodes + tasks). */
static char *order_text(uint32_t node_cnt, uint32_t task_cnt, const uint32_t *node_at)
{
	unsigned char *placed = calloc(node_cnt, 1);
	char *text = malloc(rdzv_order_text_max(node_cnt)), *fit;
	uint32_t t, next = 0, start = 0, prev = 0;
	size_t at = 0;
	int identity = 1, run = 0;

	if (!placed || !text) {
		free(placed);
		free(text);
		return NULL;
	}
	text[0] = '\0';
	for (t = 0; t < task_cnt; t++) {
		uint32_t n = node_at[t];

		if (placed[n])
			continue;
		placed[n] = 1;
		identity = identity && n == next++;
		if (run && n == prev + 1) {
			prev = n;
			continue;
		}
		if (run)
			put_range(text, &at, start, prev);
		start = prev = n;
		run = 1;
	}
	put_range(text, &at, start, prev);
	free(placed);
	if (identity)
		text[0] = '\0';
	fit = realloc(text, identity ? 1 : at + 1);
	return fit ? fit : text;
}

int rdzv_order_from_layout(uint32_t node_cnt, uint32_t task_cnt, const uint16_t *tasks,
                           uint32_t *const *tids, uint32_t *master_node, char **order,
                           char *err, size_t errlen)
{
	uint32_t *node_at = NULL, i, j;
	uint64_t sum = 0;
	int rv = -1;

	if (!order)
		return rdzv_err(err, errlen, "no room for the node order");
	*order = NULL;
	if (node_cnt == 0 || task_cnt == 0 || !tasks || !tids)
		return rdzv_err(err, errlen, "the step layout is empty (%u nodes, %u tasks)",
		                node_cnt, task_cnt);
	if (node_cnt > RDZV_STEP_NODES_MAX)
		return rdzv_err(err, errlen, "a step of %u nodes: the node order's limit "
		                "(RDZV_STEP_NODES_MAX) is %u nodes", node_cnt, RDZV_STEP_NODES_MAX);
	for (i = 0; i < node_cnt; i++) {
		if (tasks[i] == 0 || !tids[i])
			return rdzv_err(err, errlen, "node %u of the step layout has no task", i);
		sum += tasks[i];
	}
	if (sum != task_cnt)
		return rdzv_err(err, errlen, "the step layout holds %llu task ids for %u tasks",
		                (unsigned long long)sum, task_cnt);
	if (!(node_at = malloc((size_t)task_cnt * sizeof(uint32_t)))) {
		rdzv_err(err, errlen, "out of memory for a layout of %u nodes", node_cnt);
		goto out;
	}
	for (i = 0; i < task_cnt; i++)
		node_at[i] = UINT32_MAX;
	for (i = 0; i < node_cnt; i++) {
		for (j = 0; j < tasks[i]; j++) {
			uint32_t t = tids[i][j];

			if (t >= task_cnt || node_at[t] != UINT32_MAX) {
				rdzv_err(err, errlen, "task id %u on node %u of the step layout is %s",
				         t, i, t >= task_cnt ? "out of range" : "repeated");
				goto out;
			}
			node_at[t] = i;
		}
	}
	/* task_cnt ids, each once, all below task_cnt: task 0 is there */
	*master_node = node_at[0];
	if (!(*order = order_text(node_cnt, task_cnt, node_at))) {
		rdzv_err(err, errlen, "out of memory for the order of %u nodes", node_cnt);
		goto out;
	}
	rv = 0;
out:
	free(node_at);
	return rv;
}

int rdzv_order_positions(const char *order, uint32_t nnodes, uint32_t *pos, char *err,
                         size_t errlen)
{
	const char *p = order;
	uint32_t a, b, v, at = 0;

	if (!order)
		return rdzv_err(err, errlen, "no node order");
	if (nnodes > RDZV_STEP_NODES_MAX)
		return rdzv_err(err, errlen, "a step of %u nodes: the node order's limit "
		                "(RDZV_STEP_NODES_MAX) is %u nodes", nnodes, RDZV_STEP_NODES_MAX);
	if (!*order) {
		for (v = 0; v < nnodes; v++)
			pos[v] = v;
		return 0;
	}
	for (v = 0; v < nnodes; v++)
		pos[v] = UINT32_MAX;
	for (;;) {
		if (rdzv_read_range(&p, UINT32_MAX, &a, &b) < 0)
			goto bad;
		if (b >= nnodes)
			return rdzv_err(err, errlen, "node order '%.64s' names node %u of a %u-node step",
			                order, b, nnodes);
		for (v = a;; v++) {
			if (pos[v] != UINT32_MAX)
				return rdzv_err(err, errlen, "node order '%.64s' names node %u twice",
				                order, v);
			pos[v] = at++;
			if (v == b)
				break;
		}
		if (*p == '\0')
			break;
		if (*p != ',')
			goto bad;
		p++;
	}
	if (at != nnodes)
		return rdzv_err(err, errlen, "node order '%.64s' names %u of the step's %u nodes",
		                order, at, nnodes);
	return 0;
bad:
	return rdzv_err(err, errlen, "node order '%.64s' is malformed (expected ranges like "
	                "2-3,0-1)", order);
}

int rdzv_order_position(const char *order, uint32_t nnodes, uint32_t node_id,
                        uint32_t *position, char *err, size_t errlen)
{
	uint32_t *pos;
	int rv;

	if (!order)
		return rdzv_err(err, errlen, "no node order");
	if (nnodes == 0 || node_id >= nnodes)
		return rdzv_err(err, errlen, "node %u is not one of the step's %u nodes", node_id,
		                nnodes);
	if (nnodes > RDZV_STEP_NODES_MAX)
		return rdzv_err(err, errlen, "a step of %u nodes: the node order's limit "
		                "(RDZV_STEP_NODES_MAX) is %u nodes", nnodes, RDZV_STEP_NODES_MAX);
	if (!*order) {
		*position = node_id;
		return 0;
	}
	if (!(pos = malloc((size_t)nnodes * sizeof(uint32_t))))
		return rdzv_err(err, errlen, "out of memory for %u nodes", nnodes);
	rv = rdzv_order_positions(order, nnodes, pos, err, errlen);
	if (rv == 0)
		*position = pos[node_id];
	free(pos);
	return rv;
}
