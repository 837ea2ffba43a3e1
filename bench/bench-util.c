/* SPDX-License-Identifier: GPL-2.0-or-later */
/* bench-util.c: see bench.h. */
#include "config.h"
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static FILE *csv;

double bench_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void bench_stat_of(double *v, size_t n, struct bench_stat *out)
{
	memset(out, 0, sizeof(*out));
	if (n == 0)
		return;
	qsort(v, n, sizeof(*v), cmp_double);
	out->min = v[0];
	out->max = v[n - 1];
	out->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	out->batches = (unsigned)n;
}

/* Total timed microseconds of `calls` calls. */
static int run_batch(bench_work_f work, bench_reset_f reset, void *ctx, unsigned long calls,
                     double *total, char *err, size_t errlen)
{
	unsigned long i;
	double t0;

	*total = 0;
	for (i = 0; i < calls; i++) {
		t0 = bench_now_us();
		if (work(ctx, err, errlen) < 0)
			return -1;
		*total += bench_now_us() - t0;
		if (reset)
			reset(ctx);
	}
	return 0;
}

int bench_time(bench_work_f work, bench_reset_f reset, void *ctx, unsigned batches,
               double target_us, struct bench_stat *out, char *err, size_t errlen)
{
	unsigned long calls = 1;
	double total = 0, *per = NULL;
	unsigned b;
	int rv = -1;

	if (!(per = calloc(batches ? batches : 1, sizeof(*per)))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	/* Warm-up call (caches, lazy binding), then calibrate: double the
	 * calls until a batch lasts target_us. */
	if (run_batch(work, reset, ctx, 1, &total, err, errlen) < 0)
		goto fail;
	for (;;) {
		if (run_batch(work, reset, ctx, calls, &total, err, errlen) < 0)
			goto fail;
		if (total >= target_us || calls >= (1ul << 24))
			break;
		calls = total > 0 && total < target_us / 4 ? calls * 4 : calls * 2;
	}
	for (b = 0; b < batches; b++) {
		if (run_batch(work, reset, ctx, calls, &total, err, errlen) < 0)
			goto fail;
		per[b] = total / (double)calls;
	}
	bench_stat_of(per, batches, out);
	out->calls = calls;
	rv = 0;
fail:
	free(per);
	return rv;
}

long bench_maxrss_kib(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) < 0)
		return -1;
	return ru.ru_maxrss;
}

int bench_csv_open(const char *path)
{
	long end;

	if (!path)
		return 0;
	if (!(csv = fopen(path, "a")))
		return -1;
	fseek(csv, 0, SEEK_END);
	end = ftell(csv);
	if (end == 0)
		fprintf(csv, "section,case,config,reps,median,min,max,unit,ratio,extra\n");
	return 0;
}

/* A field, quoted (RFC 4180) when it holds a comma, a quote or a newline. */
static void csv_field(const char *s, const char *sep)
{
	if (!strpbrk(s, ",\"\n")) {
		fprintf(csv, "%s%s", s, sep);
		return;
	}
	fputc('"', csv);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', csv);
		fputc(*s, csv);
	}
	fprintf(csv, "\"%s", sep);
}

void bench_csv_row(const char *section, const char *kase, const char *config,
                   const struct bench_stat *s, const char *unit, double ratio,
                   const char *extra)
{
	if (!csv)
		return;
	csv_field(section, ",");
	csv_field(kase, ",");
	csv_field(config, ",");
	fprintf(csv, "%u,%.3f,%.3f,%.3f,", s->batches, s->median, s->min, s->max);
	csv_field(unit, ",");
	if (ratio >= 0)
		fprintf(csv, "%.4f", ratio);
	fputc(',', csv);
	csv_field(extra ? extra : "", "\n");
	fflush(csv);
}

void bench_csv_close(void)
{
	if (csv)
		fclose(csv);
	csv = NULL;
}

unsigned bench_batches(unsigned def)
{
	const char *s = getenv("BENCH_BATCHES");
	char *end;
	unsigned long v;

	if (!s || !*s)
		return def;
	v = strtoul(s, &end, 10);
	return *end || v < 1 || v > 1000 ? def : (unsigned)v;
}

const char *bench_dir_args(int argc, char **argv, const char *prog, const char **csv_path,
                           char *tmpl, int *made)
{
	const char *dir = NULL;
	int i = 1;

	*csv_path = NULL;
	*made = 0;
	if (i + 1 < argc && strcmp(argv[i], "--csv") == 0) {
		*csv_path = argv[i + 1];
		i += 2;
	}
	if (i < argc)
		return argv[i];
	if (!(dir = mkdtemp(tmpl))) {
		fprintf(stderr, "%s: no temporary directory\n", prog);
		return NULL;
	}
	*made = 1;
	return dir;
}
