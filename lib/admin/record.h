/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/admin/: what admins get: the step's record, its metrics, DCGM's job map.
 * Uses lib/failure/, lib/common/. */
/* record.h: what a step got, kept after the job is gone. Each node of a
 * step with a mode writes one JSON record when the step ends
 * (slurm_spank_exit in slurmstepd, as root): the step's facts as the node
 * saw them (mode, rank 0's host and port, world size, versions, the NCCL
 * profile and a hash of what it resolved to), each local task's variables
 * with where each came from and what became of it (set, the user's value
 * kept, enforced over it), each task's CPUs, and each task's exit. A
 * site's record_dir= gets it as JOB.STEP.NODE.json; record_syslog= sends it
 * to syslog (tag rdzv). rdzv-report puts a step's records back together.
 *
 * Nodes share nothing during a step, so the step's record is the set of
 * its nodes' records; the step's outcome is every rank's exit, with the
 * time each was seen, the first failure first. */
#ifndef RDZV_RECORD_H
#define RDZV_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "envset.h"
#include "json.h"

#define RDZV_RECORD_FORMAT 1
/* Where rdzv-report looks without --dir (the example plugstack line's). */
#define RDZV_RECORD_DIR_DEFAULT "/var/log/spank-rdzv"
/* A node's record at most (the file and syslog alike); past it, tasks'
 * parts are left out and the record says how many. */
#define RDZV_RECORD_MAX (1u << 20)
/* The syslog copy at most: a larger record goes to syslog without the
 * tasks' parts (the file keeps them). */
#define RDZV_RECORD_SYSLOG_MAX 8192u
/* The tasks' parts wait in the socket until the step ends: room for 128
 * tasks' parts a node, asked for with SO_SNDBUF and so bounded by the
 * site's net.core.wmem_max (Debian's default, 208 KiB, holds 8 full parts;
 * parts are usually a few KiB). */
#define RDZV_RECORD_SOCKBUF (4u << 20)
/* One task's part at most. */
#define RDZV_RECORD_TASK_MAX (24u << 10)

/* A task's part: rank, local rank, CPUs (a list, or NULL unknown) and every
 * entry of env and late (either may be NULL) as name, value, source,
 * policy and outcome, into w (a fresh writer). */
void rdzv_record_task_json(struct rdzv_jw *w, uint32_t rank, uint32_t local_rank, const char *cpus,
                           const struct rdzv_envset *env, const struct rdzv_envset *late);

/* A hash of what a profile resolved to (each entry's name, value and
 * policy, in order): equal records ran with the same NCCL settings. */
uint64_t rdzv_record_env_hash(const struct rdzv_envset *env);

struct rdzv_record_exit {
	uint32_t rank;
	int status; /* wait(2) status */
	int64_t ms; /* when slurmstepd saw it: milliseconds since the epoch */
};

struct rdzv_record_node {
	uint32_t job, step;
	int het;              /* a heterogeneous step */
	uint32_t task_offset; /* its component's first global rank */
	const char *node;     /* this node's name in the step */
	uint32_t node_id, node_rank, nnodes, ntasks, local_ntasks;
	const char *mode;     /* NULL: no mode */
	const char *rank0_host, *master_addr;
	uint16_t port;
	const char *port_source;
	const char *plugin_version, *srun_version, *slurm_version; /* NULL unknown */
	const char *profile, *profile_default; /* NULL none */
	uint64_t profile_hash; /* with a profile */
	const char *bind_mode; /* NULL unknown */
	const char *error;     /* the node's refusal, or NULL */
	const char *gpu_fault, *gpu_fault_kind; /* the GPU fault a failing rank's node
	                                           found (gpuverdict.h), or NULL */
	int refused;           /* srun refused the step (srun.c) */
	const char *const *tasks; /* tasks' parts (valid JSON, checked) */
	size_t ntasks_parts, tasks_lost; /* tasks whose part never came */
	const struct rdzv_record_exit *exits;
	size_t nexits;
	int64_t start, end;   /* seconds since the epoch */
};

/* The node's record into w (a fresh writer of RDZV_RECORD_MAX). Returns 0,
 * 1 when parts were left out to stay within the limit, -1 out of memory. */
int rdzv_record_node_json(const struct rdzv_record_node *n, struct rdzv_jw *w);

/* A record's file name: JOB.STEP.NODE.json. -1 for a node name that is
 * empty, "." or "..", holds '/' or does not fit. */
int rdzv_record_name(uint32_t job, uint32_t step, const char *node, char *buf, size_t len);

/* The site's record_dir=: an absolute path, reached without a symbolic
 * link in its last part, a directory of root's that neither group nor
 * others can write. 0, or -1 with why. */
int rdzv_record_dir_check(const char *dir, char *err, size_t errlen);
/* The same check for another admin's directory, named as key= (metrics_dir). */
int rdzv_admin_dir_check(const char *key, const char *dir, char *err, size_t errlen);
/* The admin's directory dir opened once, each of its parts from / opened
 * with O_NOFOLLOW and checked on its descriptor (root's, closed to others;
 * a parent may be sticky and open, as /tmp): the descriptor, which the
 * caller uses with openat and closes, or -1 with why (naming key=dir and
 * the part at fault). */
int rdzv_admin_dir_open(const char *key, const char *dir, char *err, size_t errlen);

/* Write text[0..n) as dir/name: a new temporary file (O_EXCL, O_NOFOLLOW,
 * mode 0640) renamed into place, relative to dir opened once (O_DIRECTORY,
 * O_NOFOLLOW), so that nothing a user made is followed. 0 or -1 with why. */
int rdzv_record_write(const char *dir, const char *name, const char *text, size_t n,
                      char *err, size_t errlen);

#endif
