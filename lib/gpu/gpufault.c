/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/gpu/: the GPU vendors' libraries (NVML, ROCm SMI, opened at run time),
 * the NVLink fabric, the kernel's GPU fault lines (Xid). Uses lib/common/. */
/* gpufault.c: GPU drivers' reports judged, the cursor; see gpufault.h. */
#include "config.h"
#include "gpufault.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *root_of(const char *root)
{
	return root && root[0] && strcmp(root, "/") != 0 ? root : "";
}

static int printable_word(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] == 0x7f)
			return 0;
	return n > 0;
}

int rdzv_gpu_cursor_parse(const char *text, size_t len, struct rdzv_gpu_cursor *c)
{
	const char *p = text, *end = text + len;

	memset(c, 0, sizeof(*c));
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl ? nl : end;
		char line[160], a[RDZV_BOOT_ID_MAX], b[RDZV_RAS_BLOCK_MAX];
		unsigned long long v;
		size_t n = (size_t)(le - p);
		int used = 0;

		if (n == 0)
			goto next;
		if (n >= sizeof(line) || memchr(p, '\0', n))
			goto bad;
		memcpy(line, p, n);
		line[n] = '\0';
		if (sscanf(line, "boot %39s%n", a, &used) == 1 && (size_t)used == n
		    && printable_word(a, strlen(a)))
			snprintf(c->boot, sizeof(c->boot), "%s", a);
		else if (sscanf(line, "seq %llu%n", &v, &used) == 1 && (size_t)used == n
		         && line[4] >= '0' && line[4] <= '9')
			c->seq = v;
		else if (c->nras < RDZV_RAS_MAX
		         && sscanf(line, "ras %15s %31s %llu%n", a, b, &v, &used) == 3
		         && (size_t)used == n && printable_word(a, strlen(a))
		         && printable_word(b, strlen(b))) {
			struct rdzv_ras_count *r = &c->ras[c->nras++];

			snprintf(r->pci, sizeof(r->pci), "%.15s", a);
			snprintf(r->block, sizeof(r->block), "%s", b);
			r->ue = v;
		} else {
			goto bad;
		}
next:
		p = nl ? nl + 1 : end;
	}
	return 0;
bad:
	memset(c, 0, sizeof(*c));
	return -1;
}

int rdzv_gpu_cursor_format(const struct rdzv_gpu_cursor *c, char *buf, size_t len)
{
	size_t o = 0, i;
	int n;

	n = snprintf(buf, len, "boot %s\nseq %llu\n", c->boot[0] ? c->boot : "-",
	             (unsigned long long)c->seq);
	if (n < 0 || (size_t)n >= len)
		return -1;
	o = (size_t)n;
	for (i = 0; i < c->nras; i++) {
		n = snprintf(buf + o, len - o, "ras %s %s %llu\n", c->ras[i].pci, c->ras[i].block,
		             (unsigned long long)c->ras[i].ue);
		if (n < 0 || (size_t)n >= len - o)
			return -1;
		o += (size_t)n;
	}
	return (int)o;
}

#define CURSOR_BYTES (RDZV_RAS_MAX * 80 + 256)

int rdzv_gpu_cursor_load(const char *path, struct rdzv_gpu_cursor *c, char *err, size_t errlen)
{
	char *text;
	int rc;

	memset(c, 0, sizeof(*c));
	if (access(path, F_OK) < 0 && errno == ENOENT)
		return 0;
	if (!(text = rdzv_read_head(path, CURSOR_BYTES)))
		return rdzv_err(err, errlen, "%s: cannot be read", path);
	rc = rdzv_gpu_cursor_parse(text, strlen(text), c);
	free(text);
	if (rc < 0)
		return rdzv_err(err, errlen, "%s: not a cursor (started again from nothing)", path);
	return 1;
}

