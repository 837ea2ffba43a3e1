/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz-bootstrap.c: the preflight's wire protocol as a stranger (or a
 * broken rank) would send it. The input is a byte stream after a first
 * byte that picks the mode:
 *   parser (bit 7 clear): the low bits pick the chunk size the stream is
 *     fed in (a TCP read can cut anywhere) to the frame reader; every whole
 *     frame's payload is parsed as a hello and as an all-gather;
 *   server (bit 7 set): rank 0's server (a world of 2, session "fz") gets
 *     the stream from a real TCP connection on 127.0.0.1 and runs phase 1.
 * Invariants: a frame is delivered only with a header that passes the
 * checks and exactly hdr.len payload bytes; a parsed hello packs back to
 * the same bytes; every all-gather blob lies inside its payload and the
 * blobs plus their length fields make up the payload exactly; the server
 * survives any stream, ends phase 1 by its deadline, and succeeds only
 * with both ranks joined. */
#include "config.h"
#include "fuzz.h"
#include "bootstrap.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

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

static void serve(const uint8_t *data, size_t size)
{
	struct rdzv_boot_server *s;
	struct sockaddr_in a;
	unsigned char *all = NULL;
	size_t alllen = 0;
	char err[512];
	int64_t t0;
	int fd, rc;

	signal(SIGPIPE, SIG_IGN);
	s = rdzv_boot_server_create(0, 2, "fz", "fuzz0", 1, err, sizeof(err));
	if (!s)
		return; /* no socket here: nothing to fuzz */
	fd = socket(AF_INET, SOCK_STREAM, 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons(rdzv_boot_server_port(s));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		if (fd >= 0)
			close(fd);
		rdzv_boot_server_destroy(s);
		return;
	}
	/* Small inputs fit the socket buffer: written whole before the
	 * server reads, then end of stream. */
	if (size && write(fd, data, size) < 0)
		size = 0;
	shutdown(fd, SHUT_WR);
	t0 = rdzv_boot_now_ms();
	rc = rdzv_boot_server_allgather(s, 1, "r0", 2, t0 + 30, &all, &alllen, err, sizeof(err));
	FUZZ_ASSERT(rdzv_boot_now_ms() - t0 < 2000);
	FUZZ_ASSERT(rc < 0 || rdzv_boot_server_joined(s) == 2);
	FUZZ_ASSERT(rc < 0 || (all && alllen >= 4 + 4 + 2 + 4));
	FUZZ_ASSERT(rc == 0 || err[0] != '\0');
	free(all);
	rdzv_boot_server_abort(s, "fuzz", 0);
	rdzv_boot_server_destroy(s);
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rdzv_boot_rx rx;
	size_t chunk, off = 0;
	char err[256];

	if (size < 1)
		return 0;
	if (data[0] & 0x80) {
		serve(data + 1, size - 1);
		return 0;
	}
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
