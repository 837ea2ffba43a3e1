/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz-hang.c: what rdzv-hang reads (lib/failure/hang.c): a
 * faulthandler dump as a process wrote it (any bytes: the process is the
 * user's), a collector's record header, a /proc/PID/status text.
 * Invariants: a parsed dump has at least one frame, NUL-terminated fields
 * and a collective that is empty or one of the known calls' names; its
 * text fits; the verdict over copies of it names nobody (all agree) and
 * over it and a rank without a dump names nobody either; a header's node
 * has no space and its pid is positive; SigCgt answers -1, 0 or 1; an
 * ask (a datagram from the network, srun decodes it) that decodes has a
 * node of host-name characters and a printable WHAT, both terminated. */
#include "config.h"
#include "fuzz.h"
#include "grace.h"
#include "hang.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rdzv_hang_rank r[3];
	struct rdzv_hang_where w;
	char text[600], out[4096], node[64];
	uint32_t rank;
	long pid;
	int i, s;

	/* The whole input, unterminated, is the dump. */
	if (rdzv_hang_parse((const char *)data, size, &w) == 0) {
		FUZZ_ASSERT(w.frames > 0);
		FUZZ_ASSERT(memchr(w.file, '\0', sizeof(w.file)) && memchr(w.func, '\0', sizeof(w.func)));
		FUZZ_ASSERT(memchr(w.coll, '\0', sizeof(w.coll)));
		rdzv_hang_where_text(&w, text, sizeof(text));
		FUZZ_ASSERT(strlen(text) < sizeof(text));
		for (i = 0; i < 3; i++) {
			memset(&r[i], 0, sizeof(r[i]));
			r[i].rank = (uint32_t)i;
			snprintf(r[i].node, sizeof(r[i].node), "n%d", i);
			r[i].have = i < 2;
			r[i].w = w;
		}
		s = rdzv_hang_verdict(r, 3, out, sizeof(out));
		FUZZ_ASSERT(s == 0 || s == -1);
		if (s == 0)
			FUZZ_ASSERT(strlen(out) < sizeof(out));
	}
	/* A header is one line: the input up to its first newline. */
	{
		const uint8_t *nl = memchr(data, '\n', size);
		size_t n = nl ? (size_t)(nl - data) : size;

		if (rdzv_hang_record_header((const char *)data, n, &rank, node, sizeof(node), &pid) == 0) {
			FUZZ_ASSERT(pid > 0 && node[0] && !strchr(node, ' '));
		}
	}
	{
		char *t = malloc(size + 1);

		if (!t)
			return 0;
		memcpy(t, data, size);
		t[size] = '\0';
		for (i = 0; i <= 65; i += 13) {
			s = rdzv_hang_sigcgt(t, strlen(t), i);
			FUZZ_ASSERT(s >= -1 && s <= 1);
		}
		free(t);
	}
	{
		struct rdzv_hang_ask a;
		size_t k;

		if (rdzv_hang_ask_decode((const char *)data, size, &a) == 0) {
			FUZZ_ASSERT(memchr(a.node, '\0', sizeof(a.node)) && a.node[0]);
			FUZZ_ASSERT(memchr(a.what, '\0', sizeof(a.what)));
			for (k = 0; a.what[k]; k++)
				FUZZ_ASSERT(a.what[k] >= 0x20 && a.what[k] < 0x7f);
			for (k = 0; a.node[k]; k++)
				FUZZ_ASSERT(a.node[k] != ' ' && a.node[k] != '\n');
			/* srun's count of it, and the grace's line, in any buffer. */
			{
				struct rdzv_grace g;
				char small[96], big[1024];
				int rc;

				FUZZ_ASSERT(rdzv_grace_init(&g, 20) == 0);
				FUZZ_ASSERT(rdzv_grace_take(&g, &a) == 1);
				FUZZ_ASSERT(rdzv_grace_missing(&g) == (a.rank < 20 ? 19u : 20u));
				rc = rdzv_grace_verdict(&g, NULL, 30, "w", small, sizeof(small));
				FUZZ_ASSERT(rc >= -1 && memchr(small, '\0', sizeof(small)));
				FUZZ_ASSERT(rdzv_grace_verdict(&g, NULL, 30, "w", big, sizeof(big)) == 0);
				FUZZ_ASSERT(strlen(big) < sizeof(big));
				rdzv_grace_free(&g);
				/* The ranks from the report's world (torchrun's workers). */
				FUZZ_ASSERT(rdzv_grace_init(&g, 0) == 0);
				rc = rdzv_grace_take(&g, &a);
				FUZZ_ASSERT(rc == 1 || rc == -1);
				FUZZ_ASSERT(g.ntasks == 0 || g.ntasks == a.world);
				if (rc == 1)
					FUZZ_ASSERT(rdzv_grace_verdict(&g, NULL, 30, "w", big, sizeof(big)) == 0);
				rdzv_grace_free(&g);
			}
		}
	}
	return 0;
}
