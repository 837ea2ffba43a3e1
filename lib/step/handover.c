/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/step/: the step's plan: host lists, task layouts, node order,
 * MASTER_ADDR and the port, rank 0, heterogeneous steps, srun's command line
 * and what it hands the nodes, the interface to rank 0, the step's datagram
 * channel. Uses lib/common/. */
/* handover.c: texts from srun to a step's nodes through the step's
 * environment, in parts when long (handover.h). */
#include "config.h"
#include "handover.h"
#include "util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME_MAX_LEN 200

static int proc_get(void *ctx, const char *name, char **value)
{
	const char *v = getenv(name);

	(void)ctx;
	*value = NULL;
	if (!v)
		return 0;
	if (!(*value = strdup(v)))
		return -1;
	return 1;
}

static int proc_set(void *ctx, const char *name, const char *value)
{
	(void)ctx;
	return setenv(name, value, 1) == 0 ? 0 : -1;
}

static void proc_unset(void *ctx, const char *name)
{
	(void)ctx;
	unsetenv(name);
}

const struct rdzv_ho_env rdzv_env_process = { proc_get, proc_set, proc_unset, NULL };

static uint64_t fnv1a(const char *s, size_t n)
{
	return rdzv_fnv1a64(RDZV_FNV1A64_INIT, s, n);
}

static int part_name(const char *name, size_t i, char *out, size_t outlen)
{
	int n = snprintf(out, outlen, "%s_%zu", name, i);

	return n < 0 || (size_t)n >= outlen ? -1 : 0;
}

size_t rdzv_handover_vars(const char *text)
{
	size_t n = strlen(text);

	if (n <= RDZV_HANDOVER_PART && text[0] != '#')
		return 1;
	return 1 + (n + RDZV_HANDOVER_PART - 1) / RDZV_HANDOVER_PART;
}

/* Remove name and its parts 1..known (a header's count: a missing one does
 * not stop it), then any that follow without a gap. */
static void clear_parts(const struct rdzv_ho_env *env, const char *name, size_t known)
{
	char part[NAME_MAX_LEN + 24], *v = NULL;
	size_t i;

	env->unset(env->ctx, name);
	for (i = 1; i <= RDZV_HANDOVER_PARTS_MAX + 1; i++) {
		if (part_name(name, i, part, sizeof(part)) < 0)
			break;
		if (i > known) {
			if (env->get(env->ctx, part, &v) <= 0)
				break;
			free(v);
			v = NULL;
		}
		env->unset(env->ctx, part);
	}
}

void rdzv_handover_clear(const struct rdzv_ho_env *env, const char *name)
{
	clear_parts(env, name, 0);
}

int rdzv_handover_put(const struct rdzv_ho_env *env, const char *name, const char *text,
                      char *err, size_t errlen)
{
	char part[NAME_MAX_LEN + 24], head[64], *chunk = NULL;
	size_t n = strlen(text), parts, i;

	if (strlen(name) > NAME_MAX_LEN)
		return rdzv_err(err, errlen, "handover: variable name %.40s... too long", name);
	rdzv_handover_clear(env, name);
	if (n <= RDZV_HANDOVER_PART && text[0] != '#') {
		if (env->set(env->ctx, name, text) < 0)
			return rdzv_err(err, errlen, "cannot set %s (%zu bytes)", name, n);
		return 0;
	}
	parts = n ? (n + RDZV_HANDOVER_PART - 1) / RDZV_HANDOVER_PART : 1;
	if (parts > RDZV_HANDOVER_PARTS_MAX)
		return rdzv_err(err, errlen, "%s: %zu bytes is more than the handover's limit of "
		                "%u parts of %u bytes", name, n, RDZV_HANDOVER_PARTS_MAX,
		                RDZV_HANDOVER_PART);
	if (!(chunk = malloc(RDZV_HANDOVER_PART + 1)))
		return rdzv_err(err, errlen, "out of memory");
	for (i = 0; i < parts; i++) {
		size_t off = i * RDZV_HANDOVER_PART,
		       len = n - off < RDZV_HANDOVER_PART ? n - off : RDZV_HANDOVER_PART;

		memcpy(chunk, text + off, len);
		chunk[len] = '\0';
		if (part_name(name, i + 1, part, sizeof(part)) < 0
		    || env->set(env->ctx, part, chunk) < 0) {
			free(chunk);
			rdzv_handover_clear(env, name);
			return rdzv_err(err, errlen, "cannot set %s (part %zu of %zu)", name, i + 1,
			                parts);
		}
	}
	free(chunk);
	snprintf(head, sizeof(head), "#%zu:%zu:%016" PRIx64, parts, n, fnv1a(text, n));
	if (env->set(env->ctx, name, head) < 0) {
		rdzv_handover_clear(env, name);
		return rdzv_err(err, errlen, "cannot set %s", name);
	}
	return 0;
}

/* "#PARTS:BYTES:HASH". Returns 0 or -1. */
static int parse_head(const char *s, size_t *parts, size_t *bytes, uint64_t *hash)
{
	const char *c1, *c2;
	uint64_t p, b, h;

	if (s[0] != '#' || !(c1 = strchr(s + 1, ':')) || !(c2 = strchr(c1 + 1, ':'))
	    || rdzv_parse_u64n(s + 1, (size_t)(c1 - s - 1), 1, RDZV_HANDOVER_PARTS_MAX, &p) < 0
	    || rdzv_parse_u64n(c1 + 1, (size_t)(c2 - c1 - 1), 0,
	                       (uint64_t)RDZV_HANDOVER_PARTS_MAX * RDZV_HANDOVER_PART, &b) < 0
	    || strlen(c2 + 1) != 16)
		return -1;
	for (h = 0, s = c2 + 1; *s; s++) {
		int d = *s >= '0' && *s <= '9' ? *s - '0' : *s >= 'a' && *s <= 'f' ? *s - 'a' + 10 : -1;

		if (d < 0)
			return -1;
		h = h << 4 | (uint64_t)d;
	}
	/* The parts are full but the last, which holds at least a byte. */
	if (b > p * RDZV_HANDOVER_PART || (p > 1 && b <= (p - 1) * RDZV_HANDOVER_PART)
	    || (b == 0 && p != 1))
		return -1;
	*parts = (size_t)p;
	*bytes = (size_t)b;
	*hash = h;
	return 0;
}

