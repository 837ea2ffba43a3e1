/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "busbw.h"
#include "util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double rdzv_bw_factor(enum rdzv_coll coll, uint32_t nranks)
{
	double n = nranks;

	if (nranks == 0)
		return -1.0;
	switch (coll) {
	case RDZV_COLL_ALLREDUCE:
		return 2.0 * (n - 1.0) / n;
	case RDZV_COLL_ALLGATHER:
	case RDZV_COLL_REDUCESCATTER:
	case RDZV_COLL_ALLTOALL:
		return (n - 1.0) / n;
	case RDZV_COLL_BROADCAST:
	case RDZV_COLL_REDUCE:
		return 1.0;
	}
	return -1.0;
}

int rdzv_bw_compute(enum rdzv_coll coll, uint64_t bytes, double seconds, uint32_t nranks,
                    double *algbw, double *busbw, char *err, size_t errlen)
{
	double f = rdzv_bw_factor(coll, nranks);

	if (f < 0)
		return rdzv_err(err, errlen, "no bus factor for collective %d with %u ranks",
		                (int)coll, nranks);
	if (!isfinite(seconds) || seconds <= 0)
		return rdzv_err(err, errlen, "elapsed time %g s is not a positive number", seconds);
	*algbw = (double)bytes / 1e9 / seconds;
	*busbw = *algbw * f;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int rdzv_bw_median(const double *v, size_t n, double *median)
{
	double *c;
	size_t i;

	if (n == 0)
		return -1;
	for (i = 0; i < n; i++)
		if (!isfinite(v[i]))
			return -1;
	c = malloc(n * sizeof(*c));
	if (!c)
		return -1;
	memcpy(c, v, n * sizeof(*c));
	qsort(c, n, sizeof(*c), cmp_double);
	*median = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2.0;
	free(c);
	return 0;
}

int rdzv_bw_outliers(const double *v, size_t n, double frac, unsigned char *flag,
                     double *median, char *err, size_t errlen)
{
	size_t i;
	int count = 0;

	if (!(frac > 0 && frac <= 1))
		return rdzv_err(err, errlen, "outlier fraction %g not in (0, 1]", frac);
	if (rdzv_bw_median(v, n, median) < 0)
		return rdzv_err(err, errlen, "no finite bandwidth values to compare");
	for (i = 0; i < n; i++) {
		flag[i] = *median > 0 && v[i] < frac * *median;
		count += flag[i];
	}
	return count;
}

int rdzv_bw_parse_size(const char *s, uint64_t *bytes, char *err, size_t errlen)
{
	size_t n = s ? strlen(s) : 0, digits = 0;
	unsigned shift = 0;
	uint64_t v;

	while (digits < n && s[digits] >= '0' && s[digits] <= '9')
		digits++;
	if (digits == 0)
		return rdzv_err(err, errlen, "size '%s' does not start with digits", s ? s : "");
	if (digits < n) {
		switch (s[digits]) {
		case 'k': case 'K': shift = 10; break;
		case 'm': case 'M': shift = 20; break;
		case 'g': case 'G': shift = 30; break;
		case 'b': case 'B': break;
		default:
			return rdzv_err(err, errlen, "size '%s': unknown unit '%c' (use K, M or G)", s,
			                s[digits]);
		}
		if (shift && digits + 1 < n && (s[digits + 1] == 'b' || s[digits + 1] == 'B') &&
		    digits + 2 == n)
			; /* "64KB" */
		else if (digits + 1 != n)
			return rdzv_err(err, errlen, "size '%s' has trailing text", s);
	}
	if (rdzv_parse_u64n(s, digits, 1, (uint64_t)1 << 40, &v) < 0 ||
	    v > ((uint64_t)1 << 40) >> shift)
		return rdzv_err(err, errlen, "size '%s' not in 1 .. 1T", s);
	*bytes = v << shift;
	return 0;
}

void rdzv_bw_format_size(uint64_t bytes, char *out, size_t outlen)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)bytes;
	unsigned u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(out, outlen, "%llu B", (unsigned long long)bytes);
	else if (v == (double)(uint64_t)v)
		snprintf(out, outlen, "%.0f %s", v, unit[u]);
	else
		snprintf(out, outlen, "%.1f %s", v, unit[u]);
}

int rdzv_bw_sweep(uint64_t min, uint64_t max, unsigned factor, uint64_t *out, size_t cap,
                  char *err, size_t errlen)
{
	size_t n = 0;
	uint64_t v;

	if (min == 0 || min > max)
		return rdzv_err(err, errlen, "sweep from %llu to %llu bytes is empty",
		                (unsigned long long)min, (unsigned long long)max);
	if (factor < 2)
		return rdzv_err(err, errlen, "sweep factor %u must be at least 2", factor);
	if (cap == 0)
		return rdzv_err(err, errlen, "no room for the sweep");
	for (v = min; n < cap; v *= factor) {
		out[n++] = v;
		if (v > max / factor)
			break;
	}
	if (out[n - 1] != max) {
		if (n == cap)
			out[n - 1] = max;
		else
			out[n++] = max;
	}
	return (int)n;
}
