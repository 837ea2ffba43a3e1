/* SPDX-License-Identifier: GPL-2.0-or-later */
/* preflight.h: rdzv-preflight's pieces (doc/preflight.md).
 *
 *   main.c     options, the phases, exit status
 *   report.c   what a rank sees (environment, host, CPUs, NICs, GPU) and
 *              its text form, the cross-rank checks, the verdict
 *   ring.c     the TCP ring: link bandwidth and a checked all-reduce
 *   gpu.c      CUDA/NCCL: device probe, communicator, all-reduce sweep
 *              (stubs without HAVE_CUDA_NCCL)
 *   summary.c  rank 0's one-screen summary and --json
 *   fabric.c   each node's NVLink fabric through NVML (local rank 0 reads it;
 *              lib/gpu/fabric.c), and --fabric; on nodes with AMD GPUs their
 *              xGMI hives through ROCm SMI (lib/gpu/rsmi.c), and --xgmi
 *
 * Ranks exchange three blobs through the bootstrap (helpers/preflight/bootstrap.h):
 * phase 1 each rank's report, phase 2 rank 0's plan (ring addresses, GPU
 * or not, the NCCL unique id), phase 3 each rank's results. Every rank
 * computes the verdict from the same gathered data, so all exit alike. */
#ifndef RDZV_PREFLIGHT_H
#define RDZV_PREFLIGHT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bootstrap.h"
#include "util.h"

#define PF_TAG "rdzv-preflight"
#define PF_HOST 256
#define PF_TEXT 512
#define PF_LIST 1024
#define PF_MAX_VARS 32
#define PF_VALUE 256
#define PF_MAX_PROBLEMS 8
#define PF_MAX_FABRIC 8    /* GPU lines per node (NVL72 trays have 4, HGX 8) */
#define PF_MAX_XGMI 8      /* AMD GPU lines per node (an MI250X node has 8 GCDs) */
#define PF_MAX_SIZES 40
#define PF_NCCL_ID_HEX 257 /* NCCL_UNIQUE_ID_BYTES (128) as hex, with NUL */

/* nccl-tests style: a failed call is recorded with the host, file:line, the
 * call and the library's error string. */
#define PF_FAILF(res, ...) pf_fail_at((res), __FILE__, __LINE__, __VA_ARGS__)

struct pf_opts {
	int cpu_only;        /* --cpu */
	int gpu_required;    /* --gpu */
	int json;            /* --json */
	int verbose;         /* --verbose */
	unsigned timeout_s;  /* --timeout */
	uint64_t min_bytes;  /* --min-bytes */
	uint64_t max_bytes;  /* --max-bytes */
	unsigned iters;      /* --iters */
	uint64_t ring_bytes; /* --ring-bytes */
	double outlier;      /* --outlier: below this fraction of the median */
};

/* The rendezvous variables, as a training script would read them. */
struct pf_env {
	uint32_t rank, world, local_rank, local_world;
	char master_addr[PF_HOST];
	uint16_t master_port;
	char session[RDZV_BOOT_SESSION_MAX]; /* SLURM_JOB_ID.SLURM_STEP_ID or "" */
};

struct pf_var {
	char name[64];
	char value[PF_VALUE];
};

/* What one rank sees (phase 1). */
struct pf_report {
	uint32_t rank, world, local_rank, local_world;
	char host[PF_HOST];
	char master_addr[PF_HOST];
	uint16_t master_port;
	uint16_t link_port;
	char cpus[PF_LIST];          /* affinity as a list */
	char nics[PF_LIST];          /* interfaces up, "eth0=10.0.0.1,ib0" */
	char cvd[PF_TEXT];           /* CUDA_VISIBLE_DEVICES; "" unset */
	int cvd_set;
	int gpu_count;               /* devices CUDA shows; -1: not probed */
	int gpu_index;               /* device this rank would use; -1: none */
	char gpu_busid[32];
	char gpu_name[128];
	char gpu_note[PF_TEXT];      /* why no GPU, or what was checked */
	size_t nvars;
	struct pf_var vars[PF_MAX_VARS]; /* NCCL_*, UCX_NET_DEVICES, CUDA_DEVICE_ORDER */
	size_t nproblems;
	char problems[PF_MAX_PROBLEMS][PF_TEXT]; /* local checks that failed */
	size_t nnet;                 /* NIC variables naming devices this host lacks: */
	char net[PF_MAX_PROBLEMS][PF_TEXT]; /* a failure when NCCL runs, else a warning */
	int fabric_read;             /* local rank 0 on the GPU path read the node's fabric */
	int fabric_ok;               /* ready for multi-node NVLink (fabric.h's verdict) */
	char fabric_domain[PF_TEXT]; /* "CLUSTER.clique", "none", "mixed: ...", "no NVML: ..." */
	char fabric_why[PF_TEXT];    /* why not ready */
	size_t nfabric;
	char fabric[PF_MAX_FABRIC][PF_TEXT]; /* one line per GPU */
	int xgmi_read;               /* local rank 0 read ROCm SMI on a node with AMD GPUs */
	int xgmi_ok;                 /* every GPU listed, none with xGMI errors */
	char xgmi_hive[PF_TEXT];     /* "0x<hive>", "none", "several: ...", "no ROCm SMI: ..." */
	char xgmi_why[PF_TEXT];      /* why not ok */
	size_t nxgmi;
	char xgmi[PF_MAX_XGMI][PF_TEXT]; /* one line per AMD GPU */
};

