/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/gpu/: the GPU vendors' libraries (NVML, ROCm SMI, opened at run time),
 * the NVLink fabric, the kernel's GPU fault lines (Xid). Uses lib/common/. */
/* rsmi.c: AMD GPUs' PCI address, xGMI hive and xGMI health through ROCm
 * SMI, loaded at run time (see rsmi.h). Only the documented ABI of
 * rocm_smi.h is declared here: the status (an enum the size of a uint32_t,
 * whose largest value is 0xFFFFFFFF), the xGMI status enum, and the
 * signatures of the calls made; rocm_smi.h itself is not needed to build. */
#include "config.h"
#include "gpulib.h"
#include "rsmi.h"
#include "util.h"

#include <dirent.h>
#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint32_t rsmi_ret; /* rsmi_status_t */

struct rsmi {
	void *lib;
	const char *path;
	rsmi_ret (*init)(uint64_t flags);
	rsmi_ret (*shut_down)(void);
	rsmi_ret (*count)(uint32_t *);
	rsmi_ret (*pci_id)(uint32_t, uint64_t *);
	rsmi_ret (*hive_id)(uint32_t, uint64_t *);
	rsmi_ret (*xgmi_status)(uint32_t, uint32_t *); /* rsmi_xgmi_status_t: an int enum */
	rsmi_ret (*unique_id)(uint32_t, uint64_t *);
	rsmi_ret (*name)(uint32_t, char *, size_t);
};

const char *rdzv_rsmi_status_name(unsigned rc)
{
	static const char *const names[] = {
		"success", "invalid arguments", "not supported", "file error", "permission denied",
		"out of resources", "internal exception", "input out of bounds", "initialization error",
		"not yet implemented", "not found", "insufficient size", "interrupted",
		"unexpected size", "no data", "unexpected data", "busy", "refcount overflow",
	};

	if (rc < sizeof(names) / sizeof(names[0]))
		return names[rc];
	return rc == RDZV_RSMI_UNKNOWN_ERROR ? "unknown error" : "unrecognised status";
}

void rdzv_rsmi_busid(uint64_t bdfid, char *buf, size_t len)
{
	snprintf(buf, len, "%04" PRIx64 ":%02x:%02x.%x", bdfid >> 32,
	         (unsigned)(bdfid >> 8) & 0xffu, (unsigned)(bdfid >> 3) & 0x1fu,
	         (unsigned)bdfid & 0x7u);
}

void rdzv_rsmi_gpu_name(const struct rdzv_rsmi_gpu *g, char *buf, size_t len)
{
	if (g->busid[0])
		snprintf(buf, len, "GPU %u (%s)", g->index, g->busid);
	else
		snprintf(buf, len, "GPU %u", g->index);
}

/* "xGMI hive 0x...", "no xGMI hive", or why it could not be read. */
static void hive_text(const struct rdzv_rsmi_gpu *g, char *buf, size_t len)
{
	if (g->hive_rc == 0 && g->hive)
		snprintf(buf, len, "xGMI hive 0x%" PRIx64, g->hive);
	else if (g->hive_rc == 0 || g->hive_rc == RDZV_RSMI_NOT_SUPPORTED)
		snprintf(buf, len, "no xGMI hive");
	else
		snprintf(buf, len, "xGMI hive unreadable: rsmi_dev_xgmi_hive_id_get: %s (status %u)",
		         rdzv_rsmi_status_name(g->hive_rc), g->hive_rc);
}

/* A fault of g's xGMI links, or NULL. */
static const char *xgmi_fault(const struct rdzv_rsmi_gpu *g)
{
	if (g->xgmi_rc != 0 || g->xgmi == RDZV_XGMI_NO_ERRORS)
		return NULL;
	if (g->xgmi == RDZV_XGMI_ERROR)
		return "xGMI error";
	if (g->xgmi == RDZV_XGMI_MULTIPLE_ERRORS)
		return "xGMI multiple errors";
	return "xGMI error status unknown to rdzv";
}

