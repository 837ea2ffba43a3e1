/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/admin/: what admins get: the step's record, its metrics, DCGM's job map.
 * Uses lib/failure/, lib/common/. */
/* metrics.c: see metrics.h. */
#include "config.h"
#include "metrics.h"
#include "record.h" /* rdzv_record_dir_check */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

static const struct {
	const char *name, *type, *help;
} families[] = {
	{ "rdzv_steps_total", "counter", "Steps with a rendezvous mode that ended on this node, by mode." },
	{ "rdzv_step_failures_total", "counter",
	  "Steps that failed on this node, by the node's first cause (exit, signal, refused_by_node, "
	  "refused_by_srun)." },
	{ "rdzv_gpu_faults_total", "counter",
	  "GPU faults the driver reported before a rank of a step failed on this node, by kind "
	  "(xid_node, xid_app, ras)." },
	{ "rdzv_binding_fallbacks_total", "counter",
	  "Steps whose tasks ran unbound because binding failed (strict=no)." },
	{ "rdzv_record_errors_total", "counter", "Step records that could not be written." },
	{ "rdzv_profile_info", "gauge", "The NCCL profile of the last step (1), and a hash of what it resolved to." },
	{ "rdzv_last_step_end_seconds", "gauge", "When the last step with a mode ended on this node (Unix time)." },
};
#define NFAM (sizeof(families) / sizeof(families[0]))

static int family_of(const char *key)
{
	size_t i, n;

	for (i = 0; i < NFAM; i++) {
		n = strlen(families[i].name);
		if (strncmp(key, families[i].name, n) == 0 && (key[n] == '\0' || key[n] == '{'))
			return (int)i;
	}
	return -1;
}

/* A label set as this code writes it: {a="v",b="w"}, values of
 * [A-Za-z0-9._-]; anything else is not ours. */
static int labels_ok(const char *p, size_t n)
{
	size_t i = 0;

	if (n == 0)
		return 1;
	if (p[0] != '{' || p[n - 1] != '}')
		return 0;
	for (i = 1; i < n - 1; i++) {
		char c = p[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
		      || c == '_' || c == '.' || c == '-' || c == '=' || c == '"' || c == ','))
			return 0;
	}
	return 1;
}

static long find(const struct rdzv_metrics *m, const char *key)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (strcmp(m->s[i].key, key) == 0)
			return (long)i;
	return -1;
}

static int put(struct rdzv_metrics *m, const char *key, uint64_t v, int add)
{
	long i = find(m, key);

	if (i < 0) {
		if (m->n >= RDZV_METRICS_SERIES_MAX || rdzv_strlcpy(m->s[m->n].key, key,
		                                                     RDZV_METRICS_KEY_MAX) < 0)
			return -1;
		m->s[m->n].v = 0;
		i = (long)m->n++;
	}
	m->s[i].v = add ? m->s[i].v + v : v;
	return 0;
}

void rdzv_metrics_read(struct rdzv_metrics *m, const char *text, size_t n)
{
	size_t at = 0;

	m->n = 0;
	while (at < n) {
		const char *line = text + at, *nl = memchr(line, '\n', n - at), *sp;
		size_t len = nl ? (size_t)(nl - line) : n - at;
		char key[RDZV_METRICS_KEY_MAX];
		uint64_t v;
		size_t name_len;

		at += len + (nl ? 1 : 0);
		if (line[0] == '\n' || line[0] == '#' || len >= RDZV_METRICS_KEY_MAX + 24)
			continue; /* an empty line, a comment, a line longer than any of ours */
		sp = memchr(line, ' ', len);
		if (!sp || (size_t)(sp - line) >= RDZV_METRICS_KEY_MAX
		    || rdzv_parse_u64n(sp + 1, len - (size_t)(sp - line) - 1, 0, UINT64_MAX, &v) < 0)
			continue;
		memcpy(key, line, (size_t)(sp - line));
		key[sp - line] = '\0';
		if (family_of(key) < 0)
			continue;
		name_len = strcspn(key, "{");
		if (!labels_ok(key + name_len, strlen(key) - name_len))
			continue;
		(void)put(m, key, v, 0);
	}
}

/* A label value as this code writes it (modes, causes, profile names,
 * hashes): [A-Za-z0-9._-], else "other". */
static const char *label(const char *v)
{
	return v && *v && strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
	                      == strlen(v) ? v : "other";
}

