/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/domains/: NVLink domains: the setting, Slurm's blocks, the step's domain
 * map, the group check, a node's report. Uses lib/step/, lib/common/. */
/* domain.h: NVLink domains.
 *
 * On a GB200/GB300 NVL72 rack NVLink does not end at the node: up to 18
 * compute trays (each its own Linux node, 4 GPUs) share one NVLink domain.
 * Where a domain ends is told by the site (plugstack.conf nvlink_domain=):
 *   node   every node is its own domain (the default, and the only rule
 *          before the other two existed);
 *   block  Slurm's topology/block: one block (BlockName=) per domain, read by
 *          srun from slurmctld once per step (slurm_load_topo), the same
 *          blocks --segment keeps a job's segments inside;
 *   nvml   the GPUs' own fabric answer (nvmlDeviceGetGpuFabricInfoV: cluster
 *          UUID and clique), read on each node (lib/gpu/fabric.h).
 *
 * srun hands each node the step's map in RDZV_STEP_DOMAINS:
 *   "JOB.STEP:NAME=IDS[;NAME=IDS...]"
 * NAME a block's name, IDS the step's node ids (SLURM_NODEID, node list
 * order) in it as ranges ("0,2-3"). Every node of the step is in exactly one
 * domain; the map is refused, never guessed, otherwise. */
#ifndef RDZV_DOMAIN_H
#define RDZV_DOMAIN_H

#include <stddef.h>
#include <stdint.h>

#include "nodeorder.h"

#define RDZV_STEP_DOMAINS_VAR "RDZV_STEP_DOMAINS"
#define RDZV_DOMAIN_NAME_MAX 64
/* A step of more nodes is refused under block: nodeorder.h's
 * RDZV_STEP_NODES_MAX (Slurm's own bound). The map's text has no limit of
 * its own: it is sized from the step's nodes and domains. */
#define RDZV_DOMAIN_NODES_MAX RDZV_STEP_NODES_MAX
/* Hosts named by all blocks together: the cluster's nodes, which may be
 * more than a step's; four times the step's bound (Slurm's hostlist reads
 * at most 256K ranges between brackets, MAX_RANGES). Counted before any
 * block is expanded. */
#define RDZV_DOMAIN_HOSTS_MAX (4u * RDZV_STEP_NODES_MAX)

enum rdzv_nvlink_domain {
	RDZV_NVLINK_NODE = 0,
	RDZV_NVLINK_BLOCK,
	RDZV_NVLINK_NVML,
};

#define RDZV_NVLINK_DOMAIN_VALID "valid values are node, block, nvml"

/* "node", "block", "nvml". Returns 0 or -1. */
int rdzv_nvlink_domain_parse(const char *s, enum rdzv_nvlink_domain *out);
const char *rdzv_nvlink_domain_name(enum rdzv_nvlink_domain d);

/* A step's nodes and their domains. */
struct rdzv_domains {
	uint32_t nnodes;        /* the step's nodes, in node list order */
	uint32_t ndomains;
	uint32_t *node_domain;  /* [nnodes]: index into names */
	char (*names)[RDZV_DOMAIN_NAME_MAX]; /* [ndomains] */
	uint32_t *domain_nodes; /* [ndomains]: nodes of the whole domain (the block's
	                         * Nodes=), 0 unknown; not only the step's */
};

void rdzv_domains_free(struct rdzv_domains *d);

/* From the text Slurm prints for topology/block (scontrol show topology;
 * slurm_print_topo_info_msg): one line per block, "BlockName=b1
 * BlockIndex=0 Nodes=n[1,3] BlockSize=2"; "AggregatedBlock=" lines (the
 * larger BlockSizes=) are not domains and are skipped. step_nodelist is the
 * step's node list (the layout's, in node id order). A step node in no
 * block, a text with no block at all (another TopologyPlugin) and a
 * malformed line are refused, naming what is wrong. Returns 0 or -1. */
int rdzv_domains_from_blocks(const char *text, const char *step_nodelist,
                             struct rdzv_domains *d, char *err, size_t errlen);

/* RDZV_STEP_DOMAINS's text, malloc'd to its size into *text (the caller
 * frees it): any map of any step (O(nodes + domains)). Returns 0, or -1
 * (out of memory) with the reason and *text NULL. */
