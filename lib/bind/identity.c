/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/bind/: the node's topology, each task's GPU, NICs and cores, the node
 * check and its GPU gate. Uses lib/modes/, lib/step/, lib/gpu/, lib/common/. */
/* identity.c: see identity.h. Reads small text files only; never logs. */
#include "config.h"
#include "identity.h"
#include "hostlist.h"
#include "util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <unistd.h>

#define NVIDIA_MAJOR 195     /* /dev/nvidiaN: char 195:N (NVIDIA's driver README) */
#define NVIDIA_MINOR_MAX 254 /* 255 is /dev/nvidiactl */
#define DRM_MAJOR 226        /* /dev/dri/cardN and renderDN: char 226:N (Linux devices.txt) */
#define DRM_MINOR_MAX 255
#define GRES_MAX (256u << 10)
#define INFO_MAX 8192
#define GRES_FILES_MAX 1024

const char *rdzv_id_source_name(enum rdzv_id_source s)
{
	switch (s) {
	case RDZV_ID_POSITION:
		return "position";
	case RDZV_ID_NVML:
		return "nvml-order";
	case RDZV_ID_DEVICE:
		return "device";
	case RDZV_ID_NAME:
		return "name";
	case RDZV_ID_RSMI:
		return "rsmi-order";
	}
	return "?";
}

void rdzv_identity_destroy(struct rdzv_identity *id)
{
	if (!id)
		return;
	free(id->v);
	free(id->proc);
	free(id);
}

static void join(const char *root, const char *path, char *buf, size_t len)
{
	if (!root || !*root || strcmp(root, "/") == 0)
		snprintf(buf, len, "%s", path);
	else
		snprintf(buf, len, "%s%s%s", root, path[0] == '/' ? "" : "/", path);
}

/* "0000:4E:00.0" or "00000000:4e:00.0" (nvidia-smi's form) -> "0000:4e:00.0". */
static int norm_busid(const char *s, char *out, size_t len)
{
	unsigned dom, bus, dev, fn;
	char tail;

	if (sscanf(s, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) != 4 || dom > 0xffff
	    || bus > 0xff || dev > 0x1f || fn > 7)
		return -1;
	return snprintf(out, len, "%04x:%02x:%02x.%x", dom, bus, dev, fn) < (int)len ? 0 : -1;
}

/* The topology GPU of a bus id; with several logical GPUs on one PCI
 * function (MI300 partitions), the nth of them. */
static int topo_gpu_nth(const struct rdzv_topo *t, const char *busid, unsigned nth)
{
	size_t i;

	for (i = 0; i < rdzv_topo_gpu_count(t); i++)
		if (strcmp(rdzv_topo_gpu_busid(t, i), busid) == 0 && nth-- == 0)
			return (int)i;
	return -1;
}

static int topo_gpu_of(const struct rdzv_topo *t, const char *busid)
{
	return topo_gpu_nth(t, busid, 0);
}

int rdzv_identity_positional(const struct rdzv_topo *t, const char *why,
                             struct rdzv_identity **out, char *err, size_t errlen)
{
	struct rdzv_identity *id = calloc(1, sizeof(*id));
	size_t i, n = rdzv_topo_gpu_count(t);

	*out = NULL;
	if (!id || (n && !(id->v = calloc(n, sizeof(*id->v))))) {
		rdzv_identity_destroy(id);
		return rdzv_err(err, errlen, "out of memory");
	}
	id->n = n;
	id->positional = 1;
	snprintf(id->why, sizeof(id->why), "%s", why ? why : "");
	for (i = 0; i < n; i++) {
		id->v[i].gpu = (int)i;
		id->v[i].minor = -1;
		snprintf(id->v[i].busid, sizeof(id->v[i].busid), "%s", rdzv_topo_gpu_busid(t, i));
		id->v[i].source = RDZV_ID_POSITION;
	}
	*out = id;
	return 0;
}

