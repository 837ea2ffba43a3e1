/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/step/: the step's plan: host lists, task layouts, node order,
 * MASTER_ADDR and the port, rank 0, heterogeneous steps, srun's command line
 * and what it hands the nodes, the interface to rank 0, the step's datagram
 * channel. Uses lib/common/. */
#include "config.h"
#include "master.h"
#include "hostlist.h"
#include "nodeorder.h"
#include "srunargs.h"
#include "port.h"
#include "util.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* Only the first host list item of the first host line is copied: a line
 * may be long (a whole rank layout on one line, or a long comment) and
 * only its first host matters. */
int rdzv_hostfile_first(const char *text, char *host, size_t hostlen,
                        char *err, size_t errlen)
{
	const char *p = text;

	while (p && *p) {
		char item[1024];
		size_t n = 0;
		int depth = 0;

		while (*p == ',' || (*p != '\n' && isspace((unsigned char)*p)))
			p++;
		if (*p == '#' || *p == '\n' || *p == '*') {
			p = strchr(p, '\n');
			p = p ? p + 1 : NULL;
			continue;
		}
		if (!*p)
			break;
		/* The item ends at a separator outside brackets, a comment, a
		 * repeat count ("host*N") or the end of the line. */
		for (; *p && *p != '\n' && *p != '#' && *p != '*'; p++) {
			if (!depth && (*p == ',' || isspace((unsigned char)*p)))
				break;
			if (*p == '[')
				depth = 1;
			else if (*p == ']')
				depth = 0;
			if (n + 1 >= sizeof(item))
				return rdzv_err(err, errlen, "hostfile's first host is longer than %zu bytes",
				                sizeof(item) - 1);
			item[n++] = *p;
		}
		item[n] = '\0';
		return rdzv_hostlist_nth(item, 0, host, hostlen, err, errlen);
	}
	return rdzv_err(err, errlen, "hostfile names no host");
}

int rdzv_master_host(const char *step_nodelist, const char *distribution,
                     const char *hostfile_line, char *host, size_t hostlen,
                     char *err, size_t errlen)
{
	char why[256];

	if (distribution && strncmp(distribution, "arbitrary", 9) == 0) {
		if (!hostfile_line)
			return rdzv_err(err, errlen,
			                "distribution is arbitrary but SLURM_HOSTFILE cannot be read "
			                "on this node, so the node of rank 0 is unknown");
		return rdzv_hostfile_first(hostfile_line, host, hostlen, err, errlen);
	}
	if (!step_nodelist || !*step_nodelist)
		return rdzv_err(err, errlen, "SLURM_STEP_NODELIST is not set");
	if (rdzv_hostlist_nth(step_nodelist, 0, host, hostlen, why, sizeof(why)) < 0)
		return rdzv_err(err, errlen, "SLURM_STEP_NODELIST: %s", why);
	return 0;
}

int rdzv_master_addr(const char *host, enum rdzv_addr_form form, char *out,
                     size_t outlen, char *err, size_t errlen)
{
	return rdzv_master_addr_sa(host, form, out, outlen, NULL, NULL, err, errlen);
}

int rdzv_master_addr_sa(const char *host, enum rdzv_addr_form form, char *out, size_t outlen,
                        struct sockaddr_storage *sa, unsigned *salen, char *err,
                        size_t errlen)
{
	struct addrinfo hints, *res = NULL;
	int rc;

	if (!host || !*host)
		return rdzv_err(err, errlen, "no MASTER_ADDR host (the node of rank 0) to resolve");
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	rc = getaddrinfo(host, NULL, &hints, &res);
	if (rc != 0 || !res)
		return rdzv_err(err, errlen,
		                "MASTER_ADDR %s (the node of rank 0) does not resolve on this "
		                "node: %s; ranks here could never reach the rendezvous",
		                host, gai_strerror(rc));
	if (sa && salen && res->ai_addrlen <= sizeof(*sa)) {
		memcpy(sa, res->ai_addr, res->ai_addrlen);
		*salen = (unsigned)res->ai_addrlen;
	} else if (salen) {
		*salen = 0;
	}
	if (form == RDZV_ADDR_IP) {
		const void *a = res->ai_family == AF_INET
			? (const void *)&((struct sockaddr_in *)(void *)res->ai_addr)->sin_addr
			: (const void *)&((struct sockaddr_in6 *)(void *)res->ai_addr)->sin6_addr;

		if (!inet_ntop(res->ai_family, a, out, (socklen_t)outlen)) {
			freeaddrinfo(res);
			return rdzv_err(err, errlen, "cannot format the address of %s", host);
		}
		freeaddrinfo(res);
		return 0;
	}
	freeaddrinfo(res);
	if (rdzv_strlcpy(out, host, outlen) < 0)
		return rdzv_err(err, errlen, "host name %.64s... too long", host);
	return 0;
}

