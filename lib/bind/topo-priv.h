/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/bind/: the node's topology, each task's GPU, NICs and cores, the node
 * check and its GPU gate. Uses lib/modes/, lib/step/, lib/gpu/, lib/common/. */
/* topo-priv.h: the node model topo.c extracts from hwloc, shared with
 * bindtable.c and topocache.c only (the rest of the tree sees topo.h).
 *
 * Everything binding needs is copied out of the hwloc tree when it is
 * loaded (bus ids, names, port states and fabrics, each GPU's local CPUs,
 * the nearness of every GPU to every NIC, the cores and the allowed CPUs),
 * so that the
 * table is computed from this model alone: the same model comes from an XML
 * file, from live discovery or from the node's cache (topocache.c) without
 * any hwloc topology being loaded. */
#ifndef RDZV_TOPO_PRIV_H
#define RDZV_TOPO_PRIV_H

#include <hwloc.h>

#include "topo.h"

#define RDZV_MODEL_MAX 64

struct rdzv_topo_gpu {
	char busid[RDZV_BUSID_MAX];
	unsigned vendor, device;      /* PCI ids */
	char model[RDZV_MODEL_MAX];   /* GPUModel, else PCIDevice; "" unknown */
	hwloc_bitmap_t cpus;          /* its first non-I/O ancestor's cpuset */
};

/* One port of an RDMA NIC (OpenFabrics OS device). */
struct rdzv_topo_nic {
	char busid[RDZV_BUSID_MAX];
	char name[RDZV_TOKEN_MAX];  /* the OS device's name (mlx5_0, rdmap16s27) */
	int port;
	int state;          /* PortNState: 4 ACTIVE, 1 DOWN...; -1 not in the topology */
	int fabric;         /* enum rdzv_fabric */
};

struct rdzv_topo {
	size_t ngpus, nnics, ncores;
	size_t npci;                /* PCI devices of any kind hwloc kept */
	struct rdzv_topo_gpu *gpus; /* PCI bus-id order */
	struct rdzv_topo_nic *nics; /* PCI bus-id order, then name, then port */
	unsigned char *near;        /* [g * nnics + n]: enum rdzv_near */
	hwloc_bitmap_t *cores;      /* the PUs of each core, in core order */
	hwloc_bitmap_t allowed;     /* the topology's allowed CPUs */
};

/* An empty model with its bitmaps allocated, or NULL (out of memory). */
struct rdzv_topo *rdzv_topo_alloc(size_t ngpus, size_t nnics, size_t ncores);

/* Nearness of NIC port n to GPU g. */
enum rdzv_near rdzv_topo_near(const struct rdzv_topo *t, size_t g, size_t n);

/* The CPUs local to GPU g (its first non-I/O ancestor's cpuset). */
hwloc_const_cpuset_t rdzv_topo_gpu_cpuset(const struct rdzv_topo *t, size_t g);

/* A port usable for RDMA: ACTIVE, or of unknown state. */
int rdzv_topo_nic_usable(const struct rdzv_topo *t, size_t n);

#endif
