/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/domains/: NVLink domains: the setting, Slurm's blocks, the step's domain
 * map, the group check, a node's report. Uses lib/step/, lib/common/. */
/* domain_groups.c: whether Megatron's groups stay inside one NVLink
 * domain (domain.h, rdzv_domain_check_groups). */
#include "config.h"
#include "domain.h"
#include "domain_util.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "0-3" or "0, 2, 4, 6" (at most 6 listed) of the members of a group in
 * domain dm. */
static void ranks_in(const struct rdzv_domains *d, const uint32_t *rank_node, uint64_t start,
                     uint64_t stride, uint64_t n, uint32_t dm, char *buf, size_t len)
{
	size_t used = 0;
	uint64_t k, listed = 0, lo = UINT64_MAX, prev = 0;

	buf[0] = '\0';
	for (k = 0; k < n; k++) {
		uint64_t r = start + k * stride;

		if (d->node_domain[rank_node[r]] != dm)
			continue;
		if (stride == 1) { /* one run per domain in practice: print ranges */
			if (lo == UINT64_MAX)
				lo = r;
			else if (r != prev + 1) {
				rdzv_domain_put(buf, len, &used, "%s%llu-%llu", used ? ", " : "",
				    (unsigned long long)lo, (unsigned long long)prev);
				lo = r;
			}
			prev = r;
			continue;
		}
		if (listed++ == 6) {
			rdzv_domain_put(buf, len, &used, ", ...");
			break;
		}
		rdzv_domain_put(buf, len, &used, "%s%llu", used ? ", " : "", (unsigned long long)r);
	}
	if (stride == 1 && lo != UINT64_MAX)
		rdzv_domain_put(buf, len, &used, lo == prev ? "%s%llu" : "%s%llu-%llu", used ? ", " : "",
		    (unsigned long long)lo, (unsigned long long)prev);
}

/* The distinct nodes (at most 4 named) of a group's members in domain dm. */
static void nodes_in(const struct rdzv_domains *d, const uint32_t *rank_node,
                     char *const *node_names, uint64_t start, uint64_t stride, uint64_t n,
                     uint32_t dm, char *buf, size_t len)
{
	size_t used = 0;
	uint32_t seen[4], nseen = 0, i;
	uint64_t k;
	int more = 0;

	buf[0] = '\0';
	for (k = 0; k < n; k++) {
		uint32_t node = rank_node[start + k * stride];

		if (d->node_domain[node] != dm)
			continue;
		for (i = 0; i < nseen && seen[i] != node; i++)
			;
		if (i < nseen)
			continue;
		if (nseen == 4) {
			more = 1;
			continue;
		}
		seen[nseen++] = node;
		rdzv_domain_put(buf, len, &used, "%s%s", used ? ", " : "",
		    node_names && node_names[node] ? node_names[node] : "?");
	}
	if (more)
		rdzv_domain_put(buf, len, &used, ", ...");
}

int rdzv_domain_check_groups(const struct rdzv_domains *d, uint32_t ntasks,
                             const uint32_t *rank_node, char *const *node_names,
                             uint64_t stride, uint64_t n, const char *what, char *err,
                             size_t errlen)
{
	uint64_t r, k, span = stride * n;

	if (n <= 1 || stride == 0)
		return 0;
	for (r = 0; r < ntasks; r++) {
		uint32_t dm, seen[3], nseen = 0, i;
		int more = 0;
		char msg[1024], ranks[256], nodes[256];
		size_t used = 0;

		if ((r / stride) % n != 0)
			continue; /* not the first rank of its group */
		if (r - (r % span) + span > ntasks)
			return rdzv_err(err, errlen, "%s: the step's %u ranks do not divide into groups "
			                "of %llu", what, ntasks, (unsigned long long)n);
		dm = d->node_domain[rank_node[r]];
		for (k = 1; k < n; k++)
			if (d->node_domain[rank_node[r + k * stride]] != dm)
				break;
		if (k == n)
			continue;
		/* The domains the group touches, in the order its ranks meet them. */
		for (k = 0; k < n && !more; k++) {
			uint32_t x = d->node_domain[rank_node[r + k * stride]];

			for (i = 0; i < nseen && seen[i] != x; i++)
				;
			if (i < nseen)
				continue;
			if (nseen == 3)
				more = 1;
			else
				seen[nseen++] = x;
		}
		msg[0] = '\0';
		for (i = 0; i < nseen; i++) {
			ranks_in(d, rank_node, r, stride, n, seen[i], ranks, sizeof(ranks));
			nodes_in(d, rank_node, node_names, r, stride, n, seen[i], nodes, sizeof(nodes));
			rdzv_domain_put(msg, sizeof(msg), &used, "%s%s (ranks %s on %s)",
			    i == 0 ? "" : i + 1 == nseen && !more ? " and " : ", ", d->names[seen[i]], ranks,
			    nodes);
		}
		return rdzv_err(err, errlen, "%s: the group of ranks %llu%s%llu would span NVLink "
		                "domains %s%s", what, (unsigned long long)r,
		                stride == 1 ? "-" : "..", (unsigned long long)(r + (n - 1) * stride),
		                msg, more ? " and more" : "");
	}
	return 0;
}
