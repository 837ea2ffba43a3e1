/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/step/: the step's plan: host lists, task layouts, node order,
 * MASTER_ADDR and the port, rank 0, heterogeneous steps, srun's command line
 * and what it hands the nodes, the interface to rank 0, the step's datagram
 * channel. Uses lib/common/. */
/* hostlist.c: see hostlist.h. A streaming reader: no expansion; memory is
 * constant (but for the cursors of an item of more than 8 bracket groups
 * under rdzv_hostlist_each) and time linear in the expression. */
#include "config.h"
#include "hostlist.h"
#include "util.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An upper bound far above any cluster; keeps products from overflowing. */
#define HOSTS_MAX ((uint64_t)1 << 40)

/* How much of a bad piece a message quotes: enough to find it. */
static int show(size_t n)
{
	return n > 32 ? 32 : (int)n;
}

static int is_sep(char c)
{
	return c == ',' || isspace((unsigned char)c);
}

/* Find the next item at or after *pos: [*b, *e). Returns 1 when found,
 * 0 at the end, -1 on unbalanced brackets. */
static int next_item(const char *s, size_t *pos, size_t *b, size_t *e,
                     char *err, size_t errlen)
{
	size_t i = *pos;

	while (s[i] && is_sep(s[i]))
		i++;
	if (!s[i])
		return 0;
	*b = i;
	for (; s[i]; i++) {
		if (s[i] == ']')
			return rdzv_err(err, errlen, "']' without '[' at offset %zu", i);
		if (is_sep(s[i]))
			break;
		if (s[i] != '[')
			continue;
		/* a group: to its ']' in one tight loop (most of a step's list) */
		for (i++; s[i] && s[i] != ']' && s[i] != '['; i++)
			;
		if (!s[i])
			return rdzv_err(err, errlen, "'[' not closed");
		if (s[i] == '[')
			return rdzv_err(err, errlen, "nested '[' at offset %zu", i);
	}
	*e = i;
	*pos = i;
	return 1;
}

/* A number at s[*i, e) up to a '-', a ',' or e: 1 to 20 digits, at most
 * max (< 10^19). */
static int scan_num(const char *s, size_t *i, size_t e, uint64_t max, uint64_t *v)
{
	const char *p = s + *i, *q = p, *end = s + e;
	uint64_t x = 0;

	while (q < end && (unsigned char)(*q - '0') <= 9)
		x = x * 10 + (uint64_t)(*q++ - '0'); /* wraps only past 20 digits */
	if (q == p || q - p > 20 || (q - p == 20 && *p != '0') || x > max
	    || (q < end && *q != '-' && *q != ','))
		return -1;
	*i = (size_t)(q - s);
	*v = x;
	return 0;
}

/* One range "lo" or "lo-hi" from b on, ending at a ',' or at e: *end. One
 * scan of its characters. */
static int range_at(const char *s, size_t b, size_t e, size_t *end, uint64_t *lo,
                    uint64_t *hi, int *width, char *err, size_t errlen)
{
	size_t i = b, lo_end;

	if (scan_num(s, &i, e, HOSTS_MAX * 1000, lo) < 0)
		goto bad;
	lo_end = i;
	*hi = *lo;
	if (i < e && s[i] == '-' && (i++, scan_num(s, &i, e, HOSTS_MAX * 1000, hi) < 0))
		goto bad;
	if (i < e && s[i] != ',')
		goto bad;
	if (*hi < *lo) {
		rdzv_err(err, errlen, "range '%.*s' runs backwards", show(i - b), s + b);
		return -1;
	}
	*width = (int)(lo_end - b);
	*end = i;
	return 0;
bad:
	for (i = b; i < e && s[i] != ','; i++)
		;
	return rdzv_err(err, errlen, "bad range '%.*s'", show(i - b), s + b);
}

/* One range "lo" or "lo-hi" that is all of [b, e). */
static int parse_range(const char *s, size_t b, size_t e, uint64_t *lo,
                       uint64_t *hi, int *width, char *err, size_t errlen)
{
	size_t end;

	if (range_at(s, b, e, &end, lo, hi, width, err, errlen) < 0)
		return -1;
	return end == e ? 0 : rdzv_err(err, errlen, "bad range '%.*s'", show(e - b), s + b);
}

/* Size of the bracket group whose contents are [b, e). When want is not
 * NULL, also find element *want of the group: its value and width. */
