/* topo-priv.h: what topo.c extracts from hwloc, shared with bindtable.c
 * only (the rest of the tree sees topo.h, without hwloc types). */
#ifndef RDZV_TOPO_PRIV_H
#define RDZV_TOPO_PRIV_H

#include <hwloc.h>

#include "topo.h"

struct rdzv_topo_gpu {
	hwloc_obj_t pci;
	char busid[RDZV_BUSID_MAX];
};

/* One port of an RDMA NIC (OpenFabrics OS device). */
struct rdzv_topo_nic {
	hwloc_obj_t pci;
	hwloc_obj_t osdev;
	char busid[RDZV_BUSID_MAX];
	const char *name;   /* the OS device's name, owned by the topology */
	int port;
	int state;          /* PortNState: 4 ACTIVE, 1 DOWN...; -1 not in the topology */
};

struct rdzv_topo {
	hwloc_topology_t topo;
	size_t ngpus, nnics;
	struct rdzv_topo_gpu *gpus; /* PCI bus-id order */
	struct rdzv_topo_nic *nics; /* PCI bus-id order, then port */
};

/* Nearness of NIC port n to GPU g. */
enum rdzv_near rdzv_topo_near(const struct rdzv_topo *t, size_t g, size_t n);

/* The CPUs local to GPU g (its first non-I/O ancestor's cpuset). */
hwloc_const_cpuset_t rdzv_topo_gpu_cpuset(const struct rdzv_topo *t, size_t g);

/* A port usable for RDMA: ACTIVE, or of unknown state. */
int rdzv_topo_nic_usable(const struct rdzv_topo *t, size_t n);

#endif
