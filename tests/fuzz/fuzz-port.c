/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz-port.c: port strings. Input lines: [0] a --rdzv-port / RDZV_PORT
 * value, [1] a plugstack port_range=, [2] SLURM_STEP_RESV_PORTS, [3] an
 * ip_local_port_range file's text, [4] job id, [5] step id.
 * Invariants: accepted values are inside their documented bounds, and the
 * chosen port is the option's, the first reserved one, or a member of the
 * admin's range outside the ephemeral range. */
#define _GNU_SOURCE /* memfd_create */
#include "config.h"
#include "fuzz.h"
#include "port.h"

#include <sys/mman.h>
#include <unistd.h>

/* rdzv_ephemeral_range_read takes a path (the /proc file in production):
 * hand it the fuzzed text through an anonymous memory file. */
static int ephemeral_from_text(const char *text, struct rdzv_port_range *r)
{
	char path[64];
	int fd = memfd_create("eph", MFD_CLOEXEC), rc = -1;
	size_t n = strlen(text);

	if (fd < 0)
		return -1;
	if (write(fd, text, n) == (ssize_t)n) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		rc = rdzv_ephemeral_range_read(path, r);
	}
	close(fd);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_pieces p;
	const char *opt, *range_s, *resv, *eph_s;
	char err[256];
	uint16_t port = 0, optport = 0, chosen = 0;
	struct rdzv_port_range range = { RDZV_DEFAULT_PORT_LO, RDZV_DEFAULT_PORT_HI };
	struct rdzv_port_range eph = { 0, 0 }, *ephp = NULL;
	enum rdzv_port_source src;
	uint32_t job, step;

	if (fuzz_split(data, size, &p) < 0)
		return 0;
	opt = p.v[0];
	range_s = p.n > 1 ? p.v[1] : "";
	resv = p.n > 2 ? p.v[2] : "";
	eph_s = p.n > 3 ? p.v[3] : "";
	job = p.n > 4 ? fuzz_hash(p.v[4]) : 1;
	step = p.n > 5 ? fuzz_hash(p.v[5]) % 0xfffffff0u : 0;

	if (rdzv_port_parse(opt, &optport, err, sizeof(err)) == 0)
		FUZZ_ASSERT(optport >= RDZV_PORT_MIN);
	else
		optport = 0;
	if (rdzv_port_range_parse(range_s, &range, err, sizeof(err)) == 0)
		FUZZ_ASSERT(range.lo >= RDZV_PORT_MIN && range.lo <= range.hi);
	else
		range = (struct rdzv_port_range){ RDZV_DEFAULT_PORT_LO, RDZV_DEFAULT_PORT_HI };
	if (rdzv_resv_ports_first(resv, &port, err, sizeof(err)) == 0)
		FUZZ_ASSERT(port >= 1);
	if (ephemeral_from_text(eph_s, &eph) == 0) {
		FUZZ_ASSERT(eph.lo <= eph.hi);
		ephp = &eph;
	}

	if (rdzv_port_choose(optport, resv, job, step, &range, ephp, &chosen, &src,
	                     err, sizeof(err)) == 0) {
		switch (src) {
		case RDZV_PORT_FROM_OPTION:
			FUZZ_ASSERT(optport != 0 && chosen == optport);
			break;
		case RDZV_PORT_FROM_RESV:
			FUZZ_ASSERT(optport == 0 && *resv && chosen == port);
			break;
		case RDZV_PORT_FROM_DERIVED:
			FUZZ_ASSERT(optport == 0 && !*resv);
			FUZZ_ASSERT(chosen >= range.lo && chosen <= range.hi);
			FUZZ_ASSERT(!ephp || chosen < ephp->lo || chosen > ephp->hi);
			/* Same ids, same port: every node of a step must agree. */
			{
				uint16_t again = 0;

				FUZZ_ASSERT(rdzv_port_derive(job, step, &range, ephp, &again,
				                             err, sizeof(err)) == 0);
				FUZZ_ASSERT(again == chosen);
			}
			break;
		}
	} else {
		FUZZ_ASSERT(optport == 0);
	}
	fuzz_pieces_free(&p);
	return 0;
}
