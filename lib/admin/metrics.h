/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/admin/: what admins get: the step's record, its metrics, DCGM's job map.
 * Uses lib/failure/, lib/common/. */
/* metrics.h: a node's counters of the steps it ran, for node_exporter's
 * textfile collector (metrics_dir=): no daemon, one file rewritten when a
 * step ends (slurmstepd's exit, as root) under a lock, renamed into place
 * so that a scrape never reads half of it.
 *
 *   rdzv_steps_total{mode}              steps with a mode, by mode
 *   rdzv_step_failures_total{cause}     steps that failed on this node, by
 *                                       the node's first cause: exit (a task
 *                                       exited non-zero), signal (a task was
 *                                       killed), refused_by_node,
 *                                       refused_by_srun
 *   rdzv_gpu_faults_total{kind}         GPU faults a failing step's node found
 *                                       (gpuverdict.h): xid_node, xid_app, ras
 *   rdzv_binding_fallbacks_total        steps that ran unbound (strict=no)
 *   rdzv_record_errors_total            step records that could not be written
 *   rdzv_profile_info{profile,hash}     1: the NCCL profile of the last step
 *   rdzv_last_step_end_seconds          when the last step ended
 *
 * The counters live in the file itself: read back (only lines of this
 * shape; anything else is dropped), added to, written again. */
#ifndef RDZV_METRICS_H
#define RDZV_METRICS_H

#include <stddef.h>
#include <stdint.h>

#define RDZV_METRICS_FILE "rdzv.prom"
#define RDZV_METRICS_SERIES_MAX 256
#define RDZV_METRICS_KEY_MAX 200
#define RDZV_METRICS_FILE_MAX (64u << 10)

struct rdzv_metrics {
	size_t n;
	struct {
		char key[RDZV_METRICS_KEY_MAX]; /* "name" or "name{label=\"v\",...}" */
		uint64_t v;
	} s[RDZV_METRICS_SERIES_MAX];
};

/* What one step did on this node. */
struct rdzv_metrics_step {
	const char *mode;    /* the mode's name */
	const char *cause;   /* NULL: the step did not fail here */
	const char *profile; /* NULL: none */
	uint64_t profile_hash;
	int bind_fallback;   /* ran unbound */
	int record_error;    /* its record could not be written */
	int64_t end;         /* seconds since the epoch */
	const char *gpu_fault; /* the kind of the GPU fault found; NULL none */
};

/* Read series from a file this code wrote: sample lines of the families
 * above, "NAME VALUE" or "NAME{LABELS} VALUE", the value a decimal
 * integer; comments and anything else skipped. */
void rdzv_metrics_read(struct rdzv_metrics *m, const char *text, size_t n);

/* One step added (counters) or set (gauges). -1 when the table is full. */
int rdzv_metrics_step(struct rdzv_metrics *m, const struct rdzv_metrics_step *s);

/* The exposition text (HELP and TYPE before each family, its series
 * sorted) into buf[len]. Returns its length, or -1 when it does not fit. */
long rdzv_metrics_text(const struct rdzv_metrics *m, char *buf, size_t len);

/* The whole update of dir/rdzv.prom under dir/.rdzv.prom.lock (flock):
 * read, add the step, write a temporary file, rename it into place. dir is
 * checked as record_dir= is (root's, not writable by group or others).
 * 0, or -1 with why. */
int rdzv_metrics_update(const char *dir, const struct rdzv_metrics_step *s, char *err,
                        size_t errlen);

#endif