int rdzv_gpu_cursor_save(const char *path, const struct rdzv_gpu_cursor *c, char *err,
                         size_t errlen)
{
	char text[CURSOR_BYTES], tmp[4200], dir[4096];
	const char *slash = strrchr(path, '/');
	int fd, n;

	if ((n = rdzv_gpu_cursor_format(c, text, sizeof(text))) < 0)
		return rdzv_err(err, errlen, "%s: the cursor does not fit", path);
	/* Its directory and those above it, root's (mkdir -p, 0700). */
	if (slash && slash != path && (size_t)(slash - path) < sizeof(dir)) {
		char *s;

		memcpy(dir, path, (size_t)(slash - path));
		dir[slash - path] = '\0';
		for (s = dir + 1;; s++) {
			char was = *s;

			if (was != '/' && was != '\0')
				continue;
			*s = '\0';
			if (mkdir(dir, 0700) < 0 && errno != EEXIST)
				return rdzv_err(err, errlen, "%s: %s", dir, strerror(errno));
			*s = was;
			if (!was)
				break;
		}
	}
	if (snprintf(tmp, sizeof(tmp), "%s.new", path) >= (int)sizeof(tmp))
		return rdzv_err(err, errlen, "%s: path too long", path);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600)) < 0)
		return rdzv_err(err, errlen, "%s: %s", tmp, strerror(errno));
	if (write(fd, text, (size_t)n) != n || fsync(fd) < 0) {
		close(fd);
		unlink(tmp);
		return rdzv_err(err, errlen, "%s: cannot be written", tmp);
	}
	close(fd);
	if (rename(tmp, path) < 0) {
		unlink(tmp);
		return rdzv_err(err, errlen, "%s: %s", path, strerror(errno));
	}
	return 0;
}

/* "ue: N" in a counter file. */
static int read_ue(const char *path, uint64_t *ue)
{
	char *text = rdzv_read_head(path, 256), *p;
	int rc = -1;

	if (text && (p = strstr(text, "ue:"))) {
		unsigned long long v;

		if (sscanf(p + 3, " %llu", &v) == 1) {
			*ue = v;
			rc = 0;
		}
	}
	free(text);
	return rc;
}

/* PCI_SLOT_NAME=0000:3b:00.0 of a card's uevent, as DDDD:BB:DD. */
static int card_pci(const char *base, const char *card, char pci[RDZV_PCI_MAX])
{
	char path[4096], *text, *p;
	int rc = -1;

	if (snprintf(path, sizeof(path), "%s/%s/device/uevent", base, card) >= (int)sizeof(path))
		return -1;
	if ((text = rdzv_read_head(path, 4096)) && (p = strstr(text, "PCI_SLOT_NAME="))) {
		size_t n = strcspn(p + 14, ".\n");

		if (n == 10 && printable_word(p + 14, n)) {
			size_t i;

			for (i = 0; i < n; i++)
				pci[i] = (char)(p[14 + i] >= 'A' && p[14 + i] <= 'F' ? p[14 + i] + 32
				                                                      : p[14 + i]);
			pci[n] = '\0';
			rc = 0;
		}
	}
	free(text);
	return rc;
}