/* Put the parts back together into a text of bytes bytes. */
static int join_parts(const struct rdzv_ho_env *env, const char *name, size_t parts,
                      size_t bytes, uint64_t hash, char **text, char *err, size_t errlen)
{
	char part[NAME_MAX_LEN + 24], *v = NULL, *buf = malloc(bytes + 1);
	size_t i, off = 0;
	int rc;

	if (!buf)
		return rdzv_err(err, errlen, "out of memory");
	for (i = 1; i <= parts; i++) {
		size_t want = i < parts ? RDZV_HANDOVER_PART : bytes - off, len;

		if (part_name(name, i, part, sizeof(part)) < 0
		    || (rc = env->get(env->ctx, part, &v)) <= 0) {
			rdzv_err(err, errlen, "%s: part %zu of %zu is %s", name, i, parts,
			         rc < 0 ? "unreadable" : "missing");
			goto fail;
		}
		if ((len = strlen(v)) != want) {
			rdzv_err(err, errlen, "%s: part %zu of %zu holds %zu bytes, not %zu", name, i,
			         parts, len, want);
			goto fail;
		}
		memcpy(buf + off, v, len);
		off += len;
		free(v);
		v = NULL;
	}
	buf[off] = '\0';
	if (fnv1a(buf, off) != hash) {
		rdzv_err(err, errlen, "%s: its %zu parts are not of one text (hash mismatch)", name,
		         parts);
		goto fail;
	}
	*text = buf;
	return 0;
fail:
	free(v);
	free(buf);
	return -1;
}

int rdzv_handover_take(const struct rdzv_ho_env *env, const char *name, char **text,
                       char *err, size_t errlen)
{
	char *v = NULL;
	size_t parts, bytes;
	uint64_t hash;
	int rc;

	*text = NULL;
	if (strlen(name) > NAME_MAX_LEN)
		return rdzv_err(err, errlen, "handover: variable name %.40s... too long", name);
	rc = env->get(env->ctx, name, &v);
	if (rc == 0)
		return 0;
	if (rc < 0) {
		rdzv_handover_clear(env, name);
		return rdzv_err(err, errlen, "%s is unreadable", name);
	}
	if (v[0] != '#') {
		rdzv_handover_clear(env, name);
		*text = v;
		return 1;
	}
	if (parse_head(v, &parts, &bytes, &hash) < 0) {
		rdzv_err(err, errlen, "%s: malformed header '%.40s'", name, v);
		free(v);
		rdzv_handover_clear(env, name);
		return -1;
	}
	free(v);
	rc = join_parts(env, name, parts, bytes, hash, text, err, errlen);
	clear_parts(env, name, parts);
	return rc < 0 ? -1 : 1;
}

int rdzv_refused_format(uint32_t job, uint32_t step, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%" PRIu32 ".%" PRIu32, job, step);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

int rdzv_refused_parse(const char *s, uint32_t *job, uint32_t *step)
{
	const char *p = s;

	if (!s || rdzv_read_u32(&p, UINT32_MAX, job) < 0 || *p++ != '.'
	    || rdzv_read_u32(&p, UINT32_MAX, step) < 0 || *p)
		return -1;
	return 0;
}

int rdzv_srun_mark_format(const char *version, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s format=%u", version, (unsigned)RDZV_HANDOVER_FORMAT);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

int rdzv_srun_mark_parse(const char *mark, char *version, size_t vlen, unsigned *format)
{
	const char *sp, *f;
	uint64_t v;
	size_t n;

	if (!mark || !*mark || vlen == 0)
		return -1;
	sp = strchr(mark, ' ');
	n = sp ? (size_t)(sp - mark) : strlen(mark);
	if (n == 0 || strspn(mark, "0123456789.abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ+~-_")
	                  < n)
		return -1;
	snprintf(version, vlen, "%.*s", (int)n, mark);
	*format = 1;
	if (!sp)
		return 0;
	f = sp + 1;
	if (strncmp(f, "format=", 7) != 0 || rdzv_parse_u64(f + 7, 1, 1000000, &v) < 0)
		return -1;
	*format = (unsigned)v;
	return 0;
}

int rdzv_srun_mark_readable(const char *srun_version, unsigned format, const char *node_version,
                            char *err, size_t errlen)
{
	if (format >= 1 && format <= RDZV_HANDOVER_FORMAT)
		return 1;
	if (format == 0)
		rdzv_err(err, errlen, "srun's spank-rdzv %s marks the step in a form this node's "
		         "spank-rdzv %s does not know: the step is refused rather than run with ranks "
		         "read wrong; run srun with spank-rdzv %s", srun_version, node_version,
		         node_version);
	else
		rdzv_err(err, errlen, "srun's spank-rdzv %s hands the step over in format %u, which "
		         "this node's spank-rdzv %s (formats 1 to %u) cannot read: the step is refused "
		         "rather than run with ranks read wrong; upgrade the plugin on this node, or run "
		         "srun with spank-rdzv %s", srun_version, format, node_version,
		         (unsigned)RDZV_HANDOVER_FORMAT, node_version);
	return 0;
}