/* ---- the step plan ---- */

static int host_valid(const char *h)
{
	return rdzv_host_name_ok(h, strlen(h));
}

int rdzv_plan_format(const struct rdzv_plan *p, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%u.%u:%u:%s:%s%s%s", p->job_id, p->step_id, p->port,
	                 p->port_from_option ? "option" : "derived", p->host,
	                 p->order_known ? ":L" : "", p->order_known && p->order ? p->order : "");

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

char *rdzv_plan_text(const struct rdzv_plan *p)
{
	size_t len = strlen(p->host) + (p->order ? strlen(p->order) : 0) + 64;
	char *buf = malloc(len);

	if (buf && rdzv_plan_format(p, buf, len) < 0) {
		free(buf);
		buf = NULL;
	}
	return buf;
}

int rdzv_plan_parse(const char *s, struct rdzv_plan *p, char *err, size_t errlen)
{
	const char *dot, *c1, *c2, *c3, *c4, *o;
	uint64_t job, step, port;
	size_t hostlen;

	memset(p, 0, sizeof(*p));
	if (!s || !(dot = strchr(s, '.')) || !(c1 = strchr(dot, ':')) || !(c2 = strchr(c1 + 1, ':'))
	    || !(c3 = strchr(c2 + 1, ':')))
		return rdzv_err(err, errlen, "%s '%.64s': expected JOB.STEP:PORT:SOURCE:HOST[:ORDER]",
		                RDZV_STEP_PLAN_VAR, s ? s : "");
	if (rdzv_parse_u64n(s, (size_t)(dot - s), 0, UINT32_MAX, &job) < 0
	    || rdzv_parse_u64n(dot + 1, (size_t)(c1 - dot - 1), 0, UINT32_MAX, &step) < 0)
		return rdzv_err(err, errlen, "%s '%.64s': bad job or step id", RDZV_STEP_PLAN_VAR, s);
	if (rdzv_parse_u64n(c1 + 1, (size_t)(c2 - c1 - 1), 1024, 65535, &port) < 0)
		return rdzv_err(err, errlen, "%s '%.64s': bad port (1024-65535)", RDZV_STEP_PLAN_VAR, s);
	if ((size_t)(c3 - c2 - 1) == 6 && strncmp(c2 + 1, "option", 6) == 0)
		p->port_from_option = 1;
	else if (!((size_t)(c3 - c2 - 1) == 7 && strncmp(c2 + 1, "derived", 7) == 0))
		return rdzv_err(err, errlen, "%s '%.64s': unknown port source", RDZV_STEP_PLAN_VAR, s);
	c4 = strchr(c3 + 1, ':');
	hostlen = c4 ? (size_t)(c4 - c3 - 1) : strlen(c3 + 1);
	if (hostlen >= sizeof(p->host))
		return rdzv_err(err, errlen, "%s '%.64s': bad host", RDZV_STEP_PLAN_VAR, s);
	memcpy(p->host, c3 + 1, hostlen);
	p->host[hostlen] = '\0';
	if (p->host[0] && !host_valid(p->host))
		return rdzv_err(err, errlen, "%s '%.64s': bad host", RDZV_STEP_PLAN_VAR, s);
	if (c4) {
		if (c4[1] != 'L')
			return rdzv_err(err, errlen, "%s '%.64s': bad node order", RDZV_STEP_PLAN_VAR, s);
		for (o = c4 + 2; *o; o++)
			if (!((*o >= '0' && *o <= '9') || *o == ',' || *o == '-'))
				return rdzv_err(err, errlen, "%s '%.64s': bad node order",
				                RDZV_STEP_PLAN_VAR, s);
		p->order_known = 1;
		p->order = c4 + 2;
	}
	p->job_id = (uint32_t)job;
	p->step_id = (uint32_t)step;
	p->port = (uint16_t)port;
	return 0;
}

/* ---- srun's command line: read with srunargs.h ---- */

static int keep_value(const char *v, int is_file, char *out, size_t outlen, int *out_file,
                      char *err, size_t errlen)
{
	if (rdzv_strlcpy(out, v, outlen) < 0)
		return rdzv_err(err, errlen, "srun's node list option is longer than %zu bytes",
		                outlen - 1);
	*out_file = is_file || strchr(v, '/') != NULL;
	return 1;
}

