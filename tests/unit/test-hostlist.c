/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-hostlist: rdzv_hostlist_count and rdzv_hostlist_nth on the forms
 * Slurm writes and users type. Invalid input first. */
#include "config.h"
#include "hostlist.h"
#include "tap.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char err[256];

/* Every host of expr through count + nth, separated by spaces, or
 * "ERROR: reason". */
static const char *expand(const char *expr)
{
	static char out[8192];
	char host[RDZV_HOST_MAX];
	size_t used = 0;
	long n, i;

	err[0] = '\0';
	if ((n = rdzv_hostlist_count(expr, err, sizeof(err))) < 0) {
		snprintf(out, sizeof(out), "ERROR: %s", err);
		return out;
	}
	out[0] = '\0';
	for (i = 0; i < n; i++) {
		if (rdzv_hostlist_nth(expr, (size_t)i, host, sizeof(host), err, sizeof(err)) < 0) {
			snprintf(out, sizeof(out), "ERROR at %ld: %s", i, err);
			return out;
		}
		used += (size_t)snprintf(out + used, sizeof(out) - used, "%s%s", i ? " " : "", host);
		if (used >= sizeof(out))
			return "OVERFLOW";
	}
	return out;
}

/* The expression is refused by count and nth, with a reason matching want. */
static void refused(const char *expr, const char *want, const char *name)
{
	char host[RDZV_HOST_MAX];
	long n;
	int rc;

	err[0] = '\0';
	n = rdzv_hostlist_count(expr, err, sizeof(err));
	if (!ok(n == -1 && strstr(err, want), "count refuses %s", name))
		diag("count %ld, err '%s', want '%s'", n, err, want);
	err[0] = '\0';
	rc = rdzv_hostlist_nth(expr, 0, host, sizeof(host), err, sizeof(err));
	if (!ok(rc == -1 && strstr(err, want), "nth refuses %s", name))
		diag("rc %d, err '%s', want '%s'", rc, err, want);
}

