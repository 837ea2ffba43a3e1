/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz-handover.c: srun's hand-over as a node takes it out of the step's
 * environment (lib/step/handover.c), which a user can also set. Input: the
 * first line is the value of SLURM_RDZV_STEP_PLAN, each following line the
 * value of the next part (_1, _2, ...). Invariants: taking it returns 1, 0 or
 * -1; on 1 the text is a string and, when the value was a header, as long as
 * the header says; whatever the outcome, no variable of the name or its
 * parts is left; and the whole input put as one text comes back the same.
 * The first line is also read as a refusal mark: accepted only when it is
 * the mark rdzv_refused_format writes for the numbers read. */
#include "config.h"
#include "fuzz.h"
#include "handover.h"

#include "../unit/memenv.h"

#define E memenv
#define M memenv_ops

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_pieces p;
	char name[64], err[256], *text = NULL, *whole;
	int i, rc;

	if (fuzz_split(data, size, &p) < 0)
		return 0;
	memenv_reset();
	memenv_set(NULL, RDZV_HO_PLAN, p.v[0]);
	for (i = 1; i < p.n; i++) {
		snprintf(name, sizeof(name), "%s_%d", RDZV_HO_PLAN, i);
		memenv_set(NULL, name, p.v[i]);
	}
	rc = rdzv_handover_take(&M, RDZV_HO_PLAN, &text, err, sizeof(err));
	FUZZ_ASSERT(rc >= -1 && rc <= 1);
	FUZZ_ASSERT((rc == 1) == (text != NULL));
	if (rc == 1 && p.v[0][0] != '#')
		FUZZ_ASSERT(strcmp(text, p.v[0]) == 0);
	for (i = 0; i < E.n; i++)
		FUZZ_ASSERT(strncmp(E.name[i], RDZV_HO_PLAN, strlen(RDZV_HO_PLAN)) != 0);
	free(text);
	text = NULL;
	{
		uint32_t job, step;
		char again[32];

		if (rdzv_refused_parse(p.v[0], &job, &step) == 0) {
			FUZZ_ASSERT(rdzv_refused_format(job, step, again, sizeof(again)) == 0);
			/* the same numbers, up to leading zeros */
			FUZZ_ASSERT(strspn(p.v[0], "0123456789.") == strlen(p.v[0]));
			FUZZ_ASSERT(strchr(p.v[0], '.') == strrchr(p.v[0], '.'));
		}
	}
	{
		char ver[32], again[64], why[512];
		unsigned f = 0;

		/* srun's mark: a parsed one has a version and a format, and
		 * either is read or is refused with a reason. */
		if (rdzv_srun_mark_parse(p.v[0], ver, sizeof(ver), &f) == 0) {
			FUZZ_ASSERT(ver[0] && f >= 1);
			FUZZ_ASSERT(rdzv_srun_mark_readable(ver, f, "0.1.0", why, sizeof(why))
			            || why[0]);
			FUZZ_ASSERT(rdzv_srun_mark_format(ver, again, sizeof(again)) == 0
			            || strlen(ver) > 40);
		}
	}
	/* The raw input as one text: put, then taken back the same. */
	memenv_reset();
	if ((whole = fuzz_string(data, size)) && strlen(whole) < 30 * RDZV_HANDOVER_PART) {
		FUZZ_ASSERT(rdzv_handover_put(&M, RDZV_HO_DOMAINS, whole, err, sizeof(err)) == 0);
		FUZZ_ASSERT(rdzv_handover_take(&M, RDZV_HO_DOMAINS, &text, err, sizeof(err)) == 1);
		FUZZ_ASSERT(strcmp(text, whole) == 0 && E.n == 0);
		free(text);
	}
	free(whole);
	memenv_reset();
	fuzz_pieces_free(&p);
	return 0;
}
