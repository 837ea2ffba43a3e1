/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/failure/: how failures travel and are judged: a failed rank's report,
 * liveness, the collective grace, hang dumps, a GPU fault's verdict. Uses
 * lib/modes/, lib/step/, lib/gpu/, lib/common/. */
/* hang.c: faulthandler dumps to "where is each rank", and the verdict
 * (hang.h). */
#include "config.h"
#include "hang.h"
#include "channel.h"
#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* torch.distributed calls a rank waits in. The outermost such frame of the
 * main thread names the call (PyTorch 2.x wraps collectives in decorator
 * frames, c10d_logger's "wrapper", which are passed over). */
static const char *const collectives[] = {
	"all_reduce", "all_reduce_coalesced", "all_gather", "all_gather_into_tensor",
	"all_gather_object", "all_gather_coalesced", "_all_gather_base", "all_gather_single",
	"reduce_scatter", "reduce_scatter_single",
	"reduce_scatter_tensor", "_reduce_scatter_base", "broadcast", "broadcast_object_list",
	"reduce", "barrier", "monitored_barrier", "all_to_all", "all_to_all_single", "gather",
	"gather_object", "scatter", "scatter_object_list", "send", "recv", "send_object_list",
	"recv_object_list", "batch_isend_irecv", "init_process_group", "new_group",
	"_store_based_barrier", "destroy_process_group", NULL
};

static int is_collective(const char *f)
{
	int i;

	for (i = 0; collectives[i]; i++)
		if (strcmp(f, collectives[i]) == 0)
			return 1;
	return 0;
}

/* A frame of the Python library, PyTorch or an installed package, not of
 * the user's program. */
static int is_library(const char *file)
{
	static const char *const parts[] = { "/torch/", "/site-packages/", "/dist-packages/",
		                             "/lib/python3", "<frozen ", "/spank-rdzv/python/",
		                             "/sitecustomize.py", NULL };
	int i;

	for (i = 0; parts[i]; i++)
		if (strstr(file, parts[i]))
			return 1;
	return 0;
}

static int in_torch_distributed(const char *file)
{
	return strstr(file, "/torch/distributed/") != NULL;
}

/* One line without its end, at most cap bytes copied, NUL-terminated. */
static size_t line_at(const char *s, size_t len, size_t at, char *buf, size_t cap)
{
	size_t e = at, n;

	while (e < len && s[e] != '\n')
		e++;
	n = e - at;
	if (n >= cap)
		n = cap - 1;
	memcpy(buf, s + at, n);
	buf[n] = '\0';
	return e < len ? e + 1 : e;
}

static int starts(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

/* `  File "PATH", line N in FUNC`: 0, or -1 when the line is not a frame. */
static int frame_parse(const char *l, char *file, size_t filelen, uint32_t *lineno, char *func,
                       size_t funclen)
{
	const char *p = l, *q;
	unsigned long v = 0;
	size_t n;

	while (*p == ' ')
		p++;
	if (!starts(p, "File \""))
		return -1;
	p += 6;
	/* The path may hold '"': the last `", line ` ends it. */
	if (!(q = strstr(p, "\", line ")))
		return -1;
	while (strstr(q + 1, "\", line "))
		q = strstr(q + 1, "\", line ");
	n = (size_t)(q - p);
	if (n >= filelen)
		n = filelen - 1;
	memcpy(file, p, n);
	file[n] = '\0';
	p = q + 8;
	if (*p == '?') { /* faulthandler prints "???" for an unknown line */
		while (*p == '?')
			p++;
	} else {
		if (*p < '0' || *p > '9')
			return -1;
		while (*p >= '0' && *p <= '9' && v < 100000000UL)
			v = v * 10 + (unsigned long)(*p++ - '0');
		while (*p >= '0' && *p <= '9')
			p++;
	}
	*lineno = (uint32_t)v;
	if (!starts(p, " in "))
		return -1;
	p += 4;
	snprintf(func, funclen, "%s", p);
	return 0;
}

int rdzv_hang_parse(const char *dump, size_t len, struct rdzv_hang_where *w)
{
	char l[1024], file[sizeof(w->file)], func[sizeof(w->func)];
	size_t at = 0, block = (size_t)-1;
	uint32_t lineno;
	int found_user = 0, first = 1;

	memset(w, 0, sizeof(*w));
	if (!dump)
		return -1;
	/* The last thread block: the main thread. */
	while (at < len) {
		size_t next = line_at(dump, len, at, l, sizeof(l));

		if ((starts(l, "Thread 0x") || starts(l, "Current thread 0x"))
		    && strstr(l, "(most recent call first):"))
			block = next;
		at = next;
	}
	if (block == (size_t)-1)
		return -1;
	for (at = block; at < len;) {
		at = line_at(dump, len, at, l, sizeof(l));
		if (l[0] == '\0' || frame_parse(l, file, sizeof(file), &lineno, func, sizeof(func)) < 0) {
			if (l[0] == ' ' && strstr(l, "..."))
				continue; /* "  ..." : frames left out of a deep stack */
			break;
		}
		w->frames++;
		/* Innermost first: the first user frame is the innermost. */
		if (first || (!found_user && !is_library(file))) {
			snprintf(w->file, sizeof(w->file), "%s", file);
			snprintf(w->func, sizeof(w->func), "%s", func);
			w->line = lineno;
			found_user = !is_library(file);
			first = 0;
		}
		/* Outermost collective frame wins: later frames overwrite. */
		if (in_torch_distributed(file) && is_collective(func))
			snprintf(w->coll, sizeof(w->coll), "%.39s", func);
	}
	return w->frames > 0 ? 0 : -1;
}

void rdzv_hang_where_text(const struct rdzv_hang_where *w, char *out, size_t len)
{
	const char *base = strrchr(w->file, '/');

	base = base ? base + 1 : w->file;
	if (!w->frames)
		snprintf(out, len, "no Python frame");
	else if (w->coll[0])
		snprintf(out, len, "%s at %s:%u in %s", w->coll, base, w->line, w->func);
	else
		snprintf(out, len, "%s:%u in %s", base, w->line, w->func);
}

static int same_place(const struct rdzv_hang_where *a, const struct rdzv_hang_where *b)
{
	return strcmp(a->coll, b->coll) == 0 && strcmp(a->file, b->file) == 0 && a->line == b->line
	       && strcmp(a->func, b->func) == 0;
}

/* Appends to out at *used; returns -1 when it does not fit. */
static int put(char *out, size_t len, size_t *used, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int put(char *out, size_t len, size_t *used, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*used >= len)
		return -1;
	va_start(ap, fmt);
	n = vsnprintf(out + *used, len - *used, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len - *used)
		return -1;
	*used += (size_t)n;
	return 0;
}

int rdzv_hang_verdict(const struct rdzv_hang_rank *r, size_t n, char *out, size_t len)
{
	size_t i, j, best = (size_t)-1, used = 0, have = 0, missing = 0;
	size_t best_count = 0, tie = 0, named = 0;
	char where[512];

	if (!out || len == 0)
		return -1;
	out[0] = '\0';
	for (i = 0; i < n; i++) {
		size_t c = 0;

		if (!r[i].have) {
			missing++;
			continue;
		}
		have++;
		for (j = 0; j < n; j++)
			c += r[j].have && same_place(&r[i].w, &r[j].w);
		if (c > best_count) {
			best_count = c;
			best = i;
			tie = 0;
		} else if (c == best_count && best != (size_t)-1 && !same_place(&r[i].w, &r[best].w)) {
			tie = 1;
		}
	}
	if (!have)
		return put(out, len, &used, "rdzv-hang: no rank of the step answered (is the step "
		           "running with --rdzv-debug=hang, and are its ranks Python?)") < 0 ? -1 : 0;
	/* The place that holds the most ranks; two places holding as many is
	 * no verdict. */
	if (tie) {
		if (put(out, len, &used, "rdzv-hang: no place holds most ranks:") < 0)
			return -1;
		for (i = 0; i < n; i++) {
			if (!r[i].have)
				continue;
			rdzv_hang_where_text(&r[i].w, where, sizeof(where));
			if (put(out, len, &used, "%s rank %u (%s) %s", i ? ";" : "", r[i].rank, r[i].node,
			        where) < 0)
				return -1;
		}
		return (int)have; /* no verdict: every rank is named with its place */
	}
	rdzv_hang_where_text(&r[best].w, where, sizeof(where));
	if (best_count == have) {
		if (put(out, len, &used, "rdzv-hang: all %zu ranks that answered are at %s", have, where) < 0)
			return -1;
	} else {
		for (i = 0; i < n; i++)
			named += r[i].have && !same_place(&r[i].w, &r[best].w);
		if (put(out, len, &used, "rdzv-hang: %s ", named == 1 ? "rank" : "ranks") < 0)
			return -1;
		for (i = 0, j = 0; i < n; i++) {
			if (!r[i].have || same_place(&r[i].w, &r[best].w))
				continue;
			if (put(out, len, &used, "%s%u (%s)", j++ ? ", " : "", r[i].rank, r[i].node) < 0)
				return -1;
		}
		if (put(out, len, &used, " %s not where the other %zu %s (%s):", named == 1 ? "is" : "are",
		        best_count, best_count == 1 ? "rank is" : "ranks are", where) < 0)
			return -1;
		for (i = 0, j = 0; i < n; i++) {
			if (!r[i].have || same_place(&r[i].w, &r[best].w))
				continue;
			rdzv_hang_where_text(&r[i].w, where, sizeof(where));
			if (put(out, len, &used, "%s rank %u at %s", j++ ? ";" : "", r[i].rank, where) < 0)
				return -1;
		}
	}
	if (missing) {
		if (put(out, len, &used, "; no dump from rank%s", missing == 1 ? "" : "s") < 0)
			return -1;
		for (i = 0, j = 0; i < n; i++)
			if (!r[i].have && put(out, len, &used, "%s %u (%s)", j++ ? "," : "", r[i].rank,
			                      r[i].node) < 0)
				return -1;
	}
	return (int)named;
}

int rdzv_hang_record_header(const char *line, size_t len, uint32_t *rank, char *node,
                            size_t nodelen, long *pid)
{
	char buf[256], *p, *end;
	unsigned long r;
	long v;
	size_t n;

	if (len >= sizeof(buf))
		return -1;
	memcpy(buf, line, len);
	buf[len] = '\0';
	if (!starts(buf, "@rank "))
		return -1;
	p = buf + 6;
	if (*p < '0' || *p > '9')
		return -1;
	r = strtoul(p, &end, 10);
	if (r > 0xffffffffUL || !starts(end, " node "))
		return -1;
	p = end + 6;
	if (!(end = strstr(p, " pid ")))
		return -1;
	n = (size_t)(end - p);
	if (n == 0 || n >= nodelen || memchr(p, ' ', n))
		return -1;
	memcpy(node, p, n);
	node[n] = '\0';
	p = end + 5;
	if (*p < '0' || *p > '9')
		return -1;
	v = strtol(p, &end, 10);
	if (*end != '\0' || v <= 0 || v > 0x7fffffffL)
		return -1;
	*rank = (uint32_t)r;
	*pid = v;
	return 0;
}

int rdzv_hang_sigcgt(const char *status, size_t len, int sig)
{
	size_t at = 0;
	char l[256];

	if (sig < 1 || sig > 64)
		return -1;
	while (at < len) {
		at = line_at(status, len, at, l, sizeof(l));
		if (starts(l, "SigCgt:")) {
			const char *p = l + 7;
			unsigned long long mask = 0;
			int digits = 0;

			while (*p == ' ' || *p == '\t')
				p++;
			for (; *p && digits < 16; p++, digits++) {
				int d = (*p >= '0' && *p <= '9') ? *p - '0'
				        : (*p >= 'a' && *p <= 'f') ? *p - 'a' + 10
				        : (*p >= 'A' && *p <= 'F') ? *p - 'A' + 10 : -1;

				if (d < 0)
					return -1;
				mask = (mask << 4) | (unsigned)d;
			}
			if (*p || !digits)
				return -1;
			return (int)((mask >> (sig - 1)) & 1ULL);
		}
	}
	return -1;
}

/* ---- the ask of a rank whose collective timed out ---- */

int rdzv_hang_done_format(uint32_t job, uint32_t step, uint64_t nonce, char *buf, size_t len)
{
	int n = snprintf(buf, len, "RDZVH1 DONE %u.%u %016llx", job, step, (unsigned long long)nonce);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* The next space-separated field of [*p, end): [*f, *f + *fl); 0 or -1. */
static int field(const char **p, const char *end, const char **f, size_t *fl)
{
	const char *q = *p;

	while (q < end && *q != ' ' && *q != '\n')
		q++;
	if (q == *p)
		return -1;
	*f = *p;
	*fl = (size_t)(q - *p);
	*p = q;
	return 0;
}

int rdzv_hang_ask_decode(const char *buf, size_t n, struct rdzv_hang_ask *a)
{
	const char *p = buf, *end = buf + n, *f, *dot;
	size_t fl, k = 0;
	uint64_t v;

	memset(a, 0, sizeof(*a));
	if (n >= 11 && memcmp(buf, "RDZVH1 ASK ", 11) == 0) {
		p += 11;
	} else if (n >= 12 && memcmp(buf, "RDZVH1 FAIL ", 12) == 0) {
		a->notice = 1;
		p += 12;
	} else {
		return -1;
	}
	/* JOB.STEP */
	if (field(&p, end, &f, &fl) < 0 || !(dot = memchr(f, '.', fl))
	    || rdzv_parse_u64n(f, (size_t)(dot - f), 0, UINT32_MAX, &v) < 0)
		return -1;
	a->job_id = (uint32_t)v;
	if (rdzv_parse_u64n(dot + 1, fl - (size_t)(dot - f) - 1, 0, UINT32_MAX, &v) < 0)
		return -1;
	a->step_id = (uint32_t)v;
	/* NONCE: 1-16 hex digits */
	if (p >= end || *p++ != ' ' || field(&p, end, &f, &fl) < 0 || rdzv_hex64(f, fl, &v) < 0)
		return -1;
	a->nonce = v;
	/* RANK */
	if (p >= end || *p++ != ' ' || field(&p, end, &f, &fl) < 0
	    || rdzv_parse_u64n(f, fl, 0, UINT32_MAX, &v) < 0)
		return -1;
	a->rank = (uint32_t)v;
	/* NODE */
	if (p >= end || *p++ != ' ' || field(&p, end, &f, &fl) < 0 || fl >= sizeof(a->node)
	    || !rdzv_host_name_ok(f, fl))
		return -1;
	memcpy(a->node, f, fl);
	a->node[fl] = '\0';
	/* FAIL: WORLD (0: not known) */
	if (a->notice) {
		if (p >= end || *p++ != ' ' || field(&p, end, &f, &fl) < 0
		    || rdzv_parse_u64n(f, fl, 0, UINT32_MAX, &v) < 0)
			return -1;
		a->world = (uint32_t)v;
	}
	if (p == end)
		return 0;
	if (*p++ != '\n')
		return -1;
	for (; p < end && k + 1 < sizeof(a->what); p++)
		a->what[k++] = (*p >= 0x20 && *p < 0x7f) ? *p : ' ';
	a->what[k] = '\0';
	return 0;
}
