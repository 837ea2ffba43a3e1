/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/gpu/: the GPU vendors' libraries (NVML, ROCm SMI, opened at run time),
 * the NVLink fabric, the kernel's GPU fault lines (Xid). Uses lib/common/. */
/* fabric.h: each GPU's NVLink fabric membership, read through NVML
 * (libnvidia-ml.so.1, loaded with dlopen only when asked: nothing links
 * NVML, and a node without the driver loads nothing).
 *
 * What NVML says (nvml.h, "GPU Fabric"): a GPU of a multi-node NVLink
 * system (GB200 NVL72, GH200 NVL32) is registered by the fabric manager
 * into one NVLink domain, named by a cluster UUID, and one partition of it,
 * the clique. GPUs can reach each other over NVLink across nodes only when
 * they share both. A registration has a state (not supported / not started
 * / in progress / completed), a status (an nvmlReturn_t: why a registration
 * failed) and, from the versioned call on, a health mask.
 *
 * Struct versions, and which call reads each (NVML_STRUCT_VERSION(name, v)
 * is sizeof | v << 24):
 *   v1  nvmlGpuFabricInfo_t through nvmlDeviceGetGpuFabricInfo (R535+):
 *       clusterUuid[16], status, cliqueId, state; no version field, no health
 *   v2  nvmlGpuFabricInfo_v2_t (0x02000024) through
 *       nvmlDeviceGetGpuFabricInfoV (R550+): v1 after a version field, plus
 *       healthMask
 *   v3  nvmlGpuFabricInfo_v3_t (0x03000028): v2 plus healthSummary
 * The newest is asked first; NVML_ERROR_ARGUMENT_VERSION_MISMATCH steps
 * down one version, and an absent V call or NOT_SUPPORTED from it falls
 * back to the v1 call. There is no versioned v1: NVIDIA numbered the
 * versioned struct from 2 (the unversioned one is the first).
 *
 * Health mask (nvml.h NVML_GPU_FABRIC_HEALTH_MASK_*): 2-bit fields at bits
 * 0 (degraded bandwidth), 2 (route recovery in progress), 4 (route
 * unhealthy), 6 (access timeout recovery in progress), each 0 = not
 * supported, 1 = true (the fault), 2 = false; and a 4-bit field at bit 8,
 * incorrect configuration: 0 not supported, 1 none, 2 wrong system GUID,
 * 3 wrong chassis serial number, 4 no partition, 5 insufficient NVLinks. */
#ifndef RDZV_FABRIC_H
#define RDZV_FABRIC_H

#include <stddef.h>

#include "gpulib.h"

#define RDZV_FABRIC_GPUS_MAX 64    /* GPUs read per node (NVL72 trays hold 4) */
#define RDZV_FABRIC_UUID_TEXT 37   /* 8-4-4-4-12 and NUL */

enum rdzv_fabric_state {
	RDZV_FABRIC_NOT_SUPPORTED = 0,
	RDZV_FABRIC_NOT_STARTED = 1,
	RDZV_FABRIC_IN_PROGRESS = 2,
	RDZV_FABRIC_COMPLETED = 3,
};

/* NVML return codes named in messages (nvml.h nvmlReturn_t). */
#define RDZV_NVML_SUCCESS 0
#define RDZV_NVML_ERROR_NOT_SUPPORTED 3
#define RDZV_NVML_ERROR_NO_PERMISSION 4
#define RDZV_NVML_ERROR_FUNCTION_NOT_FOUND 13
#define RDZV_NVML_ERROR_ARGUMENT_VERSION_MISMATCH 25

struct rdzv_fabric_gpu {
	unsigned index;            /* NVML's index */
	char uuid[96];             /* "GPU-..." or "" */
	char busid[32];            /* "00000000:1B:00.0" or "" */
	int query_rc;              /* nvmlReturn_t of the fabric query (0: read) */
	int skipped;               /* handle refused (another job's GPU under
	                              ConstrainDevices): not this step's, not read */
	unsigned version;          /* struct that answered: 1, 2 or 3; 0 none */
	unsigned char cluster[16]; /* cluster UUID */
	unsigned clique;
	unsigned state;            /* enum rdzv_fabric_state */
	int status;                /* nvmlReturn_t of the registration */
	int have_health;           /* v2+: health_mask is NVML's */
	unsigned health_mask;
	int have_summary;          /* v3: summary is NVML's */
	unsigned summary;          /* 0 n/a, 1 healthy, 2 unhealthy, 3 limited capacity */
};

struct rdzv_fabric {
	unsigned n;                /* GPUs NVML lists (at most RDZV_FABRIC_GPUS_MAX) */
	unsigned total;            /* what nvmlDeviceGetCount said */
	struct rdzv_fabric_gpu gpu[RDZV_FABRIC_GPUS_MAX];
};

