/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/failure/: how failures travel and are judged: a failed rank's report,
 * liveness, the collective grace, hang dumps, a GPU fault's verdict. Uses
 * lib/modes/, lib/step/, lib/gpu/, lib/common/. */
/* gpuverdict.h: the verdict names the GPU fault. When a rank fails, its
 * node's slurmstepd (task_exit, as root) looks once at what the GPU drivers
 * reported since the step started (gpufault.h: the kernel log from the
 * step's start, AMD's RAS counts against their value then), maps the worst
 * report's PCI address to Slurm's GPU number and the rank bound to it, and
 * sends it to srun in a datagram of its own, before the failure report:
 *   RDZVG1 JOB.STEP NONCE NODE GPU RANK XID FAULT BEFORE_MS PCI ACTION UE\nMEANING
 * (GPU: -1 none of the node's, -2 unknown; RANK: -1 unknown, -2 a GPU
 * that is not the step's; XID 0: a RAS count; FAULT 1: the node's;
 * BEFORE_MS: how long before the rank's exit the driver logged it, -1
 * unknown). srun of the previous release drops a datagram it does not know
 * (its decoder is strict), and a node of the previous release sends none:
 * srun then says what it said before. srun prints it first:
 *   rdzv: GPU 1 of node n2 (rank 5): Xid 79, GPU has fallen off the bus, 0.4 s before rank 5 exited: a node fault
 * Plain C, no spank.h; uses lib/common and lib/gpu. */
#ifndef RDZV_GPUVERDICT_H
#define RDZV_GPUVERDICT_H

#include <stddef.h>
#include <stdint.h>

#include "gpufault.h"
#include "hostlist.h"

struct rdzv_gpu_report {
	uint32_t job_id, step_id;
	uint64_t nonce;
	char node[RDZV_HOST_MAX];
	int gpu;                  /* Slurm's GPU number on the node; -1 not one of the
	                             step's; -2 not known (no identity chain) */
	int64_t rank;             /* the rank bound to it; -1 unknown; -2 none: a GPU
	                             of the node that is not the step's */
	struct rdzv_gpu_fault f;
	long before_ms;           /* -1 unknown */
};

#define RDZV_GPU_DGRAM_MAX (RDZV_HOST_MAX + 256 + RDZV_XID_MEANING_MAX)

/* Returns the length, or -1 when it does not fit. */
int rdzv_gpu_report_encode(const struct rdzv_gpu_report *r, char *buf, size_t len);
/* Strict: every field. 0 or -1. */
int rdzv_gpu_report_decode(const char *buf, size_t n, struct rdzv_gpu_report *r);

/* Whether a is the worse of two reports (a node fault first). */
int rdzv_gpu_report_worse(const struct rdzv_gpu_report *a, const struct rdzv_gpu_report *b);

/* srun's line (no newline) for a report, failed_rank the rank whose exit
 * srun names (-1 unknown). 0, or -1 when buf is short. */
int rdzv_gpu_report_format(const struct rdzv_gpu_report *r, int64_t failed_rank, char *buf,
                           size_t len);

/* The kind for rdzv_gpu_faults_total{kind=}: "xid_node", "xid_app",
 * "ras". */
const char *rdzv_gpu_report_kind(const struct rdzv_gpu_report *r);

#endif
