/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/step/: the step's plan: host lists, task layouts, node order,
 * MASTER_ADDR and the port, rank 0, heterogeneous steps, srun's command line
 * and what it hands the nodes, the interface to rank 0, the step's datagram
 * channel. Uses lib/common/. */
/* master.h: which node runs rank 0, and what MASTER_ADDR says about it. */
#ifndef RDZV_MASTER_H
#define RDZV_MASTER_H

#include <stddef.h>
#include <stdint.h>

#include "hostlist.h"

/* The node running global task 0 of the step.
 * - distribution "arbitrary*": the first host of the hostfile (SLURM_HOSTFILE,
 *   read by the caller as the user, never as root): srun lays task i on
 *   line i. hostfile_line is that file's first non-comment line.
 * - every other distribution (block, cyclic, plane, and their :* forms):
 *   node 0 of the step's node list, which always holds task 0.
 * Reads only the first host: no expansion of the list. Returns 0 or -1. */
int rdzv_master_host(const char *step_nodelist, const char *distribution,
                     const char *hostfile_line, char *host, size_t hostlen,
                     char *err, size_t errlen);

/* First host named in a hostfile's text (comments "#...", blank lines and
 * "*N" repeat suffixes skipped). Returns 0 or -1. */
int rdzv_hostfile_first(const char *text, char *host, size_t hostlen,
                        char *err, size_t errlen);

/* How MASTER_ADDR is formed (plugstack master_addr=). */
enum rdzv_addr_form {
	RDZV_ADDR_NAME, /* the node name as Slurm knows it (default) */
	RDZV_ADDR_IP,   /* the address the name resolves to on this node */
};

/* Resolve host once (per node per step, never per task) and write what
 * MASTER_ADDR gets into out. Fails with a message that says the name does
 * not resolve: a rendezvous would otherwise hang in init_process_group. */
int rdzv_master_addr(const char *host, enum rdzv_addr_form form, char *out,
                     size_t outlen, char *err, size_t errlen);

/* The same, also giving the first address host resolves to (what a rank's
 * connect() tries first) in sa/salen (salen 0 when it does not fit), so that
 * the route to it is looked up without resolving the name again. */
struct sockaddr_storage;
int rdzv_master_addr_sa(const char *host, enum rdzv_addr_form form, char *out, size_t outlen,
                        struct sockaddr_storage *sa, unsigned *salen, char *err,
                        size_t errlen);

/* The step plan: what srun (the local context) decided for the step, handed
 * to every node in the step's environment (RDZV_STEP_PLAN_VAR) so that nodes
 * never derive different answers: "JOB.STEP:PORT:SOURCE:HOST[:ORDER]",
 * SOURCE being "option" (--rdzv-port) or "derived", HOST the node running
 * task 0 (empty when srun could not learn it), ORDER present when srun read
 * the step's layout from slurmctld: "L" followed by the step's node ids in
 * rank order (nodeorder.h; "L" alone: the node list order). Without ORDER
 * every node takes its SLURM_NODEID as its place and node 0 of
 * SLURM_STEP_NODELIST as rank 0's node (right up to Slurm 25.11, and on 26.05
 * without a topology plugin), and the node that runs task 0 checks it. The
 * job and step ids tie the plan to one step: a plan inherited by a step
 * launched from inside another step is not that step's and is ignored. */
#define RDZV_STEP_PLAN_VAR "RDZV_STEP_PLAN"

struct rdzv_plan {
	uint32_t job_id, step_id;
	uint16_t port;
	int port_from_option;      /* 1: --rdzv-port; 0: derived in srun */
	char host[RDZV_HOST_MAX];  /* the node of rank 0, as Slurm names it, or "" */
	int order_known;           /* 1: srun read the step's layout */
	const char *order;         /* node ids in rank order (nodeorder.h), "" for the
	                            * list order; points into the parsed text (or the
	                            * caller's string when formatting); NULL unknown */
};

/* Write the plan's text into buf. Returns 0, or -1 when it does not fit. */
int rdzv_plan_format(const struct rdzv_plan *p, char *buf, size_t len);

/* The plan's text, malloc'd to its size (the caller frees it): any node
 * order's length. NULL when out of memory. */
char *rdzv_plan_text(const struct rdzv_plan *p);

/* Parse a plan strictly (decimal ids, a port RDZV_PORT_MIN..MAX, a known
 * source, a host of valid characters or empty, an order of digits, ',' and
 * '-' of any length: rdzv_order_position checks it against the step).
 * Returns 0 or -1 naming the bad part. */
int rdzv_plan_parse(const char *s, struct rdzv_plan *p, char *err, size_t errlen);

/* Where srun's own command line puts an arbitrary layout: the value of the
 * last -w/--nodelist (a host list, or a file when it holds a '/'), or of
 * -F/--nodefile (a file). argv is srun's (getopt_long with "+": options end
 * at the first word that is not one, or at "--"; long options may be
 * abbreviated to a unique prefix of srun's). Returns 1 with the value in
 * out and *is_file set, 0 when neither option is given, -1 when the value
 * does not fit or an option lacks its value. */
int rdzv_srun_arg_nodelist(int argc, char *const *argv, char *out, size_t outlen,
                           int *is_file, char *err, size_t errlen);

/* (srun's option table: srunargs.h) */

/* A MASTER_ADDR (or PET_MASTER_ADDR, or the host of JAX_COORDINATOR_ADDRESS)
 * the user exported, checked where the plugin would check its own: it must
 * resolve on this node, and to an address of rank 0's node (master_host):
 * its name, or an address that name resolves to. Anything else makes ranks
 * wait for a rendezvous store nobody serves. var names the variable in
 * messages. Returns 0 or -1 with the reason. */
int rdzv_master_check_user(const char *var, const char *value, const char *master_host,
                           char *err, size_t errlen);

/* Split "host:port" or "[v6]:port" (JAX_COORDINATOR_ADDRESS) into host and
 * port (RDZV_PORT_MIN..MAX). Returns 0 or -1. */
int rdzv_hostport_split(const char *s, char *host, size_t hostlen, uint16_t *port,
                        char *err, size_t errlen);

#endif