void rdzv_rsmi_gpu_line(const struct rdzv_rsmi_gpu *g, char *buf, size_t len)
{
	char name[160], hive[200], health[200], pci[160] = "";
	const char *fault = xgmi_fault(g);

	rdzv_rsmi_gpu_name(g, name, sizeof(name));
	if (g->pci_rc != 0)
		snprintf(pci, sizeof(pci), "bus id unreadable: rsmi_dev_pci_id_get: %s (status %u), ",
		         rdzv_rsmi_status_name(g->pci_rc), g->pci_rc);
	hive_text(g, hive, sizeof(hive));
	if (g->xgmi_rc == RDZV_RSMI_NOT_SUPPORTED)
		snprintf(health, sizeof(health), "xGMI health not reported");
	else if (g->xgmi_rc != 0)
		snprintf(health, sizeof(health), "xGMI health unreadable: rsmi_dev_xgmi_error_status: "
		         "%s (status %u)", rdzv_rsmi_status_name(g->xgmi_rc), g->xgmi_rc);
	else
		snprintf(health, sizeof(health), "%s", fault ? fault : "xGMI ok");
	snprintf(buf, len, "%s: %s%s%s%s, %s", name, pci, g->name[0] ? g->name : "",
	         g->name[0] ? ", " : "", hive, health);
}

static int try_open(struct rsmi *r, const char *path, char *why, size_t whylen)
{
	if (!(r->lib = rdzv_gpulib_open(path, why, whylen)))
		return -1;
	r->path = path;
	return 0;
}

static int rsmi_open(struct rsmi *r, const char *library, char *err, size_t errlen)
{
	const struct rdzv_gpulib_sym syms[] = {
		{ "rsmi_init", &r->init, 1 },
		{ "rsmi_shut_down", &r->shut_down, 1 },
		{ "rsmi_num_monitor_devices", &r->count, 1 },
		{ "rsmi_dev_pci_id_get", &r->pci_id, 1 },
		{ "rsmi_dev_xgmi_hive_id_get", &r->hive_id, 1 },
		{ "rsmi_dev_xgmi_error_status", &r->xgmi_status, 1 },
		{ "rsmi_dev_unique_id_get", &r->unique_id, 0 },
		{ "rsmi_dev_name_get", &r->name, 0 },
	};
	char why[512], why2[512];

	memset(r, 0, sizeof(*r));
	if (rdzv_gpulib_check_path("ROCm SMI", library, err, errlen) < 0)
		return -1;
	if (library && *library) {
		if (try_open(r, library, why, sizeof(why)) < 0)
			return rdzv_err(err, errlen, "no ROCm SMI: cannot load %s: %s (is ROCm installed "
			                "on this node?)", library, why);
	} else if (try_open(r, RDZV_RSMI_SONAME, why, sizeof(why)) < 0) {
		/* A ROCm tree under /opt/rocm may carry only the development
		 * name on the search path. */
		if (try_open(r, RDZV_RSMI_SONAME_DEV, why2, sizeof(why2)) < 0)
			return rdzv_err(err, errlen, "no ROCm SMI: cannot load %s: %s (nor %s; is ROCm "
			                "installed on this node?)", RDZV_RSMI_SONAME, why,
			                RDZV_RSMI_SONAME_DEV);
	}
	return rdzv_gpulib_syms(&r->lib, r->path, syms, sizeof(syms) / sizeof(syms[0]),
	                        "not a ROCm SMI library, or one too old for rdzv", err, errlen);
}

static void read_gpu(const struct rsmi *r, uint32_t i, struct rdzv_rsmi_gpu *g)
{
	uint64_t u = 0;
	uint32_t st = 0;
	char name[sizeof(g->name)];

	g->index = i;
	if ((g->pci_rc = r->pci_id(i, &u)) == 0) {
		g->bdfid = u;
		rdzv_rsmi_busid(u, g->busid, sizeof(g->busid));
	}
	u = 0;
	if ((g->hive_rc = r->hive_id(i, &u)) == 0)
		g->hive = u;
	if ((g->xgmi_rc = r->xgmi_status(i, &st)) == 0)
		g->xgmi = st;
	u = 0;
	/* MI300A reads its unique id as zero: that identifies nothing. */
	if (r->unique_id && r->unique_id(i, &u) == 0 && u) {
		g->have_unique = 1;
		g->unique_id = u;
	}
	memset(name, 0, sizeof(name));
	if (r->name && r->name(i, name, sizeof(name)) == 0) {
		size_t k;

		name[sizeof(name) - 1] = '\0';
		for (k = 0; name[k]; k++) /* one line per GPU, whatever the driver says */
			if ((unsigned char)name[k] < 0x20 || (unsigned char)name[k] == 0x7f)
				name[k] = ' ';
		snprintf(g->name, sizeof(g->name), "%s", name);
	}
}

