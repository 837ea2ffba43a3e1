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

int rdzv_hostfile_first(const char *text, char *host, size_t hostlen,
                        char *err, size_t errlen)
{
	const char *p = text;

	while (p && *p) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p);
		char line[1024];
		char *b, *e, *star;

		if (n < sizeof(line)) {
			memcpy(line, p, n);
			line[n] = '\0';
			if ((e = strchr(line, '#')))
				*e = '\0';
			for (b = line; isspace((unsigned char)*b); b++)
				;
			for (e = b + strlen(b); e > b && isspace((unsigned char)e[-1]); e--)
				;
			*e = '\0';
			if ((star = strchr(b, '*')))
				*star = '\0';
			if (*b)
				return rdzv_hostlist_nth(b, 0, host, hostlen, err, errlen);
		} else {
			return rdzv_err(err, errlen, "hostfile line longer than %zu bytes",
			                sizeof(line) - 1);
		}
		p = eol ? eol + 1 : NULL;
	}
	return rdzv_err(err, errlen, "hostfile names no host");
}

int rdzv_master_host(const char *step_nodelist, const char *distribution,
                     const char *hostfile_line, char *host, size_t hostlen,
                     char *err, size_t errlen)
{
	if (distribution && strncmp(distribution, "arbitrary", 9) == 0) {
		if (!hostfile_line)
			return rdzv_err(err, errlen,
			                "distribution is arbitrary but SLURM_HOSTFILE cannot be read "
			                "on this node, so the node of rank 0 is unknown");
		return rdzv_hostfile_first(hostfile_line, host, hostlen, err, errlen);
	}
	if (!step_nodelist || !*step_nodelist)
		return rdzv_err(err, errlen, "SLURM_STEP_NODELIST is not set");
	return rdzv_hostlist_nth(step_nodelist, 0, host, hostlen, err, errlen);
}

int rdzv_master_addr(const char *host, enum rdzv_addr_form form, char *out,
                     size_t outlen, char *err, size_t errlen)
{
	struct addrinfo hints, *res = NULL;
	int rc;

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
