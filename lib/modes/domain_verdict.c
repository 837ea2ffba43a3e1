/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/modes/: what each mode sets (torch, Megatron, launchers, frameworks,
 * containers), srun's verdict on Megatron's groups over the domains, and the
 * plugstack arguments that choose them. Uses lib/domains/, lib/step/,
 * lib/common/. */
/* domain_verdict.c: see domain_verdict.h. */
#include "config.h"
#include "domain_verdict.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* qsort has no context argument in C11: the keys, for one sort at a time
 * (srun's listener thread is the only caller in the plugin). */
static const char *const *sort_names;

static int by_name(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return strcmp(sort_names[x], sort_names[y]);
}

int rdzv_domains_from_reports(uint32_t nnodes, const char (*names)[RDZV_DOMAIN_NAME_MAX],
                              char *const *node_names, struct rdzv_domains *d, char *err,
                              size_t errlen)
{
	uint32_t *ids = calloc(nnodes ? nnodes : 1, sizeof(uint32_t)), i;
	const char **key = calloc(nnodes ? nnodes : 1, sizeof(char *));
	int rv = -1;

	memset(d, 0, sizeof(*d));
	d->nnodes = nnodes;
	if (!ids || !key || !(d->node_domain = calloc(nnodes ? nnodes : 1, sizeof(uint32_t)))
	    || !(d->names = calloc(nnodes ? nnodes : 1, sizeof(*d->names)))
	    || !(d->domain_nodes = calloc(nnodes ? nnodes : 1, sizeof(uint32_t)))) {
		rdzv_err(err, errlen, "out of memory");
		goto out;
	}
	for (i = 0; i < nnodes; i++) {
		ids[i] = i;
		key[i] = names[i][0] ? names[i] : node_names[i];
	}
	sort_names = key;
	qsort(ids, nnodes, sizeof(uint32_t), by_name);
	for (i = 0; i < nnodes; i++) {
		uint32_t n = ids[i];

		if (i == 0 || strcmp(key[n], key[ids[i - 1]]) != 0) {
			snprintf(d->names[d->ndomains], RDZV_DOMAIN_NAME_MAX, "%s%s", key[n],
			         names[n][0] ? "" : "(node)");
			d->ndomains++;
		}
		d->node_domain[n] = d->ndomains - 1;
		d->domain_nodes[d->ndomains - 1]++;
	}
	rv = 0;
out:
	free(ids);
	free(key);
	if (rv < 0)
		rdzv_domains_free(d);
	return rv;
}

int rdzv_domains_verdict(const struct rdzv_megatron_layout *l, uint32_t nnodes, uint32_t ntasks,
                         const char (*names)[RDZV_DOMAIN_NAME_MAX], const uint32_t *rank_node,
                         char *const *node_names, char *msg, size_t msglen)
{
	struct rdzv_domains d;
	struct rdzv_megatron_domains md;
	int ok;

	if (msglen)
		msg[0] = '\0';
	if (rdzv_domains_from_reports(nnodes, names, node_names, &d, msg, msglen) < 0)
		return 0;
	memset(&md, 0, sizeof(md));
	md.d = &d;
	md.rank_node = rank_node;
	md.node_names = node_names;
	md.ntasks = ntasks;
	md.source = "nvlink_domain=nvml: each node's GPU fabric clique, as the nodes "
	            "reported it";
	ok = rdzv_megatron_check_domains(l, ntasks, &md, msg, msglen) == 0;
	rdzv_domains_free(&d);
	return ok;
}
