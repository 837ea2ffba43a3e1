/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/step/: the step's plan: host lists, task layouts, node order,
 * MASTER_ADDR and the port, rank 0, heterogeneous steps, srun's command line
 * and what it hands the nodes, the interface to rank 0, the step's datagram
 * channel. Uses lib/common/. */
/* step.h: what one node knows about a step and what differs between its
 * tasks: the facts every mode fills variables from (modes.h, frameworks.h,
 * fill.h) and the plugin computes (spank/remote.c, spank/srun.c). */
#ifndef RDZV_STEP_H
#define RDZV_STEP_H

#include <stdint.h>

#include "hostlist.h"

/* What one node knows about the step, computed once per node (user_init). */
struct rdzv_megatron_domains;

struct rdzv_step {
	uint32_t job_id;        /* a heterogeneous step: the leader's (het.h) */
	uint32_t slurm_job_id;  /* slurmstepd's own job (S_JOB_ID, a het component's
	                         * own id): what every name root writes carries */
	uint32_t step_id;
	uint32_t nnodes;        /* nodes in the step */
	uint32_t node_id;       /* this node's index in the step's node list (SLURM_NODEID) */
	uint32_t node_rank;     /* this node's place in rank order (nodeorder.h): the
	                         * nodes holding lower ranks come first; GROUP_RANK,
	                         * NODE_RANK, CROSS_RANK. Equal to node_id up to Slurm
	                         * 25.11, not under 26.05's topology order */
	uint32_t ntasks;        /* tasks in the step */
	uint32_t task_offset;   /* a heterogeneous step (het.h): the global id of this
	                         * component's first task, added to Slurm's task ids
	                         * (the component's); 0 otherwise */
	int het;                /* 1: a heterogeneous step, numbered by het.h */
	uint32_t local_ntasks;  /* tasks on this node */
	char master_host[RDZV_HOST_MAX]; /* node running rank 0, as Slurm names it */
	char master_addr[RDZV_HOST_MAX]; /* what MASTER_ADDR gets */
	uint16_t port;
	char ifname[16];        /* the interface toward master_addr (netif.h), or "" */
	int gpus_on_node;       /* step's GPUs on this node; -1 unknown */
	int argc;               /* the step's command line (S_JOB_ARGV), copied; */
	char **argv;            /* NULL-terminated, may be NULL when unknown */
	char gpu_model[64];     /* the node's GPU model from the topology, or "" */
	uint32_t cpus_per_task; /* Slurm's CPUs per task (S_STEP_CPUS_PER_TASK); 0 unknown */
	uint32_t restart_count; /* SLURM_RESTART_COUNT of a requeued job; 0 otherwise */
	/* The step's environment (S_JOB_ENV in slurmstepd, environ in srun),
	 * borrowed for rdzv_mode_check_step only: set it just before the call
	 * and clear it after; NULL when unknown. Mode checks read from it what
	 * no SPANK item gives: SLURM_STEP_TASKS_PER_NODE (srun: its own
	 * SLURM_TASKS_PER_NODE, which srun rewrites for the step),
	 * SLURM_DISTRIBUTION, SLURM_DIST_PLANESIZE, TP_SIZE... */
	char **envp;
	/* NVLink domains (domain.h). nvlink_domain: the site's rule.
	 * On the nodes: domain[0] set when the node's domain is known (srun's
	 * map for block), with the step's tasks in it (domain_size) and the
	 * index of the node's first task among them (domain_base). In srun:
	 * md, the step's ranks by domain, for the whole-step check; NULL
	 * otherwise. */
	int nvlink_domain;
	int domain_exchange;    /* srun, nvml: the nodes will report their domains
	                         * and srun checks the groups then (spank/domains.c) */
	char domain[64];
	uint32_t domain_size, domain_base, domain_nodes;
	const struct rdzv_megatron_domains *md;
};

/* What differs between tasks of one node. */
struct rdzv_task {
	uint32_t rank;        /* global task id */
	uint32_t local_rank;  /* local task id */
	/* Entries in the task's own CUDA_VISIBLE_DEVICES, read in task_init
	 * (Slurm narrows it per task with --gpus-per-task or --gpu-bind, after
	 * user_init and before task_init); -1 when unset or unknown. */
	int visible_gpus;
};

#endif
