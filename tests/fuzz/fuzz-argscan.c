/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz-argscan.c: the step's command line as the argv scanner and the
 * Megatron layout check read it (lib/modes/argscan.h, lib/modes/megatron.h).
 * Input: argv words, one per line (the first is the program); the last line,
 * when it contains '=', is read as the environment word TP_SIZE=... style
 * (it stays in argv too). Invariants: the scanner's answer is -1, 0 or 1; a
 * found number lies in its range; a refusal leaves the output untouched and
 * says why; flag counts never exceed the words; a layout read without error
 * has every size in 1..RDZV_MEGATRON_SIZE_MAX; the check accepts or refuses
 * with a message for any step shape, and always accepts TP=PP=CP=1. */
#include "config.h"
#include "fuzz.h"
#include "argscan.h"
#include "megatron.h"

#define TPO "--tensor-model-parallel-size"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_pieces p;
	struct rdzv_argval av;
	struct rdzv_megatron_layout l;
	struct rdzv_megatron_place place;
	char err[512], *envp[2] = { NULL, NULL };
	uint64_t v = 12345;
	uint32_t h;
	int rc;

	if (fuzz_split(data, size, &p) < 0)
		return 0;

	err[0] = '\0';
	rc = rdzv_argscan_uint(p.n, p.v, TPO, 1, 64, &v, err, sizeof(err));
	FUZZ_ASSERT(rc >= -1 && rc <= 1);
	if (rc == 1)
		FUZZ_ASSERT(v >= 1 && v <= 64);
	else
		FUZZ_ASSERT(v == 12345);
	if (rc < 0)
		FUZZ_ASSERT(err[0] != '\0');

	rc = rdzv_argscan_value(p.n, p.v, TPO, &av, err, sizeof(err));
	FUZZ_ASSERT(rc >= -1 && rc <= 1);
	if (rc == 1)
		FUZZ_ASSERT(av.count >= 1 && av.index >= 1 && av.index < p.n && av.value);
	FUZZ_ASSERT(rdzv_argscan_flag(p.n, p.v, "--fp8-hybrid") < p.n);

	if (p.n > 1 && strchr(p.v[p.n - 1], '='))
		envp[0] = p.v[p.n - 1];
	err[0] = '\0';
	if (rdzv_megatron_read(p.n, p.v, envp, &l, err, sizeof(err)) < 0) {
		FUZZ_ASSERT(err[0] != '\0');
		goto out;
	}
	FUZZ_ASSERT(l.tp.n >= 1 && l.tp.n <= RDZV_MEGATRON_SIZE_MAX);
	FUZZ_ASSERT(l.pp.n >= 1 && l.pp.n <= RDZV_MEGATRON_SIZE_MAX);
	FUZZ_ASSERT(l.cp.n >= 1 && l.cp.n <= RDZV_MEGATRON_SIZE_MAX);

	/* A step shape taken from the input: the first word as tasks per
	 * node, the second as the distribution, counts from a hash. */
	h = fuzz_hash(p.v[0]);
	memset(&place, 0, sizeof(place));
	place.ntasks = h % 4096;
	place.nnodes = 1 + (h >> 12) % 64;
	place.local_ntasks = (h >> 18) % 16;
	place.tasks_per_node = p.v[0];
	place.distribution = p.n > 1 ? p.v[1] : NULL;
	place.plane_size = (h >> 22) % 9;
	err[0] = '\0';
	if (rdzv_megatron_check(&l, &place, err, sizeof(err)) < 0)
		FUZZ_ASSERT(err[0] != '\0');
	FUZZ_ASSERT(l.ep.n >= 1 && l.ep.n <= RDZV_MEGATRON_SIZE_MAX);
	FUZZ_ASSERT(l.etp.n >= 1 && l.etp.n <= RDZV_MEGATRON_SIZE_MAX);
	l.tp.n = l.pp.n = l.cp.n = l.ep.n = l.etp.n = 1;
	if (place.ntasks > 0)
		FUZZ_ASSERT(rdzv_megatron_check(&l, &place, err, sizeof(err)) == 0);
	(void)rdzv_megatron_fp8_warning(&l, p.v[0], err, sizeof(err));
out:
	fuzz_pieces_free(&p);
	return 0;
}
