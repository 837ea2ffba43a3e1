/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-bootstrap: the preflight's wire format, without sockets. Malformed
 * and truncated input first. */
#include "config.h"
#include "bootstrap.h"
#include "tap.h"

#include <stdint.h>
#include <stdlib.h>

static void hdr(unsigned char *b, uint32_t magic, uint16_t ver, uint16_t type, uint32_t rank,
                uint32_t seq, uint32_t len)
{
	struct rdzv_boot_hdr h = { magic, ver, type, rank, seq, len };

	rdzv_boot_hdr_pack(&h, b);
}

static void test_bad_headers(void)
{
	unsigned char b[RDZV_BOOT_HDR_LEN];
	struct rdzv_boot_hdr h;
	char err[256];

	memcpy(b, "GET / HTTP/1.1\r\nHost", RDZV_BOOT_HDR_LEN);
	ok(rdzv_boot_hdr_unpack(b, 1024, &h, err, sizeof(err)) < 0, "an HTTP request is refused");
	ok(strstr(err, "magic") != NULL, "the message says the magic is wrong: %s", err);
	hdr(b, RDZV_BOOT_MAGIC, 2, RDZV_BOOT_HELLO, 1, 0, 0);
	ok(rdzv_boot_hdr_unpack(b, 1024, &h, err, sizeof(err)) < 0, "version 2 is refused");
	ok(strstr(err, "version 2") != NULL, "the message names the version: %s", err);
	hdr(b, RDZV_BOOT_MAGIC, RDZV_BOOT_VERSION, 0, 1, 0, 0);
	ok(rdzv_boot_hdr_unpack(b, 1024, &h, err, sizeof(err)) < 0, "type 0 is refused");
	hdr(b, RDZV_BOOT_MAGIC, RDZV_BOOT_VERSION, RDZV_BOOT_TYPE_END, 1, 0, 0);
	ok(rdzv_boot_hdr_unpack(b, 1024, &h, err, sizeof(err)) < 0, "a type past the end is refused");
	hdr(b, RDZV_BOOT_MAGIC, RDZV_BOOT_VERSION, RDZV_BOOT_GATHER, 1, 1, 1025);
	ok(rdzv_boot_hdr_unpack(b, 1024, &h, err, sizeof(err)) < 0, "a length over the limit is refused");
	ok(strstr(err, "1025") != NULL, "the message names the length: %s", err);
	hdr(b, RDZV_BOOT_MAGIC, RDZV_BOOT_VERSION, RDZV_BOOT_GATHER, 1, 1, 0xffffffffu);
	ok(rdzv_boot_hdr_unpack(b, RDZV_BOOT_MAX_LEN, &h, NULL, 0) < 0,
	   "a 4 GiB length is refused before any allocation");
	hdr(b, RDZV_BOOT_MAGIC, RDZV_BOOT_VERSION, RDZV_BOOT_GATHER, 7, 3, 1024);
	ok(rdzv_boot_hdr_unpack(b, 1024, &h, err, sizeof(err)) == 0, "a good header is accepted");
	ok(h.rank == 7 && h.seq == 3 && h.len == 1024 && h.type == RDZV_BOOT_GATHER,
	   "its fields round-trip");
}

