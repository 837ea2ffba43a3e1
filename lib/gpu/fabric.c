/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/gpu/: the GPU vendors' libraries (NVML, ROCm SMI, opened at run time),
 * the NVLink fabric, the kernel's GPU fault lines (Xid). Uses lib/common/. */
/* fabric.c: NVLink fabric info through NVML, loaded at run time (see
 * fabric.h). Only the documented ABI of nvml.h is declared here: the
 * return type (an int-sized enum), the opaque device handle, and the
 * structs this file reads; nvml.h itself is not needed to build. */
#include "config.h"
#include "fabric.h"
#include "gpulib.h"
#include "util.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvml_ret;                 /* nvmlReturn_t */
typedef struct nvml_device *nvml_dev; /* nvmlDevice_t */

/* nvmlGpuFabricInfo_t (v1): no version field. */
struct nvml_fabric_v1 {
	unsigned char cluster_uuid[16];
	nvml_ret status;
	unsigned clique_id;
	unsigned char state; /* nvmlGpuFabricState_t: unsigned char */
	unsigned char pad_[3];
};

/* nvmlGpuFabricInfo_v2_t */
struct nvml_fabric_v2 {
	unsigned version;
	unsigned char cluster_uuid[16];
	nvml_ret status;
	unsigned clique_id;
	unsigned char state;
	unsigned char pad_[3];
	unsigned health_mask;
};

/* nvmlGpuFabricInfo_v3_t */
struct nvml_fabric_v3 {
	unsigned version;
	unsigned char cluster_uuid[16];
	nvml_ret status;
	unsigned clique_id;
	unsigned char state;
	unsigned char pad_[3];
	unsigned health_mask;
	unsigned char health_summary;
};

/* nvml.h's NVML_STRUCT_VERSION: the versions NVML checks against its own
 * sizes, so the layouts above must match to the byte. */
#define STRUCT_VERSION(type, v) ((unsigned)(sizeof(type) | ((unsigned)(v) << 24)))
_Static_assert(sizeof(struct nvml_fabric_v1) == 28, "nvmlGpuFabricInfo_t is 28 bytes");
_Static_assert(STRUCT_VERSION(struct nvml_fabric_v2, 2) == 0x02000024u, "nvmlGpuFabricInfo_v2");
_Static_assert(STRUCT_VERSION(struct nvml_fabric_v3, 3) == 0x03000028u, "nvmlGpuFabricInfo_v3");

/* nvmlPciInfo_t as nvmlDeviceGetPciInfo_v3 fills it: busIdLegacy[16],
 * five unsigned ints (domain, bus, device, pciDeviceId, pciSubSystemId),
 * then busId[32], the only field read. */
#define PCI_BUS_ID_OFFSET 36
#define PCI_BUS_ID_LEN 32

#define UUID_BUF 96  /* NVML_DEVICE_UUID_V2_BUFFER_SIZE */

struct nvml {
	void *lib;
	nvml_ret (*init)(void);
	nvml_ret (*shutdown)(void);
	nvml_ret (*count)(unsigned *);
	nvml_ret (*handle)(unsigned, nvml_dev *);
	nvml_ret (*uuid)(nvml_dev, char *, unsigned);
	nvml_ret (*pci)(nvml_dev, void *);
	nvml_ret (*fabric_v)(nvml_dev, void *);         /* nvmlDeviceGetGpuFabricInfoV */
	nvml_ret (*fabric_v1)(nvml_dev, struct nvml_fabric_v1 *);
};

const char *rdzv_nvml_error_name(int rc)
{
	static const char *const names[] = {
		"success", "uninitialized", "invalid argument", "not supported", "no permission",
		"already initialized", "not found", "insufficient size", "insufficient power",
		"driver not loaded", "timeout", "interrupt request issue", "library not found",
		"function not found", "corrupted inforom", "GPU is lost", "reset required",
		"operating system call failed", "driver/library version mismatch", "in use",
		"insufficient memory", "no data", "vGPU ECC not supported", "insufficient resources",
		"frequency not supported", "argument version mismatch", "deprecated", "not ready",
		"GPU not found", "invalid state",
	};

	if (rc >= 0 && (size_t)rc < sizeof(names) / sizeof(names[0]))
		return names[rc];
	return rc == 999 ? "unknown error" : "unrecognised error";
}

