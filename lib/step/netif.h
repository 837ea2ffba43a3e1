/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/step/: the step's plan: host lists, task layouts, node order,
 * MASTER_ADDR and the port, rank 0, heterogeneous steps, srun's command line
 * and what it hands the nodes, the interface to rank 0, the step's datagram
 * channel. Uses lib/common/. */
/* netif.h: the interface through which this node reaches rank 0's node.
 *
 * Gloo binds each rank to what the node's host name resolves to and falls
 * back to loopback when that is no local address (Debian and Ubuntu map the
 * host name to 127.0.1.1); NCCL's bootstrap picks among interfaces by its own
 * order. Between machines either can pick an address the other nodes cannot
 * reach. The kernel's route to MASTER_ADDR names the interface that can:
 * GLOO_SOCKET_IFNAME and NCCL_SOCKET_IFNAME are set to it (as defaults: the
 * user's and a profile's values win). One routing look-up per node per step,
 * in user_init: a UDP socket connected to the address (no packet is sent),
 * its local address, and the interface holding that address. */
#ifndef RDZV_NETIF_H
#define RDZV_NETIF_H

#include <stddef.h>
#include <sys/socket.h>

#define RDZV_IFNAME_MAX 16 /* IFNAMSIZ */

/* Interface name (and this node's address on it, formatted, when local is
 * not NULL) through which the kernel would send to sa. Returns 0, or -1 with
 * the reason (no route, no interface holds the source address). */
int rdzv_netif_toward(const struct sockaddr *sa, socklen_t salen, char *ifname, size_t iflen,
                      char *local, size_t locallen, char *err, size_t errlen);

/* Of an interface list as getifaddrs(3) gives it: the name of the interface
 * holding address sa (same family and address). Returns 0 or -1. Split out
 * so that tests can give their own list. */
struct ifaddrs;
int rdzv_netif_holding(const struct ifaddrs *list, const struct sockaddr *sa, char *ifname,
                       size_t iflen);

#endif