static void test_rx(void)
{
	unsigned char frame[RDZV_BOOT_HDR_LEN + 5], junk[64];
	struct rdzv_boot_rx rx;
	size_t used, i, off;
	char err[256];
	int st = 0;

	hdr(frame, RDZV_BOOT_MAGIC, RDZV_BOOT_VERSION, RDZV_BOOT_ABORT, 0, 0, 5);
	memcpy(frame + RDZV_BOOT_HDR_LEN, "hello", 5);

	rdzv_boot_rx_init(&rx, 64);
	for (i = 0; i < sizeof(frame) - 1; i++) {
		st = rdzv_boot_rx_feed(&rx, frame + i, 1, &used, err, sizeof(err));
		if (st != 0 || used != 1)
			break;
	}
	ok(i == sizeof(frame) - 1, "a frame one byte short is incomplete at every byte");
	st = rdzv_boot_rx_feed(&rx, frame + i, 1, &used, err, sizeof(err));
	ok(st == 1 && used == 1, "the last byte completes it");
	ok(rx.payload && strcmp((char *)rx.payload, "hello") == 0, "payload delivered with a NUL");
	rdzv_boot_rx_reset(&rx);

	/* Two frames in one buffer: the reader stops at the first boundary. */
	{
		unsigned char two[2 * sizeof(frame)];

		memcpy(two, frame, sizeof(frame));
		memcpy(two + sizeof(frame), frame, sizeof(frame));
		st = rdzv_boot_rx_feed(&rx, two, sizeof(two), &used, err, sizeof(err));
		ok(st == 1 && used == sizeof(frame), "two frames in one read: the first ends at its length");
		rdzv_boot_rx_reset(&rx);
		st = rdzv_boot_rx_feed(&rx, two + used, sizeof(two) - used, &used, err, sizeof(err));
		ok(st == 1 && used == sizeof(frame), "the second follows after a reset");
		rdzv_boot_rx_reset(&rx);
	}

	/* Garbage in chunks: refused at byte 20, not before, no allocation. */
	memset(junk, 'A', sizeof(junk));
	st = rdzv_boot_rx_feed(&rx, junk, 19, &used, err, sizeof(err));
	ok(st == 0 && used == 19, "19 garbage bytes just wait for the header");
	st = rdzv_boot_rx_feed(&rx, junk, sizeof(junk), &used, err, sizeof(err));
	ok(st == -1 && used == 1, "the 20th byte completes a bad header: refused");
	ok(rx.payload == NULL, "nothing allocated for a bad header");
	rdzv_boot_rx_reset(&rx);

	/* Empty payload. */
	hdr(frame, RDZV_BOOT_MAGIC, RDZV_BOOT_VERSION, RDZV_BOOT_WELCOME, 0, 0, 0);
	st = rdzv_boot_rx_feed(&rx, frame, RDZV_BOOT_HDR_LEN, &used, err, sizeof(err));
	ok(st == 1 && rx.hdr.len == 0 && rx.payload && rx.payload[0] == '\0',
	   "an empty frame is complete with its header");
	rdzv_boot_rx_reset(&rx);

	/* Over the reader's limit. */
	hdr(frame, RDZV_BOOT_MAGIC, RDZV_BOOT_VERSION, RDZV_BOOT_GATHER, 1, 1, 65);
	st = rdzv_boot_rx_feed(&rx, frame, RDZV_BOOT_HDR_LEN, &used, err, sizeof(err));
	ok(st == -1, "a frame over the reader's limit is refused");
	rdzv_boot_rx_reset(&rx);

	/* Chunked at every split point. */
	hdr(frame, RDZV_BOOT_MAGIC, RDZV_BOOT_VERSION, RDZV_BOOT_ABORT, 0, 0, 5);
	for (i = 1; i < sizeof(frame); i++) {
		st = rdzv_boot_rx_feed(&rx, frame, i, &used, err, sizeof(err));
		off = used;
		if (st == 0)
			st = rdzv_boot_rx_feed(&rx, frame + off, sizeof(frame) - off, &used, err,
			                       sizeof(err));
		if (st != 1 || strcmp((char *)rx.payload, "hello") != 0)
			break;
		rdzv_boot_rx_reset(&rx);
	}
	ok(i == sizeof(frame), "a frame split at any byte reassembles");
	rdzv_boot_rx_reset(&rx);
}

