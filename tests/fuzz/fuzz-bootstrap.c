/* fuzz-bootstrap.c: the preflight's wire protocol as a stranger (or a
 * broken rank) would send it. The input is a byte stream: its first byte
 * picks the chunk size the stream is fed in (a TCP read can cut anywhere),
 * the rest goes through the frame reader; every whole frame's payload is
 * parsed as a hello and as an all-gather.
 * Invariants: a frame is delivered only with a header that passes the
 * checks and exactly hdr.len payload bytes; a parsed hello packs back to
 * the same bytes; every all-gather blob lies inside its payload and the
 * blobs plus their length fields make up the payload exactly. */
#include "config.h"
#include "fuzz.h"
#include "bootstrap.h"

#define MAXLEN 4096u

static void check_hello(const unsigned char *p, size_t n)
{
	struct rdzv_boot_hello h;
	unsigned char back[8 + RDZV_BOOT_HOST_MAX + RDZV_BOOT_SESSION_MAX];
	long m;

	if (rdzv_boot_hello_unpack(p, n, &h, NULL, 0) < 0)
		return;
	FUZZ_ASSERT(h.world >= 1 && h.world <= RDZV_BOOT_MAX_WORLD);
	FUZZ_ASSERT(h.host[0] != '\0');
	m = rdzv_boot_hello_pack(&h, back, sizeof(back), NULL, 0);
	FUZZ_ASSERT(m >= 0 && (size_t)m == n);
	FUZZ_ASSERT(memcmp(back, p, n) == 0);
}

static void check_all(const unsigned char *p, size_t n)
{
	const unsigned char *ptr[64];
	uint32_t len[64], want, i;
	size_t total = 4;

	if (n < 4)
		return;
	want = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
	if (want > 64)
		want = 64;
	if (rdzv_boot_all_unpack(p, n, want, ptr, len, NULL, 0) < 0)
		return;
	for (i = 0; i < want; i++) {
		FUZZ_ASSERT(ptr[i] >= p && ptr[i] + len[i] <= p + n);
		total += 4 + (size_t)len[i];
	}
	FUZZ_ASSERT(total == n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rdzv_boot_rx rx;
	size_t chunk, off = 0;
	char err[256];

	if (size < 1)
		return 0;
	chunk = (size_t)data[0] % 23 + 1;
	data++;
	size--;
	rdzv_boot_rx_init(&rx, MAXLEN);
	while (off < size) {
		size_t n = size - off < chunk ? size - off : chunk, used = 0;
		int st = rdzv_boot_rx_feed(&rx, data + off, n, &used, err, sizeof(err));

		FUZZ_ASSERT(used <= n);
		off += used;
		if (st < 0)
			break;
		if (st == 0) {
			FUZZ_ASSERT(used == n);
			continue;
		}
		FUZZ_ASSERT(rx.hdr.magic == RDZV_BOOT_MAGIC && rx.hdr.version == RDZV_BOOT_VERSION);
		FUZZ_ASSERT(rx.hdr.len <= MAXLEN && rx.phave == rx.hdr.len);
		FUZZ_ASSERT(rx.payload && rx.payload[rx.hdr.len] == '\0');
		if (rx.hdr.type == RDZV_BOOT_HELLO)
			check_hello(rx.payload, rx.hdr.len);
		else
			check_all(rx.payload, rx.hdr.len);
		rdzv_boot_rx_reset(&rx);
	}
	rdzv_boot_rx_reset(&rx);
	return 0;
}
