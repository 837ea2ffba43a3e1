/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/failure/: how failures travel and are judged: a failed rank's report,
 * liveness, the collective grace, hang dumps, a GPU fault's verdict. Uses
 * lib/modes/, lib/step/, lib/gpu/, lib/common/. */
/* grace.c: a step never outlives its failed collective (grace.h). */
#include "grace.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rdzv_grace_init(struct rdzv_grace *g, uint32_t ntasks)
{
	memset(g, 0, sizeof(*g));
	g->ntasks = ntasks;
	if (ntasks && !(g->seen = calloc((size_t)ntasks / 8 + 1, 1)))
		return -1;
	return 0;
}

void rdzv_grace_free(struct rdzv_grace *g)
{
	free(g->seen);
	memset(g, 0, sizeof(*g));
}

static int seen(const struct rdzv_grace *g, uint32_t r)
{
	return (g->seen[r / 8] >> (r % 8)) & 1;
}

static void mark(struct rdzv_grace *g, uint32_t r)
{
	if (r < g->ntasks && !seen(g, r)) {
		g->seen[r / 8] |= (uint8_t)(1u << (r % 8));
		g->nseen++;
	}
}

int rdzv_grace_take(struct rdzv_grace *g, const struct rdzv_hang_ask *a)
{
	int first = g->reports == 0;

	uint32_t i;

	if (!g->ntasks && a->world && a->world <= RDZV_GRACE_WORLD_MAX) {
		if (!(g->seen = calloc((size_t)a->world / 8 + 1, 1)))
			return -1;
		g->ntasks = a->world;
		for (i = 0; i < g->nearly; i++) /* those that came before it */
			mark(g, g->early[i]);
		g->nearly = 0;
	} else if (!g->ntasks && g->nearly < RDZV_GRACE_EARLY_MAX) {
		g->early[g->nearly++] = a->rank;
	}

	if (first)
		g->first = *a;
	if (g->reports < UINT32_MAX)
		g->reports++;
	mark(g, a->rank);
	return first;
}

uint32_t rdzv_grace_missing(const struct rdzv_grace *g)
{
	return g->ntasks ? g->ntasks - g->nseen : 0;
}

/* Appends to out at *at; -1 once out is full (what fits is kept). */
static int put(char *out, size_t len, size_t *at, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*at >= len)
		return -1;
	va_start(ap, fmt);
	n = vsnprintf(out + *at, len - *at, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len - *at) {
		*at = len;
		return -1;
	}
	*at += (size_t)n;
	return 0;
}

static const char *node_of(const struct rdzv_grace_nodes *nodes, uint32_t r)
{
	uint32_t t;

	if (!nodes || !nodes->rank_node || !nodes->node_names || !nodes->per_task)
		return NULL;
	t = r / nodes->per_task;
	if (t >= nodes->ntasks || nodes->rank_node[t] >= nodes->nnodes)
		return NULL;
	return nodes->node_names[nodes->rank_node[t]];
}

#define LISTED_MAX 8

int rdzv_grace_verdict(const struct rdzv_grace *g, const struct rdzv_grace_nodes *nodes,
                       uint32_t grace_s, const char *why, char *out, size_t len)
{
	uint32_t missing = rdzv_grace_missing(g), r, listed = 0, firstm;
	const char *node;
	size_t at = 0;
	int rc = 0;

	if (!len)
		return -1;
	out[0] = '\0';
	if (!g->reports)
		return -1;
	if (missing) {
		for (firstm = 0; firstm < g->ntasks && seen(g, firstm); firstm++)
			;
		node = node_of(nodes, firstm);
		if (node)
			rc |= put(out, len, &at, "rank %u (node %s)", firstm, node);
		else
			rc |= put(out, len, &at, "rank %u", firstm);
		if (missing > 1) {
			rc |= put(out, len, &at, " and %u more (rank%s", missing - 1,
			          missing > 2 ? "s" : "");
			for (r = firstm + 1; r < g->ntasks && listed < LISTED_MAX; r++) {
				if (seen(g, r))
					continue;
				rc |= put(out, len, &at, "%s %u", listed ? "," : "", r);
				listed++;
			}
			rc |= put(out, len, &at, "%s)", missing - 1 > listed ? ", ..." : "");
		}
		rc |= put(out, len, &at, " never joined the collective the other ranks left");
	} else if (g->ntasks) {
		rc |= put(out, len, &at, "every rank left its collective with an error");
	} else {
		rc |= put(out, len, &at, "a collective failed");
	}
	node = g->first.node[0] ? g->first.node : NULL;
	rc |= put(out, len, &at, " (first rank %u", g->first.rank);
	if (node)
		rc |= put(out, len, &at, " (node %s)", node);
	if (g->first.what[0])
		rc |= put(out, len, &at, ": %.160s", g->first.what);
	rc |= put(out, len, &at, "); the step was stopped %u s after that, still running (%s)",
	          grace_s, why && why[0] ? why : "collective grace");
	return rc ? -1 : 0;
}