static int group_walk(const char *s, size_t b, size_t e, uint64_t *size,
                      const uint64_t *want, uint64_t *val, int *width,
                      char *err, size_t errlen)
{
	uint64_t total = 0;
	size_t i = b;

	if (b == e)
		return rdzv_err(err, errlen, "empty brackets");
	while (i <= e) {
		size_t j;
		uint64_t lo = 0, hi = 0;
		int w = 0;

		if (range_at(s, i, e, &j, &lo, &hi, &w, err, errlen) < 0)
			return -1;
		if (want && *want >= total && *want - total <= hi - lo) {
			*val = lo + (*want - total);
			*width = w;
		}
		total += hi - lo + 1;
		if (total > HOSTS_MAX)
			return rdzv_err(err, errlen, "host list names too many hosts");
		i = j + 1;
	}
	*size = total;
	return 0;
}

/* How many bracket groups an item's sizes are kept for (item_nth needs
 * them; an item of more groups has them counted again). */
#define SIZES_KEPT 8

/* An item's host count, and the sizes of its first SIZES_KEPT groups. */
struct item_info {
	uint64_t count;
	uint64_t sizes[SIZES_KEPT];
	size_t groups;
};

/* Number of hosts in the item [b, e), and its groups' sizes. */
static int item_count(const char *s, size_t b, size_t e, struct item_info *in, char *err,
                      size_t errlen)
{
	uint64_t n = 1;
	size_t i;

	in->groups = 0;
	for (i = b; i < e; i++) {
		size_t close;
		uint64_t g = 1;

		if (s[i] != '[')
			continue;
		close = (size_t)((const char *)memchr(s + i, ']', e - i) - s);
		if (group_walk(s, i + 1, close, &g, NULL, NULL, NULL, err, errlen) < 0)
			return -1;
		if (n > HOSTS_MAX / g)
			return rdzv_err(err, errlen, "host list names too many hosts");
		n *= g;
		if (in->groups < SIZES_KEPT)
			in->sizes[in->groups] = g;
		in->groups++;
		i = close;
	}
	in->count = n;
	return 0;
}

static int append(char *out, size_t outlen, size_t *used, const char *p,
                  size_t n, char *err, size_t errlen)
{
	if (*used + n >= outlen)
		return rdzv_err(err, errlen, "host name longer than %zu bytes", outlen - 1);
	memcpy(out + *used, p, n);
	*used += n;
	out[*used] = '\0';
	return 0;
}

/* Size of the item's last bracket group (1 when it has none). */
static int last_group_size(const char *s, size_t b, size_t e, const struct item_info *in,
                           uint64_t *size, char *err, size_t errlen)
{
	size_t i, open = e;

	*size = 1;
	if (in->groups == 0)
		return 0;
	if (in->groups <= SIZES_KEPT) {
		*size = in->sizes[in->groups - 1];
		return 0;
	}
	for (i = b; i < e; i++)
		if (s[i] == '[')
			open = i;
	return group_walk(s, open + 1,
	                  (size_t)((const char *)memchr(s + open, ']', e - open) - s),
	                  size, NULL, NULL, NULL, err, errlen);
}

/* Write host k of the item [b, e); k < item_count. Groups are mixed-radix
 * digits in Slurm 22.05's order: the last group varies fastest, then the
 * first, the second, ... up to the one before the last (hostlist.c's
 * _push_range_list peels the last group off, then recurses into the prefix
 * from its right end, so "a[1-2]b[1-2]c[1-2]" gives a1b1c1 a1b1c2 a2b1c1
 * a2b1c2 a1b2c1 ...). With two groups this is plain "last fastest". */
static int item_nth(const char *s, size_t b, size_t e, const struct item_info *in,
                    uint64_t k, char *out, size_t outlen, char *err, size_t errlen)
{
	uint64_t last, below;
	size_t used = 0, i, lit = b, gi = 0;

	if (last_group_size(s, b, e, in, &last, err, errlen) < 0)
		return -1;
	/* below = product of the sizes of the groups varying faster than the
	 * current one: the last group, then every group already passed. */
	below = last;
	out[0] = '\0';
	for (i = b; i < e; i++) {
		size_t close;
		uint64_t g = 1, idx, val = 0;
		int width = 0;
		char num[32];
		int len;

		if (s[i] != '[')
			continue;
		if (append(out, outlen, &used, s + lit, i - lit, err, errlen) < 0)
			return -1;
		close = (size_t)((const char *)memchr(s + i, ']', e - i) - s);
		if (gi < SIZES_KEPT && in->groups <= SIZES_KEPT)
			g = in->sizes[gi];
		else if (group_walk(s, i + 1, close, &g, NULL, NULL, NULL, err, errlen) < 0)
			return -1;
		gi++;
		if (gi < in->groups) {
			idx = (k / below) % g;
			below *= g;
		} else {
			idx = k % g;
		}
		if (group_walk(s, i + 1, close, &g, &idx, &val, &width, err, errlen) < 0)
			return -1;
		len = snprintf(num, sizeof(num), "%0*" PRIu64, width, val);
		if (append(out, outlen, &used, num, (size_t)len, err, errlen) < 0)
			return -1;
		i = close;
		lit = close + 1;
	}
	return append(out, outlen, &used, s + lit, e - lit, err, errlen);
}

