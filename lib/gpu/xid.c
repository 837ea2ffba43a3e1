/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/gpu/: the GPU vendors' libraries (NVML, ROCm SMI, opened at run time),
 * the NVLink fabric, the kernel's GPU fault lines (Xid). Uses lib/common/. */
/* xid.c: the Xid table; see xid.h. */
#include "config.h"
#include "xid.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

static const char *const action_names[] = {
	[RDZV_XID_IGNORE] = "IGNORE",
	[RDZV_XID_RESTART_APP] = "RESTART_APP",
	[RDZV_XID_RESET_GPU] = "RESET_GPU",
	[RDZV_XID_RESTART_VM] = "RESTART_VM",
	[RDZV_XID_RESTART_BM] = "RESTART_BM",
	[RDZV_XID_DRAIN] = "DRAIN",
	[RDZV_XID_CONTACT_SUPPORT] = "CONTACT_SUPPORT",
	[RDZV_XID_CHECK_MECHANICALS] = "CHECK_MECHANICALS",
	[RDZV_XID_UNKNOWN] = "UNKNOWN",
};

static const struct {
	const char *name;
	unsigned bit;
} gen_names[] = {
	{ "a100", RDZV_GEN_A100 },
	{ "h100", RDZV_GEN_H100 },
	{ "b100", RDZV_GEN_B100 },
	{ "gb200", RDZV_GEN_GB200 },
};

const char *rdzv_xid_action_name(enum rdzv_xid_action a)
{
	return (unsigned)a <= RDZV_XID_UNKNOWN ? action_names[a] : "UNKNOWN";
}

int rdzv_xid_node_fault(enum rdzv_xid_action a)
{
	return a != RDZV_XID_IGNORE && a != RDZV_XID_RESTART_APP && a != RDZV_XID_UNKNOWN;
}

unsigned rdzv_gpu_generation(const char *model)
{
	/* The catalog's columns; their siblings of one architecture with them
	 * (H200, H800, H20 are Hopper; B200 is B100's Blackwell). GB before B. */
	static const struct {
		const char *word;
		unsigned bit;
	} models[] = {
		{ "GB200", RDZV_GEN_GB200 }, { "GB300", RDZV_GEN_GB200 }, { "A100", RDZV_GEN_A100 },
		{ "A800", RDZV_GEN_A100 },   { "A30", RDZV_GEN_A100 },    { "H100", RDZV_GEN_H100 },
		{ "H200", RDZV_GEN_H100 },   { "H800", RDZV_GEN_H100 },   { "H20", RDZV_GEN_H100 },
		{ "GH200", RDZV_GEN_H100 },  { "B100", RDZV_GEN_B100 },   { "B200", RDZV_GEN_B100 },
		{ "B300", RDZV_GEN_B100 },
	};
	size_t i;

	for (i = 0; model && i < sizeof(models) / sizeof(models[0]); i++) {
		const char *p = strstr(model, models[i].word);
		size_t l = strlen(models[i].word);

		/* A word of its own: "H20" is not "H200", "B200" not "GB200". */
		if (p && (p == model || p[-1] == ' ') && (p[l] == '\0' || p[l] == ' ' || p[l] == '-'))
			return models[i].bit;
	}
	return 0;
}

static int parse_action(const char *s, size_t n, enum rdzv_xid_action *a)
{
	int i;

	for (i = 0; i < RDZV_XID_UNKNOWN; i++) {
		if (strlen(action_names[i]) == n && memcmp(action_names[i], s, n) == 0) {
			*a = (enum rdzv_xid_action)i;
			return 0;
		}
	}
	return -1;
}

/* "all" or "a100,h100". */
static int parse_gens(const char *s, size_t n, unsigned *gens)
{
	const char *end = s + n;

	*gens = 0;
	if (n == 3 && memcmp(s, "all", 3) == 0)
		return 0;
	while (s < end) {
		const char *c = memchr(s, ',', (size_t)(end - s));
		size_t l = (size_t)((c ? c : end) - s), i;
		unsigned bit = 0;

		for (i = 0; i < sizeof(gen_names) / sizeof(gen_names[0]); i++)
			if (strlen(gen_names[i].name) == l && memcmp(gen_names[i].name, s, l) == 0)
				bit = gen_names[i].bit;
		if (!bit)
			return -1;
		*gens |= bit;
		s += l + (c ? 1 : 0);
		if (c && s == end)
			return -1;
	}
	return *gens ? 0 : -1;
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* The next word of [*p, end): its start, its length in *n; *p past it. */
static const char *word(const char **p, const char *end, size_t *n)
{
	const char *s = *p;

	while (s < end && is_blank(*s))
		s++;
	*p = s;
	while (*p < end && !is_blank(**p))
		(*p)++;
	*n = (size_t)(*p - s);
	return s;
}

static int put(struct rdzv_xid_table *t, const struct rdzv_xid_entry *e)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		if (t->v[i].xid == e->xid && t->v[i].gens == e->gens) {
			t->v[i] = *e;
			return 0;
		}
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct rdzv_xid_entry *v = realloc(t->v, cap * sizeof(*v));

		if (!v)
			return -1;
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n++] = *e;
	return 0;
}