int rdzv_rsmi_read(const char *library, struct rdzv_rsmi *out, char *err, size_t errlen)
{
	struct rsmi r;
	uint32_t count = 0, i;
	rsmi_ret rc;
	int rv = -1;

	memset(out, 0, sizeof(*out));
	if (rsmi_open(&r, library, err, errlen) < 0)
		return -1;
	if ((rc = r.init(0)) != 0) {
		rdzv_err(err, errlen, "ROCm SMI: rsmi_init failed: %s (status %u)",
		         rdzv_rsmi_status_name(rc), rc);
		/* Not dlclose'd: see below. */
		return -1;
	}
	if ((rc = r.count(&count)) != 0) {
		rdzv_err(err, errlen, "ROCm SMI: rsmi_num_monitor_devices failed: %s (status %u)",
		         rdzv_rsmi_status_name(rc), rc);
		goto out;
	}
	out->total = count;
	for (i = 0; i < count && i < RDZV_RSMI_GPUS_MAX; i++)
		read_gpu(&r, i, &out->gpu[out->n++]);
	rv = 0;
out:
	r.shut_down();
	/* Never dlclose'd inside slurmstepd: rsmi_init may leave threads of
	 * its own, as NVML may (fabric.c). */
	return rv;
}

/* In a hive: read, and not zero. */
static int in_hive(const struct rdzv_rsmi_gpu *g)
{
	return g->hive_rc == 0 && g->hive != 0;
}

int rdzv_rsmi_hive(const struct rdzv_rsmi *r, uint64_t *hive, char *err, size_t errlen)
{
	const struct rdzv_rsmi_gpu *first = NULL;
	char name[160], h[200];
	size_t off = 0;
	unsigned i, nout = 0;
	int mixed = 0;

	for (i = 0; i < r->n; i++) {
		const struct rdzv_rsmi_gpu *g = &r->gpu[i];

		if (!in_hive(g)) {
			nout++;
			continue;
		}
		if (!first)
			first = g;
		else if (g->hive != first->hive)
			mixed = 1;
	}
	if (!first)
		return 0;
	if (!mixed && nout == 0) {
		*hive = first->hive;
		return 1;
	}
	if (err && errlen)
		err[0] = '\0';
	rdzv_gpulib_append(err, errlen, &off, "the GPUs of this node are not in one xGMI hive:");
	for (i = 0; i < r->n; i++) {
		rdzv_rsmi_gpu_name(&r->gpu[i], name, sizeof(name));
		hive_text(&r->gpu[i], h, sizeof(h));
		rdzv_gpulib_append(err, errlen, &off, " %s %s;", name, h);
	}
	if (off && err[off - 1] == ';')
		err[off - 1] = '\0';
	return -1;
}

int rdzv_rsmi_xgmi_ok(const struct rdzv_rsmi *r, char *err, size_t errlen)
{
	char name[160];
	size_t off = 0;
	unsigned i;
	int bad = 0;

	if (err && errlen)
		err[0] = '\0';
	for (i = 0; i < r->n; i++) {
		const char *fault = xgmi_fault(&r->gpu[i]);

		if (!fault)
			continue;
		rdzv_rsmi_gpu_name(&r->gpu[i], name, sizeof(name));
		rdzv_gpulib_append(err, errlen, &off, "%s%s: %s", bad++ ? "; " : "", name, fault);
	}
	return bad ? -1 : 0;
}

/* A sysfs attribute holding one hex number ("0x1002\n"). */
static int read_hex(const char *path, unsigned long *v)
{
	char buf[32], *end;
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	*v = strtoul(buf, &end, 16);
	return end != buf ? 0 : -1;
}

unsigned rdzv_rsmi_pci_gpus(const char *sysfs)
{
	char dir[512], path[1024];
	struct dirent *de;
	unsigned n = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/bus/pci/devices", sysfs && *sysfs ? sysfs : "/sys");
	if (!(d = opendir(dir)))
		return 0;
	while ((de = readdir(d))) {
		unsigned long vendor, cls;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/vendor", dir, de->d_name);
		if (read_hex(path, &vendor) < 0 || vendor != 0x1002)
			continue;
		snprintf(path, sizeof(path), "%s/%s/class", dir, de->d_name);
		if (read_hex(path, &cls) < 0)
			continue;
		/* class is 0xCCSSPP: base class 0x03 display, 0x12 accelerator */
		if ((cls >> 16) == 0x03 || (cls >> 16) == 0x12)
			n++;
	}
	closedir(d);
	return n;
}
