/* modes.h: the rendezvous modes (--rdzv=MODE). Adding a mode is one entry
 * in the table in modes.c plus its fill function. */
#ifndef RDZV_MODES_H
#define RDZV_MODES_H

#include <stddef.h>
#include <stdint.h>

#include "envset.h"
#include "hostlist.h"

/* What one node knows about the step, computed once per node (user_init). */
struct rdzv_megatron_domains;

struct rdzv_step {
	uint32_t job_id;
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

#define RDZV_MODE_ONE_TASK_PER_NODE 0x1u /* a launcher per node (torchrun) */
#define RDZV_MODE_REFUSES_LAUNCHERS 0x2u /* one task per rank: a framework's own
                                          * launcher under srun is refused (launcher.h) */

/* Mode-specific checks of the step as a whole (Megatron's layout, ...),
 * run once per node in slurmstepd and, where the facts exist, in srun before
 * launch. Returns 0 (fine), 1 (fine, with a warning for the user in err) or
 * -1 (refuse, with the reason in err). */
typedef int (*rdzv_mode_check_f)(const struct rdzv_step *step, char *err, size_t errlen);

struct rdzv_mode {
	const char *name;
	const char *summary;
	unsigned flags;
	/* Add the mode's variables for one task. NULL for "off". */
	int (*fill)(const struct rdzv_step *step, const struct rdzv_task *task,
	            struct rdzv_envset *env, char *err, size_t errlen);
	/* Whole-step check, NULL for modes without one. */
	rdzv_mode_check_f check;
	/* Variables added after binding, from the task's final environment:
	 * task->visible_gpus is then the count of its final
	 * CUDA_VISIBLE_DEVICES (JAX's device ids). NULL when none. */
	int (*fill_late)(const struct rdzv_step *step, const struct rdzv_task *task,
	                 struct rdzv_envset *env, char *err, size_t errlen);
	/* A step-wide note for --rdzv-verbose (why a variable was or was not
	 * set). Returns 1 with the note in buf, 0 when there is none. */
	int (*explain)(const struct rdzv_step *step, char *buf, size_t len);
	/* Where the mode tells ranks to meet; a user's export of these is kept
	 * and checked (rdzv_master_check_user). NULL when the mode has none. */
	const char *addr_var;      /* MASTER_ADDR */
	const char *port_var;      /* MASTER_PORT */
	const char *hostport_var;  /* JAX_COORDINATOR_ADDRESS ("host:port") */
};

/* The mode called name, or NULL. */
const struct rdzv_mode *rdzv_mode_find(const char *name);

/* "off, torch, torchrun, ..." for messages. */
const char *rdzv_mode_names(void);

/* All modes, terminated by an entry whose name is NULL. */
const struct rdzv_mode *rdzv_modes(void);

/* Checks a step against the mode's rules (e.g. one task per node) and the
 * mode's own check, with a message that tells the user what to change.
 * Returns 0, 1 when the step may run but err holds a warning the user
 * should see (once, not per task), or -1 when it must not run. */
int rdzv_mode_check_step(const struct rdzv_mode *mode, const struct rdzv_step *step,
                         char *err, size_t errlen);


/* Whether Megatron mode sets CUDA_DEVICE_MAX_CONNECTIONS=1: 1 (yes) or 0
 * (no), with the reason in why either way. Only tensor or context
 * parallelism > 1 given on the step's command line counts: without it (a
 * wrapper "srun bash train.sh" hides the flags) Megatron may run FSDP, whose
 * check refuses the variable. */
int rdzv_megatron_connections(const struct rdzv_step *step, char *why, size_t whylen);

/* The variables every torch-like mode sets (RANK, LOCAL_RANK, ...). Exposed
 * so that other modes (deepspeed, megatron) build on it. */
/* GLOO_SOCKET_IFNAME and NCCL_SOCKET_IFNAME (=NAME, exact) naming step->ifname,
 * as defaults, when it is known; every mode that meets at MASTER_ADDR adds them. */
/* RDZV_NVLINK_DOMAIN, RDZV_NVLINK_DOMAIN_SIZE, RDZV_NVLINK_DOMAIN_RANK when
 * the node's NVLink domain is known; nothing otherwise. */
struct rdzv_task;
int rdzv_fill_domain(const struct rdzv_step *step, const struct rdzv_task *t,
                     struct rdzv_envset *env, char *err, size_t errlen);
int rdzv_fill_netif(const struct rdzv_step *step, struct rdzv_envset *env, char *err,
                    size_t errlen);

int rdzv_fill_torch(const struct rdzv_step *step, const struct rdzv_task *task,
                    struct rdzv_envset *env, char *err, size_t errlen);

#endif
