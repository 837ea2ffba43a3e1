/* SPDX-License-Identifier: GPL-2.0-or-later */
/* bench.h: timing, statistics and CSV output shared by the benchmark
 * programs (bench-logic, bench-topo). Not part of the plugin or its tests:
 * `make bench` builds and runs them (bench/run-bench.sh).
 *
 * Timing: the work is run in batches; each call is timed on its own with
 * CLOCK_MONOTONIC (so per-call setup and reset stay outside the measure),
 * a batch lasts at least the target time, and the result is the median,
 * minimum and maximum of the batches' per-call means. Medians of batches
 * resist the noise of a shared machine better than one long mean. */
#ifndef RDZV_BENCH_H
#define RDZV_BENCH_H

#include <stddef.h>

struct bench_stat {
	double median, min, max; /* per call, microseconds */
	unsigned batches;
	unsigned long calls;     /* calls in each batch */
};

/* One call of the measured work; returns 0, or -1 with a reason in err. */
typedef int (*bench_work_f)(void *ctx, char *err, size_t errlen);
/* Untimed step after each call (undo what the call changed); may be NULL. */
typedef void (*bench_reset_f)(void *ctx);

double bench_now_us(void);

/* Run work in `batches` batches of at least target_us each. Returns 0, or
 * -1 with the work's reason in err. */
int bench_time(bench_work_f work, bench_reset_f reset, void *ctx, unsigned batches,
               double target_us, struct bench_stat *out, char *err, size_t errlen);

/* Median, min and max of v[n] (sorted in place). */
void bench_stat_of(double *v, size_t n, struct bench_stat *out);

/* Peak resident set of this process so far (getrusage), KiB. */
long bench_maxrss_kib(void);

/* CSV rows, appended to path (header written when the file is empty);
 * NULL path: no CSV. Columns:
 * section,case,config,reps,median,min,max,unit,ratio,extra
 * ratio < 0 is written empty; extra is "key=value;key=value" or "". */
int bench_csv_open(const char *path);
void bench_csv_row(const char *section, const char *kase, const char *config,
                   const struct bench_stat *s, const char *unit, double ratio,
                   const char *extra);
void bench_csv_close(void);

/* "PROG [--csv FILE] [DIR]": *csv_path the CSV path or NULL; returns DIR, else
 * a new directory made from tmpl (mkdtemp; *made set), or NULL with the
 * reason on stderr. */
const char *bench_dir_args(int argc, char **argv, const char *prog, const char **csv_path,
                           char *tmpl, int *made);

/* Batches from $BENCH_BATCHES, else def (1..1000). */
unsigned bench_batches(unsigned def);

#endif
