/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-xid: the Xid table (etc/rdzv-xid.conf as installed, and bad lines named
 * by file and line), kernel-log records in /dev/kmsg's format, the NVIDIA
 * driver's Xid lines in their wordings, and a scan's cursor and bounds
 * (bad input first). */
#include "config.h"
#include "kmsg.h"
#include "xid.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int parse_err(const char *text, char *err, size_t errlen)
{
	struct rdzv_xid_table t = { 0 };
	int rc;

	err[0] = '\0';
	rc = rdzv_xid_table_parse(&t, text, strlen(text), "xid.conf", err, errlen);
	rdzv_xid_table_free(&t);
	return rc;
}

static void test_table_refuses(void)
{
	char err[512];

	ok(parse_err("# c\n79 RESTART_BM all fell\nx79 RESET_GPU all y\n", err, sizeof(err)) < 0
	   && strstr(err, "xid.conf:3: 'x79' is not an Xid"), "a bad Xid: file and line (%s)", err);
	ok(parse_err("0 RESET_GPU all y\n", err, sizeof(err)) < 0 && strstr(err, "xid.conf:1:"),
	   "Xid 0 refused (%s)", err);
	ok(parse_err("79 REBOOT all y\n", err, sizeof(err)) < 0
	   && strstr(err, "xid.conf:1: Xid 79: action 'REBOOT': valid actions are IGNORE, "
	                  "RESTART_APP, RESET_GPU"), "an unknown action names the valid ones (%s)",
	   err);
	ok(parse_err("\n\n79 RESET_GPU h100,v100 y\n", err, sizeof(err)) < 0
	   && strstr(err, "xid.conf:3: Xid 79: GPUs 'h100,v100': valid values are all, a100"),
	   "an unknown generation names the valid ones (%s)", err);
	ok(parse_err("79 RESET_GPU h100, y\n", err, sizeof(err)) < 0, "a trailing comma refused");
	ok(parse_err("79 RESET_GPU all   # only a comment\n", err, sizeof(err)) < 0
	   && strstr(err, "xid.conf:1: Xid 79: no meaning"), "no meaning refused (%s)", err);
	ok(parse_err("79 RESET_GPU all "
	             "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	             "aaaaaaaaaaaaaaaaaaaa\n", err, sizeof(err)) < 0 && strstr(err, "meaning of more"),
	   "an overlong meaning refused (%s)", err);
	ok(parse_err("79 RESET_GPU all a\0b\n", err, sizeof(err)) >= 0,
	   "text ends at its length (a C string)");
}

static void test_table(void)
{
	struct rdzv_xid_table t = { 0 };
	const struct rdzv_xid_entry *e;
	char path[1024], err[512];
	const char *src = getenv("top_srcdir");
	int n;

	snprintf(path, sizeof(path), "%s/etc/rdzv-xid.conf", src ? src : ".");
	n = rdzv_xid_table_load(&t, path, err, sizeof(err));
	ok(n >= 30, "etc/rdzv-xid.conf loads (%d entries; %s)", n, n < 0 ? err : "");
	e = rdzv_xid_lookup(&t, 79, RDZV_GEN_H100);
	ok(e && e->action == RDZV_XID_RESTART_BM && strcmp(e->meaning, "GPU has fallen off the bus")
	   == 0 && rdzv_xid_node_fault(e->action), "79: RESTART_BM, fallen off the bus, a node fault");
	for (n = 0; n < 4; n++) {
		static const uint32_t app[] = { 13, 31, 43, 45 };

		e = rdzv_xid_lookup(&t, app[n], 0);
		ok(e && !rdzv_xid_node_fault(e->action), "Xid %u: the application's (%s)", app[n],
		   e ? rdzv_xid_action_name(e->action) : "none");
	}
	for (n = 0; n < 6; n++) {
		static const uint32_t node[] = { 48, 64, 74, 95, 119, 120 };

		e = rdzv_xid_lookup(&t, node[n], RDZV_GEN_A100);
		ok(e && rdzv_xid_node_fault(e->action), "Xid %u: the node's (%s)", node[n],
		   e ? rdzv_xid_action_name(e->action) : "none");
	}
	ok(rdzv_xid_lookup(&t, 144, RDZV_GEN_GB200) && !rdzv_xid_lookup(&t, 144, RDZV_GEN_A100)
	   && rdzv_xid_lookup(&t, 144, 0), "a generation's own line: 144 on GB200, not on A100, "
	   "the first line for a GPU of unknown generation");
	ok(!rdzv_xid_lookup(&t, 99999, 0), "an Xid not in the table: none");
	/* An admin's line appended: replaces the same Xid and GPUs. */
	ok(rdzv_xid_table_parse(&t, "13 RESET_GPU all Site: engine fault\n"
	                            "79 IGNORE h100 Site: H100 says so\n", 64, "site", err,
	                        sizeof(err)) == 2, "an admin's lines parse");
	e = rdzv_xid_lookup(&t, 13, 0);
	ok(e && e->action == RDZV_XID_RESET_GPU && strcmp(e->meaning, "Site: engine fault") == 0,
	   "a later line replaces an earlier one of the same Xid and GPUs");
	ok(rdzv_xid_lookup(&t, 79, RDZV_GEN_H100)->action == RDZV_XID_IGNORE
	   && rdzv_xid_lookup(&t, 79, RDZV_GEN_A100)->action == RDZV_XID_RESTART_BM,
	   "a generation's line wins over the all line on that generation only");
	rdzv_xid_table_free(&t);
	rdzv_xid_table_free(NULL);
	ok(rdzv_xid_table_load(&t, "/nonexistent/xid.conf", err, sizeof(err)) < 0
	   && strstr(err, "/nonexistent/xid.conf: cannot be read"), "a missing table named (%s)",
	   err);
	is_int(rdzv_gpu_generation("NVIDIA H100 80GB HBM3"), RDZV_GEN_H100, "H100 model");
	is_int(rdzv_gpu_generation("NVIDIA H200"), RDZV_GEN_H100, "H200 is Hopper");
	is_int(rdzv_gpu_generation("NVIDIA GB200"), RDZV_GEN_GB200, "GB200 not B200");
	is_int(rdzv_gpu_generation("NVIDIA A100-SXM4-80GB"), RDZV_GEN_A100, "A100-SXM4");
	is_int(rdzv_gpu_generation("Tesla V100-SXM2-16GB"), 0, "V100: none the catalog names");
}

static void test_records(void)
{
	struct rdzv_kmsg_rec r;
	static const char *const bad[] = {
		"", " SUBSYSTEM=pci", "6,1,2", "6,1;x", "a,1,2,-;x", "6,,2,-;x",
		"6,1,2x;x", "6,99999999999999999999999,2,-;x", "9999999,1,2,-;x",
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ok(rdzv_kmsg_record(bad[i], strlen(bad[i]), &r) < 0, "not a record: '%s'", bad[i]);
	ok(rdzv_kmsg_record("4,1234,5678901,-;NVRM: hi", 25, &r) == 0 && r.prio == 4
	   && r.seq == 1234 && r.ts_usec == 5678901 && r.len == 8 && memcmp(r.msg, "NVRM: hi", 8)
	   == 0, "a record: priority, sequence, time, message");
	ok(rdzv_kmsg_record("6,5,7,c,caller=T1;m", 19, &r) == 0 && r.seq == 5 && r.len == 1,
	   "later fields (caller=) before the ';' are allowed");
}

static void test_xid_lines(void)
{
	struct rdzv_xid_report x;
	static const char *const bad[] = {
		"NVRM: GPU at PCI:0000:3b:00: GPU-0b11",
		"NVRM: Xid (PCI:0000:3b:00) 79, x",
		"NVRM: Xid (PCI:000:3b:00): 79, x",
		"NVRM: Xid (PCI:0000:3b:00): 0, x",
		"NVRM: Xid (PCI:0000:3b:00): 79x",
		"NVRM: Xid (PCI:0000:3b:00): , x",
		"NVRM: Xid (PCI:0000:3g:00): 79, x",
	};
	size_t i;
#define XP(s) rdzv_xid_report_parse(s, strlen(s), &x)

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ok(XP(bad[i]) < 0, "not an Xid line: '%s'", bad[i]);
	ok(XP("NVRM: Xid (PCI:0000:3B:00): 79, pid=1234, name=python3, GPU has fallen off the bus.")
	   == 0 && strcmp(x.pci, "0000:3b:00") == 0 && x.xid == 79 && x.pid == 1234
	   && strcmp(x.name, "python3") == 0 && strcmp(x.text, "GPU has fallen off the bus.") == 0,
	   "pid= and name=: PCI lower case, Xid, pid, name, words (%s|%s)", x.pci, x.text);
	ok(XP("NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off "
	      "the bus.") == 0 && x.pid == -1 && !x.name[0]
	   && strcmp(x.text, "GPU has fallen off the bus.") == 0, "pid='<unknown>': no pid, no name");
	ok(XP("NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.") == 0 && x.pid == -1
	   && strcmp(x.text, "GPU has fallen off the bus.") == 0, "no pid= at all");
	ok(XP("NVRM: Xid (0000:01:00): 13, pid=77, Graphics SM Warp Exception") == 0 && x.xid == 13
	   && strcmp(x.pci, "0000:01:00") == 0 && x.pid == 77, "no PCI: prefix (older drivers)");
	ok(XP("NVRM: Xid (PCI:0000:65:00.0): 63, pid='N/A', Row Remapper: New row") == 0
	   && x.xid == 63 && x.pid == -1 && strcmp(x.pci, "0000:65:00") == 0,
	   "a function in the address, pid='N/A'");
	ok(XP("NVRM: Xid (PCI:0000:18:00): 119, pid=9, name=pt_main_thread, Timeout after 6s of "
	      "waiting for RPC response from GPU0 GSP!\x01") == 0 && x.xid == 119
	   && strchr(x.text, '\x01') == NULL, "GSP's wording; control bytes become spaces");
#undef XP
}

struct found {
	int n;
	uint32_t xid[8];
};

static int collect(void *ctx, const struct rdzv_xid_report *x)
{
	struct found *f = ctx;

	if (f->n < 8)
		f->xid[f->n++] = x->xid;
	return 0;
}

static void test_scan(void)
{
	static const char log[] =
		"6,10,1000000,-;eth0: link up\n"
		" SUBSYSTEM=net\n"
		"4,11,2000000,-;NVRM: Xid (PCI:0000:3b:00): 13, pid=5, name=p, Graphics Exception\n"
		"4,12,3000000,-;NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, "
		"GPU has fallen off the bus.\n"
		" DEVICE=+pci:0000:3b:00.0\n"
		"garbage without a record\n"
		"4,13,4000000,-;NVRM: Xid (PCI:0000:5e:00): 48, pid=7, DBE";
	struct rdzv_kmsg_scan s = { 0 };
	struct found f = { 0 };
	char path[] = "/tmp/test-xid-XXXXXX", err[256];
	int fd;

	ok(rdzv_kmsg_scan_text(log, strlen(log), &s, collect, &f) == 3 && f.n == 3
	   && f.xid[0] == 13 && f.xid[1] == 79 && f.xid[2] == 48 && s.last_seq == 13
	   && s.records == 4, "a log: three Xids (the last line without its newline), seq 13");
	memset(&f, 0, sizeof(f));
	memset(&s, 0, sizeof(s));
	s.after_seq = 11;
	ok(rdzv_kmsg_scan_text(log, strlen(log), &s, collect, &f) == 2 && f.xid[0] == 79,
	   "after the cursor's sequence number only");
	memset(&f, 0, sizeof(f));
	memset(&s, 0, sizeof(s));
	s.since_usec = 3500000;
	ok(rdzv_kmsg_scan_text(log, strlen(log), &s, collect, &f) == 1 && f.xid[0] == 48,
	   "since a time only (a step's start)");
	memset(&s, 0, sizeof(s));
	s.max_bytes = 40;
	ok(rdzv_kmsg_scan_text(log, strlen(log), &s, NULL, NULL) == 0 && s.cut == 1,
	   "bounded in bytes: cut");
	ok((fd = mkstemp(path)) >= 0 && write(fd, log, strlen(log)) == (ssize_t)strlen(log),
	   "a file in kmsg's format");
	memset(&f, 0, sizeof(f));
	memset(&s, 0, sizeof(s));
	ok(rdzv_kmsg_scan(path, &s, collect, &f, err, sizeof(err)) == 3 && f.xid[2] == 48
	   && s.bytes == strlen(log), "the file read: three Xids, every byte");
	close(fd);
	unlink(path);
	ok(rdzv_kmsg_scan(path, &s, collect, &f, err, sizeof(err)) < 0 && strstr(err, path),
	   "a missing source named (%s)", err);
}

int main(void)
{
	test_table_refuses();
	test_table();
	test_records();
	test_xid_lines();
	test_scan();
	return done_testing();
}
