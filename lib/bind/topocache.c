/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/bind/: the node's topology, each task's GPU, NICs and cores, the node
 * check and its GPU gate. Uses lib/modes/, lib/step/, lib/gpu/, lib/common/. */
/* topocache.c: see topocache.h. */
#define _GNU_SOURCE
#include "config.h"
#include "topocache.h"
#include "topo-priv.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* 2: the c2c nearness level and each port's fabric (a version-1 entry is
 * refused as "not a cache file of this version", then rewritten).
 * 3: AMD GPUs and Slingshot NICs (a version-2 entry of an AMD node holds
 * no GPU). */
#define CACHE_MAGIC "rdzv-topo-cache 3"
#define CACHE_MAX (8u << 20) /* a model is a few KiB; refuse anything huge */
#define CPUS_MAX (1 << 20)

const char *rdzv_cache_outcome_name(enum rdzv_cache_outcome o)
{
	switch (o) {
	case RDZV_CACHE_OFF:
		return "off";
	case RDZV_CACHE_HIT:
		return "hit";
	case RDZV_CACHE_WRITTEN:
		return "written";
	case RDZV_CACHE_MISS:
		return "miss";
	}
	return "?";
}

int rdzv_topo_cache_key(const char *xml, char *key, size_t len, char *err, size_t errlen)
{
	struct stat st;
	int n;

	if (stat(xml, &st) < 0)
		return rdzv_err(err, errlen, "cannot read topology %s: %s", xml, strerror(errno));
	n = snprintf(key, len, "hwloc %x dev %llu ino %llu size %lld mtime %lld.%09ld ctime %lld.%09ld "
	             "path %s", (unsigned)HWLOC_API_VERSION, (unsigned long long)st.st_dev,
	             (unsigned long long)st.st_ino, (long long)st.st_size,
	             (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec, (long long)st.st_ctim.tv_sec,
	             st.st_ctim.tv_nsec, xml);
	if (n < 0 || (size_t)n >= len)
		return rdzv_err(err, errlen, "topology path %s too long", xml);
	return 0;
}

struct sbuf {
	char *s;
	size_t len, cap;
	int failed;
};

static void put(struct sbuf *b, const char *fmt, ...) RDZV_PRINTF(2, 3);
static void put(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->failed)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->failed = 1;
			return;
		}
		if ((size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		{
			size_t cap = b->cap * 2 + (size_t)n;
			char *s = realloc(b->s, cap);

			if (!s) {
				b->failed = 1;
				return;
			}
			b->s = s;
			b->cap = cap;
		}
	}
}

static void put_bitmap(struct sbuf *b, hwloc_const_bitmap_t m)
{
	char *s = NULL;

	if (hwloc_bitmap_list_asprintf(&s, m) < 0 || !s) {
		b->failed = 1;
		return;
	}
	put(b, "%s", s[0] ? s : "-");
	free(s);
}

char *rdzv_topo_serialize(const struct rdzv_topo *t, const char *key)
{
	struct sbuf b = { malloc(4096), 0, 4096, 0 };
	size_t i, j;

	if (!b.s)
		return NULL;
	b.s[0] = '\0';
	put(&b, "%s\nkey %s\ncounts %zu %zu %zu %zu\n", CACHE_MAGIC, key, t->ngpus, t->nnics,
	    t->ncores, t->npci);
	for (i = 0; i < t->ngpus; i++) {
		put(&b, "gpu %s %x %x ", t->gpus[i].busid, t->gpus[i].vendor, t->gpus[i].device);
		put_bitmap(&b, t->gpus[i].cpus);
		put(&b, " %s\n", t->gpus[i].model);
	}
	for (j = 0; j < t->nnics; j++)
		put(&b, "nic %s %s %d %d %d\n", t->nics[j].busid, t->nics[j].name, t->nics[j].port,
		    t->nics[j].state, t->nics[j].fabric);
	for (i = 0; i < t->ngpus && t->nnics; i++) {
		put(&b, "near ");
		for (j = 0; j < t->nnics; j++)
			put(&b, "%u", (unsigned)t->near[i * t->nnics + j]);
		put(&b, "\n");
	}
	for (i = 0; i < t->ncores; i++) {
		put(&b, "core ");
		put_bitmap(&b, t->cores[i]);
		put(&b, "\n");
	}
	put(&b, "allowed ");
	put_bitmap(&b, t->allowed);
	put(&b, "\nend\n");
	if (b.failed) {
		free(b.s);
		return NULL;
	}
	return b.s;
}