const char *rdzv_fabric_state_name(unsigned state)
{
	switch (state) {
	case RDZV_FABRIC_NOT_SUPPORTED:
		return "not supported";
	case RDZV_FABRIC_NOT_STARTED:
		return "not started";
	case RDZV_FABRIC_IN_PROGRESS:
		return "in progress";
	case RDZV_FABRIC_COMPLETED:
		return "completed";
	}
	return "unknown state";
}

void rdzv_fabric_uuid_text(const unsigned char u[16], char *buf, size_t len)
{
	snprintf(buf, len, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
	         u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
	         u[13], u[14], u[15]);
}

static void add_word(char *buf, size_t len, size_t *off, int *n, const char *w)
{
	int k;

	if (*off >= len)
		return;
	k = snprintf(buf + *off, len - *off, "%s%s", *n ? ", " : "", w);
	if (k > 0)
		*off += (size_t)k < len - *off ? (size_t)k : len - *off - 1;
	(*n)++;
}

int rdzv_fabric_health_faults(unsigned mask, int have_summary, unsigned summary, char *buf,
                              size_t len)
{
	/* The 2-bit fields: value 1 (..._TRUE) is the fault. */
	static const struct {
		unsigned shift;
		const char *what;
	} bits[] = {
		{ 0, "degraded bandwidth" },
		{ 2, "route recovery in progress" },
		{ 4, "route unhealthy" },
		{ 6, "access timeout recovery in progress" },
	};
	static const char *const config[] = {
		NULL, NULL, "incorrect configuration: wrong system GUID",
		"incorrect configuration: wrong chassis serial number",
		"incorrect configuration: no partition",
		"incorrect configuration: insufficient NVLinks",
	};
	size_t off = 0, i;
	unsigned c = (mask >> 8) & 0xfu;
	int n = 0;

	if (len)
		buf[0] = '\0';
	for (i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
		if (((mask >> bits[i].shift) & 0x3u) == 1u)
			add_word(buf, len, &off, &n, bits[i].what);
	if (c >= 2 && c < sizeof(config) / sizeof(config[0]))
		add_word(buf, len, &off, &n, config[c]);
	else if (c >= sizeof(config) / sizeof(config[0]))
		add_word(buf, len, &off, &n, "incorrect configuration (a code newer than rdzv)");
	if (have_summary && summary == 2)
		add_word(buf, len, &off, &n, "health summary unhealthy");
	else if (have_summary && summary == 3)
		add_word(buf, len, &off, &n, "health summary limited capacity");
	return n;
}

void rdzv_fabric_gpu_name(const struct rdzv_fabric_gpu *g, char *buf, size_t len)
{
	if (g->busid[0])
		snprintf(buf, len, "GPU %u (%s)", g->index, g->busid);
	else if (g->uuid[0])
		snprintf(buf, len, "GPU %u (%s)", g->index, g->uuid);
	else
		snprintf(buf, len, "GPU %u", g->index);
}

void rdzv_fabric_gpu_line(const struct rdzv_fabric_gpu *g, char *buf, size_t len)
{
	char name[160], uuid[RDZV_FABRIC_UUID_TEXT], faults[256], health[300];

	rdzv_fabric_gpu_name(g, name, sizeof(name));
	if (g->skipped) {
		snprintf(buf, len, "%s: not accessible to this process (NVML: %s): not read", name,
		         rdzv_nvml_error_name(g->query_rc));
		return;
	}
	if (g->query_rc == RDZV_NVML_ERROR_NOT_SUPPORTED
	    || (g->query_rc == 0 && g->state == RDZV_FABRIC_NOT_SUPPORTED)) {
		snprintf(buf, len, "%s: not supported (no NVLink fabric)", name);
		return;
	}
	if (g->query_rc != 0) {
		snprintf(buf, len, "%s: fabric info unreadable: NVML error %d (%s)", name, g->query_rc,
		         rdzv_nvml_error_name(g->query_rc));
		return;
	}
	rdzv_fabric_uuid_text(g->cluster, uuid, sizeof(uuid));
	if (!g->have_health)
		snprintf(health, sizeof(health), "health not reported (fabric info v%u)", g->version);
	else if (rdzv_fabric_health_faults(g->health_mask, g->have_summary, g->summary, faults,
	                                   sizeof(faults)) > 0)
		snprintf(health, sizeof(health), "health: %s", faults);
	else
		snprintf(health, sizeof(health), "health ok");
	snprintf(buf, len, "%s: cluster %s, clique %u, state %s%s%s, %s", name, uuid, g->clique,
	         rdzv_fabric_state_name(g->state), g->status ? ", status " : "",
	         g->status ? rdzv_nvml_error_name(g->status) : "", health);
}

static int nvml_open(struct nvml *n, const char *library, char *err, size_t errlen)
{
	const char *path = library && *library ? library : RDZV_NVML_SONAME;
	const struct rdzv_gpulib_sym syms[] = {
		{ "nvmlInit_v2", &n->init, 1 },
		{ "nvmlShutdown", &n->shutdown, 1 },
		{ "nvmlDeviceGetCount_v2", &n->count, 1 },
		{ "nvmlDeviceGetHandleByIndex_v2", &n->handle, 1 },
		{ "nvmlDeviceGetUUID", &n->uuid, 0 },
		{ "nvmlDeviceGetPciInfo_v3", &n->pci, 0 },
		{ "nvmlDeviceGetGpuFabricInfoV", &n->fabric_v, 0 },
		{ "nvmlDeviceGetGpuFabricInfo", &n->fabric_v1, 0 },
	};
	char why[512];

	memset(n, 0, sizeof(*n));
	if (rdzv_gpulib_check_path("NVML", library, err, errlen) < 0)
		return -1;
	if (!(n->lib = rdzv_gpulib_open(path, why, sizeof(why))))
		return rdzv_err(err, errlen, "no NVML: cannot load %s: %s (is the NVIDIA driver "
		                "installed on this node?)", path, why);
	return rdzv_gpulib_syms(&n->lib, path, syms, sizeof(syms) / sizeof(syms[0]),
	                        "not an NVML library, or older than the R450 driver", err, errlen);
}

static void copy_fields(struct rdzv_fabric_gpu *g, const unsigned char *uuid, nvml_ret status,
                        unsigned clique, unsigned state)
{
	memcpy(g->cluster, uuid, sizeof(g->cluster));
	g->status = status;
	g->clique = clique;
	g->state = state;
}

/* The newest struct this NVML answers, stepping down (see fabric.h). */
static void read_gpu_fabric(const struct nvml *n, nvml_dev d, struct rdzv_fabric_gpu *g)
{
	struct nvml_fabric_v3 v3;
	struct nvml_fabric_v2 v2;
	struct nvml_fabric_v1 v1;
	nvml_ret rc = RDZV_NVML_ERROR_FUNCTION_NOT_FOUND;

	if (n->fabric_v) {
		memset(&v3, 0, sizeof(v3));
		v3.version = STRUCT_VERSION(struct nvml_fabric_v3, 3);
		rc = n->fabric_v(d, &v3);
		if (rc == 0) {
			copy_fields(g, v3.cluster_uuid, v3.status, v3.clique_id, v3.state);
			g->version = 3;
			g->have_health = g->have_summary = 1;
			g->health_mask = v3.health_mask;
			g->summary = v3.health_summary;
			return;
		}
		if (rc == RDZV_NVML_ERROR_ARGUMENT_VERSION_MISMATCH) {
			memset(&v2, 0, sizeof(v2));
			v2.version = STRUCT_VERSION(struct nvml_fabric_v2, 2);
			rc = n->fabric_v(d, &v2);
			if (rc == 0) {
				copy_fields(g, v2.cluster_uuid, v2.status, v2.clique_id, v2.state);
				g->version = 2;
				g->have_health = 1;
				g->health_mask = v2.health_mask;
				return;
			}
		}
	}
	if (n->fabric_v1 && (rc == RDZV_NVML_ERROR_FUNCTION_NOT_FOUND
	                     || rc == RDZV_NVML_ERROR_NOT_SUPPORTED
	                     || rc == RDZV_NVML_ERROR_ARGUMENT_VERSION_MISMATCH)) {
		memset(&v1, 0, sizeof(v1));
		rc = n->fabric_v1(d, &v1);
		if (rc == 0) {
			copy_fields(g, v1.cluster_uuid, v1.status, v1.clique_id, v1.state);
			g->version = 1;
			return;
		}
	}
	g->query_rc = rc;
	if (rc == RDZV_NVML_ERROR_FUNCTION_NOT_FOUND)
		g->query_rc = RDZV_NVML_ERROR_NOT_SUPPORTED; /* a driver without the queries */
}

int rdzv_fabric_read(const char *library, struct rdzv_fabric *f, char *err, size_t errlen)
{
	struct nvml n;
	unsigned count = 0, i;
	nvml_ret rc;
	int rv = -1;

	memset(f, 0, sizeof(*f));
	if (nvml_open(&n, library, err, errlen) < 0)
		return -1;
	if ((rc = n.init()) != 0) {
		rdzv_err(err, errlen, "NVML: nvmlInit_v2 failed: %s (error %d)",
		         rdzv_nvml_error_name(rc), rc);
		/* Not dlclose'd: see below. */
		return -1;
	}
	if ((rc = n.count(&count)) != 0) {
		rdzv_err(err, errlen, "NVML: nvmlDeviceGetCount_v2 failed: %s (error %d)",
		         rdzv_nvml_error_name(rc), rc);
		goto out;
	}
	f->total = count;
	for (i = 0; i < count && i < RDZV_FABRIC_GPUS_MAX; i++) {
		struct rdzv_fabric_gpu *g = &f->gpu[f->n++];
		unsigned pci[64]; /* nvmlPciInfo_t, with room for a longer one */
		nvml_dev d = NULL;

		g->index = i;
		if ((rc = n.handle(i, &d)) != 0) {
			/* A GPU of another job under ConstrainDevices: NVML lists it
			 * but the device node is closed to this process. */
			if (rc == RDZV_NVML_ERROR_NO_PERMISSION) {
				g->skipped = 1;
				g->query_rc = rc;
				continue;
			}
			rdzv_err(err, errlen, "NVML: nvmlDeviceGetHandleByIndex_v2(%u) failed: %s "
			         "(error %d)", i, rdzv_nvml_error_name(rc), rc);
			goto out;
		}
		if (n.uuid && n.uuid(d, g->uuid, sizeof(g->uuid)) != 0)
			g->uuid[0] = '\0';
		g->uuid[sizeof(g->uuid) - 1] = '\0';
		memset(pci, 0, sizeof(pci));
		if (n.pci && n.pci(d, pci) == 0) {
			const char *bus = (const char *)pci + PCI_BUS_ID_OFFSET;

			snprintf(g->busid, sizeof(g->busid), "%.*s", PCI_BUS_ID_LEN - 1, bus);
		}
		read_gpu_fabric(&n, d, g);
	}
	rv = 0;
out:
	n.shutdown();
	/* Never dlclose'd: nvmlInit may have started threads that outlive
	 * nvmlShutdown, and this runs inside slurmstepd (user_init), whose
	 * other threads would then run unmapped code. The library stays
	 * loaded for the step (a second dlopen of it only counts a reference). */
	return rv;
}

/* A GPU that counts for the domain and the verdict. */
static int is_read(const struct rdzv_fabric_gpu *g)
{
	return !g->skipped;
}

static int zero_uuid(const unsigned char u[16])
{
	unsigned i;

	for (i = 0; i < 16; i++)
		if (u[i])
			return 0;
	return 1;
}

/* In a multi-node NVLink fabric: read, supported, registered without a
 * failure status, and a cluster UUID that is not all zeros (single-node
 * NVSwitch systems report a completed state with a zero UUID; NCCL reads
 * that as no multi-node fabric). */
static int in_fabric(const struct rdzv_fabric_gpu *g)
{
	return g->query_rc == 0 && g->state != RDZV_FABRIC_NOT_SUPPORTED && g->status == 0
	       && !zero_uuid(g->cluster);
}

int rdzv_fabric_domain(const struct rdzv_fabric *f, unsigned char cluster[16],
                       unsigned *clique, char *err, size_t errlen)
{
	const struct rdzv_fabric_gpu *first = NULL;
	char name[160], uuid[RDZV_FABRIC_UUID_TEXT];
	size_t off = 0;
	unsigned i, nout = 0;
	int mixed = 0;

	for (i = 0; i < f->n; i++) {
		const struct rdzv_fabric_gpu *g = &f->gpu[i];

		if (!is_read(g))
			continue;
		if (!in_fabric(g)) {
			nout++;
			continue;
		}
		if (!first)
			first = g;
		else if (memcmp(first->cluster, g->cluster, 16) != 0 || first->clique != g->clique)
			mixed = 1;
		if (g->state != RDZV_FABRIC_COMPLETED)
			mixed = 1;
	}
	if (!first)
		return 0;
	if (!mixed && nout == 0) {
		memcpy(cluster, first->cluster, 16);
		*clique = first->clique;
		return 1;
	}
	if (err && errlen)
		err[0] = '\0';
	rdzv_gpulib_append(err, errlen, &off, "the GPUs of this node are not in one NVLink domain:");
	for (i = 0; i < f->n; i++) {
		const struct rdzv_fabric_gpu *g = &f->gpu[i];

		if (!is_read(g))
			continue;
		rdzv_fabric_gpu_name(g, name, sizeof(name));
		if (!in_fabric(g)) {
			rdzv_gpulib_append(err, errlen, &off, " %s no fabric (%s);", name,
			                   g->query_rc ? rdzv_nvml_error_name(g->query_rc)
			                   : g->state == RDZV_FABRIC_NOT_SUPPORTED ? "state not supported"
			                   : g->status ? "registration failed" : "zero cluster UUID");
			continue;
		}
		rdzv_fabric_uuid_text(g->cluster, uuid, sizeof(uuid));
		rdzv_gpulib_append(err, errlen, &off, " %s cluster %s clique %u%s%s;", name, uuid,
		                   g->clique, g->state != RDZV_FABRIC_COMPLETED ? ", state " : "",
		                   g->state != RDZV_FABRIC_COMPLETED ? rdzv_fabric_state_name(g->state)
		                                                     : "");
	}
	if (off && err[off - 1] == ';')
		err[off - 1] = '\0';
	return -1;
}

int rdzv_fabric_mnnvl_ready(const struct rdzv_fabric *f, char *err, size_t errlen)
{
	char name[160], faults[256], why[1024];
	unsigned char cluster[16];
	unsigned clique, i, nread = 0;
	size_t off = 0;
	int bad = 0;

	if (err && errlen)
		err[0] = '\0';
	for (i = 0; i < f->n; i++) {
		const struct rdzv_fabric_gpu *g = &f->gpu[i];

		if (!is_read(g))
			continue;
		nread++;
		rdzv_fabric_gpu_name(g, name, sizeof(name));
		if (g->query_rc == RDZV_NVML_ERROR_NOT_SUPPORTED
		    || (g->query_rc == 0 && g->state == RDZV_FABRIC_NOT_SUPPORTED)) {
			rdzv_gpulib_append(err, errlen, &off, "%s%s: no NVLink fabric (NVML: not supported)",
			                   bad++ ? "; " : "", name);
			continue;
		}
		if (g->query_rc != 0) {
			rdzv_gpulib_append(err, errlen, &off, "%s%s: fabric info unreadable (NVML: %s)",
			                   bad++ ? "; " : "", name, rdzv_nvml_error_name(g->query_rc));
			continue;
		}
		if (g->state != RDZV_FABRIC_COMPLETED) {
			rdzv_gpulib_append(err, errlen, &off, "%s%s: fabric state %s, not completed (the "
			                   "fabric manager has not registered it)", bad++ ? "; " : "",
			                   name, rdzv_fabric_state_name(g->state));
			continue;
		}
		if (g->status != 0) {
			rdzv_gpulib_append(err, errlen, &off, "%s%s: fabric registration failed (status: %s)",
			                   bad++ ? "; " : "", name, rdzv_nvml_error_name(g->status));
			continue;
		}
		if (zero_uuid(g->cluster)) {
			rdzv_gpulib_append(err, errlen, &off, "%s%s: cluster UUID is zero: no multi-node "
			                   "NVLink fabric, only a single-node NVSwitch one",
			                   bad++ ? "; " : "", name);
			continue;
		}
		if (g->have_health && rdzv_fabric_health_faults(g->health_mask, g->have_summary,
		                                                g->summary, faults,
		                                                sizeof(faults)) > 0)
			rdzv_gpulib_append(err, errlen, &off, "%s%s: fabric health: %s",
			                   bad++ ? "; " : "", name, faults);
	}
	if (nread == 0 && f->total)
		return rdzv_err(err, errlen, "NVML lists %u GPUs, none accessible to this step",
		                f->total);
	if (nread == 0)
		return rdzv_err(err, errlen, "NVML lists no GPU");
	if (bad)
		return -1;
	if (rdzv_fabric_domain(f, cluster, &clique, why, sizeof(why)) < 0)
		return rdzv_err(err, errlen, "%s", why);
	return 0;
}

int rdzv_fabric_domain_name(const struct rdzv_fabric *f, char *buf, size_t len, char *err,
                            size_t errlen)
{
	unsigned char cluster[16];
	char uuid[RDZV_FABRIC_UUID_TEXT];
	unsigned clique = 0;
	int rc = rdzv_fabric_domain(f, cluster, &clique, err, errlen);

	if (len)
		buf[0] = '\0';
	if (rc == 1) {
		rdzv_fabric_uuid_text(cluster, uuid, sizeof(uuid));
		snprintf(buf, len, "%s.%u", uuid, clique);
	}
	return rc;
}

const struct rdzv_fabric *rdzv_fabric_read_once(struct rdzv_fabric_once *o, const char *library,
                                                char *err, size_t errlen)
{
	if (!library)
		library = "";
	if (o->done && strcmp(o->library, library) != 0)
		rdzv_fabric_once_free(o); /* another library: its own read */
	if (!o->done) {
		o->done = 1;
		snprintf(o->library, sizeof(o->library), "%s", library);
		o->why[0] = '\0';
		if (!(o->f = calloc(1, sizeof(*o->f))))
			snprintf(o->why, sizeof(o->why), "out of memory");
		else if (rdzv_fabric_read(library, o->f, o->why, sizeof(o->why)) < 0) {
			free(o->f);
			o->f = NULL;
		}
	}
	if (!o->f)
		rdzv_err(err, errlen, "%s", o->why);
	return o->f;
}

void rdzv_fabric_once_free(struct rdzv_fabric_once *o)
{
	free(o->f);
	memset(o, 0, sizeof(*o));
}

int rdzv_fabric_node_domain(struct rdzv_fabric_once *o, const char *library, const char *node,
                            char *domain, size_t dlen, char *note, size_t nlen, char *err,
                            size_t errlen)
{
	const struct rdzv_fabric *f;
	char why[512];
	int rc;

	if (dlen)
		domain[0] = '\0';
	if (nlen)
		note[0] = '\0';
	if (!(f = rdzv_fabric_read_once(o, library, why, sizeof(why)))) {
		snprintf(note, nlen, "unknown (nvlink_domain=nvml): %.200s", why);
		return 0;
	}
	rc = rdzv_fabric_domain_name(f, domain, dlen, why, sizeof(why));
	if (rc < 0)
		return rdzv_err(err, errlen, "nvlink_domain=nvml: node %s: %s",
		                node && node[0] ? node : "?", why);
	if (rc == 0) {
		snprintf(note, nlen, "none (nvlink_domain=nvml): no GPU of this node is in an "
		         "NVLink fabric");
		return 0;
	}
	snprintf(note, nlen, "%s (nvlink_domain=nvml: NVML's cluster UUID and clique of every GPU "
	         "here); the step's other nodes are not seen before launch", domain);
	return 0;
}