int rdzv_metrics_step(struct rdzv_metrics *m, const struct rdzv_metrics_step *s)
{
	char key[RDZV_METRICS_KEY_MAX];
	size_t i, o = 0;
	int rc = 0;

	snprintf(key, sizeof(key), "rdzv_steps_total{mode=\"%.32s\"}", label(s->mode));
	rc |= put(m, key, 1, 1);
	if (s->cause) {
		snprintf(key, sizeof(key), "rdzv_step_failures_total{cause=\"%.32s\"}", label(s->cause));
		rc |= put(m, key, 1, 1);
	}
	if (s->gpu_fault) {
		snprintf(key, sizeof(key), "rdzv_gpu_faults_total{kind=\"%.32s\"}",
		         label(s->gpu_fault));
		rc |= put(m, key, 1, 1);
	}
	rc |= put(m, "rdzv_binding_fallbacks_total", s->bind_fallback ? 1 : 0, 1);
	rc |= put(m, "rdzv_record_errors_total", s->record_error ? 1 : 0, 1);
	/* One profile series: the last step's. */
	for (i = 0; i < m->n; i++)
		if (strncmp(m->s[i].key, "rdzv_profile_info{", 18) != 0)
			m->s[o++] = m->s[i];
	m->n = o;
	snprintf(key, sizeof(key), "rdzv_profile_info{profile=\"%.64s\",hash=\"%016llx\"}",
	         s->profile ? label(s->profile) : "none",
	         (unsigned long long)(s->profile ? s->profile_hash : 0));
	rc |= put(m, key, 1, 0);
	rc |= put(m, "rdzv_last_step_end_seconds", s->end > 0 ? (uint64_t)s->end : 0, 0);
	return rc ? -1 : 0;
}

static int by_key(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

long rdzv_metrics_text(const struct rdzv_metrics *m, char *buf, size_t len)
{
	const char *keys[RDZV_METRICS_SERIES_MAX];
	size_t f, i, k, o = 0;
	int w;

	for (f = 0; f < NFAM; f++) {
		k = 0;
		for (i = 0; i < m->n; i++)
			if (family_of(m->s[i].key) == (int)f)
				keys[k++] = m->s[i].key;
		if (!k)
			continue;
		qsort(keys, k, sizeof(keys[0]), by_key);
		w = snprintf(buf + o, len - o, "# HELP %s %s\n# TYPE %s %s\n", families[f].name,
		             families[f].help, families[f].name, families[f].type);
		if (w < 0 || (size_t)w >= len - o)
			return -1;
		o += (size_t)w;
		for (i = 0; i < k; i++) {
			w = snprintf(buf + o, len - o, "%s %llu\n", keys[i],
			             (unsigned long long)m->s[find(m, keys[i])].v);
			if (w < 0 || (size_t)w >= len - o)
				return -1;
			o += (size_t)w;
		}
	}
	return (long)o;
}

int rdzv_metrics_update(const char *dir, const struct rdzv_metrics_step *s, char *err,
                        size_t errlen)
{
	struct rdzv_metrics *m = NULL;
	char *old = NULL, *text = NULL;
	int dfd = -1, lfd = -1, fd = -1, rv = -1;
	char tmp[64];
	long len;
	ssize_t k;

	if (!(m = calloc(1, sizeof(*m))) || !(old = malloc(RDZV_METRICS_FILE_MAX + 1))
	    || !(text = malloc(RDZV_METRICS_FILE_MAX))) {
		rdzv_err(err, errlen, "out of memory");
		goto out;
	}
	if ((dfd = rdzv_admin_dir_open("metrics_dir", dir, err, errlen)) < 0)
		goto out;
	if ((lfd = openat(dfd, ".rdzv.prom.lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
	                  0600)) < 0
	    || flock(lfd, LOCK_EX) < 0) {
		rdzv_err(err, errlen, "metrics_dir=%s: %s", dir, strerror(errno));
		goto out;
	}
	if ((fd = openat(dfd, RDZV_METRICS_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) >= 0) {
		k = read(fd, old, RDZV_METRICS_FILE_MAX);
		close(fd);
		fd = -1;
		rdzv_metrics_read(m, old, k > 0 ? (size_t)k : 0);
	}
	if (rdzv_metrics_step(m, s) < 0 || (len = rdzv_metrics_text(m, text,
	                                                            RDZV_METRICS_FILE_MAX)) < 0) {
		rdzv_err(err, errlen, "metrics_dir=%s: more than %d series", dir,
		         RDZV_METRICS_SERIES_MAX);
		goto out;
	}
	snprintf(tmp, sizeof(tmp), ".%s.%ld", RDZV_METRICS_FILE, (long)getpid());
	unlinkat(dfd, tmp, 0);
	if ((fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644)) < 0
	    || write(fd, text, (size_t)len) != (ssize_t)len || close(fd) < 0) {
		fd = -1;
		rdzv_err(err, errlen, "metrics_dir=%s: writing %s: %s", dir, tmp, strerror(errno));
		unlinkat(dfd, tmp, 0);
		goto out;
	}
	fd = -1;
	if (renameat(dfd, tmp, dfd, RDZV_METRICS_FILE) < 0) {
		rdzv_err(err, errlen, "metrics_dir=%s: rename: %s", dir, strerror(errno));
		unlinkat(dfd, tmp, 0);
		goto out;
	}
	rv = 0;
out:
	if (fd >= 0)
		close(fd);
	if (lfd >= 0)
		close(lfd); /* releases the lock */
	if (dfd >= 0)
		close(dfd);
	free(text);
	free(old);
	free(m);
	return rv;
}