/* A cpu list of what no machine has is refused before hwloc reads it:
 * only "A" or "A-B" items (A <= B <= CPUS_MAX), comma separated. hwloc
 * grows a bitmap to its highest bit, and a fuzzed "4-3\003..." took
 * 1.4 s of allocation (issue 48). */
static int list_ok(const char *s)
{
	while (*s) {
		unsigned long lo, hi;
		char *end;

		if (*s < '0' || *s > '9')
			return 0;
		errno = 0;
		lo = strtoul(s, &end, 10);
		hi = lo;
		if (*end == '-') {
			if (end[1] < '0' || end[1] > '9')
				return 0;
			hi = strtoul(end + 1, &end, 10);
		}
		if (errno || lo > hi || hi > CPUS_MAX)
			return 0;
		if (*end == ',' && end[1])
			end++;
		else if (*end)
			return 0;
		s = end;
	}
	return 1;
}

static int read_bitmap(const char *s, hwloc_bitmap_t m)
{
	if (strcmp(s, "-") == 0) {
		hwloc_bitmap_zero(m);
		return 0;
	}
	if (!list_ok(s))
		return -1;
	/* A real cpuset is finite and bounded ("0-" would be infinite). */
	if (hwloc_bitmap_list_sscanf(m, s) < 0 || hwloc_bitmap_weight(m) < 0)
		return -1;
	/* "-3" parses as bit 2^32-3: refuse what no machine has. */
	return hwloc_bitmap_iszero(m) || (hwloc_bitmap_first(m) >= 0 && hwloc_bitmap_last(m) >= 0
	                                  && hwloc_bitmap_last(m) <= CPUS_MAX) ? 0 : -1;
}

/* The next line of *p (NUL-terminated in place), or NULL at the end. */
static char *next_line(char **p)
{
	char *l = *p, *nl;

	if (!l || !*l)
		return NULL;
	if ((nl = strchr(l, '\n'))) {
		*nl = '\0';
		*p = nl + 1;
	} else {
		*p = l + strlen(l);
	}
	return l;
}

