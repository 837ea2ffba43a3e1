/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/step/: the step's plan: host lists, task layouts, node order,
 * MASTER_ADDR and the port, rank 0, heterogeneous steps, srun's command line
 * and what it hands the nodes, the interface to rank 0, the step's datagram
 * channel. Uses lib/common/. */
#include "config.h"
#include "port.h"
#include "util.h"

#include <stdio.h>
#include <string.h>

int rdzv_port_parse(const char *s, uint16_t *port, char *err, size_t errlen)
{
	uint64_t v;

	if (rdzv_parse_u64(s, RDZV_PORT_MIN, RDZV_PORT_MAX, &v) < 0)
		return rdzv_err(err, errlen, "invalid port '%.32s': expected %d-%d",
		                s ? s : "", RDZV_PORT_MIN, RDZV_PORT_MAX);
	*port = (uint16_t)v;
	return 0;
}

int rdzv_port_range_parse(const char *s, struct rdzv_port_range *r,
                          char *err, size_t errlen)
{
	const char *dash = s ? strchr(s, '-') : NULL;
	uint64_t lo, hi;

	if (!dash
	    || rdzv_parse_u64n(s, (size_t)(dash - s), RDZV_PORT_MIN, RDZV_PORT_MAX, &lo) < 0
	    || rdzv_parse_u64(dash + 1, RDZV_PORT_MIN, RDZV_PORT_MAX, &hi) < 0
	    || hi < lo)
		return rdzv_err(err, errlen,
		                "invalid port range '%.32s': expected LO-HI with %d <= LO <= HI <= %d",
		                s ? s : "", RDZV_PORT_MIN, RDZV_PORT_MAX);
	r->lo = (uint16_t)lo;
	r->hi = (uint16_t)hi;
	return 0;
}

/* One "N" or "N-M" of a reserved-ports list at s; sets *lo and *next. */
static int resv_element(const char *s, uint64_t *lo, const char **next)
{
	size_t n = strspn(s, "0123456789");
	uint64_t hi;

	if (rdzv_parse_u64n(s, n, 1, RDZV_PORT_MAX, lo) < 0)
		return -1;
	s += n;
	if (*s == '-') {
		n = strspn(s + 1, "0123456789");
		if (rdzv_parse_u64n(s + 1, n, 1, RDZV_PORT_MAX, &hi) < 0 || hi < *lo)
			return -1;
		s += 1 + n;
	}
	*next = s;
	return 0;
}

/* The whole string is checked, not just its first port: a malformed value
 * means the environment is not what Slurm wrote, and a port read from it
 * should not be trusted. */
int rdzv_resv_ports_first(const char *s, uint16_t *port, char *err, size_t errlen)
{
	const char *p = s;
	uint64_t first = 0, lo;

	if (!s || !*s)
		return rdzv_err(err, errlen, "no reserved ports");
	for (;;) {
		if (resv_element(p, &lo, &p) < 0)
			return rdzv_err(err, errlen, "malformed reserved ports '%.32s'", s);
		if (!first)
			first = lo;
		if (*p == '\0')
			break;
		if (*p != ',')
			return rdzv_err(err, errlen, "malformed reserved ports '%.32s'", s);
		p++;
	}
	*port = (uint16_t)first;
	return 0;
}

int rdzv_ephemeral_range_read(const char *path, struct rdzv_port_range *r)
{
	FILE *f = fopen(path, "re");
	unsigned lo, hi;
	int n;

	if (!f)
		return -1;
	n = fscanf(f, "%u %u", &lo, &hi);
	fclose(f);
	if (n != 2 || lo > hi || hi > RDZV_PORT_MAX)
		return -1;
	r->lo = (uint16_t)lo;
	r->hi = (uint16_t)hi;
	return 0;
}