/* "Key:   value" of an information file, trimmed, or NULL. */
static const char *info_field(char *text, const char *key, char *buf, size_t len)
{
	char *l = text;
	size_t klen = strlen(key);

	while (l && *l) {
		char *nl = strchr(l, '\n');

		if (strncmp(l, key, klen) == 0 && l[klen] == ':') {
			const char *v = l + klen + 1;
			size_t n = nl ? (size_t)(nl - v) : strlen(v);

			while (n && (*v == ' ' || *v == '\t'))
				v++, n--;
			while (n && isspace((unsigned char)v[n - 1]))
				n--;
			if (n >= len)
				return NULL;
			memcpy(buf, v, n);
			buf[n] = '\0';
			return buf;
		}
		l = nl ? nl + 1 : NULL;
	}
	return NULL;
}

static int cmp_proc(const void *a, const void *b)
{
	return strcmp(((const struct rdzv_proc_gpu *)a)->busid,
	              ((const struct rdzv_proc_gpu *)b)->busid);
}

/* ROOT/rel opened for listing (its path in dir), or NULL with why set. */
static DIR *open_listing(const char *root, const char *rel, char *dir, size_t dirlen, char *why,
                         size_t whylen)
{
	DIR *d;

	join(root, rel, dir, dirlen);
	if (!(d = opendir(dir)))
		snprintf(why, whylen, "%.300s: %s", dir, strerror(errno));
	return d;
}

/* Append g to id->proc (capacity *cap). Returns 0, or -1 out of memory. */
static int push_gpu(struct rdzv_identity *id, size_t *cap, const struct rdzv_proc_gpu *g)
{
	if (id->nproc == *cap) {
		struct rdzv_proc_gpu *p = realloc(id->proc, (*cap = *cap * 2 + 8) * sizeof(*p));

		if (!p)
			return -1;
		id->proc = p;
	}
	id->proc[id->nproc++] = *g;
	return 0;
}

/* The NVIDIA driver's GPUs from ROOT/proc/driver/nvidia/gpus/BUSID/information. */
static int read_proc(const struct rdzv_topo *t, const char *root, struct rdzv_identity *id,
                     char *why, size_t whylen)
{
	char dir[RDZV_DEVPATH_MAX * 2], path[RDZV_DEVPATH_MAX * 3 + 300], val[RDZV_UUID_MAX];
	struct dirent *de;
	size_t cap = 0;
	DIR *d;

	if (!(d = open_listing(root, "/proc/driver/nvidia/gpus", dir, sizeof(dir), why, whylen)))
		return -1;
	while ((de = readdir(d))) {
		struct rdzv_proc_gpu g = { .minor = -1, .gpu = -1 };
		char *text;
		uint64_t m;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/information", dir, de->d_name);
		if (!(text = rdzv_read_head(path, INFO_MAX)))
			continue;
		if (norm_busid(info_field(text, "Bus Location", val, sizeof(val)) ? val : de->d_name,
		               g.busid, sizeof(g.busid)) == 0
		    && info_field(text, "Device Minor", val, sizeof(val))
		    && rdzv_parse_u64(val, 0, NVIDIA_MINOR_MAX, &m) == 0) {
			g.minor = (int)m;
			if (info_field(text, "GPU UUID", val, sizeof(val)))
				snprintf(g.uuid, sizeof(g.uuid), "%s", val);
			g.gpu = topo_gpu_of(t, g.busid);
			if (push_gpu(id, &cap, &g) < 0) {
				free(text);
				closedir(d);
				return -2;
			}
		}
		free(text);
	}
	closedir(d);
	if (id->nproc)
		qsort(id->proc, id->nproc, sizeof(*id->proc), cmp_proc);
	if (!id->nproc) {
		snprintf(why, whylen, "%.300s: no GPU with a Device Minor", dir);
		return -1;
	}
	return 0;
}

/* "renderDN" or "cardN" (a DRM node, not a connector like card0-DP-1):
 * its minor, else -1. */
