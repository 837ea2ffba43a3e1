/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/step/: the step's plan: host lists, task layouts, node order,
 * MASTER_ADDR and the port, rank 0, heterogeneous steps, srun's command line
 * and what it hands the nodes, the interface to rank 0, the step's datagram
 * channel. Uses lib/common/. */
#include "config.h"
#include "netif.h"
#include "util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <string.h>
#include <unistd.h>

static int same_addr(const struct sockaddr *a, const struct sockaddr *b)
{
	if (!a || !b || a->sa_family != b->sa_family)
		return 0;
	if (a->sa_family == AF_INET)
		return ((const struct sockaddr_in *)(const void *)a)->sin_addr.s_addr
		       == ((const struct sockaddr_in *)(const void *)b)->sin_addr.s_addr;
	if (a->sa_family == AF_INET6)
		return memcmp(&((const struct sockaddr_in6 *)(const void *)a)->sin6_addr,
		              &((const struct sockaddr_in6 *)(const void *)b)->sin6_addr,
		              sizeof(struct in6_addr)) == 0;
	return 0;
}

int rdzv_netif_holding(const struct ifaddrs *list, const struct sockaddr *sa, char *ifname,
                       size_t iflen)
{
	const struct ifaddrs *i;

	for (i = list; i; i = i->ifa_next)
		if (i->ifa_name && same_addr(i->ifa_addr, sa))
			return rdzv_strlcpy(ifname, i->ifa_name, iflen);
	return -1;
}

int rdzv_netif_toward(const struct sockaddr *sa, socklen_t salen, char *ifname, size_t iflen,
                      char *local, size_t locallen, char *err, size_t errlen)
{
	struct sockaddr_storage to, me;
	socklen_t melen = sizeof(me);
	struct ifaddrs *list = NULL;
	int fd, rc;

	if (!sa || (sa->sa_family != AF_INET && sa->sa_family != AF_INET6)
	    || salen > (socklen_t)sizeof(to))
		return rdzv_err(err, errlen, "not an IPv4 or IPv6 address");
	memcpy(&to, sa, salen);
	/* Any port: connect() on a UDP socket only picks the route. */
	if (to.ss_family == AF_INET)
		((struct sockaddr_in *)(void *)&to)->sin_port = htons(9);
	else
		((struct sockaddr_in6 *)(void *)&to)->sin6_port = htons(9);
	if ((fd = socket(to.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
		return rdzv_err(err, errlen, "socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&to, salen) < 0
	    || getsockname(fd, (struct sockaddr *)&me, &melen) < 0) {
		rc = errno;
		close(fd);
		return rdzv_err(err, errlen, "no route: %s", strerror(rc));
	}
	close(fd);
	if (getifaddrs(&list) < 0)
		return rdzv_err(err, errlen, "getifaddrs: %s", strerror(errno));
	rc = rdzv_netif_holding(list, (struct sockaddr *)&me, ifname, iflen);
	freeifaddrs(list);
	if (local && locallen) {
		const void *a = me.ss_family == AF_INET
			? (const void *)&((struct sockaddr_in *)(void *)&me)->sin_addr
			: (const void *)&((struct sockaddr_in6 *)(void *)&me)->sin6_addr;

		if (!inet_ntop(me.ss_family, a, local, (socklen_t)locallen))
			local[0] = '\0';
	}
	if (rc < 0)
		return rdzv_err(err, errlen, "no interface holds this node's source address");
	return 0;
}
