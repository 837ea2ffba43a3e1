/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/domains/: NVLink domains: the setting, Slurm's blocks, the step's domain
 * map, the group check, a node's report. Uses lib/step/, lib/common/. */
/* domain_map.c: RDZV_STEP_DOMAINS, the step's map as srun hands it to
 * the nodes, and a node's place in its domain (domain.h). */
#include "config.h"
#include "domain.h"
#include "domain_util.h"
#include "layout.h"
#include "nodeorder.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* rdzv_domain_put's two cheap cases, for the many node ids of a map. */
static int put_char(char *buf, size_t len, size_t *used, char c)
{
	if (*used + 1 >= len)
		return -1;
	buf[(*used)++] = c;
	buf[*used] = '\0';
	return 0;
}

static int put_u32(char *buf, size_t len, size_t *used, uint32_t v)
{
	char tmp[10];
	size_t n = rdzv_put_u32(tmp, v);

	if (*used + n >= len)
		return -1;
	memcpy(buf + *used, tmp, n);
	*used += n;
	buf[*used] = '\0';
	return 0;
}

/* The longest text d can take: "JOB.STEP:", each domain's "NAME=" and ';',
 * each node's id and a separator, the NUL. */
static size_t text_max(const struct rdzv_domains *d)
{
	size_t digits = 1, n;

	for (n = d->nnodes; n >= 10; n /= 10)
		digits++;
	return 32 + (size_t)d->ndomains * (RDZV_DOMAIN_NAME_MAX + 1)
	       + (size_t)d->nnodes * (digits + 1);
}

int rdzv_domains_text(uint32_t job_id, uint32_t step_id, const struct rdzv_domains *d,
                      char **text, char *err, size_t errlen)
{
	size_t len = text_max(d);

	if (!(*text = malloc(len)))
		return rdzv_err(err, errlen, "out of memory for the domain map of %u nodes",
		                d->nnodes);
	if (rdzv_domains_format(job_id, step_id, d, *text, len) < 0) {
		free(*text);
		*text = NULL;
		return rdzv_err(err, errlen, "out of memory for the domain map of %u nodes",
		                d->nnodes);
	}
	return 0;
}

int rdzv_domains_format(uint32_t job_id, uint32_t step_id, const struct rdzv_domains *d,
                        char *buf, size_t len)
{
	size_t used = 0;
	uint32_t k, i, *start = NULL, *ids = NULL, *fill = NULL;
	int rv = -1;

	if (rdzv_domain_put(buf, len, &used, "%u.%u:", job_id, step_id) < 0)
		return -1;
	/* The nodes of each domain in id order (a counting sort): the text in
	 * O(nodes + domains), never nodes times domains. */
	if (!(start = calloc((size_t)d->ndomains + 1, sizeof(uint32_t)))
	    || !(fill = calloc((size_t)d->ndomains + 1, sizeof(uint32_t)))
	    || !(ids = calloc(d->nnodes ? d->nnodes : 1, sizeof(uint32_t))))
		goto out;
	for (i = 0; i < d->nnodes; i++)
		start[d->node_domain[i] + 1]++;
	for (k = 0; k < d->ndomains; k++)
		start[k + 1] += start[k];
	for (i = 0; i < d->nnodes; i++) {
		k = d->node_domain[i];
		ids[start[k] + fill[k]++] = i;
	}
	for (k = 0; k < d->ndomains; k++) {
		uint32_t a = start[k], z = start[k + 1];

		if (rdzv_domain_put(buf, len, &used, "%s%s=", k ? ";" : "", d->names[k]) < 0)
			goto out;
		while (a < z) {
			uint32_t e = a;

			while (e + 1 < z && ids[e + 1] == ids[e] + 1)
				e++;
			if ((a > start[k] && put_char(buf, len, &used, ',') < 0)
			    || put_u32(buf, len, &used, ids[a]) < 0
			    || (e > a && (put_char(buf, len, &used, '-') < 0
			                  || put_u32(buf, len, &used, ids[e]) < 0)))
				goto out;
			a = e + 1;
		}
	}
	rv = 0;
out:
	free(start);
	free(fill);
	free(ids);
	return rv;
}

int rdzv_domains_parse(const char *s, uint32_t nnodes, uint32_t *job_id, uint32_t *step_id,
                       struct rdzv_domains *d, char *err, size_t errlen)
{
	const char *p = s;
	unsigned char *seen = NULL;
	uint32_t covered = 0;