/* A node's GPU table in a report: NVML's NVLink fabric (fabric_*) and ROCm
 * SMI's xGMI (xgmi_*) have the same fields (read, a verdict, the node's
 * domain or hive, why not ok, one line per GPU), which travel and print
 * alike. Where each lies in struct pf_report, and its names on the wire
 * and in the JSON (an object named line_key). pf_gpu_tables (report.c)
 * lists both, in the order they travel and print. */
struct pf_gpu_table {
	const char *line_key, *ok_key, *node_key, *why_key; /* the wire's keys */
	const char *json_node, *json_ok;                    /* the JSON's names */
	size_t read_at, ok_at, node_at, why_at, n_at, lines_at; /* offsetof(struct pf_report) */
	size_t max;                                              /* lines at most */
};
#define PF_GPU_TABLES 2
extern const struct pf_gpu_table pf_gpu_tables[PF_GPU_TABLES];

typedef char pf_text[PF_TEXT];
/* The field of report r at offset at (a pf_gpu_table's), as a type *. */
#define PF_AT(r, at, type) ((type *)(void *)((char *)(r) + (at)))
#define PF_CONST_AT(r, at, type) ((const type *)(const void *)((const char *)(r) + (at)))
/* GPU line i of table t in report r (read only). */
#define PF_GPU_LINE(r, t, i) PF_CONST_AT(r, (t)->lines_at + (i) * PF_TEXT, char)

/* Rank 0's decisions (phase 2). */
struct pf_plan {
	int gpu;                     /* run the NCCL path */
	int gpu_fail;                /* not running it is a failure (--gpu, mixed) */
	char gpu_why[PF_TEXT];       /* why (not) */
	char nccl_id[PF_NCCL_ID_HEX];
	uint32_t world;
	char (*addr)[RDZV_BOOT_ADDR_MAX]; /* where each rank's ring listener is */
	uint16_t *port;
};

struct pf_size {
	uint64_t bytes;
	double us;      /* per iteration */
	double algbw, busbw;
	int ok;         /* result checked */
};

/* What one rank measured (phase 3). */
struct pf_result {
	int ring_ok;
	char ring_err[PF_TEXT];
	double link_gbps;        /* to this rank from its predecessor */
	double ring_seconds;     /* per all-reduce */
	double ring_algbw, ring_busbw;
	uint64_t ring_bytes;
	int gpu_ran, gpu_ok;
	char gpu_err[PF_TEXT];
	size_t nsizes;
	struct pf_size size[PF_MAX_SIZES];
	double node_busbw;       /* intra-node all-reduce at the largest size; <0 none */
};

/* The verdict: one line per check. */
enum pf_status { PF_PASS, PF_WARN, PF_SKIP, PF_FAIL };

#define PF_MAX_CHECKS 10
#define PF_MAX_DETAILS 24

struct pf_check {
	const char *name;
	enum pf_status status;
	char text[PF_TEXT];
	size_t ndetails;
	char details[PF_MAX_DETAILS][PF_TEXT]; /* per rank or node, failures first */
};

struct pf_verdict {
	size_t nchecks;
	struct pf_check check[PF_MAX_CHECKS];
	int failed;
};