int rdzv_srun_arg_nodelist(int argc, char *const *argv, char *out, size_t outlen,
                           int *is_file, char *err, size_t errlen)
{
	struct rdzv_srun_args it;
	struct rdzv_srun_arg a;
	int rc, found = 0;

	rdzv_srun_args_init(&it, argc, argv);
	while ((rc = rdzv_srun_args_next(&it, &a, err, errlen)) > 0) {
		int file = rdzv_srun_arg_is(&a, 'F', "nodefile", 5);

		if (!file && !rdzv_srun_arg_is(&a, 'w', "nodelist", 5))
			continue;
		if ((found = keep_value(a.value, file, out, outlen, is_file, err, errlen)) < 0)
			return -1;
	}
	return rc < 0 ? -1 : found;
}

/* ---- a user's MASTER_ADDR ---- */

static int same_address(const struct addrinfo *a, const struct addrinfo *b)
{
	for (; a; a = a->ai_next) {
		const struct addrinfo *c;

		for (c = b; c; c = c->ai_next) {
			if (a->ai_family != c->ai_family)
				continue;
			if (a->ai_family == AF_INET
			    && memcmp(&((struct sockaddr_in *)(void *)a->ai_addr)->sin_addr,
			              &((struct sockaddr_in *)(void *)c->ai_addr)->sin_addr,
			              sizeof(struct in_addr)) == 0)
				return 1;
			if (a->ai_family == AF_INET6
			    && memcmp(&((struct sockaddr_in6 *)(void *)a->ai_addr)->sin6_addr,
			              &((struct sockaddr_in6 *)(void *)c->ai_addr)->sin6_addr,
			              sizeof(struct in6_addr)) == 0)
				return 1;
		}
	}
	return 0;
}

int rdzv_master_check_user(const char *var, const char *value, const char *master_host,
                           char *err, size_t errlen)
{
	struct addrinfo hints, *mine = NULL, *theirs = NULL;
	int rc, rv = -1;

	if (!value || !*value)
		return rdzv_err(err, errlen, "%s is exported empty: unset it (the plugin sets it)", var);
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	rc = getaddrinfo(value, NULL, &hints, &mine);
	if (rc != 0 || !mine)
		return rdzv_err(err, errlen,
		                "%s=%.64s (exported) does not resolve on this node: %s; ranks here "
		                "could never reach the rendezvous (unset it: the plugin sets it)",
		                var, value, gai_strerror(rc));
	if (master_host && strcmp(value, master_host) == 0) {
		freeaddrinfo(mine);
		return 0;
	}
	rc = master_host ? getaddrinfo(master_host, NULL, &hints, &theirs) : EAI_NONAME;
	if (rc == 0 && theirs && same_address(mine, theirs))
		rv = 0;
	else
		rdzv_err(err, errlen,
		         "%s=%.64s (exported) is not %s, the node of rank 0 of this step: ranks "
		         "would wait for a rendezvous store nobody serves there; unset %s (the "
		         "plugin sets it) or export a name or address of %s", var, value,
		         master_host ? master_host : "?", var, master_host ? master_host : "?");
	freeaddrinfo(mine);
	if (theirs)
		freeaddrinfo(theirs);
	return rv;
}

int rdzv_hostport_split(const char *s, char *host, size_t hostlen, uint16_t *port,
                        char *err, size_t errlen)
{
	const char *colon, *h = s, *hend;

	if (!s || !*s)
		return rdzv_err(err, errlen, "empty HOST:PORT");
	if (s[0] == '[') {
		h = s + 1;
		if (!(hend = strchr(h, ']')) || hend[1] != ':')
			return rdzv_err(err, errlen, "'%.64s': expected [ADDRESS]:PORT", s);
		colon = hend + 1;
	} else {
		if (!(colon = strrchr(s, ':')) || strchr(s, ':') != colon)
			return rdzv_err(err, errlen, "'%.64s': expected HOST:PORT", s);
		hend = colon;
	}
	if (hend == h || (size_t)(hend - h) >= hostlen)
		return rdzv_err(err, errlen, "'%.64s': bad host", s);
	if (rdzv_port_parse(colon + 1, port, err, errlen) < 0)
		return -1;
	memcpy(host, h, (size_t)(hend - h));
	host[hend - h] = '\0';
	return 0;
}
