/* SPDX-License-Identifier: GPL-2.0-or-later */
/* boot_frame.c: the preflight bootstrap's frames and payloads (pure: no I/O). */
#include "config.h"
#include "bootstrap.h"
#include "util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* ---------------------------------------------------------------- frames */

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static void put16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)(v >> 8);
	p[1] = (unsigned char)v;
}

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint16_t get16(const unsigned char *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

void rdzv_boot_hdr_pack(const struct rdzv_boot_hdr *h, unsigned char out[RDZV_BOOT_HDR_LEN])
{
	put32(out, h->magic);
	put16(out + 4, h->version);
	put16(out + 6, h->type);
	put32(out + 8, h->rank);
	put32(out + 12, h->seq);
	put32(out + 16, h->len);
}

int rdzv_boot_hdr_unpack(const unsigned char in[RDZV_BOOT_HDR_LEN], uint32_t maxlen,
                         struct rdzv_boot_hdr *h, char *err, size_t errlen)
{
	h->magic = get32(in);
	h->version = get16(in + 4);
	h->type = get16(in + 6);
	h->rank = get32(in + 8);
	h->seq = get32(in + 12);
	h->len = get32(in + 16);
	if (h->magic != RDZV_BOOT_MAGIC)
		return rdzv_err(err, errlen, "not a rdzv-preflight message (magic 0x%08x)", h->magic);
	if (h->version != RDZV_BOOT_VERSION)
		return rdzv_err(err, errlen, "protocol version %u, this build speaks %u",
		                h->version, RDZV_BOOT_VERSION);
	if (h->type < RDZV_BOOT_HELLO || h->type >= RDZV_BOOT_TYPE_END)
		return rdzv_err(err, errlen, "unknown message type %u", h->type);
	if (h->len > maxlen)
		return rdzv_err(err, errlen, "message of %u bytes exceeds the limit of %u",
		                h->len, maxlen);
	return 0;
}

void rdzv_boot_rx_init(struct rdzv_boot_rx *rx, uint32_t maxlen)
{
	memset(rx, 0, sizeof(*rx));
	rx->maxlen = maxlen;
}

void rdzv_boot_rx_reset(struct rdzv_boot_rx *rx)
{
	free(rx->payload);
	rx->payload = NULL;
	rx->hhave = 0;
	rx->phave = 0;
}

int rdzv_boot_rx_feed(struct rdzv_boot_rx *rx, const void *buf, size_t n, size_t *used,
                      char *err, size_t errlen)
{
	const unsigned char *p = buf;
	size_t u = 0, take;

	*used = 0;
	if (rx->hhave < RDZV_BOOT_HDR_LEN) {
		take = RDZV_BOOT_HDR_LEN - rx->hhave;
		if (take > n)
			take = n;
		memcpy(rx->hbuf + rx->hhave, p, take);
		rx->hhave += take;
		u = take;
		*used = u;
		if (rx->hhave < RDZV_BOOT_HDR_LEN)
			return 0;
		if (rdzv_boot_hdr_unpack(rx->hbuf, rx->maxlen, &rx->hdr, err, errlen) < 0)
			return -1;
		/* Allocate only after the header passed its checks: a stranger
		 * cannot make us reserve more than maxlen. */
		rx->payload = malloc((size_t)rx->hdr.len + 1);
		if (!rx->payload)
			return rdzv_err(err, errlen, "out of memory for a %u-byte message", rx->hdr.len);
		rx->phave = 0;
	}
	take = rx->hdr.len - rx->phave;
	if (take > n - u)
		take = n - u;
	if (take && rx->payload)
		memcpy(rx->payload + rx->phave, p + u, take);
	rx->phave += take;
	*used = u + take;
	if (rx->phave == rx->hdr.len) {
		if (rx->payload)
			rx->payload[rx->hdr.len] = '\0';
		return 1;
	}
	return 0;
}

/* ---------------------------------------------------------------- payloads */

static int printable(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7e)
			return 0;
	return 1;
}

