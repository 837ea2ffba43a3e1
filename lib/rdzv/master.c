#include "config.h"
#include "master.h"
#include "hostlist.h"
#include "util.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netdb.h>
#include <netinet/in.h>
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
