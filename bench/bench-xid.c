/* SPDX-License-Identifier: GPL-2.0-or-later */
/* bench-xid: what the look at the kernel log costs (lib/gpu/kmsg.h): a
 * 16 MiB log in /dev/kmsg's format (about 140,000 records of a busy node's
 * kernel: network, storage, audit, one Xid in a thousand), read whole as
 * the health gate does from its cursor (the prolog, the epilog), and read
 * for the records since a step's start as a failing step's node does (the
 * same bytes read, fewer records handed on). The goal: a prolog's look
 * well under its 2 s bound.
 *
 *   bench-xid [--csv FILE] [DIR]   (DIR: where to write the log; default a
 *                                   new temporary directory, removed) */
#include "config.h"
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kmsg.h"
#include "xid.h"

struct ctx {
	char path[1024];
	uint64_t since;
	int reports;
	struct rdzv_kmsg_scan s;
};

static int count(void *arg, const struct rdzv_xid_report *x)
{
	(void)x;
	(*(int *)arg)++;
	return 0;
}

static int one_scan(void *arg, char *err, size_t errlen)
{
	struct ctx *c = arg;
	int n = 0;

	memset(&c->s, 0, sizeof(c->s));
	c->s.since_usec = c->since;
	c->s.max_ms = 60000;
	if (rdzv_kmsg_scan(c->path, &c->s, count, &n, err, errlen) < 0)
		return -1;
	c->reports = n;
	return 0;
}

/* The log: size bytes of records, one Xid in every 1000th. Returns the
 * last record's time. */
static uint64_t write_log(const char *path, size_t size)
{
	static const char *const other[] = {
		"mlx5_core 0000:4b:00.0: mlx5_fw_tracer_handle_traces:755:(pid 0): FW tracer event",
		"audit: type=1400 audit(1765000000.123:4567): apparmor=\"ALLOWED\" operation=\"open\"",
		"EXT4-fs (nvme0n1p2): re-mounted 1f2e3d4c-aaaa-bbbb-cccc-0123456789ab. Quota mode",
		"IPv6: ADDRCONF(NETDEV_CHANGE): ib0: link becomes ready",
	};
	FILE *f = fopen(path, "we");
	uint64_t seq = 1, ts = 1000000;
	size_t written = 0;

	if (!f)
		return 0;
	while (written < size) {
		int n;

		if (seq % 1000 == 0)
			n = fprintf(f, "4,%llu,%llu,-;NVRM: Xid (PCI:0000:%02llx:00): %u, pid=%llu, "
			            "name=pt_main_thread, Graphics SM Warp Exception on (GPC 1, TPC 3)\n",
			            (unsigned long long)seq, (unsigned long long)ts,
			            (unsigned long long)(seq / 1000 % 8 * 16 + 0x18), seq % 3000 ? 13u : 79u,
			            (unsigned long long)(seq % 99999));
		else
			n = fprintf(f, "6,%llu,%llu,-;%s\n SUBSYSTEM=pci\n", (unsigned long long)seq,
			            (unsigned long long)ts, other[seq % 4]);
		if (n < 0)
			break;
		written += (size_t)n;
		seq++;
		ts += 1234;
	}
	fclose(f);
	return ts;
}

int main(int argc, char **argv)
{
	char tmpl[] = "/tmp/rdzv-bench-xid.XXXXXX", err[512] = "";
	const char *csv = NULL, *dir = NULL;
	struct bench_stat st;
	struct ctx c;
	uint64_t end;
	int made = 0, k, rv = 0;
	const size_t size = 16u << 20;

	if (!(dir = bench_dir_args(argc, argv, "bench-xid", &csv, tmpl, &made)))
		return 1;
	memset(&c, 0, sizeof(c));
	snprintf(c.path, sizeof(c.path), "%s/kmsg", dir);
	if (!(end = write_log(c.path, size))) {
		fprintf(stderr, "bench-xid: cannot write %s\n", c.path);
		return 1;
	}
	if (csv)
		bench_csv_open(csv);
	printf("\n== The kernel log's look: a 16 MiB log in /dev/kmsg's format, read whole\n");
	printf("%-34s %12s %12s %12s %10s %8s %10s\n", "case", "median ms", "min ms", "max ms",
	       "records", "Xids", "MiB/s");
	for (k = 0; k < 2; k++) {
		const char *kase = k == 0 ? "prolog (from the cursor: all)"
		                          : "failing step (since its start)";

		c.since = k == 0 ? 0 : end - 60 * 1000000ull;
		if (bench_time(one_scan, NULL, &c, bench_batches(7), 200000, &st, err,
		               sizeof(err)) < 0) {
			fprintf(stderr, "bench-xid: %s\n", err);
			rv = 1;
			break;
		}
		printf("%-34s %12.3f %12.3f %12.3f %10zu %8d %10.0f\n", kase, st.median / 1000.0,
		       st.min / 1000.0, st.max / 1000.0, c.s.records, c.reports,
		       (double)c.s.bytes / (1 << 20) / (st.median / 1e6));
		bench_csv_row("xid", k == 0 ? "prolog" : "failing-step", "log=16MiB", &st, "us", -1,
		              "");
	}
	bench_csv_close();
	unlink(c.path);
	if (made)
		rmdir(dir);
	return rv;
}