long rdzv_boot_hello_pack(const struct rdzv_boot_hello *h, unsigned char *out, size_t outlen,
                          char *err, size_t errlen)
{
	size_t hl = strnlen(h->host, sizeof(h->host));
	size_t sl = strnlen(h->session, sizeof(h->session));

	if (hl == 0 || hl > 255 || !printable(h->host, hl))
		return rdzv_err(err, errlen, "host name '%.64s' is empty, too long or not printable",
		                h->host);
	if (sl > 127 || !printable(h->session, sl))
		return rdzv_err(err, errlen, "session '%.64s' is too long or not printable",
		                h->session);
	if (outlen < 8 + hl + sl)
		return rdzv_err(err, errlen, "hello buffer too small");
	put32(out, h->world);
	put16(out + 4, h->link_port);
	out[6] = (unsigned char)hl;
	out[7] = (unsigned char)sl;
	memcpy(out + 8, h->host, hl);
	memcpy(out + 8 + hl, h->session, sl);
	return (long)(8 + hl + sl);
}

int rdzv_boot_hello_unpack(const unsigned char *p, size_t n, struct rdzv_boot_hello *h,
                           char *err, size_t errlen)
{
	size_t hl, sl;

	memset(h, 0, sizeof(*h));
	if (n < 8)
		return rdzv_err(err, errlen, "hello of %zu bytes is truncated", n);
	h->world = get32(p);
	h->link_port = get16(p + 4);
	hl = p[6];
	sl = p[7];
	if (n != 8 + hl + sl)
		return rdzv_err(err, errlen, "hello of %zu bytes announces %zu", n, 8 + hl + sl);
	if (hl == 0 || hl >= sizeof(h->host) || sl >= sizeof(h->session))
		return rdzv_err(err, errlen, "hello with a host of %zu and a session of %zu bytes",
		                hl, sl);
	if (!printable((const char *)p + 8, hl) || !printable((const char *)p + 8 + hl, sl))
		return rdzv_err(err, errlen, "hello with unprintable host or session");
	if (h->world == 0 || h->world > RDZV_BOOT_MAX_WORLD)
		return rdzv_err(err, errlen, "hello with world size %u", h->world);
	memcpy(h->host, p + 8, hl);
	memcpy(h->session, p + 8 + hl, sl);
	return 0;
}

int rdzv_boot_all_pack(const unsigned char *const *blob, const uint32_t *len, uint32_t count,
                       unsigned char **out, size_t *outlen, char *err, size_t errlen)
{
	size_t total = 4, off;
	unsigned char *buf;
	uint32_t i;

	*out = NULL;
	for (i = 0; i < count; i++) {
		total += 4 + (size_t)len[i];
		if (total > RDZV_BOOT_MAX_LEN)
			return rdzv_err(err, errlen, "all-gather of %u blobs exceeds %u bytes at rank %u",
			                count, RDZV_BOOT_MAX_LEN, i);
	}
	buf = malloc(total);
	if (!buf)
		return rdzv_err(err, errlen, "out of memory for %zu bytes", total);
	put32(buf, count);
	off = 4;
	for (i = 0; i < count; i++) {
		put32(buf + off, len[i]);
		off += 4;
		if (len[i])
			memcpy(buf + off, blob[i], len[i]);
		off += len[i];
	}
	*out = buf;
	*outlen = total;
	return 0;
}

int rdzv_boot_all_unpack(const unsigned char *p, size_t n, uint32_t want,
                         const unsigned char **ptr, uint32_t *len, char *err, size_t errlen)
{
	size_t off = 4;
	uint32_t count, i;

	if (n < 4)
		return rdzv_err(err, errlen, "all-gather payload of %zu bytes is truncated", n);
	count = get32(p);
	if (count != want)
		return rdzv_err(err, errlen, "all-gather holds %u blobs, expected %u", count, want);
	for (i = 0; i < count; i++) {
		uint32_t l;

		if (n - off < 4)
			return rdzv_err(err, errlen, "all-gather truncated at blob %u", i);
		l = get32(p + off);
		off += 4;
		if (l > n - off)
			return rdzv_err(err, errlen, "all-gather blob %u of %u bytes overruns the payload",
			                i, l);
		ptr[i] = p + off;
		len[i] = l;
		off += l;
	}
	if (off != n)
		return rdzv_err(err, errlen, "all-gather has %zu trailing bytes", n - off);
	return 0;
}

