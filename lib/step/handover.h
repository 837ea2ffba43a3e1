/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/step/: the step's plan: host lists, task layouts, node order,
 * MASTER_ADDR and the port, rank 0, heterogeneous steps, srun's command line
 * and what it hands the nodes, the interface to rank 0, the step's datagram
 * channel. Uses lib/common/. */
/* handover.h: what srun hands the nodes of a step (the step plan, the NVLink
 * domain map, the addresses of its report, hang and domain channels),
 * through the step's environment, under every --export.
 *
 * srun copies its own environment into the step's after local_user_init,
 * but with --export=NONE, --export=VAR,... without ALL, or SLURM_EXPORT_ENV
 * (sbatch --export=NONE) it forwards only the variables whose names begin
 * with "SLURM" (every major from 22.05; 23.02+ also "_SLURM_SPANK_OPTION_",
 * which 22.05 drops: src/common/env.c, env_array_merge_slurm and
 * env_array_merge_slurm_spank, called by srun's launch code). So each text
 * travels as SLURM_RDZV_NAME. Slurm drops a variable whose value reaches
 * ENV_BUFSIZE (256 KiB) without a word, and a task cannot exec with a
 * variable of 128 KiB or more: a longer text is cut into parts of at most
 * RDZV_HANDOVER_PART bytes,
 *   SLURM_RDZV_NAME=#PARTS:BYTES:HASH  SLURM_RDZV_NAME_1=...  ..._PARTS=...
 * (HASH: FNV-1a 64 of the whole text, hex), put back together and checked
 * on the node, and every part removed from the tasks' environment. A text
 * that begins with '#' is always sent in parts, so a single value is never
 * taken for a header. */
#ifndef RDZV_HANDOVER_H
#define RDZV_HANDOVER_H

#include <stddef.h>
#include <stdint.h>

#define RDZV_HANDOVER_PREFIX "SLURM_RDZV_"
#define RDZV_HANDOVER_PART 65536u
/* 256 MiB: far above any step's text (a 65,536-node order is ~400 KB),
 * far below what srun's launch message may carry. */
#define RDZV_HANDOVER_PARTS_MAX 4096u

/* The names of the handed-over texts (each a full variable name). */
#define RDZV_HO_PLAN RDZV_HANDOVER_PREFIX "STEP_PLAN"
#define RDZV_HO_DOMAINS RDZV_HANDOVER_PREFIX "STEP_DOMAINS"
#define RDZV_HO_REPORT RDZV_HANDOVER_PREFIX "STEP_REPORT"
#define RDZV_HO_HANG_ASK RDZV_HANDOVER_PREFIX "HANG_ASK"
#define RDZV_HO_DOMAIN_ASK RDZV_HANDOVER_PREFIX "DOMAIN_ASK"
/* Set by srun's plugin after its options, before the job exists: it reaches
 * every step srun launches, every component of a het step, and a step of
 * srun --async, which runs no per-step srun hook (so no plan). A node
 * without a plan tells from it why. */
#define RDZV_HO_SRUN RDZV_HANDOVER_PREFIX "SRUN"
/* The mark's value: "VERSION format=N", srun's plugin version and the
 * hand-over format it writes (the variables above, their texts). Releases
 * before the format was named wrote "VERSION" alone: format 1, the same
 * texts as format 2. A node reads formats 1 to RDZV_HANDOVER_FORMAT; a step
 * whose srun writes a later one is refused by its nodes, naming both
 * versions, rather than run on texts misread (wrong ranks). A later release
 * that changes a text's meaning raises the number. */
#ifndef RDZV_HANDOVER_FORMAT
#define RDZV_HANDOVER_FORMAT 2
#endif

/* srun's mark for this build into buf[len]. 0, or -1 when it does not fit. */
int rdzv_srun_mark_format(const char *version, char *buf, size_t len);

/* Read a mark: its version into version[vlen] (cut to fit) and its format
 * (1 when it names none). 0, or -1 for a mark of no known shape. */
int rdzv_srun_mark_parse(const char *mark, char *version, size_t vlen, unsigned *format);

/* Whether this node reads a mark's format: 1 yes, 0 no with why (both
 * versions and formats named) in err. */
int rdzv_srun_mark_readable(const char *srun_version, unsigned format, const char *node_version,
                            char *err, size_t errlen);
/* srun refused the step after it created it (local_user_init): "JOB.STEP".
 * Slurm's srun only aborts the launch then, and slurmctld keeps the step,
 * and the CPUs and GPUs it holds, until the job ends: no public call ends a
 * step that no slurmstepd runs (a kill reaches no slurmstepd). So srun
 * launches it marked refused, and each node ends every task before exec:
 * the step ends in slurmctld as a failed step does, the allocation stays. */
#define RDZV_HO_REFUSED RDZV_HANDOVER_PREFIX "STEP_REFUSED"

/* An environment: srun's own (getenv/setenv) or a step's (spank_getenv...). */
struct rdzv_ho_env {
	/* 1 with *value (malloc'd), 0 absent (*value NULL), -1 unreadable */
	int (*get)(void *ctx, const char *name, char **value);
	int (*set)(void *ctx, const char *name, const char *value); /* 0 or -1 */
	void (*unset)(void *ctx, const char *name);
	void *ctx;
};

/* srun's own environment (libc's environ). */
extern const struct rdzv_ho_env rdzv_env_process;

/* Set name to text, in parts when long; any earlier value's parts go.
 * Returns 0 or -1 with the reason. */
int rdzv_handover_put(const struct rdzv_ho_env *env, const char *name, const char *text,
                      char *err, size_t errlen);

/* Take name's text out of env, every part removed whatever happens.
 * Returns 1 with *text (to free), 0 when absent, -1 when present but
 * broken (a part missing, cut or of another text), naming what. */
int rdzv_handover_take(const struct rdzv_ho_env *env, const char *name, char **text,
                       char *err, size_t errlen);

/* Remove name and its parts. */
void rdzv_handover_clear(const struct rdzv_ho_env *env, const char *name);

/* The refusal mark's text, "JOB.STEP", into buf[len]. Returns 0, or -1 when
 * it does not fit. */
int rdzv_refused_format(uint32_t job, uint32_t step, char *buf, size_t len);

/* Read a refusal mark: exactly "JOB.STEP", both decimal 32-bit numbers.
 * Returns 0, or -1 for anything else (the caller then ignores it). */
int rdzv_refused_parse(const char *s, uint32_t *job, uint32_t *step);

/* How many variables a text of n bytes takes (1, or 1 + its parts). */
size_t rdzv_handover_vars(const char *text);

#endif