static uint64_t gcd_u64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/* The stride of consecutive job ids: the integer nearest usable/phi (the
 * golden ratio) that is coprime to usable. Coprime, so job ids j and j+d
 * share a first port only when usable divides d (the old "job * 64" shared
 * the factor 4 with the default 3268 ports: jobs 817 apart collided on every
 * step). Near usable/phi, so the first ports of any run of consecutive jobs
 * split the range into gaps of at most three sizes, the smallest about
 * usable / (2.6 * jobs) (the three-distance theorem): the 8 steps of ~150
 * consecutive jobs never meet in the default range. */
static uint64_t job_stride(uint64_t usable)
{
	uint64_t s = (usable * 618034u + 500000u) / 1000000u, d;

	if (usable <= 2)
		return 1;
	for (d = 0; d < usable; d++) {
		if (s + d < usable && s + d > 0 && gcd_u64(s + d, usable) == 1)
			return s + d;
		if (s > d && gcd_u64(s - d, usable) == 1)
			return s - d;
	}
	return 1;
}

uint64_t rdzv_port_index(uint32_t job_id, uint32_t step_id, uint64_t usable)
{
	if (usable == 0)
		return 0;
	/* Steps of a job take consecutive ports from the job's first port. */
	return ((uint64_t)job_id % usable * job_stride(usable) + step_id) % usable;
}

int rdzv_port_derive(uint32_t job_id, uint32_t step_id,
                     const struct rdzv_port_range *range,
                     const struct rdzv_port_range *eph, uint16_t *port,
                     char *err, size_t errlen)
{
	/* Usable ports: range minus the ephemeral interval, as up to two runs. */
	uint32_t a_lo, a_hi, b_lo = 1, b_hi = 0;
	uint64_t usable, k;

	/* Check before the first dereference: reading range first would let
	 * the compiler drop the NULL test (found by cppcheck). */
	if (!range || range->lo > range->hi)
		return rdzv_err(err, errlen, "no valid port range");
	a_lo = range->lo;
	a_hi = range->hi;
	if (eph && eph->lo <= range->hi && eph->hi >= range->lo) {
		a_hi = eph->lo > range->lo ? eph->lo - 1u : 0;
		if (eph->lo <= range->lo)
			a_lo = 1, a_hi = 0;
		if (eph->hi < range->hi)
			b_lo = eph->hi + 1u, b_hi = range->hi;
	}
	usable = (a_hi >= a_lo ? a_hi - a_lo + 1 : 0) + (b_hi >= b_lo ? b_hi - b_lo + 1 : 0);
	if (usable == 0)
		return rdzv_err(err, errlen,
		                "port range %u-%u lies inside the ephemeral range %u-%u",
		                range->lo, range->hi, eph->lo, eph->hi);
	k = rdzv_port_index(job_id, step_id, usable);
	if (a_hi >= a_lo && k < (uint64_t)(a_hi - a_lo + 1))
		*port = (uint16_t)(a_lo + k);
	else
		*port = (uint16_t)(b_lo + (k - (a_hi >= a_lo ? a_hi - a_lo + 1 : 0)));
	return 0;
}

const char *rdzv_port_source_name(enum rdzv_port_source s)
{
	switch (s) {
	case RDZV_PORT_FROM_OPTION:
		return "--rdzv-port";
	case RDZV_PORT_FROM_RESV:
		return "SLURM_STEP_RESV_PORTS";
	case RDZV_PORT_FROM_DERIVED:
		return "job/step id";
	}
	return "?";
}

int rdzv_port_choose(uint16_t option_port, const char *resv, uint32_t job_id,
                     uint32_t step_id, const struct rdzv_port_range *range,
                     const struct rdzv_port_range *ephemeral, uint16_t *port,
                     enum rdzv_port_source *source, char *err, size_t errlen)
{
	if (option_port) {
		*port = option_port;
		*source = RDZV_PORT_FROM_OPTION;
		return 0;
	}
	if (resv && *resv) {
		if (rdzv_resv_ports_first(resv, port, err, errlen) < 0)
			return -1;
		*source = RDZV_PORT_FROM_RESV;
		return 0;
	}
	*source = RDZV_PORT_FROM_DERIVED;
	return rdzv_port_derive(job_id, step_id, range, ephemeral, port, err, errlen);
}
