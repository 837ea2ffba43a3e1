/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/domains/: NVLink domains: the setting, Slurm's blocks, the step's domain
 * map, the group check, a node's report. Uses lib/step/, lib/common/. */
/* domain.c: see domain.h. The setting (nvlink_domain=) and the map's
 * storage. */
#include "config.h"
#include "domain.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kinds[] = { "node", "block", "nvml" };

int rdzv_nvlink_domain_parse(const char *s, enum rdzv_nvlink_domain *out)
{
	size_t i;

	if (!s)
		return -1;
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(s, kinds[i]) == 0) {
			*out = (enum rdzv_nvlink_domain)i;
			return 0;
		}
	return -1;
}

const char *rdzv_nvlink_domain_name(enum rdzv_nvlink_domain d)
{
	return (unsigned)d < sizeof(kinds) / sizeof(kinds[0]) ? kinds[d] : "?";
}

void rdzv_domains_free(struct rdzv_domains *d)
{
	if (!d)
		return;
	free(d->node_domain);
	free(d->names);
	free(d->domain_nodes);
	memset(d, 0, sizeof(*d));
}
