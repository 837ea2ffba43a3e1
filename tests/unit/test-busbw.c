/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-busbw: nccl-tests' bandwidth definitions, the outlier rule, sizes. */
#include "config.h"
#include "busbw.h"
#include "tap.h"

#include <math.h>
#include <stdint.h>

static int near(double a, double b)
{
	return fabs(a - b) <= 1e-9 * (fabs(b) > 1 ? fabs(b) : 1);
}

static void test_invalid_input(void)
{
	double a = -1, b = -1, med;
	char err[256] = "";
	unsigned char flag[4];
	double v[4] = { 1, 2, 3, NAN };
	uint64_t sz[8], bytes;

	ok(rdzv_bw_compute(RDZV_COLL_ALLREDUCE, 1000, 0.0, 4, &a, &b, err, sizeof(err)) < 0,
	   "zero elapsed time is refused");
	ok(strstr(err, "positive") != NULL, "the message says the time must be positive");
	ok(rdzv_bw_compute(RDZV_COLL_ALLREDUCE, 1000, -1.0, 4, &a, &b, NULL, 0) < 0,
	   "negative time is refused");
	ok(rdzv_bw_compute(RDZV_COLL_ALLREDUCE, 1000, NAN, 4, &a, &b, NULL, 0) < 0,
	   "NaN time is refused");
	ok(rdzv_bw_compute(RDZV_COLL_ALLREDUCE, 1000, INFINITY, 4, &a, &b, NULL, 0) < 0,
	   "infinite time is refused");
	ok(rdzv_bw_compute(RDZV_COLL_ALLREDUCE, 1000, 1.0, 0, &a, &b, NULL, 0) < 0,
	   "zero ranks is refused");
	ok(rdzv_bw_compute((enum rdzv_coll)42, 1000, 1.0, 2, &a, &b, NULL, 0) < 0,
	   "an unknown collective is refused");
	ok(rdzv_bw_factor((enum rdzv_coll)42, 2) < 0, "no factor for an unknown collective");
	ok(rdzv_bw_median(v, 0, &med) < 0, "the median of nothing is refused");
	ok(rdzv_bw_median(v, 4, &med) < 0, "a NaN bandwidth is refused by the median");
	ok(rdzv_bw_outliers(v, 3, 0.0, flag, &med, err, sizeof(err)) < 0,
	   "outlier fraction 0 is refused");
	ok(rdzv_bw_outliers(v, 3, 1.5, flag, &med, err, sizeof(err)) < 0,
	   "outlier fraction above 1 is refused");
	ok(rdzv_bw_sweep(0, 10, 2, sz, 8, NULL, 0) < 0, "a sweep from 0 is refused");
	ok(rdzv_bw_sweep(10, 5, 2, sz, 8, NULL, 0) < 0, "a sweep with min > max is refused");
	ok(rdzv_bw_sweep(1, 5, 1, sz, 8, NULL, 0) < 0, "a sweep factor below 2 is refused");
	ok(rdzv_bw_parse_size("", &bytes, NULL, 0) < 0, "an empty size is refused");
	ok(rdzv_bw_parse_size("M", &bytes, NULL, 0) < 0, "a size without digits is refused");
	ok(rdzv_bw_parse_size("12X", &bytes, NULL, 0) < 0, "an unknown unit is refused");
	ok(rdzv_bw_parse_size("12MM", &bytes, NULL, 0) < 0, "trailing text is refused");
	ok(rdzv_bw_parse_size("0", &bytes, NULL, 0) < 0, "size 0 is refused");
	ok(rdzv_bw_parse_size("2048G", &bytes, NULL, 0) < 0, "a size above 1 TiB is refused");
	ok(rdzv_bw_parse_size("-1", &bytes, NULL, 0) < 0, "a negative size is refused");
	ok(rdzv_bw_parse_size("99999999999999999999999", &bytes, NULL, 0) < 0,
	   "an overflowing size is refused");
}

static void test_factors(void)
{
	ok(near(rdzv_bw_factor(RDZV_COLL_ALLREDUCE, 1), 0.0), "all-reduce factor for 1 rank is 0");
	ok(near(rdzv_bw_factor(RDZV_COLL_ALLREDUCE, 2), 1.0), "all-reduce factor for 2 ranks is 1");
	ok(near(rdzv_bw_factor(RDZV_COLL_ALLREDUCE, 8), 1.75), "all-reduce factor for 8 is 2*7/8");
	ok(near(rdzv_bw_factor(RDZV_COLL_ALLGATHER, 8), 0.875), "all-gather factor for 8 is 7/8");
	ok(near(rdzv_bw_factor(RDZV_COLL_REDUCESCATTER, 4), 0.75),
	   "reduce-scatter factor for 4 is 3/4");
	ok(near(rdzv_bw_factor(RDZV_COLL_ALLTOALL, 4), 0.75), "all-to-all factor for 4 is 3/4");
	ok(near(rdzv_bw_factor(RDZV_COLL_BROADCAST, 16), 1.0), "broadcast factor is 1");
	ok(near(rdzv_bw_factor(RDZV_COLL_REDUCE, 16), 1.0), "reduce factor is 1");
}

