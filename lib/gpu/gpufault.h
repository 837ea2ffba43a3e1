/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/gpu/: the GPU vendors' libraries (NVML, ROCm SMI, opened at run time),
 * the NVLink fabric, the kernel's GPU fault lines (Xid). Uses lib/common/. */
/* gpufault.h: what the GPU drivers reported, judged: the NVIDIA driver's
 * Xids in the kernel log (kmsg.h) classed by the Xid table (xid.h), and
 * AMD's uncorrectable RAS counts
 *   ROOT/sys/class/drm/cardN/device/ras/BLOCK_err_count   ("ue: N", "ce: N")
 * (the card's PCI address from ROOT/sys/class/drm/cardN/device/uevent,
 * PCI_SLOT_NAME=) against a baseline. Used as root by the health gate
 * (rdzv_node.so's prolog and epilog, rdzv-preflight --node), which keeps
 * what it has judged in a cursor file of root's state directory:
 *   boot BOOT_ID          ROOT/proc/sys/kernel/random/boot_id: a new boot
 *                         starts the kernel log's numbers again
 *   seq N                 the last kernel-log record judged
 *   ras PCI BLOCK UE      each counter's uncorrectable count judged
 * so a report drains a node once, and a node the admin resumed is not
 * drained again for it. Uses lib/common only. */
#ifndef RDZV_GPUFAULT_H
#define RDZV_GPUFAULT_H

#include <stddef.h>
#include <stdint.h>

#include "kmsg.h"
#include "xid.h"

#define RDZV_GPU_STATE_DIR_DEFAULT "/var/lib/spank-rdzv"
#define RDZV_RAS_MAX 128
#define RDZV_RAS_BLOCK_MAX 32
#define RDZV_BOOT_ID_MAX 40

struct rdzv_ras_count {
	char pci[RDZV_PCI_MAX];
	char block[RDZV_RAS_BLOCK_MAX];  /* umc, gfx, xgmi_wafl, ... */
	uint64_t ue;
};

struct rdzv_gpu_cursor {
	char boot[RDZV_BOOT_ID_MAX];
	uint64_t seq;
	size_t nras;
	struct rdzv_ras_count ras[RDZV_RAS_MAX];
};

/* The cursor file's text. parse: 0, or -1 on a line that is not one of
 * the three (c then empty); format: the length, or -1 when buf is short. */
int rdzv_gpu_cursor_parse(const char *text, size_t len, struct rdzv_gpu_cursor *c);
int rdzv_gpu_cursor_format(const struct rdzv_gpu_cursor *c, char *buf, size_t len);
/* The cursor at path: 1 read, 0 none yet (c empty), -1 unreadable or
 * broken (c empty, err says it). */
int rdzv_gpu_cursor_load(const char *path, struct rdzv_gpu_cursor *c, char *err, size_t errlen);
/* Written as a new file renamed into place, 0600; its directory made 0700
 * when missing. 0 or -1 with err. */
int rdzv_gpu_cursor_save(const char *path, const struct rdzv_gpu_cursor *c, char *err,
                         size_t errlen);

/* A step's baseline: the boot id and AMD's counts now, seq 0 (a look
 * with it and since_usec set to the step's start sees what was reported
 * since then). Reads sysfs only, never the kernel log. */
void rdzv_gpu_cursor_baseline(const char *root, struct rdzv_gpu_cursor *c);

/* AMD's counters under root: up to max into v. Returns how many (0: none,
 * no AMD GPU or no RAS). */
size_t rdzv_ras_read(const char *root, struct rdzv_ras_count *v, size_t max);

/* One report, judged. */
struct rdzv_gpu_fault {
	char pci[RDZV_PCI_MAX];
	uint32_t xid;                       /* 0: an AMD RAS count */
	enum rdzv_xid_action action;
	int node_fault;                     /* the node's, not the application's */
	char meaning[RDZV_XID_MEANING_MAX]; /* the table's; the RAS block's */
	uint64_t ts_usec;                   /* the record's time; 0 for RAS */
	uint64_t ue;                        /* RAS: the rise */
};

struct rdzv_gpufault_req {
	const char *root;                   /* prefix of /proc and /sys; NULL or "": "/" */
	const char *kmsg;                   /* the kernel log; NULL: RDZV_KMSG_DEFAULT */
	const struct rdzv_xid_table *table;
	struct rdzv_gpu_cursor *cursor;     /* in: what was judged; out: moved on */
	uint64_t since_usec;                /* records before this time skipped */
	size_t max_bytes;                   /* 0: RDZV_KMSG_MAX_BYTES */
	long max_ms;                        /* 0: RDZV_KMSG_MAX_MS */
};

struct rdzv_gpufault {
	struct rdzv_gpu_fault worst;        /* valid when reports > 0 */
	int reports, node_faults;
	int cut;                            /* the scan stopped at a bound (kmsg.h) */
	char note[256];                     /* what could not be looked at */
};

/* Look at what was reported since the cursor (and since_usec): the worst
 * report is a node fault before an application's, a graver action before a
 * lighter one, the earlier of two alike. The cursor moves past everything
 * looked at. Returns the reports found (0 none); a kernel log that cannot
 * be read is said in note, not an error. */
int rdzv_gpufault_look(const struct rdzv_gpufault_req *r, struct rdzv_gpufault *out);

/* "Xid 79, GPU has fallen off the bus (RESTART_BM)" or "an uncorrectable
 * RAS error (umc, 2 new)". */
void rdzv_gpu_fault_words(const struct rdzv_gpu_fault *f, char *buf, size_t len);

#endif
