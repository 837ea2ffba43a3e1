/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz-launcher.c: a step's command line as the launcher finder reads it
 * (lib/modes/launcher.h), and srun's own command line as
 * rdzv_srun_command_index reads it. Input: argv words, one per line (the
 * first is the program; a -c word may hold a whole shell string). Invariants:
 * the finder answers 0 or 1, a found launcher has a kind and a command, its
 * strings are terminated within their arrays, "no launcher" leaves the
 * result zeroed; the refusal happens only with a found, unconfigured
 * launcher and more than one task, and always says why; one task is never
 * refused; the command index is -1 or inside argv. */
#include "config.h"
#include "fuzz.h"
#include "launcher.h"

static int terminated(const char *s, size_t n)
{
	return memchr(s, '\0', n) != NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_pieces p;
	struct rdzv_launcher l;
	char err[512];
	int rc, at;

	if (fuzz_split(data, size, &p) < 0)
		return 0;
	rc = rdzv_launcher_find(p.n, p.v, NULL, &l);
	FUZZ_ASSERT(rc == 0 || rc == 1);
	FUZZ_ASSERT(terminated(l.command, sizeof(l.command)) && terminated(l.script, sizeof(l.script))
	            && terminated(l.module, sizeof(l.module))
	            && terminated(l.configured, sizeof(l.configured)));
	if (rc == 1)
		FUZZ_ASSERT(l.kind != RDZV_LAUNCHER_NONE && l.command[0] != '\0');
	else
		FUZZ_ASSERT(l.kind == RDZV_LAUNCHER_NONE && !l.command[0] && !l.script[0]);

	err[0] = '\0';
	FUZZ_ASSERT(rdzv_launcher_check("torch", p.n, p.v, NULL, 1, err, sizeof(err)) == 0);
	err[0] = '\0';
	if (rdzv_launcher_check("deepspeed", p.n, p.v, NULL, 8, err, sizeof(err)) < 0)
		FUZZ_ASSERT(rc == 1 && !l.configured[0] && err[0] != '\0');
	else
		FUZZ_ASSERT(rc == 0 || l.configured[0]);

	at = rdzv_srun_command_index(p.n, p.v);
	FUZZ_ASSERT(at == -1 || (at >= 1 && at < p.n));
	fuzz_pieces_free(&p);
	return 0;
}