static void test_invalid(void)
{
	char host[RDZV_HOST_MAX], small[8];

	err[0] = '\0';
	is_int(rdzv_hostlist_count(NULL, err, sizeof(err)), -1, "count of a NULL list is an error");
	ok(err[0] != '\0', "a NULL list comes with a reason");
	is_int(rdzv_hostlist_nth(NULL, 0, host, sizeof(host), err, sizeof(err)), -1,
	       "nth of a NULL list is an error");
	is_int(rdzv_hostlist_nth("n1", 0, NULL, 0, err, sizeof(err)), -1,
	       "nth without an output buffer is an error");
	is_int(rdzv_hostlist_nth("n1", 0, host, 0, err, sizeof(err)), -1,
	       "nth with a zero-length output buffer is an error");
	is_int(rdzv_hostlist_count("n[1-2", NULL, 0), -1,
	       "an error without an error buffer is still reported by the return value");

	refused("n[1-2", "not closed", "an unclosed '['");
	refused("n[1-2]x[3", "not closed", "an unclosed second group");
	refused("n1]", "without '['", "a stray ']'");
	refused("n[1-2]]", "without '['", "a ']' after a closed group");
	refused("n[[1-2]]", "nested", "nested brackets");
	refused("n[1-2,m3", "not closed", "a comma list cut off by a missing ']'");
	refused("x[5-3]", "backwards", "a backwards range x[5-3]");
	refused("x[1,5-3]", "backwards", "a backwards range after a singleton");
	refused("n[]", "empty brackets", "empty brackets");
	refused("n[1-2]c[]", "empty brackets", "empty second brackets");
	refused("n[a-b]", "bad range", "letters in a range");
	refused("n[1-b]", "bad range", "a letter as the high bound");
	refused("n[1x]", "bad range", "a letter after a number");
	refused("n[1,,2]", "bad range", "an empty element inside brackets");
	refused("n[1,]", "bad range", "a trailing comma inside brackets");
	refused("n[,1]", "bad range", "a leading comma inside brackets");
	refused("n[1-]", "bad range", "an open range n[1-]");
	refused("n[-2]", "bad range", "a negative-looking range n[-2]");
	refused("n[1--2]", "bad range", "a double dash");
	refused("n[1-2-3]", "bad range", "a range with two dashes");
	refused("n[+1]", "bad range", "a sign inside brackets");
	refused("n[1, 2]", "bad range", "a space inside brackets");
	refused("n[99999999999999999999999]", "bad range", "a number of 23 digits");
	refused("n[18446744073709551615]", "bad range", "a number above the limit");
	refused("n[0-1099511627776]", "too many hosts", "a range of 2^40+1 hosts");
	refused("a[0-999999]b[0-999999]c[0-999999]", "too many hosts",
	        "a product of groups overflowing the limit");
	refused("a[0-999999]b[0-999999],c[0-999999]b[0-999999]", "too many hosts",
	        "a sum of items overflowing the limit");
	refused("n[1-2],x[5-3]", "backwards", "a bad item after a good one");

	/* n out of range */
	err[0] = '\0';
	is_int(rdzv_hostlist_nth("n[1-3]", 3, host, sizeof(host), err, sizeof(err)), -1,
	       "nth past the last host is an error");
	ok(strstr(err, "past the end") != NULL, "the reason says the index is past the end");
	is_int(rdzv_hostlist_nth("", 0, host, sizeof(host), err, sizeof(err)), -1,
	       "nth 0 of an empty list is an error");
	is_int(rdzv_hostlist_nth("n1,n2", (size_t)-1, host, sizeof(host), err, sizeof(err)), -1,
	       "nth SIZE_MAX is an error");

	/* names too long for the buffer */
	err[0] = '\0';
	is_int(rdzv_hostlist_nth("node[1000-1001]", 0, small, sizeof(small), err, sizeof(err)), -1,
	       "a host name longer than the buffer is an error");
	ok(strstr(err, "longer than 7 bytes") != NULL, "the reason names the buffer size");
	is_int(rdzv_hostlist_nth("abcdefgh", 0, small, sizeof(small), err, sizeof(err)), -1,
	       "a plain host name of 8 bytes does not fit 8 bytes");
	is_int(rdzv_hostlist_nth("n[1-2]abcdefg", 0, small, sizeof(small), err, sizeof(err)), -1,
	       "a suffix that overflows the buffer is an error");
	is_int(rdzv_hostlist_nth("abcdef[10-11]", 0, small, sizeof(small), err, sizeof(err)), -1,
	       "a number that overflows the buffer is an error");
	is_int(rdzv_hostlist_nth("abcdefg", 0, small, sizeof(small), err, sizeof(err)), 0,
	       "a host name of 7 bytes fits 8 bytes");
	is_str(small, "abcdefg", "and is written whole");
	is_int(rdzv_hostlist_nth("abcde[10]", 0, small, sizeof(small), err, sizeof(err)), 0,
	       "a bracketed name of 7 bytes fits 8 bytes");
	is_str(small, "abcde10", "and is written whole");
}

struct form {
	const char *expr;
	long count;
	const char *hosts;
};

static const struct form forms[] = {
	/* empty lists and separators */
	{ "", 0, "" },
	{ " , ,\t", 0, "" },
	{ "n1", 1, "n1" },
	{ "n1,n2", 2, "n1 n2" },
	{ "n1 n2", 2, "n1 n2" },
	{ "n1\tn2\nn3", 3, "n1 n2 n3" },
	{ " n1 ,  n2 ", 2, "n1 n2" },
	{ "n1,,n2", 2, "n1 n2" },
	{ ",n1,", 1, "n1" },
	/* duplicates are kept, in order */
	{ "n1,n1", 2, "n1 n1" },
	{ "n[1,1]", 2, "n1 n1" },
	{ "n[1-3,2-4]", 6, "n1 n2 n3 n2 n3 n4" },
	{ "n[1-2],n[1-2]", 4, "n1 n2 n1 n2" },
	/* prefixes with digits and punctuation */
	{ "gpu1-[1-3]", 3, "gpu1-1 gpu1-2 gpu1-3" },
	{ "n1[01-02]", 2, "n101 n102" },
	{ "1[1-2]", 2, "11 12" },
	{ "[1-3]", 3, "1 2 3" },
	{ "a.b[1-2]", 2, "a.b1 a.b2" },
	{ "a_b-c[9-10]", 2, "a_b-c9 a_b-c10" },
	{ "n1-3", 1, "n1-3" },
	/* ranges and singletons, in the written order */
	{ "n[1,3-4,7]", 4, "n1 n3 n4 n7" },
	{ "n[3,1,2]", 3, "n3 n1 n2" },
	{ "n[5-5]", 1, "n5" },
	{ "n[0-0]", 1, "n0" },
	{ "n[1-2],m[3],k", 4, "n1 n2 m3 k" },
	{ "n[1-2] [3-4]", 4, "n1 n2 3 4" },
	/* zero padding: the low bound's width */
	{ "n[08-11]", 4, "n08 n09 n10 n11" },
	{ "n[01-3]", 3, "n01 n02 n03" },
	{ "n[1-03]", 3, "n1 n2 n3" },
	{ "n[001-3]", 3, "n001 n002 n003" },
	{ "n[00]", 1, "n00" },
	{ "n[007]", 1, "n007" },
	{ "n[98-102]", 5, "n98 n99 n100 n101 n102" },
	{ "n[09-10,7]", 3, "n09 n10 n7" },
	{ "n001,n1", 2, "n001 n1" },
	{ "n[99999999-100000001]", 3, "n99999999 n100000000 n100000001" },
	/* several bracket groups: the last varies fastest, then the first,
	 * second, ... (Slurm 22.05's order) */
	{ "a[1-2]b[3-4]", 4, "a1b3 a1b4 a2b3 a2b4" },
	{ "n[0-2]c[00-01]", 6, "n0c00 n0c01 n1c00 n1c01 n2c00 n2c01" },
	{ "n[1-2][3-4]", 4, "n13 n14 n23 n24" },
	{ "n[1-2]-x[3-4]", 4, "n1-x3 n1-x4 n2-x3 n2-x4" },
	{ "x[1-2]y[01-02]z[3]", 4, "x1y01z3 x2y01z3 x1y02z3 x2y02z3" },
	{ "n[1-2]c[1-2]d[1-2]", 8,
	  "n1c1d1 n1c1d2 n2c1d1 n2c1d2 n1c2d1 n1c2d2 n2c2d1 n2c2d2" },
	{ "a[1,3]b[1-2]c[5,7]", 8, "a1b1c5 a1b1c7 a3b1c5 a3b1c7 a1b2c5 a1b2c7 a3b2c5 a3b2c7" },
	{ "a[1-2]b[1-2]c[1-2]d[1-2]", 16,
	  "a1b1c1d1 a1b1c1d2 a2b1c1d1 a2b1c1d2 a1b2c1d1 a1b2c1d2 a2b2c1d1 a2b2c1d2 "
	  "a1b1c2d1 a1b1c2d2 a2b1c2d1 a2b1c2d2 a1b2c2d1 a1b2c2d2 a2b2c2d1 a2b2c2d2" },
	{ "m,a[1-2]b[3-4],z", 6, "m a1b3 a1b4 a2b3 a2b4 z" },
	/* a suffix after the last group (Slurm 22.05 refuses it, later Slurm
	 * reads it as here) */
	{ "n[8-11]x", 4, "n8x n9x n10x n11x" },
	{ "a[1-2]b[3-4]c", 4, "a1b3c a1b4c a2b3c a2b4c" },
	{ "n[1-2].ib", 2, "n1.ib n2.ib" },
};

static void test_forms(void)
{
	size_t i;

	for (i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		char name[128];

		snprintf(name, sizeof(name), "'%s' names %ld hosts", forms[i].expr, forms[i].count);
		is_int(rdzv_hostlist_count(forms[i].expr, err, sizeof(err)), forms[i].count, name);
		snprintf(name, sizeof(name), "'%s' expands to '%s'", forms[i].expr, forms[i].hosts);
		is_str(expand(forms[i].expr), forms[i].hosts, name);
	}
}

/* Hosts far down a large list come out without expanding it. */
static void test_large(void)
{
	char host[RDZV_HOST_MAX];

	is_int(rdzv_hostlist_count("n[0-1099511627775]", err, sizeof(err)), 1099511627776LL,
	       "a range of exactly 2^40 hosts is counted");
	is_int(rdzv_hostlist_nth("n[0-1099511627775]", (size_t)1099511627775ULL, host, sizeof(host),
	                         err, sizeof(err)), 0, "its last host is found");
	is_str(host, "n1099511627775", "and is the high bound");
	is_int(rdzv_hostlist_count("r[000-999]n[0000-9999]", err, sizeof(err)), 10000000,
	       "two groups multiply");
	is_int(rdzv_hostlist_nth("r[000-999]n[0000-9999]", 5678901, host, sizeof(host), err,
	                         sizeof(err)), 0, "host 5678901 of a 10^7 product is found");
	is_str(host, "r567n8901", "and carries both paddings");
	is_int(rdzv_hostlist_nth("n[0-65535]", 65535, host, sizeof(host), err, sizeof(err)), 0,
	       "the last of 65536 hosts is found");
	is_str(host, "n65535", "and is n65535");
	is_int(rdzv_hostlist_nth("a,b,n[1-3,10-12],c", 6, host, sizeof(host), err, sizeof(err)), 0,
	       "an index past the first items lands in the right range");
	is_str(host, "n11", "host 6 of a,b,n[1-3,10-12],c is n11");
}