size_t rdzv_ras_read(const char *root, struct rdzv_ras_count *v, size_t max)
{
	char base[4096];
	struct dirent *e;
	size_t n = 0;
	DIR *d;

	snprintf(base, sizeof(base), "%s/sys/class/drm", root_of(root));
	if (!(d = opendir(base)))
		return 0;
	while ((e = readdir(d)) && n < max) {
		char ras[4200], pci[RDZV_PCI_MAX];
		struct dirent *f;
		DIR *rd;

		/* cardN only: renderDN and the connectors (card0-DP-1) are the
		 * same device or none. */
		if (strncmp(e->d_name, "card", 4) != 0 || !e->d_name[4]
		    || strspn(e->d_name + 4, "0123456789") != strlen(e->d_name + 4))
			continue;
		if (card_pci(base, e->d_name, pci) < 0)
			continue;
		if (snprintf(ras, sizeof(ras), "%s/%.32s/device/ras", base, e->d_name)
		    >= (int)sizeof(ras) || !(rd = opendir(ras)))
			continue;
		while ((f = readdir(rd)) && n < max) {
			size_t l = strlen(f->d_name);
			char path[8400];

			if (l <= 10 || strcmp(f->d_name + l - 10, "_err_count") != 0
			    || l - 10 >= RDZV_RAS_BLOCK_MAX)
				continue;
			if (snprintf(path, sizeof(path), "%s/%.255s", ras, f->d_name) >= (int)sizeof(path))
				continue;
			if (read_ue(path, &v[n].ue) < 0)
				continue;
			snprintf(v[n].pci, sizeof(v[n].pci), "%s", pci);
			snprintf(v[n].block, sizeof(v[n].block), "%.*s", (int)(l - 10), f->d_name);
			n++;
		}
		closedir(rd);
	}
	closedir(d);
	return n;
}

/* Graver first: a node fault, then the action's weight, then earlier. */
static int graver(const struct rdzv_gpu_fault *a, const struct rdzv_gpu_fault *b)
{
	static const int weight[] = {
		[RDZV_XID_IGNORE] = 0,          [RDZV_XID_UNKNOWN] = 1,
		[RDZV_XID_RESTART_APP] = 2,     [RDZV_XID_CHECK_MECHANICALS] = 3,
		[RDZV_XID_CONTACT_SUPPORT] = 4, [RDZV_XID_DRAIN] = 5,
		[RDZV_XID_RESET_GPU] = 6,       [RDZV_XID_RESTART_VM] = 7,
		[RDZV_XID_RESTART_BM] = 8,
	};

	if (a->node_fault != b->node_fault)
		return a->node_fault > b->node_fault;
	if (weight[a->action] != weight[b->action])
		return weight[a->action] > weight[b->action];
	return a->ts_usec < b->ts_usec;
}

static void consider(struct rdzv_gpufault *out, const struct rdzv_gpu_fault *f)
{
	if (out->reports++ == 0 || graver(f, &out->worst))
		out->worst = *f;
	if (f->node_fault)
		out->node_faults++;
}

struct look {
	const struct rdzv_gpufault_req *r;
	struct rdzv_gpufault *out;
};

/* The generation of the GPU at pci: the driver's "Model:" line. */
static unsigned pci_generation(const char *root, const char *pci)
{
	char path[4096], *text, *m;
	unsigned gen = 0;

	snprintf(path, sizeof(path), "%s/proc/driver/nvidia/gpus/%s.0/information", root_of(root),
	         pci);
	if ((text = rdzv_read_head(path, 8192)) && (m = strstr(text, "Model:"))) {
		m[6 + strcspn(m + 6, "\n")] = '\0';
		gen = rdzv_gpu_generation(m + 6);
	}
	free(text);
	return gen;
}

static int on_xid(void *ctx, const struct rdzv_xid_report *x)
{
	struct look *l = ctx;
	const struct rdzv_xid_entry *e =
		rdzv_xid_lookup(l->r->table, x->xid, pci_generation(l->r->root, x->pci));
	struct rdzv_gpu_fault f;

	memset(&f, 0, sizeof(f));
	snprintf(f.pci, sizeof(f.pci), "%s", x->pci);
	f.xid = x->xid;
	f.ts_usec = x->ts_usec;
	f.action = e ? e->action : RDZV_XID_UNKNOWN;
	f.node_fault = rdzv_xid_node_fault(f.action);
	/* The table's meaning; for an Xid it does not know, the driver's. */
	snprintf(f.meaning, sizeof(f.meaning), "%.95s", e ? e->meaning : x->text);
	consider(l->out, &f);
	return 0;
}