long rdzv_hostlist_count(const char *list, char *err, size_t errlen)
{
	size_t pos = 0, b, e;
	uint64_t total = 0;
	int rc;

	if (!list)
		return rdzv_err(err, errlen, "no host list");
	while ((rc = next_item(list, &pos, &b, &e, err, errlen)) > 0) {
		struct item_info in;

		if (item_count(list, b, e, &in, err, errlen) < 0)
			return -1;
		total += in.count;
		if (total > HOSTS_MAX)
			return rdzv_err(err, errlen, "host list names too many hosts");
	}
	if (rc < 0)
		return -1;
	return (long)total;
}

int rdzv_hostlist_nth(const char *list, size_t n, char *host, size_t hostlen,
                      char *err, size_t errlen)
{
	size_t pos = 0, b, e;
	uint64_t k = n, total = 0;
	int rc, found = 0;

	if (!list || !host || hostlen == 0)
		return rdzv_err(err, errlen, "no host list");
	/* One pass: the host found, the rest of the list still checked as
	 * rdzv_hostlist_count does: a list malformed after its first items
	 * must not still yield a host (found by tests/fuzz/fuzz-hostlist.c). */
	while ((rc = next_item(list, &pos, &b, &e, err, errlen)) > 0) {
		struct item_info in;

		if (item_count(list, b, e, &in, err, errlen) < 0)
			return -1;
		total += in.count;
		if (total > HOSTS_MAX)
			return rdzv_err(err, errlen, "host list names too many hosts");
		if (found)
			continue;
		if (k < in.count)
			found = item_nth(list, b, e, &in, k, host, hostlen, err, errlen) < 0 ? -1 : 1;
		else
			k -= in.count;
	}
	if (rc < 0 || found < 0)
		return -1;
	if (!found)
		return rdzv_err(err, errlen, "host %zu is past the end of '%.64s'", n, list);
	return 0;
}

/* One bracket group of an item while the walk goes through it: where it is
 * in the text, which of its ranges and which value it is at. */
struct cursor {
	size_t open, close; /* its '[' and ']' */
	size_t next;        /* the end of the current range: a ',' or close */
	uint64_t hi, val;
	int width;
};

/* Put the cursor on the range starting at at. */
static int cursor_range(const char *s, struct cursor *c, size_t at, char *err, size_t errlen)
{
	uint64_t lo;

	if (range_at(s, at, c->close, &c->next, &lo, &c->hi, &c->width, err, errlen) < 0)
		return -1;
	c->val = lo;
	return 0;
}

/* The group's next value: 1, or 0 when it wrapped round to its first. */
static int cursor_step(const char *s, struct cursor *c, char *err, size_t errlen)
{
	if (c->val < c->hi) {
		c->val++;
		return 1;
	}
	if (c->next < c->close)
		return cursor_range(s, c, c->next + 1, err, errlen) < 0 ? -1 : 1;
	return cursor_range(s, c, c->open + 1, err, errlen) < 0 ? -1 : 0;
}

/* v written in decimal, at least width digits, into out (32 bytes). */
static size_t put_num(char *out, uint64_t v, int width)
{
	char tmp[24];
	size_t n = 0, k = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (; width > (int)n; width--) /* width <= 20: parse_range */
		out[k++] = '0';
	while (n)
		out[k++] = tmp[--n];
	return k;
}

/* The host the cursors stand on, written into out. */
static int item_host(const char *s, size_t b, size_t e, const struct cursor *g, size_t ng,
                     char *out, size_t outlen, char *err, size_t errlen)
{
	size_t used = 0, lit = b, k;
	char num[32];

	out[0] = '\0';
	for (k = 0; k < ng; k++) {
		if (append(out, outlen, &used, s + lit, g[k].open - lit, err, errlen) < 0
		    || append(out, outlen, &used, num, put_num(num, g[k].val, g[k].width), err,
		              errlen) < 0)
			return -1;
		lit = g[k].close + 1;
	}
	return append(out, outlen, &used, s + lit, e - lit, err, errlen);
}

/* Every host of the item [b, e), in item_nth's order, one pass: the groups
 * are an odometer (the last group turns fastest, then the first, the
 * second, ...), each range expanded as it is reached. */
