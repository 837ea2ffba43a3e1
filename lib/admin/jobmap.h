/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/admin/: what admins get: the step's record, its metrics, DCGM's job map.
 * Uses lib/failure/, lib/common/. */
/* jobmap.h: DCGM-exporter's job-mapping files (dcgm_job_map_dir=).
 *
 * dcgm-exporter --hpc-job-mapping-dir DIR reads, at each scrape, every
 * regular file of DIR whose name is a GPU index (^[0-9]+(\.[0-9]+)?$, the
 * second number a MIG instance) and labels that GPU's metrics hpc_job=LINE
 * for each line (internal/pkg/transformation/hpc.go). The index is DCGM's
 * GPU id: NVML's order, PCI bus-id order.
 *
 * Several steps (and jobs) may hold one GPU, so each step leaves a claim,
 * DIR/.rdzv-claims/JOB.STEP: "PID START\nGPU GPU ...\n", with slurmstepd's
 * pid and its start time (/proc/PID/stat, field 22) so a reused pid is not
 * taken for it. A GPU's file is rebuilt from every claim that names it,
 * under DIR/.rdzv-claims/lock (flock), written to a temporary file and
 * renamed into place; removed when no claim names it. Only the GPUs of the
 * claims touched are rewritten: a file of a GPU no step of ours held is
 * left as it is. A claim whose slurmstepd is gone (killed) is swept by the
 * next claim or release on the node and by the job's epilog.
 * Everything is relative to DIR opened once without following links: DIR
 * is the admin's (rdzv_admin_dir_check), and nothing below it is followed. */
#ifndef RDZV_JOBMAP_H
#define RDZV_JOBMAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define RDZV_JOBMAP_GPUS_MAX 256
#define RDZV_JOBMAP_CLAIMS ".rdzv-claims"

/* This node's directory: dcgm_job_map_dir='s tmpl with %n as node (NULL:
 * none known), checked as the admin's (rdzv_admin_dir_check). 0, or -1
 * with why in err. */
int rdzv_jobmap_dir(const char *tmpl, const char *node, char *out, size_t len, char *err,
                    size_t errlen);

/* A claim's text: "PID START\nGPU GPU ...\n" (GPUs in order, each once).
 * parse: 0 with pid, start and gpus[] (1 for each GPU named), -1 for
 * anything else; format: the text's length, or -1 when len is too small. */
int rdzv_jobmap_claim_parse(const char *text, pid_t *pid, unsigned long long *start,
                            unsigned char gpus[RDZV_JOBMAP_GPUS_MAX]);
long rdzv_jobmap_claim_format(pid_t pid, unsigned long long start,
                              const unsigned char gpus[RDZV_JOBMAP_GPUS_MAX], char *buf,
                              size_t len);

/* The start time of process pid (clock ticks since boot, /proc/PID/stat
 * field 22) under root (NULL: "/"), or 0 when there is no such process. */
unsigned long long rdzv_proc_starttime(const char *root, pid_t pid);

/* Claim gpus[0..n) (DCGM indices) for job.step, held by slurmstepd pid
 * (its start time start), then rebuild those GPUs' files. Claims of dead
 * slurmstepds are swept first (their GPUs rebuilt too). proc_root: prefix
 * of /proc (NULL: "/"). 0, or -1 with why. */
int rdzv_jobmap_claim(const char *dir, const char *proc_root, uint32_t job, uint32_t step,
                      const int *gpus, size_t n, pid_t pid, unsigned long long start,
                      char *err, size_t errlen);

/* Drop job.step's claim and rebuild its GPUs' files; sweeps as above.
 * No claim is not an error. */
int rdzv_jobmap_release(const char *dir, const char *proc_root, uint32_t job, uint32_t step,
                        char *err, size_t errlen);

/* Sweep: drop claims whose slurmstepd is gone and, when job is not 0,
 * every claim of that job (its epilog: none of its steps runs any more),
 * rebuilding their GPUs' files. Returns the claims dropped, or -1. */
int rdzv_jobmap_sweep(const char *dir, const char *proc_root, uint32_t job, char *err,
                      size_t errlen);

#endif