int rdzv_topo_deserialize(const char *text, const char *key, struct rdzv_topo **out, char *err,
                          size_t errlen)
{
	char *copy = strdup(text), *p = copy, *l;
	struct rdzv_topo *t = NULL;
	size_t ng, nn, nc, np, i, j, gi = 0, ni = 0, ri = 0, ci = 0, lineno = 2;
	int rv = -1, end = 0, allowed = 0;

	*out = NULL;
	if (!copy)
		return rdzv_err(err, errlen, "out of memory");
	if (!(l = next_line(&p)) || strcmp(l, CACHE_MAGIC) != 0) {
		rdzv_err(err, errlen, "not a cache file of this version");
		goto fail;
	}
	if (!(l = next_line(&p)) || strncmp(l, "key ", 4) != 0) {
		rdzv_err(err, errlen, "line 2: no key");
		goto fail;
	}
	if (strcmp(l + 4, key) != 0) {
		rv = 1;
		goto fail;
	}
	if (!(l = next_line(&p)) || sscanf(l, "counts %zu %zu %zu %zu", &ng, &nn, &nc, &np) != 4
	    || ng > 4096 || nn > 4096 || nc > (1u << 20)) {
		rdzv_err(err, errlen, "line 3: bad counts");
		goto fail;
	}
	if (!(t = rdzv_topo_alloc(ng, nn, nc))) {
		rdzv_err(err, errlen, "out of memory");
		goto fail;
	}
	t->npci = np;
	while ((l = next_line(&p))) {
		char a[64], b2[64], c[1024];
		int off = 0;

		lineno++;
		if (strncmp(l, "gpu ", 4) == 0 && gi < ng) {
			struct rdzv_topo_gpu *g = &t->gpus[gi];

			if (sscanf(l, "gpu %15s %x %x %1023s %n", g->busid, &g->vendor, &g->device, c, &off) < 4
			    || !off || read_bitmap(c, g->cpus) < 0)
				break;
			snprintf(g->model, sizeof(g->model), "%s", l + off);
			gi++;
		} else if (strncmp(l, "nic ", 4) == 0 && ni < nn) {
			struct rdzv_topo_nic *n = &t->nics[ni];

			if (sscanf(l, "nic %63s %63s %d %d %d", a, b2, &n->port, &n->state, &n->fabric) != 5
			    || n->fabric < RDZV_FABRIC_IB || n->fabric > RDZV_FABRIC_SLINGSHOT
			    || rdzv_strlcpy(n->busid, a, sizeof(n->busid)) < 0
			    || rdzv_strlcpy(n->name, b2, sizeof(n->name)) < 0)
				break;
			ni++;
		} else if (strncmp(l, "near ", 5) == 0 && ri < ng && strlen(l + 5) == nn) {
			for (j = 0; j < nn; j++) {
				if (l[5 + j] < '0' || l[5 + j] > '0' + RDZV_NEAR_SYSTEM)
					break;
				t->near[ri * nn + j] = (unsigned char)(l[5 + j] - '0');
			}
			if (j < nn)
				break;
			ri++;
		} else if (strncmp(l, "core ", 5) == 0 && ci < nc) {
			if (read_bitmap(l + 5, t->cores[ci]) < 0)
				break;
			ci++;
		} else if (strncmp(l, "allowed ", 8) == 0 && !allowed) {
			if (read_bitmap(l + 8, t->allowed) < 0)
				break;
			allowed = 1;
		} else if (strcmp(l, "end") == 0) {
			end = 1;
			break;
		} else {
			break;
		}
	}
	if (!end || gi != ng || ni != nn || (nn && ri != ng) || ci != nc || !allowed) {
		rdzv_err(err, errlen, "line %zu: malformed or incomplete", lineno);
		goto fail;
	}
	for (i = 0; i < ng; i++)
		if (!t->gpus[i].busid[0])
			goto fail;
	*out = t;
	t = NULL;
	rv = 0;
fail:
	rdzv_topo_destroy(t);
	free(copy);
	return rv;
}

/* A name for xml's entry: FNV-1a of the path (the key inside holds the
 * path itself, so a collision is a miss, never a wrong table). */
