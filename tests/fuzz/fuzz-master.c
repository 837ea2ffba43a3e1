/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz-master.c: the node of rank 0. Input: the first line picks the
 * distribution ("arbitrary" or anything else), the second is the step's
 * node list, the rest is the text of a user's SLURM_HOSTFILE (read as the
 * user in slurmstepd). Invariants: a host is returned only when it fits and
 * is non-empty; with a non-arbitrary distribution it is the node list's
 * first host; with arbitrary it is the hostfile's first host. No name
 * lookups here (rdzv_master_addr is not fuzzed: it only calls
 * getaddrinfo). */
#include "config.h"
#include "fuzz.h"
#include "hostlist.h"
#include "master.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = fuzz_string(data, size), *dist, *nodelist, *hostfile, *nl;
	char host[RDZV_HOST_MAX], first[RDZV_HOST_MAX], err[256];
	size_t hostlen;

	if (!buf)
		return 0;
	dist = buf;
	nodelist = (nl = strchr(dist, '\n')) ? (*nl = '\0', nl + 1) : dist + strlen(dist);
	hostfile = (nl = strchr(nodelist, '\n')) ? (*nl = '\0', nl + 1) : NULL;

	if (rdzv_hostfile_first(hostfile ? hostfile : "", host, sizeof(host), err, sizeof(err)) == 0)
		FUZZ_ASSERT(host[0] != '\0' && strlen(host) < sizeof(host));

	if (rdzv_master_host(nodelist, dist, hostfile, host, sizeof(host), err, sizeof(err)) == 0) {
		FUZZ_ASSERT(strlen(host) < sizeof(host));
		if (strncmp(dist, "arbitrary", 9) == 0) {
			FUZZ_ASSERT(rdzv_hostfile_first(hostfile, first, sizeof(first), err,
			                                sizeof(err)) == 0);
		} else {
			FUZZ_ASSERT(rdzv_hostlist_count(nodelist, err, sizeof(err)) > 0);
			FUZZ_ASSERT(rdzv_hostlist_nth(nodelist, 0, first, sizeof(first), err,
			                              sizeof(err)) == 0);
		}
		FUZZ_ASSERT(strcmp(host, first) == 0);
	}
	/* The same lookups with a short buffer refuse rather than truncate. */
	hostlen = 1 + (size % 8);
	if (rdzv_master_host(nodelist, dist, hostfile, host, hostlen, err, sizeof(err)) == 0)
		FUZZ_ASSERT(strlen(host) < hostlen);
	free(buf);
	return 0;
}