static int item_each(const char *s, size_t b, size_t e, int (*fn)(const char *, void *),
                     void *ctx, char *err, size_t errlen)
{
	struct cursor small[8], *g = small;
	char host[RDZV_HOST_MAX];
	size_t ng = 0, i, k;
	int rv = -1, r;

	for (i = b; i < e; i++)
		ng += s[i] == '[';
	if (ng > 8 && !(g = calloc(ng, sizeof(*g))))
		return rdzv_err(err, errlen, "out of memory for a host list item of %zu groups", ng);
	for (i = b, k = 0; i < e; i++) {
		if (s[i] != '[')
			continue;
		g[k].open = i;
		g[k].close = (size_t)((const char *)memchr(s + i, ']', e - i) - s);
		if (cursor_range(s, &g[k], i + 1, err, errlen) < 0)
			goto out;
		i = g[k++].close;
	}
	for (;;) {
		if (item_host(s, b, e, g, ng, host, sizeof(host), err, errlen) < 0)
			goto out;
		if ((r = fn(host, ctx)) != 0) {
			rv = r;
			goto out;
		}
		if (ng == 0)
			break;
		if ((r = cursor_step(s, &g[ng - 1], err, errlen)) < 0)
			goto out;
		for (k = 0; r == 0 && k + 1 < ng; k++)
			if ((r = cursor_step(s, &g[k], err, errlen)) < 0)
				goto out;
		if (r == 0)
			break; /* every group wrapped: the item is done */
	}
	rv = 0;
out:
	if (g != small)
		free(g);
	return rv;
}

int rdzv_hostlist_each(const char *list, int (*fn)(const char *host, void *ctx), void *ctx,
                       char *err, size_t errlen)
{
	size_t pos = 0, b, e;
	int rc;

	if (!list)
		return rdzv_err(err, errlen, "no host list");
	if (rdzv_hostlist_count(list, err, errlen) < 0)
		return -1;
	while ((rc = next_item(list, &pos, &b, &e, err, errlen)) > 0) {
		int r = item_each(list, b, e, fn, ctx, err, errlen);

		if (r != 0)
			return r;
	}
	return rc < 0 ? -1 : 0;
}

/* Work allowed to one membership test: adjacent groups ("n[1-9][1-99]") can
 * each take one or more of the host's digits, so matching may branch; far
 * above any real list, and a bound on a hostile one. */
#define MATCH_STEPS_MAX 100000u

/* Whether host h matches the item [i, e) from position i on: literals one
 * for one, a bracket group by one of its values written at the range's
 * width. *steps counts the calls; -1 when they run out. */
static int item_match(const char *s, size_t i, size_t e, const char *h, unsigned *steps)
{
	size_t close, b, nd, d;

	if (++*steps > MATCH_STEPS_MAX)
		return -1;
	for (; i < e && s[i] != '['; i++, h++)
		if (*h != s[i])
			return 0;
	if (i == e)
		return *h == '\0';
	close = (size_t)((const char *)memchr(s + i, ']', e - i) - s);
	for (nd = 0; nd < 20 && isdigit((unsigned char)h[nd]); nd++)
		;
	for (d = 1; d <= nd; d++) {
		uint64_t v = 0;
		size_t k;

		for (k = 0; k < d; k++)
			v = v * 10 + (uint64_t)(h[k] - '0');
		for (b = i + 1; b <= close;) {
			size_t j = b;
			uint64_t lo = 0, hi = 0;
			int w = 0, rc;
			char num[32];

			while (j < close && s[j] != ',')
				j++;
			if (parse_range(s, b, j, &lo, &hi, &w, NULL, 0) < 0)
				return 0;
			if (v >= lo && v <= hi
			    && snprintf(num, sizeof(num), "%0*" PRIu64, w, v) == (int)d
			    && memcmp(num, h, d) == 0) {
				rc = item_match(s, close + 1, e, h + d, steps);
				if (rc != 0)
					return rc;
			}
			b = j + 1;
		}
	}
	return 0;
}

int rdzv_hostlist_has(const char *list, const char *host, char *err, size_t errlen)
{
	size_t pos = 0, b, e;
	unsigned steps;
	int rc;

	if (!list || !host)
		return rdzv_err(err, errlen, "no host list");
	if (rdzv_hostlist_count(list, err, errlen) < 0)
		return -1;
	while ((rc = next_item(list, &pos, &b, &e, err, errlen)) > 0) {
		int m;

		steps = 0; /* a bound per item: linear in the number of items */
		m = item_match(list, b, e, host, &steps);

		if (m < 0)
			return rdzv_err(err, errlen, "host list '%.64s' too ambiguous to search", list);
		if (m > 0)
			return 1;
	}
	return rc < 0 ? -1 : 0;
}