static void test_compute(void)
{
	double a, b;

	/* nccl-tests README example: 8 GPUs, 128 MiB all-reduce. */
	ok(rdzv_bw_compute(RDZV_COLL_ALLREDUCE, 134217728, 0.001, 8, &a, &b, NULL, 0) == 0,
	   "all-reduce of 128 MiB in 1 ms on 8 ranks computes");
	ok(near(a, 134.217728), "algbw is bytes / 1e9 / seconds (%g)", a);
	ok(near(b, 134.217728 * 1.75), "busbw is algbw * 2(n-1)/n (%g)", b);
	ok(rdzv_bw_compute(RDZV_COLL_ALLREDUCE, 1000000000, 2.0, 1, &a, &b, NULL, 0) == 0 &&
	   near(a, 0.5) && near(b, 0.0), "one rank: algbw 0.5, busbw 0");
	ok(rdzv_bw_compute(RDZV_COLL_ALLGATHER, 3000000000ULL, 1.0, 3, &a, &b, NULL, 0) == 0 &&
	   near(a, 3.0) && near(b, 2.0), "all-gather 3 GB in 1 s on 3 ranks: busbw 2");
	ok(rdzv_bw_compute(RDZV_COLL_ALLREDUCE, 0, 1.0, 4, &a, &b, NULL, 0) == 0 && a == 0 && b == 0,
	   "zero bytes is zero bandwidth");
}

static void test_outliers(void)
{
	double v[6] = { 10, 11, 9, 10.5, 3, 10 }, med = 0, z[3] = { 0, 0, 0 };
	double even[4] = { 1, 2, 3, 4 };
	unsigned char flag[6];
	int n;

	ok(rdzv_bw_median(even, 4, &med) == 0 && near(med, 2.5), "median of an even count");
	ok(rdzv_bw_median(v, 5, &med) == 0 && near(med, 10), "median of an odd count");
	ok(v[0] == 10 && v[4] == 3, "the median leaves its input alone");
	n = rdzv_bw_outliers(v, 6, 0.7, flag, &med, NULL, 0);
	is_int(n, 1, "one outlier among six");
	ok(flag[4] == 1 && flag[0] == 0 && flag[2] == 0, "the slow one is flagged, 9 is not");
	ok(near(med, 10), "median reported (%g)", med);
	n = rdzv_bw_outliers(v, 6, 1.0, flag, &med, NULL, 0);
	is_int(n, 2, "fraction 1 flags everything below the median");
	n = rdzv_bw_outliers(z, 3, 0.5, flag, &med, NULL, 0);
	is_int(n, 0, "a median of 0 flags nothing");
	n = rdzv_bw_outliers(v, 1, 0.5, flag, &med, NULL, 0);
	is_int(n, 0, "a single value is never an outlier");
}

static void test_sizes(void)
{
	uint64_t sz[32], b = 0;
	char s[32];
	int n;

	ok(rdzv_bw_parse_size("8", &b, NULL, 0) == 0 && b == 8, "8 is 8 bytes");
	ok(rdzv_bw_parse_size("64K", &b, NULL, 0) == 0 && b == 65536, "64K is 65536");
	ok(rdzv_bw_parse_size("256M", &b, NULL, 0) == 0 && b == 268435456ULL, "256M");
	ok(rdzv_bw_parse_size("1G", &b, NULL, 0) == 0 && b == 1073741824ULL, "1G");
	ok(rdzv_bw_parse_size("4kb", &b, NULL, 0) == 0 && b == 4096, "4kb is 4096");
	ok(rdzv_bw_parse_size("1024G", &b, NULL, 0) == 0 && b == (1ULL << 40), "1024G is the max");
	rdzv_bw_format_size(8, s, sizeof(s));
	is_str(s, "8 B", "8 bytes formatted");
	rdzv_bw_format_size(268435456ULL, s, sizeof(s));
	is_str(s, "256 MiB", "256 MiB formatted");
	rdzv_bw_format_size(1536, s, sizeof(s));
	is_str(s, "1.5 KiB", "1.5 KiB formatted");
	n = rdzv_bw_sweep(8, 128, 2, sz, 32, NULL, 0);
	is_int(n, 5, "8..128 by 2 is five sizes");
	ok(sz[0] == 8 && sz[4] == 128, "sweep ends at both bounds");
	n = rdzv_bw_sweep(8, 100, 4, sz, 32, NULL, 0);
	is_int(n, 3, "8, 32, then 100 appended");
	ok(sz[1] == 32 && sz[2] == 100, "the max off the grid is measured last");
	n = rdzv_bw_sweep(1, 1ULL << 40, 2, sz, 4, NULL, 0);
	is_int(n, 4, "the sweep respects cap");
	ok(sz[3] == (1ULL << 40), "a capped sweep still measures the max");
	n = rdzv_bw_sweep(16, 16, 2, sz, 32, NULL, 0);
	ok(n == 1 && sz[0] == 16, "min == max is one size");
	n = rdzv_bw_sweep(1ULL << 39, 1ULL << 40, 1000, sz, 32, NULL, 0);
	ok(n == 2, "a large factor does not overflow");
}

int main(void)
{
	test_invalid_input();
	test_factors();
	test_compute();
	test_outliers();
	test_sizes();
	return done_testing();
}
