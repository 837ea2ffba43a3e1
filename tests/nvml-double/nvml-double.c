/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nvml-double.c: a stand-in for libnvidia-ml.so.1, built for tests only
 * (never installed). It implements exactly the NVML calls lib/gpu/fabric.c
 * makes, with the documented ABI of nvml.h, and answers from a text file:
 * $RDZV_NVML_DOUBLE, else nvml-double.txt in the directory this library
 * was loaded from (so that slurmstepd, whose environment a test does not
 * set, finds a per-node file through plugstack's nvml_library=DIR/%n/...).
 *
 * The file, one directive per line ('#' starts a comment line):
 *   gpu UUID BUSID VERSIONS CLUSTER CLIQUE STATE STATUS HEALTH [SUMMARY]
 *       VERSIONS  0: every fabric query says NOT_SUPPORTED
 *                 1: only nvmlDeviceGetGpuFabricInfo answers (the V call
 *                    says NOT_SUPPORTED)
 *                 2: the V call answers v2 (v3 gets VERSION_MISMATCH)
 *                 3: the V call answers v2 and v3
 *       CLUSTER   32 hex digits (dashes allowed)
 *       STATE     not-supported | not-started | in-progress | completed
 *       STATUS    the registration's nvmlReturn_t (0 success)
 *       HEALTH    the health mask (decimal or 0x...); SUMMARY v3's summary
 *   fail CALL CODE   the NVML call named CALL returns CODE
 *   deny INDEX       nvmlDeviceGetHandleByIndex_v2(INDEX) says NO_PERMISSION
 *   retired INDEX    GPU INDEX has retired pages pending
 *                    (nvmlDeviceGetRetiredPagesPendingStatus)
 *   remap INDEX WHAT GPU INDEX's row remapping: pending | failed
 *                    (nvmlDeviceGetRemappedRows)
 *   slow-init MS     nvmlInit_v2 takes MS milliseconds, as NVML's first
 *                    initialisation without persistence mode does (1-3 s
 *                    a GPU, NVIDIA's Driver Persistence guide)
 *   recovery INDEX N GPU INDEX's recovery action N (nvmlDeviceGetFieldValues,
 *                    NVML_FI_DEV_GET_GPU_RECOVERY_ACTION; other fields: not
 *                    supported)
 *   log PATH         append "init PID" to PATH at each nvmlInit_v2
 * (fail and log are read as in every double: tests/lib/double-config.h.)
 * Built twice: with RDZV_DOUBLE_NO_V the library lacks
 * nvmlDeviceGetGpuFabricInfoV altogether (a driver before R550). */
#define _GNU_SOURCE 1 /* dladdr */
#include "../lib/double-config.h"

#define GPUS_MAX 64

enum { OK = 0, UNINITIALIZED = 1, INVALID_ARGUMENT = 2, NOT_SUPPORTED = 3,
       NO_PERMISSION = 4, ARGUMENT_VERSION_MISMATCH = 25, UNKNOWN = 999 };

struct nvml_device; /* the handle is a pointer to one of these */

/* nvml.h's layouts: the state is an unsigned char (nvmlGpuFabricState_t)
 * followed by padding, which the double fills with junk. */
struct fabric_v1 {
	unsigned char cluster[16];
	int status;
	unsigned clique;
	unsigned char state, pad[3];
};
struct fabric_v2 {
	unsigned version;
	unsigned char cluster[16];
	int status;
	unsigned clique;
	unsigned char state, pad[3];
	unsigned health;
};
struct fabric_v3 {
	unsigned version;
	unsigned char cluster[16];
	int status;
	unsigned clique;
	unsigned char state, pad[3];
	unsigned health;
	unsigned char summary;
};
struct pci_info {
	char bus_id_legacy[16];
	unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
	char bus_id[32];
};

struct gpu {
	char uuid[96], busid[32];
	unsigned versions, clique, state, health, summary;
	unsigned char cluster[16];
	int status, denied;
	unsigned retired, remap_pending, remap_failed, recovery;
};

static struct {
	int inited;
	unsigned slow_ms;
	unsigned n;
	struct gpu gpu[GPUS_MAX];
	struct double_fails fails;
} dbl;

/* The exported calls (prototypes: -Wmissing-prototypes). */
int nvmlInit_v2(void);
int nvmlShutdown(void);
int nvmlDeviceGetCount_v2(unsigned *count);
int nvmlDeviceGetHandleByIndex_v2(unsigned index, struct nvml_device **dev);
int nvmlDeviceGetUUID(struct nvml_device *dev, char *uuid, unsigned len);
int nvmlDeviceGetPciInfo_v3(struct nvml_device *dev, struct pci_info *pci);
int nvmlDeviceGetGpuFabricInfo(struct nvml_device *dev, struct fabric_v1 *info);
int nvmlDeviceGetRetiredPagesPendingStatus(struct nvml_device *dev, int *pending);
/* nvml.h's nvmlFieldValue_t. */
struct field_value {
	unsigned field_id, scope_id;
	long long timestamp, latency_usec;
	int value_type, nvml_return;
	union {
		double d;
		unsigned ui;
		unsigned long long ull;
	} value;
};

int nvmlDeviceGetRemappedRows(struct nvml_device *dev, unsigned *corr, unsigned *unc,
                              unsigned *pending, unsigned *failed);
int nvmlDeviceGetFieldValues(struct nvml_device *dev, int n, struct field_value *v);
#ifndef RDZV_DOUBLE_NO_V
int nvmlDeviceGetGpuFabricInfoV(struct nvml_device *dev, void *info);
#endif

static int failing(const char *call)
{
	return (int)double_failing(&dbl.fails, call, -1);
}

static int parse_uuid(const char *s, unsigned char out[16])
{
	unsigned k = 0;

	for (; *s && k < 32; s++) {
		const char *hex = "0123456789abcdef", *at;
		unsigned v;

		if (*s == '-')
			continue;
		if (!(at = strchr(hex, *s | 0x20)) || !*at)
			return -1;
		v = (unsigned)(at - hex);
		out[k / 2] = (unsigned char)(k % 2 ? out[k / 2] | v : v << 4);
		k++;
	}
	return k == 32 && !*s ? 0 : -1;
}

static int parse_state(const char *s, unsigned *st)
{
	static const char *const names[] = { "not-supported", "not-started", "in-progress",
		                             "completed" };
	unsigned i;

	for (i = 0; i < 4; i++)
		if (strcmp(s, names[i]) == 0) {
			*st = i;
			return 0;
		}
	return -1;
}

/* A deny or gpu line (see double_load). */
static int own_line(const char *line)
{
	char w[8][100];
	struct gpu *g;
	unsigned u;
	int k;

	if (sscanf(line, "slow-init %u", &dbl.slow_ms) == 1)
		return 0;
	if (sscanf(line, "deny %d", &k) == 1) {
		if (k >= 0 && k < GPUS_MAX)
			dbl.gpu[k].denied = 1;
		return 0;
	}
	if (sscanf(line, "retired %d", &k) == 1) {
		if (k >= 0 && k < GPUS_MAX)
			dbl.gpu[k].retired = 1;
		return 0;
	}
	if (sscanf(line, "recovery %d %u", &k, &u) == 2) {
		if (k >= 0 && k < GPUS_MAX)
			dbl.gpu[k].recovery = u;
		return 0;
	}
	if (sscanf(line, "remap %d %99s", &k, w[0]) == 2) {
		if (k >= 0 && k < GPUS_MAX) {
			dbl.gpu[k].remap_pending = strcmp(w[0], "pending") == 0;
			dbl.gpu[k].remap_failed = strcmp(w[0], "failed") == 0;
		}
		return 0;
	}
	if (dbl.n >= GPUS_MAX)
		return 1;
	g = &dbl.gpu[dbl.n];
	k = sscanf(line, "gpu %95s %31s %u %99s %u %99s %d %99s %u", g->uuid, g->busid,
	           &g->versions, w[0], &g->clique, w[1], &g->status, w[2], &g->summary);
	if (k < 8 || parse_uuid(w[0], g->cluster) < 0 || parse_state(w[1], &g->state) < 0)
		return -1;
	g->health = (unsigned)strtoul(w[2], NULL, 0);
	dbl.n++;
	return 0;
}

int nvmlInit_v2(void)
{
	static const struct double_file file = { "nvml-double", "RDZV_NVML_DOUBLE",
		                                     "nvml-double.txt", &dbl, own_line };

	unsigned rc;

	memset(&dbl, 0, sizeof(dbl));
	rc = double_init(&file, &dbl.fails, &dbl.inited, "nvmlInit_v2", UNKNOWN);
	if (dbl.slow_ms)
		usleep(dbl.slow_ms * 1000u);
	return (int)rc;
}

int nvmlShutdown(void)
{
	dbl.inited = 0;
	return OK;
}

int nvmlDeviceGetCount_v2(unsigned *count)
{
	int rc = failing("nvmlDeviceGetCount_v2");

	if (!dbl.inited)
		return UNINITIALIZED;
	if (rc)
		return rc;
	*count = dbl.n;
	return OK;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned index, struct nvml_device **dev)
{
	int rc = failing("nvmlDeviceGetHandleByIndex_v2");

	if (!dbl.inited)
		return UNINITIALIZED;
	if (rc)
		return rc;
	if (index >= dbl.n)
		return INVALID_ARGUMENT;
	if (dbl.gpu[index].denied)
		return NO_PERMISSION;
	*dev = (struct nvml_device *)(void *)&dbl.gpu[index];
	return OK;
}

static struct gpu *gpu_of(struct nvml_device *dev)
{
	struct gpu *g = (struct gpu *)(void *)dev;

	return dbl.inited && g >= dbl.gpu && g < dbl.gpu + dbl.n ? g : NULL;
}

int nvmlDeviceGetUUID(struct nvml_device *dev, char *uuid, unsigned len)
{
	struct gpu *g = gpu_of(dev);

	if (!g || !uuid)
		return INVALID_ARGUMENT;
	if (strlen(g->uuid) >= len)
		return 7; /* NVML_ERROR_INSUFFICIENT_SIZE */
	strcpy(uuid, g->uuid);
	return OK;
}

int nvmlDeviceGetPciInfo_v3(struct nvml_device *dev, struct pci_info *pci)
{
	struct gpu *g = gpu_of(dev);

	if (!g || !pci)
		return INVALID_ARGUMENT;
	memset(pci, 0, sizeof(*pci));
	snprintf(pci->bus_id, sizeof(pci->bus_id), "%.31s", g->busid);
	snprintf(pci->bus_id_legacy, sizeof(pci->bus_id_legacy), "%.15s", g->busid);
	return OK;
}

int nvmlDeviceGetGpuFabricInfo(struct nvml_device *dev, struct fabric_v1 *info)
{
	struct gpu *g = gpu_of(dev);
	int rc = failing("nvmlDeviceGetGpuFabricInfo");

	if (!g || !info)
		return INVALID_ARGUMENT;
	if (rc)
		return rc;
	if (g->versions == 0)
		return NOT_SUPPORTED;
	memcpy(info->cluster, g->cluster, 16);
	info->status = g->status;
	info->clique = g->clique;
	info->state = (unsigned char)g->state;
	memset(info->pad, 0xa5, sizeof(info->pad));
	return OK;
}

#ifndef RDZV_DOUBLE_NO_V
int nvmlDeviceGetGpuFabricInfoV(struct nvml_device *dev, void *info)
{
	struct gpu *g = gpu_of(dev);
	int rc = failing("nvmlDeviceGetGpuFabricInfoV");
	unsigned version;

	if (!g || !info)
		return INVALID_ARGUMENT;
	if (rc)
		return rc;
	if (g->versions < 2)
		return NOT_SUPPORTED;
	memcpy(&version, info, sizeof(version));
	if (version == (sizeof(struct fabric_v3) | 3u << 24) && g->versions >= 3) {
		struct fabric_v3 *v = info;

		memcpy(v->cluster, g->cluster, 16);
		v->status = g->status;
		v->clique = g->clique;
		v->state = (unsigned char)g->state;
		memset(v->pad, 0xa5, sizeof(v->pad));
		v->health = g->health;
		v->summary = (unsigned char)g->summary;
		return OK;
	}
	if (version == (sizeof(struct fabric_v2) | 2u << 24)) {
		struct fabric_v2 *v = info;

		memcpy(v->cluster, g->cluster, 16);
		v->status = g->status;
		v->clique = g->clique;
		v->state = (unsigned char)g->state;
		memset(v->pad, 0xa5, sizeof(v->pad));
		v->health = g->health;
		return OK;
	}
	return ARGUMENT_VERSION_MISMATCH;
}
#endif

/* nvmlEnableState_t: 1 enabled (pages are waiting to be retired). */
int nvmlDeviceGetRetiredPagesPendingStatus(struct nvml_device *dev, int *pending)
{
	struct gpu *g = gpu_of(dev);
	int rc = failing("nvmlDeviceGetRetiredPagesPendingStatus");

	if (!g)
		return dbl.inited ? INVALID_ARGUMENT : UNINITIALIZED;
	if (rc)
		return rc;
	*pending = (int)g->retired;
	return OK;
}

int nvmlDeviceGetFieldValues(struct nvml_device *dev, int n, struct field_value *v)
{
	struct gpu *g = gpu_of(dev);
	int rc = failing("nvmlDeviceGetFieldValues"), i;

	if (!g)
		return dbl.inited ? INVALID_ARGUMENT : UNINITIALIZED;
	if (rc)
		return rc;
	for (i = 0; i < n; i++) {
		v[i].nvml_return = v[i].field_id == 230u ? OK : NOT_SUPPORTED;
		v[i].value_type = 1; /* NVML_VALUE_TYPE_UNSIGNED_INT */
		v[i].value.ui = v[i].field_id == 230u ? g->recovery : 0;
	}
	return OK;
}

int nvmlDeviceGetRemappedRows(struct nvml_device *dev, unsigned *corr, unsigned *unc,
                              unsigned *pending, unsigned *failed)
{
	struct gpu *g = gpu_of(dev);
	int rc = failing("nvmlDeviceGetRemappedRows");

	if (!g)
		return dbl.inited ? INVALID_ARGUMENT : UNINITIALIZED;
	if (rc)
		return rc;
	*corr = 0;
	*unc = g->remap_failed || g->remap_pending;
	*pending = g->remap_pending;
	*failed = g->remap_failed;
	return OK;
}