int rdzv_xid_table_parse(struct rdzv_xid_table *t, const char *text, size_t len,
                         const char *name, char *err, size_t errlen)
{
	const char *p = text, *end = text + len;
	unsigned long line = 0;
	int taken = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end, *hash = memchr(p, '#', (size_t)(le - p));
		const char *q = p, *w;
		struct rdzv_xid_entry e = { 0 };
		uint64_t xid;
		size_t n;

		line++;
		if (hash)
			le = hash;
		if (memchr(p, '\0', (size_t)(le - p)))
			return rdzv_err(err, errlen, "%s:%lu: a NUL byte", name, line);
		w = word(&q, le, &n);
		if (n == 0)
			goto next;
		if (rdzv_parse_u64n(w, n, 1, RDZV_XID_MAX, &xid) < 0)
			return rdzv_err(err, errlen, "%s:%lu: '%.*s' is not an Xid (a number from 1 to "
			                "%u)", name, line, (int)(n > 32 ? 32 : n), w, RDZV_XID_MAX);
		e.xid = (uint32_t)xid;
		w = word(&q, le, &n);
		if (n == 0 || parse_action(w, n, &e.action) < 0)
			return rdzv_err(err, errlen, "%s:%lu: Xid %u: action '%.*s': valid actions are "
			                RDZV_XID_ACTIONS_VALID, name, line, e.xid,
			                (int)(n > 32 ? 32 : n), w);
		w = word(&q, le, &n);
		if (n == 0 || parse_gens(w, n, &e.gens) < 0)
			return rdzv_err(err, errlen, "%s:%lu: Xid %u: GPUs '%.*s': valid values are "
			                RDZV_GENS_VALID " (a comma list)", name, line, e.xid,
			                (int)(n > 32 ? 32 : n), w);
		while (q < le && is_blank(*q))
			q++;
		while (le > q && is_blank(le[-1]))
			le--;
		if (q == le)
			return rdzv_err(err, errlen, "%s:%lu: Xid %u: no meaning (the words after the "
			                "GPUs)", name, line, e.xid);
		if ((size_t)(le - q) >= sizeof(e.meaning))
			return rdzv_err(err, errlen, "%s:%lu: Xid %u: a meaning of more than %zu "
			                "bytes", name, line, e.xid, sizeof(e.meaning) - 1);
		memcpy(e.meaning, q, (size_t)(le - q));
		if (put(t, &e) < 0)
			return rdzv_err(err, errlen, "%s:%lu: out of memory", name, line);
		taken++;
next:
		p = nl ? nl + 1 : end;
	}
	return taken;
}

int rdzv_xid_table_load(struct rdzv_xid_table *t, const char *path, char *err, size_t errlen)
{
	char *text = rdzv_read_head(path, RDZV_XID_TABLE_BYTES + 1);
	size_t len;
	int rc;

	if (!text)
		return rdzv_err(err, errlen, "%s: cannot be read", path);
	if ((len = strlen(text)) > RDZV_XID_TABLE_BYTES) {
		free(text);
		return rdzv_err(err, errlen, "%s: larger than %u bytes", path, RDZV_XID_TABLE_BYTES);
	}
	rc = rdzv_xid_table_parse(t, text, len, path, err, errlen);
	free(text);
	return rc < 0 ? -1 : (int)t->n;
}

void rdzv_xid_table_free(struct rdzv_xid_table *t)
{
	if (!t)
		return;
	free(t->v);
	memset(t, 0, sizeof(*t));
}

const struct rdzv_xid_entry *rdzv_xid_lookup(const struct rdzv_xid_table *t, uint32_t xid,
                                             unsigned gen)
{
	const struct rdzv_xid_entry *all = NULL, *any = NULL;
	size_t i;

	for (i = 0; t && i < t->n; i++) {
		if (t->v[i].xid != xid)
			continue;
		if (gen && (t->v[i].gens & gen))
			return &t->v[i];
		if (!t->v[i].gens)
			all = &t->v[i];
		else if (!any)
			any = &t->v[i];
	}
	/* A GPU of no known generation: the "all" line, else the first the
	 * catalog gives (a reset on an A100 is still a reset elsewhere). */
	return all ? all : gen ? NULL : any;
}
