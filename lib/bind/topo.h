/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/bind/: the node's topology, each task's GPU, NICs and cores, the node
 * check and its GPU gate. Uses lib/modes/, lib/step/, lib/gpu/, lib/common/. */
/* topo.h: the node's GPUs and RDMA NICs from hwloc, and the binding table
 * of one step on one node: which GPU, NICs and CPUs each task gets.
 *
 * The plugin loads the topology and computes the table once per node per
 * step (user_init); each task then applies its own row (task_init), so the
 * per-task cost is a lookup plus one sched_setaffinity. helpers/rdzv-topo
 * prints the same table from the same code. doc/binding.md states the rules;
 * in short:
 *   GPUs   the node's CUDA GPUs are the NVIDIA (0x10de) PCI functions of
 *          class 0x0300 (VGA) or 0x0302 (3D), numbered in PCI bus-id order
 *          (CUDA_DEVICE_ORDER=PCI_BUS_ID, NVML's order). NVSwitch (0x0680),
 *          BMC VGA of other vendors, co-processors and other vendors' GPUs
 *          are not CUDA devices. Local task i gets the step's GPU i mod n;
 *          with fewer tasks than GPUs, a contiguous block of them.
 *   NICs   RDMA NICs are PCI functions with an OpenFabrics OS device; each
 *          port is a candidate unless the topology says it is not ACTIVE,
 *          or the allow-list refuses it. One fabric per step: where ports of
 *          several kinds (InfiniBand, EFA, RoCE...) are usable, only the kind
 *          that serves the most GPUs at the best level is used. A GPU's NICs
 *          are its candidates at the best nearness level; GPUs with the same
 *          tied set split it in PCI order. On NVLink-C2C nodes (Grace) a GPU
 *          with NICs of its own also gets its share of the NICs that hang off
 *          its package without any GPU (the c2c level). NCCL_IB_HCA is the
 *          union over the step's GPUs.
 *   CPUs   a task's CPUs are those local to its GPU within the step's CPUs,
 *          split by whole cores between the tasks that share them. */
#ifndef RDZV_TOPO_H
#define RDZV_TOPO_H

#include <stddef.h>

/* Nearness of a NIC to a GPU, best first. */
enum rdzv_near {
	RDZV_NEAR_SWITCH,     /* below one PCIe switch (a PCI-PCI bridge) */
	RDZV_NEAR_HOSTBRIDGE, /* below one host bridge, no common switch */
	RDZV_NEAR_C2C,        /* NVLink-C2C node (Grace): the NIC's host bridge has
	                       * no GPU, and it is in the GPU's package (or NUMA
	                       * node); the GPU reaches it through its CPU */
	RDZV_NEAR_NUMA,       /* attached to the same NUMA locality */
	RDZV_NEAR_PACKAGE,    /* in the same package */
	RDZV_NEAR_SYSTEM,     /* anywhere else */
};

const char *rdzv_near_name(enum rdzv_near n);

/* The kind of network an RDMA port is on. Ports of different kinds cannot
 * reach each other, so a step uses one kind (doc/binding.md, "One fabric"). */
enum rdzv_fabric {
	RDZV_FABRIC_IB,       /* InfiniBand (PCI class 0207) */
	RDZV_FABRIC_EFA,      /* AWS Elastic Fabric Adapter (PCI vendor 1d0f) */
	RDZV_FABRIC_ETH,      /* RDMA over Ethernet: RoCE, iWARP (PCI class 0200) */
	RDZV_FABRIC_OTHER,    /* any other class (Omni-Path 0208...) */
	RDZV_FABRIC_SLINGSHOT,/* HPE Slingshot (Cassini 17db:0501): a network
	                       * interface (hsn0, hsi0), no OpenFabrics device */
};

const char *rdzv_fabric_name(enum rdzv_fabric f);

struct rdzv_topo;

/* Load the topology: from hwloc XML at xml, or discovered live when xml is
 * NULL (important I/O only, without the gl/opencl/cuda/nvml/rsmi/levelzero
 * probes, which can hang or initialise a driver inside slurmstepd).
 * Refuses a runtime hwloc whose major differs from the one built against.
 * Returns 0 with *out set, or -1 with a reason in err. */
int rdzv_topo_load(const char *xml, struct rdzv_topo **out, char *err, size_t errlen);

void rdzv_topo_destroy(struct rdzv_topo *t); /* accepts NULL */

/* Number of CUDA GPUs and RDMA NIC ports the node has, and of PCI devices
 * of any kind (0: an export without I/O, lstopo --no-io, or a container
 * that cannot see the PCI bus). */
size_t rdzv_topo_gpu_count(const struct rdzv_topo *t);
size_t rdzv_topo_pci_count(const struct rdzv_topo *t);
size_t rdzv_topo_nic_count(const struct rdzv_topo *t);

/* All the node's GPUs as a step GPU list, "0,1,...,n-1" ("" without GPUs),
 * for a step that holds the whole node. Returns 0, or -1 when buf is too
 * small. */
