/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/domains/: NVLink domains: the setting, Slurm's blocks, the step's domain
 * map, the group check, a node's report. Uses lib/step/, lib/common/. */
/* domain_wire.c: RDZV_DOMAIN_ASK and its datagrams, the nodes' reports
 * and srun's verdict under nvlink_domain=nvml (domain.h). */
#include "config.h"
#include "domain.h"
#include "channel.h"
#include "domain_util.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- nvlink_domain=nvml: the nodes' reports and srun's verdict ---- */

/* The nonce's 16 digits (channel.h) at *p, then past them. */
static int read_hex64(const char **p, uint64_t *v)
{
	if (strnlen(*p, 16) != 16 || rdzv_hex64(*p, 16, v) < 0)
		return -1;
	*p += 16;
	return 0;
}

int rdzv_domain_report_format(const struct rdzv_domain_report *r, char *buf, size_t len)
{
	int n;

	if (r->name[0] && !rdzv_domain_name_ok(r->name, strlen(r->name)))
		return -1;
	n = snprintf(buf, len, "RDZVD1 DOMAIN %u.%u %016llx %u %s", r->job_id, r->step_id,
	             (unsigned long long)r->nonce, r->node_id, r->name[0] ? r->name : "-");
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

int rdzv_domain_report_parse(const char *buf, size_t n, struct rdzv_domain_report *r)
{
	char text[RDZV_DOMAIN_DGRAM_MAX + 1];
	const char *p = text;
	size_t nl;

	if (n == 0 || n > RDZV_DOMAIN_DGRAM_MAX || memchr(buf, '\0', n))
		return -1;
	memcpy(text, buf, n);
	text[n] = '\0';
	memset(r, 0, sizeof(*r));
	if (strncmp(p, "RDZVD1 DOMAIN ", 14) != 0)
		return -1;
	p += 14;
	if (rdzv_read_u32(&p, ID_MAX, &r->job_id) < 0 || *p++ != '.'
	    || rdzv_read_u32(&p, ID_MAX, &r->step_id) < 0
	    || *p++ != ' ' || read_hex64(&p, &r->nonce) < 0 || *p++ != ' '
	    || rdzv_read_u32(&p, ID_MAX, &r->node_id) < 0 || *p++ != ' ')
		return -1;
	nl = strlen(p);
	if (nl == 1 && *p == '-')
		return 0;
	if (!rdzv_domain_name_ok(p, nl))
		return -1;
	memcpy(r->name, p, nl + 1);
	return 0;
}

int rdzv_domain_verdict_format(uint32_t job, uint32_t step, uint64_t nonce, int ok,
                               const char *msg, char *buf, size_t len)
{
	int n = snprintf(buf, len, "RDZVD1 %s %u.%u %016llx%s", ok ? "OK" : "REFUSE", job, step,
	                 (unsigned long long)nonce, ok ? "" : "\n");
	size_t used;

	if (n < 0 || (size_t)n >= len)
		return -1;
	used = (size_t)n;
	if (!ok && msg) /* the message, cut to the datagram's room */
		snprintf(buf + used, len - used, "%s", msg);
	return 0;
}

int rdzv_domain_verdict_parse(const char *buf, size_t n, uint32_t job, uint32_t step,
                              uint64_t nonce, char *msg, size_t msglen)
{
	char head[96];
	const char *nl;
	size_t hl;
	int ok;

	if (n == 0 || n > RDZV_DOMAIN_DGRAM_MAX || memchr(buf, '\0', n))
		return -1;
	nl = memchr(buf, '\n', n);
	hl = nl ? (size_t)(nl - buf) : n;
	ok = snprintf(head, sizeof(head), "RDZVD1 OK %u.%u %016llx", job, step,
	              (unsigned long long)nonce);
	if (ok > 0 && hl == (size_t)ok && !nl && memcmp(buf, head, hl) == 0)
		return 1;
	ok = snprintf(head, sizeof(head), "RDZVD1 REFUSE %u.%u %016llx", job, step,
	              (unsigned long long)nonce);
	if (ok > 0 && hl == (size_t)ok && nl && memcmp(buf, head, hl) == 0) {
		size_t ml = n - hl - 1;

		if (msglen) {
			if (ml >= msglen)
				ml = msglen - 1;
			memcpy(msg, nl + 1, ml);
			msg[ml] = '\0';
		}
		return 0;
	}
	return -1;
}
