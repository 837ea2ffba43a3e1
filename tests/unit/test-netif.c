/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-netif: the interface toward rank 0's node (lib/step/netif.c) and the
 * GLOO_SOCKET_IFNAME / NCCL_SOCKET_IFNAME defaults every mode adds from it.
 * The route is the kernel's own (loopback here; the namespaced cluster's
 * tests cover interfaces between nodes). */
#include "config.h"
#include "envset.h"
#include "master.h"
#include "modes.h"
#include "netif.h"
#include "tap.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

static char err[256];

static struct sockaddr_in v4(const char *a)
{
	struct sockaddr_in s;

	memset(&s, 0, sizeof(s));
	s.sin_family = AF_INET;
	inet_pton(AF_INET, a, &s.sin_addr);
	return s;
}

/* Whether an interface of this machine holds the address text (::1 on lo:
 * IPv6 may be off, by the kernel's command line or in a network namespace). */
static int held(const char *text)
{
	struct sockaddr_in6 s6;
	struct ifaddrs *list = NULL;
	char name[16];
	int rc;

	memset(&s6, 0, sizeof(s6));
	s6.sin6_family = AF_INET6;
	if (inet_pton(AF_INET6, text, &s6.sin6_addr) != 1 || getifaddrs(&list) < 0)
		return 0;
	rc = rdzv_netif_holding(list, (struct sockaddr *)&s6, name, sizeof(name)) == 0;
	freeifaddrs(list);
	return rc;
}

static void test_route(void)
{
	struct sockaddr_in lo = v4("127.0.0.1");
	struct sockaddr_storage sa, want;
	struct sockaddr bad;
	struct addrinfo hints, *res = NULL;
	unsigned salen = 0;
	char name[16] = "", local[64] = "", out[256], first[64] = "";

	ok(rdzv_netif_toward((struct sockaddr *)&lo, sizeof(lo), name, sizeof(name), local,
	                     sizeof(local), err, sizeof(err)) == 0
	   && strcmp(name, "lo") == 0 && strcmp(local, "127.0.0.1") == 0,
	   "the route to 127.0.0.1 leaves through lo from 127.0.0.1 (%s, %s)", name, local);
	memset(&bad, 0, sizeof(bad));
	bad.sa_family = AF_UNIX;
	ok(rdzv_netif_toward(&bad, sizeof(bad), name, sizeof(name), NULL, 0, err, sizeof(err)) == -1
	   && err[0], "a non-IP address is refused (%s)", err);

	/* Numeric masters: the same address on every machine, whatever its
	 * resolver says of localhost. */
	memset(&sa, 0, sizeof(sa));
	ok(rdzv_master_addr_sa("127.0.0.1", RDZV_ADDR_NAME, out, sizeof(out), &sa, &salen, err,
	                       sizeof(err)) == 0 && salen == sizeof(struct sockaddr_in)
	   && sa.ss_family == AF_INET
	   && ((struct sockaddr_in *)(void *)&sa)->sin_addr.s_addr == lo.sin_addr.s_addr
	   && strcmp(out, "127.0.0.1") == 0,
	   "the master resolves once, giving its address for the route (127.0.0.1)");
	name[0] = '\0';
	ok(rdzv_netif_toward((struct sockaddr *)&sa, salen, name, sizeof(name), NULL, 0, err,
	                     sizeof(err)) == 0 && strcmp(name, "lo") == 0,
	   "and its route is lo (%s)", name);
	memset(&sa, 0, sizeof(sa));
	ok(rdzv_master_addr_sa("::1", RDZV_ADDR_NAME, out, sizeof(out), &sa, &salen, err,
	                       sizeof(err)) == 0 && salen == sizeof(struct sockaddr_in6)
	   && sa.ss_family == AF_INET6
	   && memcmp(&((struct sockaddr_in6 *)(void *)&sa)->sin6_addr, &in6addr_loopback,
	             sizeof(in6addr_loopback)) == 0 && strcmp(out, "::1") == 0,
	   "an IPv6 master gives its IPv6 address for the route (::1)");
	if (held("::1")) {
		name[0] = '\0';
		local[0] = '\0';
		ok(rdzv_netif_toward((struct sockaddr *)&sa, salen, name, sizeof(name), local,
		                     sizeof(local), err, sizeof(err)) == 0
		   && strcmp(name, "lo") == 0 && strcmp(local, "::1") == 0,
		   "the route to ::1 leaves through lo from ::1 (%s, %s)", name, local);
	} else {
		skip("no interface holds ::1 here (IPv6 off)");
	}

	/* A name: localhost, whichever of its addresses this machine's resolver
	 * gives first (::1 on Debian 13 and unstable, 127.0.0.1 on Debian 12). */
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo("localhost", NULL, &hints, &res) != 0 || !res
	    || res->ai_addrlen > sizeof(want)) {
		if (res)
			freeaddrinfo(res);
		skip("localhost does not resolve here");
		skip("localhost does not resolve here");
		return;
	}
	memset(&want, 0, sizeof(want));
	memcpy(&want, res->ai_addr, res->ai_addrlen);
	getnameinfo(res->ai_addr, res->ai_addrlen, first, sizeof(first), NULL, 0, NI_NUMERICHOST);
	freeaddrinfo(res);
	diag("localhost resolves to %s first here", first);
	memset(&sa, 0, sizeof(sa));
	ok(rdzv_master_addr_sa("localhost", RDZV_ADDR_NAME, out, sizeof(out), &sa, &salen, err,
	                       sizeof(err)) == 0 && salen > 0 && strcmp(out, "localhost") == 0
	   && sa.ss_family == want.ss_family
	   && (sa.ss_family == AF_INET
	       ? ((struct sockaddr_in *)(void *)&sa)->sin_addr.s_addr
	         == ((struct sockaddr_in *)(void *)&want)->sin_addr.s_addr
	       : memcmp(&((struct sockaddr_in6 *)(void *)&sa)->sin6_addr,
	                &((struct sockaddr_in6 *)(void *)&want)->sin6_addr,
	                sizeof(struct in6_addr)) == 0),
	   "the master's name resolves once, giving its first address for the route (%s)", first);
	if (want.ss_family == AF_INET6 && !held(first)) {
		skip("localhost is %s first here, which no interface holds (IPv6 off)", first);
		return;
	}
	name[0] = '\0';
	ok(rdzv_netif_toward((struct sockaddr *)&sa, salen, name, sizeof(name), NULL, 0, err,
	                     sizeof(err)) == 0 && strcmp(name, "lo") == 0,
	   "and localhost's route is lo (%s)", name);
}