static void test_hello(void)
{
	struct rdzv_boot_hello h, g;
	unsigned char b[512];
	char err[256];
	long n;

	memset(&h, 0, sizeof(h));
	h.world = 6;
	h.link_port = 40000;
	strcpy(h.host, "n1");
	strcpy(h.session, "123.4");
	n = rdzv_boot_hello_pack(&h, b, sizeof(b), err, sizeof(err));
	is_int(n, 8 + 2 + 5, "hello packs to 15 bytes");
	ok(rdzv_boot_hello_unpack(b, (size_t)n, &g, err, sizeof(err)) == 0, "and unpacks");
	ok(g.world == 6 && g.link_port == 40000 && strcmp(g.host, "n1") == 0 &&
	   strcmp(g.session, "123.4") == 0, "every field round-trips");
	ok(rdzv_boot_hello_unpack(b, (size_t)n - 1, &g, err, sizeof(err)) < 0,
	   "a truncated hello is refused");
	ok(rdzv_boot_hello_unpack(b, 7, &g, err, sizeof(err)) < 0, "a hello under 8 bytes is refused");
	b[n] = 'x';
	ok(rdzv_boot_hello_unpack(b, (size_t)n + 1, &g, err, sizeof(err)) < 0,
	   "a hello with trailing bytes is refused");
	b[8] = '\n';
	ok(rdzv_boot_hello_unpack(b, (size_t)n, &g, err, sizeof(err)) < 0,
	   "a host with a control character is refused");
	b[8] = 'n';
	b[6] = 0;
	b[7] = 7;
	ok(rdzv_boot_hello_unpack(b, (size_t)n, &g, err, sizeof(err)) < 0,
	   "an empty host is refused");
	b[6] = 2;
	b[7] = 5;
	b[0] = b[1] = b[2] = b[3] = 0;
	ok(rdzv_boot_hello_unpack(b, (size_t)n, &g, err, sizeof(err)) < 0,
	   "world size 0 is refused");
	h.host[0] = '\0';
	ok(rdzv_boot_hello_pack(&h, b, sizeof(b), err, sizeof(err)) < 0, "packing an empty host fails");
	strcpy(h.host, "a b");
	ok(rdzv_boot_hello_pack(&h, b, sizeof(b), err, sizeof(err)) < 0,
	   "packing a host with a space fails");
	strcpy(h.host, "n1");
	ok(rdzv_boot_hello_pack(&h, b, 10, err, sizeof(err)) < 0, "packing into a short buffer fails");
}

static void test_all(void)
{
	const unsigned char *blob[3] = { (const unsigned char *)"a", (const unsigned char *)"",
	                                 (const unsigned char *)"ccc" };
	uint32_t len[3] = { 1, 0, 3 }, glen[3];
	const unsigned char *gp[3];
	unsigned char *out = NULL;
	size_t outlen = 0;
	char err[256];

	ok(rdzv_boot_all_pack(blob, len, 3, &out, &outlen, err, sizeof(err)) == 0,
	   "three blobs pack");
	is_int(outlen, 4 + 3 * 4 + 4, "packed size");
	ok(rdzv_boot_all_unpack(out, outlen, 3, gp, glen, err, sizeof(err)) == 0, "and unpack");
	ok(glen[0] == 1 && glen[1] == 0 && glen[2] == 3 && memcmp(gp[2], "ccc", 3) == 0,
	   "blobs round-trip");
	ok(rdzv_boot_all_unpack(out, outlen, 4, gp, glen, err, sizeof(err)) < 0,
	   "a count other than the world size is refused");
	ok(rdzv_boot_all_unpack(out, outlen - 1, 3, gp, glen, err, sizeof(err)) < 0,
	   "a truncated payload is refused");
	ok(rdzv_boot_all_unpack(out, 3, 3, gp, glen, err, sizeof(err)) < 0,
	   "a payload shorter than its count is refused");
	out[4 + 4 + 1 + 3] = 0xff; /* blob 1's length: 255 bytes, beyond the end */
	ok(rdzv_boot_all_unpack(out, outlen, 3, gp, glen, err, sizeof(err)) < 0,
	   "a blob length past the end is refused");
	ok(strstr(err, "overruns") != NULL, "the message says so: %s", err);
	free(out);
	ok(rdzv_boot_all_pack(blob, len, 0, &out, &outlen, err, sizeof(err)) == 0 && outlen == 4,
	   "zero blobs pack to a count");
	ok(rdzv_boot_all_unpack(out, outlen + 0, 0, gp, glen, err, sizeof(err)) == 0,
	   "and unpack");
	free(out);
	{
		uint32_t big[2] = { RDZV_BOOT_MAX_LEN, 1 };

		ok(rdzv_boot_all_pack(blob, big, 2, &out, &outlen, err, sizeof(err)) < 0,
		   "an all-gather over the frame limit is refused before copying");
	}
}

int main(void)
{
	test_bad_headers();
	test_rx();
	test_hello();
	test_all();
	return done_testing();
}
