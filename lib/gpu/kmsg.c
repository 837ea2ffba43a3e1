/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/gpu/: the GPU vendors' libraries (NVML, ROCm SMI, opened at run time),
 * the NVLink fabric, the kernel's GPU fault lines (Xid). Uses lib/common/. */
/* kmsg.c: kernel-log records and the NVIDIA driver's Xid lines; see
 * kmsg.h. */
#include "config.h"
#include "kmsg.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The decimal number at [*p, end) up to max; *p past it. 0 or -1. */
static int number(const char **p, const char *end, uint64_t max, uint64_t *v)
{
	const char *s = *p;

	*v = 0;
	while (*p < end && **p >= '0' && **p <= '9') {
		uint64_t d = (uint64_t)(**p - '0');

		if (*v > (max - d) / 10)
			return -1;
		*v = *v * 10 + d;
		(*p)++;
	}
	return *p > s && *p - s <= 20 ? 0 : -1;
}

int rdzv_kmsg_record(const char *line, size_t len, struct rdzv_kmsg_rec *r)
{
	const char *p = line, *end = line + len, *semi;
	uint64_t prio;

	if (!len || line[0] == ' ' || !(semi = memchr(line, ';', len)))
		return -1;
	if (number(&p, semi, 0x7ffffu, &prio) < 0 || p == semi || *p++ != ','
	    || number(&p, semi, UINT64_MAX, &r->seq) < 0 || p == semi || *p++ != ','
	    || number(&p, semi, UINT64_MAX, &r->ts_usec) < 0)
		return -1;
	/* FLAGS and any later fields: up to the ';'. */
	if (p != semi && *p != ',')
		return -1;
	r->prio = (unsigned)prio;
	r->msg = semi + 1;
	r->len = (size_t)(end - r->msg);
	return 0;
}

static const char *find(const char *s, size_t len, const char *what)
{
	size_t n = strlen(what);

	for (; len >= n; s++, len--)
		if (memcmp(s, what, n) == 0)
			return s;
	return NULL;
}

static int is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* "DDDD:BB:DD" (the function, ".F", allowed and dropped) at [p, end) up to
 * the ')'. */
static int pci_address(const char *p, const char *end, char out[RDZV_PCI_MAX])
{
	static const char shape[] = "hhhh:hh:hh";
	size_t i;

	if (end - p < 10)
		return -1;
	for (i = 0; i < 10; i++) {
		if (shape[i] == ':' ? p[i] != ':' : !is_hex(p[i]))
			return -1;
		out[i] = (char)(p[i] >= 'A' && p[i] <= 'F' ? p[i] - 'A' + 'a' : p[i]);
	}
	out[10] = '\0';
	p += 10;
	if (p < end && *p == '.' && end - p >= 2 && is_hex(p[1]))
		p += 2;
	return p == end ? 0 : -1;
}

/* "KEY=VALUE, " at *p: VALUE (quotes dropped) into out[outlen]. */
static int field(const char **p, const char *end, const char *key, char *out, size_t outlen)
{
	size_t k = strlen(key), n;
	const char *v, *c;

	if ((size_t)(end - *p) <= k || memcmp(*p, key, k) != 0 || (*p)[k] != '=')
		return -1;
	v = *p + k + 1;
	c = memchr(v, ',', (size_t)(end - v));
	n = (size_t)((c ? c : end) - v);
	if (n >= 2 && v[0] == '\'' && v[n - 1] == '\'') {
		v++;
		n -= 2;
	}
	if (n >= outlen)
		n = outlen - 1;
	memcpy(out, v, n);
	out[n] = '\0';
	*p = c ? c + 1 : end;
	while (*p < end && **p == ' ')
		(*p)++;
	return 0;
}

int rdzv_xid_report_parse(const char *msg, size_t len, struct rdzv_xid_report *x)
{
	const char *end = msg + len, *p, *close;
	char pid[24];
	uint64_t v;
	size_t n;

	memset(x, 0, sizeof(*x));
	x->pid = -1;
	if (!(p = find(msg, len, "NVRM: Xid (")))
		return -1;
	p += 11;
	if ((size_t)(end - p) >= 4 && memcmp(p, "PCI:", 4) == 0)
		p += 4;
	if (!(close = memchr(p, ')', (size_t)(end - p))) || pci_address(p, close, x->pci) < 0)
		return -1;
	p = close + 1;
	if (end - p < 2 || p[0] != ':' || p[1] != ' ')
		return -1;
	p += 2;
	if (number(&p, end, UINT32_MAX, &v) < 0 || v == 0)
		return -1;
	x->xid = (uint32_t)v;
	if (p < end && *p != ',')
		return -1;
	if (p < end)
		p++;
	while (p < end && *p == ' ')
		p++;
	if (field(&p, end, "pid", pid, sizeof(pid)) == 0) {
		const char *q = pid;

		if (number(&q, pid + strlen(pid), 0x7fffffff, &v) == 0 && !*q)
			x->pid = (long)v;
	}
	(void)field(&p, end, "name", x->name, sizeof(x->name));
	if (strcmp(x->name, "<unknown>") == 0)
		x->name[0] = '\0';
	n = (size_t)(end - p);
	while (n && (p[n - 1] == ' ' || p[n - 1] == '\r'))
		n--;
	if (n >= sizeof(x->text))
		n = sizeof(x->text) - 1;
	memcpy(x->text, p, n);
	x->text[n] = '\0';
	/* Only printable text goes on: the reason reaches scontrol and srun. */
	for (n = 0; x->text[n]; n++)
		if ((unsigned char)x->text[n] < 0x20 || (unsigned char)x->text[n] == 0x7f)
			x->text[n] = ' ';
	for (n = 0; x->name[n]; n++)
		if ((unsigned char)x->name[n] < 0x20 || (unsigned char)x->name[n] == 0x7f)
			x->name[n] = '?';
	return 0;
}

