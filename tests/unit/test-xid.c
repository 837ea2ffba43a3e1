/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-xid: the Xid table (etc/rdzv-xid.conf as installed, and bad lines named
 * by file and line), kernel-log records in /dev/kmsg's format, the NVIDIA
 * driver's Xid lines in their wordings, a scan's cursor and bounds, and the
 * gate's judgement (gpufault.h): the cursor file, AMD's RAS counts in a
 * fake sysfs tree against their baseline, the worst report, a report
 * judged once, a new boot (bad input first). */
#include "config.h"
#include "gpufault.h"
#include "gpuverdict.h"
#include "failure.h"
#include "kmsg.h"
#include "xid.h"
#include "tap.h"
#include "fs-fixtures.h"

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

static void test_cursor(void)
{
	struct rdzv_gpu_cursor c, d;
	char buf[4096];
	static const char *const bad[] = {
		"seq x\n", "boot\n", "ras 0000:3b:00 umc\n", "what 1\n", "seq 1 2\n",
		"seq -1\n",
	};
	size_t i;
	int n;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ok(rdzv_gpu_cursor_parse(bad[i], strlen(bad[i]), &c) < 0 && c.seq == 0 && !c.nras,
		   "not a cursor: '%.*s' (left empty)", (int)strlen(bad[i]) - 1, bad[i]);
	memset(&c, 0, sizeof(c));
	snprintf(c.boot, sizeof(c.boot), "b0a1");
	c.seq = 1234567890123ull;
	c.nras = 2;
	snprintf(c.ras[0].pci, sizeof(c.ras[0].pci), "0000:3b:00");
	snprintf(c.ras[0].block, sizeof(c.ras[0].block), "umc");
	c.ras[0].ue = 3;
	snprintf(c.ras[1].pci, sizeof(c.ras[1].pci), "0000:5e:00");
	snprintf(c.ras[1].block, sizeof(c.ras[1].block), "gfx");
	n = rdzv_gpu_cursor_format(&c, buf, sizeof(buf));
	ok(n > 0 && rdzv_gpu_cursor_parse(buf, (size_t)n, &d) == 0 && memcmp(&c, &d, sizeof(c)) == 0,
	   "a cursor round-trips (%d bytes)", n);
	ok(rdzv_gpu_cursor_format(&c, buf, 20) < 0, "a short buffer refused");
}

/* path's directories made, then text written ("w") or appended ("a"). */
static void put(const char *path, const char *text, const char *how)
{
	char dir[512];
	FILE *f;

	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	mkdirs(dir);
	if (!(f = fopen(path, how)) || fputs(text, f) < 0 || fclose(f) != 0) {
		printf("Bail out! cannot write %s\n", path);
		exit(1);
	}
}

struct tree {
	char dir[64], root[128], kmsg[160], state[160];
};

static void ras_write(struct tree *t, int card, const char *pci, const char *block, int ue)
{
	char path[512], text[64];

	snprintf(path, sizeof(path), "%s/sys/class/drm/card%d/device/uevent", t->root, card);
	snprintf(text, sizeof(text), "DRIVER=amdgpu\nPCI_SLOT_NAME=%s\n", pci);
	put(path, text, "w");
	snprintf(path, sizeof(path), "%s/sys/class/drm/card%d/device/ras/%s_err_count", t->root,
	         card, block);
	snprintf(text, sizeof(text), "ue: %d\nce: 7\n", ue);
	put(path, text, "w");
}