static int drm_minor_of_name(const char *name)
{
	const char *d;
	uint64_t m;

	if (strncmp(name, "renderD", 7) == 0)
		d = name + 7;
	else if (strncmp(name, "card", 4) == 0)
		d = name + 4;
	else
		return -1;
	if (!isdigit((unsigned char)*d) || rdzv_parse_u64(d, 0, DRM_MINOR_MAX, &m) < 0)
		return -1;
	return (int)m;
}

static int cmp_minor(const void *a, const void *b)
{
	return ((const struct rdzv_proc_gpu *)a)->minor - ((const struct rdzv_proc_gpu *)b)->minor;
}

/* The DRM nodes of ROOT/sys/class/drm and the PCI function each belongs
 * to (its "device" link ends in the bus id). The k-th render node (and
 * the k-th card node) of a function, in minor order, is its k-th logical
 * GPU. Returns 0, -1 with why set when nothing was found, -2 out of memory. */
static int read_drm(const struct rdzv_topo *t, const char *root, struct rdzv_identity *id,
                    char *why, size_t whylen)
{
	char dir[RDZV_DEVPATH_MAX * 2], path[RDZV_DEVPATH_MAX * 3 + 300], link[RDZV_DEVPATH_MAX];
	struct dirent *de;
	size_t cap = 0, i, j;
	DIR *d;

	if (!(d = open_listing(root, "/sys/class/drm", dir, sizeof(dir), why, whylen)))
		return -1;
	while ((de = readdir(d))) {
		struct rdzv_proc_gpu g = { .minor = -1, .gpu = -1 };
		const char *base;
		ssize_t n;

		if ((g.minor = drm_minor_of_name(de->d_name)) < 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s/device", dir, de->d_name);
		if ((n = readlink(path, link, sizeof(link) - 1)) <= 0)
			continue;
		link[n] = '\0';
		base = strrchr(link, '/');
		if (norm_busid(base ? base + 1 : link, g.busid, sizeof(g.busid)) < 0)
			continue;
		if (push_gpu(id, &cap, &g) < 0) {
			closedir(d);
			return -2;
		}
	}
	closedir(d);
	if (!id->nproc) {
		snprintf(why, whylen, "%.300s: no DRM node (renderDN, cardN) of a PCI device", dir);
		return -1;
	}
	qsort(id->proc, id->nproc, sizeof(*id->proc), cmp_minor);
	for (i = 0; i < id->nproc; i++) {
		unsigned nth = 0;

		/* card and render nodes are numbered apart (cards from 0,
		 * render nodes from 128): count within the same kind. */
		for (j = 0; j < i; j++)
			nth += strcmp(id->proc[j].busid, id->proc[i].busid) == 0
			       && (id->proc[j].minor >= 128) == (id->proc[i].minor >= 128);
		id->proc[i].gpu = topo_gpu_nth(t, id->proc[i].busid, nth);
	}
	return 0;
}

/* gres.conf keys are case-insensitive; a value runs to the next blank. */
static const char *gres_value(const char *line, const char *key, char *buf, size_t len)
{
	const char *p = line;
	size_t klen = strlen(key);

	while (*p) {
		const char *end;
		size_t n;

		while (*p == ' ' || *p == '\t')
			p++;
		end = p;
		while (*end && *end != ' ' && *end != '\t')
			end++;
		if ((size_t)(end - p) > klen && strncasecmp(p, key, klen) == 0 && p[klen] == '=') {
			n = (size_t)(end - p) - klen - 1;
			if (n >= len)
				return NULL;
			memcpy(buf, p + klen + 1, n);
			buf[n] = '\0';
			return buf;
		}
		p = end;
	}
	return NULL;
}

/* Whether a gres.conf NodeName= list names this node. Never walks the list
 * host by host: "NodeName=gpu[0001-9999]" costs what "gpu1" does (a walk
 * took forever on a list of 10^11 names, found by tests/fuzz/fuzz-identity). */
static int node_matches(const char *list, const char *node)
{
	if (!list)
		return 1;
	return node && rdzv_hostlist_has(list, node, NULL, 0) == 1;
}

static int is_amd_dev(const char *file)
{
	const char *b = strrchr(file, '/');

	return drm_minor_of_name(b ? b + 1 : file) >= 0;
}

static int is_nvidia_dev(const char *file)
{
	const char *b = strrchr(file, '/');

	b = b ? b + 1 : file;
	if (strncmp(b, "nvidia", 6) != 0 || !b[6])
		return 0;
	for (b += 6; *b; b++)
		if (!isdigit((unsigned char)*b))
			return 0;
	return 1;
}

/* The GPU device files of this node in Slurm's order (gres.c:
 * gres_node_config_load: one index per file, per line in file order; a
 * MultipleFiles= line is one device, whose GPU is its /dev/nvidiaN).
 * Returns the count, 0 with why set when Slurm's order is not the files'
 * (AutoDetect=nvml), -1 with why set when gres.conf cannot be used. */
long rdzv_gres_gpu_files(const char *conf, const char *node, int amd,
                       char (**files)[RDZV_DEVPATH_MAX], int *nvml, char *why, size_t whylen)
{
	char path[RDZV_DEVPATH_MAX * 2], val[4096], node_val[1024], one[RDZV_DEVPATH_MAX];
	char *text, *l, *next;
	char (*v)[RDZV_DEVPATH_MAX] = NULL;
	long n = 0, cap = 0, lineno = 0;
	int autodetect_nvml = 0;

	*files = NULL;
	*nvml = 0;
	snprintf(path, sizeof(path), "%s", conf);
	if (!(text = rdzv_read_head(path, GRES_MAX))) {
		snprintf(why, whylen, "gres.conf %.300s: %s", path, strerror(errno ? errno : EIO));
		return -1;
	}
	for (l = text; l && *l; l = next) {
		const char *name, *nodes, *file, *multi, *ad;
		long cnt, i, added = 0;
		char *hash;

		lineno++;
		if ((next = strchr(l, '\n')))
			*next++ = '\0';
		if ((hash = strchr(l, '#')))
			*hash = '\0';
		nodes = gres_value(l, "NodeName", node_val, sizeof(node_val));
		if (!node_matches(nodes, node))
			continue;
		if ((ad = gres_value(l, "AutoDetect", val, sizeof(val)))
		    && strcasecmp(ad, amd ? "rsmi" : "nvml") == 0)
			autodetect_nvml = 1;
		else if (ad && nodes)
			autodetect_nvml = 0; /* a node's own AutoDetect= overrides the global one */
		if (strncasecmp(l + strspn(l, " \t"), "include", 7) == 0) {
			snprintf(why, whylen, "gres.conf %.300s:%ld: Include is not followed", path, lineno);
			goto refuse;
		}
		if (!(name = gres_value(l, "Name", one, sizeof(one))) || strcasecmp(name, "gpu") != 0)
			continue;
		multi = gres_value(l, "MultipleFiles", val, sizeof(val));
		file = multi ? multi : gres_value(l, "File", val, sizeof(val));
		if (!file)
			continue;
		if ((cnt = rdzv_hostlist_count(file, NULL, 0)) < 0 || cnt > GRES_FILES_MAX) {
			snprintf(why, whylen, "gres.conf %.300s:%ld: cannot read File=%.150s", path, lineno,
			         file);
			goto refuse;
		}
		for (i = 0; i < cnt; i++) {
			if (rdzv_hostlist_nth(file, (size_t)i, one, sizeof(one), NULL, 0) < 0)
				goto refuse;
			/* MultipleFiles: one device, named by its GPU's file. */
			if (multi && (added || !(amd ? is_amd_dev(one) : is_nvidia_dev(one))))
				continue;
			if (n == cap) {
				char (*p)[RDZV_DEVPATH_MAX] = realloc(v, (size_t)(cap = cap * 2 + 8) * sizeof(*v));

				if (!p)
					goto refuse;
				v = p;
			}
			snprintf(v[n++], sizeof(v[0]), "%s", one);
			added = 1;
		}
	}
	free(text);
	if (autodetect_nvml) {
		free(v);
		*nvml = 1;
		snprintf(why, whylen, "gres.conf %.300s: AutoDetect=%s: Slurm numbers GPUs in %s's "
		         "order, which is PCI bus-id order", path, amd ? "rsmi" : "nvml",
		         amd ? "ROCm SMI" : "NVML");
		return 0;
	}
	if (n == 0) {
		snprintf(why, whylen, "gres.conf %.300s: no Name=gpu File= for node %.64s", path,
		         node ? node : "(unknown)");
		free(v);
		return -1;
	}
	*files = v;
	return n;
refuse:
	free(text);
	free(v);
	return -1;
}

/* Minor of a device file: the device node's own, else from its name
 * (nvidiaN; on AMD nodes renderDN, cardN). */
static int file_minor(const char *file, int amd, enum rdzv_id_source *src)
{
	struct stat st;
	const char *b;

	if (stat(file, &st) == 0 && S_ISCHR(st.st_mode)) {
		if (major(st.st_rdev) != (amd ? DRM_MAJOR : NVIDIA_MAJOR))
			return -1;
		*src = RDZV_ID_DEVICE;
		return (int)minor(st.st_rdev);
	}
	b = strrchr(file, '/');
	b = b ? b + 1 : file;
	*src = RDZV_ID_NAME;
	if (amd)
		return drm_minor_of_name(b);
	if (!is_nvidia_dev(file))
		return -1;
	return atoi(b + 6);
}

/* sysfs's vendor of a PCI function: 1 the expected one (NVIDIA, or AMD),
 * 0 absent, -1 another vendor. */
static int sysfs_vendor(const char *root, const char *busid, int amd)
{
	char p[RDZV_DEVPATH_MAX * 2], rel[128];
	char *text;
	int rv;

	snprintf(rel, sizeof(rel), "/sys/bus/pci/devices/%s/vendor", busid);
	join(root, rel, p, sizeof(p));
	if (!(text = rdzv_read_head(p, 64)))
		return 0;
	rv = strtoul(text, NULL, 16) == (amd ? 0x1002 : 0x10de) ? 1 : -1;
	free(text);
	return rv;
}

int rdzv_identity_read(const struct rdzv_topo *t, const struct rdzv_identity_req *req,
                       struct rdzv_identity **out, char *err, size_t errlen)
{
	char why[512] = "";
	char (*files)[RDZV_DEVPATH_MAX] = NULL;
	struct rdzv_identity *id = NULL;
	long nf = -1, k;
	size_t j;
	int nvml = 0, rc, amd = rdzv_topo_gpus_amd(t);

	*out = NULL;
	if (!(id = calloc(1, sizeof(*id))))
		return rdzv_err(err, errlen, "out of memory");
	id->amd = amd;
	rc = amd ? read_drm(t, req->root, id, why, sizeof(why))
	         : read_proc(t, req->root, id, why, sizeof(why));
	if (rc == -2)
		goto oom;
	if (rc == 0) {
		if (!req->gres_conf)
			snprintf(why, sizeof(why), "no gres.conf known");
		else
			nf = rdzv_gres_gpu_files(req->gres_conf, req->node, amd, &files, &nvml, why,
			                sizeof(why));
	}
	if (nf > 0) {
		if (!(id->v = calloc((size_t)nf, sizeof(*id->v))))
			goto oom;
		id->n = (size_t)nf;
		for (k = 0; k < nf && !why[0]; k++) {
			struct rdzv_gpu_id *g = &id->v[k];
			const struct rdzv_proc_gpu *p = NULL;
			int vend;

			snprintf(g->file, sizeof(g->file), "%s", files[k]);
			g->gpu = -1;
			if ((g->minor = file_minor(files[k], amd, &g->source)) < 0) {
				snprintf(why, sizeof(why), "GPU %ld: File=%.200s is not %s", k, files[k],
				         amd ? "an AMD GPU's DRM node (char 226:N, renderDN or cardN)"
				             : "an NVIDIA device (char 195:N or nvidiaN)");
				break;
			}
			for (j = 0; j < id->nproc && !p; j++)
				if (id->proc[j].minor == g->minor)
					p = &id->proc[j];
			if (!p) {
				snprintf(why, sizeof(why), "GPU %ld: no %s with %s %d (File=%.200s)", k,
				         amd ? "/sys/class/drm/*/device" : "/proc/driver/nvidia/gpus/*/information",
				         amd ? "minor" : "Device Minor", g->minor, files[k]);
				break;
			}
			snprintf(g->busid, sizeof(g->busid), "%s", p->busid);
			snprintf(g->uuid, sizeof(g->uuid), "%s", p->uuid);
			if ((vend = sysfs_vendor(req->root, g->busid, amd)) < 0) {
				snprintf(why, sizeof(why), "GPU %ld: sysfs says %s is not an %s device", k,
				         g->busid, amd ? "AMD" : "NVIDIA");
				break;
			}
			g->sysfs = vend > 0 || amd; /* AMD's bus id came from sysfs itself */
			if ((g->gpu = p->gpu) < 0) {
				snprintf(why, sizeof(why), "GPU %ld: bus id %s (minor %d) is not a%s GPU of "
				         "the topology", k, g->busid, g->minor, amd ? "n AMD" : " CUDA");
				break;
			}
		}
	}
	free(files);
	if (nf > 0 && !why[0]) {
		snprintf(id->why, sizeof(id->why), "gres.conf %.300s", req->gres_conf);
		*out = id;
		return 0;
	}
	/* Positional: keep what /proc said (UUID lookups still work). */
	{
		struct rdzv_identity *pos = NULL;

		if (rdzv_identity_positional(t, why, &pos, err, errlen) < 0)
			goto fail;
		pos->proc = id->proc;
		pos->nproc = id->nproc;
		id->proc = NULL;
		for (j = 0; j < pos->n; j++) {
			size_t q;

			if (nvml)
				pos->v[j].source = amd ? RDZV_ID_RSMI : RDZV_ID_NVML;
			for (q = 0; q < pos->nproc; q++)
				if (pos->proc[q].gpu == (int)j) {
					pos->v[j].minor = pos->proc[q].minor;
					snprintf(pos->v[j].uuid, sizeof(pos->v[j].uuid), "%s", pos->proc[q].uuid);
				}
		}
		pos->positional = !nvml;
		pos->amd = amd;
		rdzv_identity_destroy(id);
		*out = pos;
		return 0;
	}
oom:
	rdzv_err(err, errlen, "out of memory");
fail:
	free(files);
	rdzv_identity_destroy(id);
	return -1;
}

int rdzv_identity_gpu(const struct rdzv_identity *id, unsigned long k)
{
	return id && k < id->n ? id->v[k].gpu : -1;
}

int rdzv_is_uuid(const char *s)
{
	return strncmp(s, "GPU-", 4) == 0 || strncmp(s, "MIG-", 4) == 0;
}

int rdzv_identity_uuid(const struct rdzv_identity *id, const char *uuid)
{
	char parent[RDZV_UUID_MAX];
	const char *u = uuid;
	size_t i;

	if (!id)
		return -1;
	/* MIG-GPU-<uuid>/<gi>/<ci> (drivers before R470): the parent is named. */
	if (strncmp(u, "MIG-GPU-", 8) == 0) {
		const char *slash = strchr(u, '/');
		size_t n = slash ? (size_t)(slash - u - 4) : strlen(u) - 4;

		if (n >= sizeof(parent))
			return -1;
		memcpy(parent, u + 4, n);
		parent[n] = '\0';
		u = parent;
	} else if (strncmp(u, "GPU-", 4) != 0) {
		return -1;
	}
	for (i = 0; i < id->nproc; i++)
		if (id->proc[i].uuid[0] && strcasecmp(id->proc[i].uuid, u) == 0)
			return id->proc[i].gpu;
	return -1;
}

size_t rdzv_identity_cgroup_gpus(const struct rdzv_identity *id, const char *root, int *gpus,
                                 size_t max)
{
	char p[RDZV_DEVPATH_MAX * 4], rel[RDZV_DEVPATH_MAX * 2];
	char *text, *l, *next, *cg = NULL;
	size_t n = 0, j;

	if (!id)
		return 0;
	join(root, "/proc/self/cgroup", p, sizeof(p));
	if (!(text = rdzv_read_head(p, 8192)))
		return 0;
	for (l = text; l && *l && !cg; l = next) {
		char *d;

		if ((next = strchr(l, '\n')))
			*next++ = '\0';
		/* "N:devices:/slurm/uid_U/job_J/step_S/task_T" */
		if ((d = strstr(l, ":devices:")) && strstr(d, "/step_"))
			cg = d + 9;
	}
	if (!cg || strstr(cg, "..") || snprintf(rel, sizeof(rel), "/sys/fs/cgroup/devices%s/devices.list",
	                                       cg) >= (int)sizeof(rel)) {
		free(text);
		return 0;
	}
	free(text);
	join(root, rel, p, sizeof(p));
	if (!(text = rdzv_read_head(p, 65536)))
		return 0;
	for (l = text; l && *l; l = next) {
		unsigned maj, min;
		char type;

		if ((next = strchr(l, '\n')))
			*next++ = '\0';
		if (l[0] == 'a') { /* "a *:* rwm": everything allowed, nothing learnt */
			n = 0;
			break;
		}
		if (sscanf(l, "%c %u:%u", &type, &maj, &min) != 3 || type != 'c'
		    || maj != (id->amd ? DRM_MAJOR : NVIDIA_MAJOR)
		    || min > (id->amd ? DRM_MINOR_MAX : NVIDIA_MINOR_MAX))
			continue;
		for (j = 0; j < id->nproc; j++)
			if (id->proc[j].minor == (int)min && id->proc[j].gpu >= 0 && n < max)
				gpus[n++] = id->proc[j].gpu;
	}
	free(text);
	return n;
}

int rdzv_identity_format(const struct rdzv_identity *id, size_t g, char *buf, size_t len)
{
	size_t k;
	int n = -1;

	for (k = 0; k < id->n; k++)
		if (id->v[k].gpu == (int)g)
			break;
	if (k == id->n)
		n = snprintf(buf, len, "not one of Slurm's GPUs on this node");
	else if (id->v[k].source == RDZV_ID_DEVICE || id->v[k].source == RDZV_ID_NAME)
		n = snprintf(buf, len, "slurm %zu file %s minor %d busid %s source %s+%s", k,
		             id->v[k].file, id->v[k].minor, id->v[k].busid,
		             rdzv_id_source_name(id->v[k].source),
		             id->amd ? "sysfs" : id->v[k].sysfs ? "proc+sysfs" : "proc");
	else if (id->v[k].minor >= 0)
		n = snprintf(buf, len, "slurm %zu minor %d busid %s source %s", k, id->v[k].minor,
		             id->v[k].busid, rdzv_id_source_name(id->v[k].source));
	else
		n = snprintf(buf, len, "slurm %zu busid %s source %s", k, id->v[k].busid,
		             rdzv_id_source_name(id->v[k].source));
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

const char *rdzv_gres_conf_path(const char *given, char *buf, size_t len)
{
	const char *conf = getenv("SLURM_CONF"), *slash;

	if (given && given[0])
		return given;
	if (conf && conf[0] == '/' && (slash = strrchr(conf, '/'))
	    && snprintf(buf, len, "%.*s/gres.conf", (int)(slash - conf), conf) < (int)len)
		return buf;
	return "/etc/slurm/gres.conf";
}
