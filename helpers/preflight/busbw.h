/* SPDX-License-Identifier: GPL-2.0-or-later */
/* busbw.h: bandwidth arithmetic of the preflight, with nccl-tests'
 * definitions (nccl-tests doc/PERFORMANCE.md):
 *   algbw = bytes / time                 (GB/s, 1 GB = 1e9 bytes)
 *   busbw = algbw * factor(collective, n)
 * where the factor makes the figure comparable to the hardware's peak
 * whatever the rank count: all-reduce 2(n-1)/n, all-gather, reduce-scatter
 * and all-to-all (n-1)/n, broadcast and reduce 1. With one rank the
 * all-reduce moves nothing over a bus, so its busbw is 0, as in nccl-tests.
 * Also the outlier rule (a value below a fraction of the median) and the
 * size sweep. */
#ifndef RDZV_BUSBW_H
#define RDZV_BUSBW_H

#include <stddef.h>
#include <stdint.h>

enum rdzv_coll {
	RDZV_COLL_ALLREDUCE,
	RDZV_COLL_ALLGATHER,
	RDZV_COLL_REDUCESCATTER,
	RDZV_COLL_ALLTOALL,
	RDZV_COLL_BROADCAST,
	RDZV_COLL_REDUCE,
};

/* The bus factor, or -1.0 for an unknown collective or nranks 0. */
double rdzv_bw_factor(enum rdzv_coll coll, uint32_t nranks);

/* algbw and busbw in GB/s for bytes moved in seconds by nranks. Returns 0,
 * or -1 (seconds not a positive finite number, nranks 0, unknown coll). */
int rdzv_bw_compute(enum rdzv_coll coll, uint64_t bytes, double seconds, uint32_t nranks,
                    double *algbw, double *busbw, char *err, size_t errlen);

/* Median of v[0..n-1] (v is not modified). Returns 0, or -1 when n is 0, a
 * value is not finite, or memory runs out. */
int rdzv_bw_median(const double *v, size_t n, double *median);

/* Flag v[i] < frac * median (0 < frac <= 1). Returns the number flagged
 * (flag[] gets 0/1) and the median, or -1 (bad frac, empty, not finite). A
 * median of 0 flags nothing: no bandwidth to compare against. */
int rdzv_bw_outliers(const double *v, size_t n, double frac, unsigned char *flag,
                     double *median, char *err, size_t errlen);

/* "8", "64K", "256M", "1G" (binary multiples; "B" suffix accepted) into
 * bytes, 1 .. 2^40. Returns 0 or -1. */
int rdzv_bw_parse_size(const char *s, uint64_t *bytes, char *err, size_t errlen);

/* "256 MiB", "8 B", "1.5 KiB" into out. */
void rdzv_bw_format_size(uint64_t bytes, char *out, size_t outlen);

/* The sweep min, min*factor, ... up to max (max included even when not on
 * the grid, so the largest size is always measured). Writes at most cap
 * sizes. Returns the count, or -1 (min 0, min > max, factor < 2, cap 0). */
int rdzv_bw_sweep(uint64_t min, uint64_t max, unsigned factor, uint64_t *out, size_t cap,
                  char *err, size_t errlen);

#endif
