/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tap.h: a minimal TAP producer for the C unit tests (header only).
 *   ok(cond, "fmt", ...)       one test point
 *   is_str(got, want, "name")  string equality, shows both on failure
 *   is_int(got, want, "name")  integer equality
 *   skip("why")                one test point, skipped (missing prerequisite)
 *   skip_all("why")            plan 0, skipped (missing prerequisite)
 *   return done_testing();     plan and exit status */
#ifndef RDZV_TAP_H
#define RDZV_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_n, tap_failed;

static int tap_ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3), unused));
static int tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;

	tap_n++;
	printf("%sok %d - ", cond ? "" : "not ", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond)
		tap_failed++;
	fflush(stdout);
	return cond;
}

#define ok(cond, ...) tap_ok(!!(cond), __VA_ARGS__)

#define is_str(got, want, name) do { \
	const char *g_ = (got), *w_ = (want); \
	if (!ok(g_ && w_ && strcmp(g_, w_) == 0, "%s", name)) \
		printf("#   got:  '%s'\n#   want: '%s'\n", g_ ? g_ : "(null)", w_ ? w_ : "(null)"); \
} while (0)

#define is_int(got, want, name) do { \
	long long g_ = (long long)(got), w_ = (long long)(want); \
	if (!ok(g_ == w_, "%s", name)) \
		printf("#   got:  %lld\n#   want: %lld\n", g_, w_); \
} while (0)

static void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2), unused));
static void diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static void skip(const char *fmt, ...) __attribute__((format(printf, 1, 2), unused));
static void skip(const char *fmt, ...)
{
	va_list ap;

	tap_n++;
	printf("ok %d # SKIP ", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static void skip_all(const char *why) __attribute__((unused, noreturn));
static void skip_all(const char *why)
{
	printf("1..0 # SKIP %s\n", why);
	exit(0);
}

static int done_testing(void) __attribute__((unused));
static int done_testing(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif
