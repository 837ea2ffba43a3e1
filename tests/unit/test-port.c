/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-port: port ranges, Slurm's reserved ports, the derived port and the
 * precedence between them. Invalid input first. */
#include "config.h"
#include "port.h"
#include "tap.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char err[256];

static void range_refused(const char *s)
{
	struct rdzv_port_range r = { 7, 7 };
	int rc;

	err[0] = '\0';
	rc = rdzv_port_range_parse(s, &r, err, sizeof(err));
	if (!ok(rc == -1 && r.lo == 7 && r.hi == 7 && strstr(err, "expected LO-HI"),
	        "port range '%s' is refused and the range left alone", s ? s : "(null)"))
		diag("rc %d lo %u hi %u err '%s'", rc, r.lo, r.hi, err);
}

static void port_refused(const char *s)
{
	uint16_t p = 7;
	int rc;

	err[0] = '\0';
	rc = rdzv_port_parse(s, &p, err, sizeof(err));
	ok(rc == -1 && p == 7 && strstr(err, "1024-65535"),
	   "port '%s' is refused with the valid range named", s ? s : "(null)");
}

static void resv_refused(const char *s)
{
	uint16_t p = 7;
	int rc;

	err[0] = '\0';
	rc = rdzv_resv_ports_first(s, &p, err, sizeof(err));
	if (!ok(rc == -1 && p == 7 && err[0], "reserved ports '%s' are refused",
	        s ? s : "(null)"))
		diag("rc %d port %u err '%s'", rc, p, err);
}

static void test_invalid(void)
{
	struct rdzv_port_range range = { 30000, 30010 }, eph = { 29000, 40000 }, bad = { 3, 2 };
	enum rdzv_port_source src;
	uint16_t p;

	range_refused(NULL);
	range_refused("");
	range_refused("2000");
	range_refused("1023-2000");
	range_refused("2000-1999");
	range_refused("2000-65536");
	range_refused("65536");
	range_refused("65536-65537");
	range_refused("0-100");
	range_refused("-2000");
	range_refused("2000-");
	range_refused("2000-3000-4000");
	range_refused(" 2000-3000");
	range_refused("2000-3000 ");
	range_refused("2000 - 3000");
	range_refused("+2000-3000");
	range_refused("a-b");
	range_refused("99999999999999999999999-3000");

	port_refused(NULL);
	port_refused("");
	port_refused("0");
	port_refused("1023");
	port_refused("65536");
	port_refused("-1");
	port_refused("80x");
	port_refused("29500 ");
	port_refused("18446744073709551617");

	resv_refused(NULL);
	resv_refused("");
	resv_refused("garbage");
	resv_refused("0");
	resv_refused("65536");
	resv_refused("12000x");
	resv_refused(",12000");
	resv_refused("-12000");
	resv_refused("12000-");
	resv_refused("12000,");
	resv_refused("12000-12003x");
	resv_refused("12000-11999");
	resv_refused("12000,,12005");
	resv_refused("12000-abc");

	err[0] = '\0';
	is_int(rdzv_port_derive(1, 0, &range, &eph, &p, err, sizeof(err)), -1,
	       "a range entirely inside the ephemeral range is an error");
	ok(strstr(err, "30000-30010") && strstr(err, "29000-40000"),
	   "the reason names both ranges");
	eph.lo = 30000;
	eph.hi = 30010;
	is_int(rdzv_port_derive(1, 0, &range, &eph, &p, err, sizeof(err)), -1,
	       "a range equal to the ephemeral range is an error");
	is_int(rdzv_port_derive(1, 0, &bad, NULL, &p, err, sizeof(err)), -1,
	       "a range whose low end is above its high end is an error, not a crash");
	is_int(rdzv_port_choose(0, "garbage", 1, 0, &range, NULL, &p, &src, err, sizeof(err)), -1,
	       "malformed SLURM_STEP_RESV_PORTS fails the choice");
	ok(strstr(err, "garbage") != NULL, "and the reason quotes the value");
}

static void test_parse(void)
{
	struct rdzv_port_range r;
	uint16_t p = 0;

	ok(rdzv_port_range_parse("1024-65535", &r, err, sizeof(err)) == 0 && r.lo == 1024
	   && r.hi == 65535, "the widest range 1024-65535 is accepted");
	ok(rdzv_port_range_parse("29500-29500", &r, err, sizeof(err)) == 0 && r.lo == 29500
	   && r.hi == 29500, "a range of one port is accepted");
	ok(rdzv_port_range_parse("29500-32767", &r, err, sizeof(err)) == 0 && r.lo == 29500
	   && r.hi == 32767, "the default range is accepted");
	ok(rdzv_port_parse("1024", &p, err, sizeof(err)) == 0 && p == 1024, "port 1024 is accepted");
	ok(rdzv_port_parse("65535", &p, err, sizeof(err)) == 0 && p == 65535,
	   "port 65535 is accepted");
	ok(rdzv_port_parse("029500", &p, err, sizeof(err)) == 0 && p == 29500,
	   "a port with a leading zero is read as decimal");

	ok(rdzv_resv_ports_first("12000-12003", &p, err, sizeof(err)) == 0 && p == 12000,
	   "reserved ports 12000-12003 give 12000");
	ok(rdzv_resv_ports_first("12000,12005", &p, err, sizeof(err)) == 0 && p == 12000,
	   "reserved ports 12000,12005 give 12000");
	ok(rdzv_resv_ports_first("12000", &p, err, sizeof(err)) == 0 && p == 12000,
	   "reserved port 12000 gives 12000");
	ok(rdzv_resv_ports_first("12000,12003-12004", &p, err, sizeof(err)) == 0 && p == 12000,
	   "reserved ports 12000,12003-12004 give 12000");
	ok(rdzv_resv_ports_first("12001-12002,12005", &p, err, sizeof(err)) == 0 && p == 12001,
	   "reserved ports 12001-12002,12005 give 12001");
	ok(rdzv_resv_ports_first("65535", &p, err, sizeof(err)) == 0 && p == 65535,
	   "reserved port 65535 is accepted");

	is_str(rdzv_port_source_name(RDZV_PORT_FROM_OPTION), "--rdzv-port",
	       "the option source is named after the option");
	is_str(rdzv_port_source_name(RDZV_PORT_FROM_RESV), "SLURM_STEP_RESV_PORTS",
	       "the reserved source is named after Slurm's variable");
	is_str(rdzv_port_source_name(RDZV_PORT_FROM_DERIVED), "job/step id",
	       "the derived source says it comes from the ids");
}

static int in_range(uint16_t p, const struct rdzv_port_range *r)
{
	return p >= r->lo && p <= r->hi;
}

/* Every (job, step) gives a port of the range outside the ephemeral one. */
static void derive_exhaustive(const struct rdzv_port_range *range,
                              const struct rdzv_port_range *eph, const char *name)
{
	uint32_t job, step, bad = 0, tried = 0;
	int hit_low = 0, hit_high = 0;

	for (job = 0; job < 3000; job += 7) {
		for (step = 0; step < 70; step++) {
			uint16_t p = 0;

			tried++;
			if (rdzv_port_derive(job, step, range, eph, &p, err, sizeof(err)) < 0
			    || !in_range(p, range) || (eph && in_range(p, eph))) {
				if (bad++ < 3)
					diag("job %u step %u: port %u", job, step, p);
				continue;
			}
			hit_low |= eph && p < eph->lo;
			hit_high |= eph && p > eph->hi;
		}
	}
	{
		uint16_t p = 0;
		uint32_t ids[] = { UINT32_MAX, UINT32_MAX - 1, 0xfffffffbu, 1u << 31 };
		size_t i;

		for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
			tried++;
			if (rdzv_port_derive(ids[i], ids[i], range, eph, &p, err, sizeof(err)) < 0
			    || !in_range(p, range) || (eph && in_range(p, eph)))
				bad++;
		}
	}
	ok(bad == 0, "%s: all %u job/step ids give a port in the range, never an ephemeral one",
	   name, tried);
	if (eph && eph->lo > range->lo && eph->hi < range->hi)
		ok(hit_low && hit_high, "%s: both sides of the ephemeral range are used", name);
}

static void test_derive(void)
{
	struct rdzv_port_range range = { 29500, 32767 };
	struct rdzv_port_range eph_linux = { 32768, 60999 };
	struct rdzv_port_range eph_low = { 29000, 29600 };   /* covers the range's bottom */
	struct rdzv_port_range eph_high = { 32700, 40000 };  /* covers the range's top */
	struct rdzv_port_range eph_mid = { 30000, 32000 };   /* a hole in the middle */
	struct rdzv_port_range eph_lo_edge = { 1024, 29500 };/* touches the range's first port */
	struct rdzv_port_range eph_hi_edge = { 32767, 65535 };/* touches its last port */
	struct rdzv_port_range one = { 40000, 40000 };
	struct rdzv_port_range wide = { 1024, 65535 };
	uint16_t p = 0, seen[64];
	uint32_t step, i;
	int distinct = 1;

	derive_exhaustive(&range, NULL, "no ephemeral range");
	derive_exhaustive(&range, &eph_linux, "Linux's default ephemeral range");
	derive_exhaustive(&range, &eph_low, "an ephemeral range over the bottom");
	derive_exhaustive(&range, &eph_high, "an ephemeral range over the top");
	derive_exhaustive(&range, &eph_mid, "an ephemeral range in the middle");
	derive_exhaustive(&range, &eph_lo_edge, "an ephemeral range ending at the first port");
	derive_exhaustive(&range, &eph_hi_edge, "an ephemeral range starting at the last port");
	derive_exhaustive(&wide, &eph_linux, "the widest range around Linux's ephemeral range");
	derive_exhaustive(&one, NULL, "a range of one port");

	/* concurrent steps of one job */
	for (step = 0; step < 64 && distinct; step++) {
		if (rdzv_port_derive(123456, step, &range, &eph_mid, &seen[step], err,
		                     sizeof(err)) < 0) {
			distinct = 0;
			break;
		}
		for (i = 0; i < step; i++)
			if (seen[i] == seen[step]) {
				diag("steps %u and %u share port %u", i, step, seen[i]);
				distinct = 0;
			}
	}
	ok(distinct, "steps 0..63 of one job get 64 distinct ports");
	distinct = 1;
	for (step = 0; step < 64 && distinct; step++) {
		if (rdzv_port_derive(7, step, &wide, &eph_linux, &seen[step], err, sizeof(err)) < 0)
			distinct = 0;
		for (i = 0; i < step && distinct; i++)
			distinct = seen[i] != seen[step];
	}
	ok(distinct, "steps 0..63 get distinct ports when the range straddles the ephemeral one");
	{
		uint16_t a = 0, b = 0;

		rdzv_port_derive(1000, 0, &range, &eph_linux, &a, err, sizeof(err));
		rdzv_port_derive(1001, 0, &range, &eph_linux, &b, err, sizeof(err));
		ok(a != b, "consecutive jobs get different ports (%u, %u)", a, b);
		rdzv_port_derive(1000, 5, &range, &eph_linux, &a, err, sizeof(err));
		rdzv_port_derive(1000, 5, &range, &eph_linux, &b, err, sizeof(err));
		ok(a == b, "every node of a step derives the same port");
	}
	ok(rdzv_port_derive(0, 0, &range, NULL, &p, err, sizeof(err)) == 0 && p == 29500,
	   "job 0 step 0 takes the range's first port");
	ok(rdzv_port_derive(0, 0, &range, &eph_low, &p, err, sizeof(err)) == 0 && p == 29601,
	   "the first port past an ephemeral range over the bottom");
	ok(rdzv_port_derive(0, 0, &range, &eph_mid, &p, err, sizeof(err)) == 0 && p == 29500,
	   "with a hole in the middle, index 0 is the first port");
	ok(rdzv_port_derive(0, 500, &range, &eph_mid, &p, err, sizeof(err)) == 0 && p == 32001,
	   "with a hole in the middle, index 500 is the first port after the hole");
}

/* The plugin's earlier derivation, kept here only as the reference the
 * figures are compared with: job * 64 + step modulo the usable ports. */
static uint64_t old_index(uint32_t job, uint32_t step, uint64_t usable)
{
	return ((uint64_t)job * 64u + step) % usable;
}

#define SPREAD_JOBS 100000u
#define SPREAD_STEPS 8u
#define SPREAD_WINDOW 63u /* jobs on either side running at the same time */

struct spread {
	double window;  /* steps sharing a port with a step of a job within the window */
	double pairs;   /* all pairs of the 800,000 steps that share a port */
	uint32_t apart; /* jobs j, j+817 sharing step 0's port */
};

/* Measure a derivation over job ids FIRST..FIRST+SPREAD_JOBS-1, steps 0..7. */
static void measure(uint64_t (*index)(uint32_t, uint32_t, uint64_t), uint64_t usable,
                    struct spread *m)
{
	const uint32_t first = 4000000u;
	uint32_t *cnt = calloc(usable, sizeof(*cnt)), *all = calloc(usable, sizeof(*all));
	uint64_t hit = 0, pairs = 0, n = (uint64_t)SPREAD_JOBS * SPREAD_STEPS;
	uint32_t j, s;

	if (!cnt || !all) {
		printf("Bail out! out of memory\n");
		exit(1);
	}
	m->apart = 0;
	/* window [j - W, j + W] around job j, slid one job at a time */
	for (j = 0; j <= SPREAD_WINDOW && j < SPREAD_JOBS; j++)
		for (s = 0; s < SPREAD_STEPS; s++)
			cnt[index(first + j, s, usable)]++;
	for (j = 0; j < SPREAD_JOBS; j++) {
		for (s = 0; s < SPREAD_STEPS; s++) {
			uint64_t k = index(first + j, s, usable);

			hit += cnt[k] > 1;
			all[k]++;
		}
		if (index(first + j, 0, usable) == index(first + j + 817, 0, usable))
			m->apart++;
		if (j + SPREAD_WINDOW + 1 < SPREAD_JOBS)
			for (s = 0; s < SPREAD_STEPS; s++)
				cnt[index(first + j + SPREAD_WINDOW + 1, s, usable)]++;
		if (j >= SPREAD_WINDOW)
			for (s = 0; s < SPREAD_STEPS; s++)
				cnt[index(first + j - SPREAD_WINDOW, s, usable)]--;
	}
	for (j = 0; j < usable; j++)
		pairs += (uint64_t)all[j] * (all[j] - (all[j] > 0)) / 2;
	m->window = (double)hit / (double)n;
	m->pairs = (double)pairs / ((double)n * (double)(n - 1) / 2);
	free(cnt);
	free(all);
}

/* The collision rate of derived ports over 100,000 consecutive job ids x 8
 * steps in the default range (29500-32767 minus Linux's ephemeral range:
 * 3268 ports), against the ideal: ports drawn independently and uniformly
 * (for the window figure), or spread as evenly as 800,000 steps can be over
 * 3268 ports (for the all-pairs figure). */
static void test_spread(void)
{
	struct rdzv_port_range range = { RDZV_DEFAULT_PORT_LO, RDZV_DEFAULT_PORT_HI };
	uint64_t usable = (uint64_t)range.hi - range.lo + 1, n = (uint64_t)SPREAD_JOBS * SPREAD_STEPS;
	uint64_t q = n / usable, r = n % usable, others = SPREAD_STEPS * (2 * SPREAD_WINDOW + 1) - 1;
	double ideal_window = 1.0, miss = 1.0 - 1.0 / (double)usable;
	double ideal_pairs = ((double)(usable - r) * (double)q * (double)(q - 1) / 2
	                      + (double)r * (double)(q + 1) * (double)q / 2)
	                     / ((double)n * (double)(n - 1) / 2);
	struct spread now, old;
	uint16_t p;
	uint32_t job;
	int agree = 1;

	for (job = 0; job < others; job++)
		ideal_window *= miss;
	ideal_window = 1.0 - ideal_window;
	measure(rdzv_port_index, usable, &now);
	measure(old_index, usable, &old);
	diag("port spread over %u job ids x %u steps, %llu usable ports:", SPREAD_JOBS,
	     SPREAD_STEPS, (unsigned long long)usable);
	diag("  steps colliding with a step of the %u jobs around them: ideal (random) %.4f, "
	     "derived %.4f, before (job*64+step) %.4f", 2 * SPREAD_WINDOW, ideal_window,
	     now.window, old.window);
	diag("  pairs of steps sharing a port: ideal (even) %.3e, derived %.3e (x%.4f), "
	     "before %.3e (x%.4f)", ideal_pairs, now.pairs, now.pairs / ideal_pairs, old.pairs,
	     old.pairs / ideal_pairs);
	diag("  jobs 817 apart sharing step 0's port: derived %u, before %u of %u", now.apart,
	     old.apart, SPREAD_JOBS);
	ok(now.window < ideal_window / 10,
	   "concurrent steps of nearby jobs collide far less than random ports (%.4f < %.4f/10)",
	   now.window, ideal_window);
	ok(now.pairs <= ideal_pairs * 1.001,
	   "over all 800,000 steps, port sharing is within 0.1%% of the even spread (x%.4f)",
	   now.pairs / ideal_pairs);
	ok(now.apart == 0, "jobs 817 apart no longer share a port (%u, before: %u)", now.apart,
	   old.apart);
	/* rdzv_port_derive is the index mapped onto the range. */
	for (job = 4000000u; job < 4000000u + 1000u && agree; job++)
		agree = rdzv_port_derive(job, 3, &range, NULL, &p, err, sizeof(err)) == 0
		        && p == range.lo + rdzv_port_index(job, 3, usable);
	ok(agree, "the derived port is the range's first port plus the index");
}

static void test_choose(void)
{
	struct rdzv_port_range range = { 29500, 32767 }, eph = { 32768, 60999 };
	enum rdzv_port_source src = RDZV_PORT_FROM_DERIVED;
	uint16_t p = 0, derived = 0;

	ok(rdzv_port_choose(40000, "12000-12003", 5, 1, &range, &eph, &p, &src, err,
	                    sizeof(err)) == 0 && p == 40000 && src == RDZV_PORT_FROM_OPTION,
	   "--rdzv-port wins over reserved ports");
	ok(rdzv_port_choose(40000, "garbage", 5, 1, &range, &eph, &p, &src, err,
	                    sizeof(err)) == 0 && p == 40000 && src == RDZV_PORT_FROM_OPTION,
	   "--rdzv-port wins even when the reserved ports are malformed");
	ok(rdzv_port_choose(0, "12000-12003", 5, 1, &range, &eph, &p, &src, err,
	                    sizeof(err)) == 0 && p == 12000 && src == RDZV_PORT_FROM_RESV,
	   "reserved ports win over the derived port");
	ok(rdzv_port_choose(0, "40000", 5, 1, &range, &eph, &p, &src, err, sizeof(err)) == 0
	   && p == 40000 && src == RDZV_PORT_FROM_RESV,
	   "a reserved port is used even inside the ephemeral range (Slurm owns it)");
	rdzv_port_derive(5, 1, &range, &eph, &derived, err, sizeof(err));
	ok(rdzv_port_choose(0, NULL, 5, 1, &range, &eph, &p, &src, err, sizeof(err)) == 0
	   && p == derived && src == RDZV_PORT_FROM_DERIVED,
	   "without option or reserved ports, the port is derived from the ids");
	ok(rdzv_port_choose(0, "", 5, 1, &range, &eph, &p, &src, err, sizeof(err)) == 0
	   && p == derived && src == RDZV_PORT_FROM_DERIVED,
	   "empty reserved ports count as absent");
}

static void test_ephemeral_file(void)
{
	char path[] = "/tmp/test-port-XXXXXX";
	struct rdzv_port_range r = { 0, 0 };
	FILE *f;
	int fd = mkstemp(path);

	if (!ok(fd >= 0, "a temporary file is created"))
		return;
	close(fd);
	f = fopen(path, "w");
	fputs("32768\t60999\n", f);
	fclose(f);
	ok(rdzv_ephemeral_range_read(path, &r) == 0 && r.lo == 32768 && r.hi == 60999,
	   "ip_local_port_range's 'LO<tab>HI' is read");
	f = fopen(path, "w");
	fputs("60999 32768\n", f);
	fclose(f);
	is_int(rdzv_ephemeral_range_read(path, &r), -1, "a backwards ephemeral range is refused");
	f = fopen(path, "w");
	fputs("1024 70000\n", f);
	fclose(f);
	is_int(rdzv_ephemeral_range_read(path, &r), -1, "an ephemeral range above 65535 is refused");
	f = fopen(path, "w");
	fputs("junk\n", f);
	fclose(f);
	is_int(rdzv_ephemeral_range_read(path, &r), -1, "a file without two numbers is refused");
	unlink(path);
	is_int(rdzv_ephemeral_range_read(path, &r), -1, "a missing file is refused");
	if (access("/proc/sys/net/ipv4/ip_local_port_range", R_OK) == 0)
		ok(rdzv_ephemeral_range_read("/proc/sys/net/ipv4/ip_local_port_range", &r) == 0
		   && r.lo <= r.hi, "this machine's ip_local_port_range is read (%u-%u)", r.lo, r.hi);
}

int main(void)
{
	test_invalid();
	test_parse();
	test_derive();
	test_choose();
	test_spread();
	test_ephemeral_file();
	return done_testing();
}