	memset(d, 0, sizeof(*d));
	if (!s)
		return rdzv_err(err, errlen, "%s is missing", RDZV_STEP_DOMAINS_VAR);
	if (rdzv_read_u32(&p, ID_MAX, job_id) < 0 || *p++ != '.'
	    || rdzv_read_u32(&p, ID_MAX, step_id) < 0 || *p++ != ':')
		return rdzv_err(err, errlen, "%s '%.64s': no JOB.STEP: at its start",
		                RDZV_STEP_DOMAINS_VAR, s);
	if (nnodes == 0 || nnodes > RDZV_DOMAIN_NODES_MAX)
		return rdzv_err(err, errlen, "%s for a step of %u nodes: the domain map's limit "
		                "(RDZV_DOMAIN_NODES_MAX) is 1 to %u nodes", RDZV_STEP_DOMAINS_VAR,
		                nnodes, RDZV_DOMAIN_NODES_MAX);
	if (!(seen = calloc(nnodes, 1)) || !(d->node_domain = calloc(nnodes, sizeof(uint32_t))))
		goto oom;
	d->nnodes = nnodes;
	while (*p) {
		size_t n = strcspn(p, "=;");
		char name[RDZV_DOMAIN_NAME_MAX];

		if (p[n] != '=' || !rdzv_domain_name_ok(p, n))
			goto bad;
		memcpy(name, p, n);
		name[n] = '\0';
		if (rdzv_domains_add(d, name, 0) < 0)
			goto oom;
		p += n + 1;
		for (;;) {
			uint32_t a, b, v;

			if (rdzv_read_range(&p, ID_MAX, &a, &b) < 0)
				goto bad;
			if (b >= nnodes) {
				rdzv_err(err, errlen, "%s names node %u of a %u-node step",
				         RDZV_STEP_DOMAINS_VAR, b, nnodes);
				goto fail;
			}
			for (v = a;; v++) {
				if (seen[v]) {
					rdzv_err(err, errlen, "%s puts node %u in two domains",
					         RDZV_STEP_DOMAINS_VAR, v);
					goto fail;
				}
				seen[v] = 1;
				d->node_domain[v] = d->ndomains - 1;
				covered++;
				if (v == b)
					break;
			}
			if (*p != ',')
				break;
			p++;
		}
		if (*p == ';' && p[1])
			p++;
		else if (*p)
			goto bad;
	}
	if (covered != nnodes) {
		rdzv_err(err, errlen, "%s leaves %u of the step's %u nodes in no domain",
		         RDZV_STEP_DOMAINS_VAR, nnodes - covered, nnodes);
		goto fail;
	}
	free(seen);
	return 0;
bad:
	rdzv_err(err, errlen, "%s '%.64s' is malformed near '%.16s'", RDZV_STEP_DOMAINS_VAR, s, p);
	goto fail;
oom:
	rdzv_err(err, errlen, "out of memory");
fail:
	free(seen);
	rdzv_domains_free(d);
	return -1;
}

int rdzv_domain_place(const struct rdzv_domains *d, uint32_t node_id, const char *order,
                      const char *tpn, uint32_t *size, uint32_t *base, uint32_t *nodes,
                      char *err, size_t errlen)
{
	uint32_t me, j, *pos;
	struct rdzv_tpn_iter it;
	uint64_t sum = 0;
	int rv = -1, rc;

	if (node_id >= d->nnodes)
		return rdzv_err(err, errlen, "node %u is not one of the map's %u nodes", node_id,
		                d->nnodes);
	if (!tpn)
		return rdzv_err(err, errlen, "no tasks per node");
	if (!(pos = malloc(d->nnodes * sizeof(uint32_t))))
		return rdzv_err(err, errlen, "out of memory");
	if (rdzv_order_positions(order ? order : "", d->nnodes, pos, err, errlen) < 0)
		goto out;
	me = d->node_domain[node_id];
	/* A name given to two domains would give two sizes for one name: the
	 * node's own is checked (O(domains); the whole map would be quadratic). */
	for (j = 0; j < d->ndomains; j++)
		if (j != me && strcmp(d->names[j], d->names[me]) == 0) {
			rdzv_err(err, errlen, "%s names domain %s twice", RDZV_STEP_DOMAINS_VAR,
			         d->names[me]);
			goto out;
		}
	*size = *base = *nodes = 0;
	/* Slurm's "N(xM),..." walked once, run by run. */
	rdzv_tpn_begin(&it, tpn);
	while ((rc = rdzv_tpn_next(&it, NULL, 0)) > 0)
		for (j = it.node; j < it.nodes && j < d->nnodes; j++) {
			if (d->node_domain[j] != me)
				continue;
			sum += it.tasks;
			(*nodes)++;
			if (pos[j] < pos[node_id])
				*base += it.tasks;
		}
	if (rc < 0 || it.nodes != d->nnodes || sum > UINT32_MAX)
		goto badtpn;
	*size = (uint32_t)sum;
	rv = 0;
	goto out;
badtpn:
	rdzv_err(err, errlen, "tasks per node '%.64s' does not describe the step's %u nodes", tpn,
	         d->nnodes);
out:
	free(pos);
	return rv;
}