/* Membership by search (the host sets here are read by hand off each list;
 * tests/0010 compares with scontrol's lists). */
static void test_has(void)
{
	static const struct {
		const char *list, *host;
		int want;
		const char *name;
	} cases[] = {
		{ "r[000-999]n[0000-9999]", "r567n8901", 1, "a host of a 10^7 product, both paddings" },
		{ "r[000-999]n[0000-9999]", "r567n891", 0,
		  "the same host without its padding is not named" },
		{ "n[0-1099511627775]", "n1099511627775", 1, "the last of 2^40 hosts, at once" },
		{ "n[0-1099511627775]", "n1099511627776", 0, "one past the high bound is not named" },
		{ "a,b,n[1-3,10-12],c", "c", 1, "a plain item after ranges" },
		{ "a,b,n[1-3,10-12],c", "n4", 0, "a gap between ranges is not named" },
		{ "node[01-10]-ib", "node10-ib", 1, "a shared suffix" },
		{ "node[01-10]-ib", "node10", 0, "the suffix is required" },
		{ "n[1-2][3-4]", "n24", 1, "adjacent groups" },
		{ "n[1-9][10-99]", "n110", 1,
		  "adjacent groups split the digits where the ranges allow (1|10)" },
	};
	char list[512], host[128], name[160];
	size_t c;
	int i;

	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		snprintf(name, sizeof(name), "has: %s", cases[c].name);
		is_int(rdzv_hostlist_has(cases[c].list, cases[c].host, err, sizeof(err)), cases[c].want,
		       name);
	}
	is_int(rdzv_hostlist_has("n[1-3", "n1", err, sizeof(err)), -1, "has: a malformed list is refused");
	ok(strstr(err, "not closed") != NULL, "has: with the parser's reason (%s)", err);
	/* 30 adjacent groups [1,11], each taking one or two of the host's 45
	 * ones before a 2 that nothing matches: some 10^8 ways to try (2^30
	 * hosts, so the list itself is valid); the search gives up with a reason. */
	strcpy(list, "n");
	for (i = 0; i < 30; i++)
		strcat(list, "[1,11]");
	host[0] = 'n';
	memset(host + 1, '1', 45);
	host[46] = '2';
	host[47] = '\0';
	is_int(rdzv_hostlist_has(list, host, err, sizeof(err)), -1,
	       "has: a list too ambiguous to search is refused, not searched for hours");
	ok(strstr(err, "ambiguous") != NULL, "has: and says so (%s)", err);
}

/* ---- rdzv_hostlist_each against indexing ---- */

/* A node list as Slurm prints a step's: prefix + one bracket group of the
 * numbers 1..pool kept by keep(i), zero-padded to width 5. */
static char *fragmented(const char *prefix, uint32_t pool, int (*keep)(uint32_t, void *),
                        void *arg)
{
	size_t cap = (size_t)pool * 13 + 64, used;
	char *s = malloc(cap);
	uint32_t i = 1;
	int first = 1;

	used = (size_t)snprintf(s, cap, "%s[", prefix);
	while (i <= pool) {
		uint32_t j;

		if (!keep(i, arg)) {
			i++;
			continue;
		}
		for (j = i; j + 1 <= pool && keep(j + 1, arg); j++)
			;
		used += (size_t)snprintf(s + used, cap - used, j > i ? "%s%05u-%05u" : "%s%05u",
		                         first ? "" : ",", i, j);
		first = 0;
		i = j + 1;
	}
	snprintf(s + used, cap - used, "]");
	return s;
}

static int keep_trays16(uint32_t i, void *arg)
{
	(void)arg;
	return (i - 1) % 18 < 16; /* trays 1-16 of each 18-tray rack */
}

static int keep_odd(uint32_t i, void *arg)
{
	(void)arg;
	return i % 2 == 1;
}

static int keep_80(uint32_t i, void *arg)
{
	(void)arg;
	return (i * 2654435761u) % 10 < 8; /* a scattered 80% */
}

