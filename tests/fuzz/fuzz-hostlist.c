/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz-hostlist.c: Slurm host list expressions (SLURM_STEP_NODELIST,
 * hostfile lines). Input: the expression. Invariants: counting and indexing
 * agree (every index below the count names a host, the count itself does
 * not), every host indexing gives is one the list has (rdzv_hostlist_has),
 * a host always fits the buffer it was given, walking the list
 * (rdzv_hostlist_each) gives the hosts indexing gives, in the same order,
 * and work stays bounded by the length of the text (libFuzzer's -timeout
 * catches a blow-up). */
#include "config.h"
#include "fuzz.h"
#include "hostlist.h"

struct walk {
	const char *list;
	long seen, limit;
};

/* Host k of the walk is host k of indexing (the first 64 compared, the
 * walk stopped after limit hosts: its value comes back). */
static int walk_host(const char *host, void *ctx)
{
	struct walk *w = ctx;
	char want[RDZV_HOST_MAX], err[256];

	FUZZ_ASSERT(strlen(host) < RDZV_HOST_MAX);
	if (w->seen < 64) {
		FUZZ_ASSERT(rdzv_hostlist_nth(w->list, (size_t)w->seen, want, sizeof(want), err,
		                              sizeof(err)) == 0);
		FUZZ_ASSERT(strcmp(want, host) == 0);
	}
	if (++w->seen >= w->limit)
		return 7;
	return 0;
}

static void check_nth(const char *list, long count, size_t k, size_t hostlen)
{
	char host[RDZV_HOST_MAX], err[256];
	int rc;

	memset(host, 'x', sizeof(host));
	rc = rdzv_hostlist_nth(list, k, host, hostlen, err, sizeof(err));
	if (rc == 0) {
		FUZZ_ASSERT((long)k < count);
		FUZZ_ASSERT(strlen(host) < hostlen);
		/* Searching finds it, or gives up on an ambiguous list with a
		 * reason: it never says no to a host the list names. */
		rc = rdzv_hostlist_has(list, host, err, sizeof(err));
		FUZZ_ASSERT(rc == 1 || (rc == -1 && strstr(err, "ambiguous") != NULL));
	} else {
		FUZZ_ASSERT(rc == -1);
		FUZZ_ASSERT(memchr(err, '\0', sizeof(err)) != NULL);
		/* Only a host too long for the buffer may fail inside the count. */
		if ((long)k < count && hostlen == sizeof(host))
			FUZZ_ASSERT(strstr(err, "longer than") != NULL);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *list = fuzz_string(data, size);
	char err[256];
	long count;
	uint32_t h;

	if (!list)
		return 0;
	count = rdzv_hostlist_count(list, err, sizeof(err));
	FUZZ_ASSERT(count >= -1);
	if (count < 0) {
		char host[RDZV_HOST_MAX];

		/* A malformed list never yields a host. */
		FUZZ_ASSERT(rdzv_hostlist_nth(list, 0, host, sizeof(host), err, sizeof(err)) < 0);
		FUZZ_ASSERT(rdzv_hostlist_has(list, "n1", err, sizeof(err)) == -1);
		goto out;
	}
	h = fuzz_hash(list);
	check_nth(list, count, 0, RDZV_HOST_MAX);
	check_nth(list, count, (size_t)count, RDZV_HOST_MAX);
	if (count > 0) {
		check_nth(list, count, (size_t)count - 1, RDZV_HOST_MAX);
		check_nth(list, count, (size_t)(h % (uint64_t)count), RDZV_HOST_MAX);
		/* Short buffers: truncation is refused, never silent. */
		check_nth(list, count, 0, 1 + h % 16);
	}
	if (count <= 4096) {
		struct walk w = { list, 0, 1 + (long)(h % 8192) };
		int rc = rdzv_hostlist_each(list, walk_host, &w, err, sizeof(err));

		if (rc == 7)
			FUZZ_ASSERT(w.seen == w.limit && w.limit <= count);
		else if (rc == 0)
			FUZZ_ASSERT(w.seen == count && count < w.limit);
		else /* a host too long for RDZV_HOST_MAX ends the walk with a reason */
			FUZZ_ASSERT(rc == -1 && w.seen < count && strstr(err, "longer than") != NULL);
	}
out:
	free(list);
	return 0;
}
