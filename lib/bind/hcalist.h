/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/bind/: the node's topology, each task's GPU, NICs and cores, the node
 * check and its GPU gate. Uses lib/modes/, lib/step/, lib/gpu/, lib/common/. */
/* hcalist.h: NCCL_IB_HCA lists, read and matched as NCCL reads them.
 *
 * Syntax (NCCL environment-variable documentation, NCCL_IB_HCA):
 *   [^][=]name[:port][,name[:port]...]
 *   ^      the list names devices NOT to use;
 *   =      names match exactly; without it each name is a prefix
 *          ("mlx5" matches mlx5_0, mlx5_1, ...);
 *   :port  only that port of the device; without it, every port.
 * Used for a profile's allow-list (its hca directive) that binding
 * intersects with the NICs it picks. NCCL's own reader skips what it cannot
 * read; this one refuses it with the item named, because an admin's typo
 * would otherwise silently allow or forbid every NIC. */
#ifndef RDZV_HCALIST_H
#define RDZV_HCALIST_H

#include <stddef.h>

#define RDZV_HCA_NAME_MAX 64

struct rdzv_hca_entry {
	char name[RDZV_HCA_NAME_MAX];
	int port;               /* -1: any port */
};

struct rdzv_hca_list {
	int exclude;            /* leading '^' */
	int exact;              /* leading '=' (after '^') */
	size_t n;
	struct rdzv_hca_entry *v;
};

/* Parse s. Returns 0 with *out set (free with rdzv_hca_list_destroy), or -1
 * with a reason in err: empty list or item, a name with characters other
 * than [A-Za-z0-9_.-], a name too long, a port not in 1..255. */
int rdzv_hca_list_parse(const char *s, struct rdzv_hca_list **out, char *err, size_t errlen);

void rdzv_hca_list_destroy(struct rdzv_hca_list *l); /* accepts NULL */

/* 1 when NCCL, given this list, would use port `port` of device `dev`;
 * else 0. A NULL list allows everything. */
int rdzv_hca_list_allows(const struct rdzv_hca_list *l, const char *dev, int port);

#endif