/* A node with a second interface that holds another address. */
static void test_holding(void)
{
	struct sockaddr_in a = v4("198.18.1.2"), b = v4("198.19.1.2"), c = v4("10.9.9.9");
	struct ifaddrs ib = { 0 }, eth = { 0 };
	char name[16] = "", n_eth[] = "eth0", n_ib[] = "ib0";

	eth.ifa_name = n_eth;
	eth.ifa_addr = (struct sockaddr *)&a;
	ib.ifa_name = n_ib;
	ib.ifa_addr = (struct sockaddr *)&b;
	ib.ifa_next = &eth;
	ok(rdzv_netif_holding(&ib, (struct sockaddr *)&a, name, sizeof(name)) == 0
	   && strcmp(name, "eth0") == 0, "the source address 198.18.1.2 is eth0's, not ib0's");
	ok(rdzv_netif_holding(&ib, (struct sockaddr *)&b, name, sizeof(name)) == 0
	   && strcmp(name, "ib0") == 0, "198.19.1.2 is ib0's");
	ok(rdzv_netif_holding(&ib, (struct sockaddr *)&c, name, sizeof(name)) == -1,
	   "an address no interface holds gives none");
	eth.ifa_addr = NULL;
	ok(rdzv_netif_holding(&ib, (struct sockaddr *)&a, name, sizeof(name)) == -1,
	   "an interface without an address is skipped");
}

static const char *val(const struct rdzv_envset *e, const char *name)
{
	const struct rdzv_env_entry *x = rdzv_envset_find(e, name);

	return x ? x->value : NULL;
}

static void test_fill(void)
{
	const char *modes[] = { "torch", "torchrun", "deepspeed", "megatron", "jax", "lightning" };
	struct rdzv_step s;
	struct rdzv_task t = { 0, 0, -1 };
	size_t i;

	memset(&s, 0, sizeof(s));
	s.nnodes = 2;
	s.ntasks = 2;
	s.local_ntasks = 1;
	s.port = 29500;
	s.gpus_on_node = -1;
	snprintf(s.master_host, sizeof(s.master_host), "n1");
	snprintf(s.master_addr, sizeof(s.master_addr), "n1");
	snprintf(s.ifname, sizeof(s.ifname), "eth0");
	for (i = 0; i < sizeof(modes) / sizeof(*modes); i++) {
		const struct rdzv_mode *m = rdzv_mode_find(modes[i]);
		struct rdzv_envset *e = rdzv_envset_create();
		int rc = m && m->fill ? m->fill(&s, &t, e, err, sizeof(err)) : -1;

		ok(rc == 0 && val(e, "GLOO_SOCKET_IFNAME") && strcmp(val(e, "GLOO_SOCKET_IFNAME"), "eth0") == 0
		   && val(e, "NCCL_SOCKET_IFNAME") && strcmp(val(e, "NCCL_SOCKET_IFNAME"), "=eth0") == 0
		   && rdzv_envset_find(e, "GLOO_SOCKET_IFNAME")->policy == RDZV_SET_DEFAULT,
		   "--rdzv=%s: GLOO_SOCKET_IFNAME=eth0, NCCL_SOCKET_IFNAME==eth0 (exact), as defaults",
		   modes[i]);
		if (i == 0) {
			/* A profile's value, added after the mode's, replaces it. */
			ok(rdzv_envset_add(e, "NCCL_SOCKET_IFNAME", "ib", RDZV_SET_DEFAULT, "profile site",
			                   err, sizeof(err)) == 0
			   && strcmp(val(e, "NCCL_SOCKET_IFNAME"), "ib") == 0,
			   "a profile's NCCL_SOCKET_IFNAME wins over the route's");
		}
		rdzv_envset_destroy(e);
	}
	s.ifname[0] = '\0';
	{
		struct rdzv_envset *e = rdzv_envset_create();

		ok(rdzv_fill_torch(&s, &t, e, err, sizeof(err)) == 0 && !val(e, "GLOO_SOCKET_IFNAME")
		   && !val(e, "NCCL_SOCKET_IFNAME"), "no interface found: neither variable is set");
		rdzv_envset_destroy(e);
	}
}

int main(void)
{
	test_route();
	test_holding();
	test_fill();
	return done_testing();
}
