/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/domains/: NVLink domains: the setting, Slurm's blocks, the step's domain
 * map, the group check, a node's report. Uses lib/step/, lib/common/. */
/* domain_util.c: see domain_util.h. */
#include "config.h"
#include "domain_util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A domain name: what Slurm accepts for a block name that we can carry in
 * RDZV_STEP_DOMAINS and a variable: letters, digits, '.', '_', '-'. */
int rdzv_domain_name_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n >= RDZV_DOMAIN_NAME_MAX)
		return 0;
	for (i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
		      || c == '.' || c == '_' || c == '-'))
			return 0;
	}
	return 1;
}

/* The arrays grow to the next power of two when ndomains reaches one: a map
 * of many domains in O(domains), never a copy per domain. */
int rdzv_domains_add(struct rdzv_domains *d, const char *name, uint32_t nodes)
{
	char (*nn)[RDZV_DOMAIN_NAME_MAX];
	uint32_t *nd;
	size_t cap = d->ndomains ? (size_t)d->ndomains * 2 : 1;

	if (d->ndomains & (d->ndomains - 1)) /* not a power of two: room left */
		goto put;
	nn = realloc(d->names, cap * sizeof(*nn));
	if (!nn)
		return -1;
	d->names = nn;
	nd = realloc(d->domain_nodes, cap * sizeof(*nd));
	if (!nd)
		return -1;
	d->domain_nodes = nd;
put:
	snprintf(d->names[d->ndomains], RDZV_DOMAIN_NAME_MAX, "%s", name);
	d->domain_nodes[d->ndomains] = nodes;
	d->ndomains++;
	return 0;
}

/* Append printf output at *used; -1 when it does not fit. */

int rdzv_domain_put(char *buf, size_t len, size_t *used, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*used >= len)
		return -1;
	va_start(ap, fmt);
	n = vsnprintf(buf + *used, len - *used, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len - *used)
		return -1;
	*used += (size_t)n;
	return 0;
}
