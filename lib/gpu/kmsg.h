/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/gpu/: the GPU vendors' libraries (NVML, ROCm SMI, opened at run time),
 * the NVLink fabric, the kernel's GPU fault lines (Xid). Uses lib/common/. */
/* kmsg.h: what the GPU drivers told the kernel log, read as /dev/kmsg
 * gives it (Documentation/ABI/testing/dev-kmsg): one record per line,
 *   PRI,SEQ,TS_USEC,FLAGS[,...];MESSAGE
 * followed by continuation lines that start with a space (the record's
 * dictionary: SUBSYSTEM=, DEVICE=), which carry no Xid. TS_USEC is the
 * kernel's monotonic clock, CLOCK_MONOTONIC's microseconds.
 *
 * The NVIDIA driver's Xid lines, in the wordings its versions use:
 *   NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.
 *   NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen ...
 *   NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.
 *   NVRM: Xid (0000:01:00): 13, pid=..., Graphics SM Warp Exception ...
 * The source is a setting (kmsg=, /dev/kmsg by default): tests give a file
 * or FIFO in this format, never the machine's kernel log. The source is
 * only read (O_RDONLY), and each scan is bounded in bytes and time.
 * Uses lib/common only. */
#ifndef RDZV_KMSG_H
#define RDZV_KMSG_H

#include <stddef.h>
#include <stdint.h>

#define RDZV_KMSG_DEFAULT "/dev/kmsg"
/* A scan's bounds by default: what the prolog and a failing step pay at
 * most (doc/performance.md has what a 16 MiB log costs). */
#define RDZV_KMSG_MAX_BYTES (64u << 20)
#define RDZV_KMSG_MAX_MS 2000L

struct rdzv_kmsg_rec {
	unsigned prio;     /* facility * 8 + level */
	uint64_t seq;
	uint64_t ts_usec;
	const char *msg;   /* into the line; not NUL-terminated */
	size_t len;
};

/* One record's first line (without its '\n'). Returns 0, or -1 when it is
 * not one (a continuation line, a bad field). */
int rdzv_kmsg_record(const char *line, size_t len, struct rdzv_kmsg_rec *r);

#define RDZV_PCI_MAX 16  /* "0000:3b:00" and its NUL */

struct rdzv_xid_report {
	char pci[RDZV_PCI_MAX];  /* DOMAIN:BUS:DEVICE, lower case */
	uint32_t xid;
	long pid;                /* -1 not given or unknown */
	char name[32];           /* the process's name; "" not given */
	char text[128];          /* the driver's words after the fields */
	uint64_t seq, ts_usec;   /* the record's */
};

/* An Xid line of the NVIDIA driver (the record's message). Returns 0, or
 * -1 when msg is not one. */
int rdzv_xid_report_parse(const char *msg, size_t len, struct rdzv_xid_report *x);

/* Which records a scan looks at, and what it found. */
struct rdzv_kmsg_scan {
	uint64_t after_seq;      /* records of this sequence number or lower skipped */
	uint64_t since_usec;     /* records before this TS_USEC skipped (0: none) */
	size_t max_bytes;        /* 0: RDZV_KMSG_MAX_BYTES */
	long max_ms;             /* 0: RDZV_KMSG_MAX_MS */
	/* out */
	uint64_t last_seq;       /* the highest sequence number read (after_seq if none) */
	size_t bytes;            /* read */
	size_t records;          /* records parsed */
	int cut;                 /* 1: stopped at max_bytes, 2: at max_ms */
};

typedef int (*rdzv_xid_fn)(void *ctx, const struct rdzv_xid_report *x);

/* Read the records of the source at path (a character device as
 * /dev/kmsg, a FIFO or a file; opened read-only and non-blocking: the end
 * of what is there now is the end), hand fn each Xid report of the
 * records s selects; fn returning -1 stops the scan. Returns the reports
 * handed, or -1 with err (the source cannot be opened or read). */
int rdzv_kmsg_scan(const char *path, struct rdzv_kmsg_scan *s, rdzv_xid_fn fn, void *ctx,
                   char *err, size_t errlen);

/* The same over text[0..len) (tests, fuzzing). */
int rdzv_kmsg_scan_text(const char *text, size_t len, struct rdzv_kmsg_scan *s, rdzv_xid_fn fn,
                        void *ctx);

#endif
