/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/gpu/: the GPU vendors' libraries (NVML, ROCm SMI, opened at run time),
 * the NVLink fabric, the kernel's GPU fault lines (Xid). Uses lib/common/. */
/* rsmi.h: each AMD GPU's PCI address, xGMI hive and xGMI health, read
 * through ROCm SMI (librocm_smi64.so.1, loaded with dlopen only when asked,
 * as fabric.h loads NVML: nothing links ROCm SMI, and a node without ROCm
 * loads nothing).
 *
 * What ROCm SMI says (rocm_smi.h, "XGMI Functions" and "Identifier
 * Queries"):
 *   rsmi_dev_pci_id_get        the BDFID, a uint64_t laid out as
 *                              (domain & 0xffffffff) << 32 | (bus & 0xff) << 8
 *                              | (device & 0x1f) << 3 | (function & 0x7);
 *                              bits 16-31 are reserved (later releases may
 *                              use them to tell the partitions of one MI300
 *                              apart), so they are kept out of the bus id
 *   rsmi_dev_xgmi_hive_id_get  the xGMI (Infinity Fabric) hive the GPU
 *                              belongs to: GPUs of one hive reach each other
 *                              over xGMI; 0 (or NOT_SUPPORTED) is no hive
 *   rsmi_dev_xgmi_error_status the xGMI link error state: no errors, one
 *                              error, multiple errors since the last reset
 * The health signal is the xGMI error status, not the ECC/RAS counters
 * (rsmi_dev_ecc_count_get): the table is about the GPU-to-GPU fabric, and
 * xGMI errors are that fabric's own fault report (rocm-smi
 * --showxgmierr); ECC counts are per memory block, and correctable counts
 * that grow slowly are no fault to stop a job for.
 *
 * Like NVLink on HGX, xGMI ends at the node: hive ids name a node's local
 * hive and are never compared between nodes. */
#ifndef RDZV_RSMI_H
#define RDZV_RSMI_H

#include <stddef.h>
#include <stdint.h>

#define RDZV_RSMI_SONAME "librocm_smi64.so.1"
#define RDZV_RSMI_SONAME_DEV "librocm_smi64.so" /* what a ROCm tree without the soname link has */
#define RDZV_RSMI_GPUS_MAX 64  /* GPUs read per node (an MI300X node in CPX mode shows 64) */

/* ROCm SMI status codes named in messages and tests (rsmi_status_t). */
#define RDZV_RSMI_SUCCESS 0
#define RDZV_RSMI_INVALID_ARGS 1
#define RDZV_RSMI_NOT_SUPPORTED 2
#define RDZV_RSMI_PERMISSION 4
#define RDZV_RSMI_INIT_ERROR 8
#define RDZV_RSMI_UNKNOWN_ERROR 0xffffffffu

/* rsmi_xgmi_status_t */
#define RDZV_XGMI_NO_ERRORS 0
#define RDZV_XGMI_ERROR 1
#define RDZV_XGMI_MULTIPLE_ERRORS 2

struct rdzv_rsmi_gpu {
	unsigned index;       /* ROCm SMI's device index */
	unsigned pci_rc;      /* rsmi_dev_pci_id_get's status (0: busid read) */
	uint64_t bdfid;
	char busid[32];       /* "0000:c1:00.0" (hwloc's spelling) or "" */
	char name[128];       /* rsmi_dev_name_get, "" when not given */
	int have_unique;      /* unique_id is ROCm SMI's (nonzero) */
	uint64_t unique_id;
	unsigned hive_rc;     /* rsmi_dev_xgmi_hive_id_get's status */
	uint64_t hive;        /* 0: in no hive */
	unsigned xgmi_rc;     /* rsmi_dev_xgmi_error_status's status */
	unsigned xgmi;        /* RDZV_XGMI_* when xgmi_rc is 0 */
};

struct rdzv_rsmi {
	unsigned n;           /* GPUs read (at most RDZV_RSMI_GPUS_MAX) */
	unsigned total;       /* what rsmi_num_monitor_devices said */
	struct rdzv_rsmi_gpu gpu[RDZV_RSMI_GPUS_MAX];
};

/* Load ROCm SMI from library (an absolute path, or NULL / "" for
 * librocm_smi64.so.1, then librocm_smi64.so, found the way the dynamic
 * linker finds them), read every GPU, shut ROCm SMI down and unload it. A
 * per-GPU query that fails is recorded in the GPU (its status), not an
 * error. Returns 0, or -1 with the reason in err: ROCm SMI not loadable
 * ("no ROCm SMI: cannot load ..."), a missing entry point, or rsmi_init /
 * rsmi_num_monitor_devices failing (the call and its status named). */
int rdzv_rsmi_read(const char *library, struct rdzv_rsmi *r, char *err, size_t errlen);

/* "0000:c1:00.0" from a BDFID (lower-case hex, the domain at least 4
 * digits). */
void rdzv_rsmi_busid(uint64_t bdfid, char *buf, size_t len);

/* ROCm SMI's meaning of a status ("not supported", "permission denied"...). */
const char *rdzv_rsmi_status_name(unsigned rc);

/* "GPU 0 (0000:c1:00.0)" for messages. */
void rdzv_rsmi_gpu_name(const struct rdzv_rsmi_gpu *g, char *buf, size_t len);

/* One line about g, as rdzv-preflight prints it:
 * "GPU 0 (0000:c1:00.0): AMD Instinct MI250X, xGMI hive 0x5b2e8c1d4a3f9e01, xGMI ok". */
void rdzv_rsmi_gpu_line(const struct rdzv_rsmi_gpu *g, char *buf, size_t len);

/* The node's xGMI hive: 1 with the hive every GPU shares, 0 when no GPU is
 * in a hive (or there is no GPU), -1 when the GPUs are in several hives or
 * some in one and some in none: err names each GPU with its hive. */
int rdzv_rsmi_hive(const struct rdzv_rsmi *r, uint64_t *hive, char *err, size_t errlen);

/* No GPU reports xGMI errors. Returns 0, or -1 with each GPU and its fault
 * in err, separated by "; ". A GPU whose status is not supported or
 * unreadable is no fault (nothing says it is bad). */
int rdzv_rsmi_xgmi_ok(const struct rdzv_rsmi *r, char *err, size_t errlen);

/* How many AMD GPUs the PCI bus under sysfs (NULL: "/sys") shows: functions
 * of vendor 0x1002 whose class is a display controller (0x03xx: MI250X GCDs
 * are 0x0380) or a processing accelerator (0x12xx: MI300A, MI300X). Says
 * whether a node whose ROCm SMI cannot be loaded has AMD GPUs at all. */
unsigned rdzv_rsmi_pci_gpus(const char *sysfs);

#endif
