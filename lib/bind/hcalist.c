/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/bind/: the node's topology, each task's GPU, NICs and cores, the node
 * check and its GPU gate. Uses lib/modes/, lib/step/, lib/gpu/, lib/common/. */
#include "config.h"
#include "hcalist.h"
#include "util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
	       || c == '_' || c == '-' || c == '.';
}

/* One item "name[:port]" of n bytes at s. */
static int parse_item(const char *s, size_t n, struct rdzv_hca_entry *e, char *err, size_t errlen)
{
	const char *colon = memchr(s, ':', n);
	size_t namelen = colon ? (size_t)(colon - s) : n;
	uint64_t port;
	size_t i;

	if (namelen == 0)
		return rdzv_err(err, errlen, "empty device name in '%.*s'", (int)n, s);
	if (namelen >= sizeof(e->name))
		return rdzv_err(err, errlen, "device name '%.*s' is too long", (int)namelen, s);
	for (i = 0; i < namelen; i++)
		if (!name_char(s[i]))
			return rdzv_err(err, errlen, "bad character '%c' in device name '%.*s'", s[i],
			                (int)namelen, s);
	memcpy(e->name, s, namelen);
	e->name[namelen] = '\0';
	e->port = -1;
	if (colon) {
		size_t plen = n - namelen - 1;

		if (rdzv_parse_u64n(colon + 1, plen, 1, 255, &port) < 0)
			return rdzv_err(err, errlen, "bad port '%.*s' for device %s (1-255)", (int)plen,
			                colon + 1, e->name);
		e->port = (int)port;
	}
	return 0;
}

int rdzv_hca_list_parse(const char *s, struct rdzv_hca_list **out, char *err, size_t errlen)
{
	struct rdzv_hca_list *l = NULL;
	const char *p;
	size_t cap = 1;
	int rv = -1;

	*out = NULL;
	if (!s)
		return rdzv_err(err, errlen, "no NCCL_IB_HCA list");
	if (!(l = calloc(1, sizeof(*l))))
		return rdzv_err(err, errlen, "out of memory");
	if (*s == '^') {
		l->exclude = 1;
		s++;
	}
	if (*s == '=') {
		l->exact = 1;
		s++;
	}
	if (!*s) {
		rdzv_err(err, errlen, "empty NCCL_IB_HCA list");
		goto fail;
	}
	for (p = s; *p; p++)
		cap += *p == ',';
	if (!(l->v = calloc(cap, sizeof(*l->v)))) {
		rdzv_err(err, errlen, "out of memory");
		goto fail;
	}
	for (p = s;;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		if (parse_item(p, n, &l->v[l->n], err, errlen) < 0)
			goto fail;
		l->n++;
		if (!end)
			break;
		p = end + 1;
	}
	*out = l;
	l = NULL;
	rv = 0;
fail:
	rdzv_hca_list_destroy(l);
	return rv;
}

void rdzv_hca_list_destroy(struct rdzv_hca_list *l)
{
	if (!l)
		return;
	free(l->v);
	free(l);
}

int rdzv_hca_list_allows(const struct rdzv_hca_list *l, const char *dev, int port)
{
	size_t i;
	int listed = 0;

	if (!l)
		return 1;
	for (i = 0; i < l->n && !listed; i++) {
		const struct rdzv_hca_entry *e = &l->v[i];
		int name_ok = l->exact ? strcmp(dev, e->name) == 0
		                       : strncmp(dev, e->name, strlen(e->name)) == 0;

		/* NCCL: an item without a port matches every port. */
		listed = name_ok && (e->port < 0 || e->port == port);
	}
	return l->exclude ? !listed : listed;
}
