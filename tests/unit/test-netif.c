/* test-netif: the interface toward rank 0's node (lib/rdzv/netif.c) and the
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

static void test_route(void)
{
	struct sockaddr_in lo = v4("127.0.0.1");
	struct sockaddr_storage sa;
	struct sockaddr bad;
	unsigned salen = 0;
	char name[16] = "", local[64] = "", out[256];

	ok(rdzv_netif_toward((struct sockaddr *)&lo, sizeof(lo), name, sizeof(name), local,
	                     sizeof(local), err, sizeof(err)) == 0
	   && strcmp(name, "lo") == 0 && strcmp(local, "127.0.0.1") == 0,
	   "the route to 127.0.0.1 leaves through lo from 127.0.0.1 (%s, %s)", name, local);
	memset(&bad, 0, sizeof(bad));
	bad.sa_family = AF_UNIX;
	ok(rdzv_netif_toward(&bad, sizeof(bad), name, sizeof(name), NULL, 0, err, sizeof(err)) == -1
	   && err[0], "a non-IP address is refused (%s)", err);
	ok(rdzv_master_addr_sa("localhost", RDZV_ADDR_NAME, out, sizeof(out), &sa, &salen, err,
	                       sizeof(err)) == 0 && salen > 0 && strcmp(out, "localhost") == 0,
	   "the master's name resolves once, giving its address for the route");
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