struct against {
	const char *list;
	size_t seen, wrong, stop_at;
	char first_wrong[2 * RDZV_HOST_MAX];
};

/* Each walked host compared with indexing; stops when asked (returns 7). */
static int against_nth(const char *host, void *ctx)
{
	struct against *a = ctx;
	char want[RDZV_HOST_MAX], why[256];

	if (rdzv_hostlist_nth(a->list, a->seen, want, sizeof(want), why, sizeof(why)) < 0
	    || strcmp(want, host) != 0) {
		if (a->wrong++ == 0)
			snprintf(a->first_wrong, sizeof(a->first_wrong), "host %zu: walk %s, nth %s",
			         a->seen, host, want);
	}
	a->seen++;
	return a->seen == a->stop_at ? 7 : 0;
}

static void walk_is_nth(const char *list, const char *what)
{
	struct against a;
	long n = rdzv_hostlist_count(list, err, sizeof(err));
	int rc;

	memset(&a, 0, sizeof(a));
	a.list = list;
	rc = rdzv_hostlist_each(list, against_nth, &a, err, sizeof(err));
	ok(rc == 0 && n > 0 && a.seen == (size_t)n && a.wrong == 0,
	   "%s: the walk gives the %ld hosts indexing gives, in order (%zu walked, %zu wrong%s%s)",
	   what, n, a.seen, a.wrong, a.wrong ? ": " : "", a.first_wrong);
	if (n > 2) {
		memset(&a, 0, sizeof(a));
		a.list = list;
		a.stop_at = (size_t)n / 2;
		rc = rdzv_hostlist_each(list, against_nth, &a, err, sizeof(err));
		ok(rc == 7 && a.seen == (size_t)n / 2 && a.wrong == 0,
		   "%s: a callback's non-zero stops the walk and is returned", what);
	}
}

static void test_walk(void)
{
	static const char *mixed[] = {
		"a,gb[00001-00016,00019-00034]-ib,r[01-03,07]n[1-2,5,009-011]x,c[7]",
		"r[1-2]n[01-02,05]s[8-9,11]",
		"x[1-2]a[1]b[2]c[3]d[4]e[5]f[6]g[7]h[8]i[9,11]j[01-02]", /* > 8 groups */
		"n[0098-0102] m[9-11],k",
	};
	char *list;
	size_t i;

	for (i = 0; i < sizeof(mixed) / sizeof(mixed[0]); i++)
		walk_is_nth(mixed[i], mixed[i]);
	list = fragmented("gb", 2250, keep_trays16, NULL);
	walk_is_nth(list, "16 of 18 trays, 2000 nodes");
	free(list);
	list = fragmented("h", 4000, keep_odd, NULL);
	walk_is_nth(list, "every other node, 2000 nodes");
	free(list);
	list = fragmented("gb", 2500, keep_80, NULL);
	walk_is_nth(list, "a scattered 80% of 2500 nodes");
	free(list);
}

struct expect {
	uint32_t next, pool, wrong;
	int (*keep)(uint32_t, void *);
};

/* The walk of a fragmented list against the numbers it was written from. */
static int against_numbers(const char *host, void *ctx)
{
	struct expect *x = ctx;
	char want[32];

	while (x->next <= x->pool && !x->keep(x->next, NULL))
		x->next++;
	snprintf(want, sizeof(want), "h%05u", x->next++);
	x->wrong += strcmp(want, host) != 0;
	return 0;
}

/* Slurm's largest step as one bracket group of 32,768 ranges, walked whole
 * (a quadratic walk took tens of seconds; each host checked). */
static void test_walk_large(void)
{
	struct expect x = { 1, 131072, 0, keep_odd };
	char *list = fragmented("h", 131072, keep_odd, NULL), host[RDZV_HOST_MAX];

	ok(rdzv_hostlist_each(list, against_numbers, &x, err, sizeof(err)) == 0 && x.wrong == 0
	   && x.next == 131072, "every other node of 131072: the walk names h00001 .. h131071 "
	   "(%u wrong)", x.wrong);
	ok(rdzv_hostlist_nth(list, 65535, host, sizeof(host), err, sizeof(err)) == 0
	   && strcmp(host, "h131071") == 0, "and indexing its last gives h131071 (%s)", host);
	free(list);
}

int main(void)
{
	test_invalid();
	test_forms();
	test_large();
	test_has();
	test_walk();
	test_walk_large();
	return done_testing();
}
