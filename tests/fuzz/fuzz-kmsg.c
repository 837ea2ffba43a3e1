/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz-kmsg.c: what the health gate and a failing step read as root: the
 * kernel log's records and the Xid table. The first byte picks the surface,
 * the rest is the text:
 *   'k' a kernel log in /dev/kmsg's format -> rdzv_kmsg_scan_text, and each
 *       record's message -> rdzv_xid_report_parse
 *   't' an Xid table file -> rdzv_xid_table_parse
 *   'g' a node's GPU-fault datagram -> rdzv_gpu_report_decode
 * Invariants: a scan never reads past its byte bound and its sequence
 * numbers only go up from the cursor; a report's PCI address is
 * DDDD:BB:DD in lower case, its Xid not 0, its strings terminated and
 * printable; a table line refused names the file and a line; a table
 * taken holds only known actions and non-empty meanings; a datagram
 * decoded encodes back to the same bytes. */
#include "config.h"
#include "fuzz.h"
#include "gpuverdict.h"
#include "kmsg.h"
#include "xid.h"

static void check_report(const struct rdzv_xid_report *x)
{
	size_t i;

	FUZZ_ASSERT(x->xid != 0);
	FUZZ_ASSERT(strlen(x->pci) == 10 && x->pci[4] == ':' && x->pci[7] == ':');
	for (i = 0; i < 10; i++)
		FUZZ_ASSERT(i == 4 || i == 7 || (x->pci[i] >= '0' && x->pci[i] <= '9')
		            || (x->pci[i] >= 'a' && x->pci[i] <= 'f'));
	FUZZ_ASSERT(memchr(x->text, '\0', sizeof(x->text)) != NULL);
	FUZZ_ASSERT(memchr(x->name, '\0', sizeof(x->name)) != NULL);
	for (i = 0; x->text[i]; i++)
		FUZZ_ASSERT((unsigned char)x->text[i] >= 0x20 && x->text[i] != 0x7f);
	FUZZ_ASSERT(x->pid >= -1);
}

static int on_report(void *ctx, const struct rdzv_xid_report *x)
{
	uint64_t *after = ctx;

	check_report(x);
	FUZZ_ASSERT(x->seq > *after);
	return 0;
}

static void fuzz_log(const char *text, size_t len)
{
	struct rdzv_kmsg_scan s = { 0 };
	struct rdzv_xid_report x;
	struct rdzv_kmsg_rec r;
	int n;

	s.after_seq = len % 7;
	s.max_bytes = len / 2 + 1;
	n = rdzv_kmsg_scan_text(text, len, &s, on_report, &s.after_seq);
	FUZZ_ASSERT(n >= 0 && s.bytes <= s.max_bytes && s.last_seq >= s.after_seq);
	FUZZ_ASSERT((size_t)n <= s.records);
	if (rdzv_kmsg_record(text, len, &r) == 0) {
		FUZZ_ASSERT(r.msg >= text && r.msg + r.len == text + len);
		if (rdzv_xid_report_parse(r.msg, r.len, &x) == 0)
			check_report(&x);
	}
	if (rdzv_xid_report_parse(text, len, &x) == 0)
		check_report(&x);
}

static void fuzz_table(const char *text, size_t len)
{
	struct rdzv_xid_table t = { 0 };
	char err[256];
	size_t i;

	if (rdzv_xid_table_parse(&t, text, len, "fuzz.conf", err, sizeof(err)) < 0)
		FUZZ_ASSERT(strncmp(err, "fuzz.conf:", 10) == 0);
	for (i = 0; i < t.n; i++) {
		FUZZ_ASSERT(t.v[i].xid >= 1 && t.v[i].xid <= RDZV_XID_MAX);
		FUZZ_ASSERT(t.v[i].action < RDZV_XID_UNKNOWN);
		FUZZ_ASSERT(t.v[i].meaning[0] != '\0' && t.v[i].meaning[0] != ' ');
		FUZZ_ASSERT(rdzv_xid_lookup(&t, t.v[i].xid, t.v[i].gens & (0u - t.v[i].gens)) != NULL);
	}
	rdzv_xid_table_free(&t);
}

static void fuzz_dgram(const char *text, size_t len)
{
	struct rdzv_gpu_report r;
	char buf[RDZV_GPU_DGRAM_MAX], line[1024];
	int n;

	if (rdzv_gpu_report_decode(text, len, &r) < 0)
		return;
	FUZZ_ASSERT(r.gpu >= -2 && r.rank >= -2 && r.before_ms >= -1);
	FUZZ_ASSERT(r.f.action <= RDZV_XID_UNKNOWN);
	n = rdzv_gpu_report_encode(&r, buf, sizeof(buf));
	FUZZ_ASSERT(n > 0);
	FUZZ_ASSERT(rdzv_gpu_report_format(&r, r.rank, line, sizeof(line)) == 0);
	FUZZ_ASSERT(memchr(line, '\n', strlen(line)) == NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data + 1;

	if (size < 1)
		return 0;
	if (data[0] == 'k')
		fuzz_log(text, size - 1);
	else if (data[0] == 't')
		fuzz_table(text, size - 1);
	else if (data[0] == 'g')
		fuzz_dgram(text, size - 1);
	return 0;
}