/* Everything rank 0 prints. */
struct pf_run {
	const struct pf_opts *opts;
	const struct pf_env *env;
	uint32_t world;
	struct pf_report *reports; /* world entries, NULL before phase 1 */
	struct pf_result *results; /* world entries, NULL before phase 3 */
	const struct pf_plan *plan;
	double join_seconds;
	char fatal[1024];          /* the phase that failed and why; "" none */
	unsigned strangers;        /* connections rank 0 refused */
	char master_note[PF_TEXT]; /* rank 0: MASTER_ADDR is not local */
};

/* report.c */
int pf_env_read(struct pf_env *e, char *err, size_t errlen);
void pf_report_collect(const struct pf_env *e, struct pf_report *r);
void pf_report_problem(struct pf_report *r, const char *fmt, ...) RDZV_PRINTF(2, 3);
void pf_report_net(struct pf_report *r, const char *fmt, ...) RDZV_PRINTF(2, 3);
int pf_report_encode(const struct pf_report *r, char **out, size_t *len);
int pf_report_decode(const char *text, size_t len, struct pf_report *r, char *err, size_t errlen);
int pf_plan_encode(const struct pf_plan *p, char **out, size_t *len);
/* p->world set, p zeroed or from an earlier decode (its arrays are freed). */
int pf_plan_decode(const char *text, size_t len, struct pf_plan *p, char *err, size_t errlen);
void pf_plan_free(struct pf_plan *p);
int pf_result_encode(const struct pf_result *r, char **out, size_t *len);
int pf_result_decode(const char *text, size_t len, struct pf_result *r, char *err, size_t errlen);
void pf_result_init(struct pf_result *r);
void pf_fail_at(char *buf, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Number the nodes (distinct hosts) in order of their first rank: idx[r]
 * is rank r's node. Returns the node count. */
uint32_t pf_node_map(const struct pf_report *reps, uint32_t world, uint32_t *idx);
/* Where Slurm would have put rank r (block layout), for naming a rank that
 * never arrived; "" when unknown. */
void pf_expected_host(uint32_t rank, char *buf, size_t len);
/* MASTER_ADDR names an address of this host? 1 yes, 0 no (why in note). */
int pf_master_is_local(const char *addr, char *note, size_t notelen);
void pf_verdict_compute(const struct pf_run *run, struct pf_verdict *v);

/* ring.c: fills res (ring_*); never fails the program, only the check. */
void pf_ring_run(int lfd, const struct pf_env *e, const struct pf_report *reps,
                 const struct pf_plan *plan, uint64_t bytes, int64_t deadline,
                 struct pf_result *res);

/* gpu.c */
void pf_gpu_probe(const struct pf_env *e, struct pf_report *r);
int pf_gpu_unique_id(char *hex, size_t len, char *err, size_t errlen);
void pf_gpu_run(const struct pf_env *e, const struct pf_opts *o, const struct pf_report *reps,
                const struct pf_plan *plan, int64_t deadline, struct pf_result *res);
const char *pf_gpu_build(void); /* "CUDA x.y, NCCL a.b.c" or "without CUDA/NCCL" */

/* fabric.c: the node's NVLink fabric into r (NVML from $RDZV_NVML_LIBRARY,
 * else libnvidia-ml.so.1); --fabric prints it alone (exit 0 read, 1 not). */
void pf_fabric_collect(struct pf_report *r);
int pf_fabric_print(FILE *f);

/* --node: the plugin's node check (health_check=) with plugstack.conf's
 * rdzv.so settings (plugstack NULL: next to $SLURM_CONF, else
 * /etc/slurm/plugstack.conf) for node name (NULL: $SLURMD_NODENAME, else
 * the short host name). One line on out; 0 healthy, 1 a fault, 3 the check
 * ran out of time (health_timeout=), 2 usage. */
int pf_node_check(const char *plugstack, const char *name, FILE *out);

/* fabric.c: the node's AMD GPUs and their xGMI hives into r (ROCm SMI from
 * $RDZV_RSMI_LIBRARY, else librocm_smi64.so.1). On a node whose PCI bus
 * under sysfs (NULL: /sys) shows no AMD GPU, ROCm SMI is not loaded and
 * nothing is recorded, so NVIDIA nodes report as before. --xgmi prints it
 * alone, reading ROCm SMI whatever the bus shows (exit 0 read, 1 not). */
void pf_xgmi_collect(struct pf_report *r, const char *sysfs);
int pf_xgmi_print(FILE *f, const char *sysfs);

/* summary.c */
void pf_summary_print(FILE *f, const struct pf_run *run, const struct pf_verdict *v);
void pf_json_print(FILE *f, const struct pf_run *run, const struct pf_verdict *v);

#endif
