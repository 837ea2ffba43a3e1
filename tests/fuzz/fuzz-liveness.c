/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz-liveness.c: the liveness channel's datagrams (lib/failure/liveness.c),
 * which srun and every slurmstepd of a step read from anyone on the
 * network. Input: one datagram. Invariants: a datagram that decodes
 * encodes to exactly its bytes (one spelling per message) and decodes again
 * to the same; srun's table takes it without leaving its bounds, and once a
 * node's HELLO fixed its address, nothing from another address changes
 * what srun knows of it (ACK, srun's own, included: issue 45). */
#include "config.h"
#include "fuzz.h"
#include "liveness.h"

#include <netinet/in.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rdzv_live_msg m, again;
	char buf[RDZV_LIVE_DGRAM_MAX];
	struct sockaddr_in a, b;
	struct rdzv_live l;
	struct rdzv_live_node before;
	uint32_t ids[4];

	if (rdzv_live_decode((const char *)data, size, &m) < 0)
		return 0;
	FUZZ_ASSERT(rdzv_live_encode(&m, buf, sizeof(buf)) == 0);
	FUZZ_ASSERT(strlen(buf) == size && memcmp(buf, data, size) == 0);
	FUZZ_ASSERT(rdzv_live_decode(buf, strlen(buf), &again) == 0);
	FUZZ_ASSERT(memcmp(&m, &again, sizeof(m)) == 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	if (rdzv_live_init(&l, 4, 0) < 0)
		return 0;
	(void)rdzv_live_take(&l, &m, (struct sockaddr *)&a, sizeof(a), 1);
	FUZZ_ASSERT(rdzv_live_silent(&l, 1, ids, 4) <= 4);
	FUZZ_ASSERT(m.kind != RDZV_LIVE_ACK || rdzv_live_take(&l, &m, (struct sockaddr *)&a, sizeof(a), 1) < 0);
	/* The same datagram from another host, after the node's HELLO. */
	if (m.node_id < 4 && l.v[m.node_id].len) {
		b = a;
		b.sin_addr.s_addr = 0x01020304;
		before = l.v[m.node_id];
		FUZZ_ASSERT(rdzv_live_take(&l, &m, (struct sockaddr *)&b, sizeof(b), 2) < 0);
		FUZZ_ASSERT(memcmp(&before, &l.v[m.node_id], sizeof(before)) == 0);
	}
	rdzv_live_free(&l);
	return 0;
}