int rdzv_topo_gpu_list(const struct rdzv_topo *t, char *buf, size_t len);

/* One line describing GPU i or NIC port i ("gpu 0 0000:4e:00.0 numa 3"...).
 * Returns 0, or -1 when i is out of range or buf too small. */
/* The model of CUDA GPU i: the GPUModel info of its NVML/CUDA OS device
 * ("NVIDIA H100 80GB HBM3"), else the PCIDevice name hwloc read from the PCI
 * ids ("GH100 [H100 SXM5 80GB]"). Returns 0, or -1 when neither is known. */
int rdzv_topo_gpu_model(const struct rdzv_topo *t, size_t i, char *buf, size_t len);

/* The PCI bus id of CUDA GPU i ("0000:4e:00.0"), or NULL. */
const char *rdzv_topo_gpu_busid(const struct rdzv_topo *t, size_t i);

int rdzv_topo_format_gpu(const struct rdzv_topo *t, size_t i, char *buf, size_t len);
int rdzv_topo_format_nic(const struct rdzv_topo *t, size_t i, char *buf, size_t len);

/* NIC port i: its OS device's name (mlx5_0), port, enum rdzv_fabric, and
 * whether the binding would use it (ACTIVE, or of unknown state, in the
 * topology). 0, or -1 when i is out of range. */
int rdzv_topo_nic_info(const struct rdzv_topo *t, size_t i, const char **name, int *port,
                       int *fabric, int *usable);

/* What the step owns on this node. */
struct rdzv_bind_req {
	const char *step_gpus; /* SLURM_STEP_GPUS: node GPU indices "0,2"; NULL/"": use visible */
	const char *visible;   /* CUDA_VISIBLE_DEVICES of the step (on AMD nodes
	                        * ROCR_VISIBLE_DEVICES); NULL: unset */
	unsigned ntasks;       /* tasks of the step on this node */
	const char *hca_allow; /* NCCL_IB_HCA-syntax allow-list; NULL: no limit */
	const char *step_cpus; /* the step's CPUs as a list "0-7,16"; NULL: the topology's */
	const struct rdzv_identity *ident; /* Slurm's GPU numbers -> PCI; NULL: positional */
	int amd;               /* bind AMD GPUs too (else a node whose GPUs are
	                        * AMD's binds nothing) */
};

struct rdzv_identity;

/* Is the node's GPU list AMD's? (GPUs are NVIDIA's where the node has any
 * CUDA GPU, else AMD's Instinct GPUs: doc/binding.md.) */
int rdzv_topo_gpus_amd(const struct rdzv_topo *t);

#define RDZV_BUSID_MAX 16
#define RDZV_TOKEN_MAX 64
#define RDZV_NICLIST_MAX 1024
#define RDZV_CPULIST_MAX 1024

struct rdzv_cpumask; /* a CPU set in the form sched_setaffinity takes */

struct rdzv_bind_row {
	int gpu;                      /* node GPU index; -1: the task has none */
	size_t ngpus;                 /* GPUs of the task: 1, or a block when tasks < GPUs */
	char busid[RDZV_BUSID_MAX];   /* the (first) GPU's PCI bus id */
	char visible[RDZV_NICLIST_MAX]; /* the block's CUDA_VISIBLE_DEVICES entries */
	unsigned ordinal;             /* the (first) GPU's CUDA ordinal under the step's list */
	char ucx[RDZV_NICLIST_MAX];   /* UCX_NET_DEVICES ("mlx5_0:1,..."); "": none */
	char ifname[RDZV_NICLIST_MAX];/* its Slingshot NICs' interfaces ("hsn0"); "": none */
	enum rdzv_near near;          /* nearness of those NICs (the best level) */
	int c2c;                      /* c2c NICs added to NICs of a better level */
	char cpus[RDZV_CPULIST_MAX];  /* CPUs to bind to; "": none */
	int cpus_far;                 /* none of the step's CPUs is local to the GPU */
	struct rdzv_cpumask *mask;    /* cpus, for sched_setaffinity */
	struct rdzv_cpumask *gpu_mask;/* the step's CPUs local to the GPU */
	size_t lo, hi;                /* its GPUs: the step's list, positions [lo, hi) */
};