/* Load NVML from library (an absolute path, or NULL / "" for the soname,
 * found the way the dynamic linker finds it), read every GPU's fabric info,
 * shut NVML down and unload it. A GPU whose fabric query fails is recorded
 * (query_rc), not an error. Returns 0, or -1 with the reason in err: NVML
 * not loadable ("no NVML: ..."), a missing entry point, or nvmlInit /
 * nvmlDeviceGetCount / nvmlDeviceGetHandleByIndex failing (the call and
 * NVML's error named). The caller decides who may name library: the plugin
 * takes it from plugstack.conf only (nvml_library=). */
int rdzv_fabric_read(const char *library, struct rdzv_fabric *f, char *err, size_t errlen);

/* "8-4-4-4-12" lower-case hex of a cluster UUID into buf (at least
 * RDZV_FABRIC_UUID_TEXT bytes). */
void rdzv_fabric_uuid_text(const unsigned char uuid[16], char *buf, size_t len);

/* "not supported", "not started", "in progress", "completed", "state N". */
const char *rdzv_fabric_state_name(unsigned state);


/* The faults a health mask (and a v3 health summary, when have_summary)
 * report, as "degraded bandwidth, route unhealthy" into buf ("" when none).
 * Returns how many. */
int rdzv_fabric_health_faults(unsigned mask, int have_summary, unsigned summary, char *buf,
                              size_t len);

/* "GPU 0 (00000000:1B:00.0)" for messages. */
void rdzv_fabric_gpu_name(const struct rdzv_fabric_gpu *g, char *buf, size_t len);

/* One line about g, as rdzv-preflight prints it:
 * "GPU 0 (00000000:1B:00.0): cluster 3f2a...-..., clique 7, state completed, health ok". */
void rdzv_fabric_gpu_line(const struct rdzv_fabric_gpu *g, char *buf, size_t len);

/* The node's NVLink domain: the cluster UUID and clique every read GPU
 * shares. Returns 1 with them, 0 when no GPU is in a fabric (every state
 * not supported, or no GPU), -1 when the GPUs answer differently: err names
 * each GPU with its cluster and clique, or the GPU whose registration is
 * not complete (mixed answers are named, never guessed). */
int rdzv_fabric_domain(const struct rdzv_fabric *f, unsigned char cluster[16],
                       unsigned *clique, char *err, size_t errlen);

/* Ready for multi-node NVLink: at least one GPU read, and every read GPU
 * registered (state completed, status success) with no health fault, all
 * in one domain. Returns 0, or -1 with every reason (GPU and fault) in err,
 * separated by "; ". */
int rdzv_fabric_mnnvl_ready(const struct rdzv_fabric *f, char *err, size_t errlen);

/* The node's NVLink domain as one name, "CLUSTER-UUID.CLIQUE": the one
 * form wherever a node's domain is written (the tasks' variable, the node's
 * report to srun, messages, rdzv-preflight). '.' because the name travels
 * where only letters, digits, '.', '_' and '-' are taken (domain.h).
 * Returns rdzv_fabric_domain's answer: 1 with the name in buf (at least
 * RDZV_FABRIC_DOMAIN_TEXT bytes), 0 no GPU in a fabric (buf ""), -1 the
 * GPUs disagree (err names them). */
#define RDZV_FABRIC_DOMAIN_TEXT (RDZV_FABRIC_UUID_TEXT + 12)
int rdzv_fabric_domain_name(const struct rdzv_fabric *f, char *buf, size_t len, char *err,
                            size_t errlen);

/* NVML read at most once per node and step: the first call reads (some
 * 20 KiB, kept off the caller's stack), later calls with the same library
 * answer from what was read, failure included. A node's domain
 * (nvlink_domain=nvml) and its MNNVL readiness ("require mnnvl") are then
 * one read, not two. Zero-initialise; rdzv_fabric_once_free at the end. */
struct rdzv_fabric_once {
	int done;                  /* read attempted */
	char library[1024];        /* the library it was read from ("" the soname) */
	char why[512];             /* rdzv_fabric_read's reason, when it failed */
	struct rdzv_fabric *f;     /* NULL when the read failed */
};

/* The node's fabric, or NULL with rdzv_fabric_read's reason in err. */
const struct rdzv_fabric *rdzv_fabric_read_once(struct rdzv_fabric_once *o, const char *library,
                                                char *err, size_t errlen);
void rdzv_fabric_once_free(struct rdzv_fabric_once *o);

/* This node's NVLink domain under nvlink_domain=nvml, from NVML read once
 * (o, library as rdzv_fabric_read): domain gets the name (or "" when the
 * node has none), note what --rdzv-verbose says about it. A node without
 * NVML or without a GPU in a fabric has no domain: 0 with the note. GPUs
 * that answer differently refuse the step: -1, err naming each one and
 * node (for the message). */
int rdzv_fabric_node_domain(struct rdzv_fabric_once *o, const char *library, const char *node,
                            char *domain, size_t dlen, char *note, size_t nlen, char *err,
                            size_t errlen);

#endif