static void boot_id(const char *root, char out[RDZV_BOOT_ID_MAX])
{
	char path[4096], *text;

	snprintf(path, sizeof(path), "%s/proc/sys/kernel/random/boot_id", root_of(root));
	out[0] = '\0';
	if ((text = rdzv_read_head(path, RDZV_BOOT_ID_MAX - 1))) {
		text[strcspn(text, "\n")] = '\0';
		if (printable_word(text, strlen(text)))
			snprintf(out, RDZV_BOOT_ID_MAX, "%s", text);
		free(text);
	}
}

void rdzv_gpu_cursor_baseline(const char *root, struct rdzv_gpu_cursor *c)
{
	memset(c, 0, sizeof(*c));
	boot_id(root, c->boot);
	c->nras = rdzv_ras_read(root, c->ras, RDZV_RAS_MAX);
}

static void look_ras(const struct rdzv_gpufault_req *r, struct rdzv_gpufault *out)
{
	struct rdzv_ras_count *now = calloc(RDZV_RAS_MAX, sizeof(*now));
	struct rdzv_gpu_cursor *c = r->cursor;
	size_t n, i, j;

	if (!now)
		return;
	n = rdzv_ras_read(r->root, now, RDZV_RAS_MAX);
	for (i = 0; i < n; i++) {
		uint64_t before = 0;
		int known = 0;

		for (j = 0; c && j < c->nras; j++)
			if (strcmp(c->ras[j].pci, now[i].pci) == 0
			    && strcmp(c->ras[j].block, now[i].block) == 0) {
				before = c->ras[j].ue;
				known = 1;
			}
		/* A counter seen for the first time is its own baseline: errors
		 * from before the node was watched are not this check's. */
		if (known && now[i].ue > before) {
			struct rdzv_gpu_fault f;

			memset(&f, 0, sizeof(f));
			snprintf(f.pci, sizeof(f.pci), "%s", now[i].pci);
			f.action = RDZV_XID_RESET_GPU;
			f.node_fault = 1;
			f.ue = now[i].ue - before;
			snprintf(f.meaning, sizeof(f.meaning), "%s", now[i].block);
			consider(out, &f);
		}
	}
	if (c) {
		memcpy(c->ras, now, n * sizeof(*now));
		c->nras = n;
	}
	free(now);
}

int rdzv_gpufault_look(const struct rdzv_gpufault_req *r, struct rdzv_gpufault *out)
{
	struct rdzv_kmsg_scan s = { 0 };
	struct look l = { r, out };
	char boot[RDZV_BOOT_ID_MAX], err[300];

	memset(out, 0, sizeof(*out));
	boot_id(r->root, boot);
	if (r->cursor && strcmp(r->cursor->boot, boot) != 0) {
		/* Another boot: its kernel log numbers from 0 again; the RAS
		 * counters too. */
		r->cursor->seq = 0;
		r->cursor->nras = 0;
		snprintf(r->cursor->boot, sizeof(r->cursor->boot), "%s", boot);
	}
	s.after_seq = r->cursor ? r->cursor->seq : 0;
	s.since_usec = r->since_usec;
	s.max_bytes = r->max_bytes;
	s.max_ms = r->max_ms;
	if (rdzv_kmsg_scan(r->kmsg ? r->kmsg : RDZV_KMSG_DEFAULT, &s, on_xid, &l, err,
	                   sizeof(err)) < 0)
		snprintf(out->note, sizeof(out->note), "kernel log not read: %.230s", err);
	else if (r->cursor)
		r->cursor->seq = s.last_seq;
	out->cut = s.cut;
	look_ras(r, out);
	return out->reports;
}

void rdzv_gpu_fault_words(const struct rdzv_gpu_fault *f, char *buf, size_t len)
{
	if (f->xid)
		snprintf(buf, len, "Xid %u, %s (%s)", f->xid, f->meaning,
		         rdzv_xid_action_name(f->action));
	else
		snprintf(buf, len, "an uncorrectable RAS error (%s, %llu new)", f->meaning,
		         (unsigned long long)f->ue);
}