static int one_line(const char *line, size_t len, struct rdzv_kmsg_scan *s, rdzv_xid_fn fn,
                    void *ctx, int *handed)
{
	struct rdzv_kmsg_rec r;
	struct rdzv_xid_report x;

	if (rdzv_kmsg_record(line, len, &r) < 0)
		return 0;
	s->records++;
	if (r.seq > s->last_seq)
		s->last_seq = r.seq;
	if (r.seq <= s->after_seq || r.ts_usec < s->since_usec)
		return 0;
	if (rdzv_xid_report_parse(r.msg, r.len, &x) < 0)
		return 0;
	x.seq = r.seq;
	x.ts_usec = r.ts_usec;
	(*handed)++;
	return fn ? fn(ctx, &x) : 0;
}

static void scan_init(struct rdzv_kmsg_scan *s)
{
	if (!s->max_bytes)
		s->max_bytes = RDZV_KMSG_MAX_BYTES;
	if (!s->max_ms)
		s->max_ms = RDZV_KMSG_MAX_MS;
	s->last_seq = s->after_seq;
	s->bytes = s->records = 0;
	s->cut = 0;
}

/* Each complete line of buf[0..*len): handed on, then dropped. A line
 * longer than the buffer is dropped whole (no record is that long). */
static int lines(char *buf, size_t *len, int at_end, struct rdzv_kmsg_scan *s, rdzv_xid_fn fn,
                 void *ctx, int *handed)
{
	char *p = buf, *end = buf + *len, *nl;

	while ((nl = memchr(p, '\n', (size_t)(end - p))) || (at_end && p < end)) {
		char *le = nl ? nl : end;

		if (one_line(p, (size_t)(le - p), s, fn, ctx, handed) < 0)
			return -1;
		p = nl ? nl + 1 : end;
	}
	*len = (size_t)(end - p);
	memmove(buf, p, *len);
	return 0;
}

int rdzv_kmsg_scan_text(const char *text, size_t len, struct rdzv_kmsg_scan *s, rdzv_xid_fn fn,
                        void *ctx)
{
	const char *p = text, *end, *nl;
	int handed = 0;

	scan_init(s);
	if (len > s->max_bytes) {
		len = s->max_bytes;
		s->cut = 1;
	}
	end = text + len;
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (one_line(p, (size_t)((nl ? nl : end) - p), s, fn, ctx, &handed) < 0)
			break;
		p = nl ? nl + 1 : end;
	}
	s->bytes = (size_t)(p - text);
	return handed;
}

#define CHUNK (64 * 1024)

int rdzv_kmsg_scan(const char *path, struct rdzv_kmsg_scan *s, rdzv_xid_fn fn, void *ctx,
                   char *err, size_t errlen)
{
	char *buf = NULL;
	size_t have = 0;
	long start = rdzv_now_ms();
	int fd, handed = 0, rv = -1;

	scan_init(s);
	/* O_NONBLOCK: /dev/kmsg and a FIFO end at what is there now (EAGAIN)
	 * instead of waiting for the next record. */
	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)) < 0)
		return rdzv_err(err, errlen, "%s: %s", path, strerror(errno));
	if (!(buf = malloc(2 * CHUNK))) {
		rdzv_err(err, errlen, "%s: out of memory", path);
		goto out;
	}
	for (;;) {
		ssize_t n;

		if (s->bytes >= s->max_bytes) {
			s->cut = 1;
			break;
		}
		if (rdzv_now_ms() - start > s->max_ms) {
			s->cut = 2;
			break;
		}
		if (have >= CHUNK)
			have = 0; /* a line longer than a record can be: dropped */
		n = read(fd, buf + have, CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		/* EPIPE: /dev/kmsg overwrote records before they were read; the
		 * next read goes on from the oldest one left. */
		if (n < 0 && errno == EPIPE)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n < 0) {
			rdzv_err(err, errlen, "%s: %s", path, strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		s->bytes += (size_t)n;
		have += (size_t)n;
		if (lines(buf, &have, 0, s, fn, ctx, &handed) < 0) {
			have = 0;
			break;
		}
	}
	if (have)
		(void)lines(buf, &have, 1, s, fn, ctx, &handed);
	rv = handed;
out:
	free(buf);
	close(fd);
	return rv;
}