static void test_look(void)
{
	struct rdzv_xid_table table = { 0 };
	struct rdzv_gpufault_req r = { 0 };
	struct rdzv_gpu_cursor c;
	struct rdzv_gpufault f;
	struct tree t;
	char path[512], words[200], err[256];
	const char *src = getenv("top_srcdir");

	snprintf(t.dir, sizeof(t.dir), "/tmp/test-gpufault-XXXXXX");
	if (!ok(mkdtemp(t.dir) != NULL, "a fake node"))
		return;
	snprintf(t.root, sizeof(t.root), "%s/root", t.dir);
	snprintf(t.kmsg, sizeof(t.kmsg), "%s/kmsg", t.dir);
	snprintf(t.state, sizeof(t.state), "%s/state/gpu-cursor", t.dir);
	snprintf(path, sizeof(path), "%s/etc/rdzv-xid.conf", src ? src : ".");
	rdzv_xid_table_load(&table, path, err, sizeof(err));
	snprintf(path, sizeof(path), "%s/proc/sys/kernel/random/boot_id", t.root);
	put(path, "boot-1\n", "w");
	write_file(t.kmsg, "6,1,100,-;hello\n"
	                   "4,2,200,-;NVRM: Xid (PCI:0000:3b:00): 13, pid=9, name=p, Graphics\n");
	memset(&c, 0, sizeof(c));
	r.root = t.root;
	r.kmsg = t.kmsg;
	r.table = &table;
	r.cursor = &c;
	ok(rdzv_gpufault_look(&r, &f) == 1 && !f.worst.node_fault && f.worst.xid == 13
	   && c.seq == 2 && strcmp(c.boot, "boot-1") == 0,
	   "an application's Xid: a report, not a node fault; the cursor at seq 2");
	put(t.kmsg, "4,3,300,-;NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', "
	                    "name=<unknown>, GPU has fallen off the bus.\n"
	                    "4,4,400,-;NVRM: Xid (PCI:0000:5e:00): 48, pid=1, DBE\n"
	                    "4,5,500,-;NVRM: Xid (PCI:0000:5e:00): 31, pid=1, fault\n", "a");
	ok(rdzv_gpufault_look(&r, &f) == 3 && f.node_faults == 2 && f.worst.xid == 79
	   && strcmp(f.worst.pci, "0000:3b:00") == 0 && c.seq == 5,
	   "after the cursor: three reports, the worst a node fault (79 over 48)");
	rdzv_gpu_fault_words(&f.worst, words, sizeof(words));
	is_str(words, "Xid 79, GPU has fallen off the bus (RESTART_BM)", "the words of a fault");
	ok(rdzv_gpu_cursor_save(t.state, &c, err, sizeof(err)) == 0
	   && rdzv_gpu_cursor_load(t.state, &c, err, sizeof(err)) == 1 && c.seq == 5,
	   "the cursor saved (its directory made) and loaded back");
	ok(rdzv_gpufault_look(&r, &f) == 0, "judged once: nothing new, nothing found");
	/* AMD: the first look is the baseline; a rise in ue is a fault. */
	ras_write(&t, 0, "0000:C1:00.0", "umc", 2);
	ras_write(&t, 1, "0000:c6:00.0", "gfx", 0);
	ok(rdzv_gpufault_look(&r, &f) == 0 && c.nras == 2, "RAS counts: the baseline, no fault");
	ras_write(&t, 0, "0000:C1:00.0", "umc", 5);
	ok(rdzv_gpufault_look(&r, &f) == 1 && f.worst.node_fault && f.worst.ue == 3
	   && strcmp(f.worst.pci, "0000:c1:00") == 0, "an uncorrectable count rising: the node's");
	rdzv_gpu_fault_words(&f.worst, words, sizeof(words));
	is_str(words, "an uncorrectable RAS error (umc, 3 new)", "the words of a RAS fault");
	ok(rdzv_gpufault_look(&r, &f) == 0, "a RAS rise judged once");
	/* A new boot: the kernel log numbers again from 1. */
	snprintf(path, sizeof(path), "%s/proc/sys/kernel/random/boot_id", t.root);
	put(path, "boot-2\n", "w");
	write_file(t.kmsg, "4,1,100,-;NVRM: Xid (PCI:0000:3b:00): 95, pid=1, Uncontained\n");
	ok(rdzv_gpufault_look(&r, &f) == 1 && f.worst.xid == 95 && strcmp(c.boot, "boot-2") == 0,
	   "a new boot: the cursor starts again (Xid 95 at seq 1 seen)");
	/* Since a step's start. */
	memset(&c, 0, sizeof(c));
	r.cursor = NULL;
	r.since_usec = 150;
	ok(rdzv_gpufault_look(&r, &f) == 0, "since a time after the record: none");
	r.kmsg = "/nonexistent/kmsg";
	ok(rdzv_gpufault_look(&r, &f) == 0 && strstr(f.note, "kernel log not read: /nonexistent"),
	   "an unreadable kernel log is a note (%s)", f.note);
	rdzv_xid_table_free(&table);
	snprintf(path, sizeof(path), "rm -rf '%s'", t.dir);
	ok(system(path) == 0, "the fake node removed");
}

