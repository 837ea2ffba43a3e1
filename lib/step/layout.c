/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/step/: the step's plan: host lists, task layouts, node order,
 * MASTER_ADDR and the port, rank 0, heterogeneous steps, srun's command line
 * and what it hands the nodes, the interface to rank 0, the step's datagram
 * channel. Uses lib/common/. */
/* layout.c: see layout.h for the format and why these rules. */
#include "config.h"
#include "layout.h"
#include "util.h"

#include <string.h>

#define TPN_MAX_TASKS 100000000u /* per node: far above any machine */

void rdzv_tpn_begin(struct rdzv_tpn_iter *it, const char *tpn)
{
	memset(it, 0, sizeof(*it));
	it->s = tpn;
}

int rdzv_tpn_next(struct rdzv_tpn_iter *it, char *err, size_t errlen)
{
	const char *s = it->s;
	size_t n;
	uint64_t v, r = 1;

	if (!s || (!*s && it->nodes == 0))
		return rdzv_err(err, errlen, "empty tasks per node");
	if (!*s)
		return 0;
	n = strspn(s, "0123456789");
	if (rdzv_parse_u64n(s, n, 1, TPN_MAX_TASKS, &v) < 0)
		return rdzv_err(err, errlen, "bad task count in '%.32s'", s);
	s += n;
	if (s[0] == '(') {
		if (s[1] != 'x')
			return rdzv_err(err, errlen, "expected '(xN)' in '%.32s'", s);
		n = strspn(s + 2, "0123456789");
		if (rdzv_parse_u64n(s + 2, n, 1, UINT32_MAX, &r) < 0 || s[2 + n] != ')')
			return rdzv_err(err, errlen, "bad repeat count in '%.32s'", s);
		s += 3 + n;
	}
	if (*s == ',' && s[1] == '\0')
		return rdzv_err(err, errlen, "trailing ',' in tasks per node");
	if (*s == ',')
		s++;
	else if (*s != '\0')
		return rdzv_err(err, errlen, "unexpected '%c' in tasks per node", *s);
	if (it->nodes + r > UINT32_MAX)
		return rdzv_err(err, errlen, "too many nodes in tasks per node");
	it->start += (uint64_t)it->tasks * it->reps;
	it->node = (uint32_t)it->nodes;
	it->nodes += r;
	it->tasks = (uint32_t)v;
	it->reps = (uint32_t)r;
	it->s = s;
	return 1;
}

int rdzv_tpn_totals(const char *tpn, uint32_t *nodes, uint64_t *tasks,
                    char *err, size_t errlen)
{
	struct rdzv_tpn_iter it;
	int rc;

	rdzv_tpn_begin(&it, tpn);
	while ((rc = rdzv_tpn_next(&it, err, errlen)) > 0)
		;
	if (rc < 0)
		return -1;
	*nodes = (uint32_t)it.nodes;
	*tasks = it.start + (uint64_t)it.tasks * it.reps;
	return 0;
}

int rdzv_tpn_tasks_on(const char *tpn, uint32_t node, uint32_t *tasks,
                      char *err, size_t errlen)
{
	struct rdzv_tpn_iter it;
	uint32_t nodes;
	uint64_t total;

	/* Validate the whole string first: a half-good string is an error. */
	if (rdzv_tpn_totals(tpn, &nodes, &total, err, errlen) < 0)
		return -1;
	if (node >= nodes)
		return rdzv_err(err, errlen, "node %u past the %u nodes in '%.32s'",
		                node, nodes, tpn);
	rdzv_tpn_begin(&it, tpn);
	while (rdzv_tpn_next(&it, err, errlen) > 0)
		if (node < it.nodes) {
			*tasks = it.tasks;
			return 0;
		}
	return rdzv_err(err, errlen, "node past the end of tasks per node");
}

int rdzv_tpn_expand(const char *tpn, uint32_t *tasks, uint32_t n, char *err, size_t errlen)
{
	struct rdzv_tpn_iter it;
	uint32_t nodes, i;
	uint64_t total;

	if (rdzv_tpn_totals(tpn, &nodes, &total, err, errlen) < 0)
		return -1;
	if (nodes != n)
		return rdzv_err(err, errlen, "'%.32s' describes %u nodes, not %u", tpn, nodes, n);
	rdzv_tpn_begin(&it, tpn);
	while (rdzv_tpn_next(&it, err, errlen) > 0)
		for (i = 0; i < it.reps; i++)
			tasks[it.node + i] = it.tasks;
	return 0;
}