static void entry_name(const char *dir, const char *xml, char *buf, size_t len)
{
	uint64_t h = 1469598103934665603ull;
	const unsigned char *p;

	for (p = (const unsigned char *)xml; *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	snprintf(buf, len, "%s/topo-%016llx.model", dir, (unsigned long long)h);
}

/* Root's own, not a link, writable by root only. */
static int trusted(const struct stat *st, mode_t type)
{
	return (st->st_mode & S_IFMT) == type && st->st_uid == 0 && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

static char *read_entry(const char *path, char *note, size_t notelen)
{
	struct stat st;
	char *text = NULL;
	ssize_t n;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0) {
		if (errno != ENOENT)
			snprintf(note, notelen, "cache %s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) < 0 || !trusted(&st, S_IFREG) || st.st_size <= 0
	    || (unsigned long long)st.st_size > CACHE_MAX) {
		snprintf(note, notelen, "cache %s not used: not a root-only regular file", path);
		goto fail;
	}
	if (!(text = malloc((size_t)st.st_size + 1)))
		goto fail;
	while (got < (size_t)st.st_size && (n = read(fd, text + got, (size_t)st.st_size - got)) > 0)
		got += (size_t)n;
	text[got] = '\0';
fail:
	close(fd);
	return text;
}

static int write_entry(const char *dir, const char *path, const char *text, char *note,
                       size_t notelen)
{
	char tmp[RDZV_CACHE_PATH_MAX];
	size_t len = strlen(text), done = 0;
	int fd;

	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp))
		return -1;
	if ((fd = mkstemp(tmp)) < 0) {
		snprintf(note, notelen, "cache %s: %s", dir, strerror(errno));
		return -1;
	}
	while (done < len) {
		ssize_t n = write(fd, text + done, len - done);

		if (n <= 0)
			break;
		done += (size_t)n;
	}
	if (done < len || fchmod(fd, 0644) < 0 || close(fd) < 0 || rename(tmp, path) < 0) {
		snprintf(note, notelen, "cache %s: cannot write: %s", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* The cache directory, created by root (0755) when missing; 0 when it is
 * trusted, -1 (reason in note) when not. */
static int cache_dir(const char *dir, int create, char *note, size_t notelen)
{
	struct stat st;

	if (lstat(dir, &st) < 0) {
		if (errno != ENOENT || !create || mkdir(dir, 0755) < 0 || lstat(dir, &st) < 0) {
			snprintf(note, notelen, "cache directory %s: %s", dir, strerror(errno));
			return -1;
		}
	}
	if (!trusted(&st, S_IFDIR)) {
		snprintf(note, notelen, "cache directory %s not used: not a root-only directory", dir);
		return -1;
	}
	return 0;
}

int rdzv_topo_load_cached(const char *xml, const char *dir, struct rdzv_topo **out,
                          enum rdzv_cache_outcome *how, char *note, size_t notelen, char *err,
                          size_t errlen)
{
	char key[RDZV_CACHE_PATH_MAX + 256], path[RDZV_CACHE_PATH_MAX], why[256];
	char *text = NULL;
	int root = geteuid() == 0, rc;

	*out = NULL;
	*how = RDZV_CACHE_OFF;
	if (notelen)
		note[0] = '\0';
	if (!xml || !dir || !*dir)
		return rdzv_topo_load(xml, out, err, errlen);
	*how = RDZV_CACHE_MISS;
	if (rdzv_topo_cache_key(xml, key, sizeof(key), err, errlen) < 0)
		return -1;
	if (strlen(dir) + 32 >= sizeof(path)) {
		snprintf(note, notelen, "cache directory %s: path too long", dir);
		return rdzv_topo_load(xml, out, err, errlen);
	}
	entry_name(dir, xml, path, sizeof(path));
	if (cache_dir(dir, root, note, notelen) < 0)
		return rdzv_topo_load(xml, out, err, errlen);
	if ((text = read_entry(path, note, notelen))) {
		rc = rdzv_topo_deserialize(text, key, out, why, sizeof(why));
		free(text);
		text = NULL;
		if (rc == 0) {
			*how = RDZV_CACHE_HIT;
			return 0;
		}
		if (rc < 0)
			snprintf(note, notelen, "cache %s: %s", path, why);
	}
	if (rdzv_topo_load(xml, out, err, errlen) < 0)
		return -1;
	if (!root) {
		if (!note[0])
			snprintf(note, notelen, "cache %s not written: only root writes the cache", path);
		return 0;
	}
	if (!(text = rdzv_topo_serialize(*out, key)))
		snprintf(note, notelen, "cache: out of memory");
	else if (write_entry(dir, path, text, note, notelen) == 0)
		*how = RDZV_CACHE_WRITTEN;
	free(text);
	return 0;
}
