/* master.h: which node runs rank 0, and what MASTER_ADDR says about it. */
#ifndef RDZV_MASTER_H
#define RDZV_MASTER_H

#include <stddef.h>

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

#endif