struct rdzv_bind_table {
	size_t ngpus;                     /* the step's GPUs on this node */
	size_t nrows;                     /* one row per local task */
	struct rdzv_bind_row *rows;
	char nccl_ib_hca[RDZV_NICLIST_MAX]; /* "=mlx5_0:1,..."; "": no NIC */
	char socket_ifname[RDZV_NICLIST_MAX]; /* Slingshot: "=hsn0,hsn1"; "": none */
	char step_cpus[RDZV_CPULIST_MAX];
	struct rdzv_cpumask *step_mask;
	char note[256];                   /* a warning for the user; "": none */
	char fabric[160];                 /* ports of several kinds were usable: the
	                                   * one chosen and those left out; "": one */
	char (*token)[RDZV_TOKEN_MAX];    /* the step's CUDA_VISIBLE_DEVICES entries */
	int amd;                          /* the GPUs are AMD's: ROCR_VISIBLE_DEVICES, hip:N */
	int slingshot;                    /* the NICs are Slingshot interfaces: the node's
	                                   * list is NCCL_SOCKET_IFNAME, rows name them */
	struct rdzv_bind_row *single;     /* per step GPU k: a row for GPU k alone, with
	                                   * all its CPUs in the step (tasks Slurm gave
	                                   * their own GPU, see rdzv_bind_task_row) */
};

/* Compute the table. A step without GPUs, or a node without NICs, gives
 * rows without GPU or NICs: not an error. Returns 0 with *out set, or -1
 * with a reason in err (a step GPU the topology does not have, a bad list,
 * an allow-list that does not parse). */
int rdzv_bind_compute(const struct rdzv_topo *t, const struct rdzv_bind_req *req,
                      struct rdzv_bind_table **out, char *err, size_t errlen);

void rdzv_bind_table_destroy(struct rdzv_bind_table *tab); /* accepts NULL */

/* Which row task i uses, from its own CUDA_VISIBLE_DEVICES (task_visible;
 * NULL: unset). Slurm narrows a task's list with --gpus-per-task,
 * --gpu-bind or --ntasks-per-gpu; its entries are then mapped back to the
 * step's list: the same entry (Slurm's numbers or UUIDs), a UUID through
 * ident, or, when the step's list is renumbered (ConstrainDevices),
 * position p of the step's list. renumbered_per_task: this Slurm numbers
 * each task's list from 0 under ConstrainDevices (22.05), so a renumbered
 * entry names no step GPU and the task keeps its local-rank row.
 * Returns the row to use, NULL when the task's GPUs cannot be placed
 * (binding is then skipped for it); *how says why in words. */
enum rdzv_task_row {
	RDZV_ROW_RANK,      /* the task sees the step's list: its local-rank row */
	RDZV_ROW_OWN,       /* the row of the task's own GPUs */
	RDZV_ROW_RANK_NOTE, /* local-rank row, because the task's list cannot be mapped */
	RDZV_ROW_SKIP,      /* its GPUs cannot be placed: no binding for this task */
};

const struct rdzv_bind_row *rdzv_bind_task_row(const struct rdzv_bind_table *tab, size_t i,
                                               const char *task_visible,
                                               const struct rdzv_identity *ident,
                                               int renumbered_per_task,
                                               enum rdzv_task_row *how, char *why,
                                               size_t whylen);

/* The same from the task's GPUs as topology indices (its devices cgroup,
 * rdzv_identity_cgroup_gpus); GPUs outside the step are ignored. NULL
 * (RDZV_ROW_SKIP) when none is the step's. */
const struct rdzv_bind_row *rdzv_bind_task_row_gpus(const struct rdzv_bind_table *tab, size_t i,
                                                    const int *gpus, size_t n,
                                                    enum rdzv_task_row *how, char *why,
                                                    size_t whylen);

/* The node line and row i as text, as the helper, the golden tests and
 * --rdzv-bind=verbose print them. Return 0, or -1 when buf is too small. */
int rdzv_bind_format_node(const struct rdzv_bind_table *tab, char *buf, size_t len);
int rdzv_bind_format_row(const struct rdzv_bind_table *tab, size_t i, char *buf, size_t len);

/* In the task: what happened to its CPU binding. */
enum rdzv_cpu_outcome {
	RDZV_CPU_NOTHING,   /* the row has no CPUs (no GPU) */
	RDZV_CPU_BOUND,     /* bound to the row's CPUs (or would be, dry run) */
	RDZV_CPU_KEPT,      /* already narrower than the step (Slurm bound it): kept */
	RDZV_CPU_KEPT_FAR,  /* kept, and none of its CPUs is local to its GPU */
};

/* Bind the calling process to row i's CPUs unless something (Slurm's
 * task/affinity, cgroup, the user) already narrowed it below the step's
 * CPUs. dry_run: decide only. Returns 0 with *out set, or -1 with a reason. */
int rdzv_bind_apply_cpus(const struct rdzv_bind_table *tab, size_t i, int dry_run,
                         enum rdzv_cpu_outcome *out, char *err, size_t errlen);

/* The same for a row chosen by rdzv_bind_task_row. */
int rdzv_bind_apply_row(const struct rdzv_bind_table *tab, const struct rdzv_bind_row *r,
                        int dry_run, enum rdzv_cpu_outcome *out, char *err, size_t errlen);

/* The calling process's CPU affinity as a list ("0-7,16"): the step's CPUs
 * when called in slurmstepd. Returns 0, or -1 with a reason in err. */
int rdzv_affinity_cpulist(char *buf, size_t len, char *err, size_t errlen);

#endif