int rdzv_domains_text(uint32_t job_id, uint32_t step_id, const struct rdzv_domains *d,
                      char **text, char *err, size_t errlen);

/* The same text into buf. Returns 0, or -1 when it does not fit in len. */
int rdzv_domains_format(uint32_t job_id, uint32_t step_id, const struct rdzv_domains *d,
                        char *buf, size_t len);

/* Parse it strictly for a step of nnodes nodes (at most
 * RDZV_DOMAIN_NODES_MAX; the text of any length): every node id once, names
 * of host-name characters. job_id and step_id: what the text says (the
 * caller ignores a map of another step). O(text + nodes). Returns 0 or -1. */
int rdzv_domains_parse(const char *s, uint32_t nnodes, uint32_t *job_id, uint32_t *step_id,
                       struct rdzv_domains *d, char *err, size_t errlen);

/* A node's place in its domain: the domain's tasks in this step (size) and
 * the index of the node's first task among them (base), the domain's nodes
 * taken in rank order (order: nodeorder.h text, "" = list order), a node's
 * tasks after another's. tpn: SLURM_STEP_TASKS_PER_NODE. Returns 0 or -1. */
int rdzv_domain_place(const struct rdzv_domains *d, uint32_t node_id, const char *order,
                      const char *tpn, uint32_t *size, uint32_t *base, uint32_t *nodes,
                      char *err, size_t errlen);

/* The ranks of a group of Megatron's, in a step laid out as rank_node[]
 * (each rank's node id) with nodes in domains d: whether all of them sit in
 * one domain. A group is n ranks stride apart; every group of the step is
 * checked (the step's ranks split into groups as Megatron's RankGenerator
 * does: the group of rank r starts at r - ((r / stride) % n) * stride).
 * what: "tensor-parallel (TP=8, --tensor-model-parallel-size)". Refuses the
 * first group that spans domains, naming its ranks, their nodes and their
 * domains. node_names[nnodes] for messages. Returns 0 or -1. */
int rdzv_domain_check_groups(const struct rdzv_domains *d, uint32_t ntasks,
                             const uint32_t *rank_node, char *const *node_names,
                             uint64_t stride, uint64_t n, const char *what, char *err,
                             size_t errlen);

/* nvlink_domain=nvml across nodes: srun cannot see other nodes' GPUs, so
 * each node tells srun its domain before its tasks start and waits for
 * srun's verdict on the step's groups (only for a step whose Megatron groups
 * may cross nodes). srun exports RDZV_DOMAIN_ASK="JOB.STEP:PORT:NONCE"
 * (channel.h; a port of 0 is refused); a node sends
 *   "RDZVD1 DOMAIN JOB.STEP NONCE NODEID NAME"   (NAME "-": no fabric)
 * to SLURM_SRUN_COMM_HOST:PORT, again every half second until srun answers
 *   "RDZVD1 OK JOB.STEP NONCE" or "RDZVD1 REFUSE JOB.STEP NONCE\nMESSAGE". */
#define RDZV_DOMAIN_ASK_VAR "RDZV_DOMAIN_ASK"
#define RDZV_DOMAIN_DGRAM_MAX 2048

struct rdzv_domain_report {
	uint32_t job_id, step_id, node_id;
	uint64_t nonce;
	char name[RDZV_DOMAIN_NAME_MAX]; /* "" when the node has no fabric */
};

int rdzv_domain_report_format(const struct rdzv_domain_report *r, char *buf, size_t len);
int rdzv_domain_report_parse(const char *buf, size_t n, struct rdzv_domain_report *r);
/* ok: 1 OK, 0 REFUSE with msg (cut to what fits a datagram). */
int rdzv_domain_verdict_format(uint32_t job, uint32_t step, uint64_t nonce, int ok,
                               const char *msg, char *buf, size_t len);
/* Returns 1 (OK), 0 (REFUSE, msg written) or -1 (not a verdict of this step). */
int rdzv_domain_verdict_parse(const char *buf, size_t n, uint32_t job, uint32_t step,
                              uint64_t nonce, char *msg, size_t msglen);

#endif
