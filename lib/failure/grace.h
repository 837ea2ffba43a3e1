/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/failure/: how failures travel and are judged: a failed rank's report,
 * liveness, the collective grace, hang dumps, a GPU fault's verdict. Uses
 * lib/modes/, lib/step/, lib/gpu/, lib/common/. */
/* grace.h: a step never outlives its failed collective.
 *
 * A rank whose collective timed out, or lost its peer, may then block in
 * its own cleanup (a finally block's barrier, a destroy_process_group that
 * never returns, an emergency checkpoint stuck on the same peer) and the
 * step never ends: no task exits, so kill-on-bad-exit has nothing to act
 * on. Each rank's sitecustomize.py says "FAIL" to srun the moment a
 * torch.distributed call raises (hang.h), before the program's handlers
 * run; srun counts the ranks that said so, and when the step is still
 * running a grace period after the first (collective_grace=,
 * --rdzv-collective-grace=, 30 s by default), stops it, naming the ranks
 * that never said so: those that never joined the collective the others
 * gave up on. Plain C, no spank.h: tests/unit/test-grace.c. */
#ifndef RDZV_GRACE_H
#define RDZV_GRACE_H

#include <stddef.h>
#include <stdint.h>

#include "hang.h"

/* Ranks kept until a report brings the world (more are lost: named later
 * as if they never reported). */
#define RDZV_GRACE_EARLY_MAX 64

/* The ranks that reported, and the first report. */
struct rdzv_grace {
	uint32_t ntasks;   /* the step's ranks (0: not known, nobody named) */
	uint8_t *seen;     /* a bit per rank, ntasks bits */
	uint32_t nseen;    /* distinct ranks of [0, ntasks) that reported */
	uint32_t reports;  /* reports taken, any rank */
	struct rdzv_hang_ask first;
	/* ntasks not known yet: the ranks that reported before a world came */
	uint32_t early[RDZV_GRACE_EARLY_MAX];
	uint32_t nearly;
};

/* 0, or -1 (no memory). ntasks 0: the ranks are not srun's tasks (torchrun's
 * workers): the first FAIL that carries its world (1 to RDZV_GRACE_WORLD_MAX)
 * sets them; until then nothing can be named but the first report. */
#define RDZV_GRACE_WORLD_MAX (1u << 24)
int rdzv_grace_init(struct rdzv_grace *g, uint32_t ntasks);
void rdzv_grace_free(struct rdzv_grace *g);

/* One rank's report (FAIL or ASK). -1 only when the world a FAIL carries
 * cannot be held (no memory); otherwise 1 when it is the step's first,
 * 0 otherwise; a rank outside [0, ntasks) counts as a report but names
 * nobody. */
int rdzv_grace_take(struct rdzv_grace *g, const struct rdzv_hang_ask *a);

/* How many ranks never reported: ntasks - nseen (0 when ntasks is 0). */
uint32_t rdzv_grace_missing(const struct rdzv_grace *g);

/* Where each rank ran, when srun knows (the step's layout): rank_node
 * [ntasks] indexes node_names [nnodes]; NULL: not known. */
struct rdzv_grace_nodes {
	const uint32_t *rank_node;
	char *const *node_names;
	uint32_t ntasks, nnodes;
	uint32_t per_task; /* ranks per task: 1, or torchrun's workers per node (0: none known) */
};

/* The line srun prints when the grace ends, without "rdzv: " and without a
 * newline (a rank's node only when nodes says it):
 *   "rank 3 (node n2) never joined the collective the other ranks left
 *    (first rank 0 (node n1): RuntimeError: ... timed out); the step was
 *    stopped 10 s after that, still running (WHY)"
 *   "rank 3 (node n2) and 2 more (ranks 5, 9) never joined ..."
 *   "every rank left its collective with an error (first rank 0 ...); ..."
 *   "a collective failed (first rank 0 ...); ..." (the ranks not known)
 * grace_s: the grace; why: where it came from ("--rdzv-collective-grace",
 * ...). At most 8 ranks are listed. Returns 0, or -1 when out is too small
 * (out then holds a cut line) or nothing was reported. */
int rdzv_grace_verdict(const struct rdzv_grace *g, const struct rdzv_grace_nodes *nodes,
                       uint32_t grace_s, const char *why, char *out, size_t len);

#endif