static void test_verdict(void)
{
	struct rdzv_gpu_report r, d;
	struct rdzv_failure f;
	char buf[RDZV_GPU_DGRAM_MAX], line[600];
	int n;
	static const char *const bad[] = {
		"RDZVG1 1.2 00000000000000ab n2 1 5 79 1 400 0000:3b:00 RESTART_BM 0",
		"RDZVG1 1.2 00000000000000ab n2 1 5 79 2 400 0000:3b:00 RESTART_BM 0\nx",
		"RDZVG1 1.2 00000000000000ab n/2 1 5 79 1 400 0000:3b:00 RESTART_BM 0\nx",
		"RDZVG1 1.2 00000000000000ab n2 1 5 79 1 400 0000:3b:00 REBOOT 0\nx",
		"RDZVG1 1.2 00000000000000ab n2 1 5 79 1 400 3b:00 RESTART_BM 0\nx",
		"RDZVG1 1.2 00000000000000ab n2 1 5 79 1 400 0000:3b:00 RESTART_BM 0 extra\nx",
		"RDZVG1 1.2 00000000000000ab n2 -3 5 79 1 400 0000:3b:00 RESTART_BM 0\nx",
		"RDZVG1 1.2 00000000000000ab n2 1 5 79 1 400 0000:3b:00 RESTART_BM 0\nx\001",
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ok(rdzv_gpu_report_decode(bad[i], strlen(bad[i]), &d) < 0, "not a GPU report: '%.*s'",
		   (int)strcspn(bad[i], "\n"), bad[i]);
	memset(&r, 0, sizeof(r));
	r.job_id = 77;
	r.step_id = 3;
	r.nonce = 0xabcdef0123456789ull;
	snprintf(r.node, sizeof(r.node), "n2");
	r.gpu = 1;
	r.rank = 5;
	snprintf(r.f.pci, sizeof(r.f.pci), "0000:3b:00");
	r.f.xid = 79;
	r.f.action = RDZV_XID_RESTART_BM;
	r.f.node_fault = 1;
	snprintf(r.f.meaning, sizeof(r.f.meaning), "GPU has fallen off the bus");
	r.before_ms = 412;
	n = rdzv_gpu_report_encode(&r, buf, sizeof(buf));
	ok(n > 0 && rdzv_gpu_report_decode(buf, (size_t)n, &d) == 0 && d.job_id == 77
	   && d.step_id == 3 && d.nonce == r.nonce && d.gpu == 1 && d.rank == 5 && d.f.xid == 79
	   && d.f.node_fault && d.f.action == RDZV_XID_RESTART_BM && d.before_ms == 412
	   && strcmp(d.f.pci, "0000:3b:00") == 0 && strcmp(d.f.meaning, r.f.meaning) == 0,
	   "a GPU report round-trips (%.*s)", (int)strcspn(buf, "\n"), buf);
	ok(rdzv_failure_decode(buf, (size_t)n, &f) < 0,
	   "the failure decoder (srun of the previous release) drops it");
	ok(rdzv_gpu_report_format(&d, 5, line, sizeof(line)) == 0, "srun's line");
	is_str(line, "rdzv: GPU 1 of node n2 (rank 5): Xid 79, GPU has fallen off the bus, 0.4 s "
	       "before rank 5 exited: a node fault", "... names the GPU, its rank, the Xid first");
	d.f.xid = 13;
	d.f.node_fault = 0;
	d.f.action = RDZV_XID_RESTART_APP;
	snprintf(d.f.meaning, sizeof(d.f.meaning), "Graphics engine exception");
	rdzv_gpu_report_format(&d, 5, line, sizeof(line));
	is_str(line, "rdzv: GPU 1 of node n2 (rank 5): Xid 13, Graphics engine exception, 0.4 s "
	       "before rank 5 exited: the application's, not a node fault",
	       "an application's Xid: said, never a node fault");
	is_str(rdzv_gpu_report_kind(&d), "xid_app", "its kind");
	ok(rdzv_gpu_report_worse(&r, &d) && !rdzv_gpu_report_worse(&d, &r),
	   "a node fault is worse than an application's");
	d.gpu = -1;
	d.rank = -1;
	d.before_ms = -1;
	rdzv_gpu_report_format(&d, 2, line, sizeof(line));
	is_str(line, "rdzv: GPU 0000:3b:00 of node n2 (not one of the step's GPUs): Xid 13, "
	       "Graphics engine exception, before rank 2 exited: the application's, not a node "
	       "fault", "a PCI address that maps to no GPU of the step is said so");
	d.gpu = 5;
	d.rank = -2;
	n = rdzv_gpu_report_encode(&d, buf, sizeof(buf));
	ok(n > 0 && rdzv_gpu_report_decode(buf, (size_t)n, &r) == 0 && r.gpu == 5 && r.rank == -2,
	   "a GPU of the node that is not the step's round-trips");
	rdzv_gpu_report_format(&r, 2, line, sizeof(line));
	is_str(line, "rdzv: GPU 5 of node n2 (not one of the step's GPUs): Xid 13, Graphics engine "
	       "exception, before rank 2 exited: the application's, not a node fault",
	       "... said so, with Slurm's number");
	d.rank = -1;
	d.gpu = -2;
	rdzv_gpu_report_format(&d, 2, line, sizeof(line));
	is_str(line, "rdzv: GPU 0000:3b:00 of node n2: Xid 13, Graphics engine exception, before "
	       "rank 2 exited: the application's, not a node fault",
	       "no identity chain (binding off): the PCI address, not a claim it is no step GPU");
	memset(&d.f, 0, sizeof(d.f));
	d.gpu = 0;
	d.f.node_fault = 1;
	d.f.ue = 2;
	snprintf(d.f.pci, sizeof(d.f.pci), "0000:c1:00");
	snprintf(d.f.meaning, sizeof(d.f.meaning), "umc");
	n = rdzv_gpu_report_encode(&d, buf, sizeof(buf));
	ok(n > 0 && rdzv_gpu_report_decode(buf, (size_t)n, &r) == 0 && r.f.ue == 2 && !r.f.xid,
	   "a RAS report round-trips");
	rdzv_gpu_report_format(&r, 0, line, sizeof(line));
	is_str(line, "rdzv: GPU 0 of node n2: an uncorrectable RAS error (umc, 2 new), before "
	       "rank 0 exited: a node fault", "a RAS fault's line");
	is_str(rdzv_gpu_report_kind(&r), "ras", "its kind");
}

int main(void)
{
	test_table_refuses();
	test_table();
	test_records();
	test_xid_lines();
	test_scan();
	test_cursor();
	test_look();
	test_verdict();
	return done_testing();
}
