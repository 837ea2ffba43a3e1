/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rsmi-double.c: a stand-in for librocm_smi64.so.1, built for tests only
 * (never installed). It implements exactly the ROCm SMI calls lib/gpu/rsmi.c
 * makes, with the documented ABI of rocm_smi.h, and answers from a text
 * file: $RDZV_RSMI_DOUBLE, else rsmi-double.txt in the directory this
 * library was loaded from (so that a process whose environment a test does
 * not set finds a per-node file beside a per-node copy).
 *
 * The file, one directive per line ('#' starts a comment line):
 *   gpu BDFID HIVE XGMI [UNIQUE [NAME...]]
 *       BDFID   rsmi_dev_pci_id_get's uint64_t (decimal or 0x...)
 *       HIVE    rsmi_dev_xgmi_hive_id_get's id; 0 is no hive
 *       XGMI    rsmi_dev_xgmi_error_status: 0 no errors, 1 error,
 *               2 multiple errors
 *       UNIQUE  rsmi_dev_unique_id_get's id; NAME the rest of the line,
 *               rsmi_dev_name_get's answer
 *   fail CALL CODE [INDEX]   the call named CALL returns status CODE (for
 *                            one device INDEX only, when given)
 *   log PATH                 append "init PID" to PATH at each rsmi_init
 * (fail and log are read as in every double: tests/lib/double-config.h.)
 * Built twice: with RDZV_DOUBLE_MINIMAL the library lacks the optional
 * rsmi_dev_unique_id_get and rsmi_dev_name_get. */
#define _GNU_SOURCE 1 /* dladdr */
#include <stdint.h>

#include "../lib/double-config.h"

#define GPUS_MAX 64

enum { OK = 0, INVALID_ARGS = 1, NOT_SUPPORTED = 2, INIT_ERROR = 8, INSUFFICIENT_SIZE = 11 };

struct gpu {
	uint64_t bdfid, hive, unique;
	unsigned xgmi;
	char name[128];
};

static struct {
	int inited;
	unsigned n;
	struct gpu gpu[GPUS_MAX];
	struct double_fails fails;
} dbl;

/* The exported calls (prototypes: -Wmissing-prototypes). The status is an
 * enum the size of a uint32_t; rsmi_xgmi_status_t an int-sized enum. */
uint32_t rsmi_init(uint64_t flags);
uint32_t rsmi_shut_down(void);
uint32_t rsmi_num_monitor_devices(uint32_t *num);
uint32_t rsmi_dev_pci_id_get(uint32_t dv, uint64_t *bdfid);
uint32_t rsmi_dev_xgmi_hive_id_get(uint32_t dv, uint64_t *hive);
uint32_t rsmi_dev_xgmi_error_status(uint32_t dv, uint32_t *status);
#ifndef RDZV_DOUBLE_MINIMAL
uint32_t rsmi_dev_unique_id_get(uint32_t dv, uint64_t *id);
uint32_t rsmi_dev_name_get(uint32_t dv, char *name, size_t len);
#endif

static unsigned failing(const char *call, int index)
{
	return double_failing(&dbl.fails, call, index);
}

/* A gpu line (see double_load). */
static int gpu_line(const char *line)
{
	char w[4][100];
	struct gpu *g;
	int k, at = 0;

	if (dbl.n >= GPUS_MAX)
		return 1;
	g = &dbl.gpu[dbl.n];
	memset(g, 0, sizeof(*g));
	k = sscanf(line, "gpu %99s %99s %u %99s %n", w[0], w[1], &g->xgmi, w[2], &at);
	if (k < 3)
		return -1;
	g->bdfid = strtoull(w[0], NULL, 0);
	g->hive = strtoull(w[1], NULL, 0);
	if (k == 4)
		g->unique = strtoull(w[2], NULL, 0);
	if (k == 4 && at > 0)
		snprintf(g->name, sizeof(g->name), "%s", line + at);
	dbl.n++;
	return 0;
}

uint32_t rsmi_init(uint64_t flags)
{
	static const struct double_file file = { "rsmi-double", "RDZV_RSMI_DOUBLE",
		                                     "rsmi-double.txt", &dbl, gpu_line };

	(void)flags;
	memset(&dbl, 0, sizeof(dbl));
	return double_init(&file, &dbl.fails, &dbl.inited, "rsmi_init", INIT_ERROR);
}

uint32_t rsmi_shut_down(void)
{
	dbl.inited = 0;
	return OK;
}

uint32_t rsmi_num_monitor_devices(uint32_t *num)
{
	unsigned rc = failing("rsmi_num_monitor_devices", -1);

	if (!dbl.inited)
		return INIT_ERROR;
	if (rc)
		return rc;
	if (!num)
		return INVALID_ARGS;
	*num = dbl.n;
	return OK;
}

/* The device dv, or NULL (not initialised, or out of range). */
static struct gpu *gpu_of(uint32_t dv)
{
	return dbl.inited && dv < dbl.n ? &dbl.gpu[dv] : NULL;
}

uint32_t rsmi_dev_pci_id_get(uint32_t dv, uint64_t *bdfid)
{
	struct gpu *g = gpu_of(dv);
	unsigned rc = failing("rsmi_dev_pci_id_get", (int)dv);

	if (!g || !bdfid)
		return INVALID_ARGS;
	if (rc)
		return rc;
	*bdfid = g->bdfid;
	return OK;
}

uint32_t rsmi_dev_xgmi_hive_id_get(uint32_t dv, uint64_t *hive)
{
	struct gpu *g = gpu_of(dv);
	unsigned rc = failing("rsmi_dev_xgmi_hive_id_get", (int)dv);

	if (!g || !hive)
		return INVALID_ARGS;
	if (rc)
		return rc;
	*hive = g->hive;
	return OK;
}

uint32_t rsmi_dev_xgmi_error_status(uint32_t dv, uint32_t *status)
{
	struct gpu *g = gpu_of(dv);
	unsigned rc = failing("rsmi_dev_xgmi_error_status", (int)dv);

	if (!g || !status)
		return INVALID_ARGS;
	if (rc)
		return rc;
	*status = g->xgmi;
	return OK;
}

#ifndef RDZV_DOUBLE_MINIMAL
uint32_t rsmi_dev_unique_id_get(uint32_t dv, uint64_t *id)
{
	struct gpu *g = gpu_of(dv);
	unsigned rc = failing("rsmi_dev_unique_id_get", (int)dv);

	if (!g || !id)
		return INVALID_ARGS;
	if (rc)
		return rc;
	*id = g->unique;
	return OK;
}

uint32_t rsmi_dev_name_get(uint32_t dv, char *name, size_t len)
{
	struct gpu *g = gpu_of(dv);
	unsigned rc = failing("rsmi_dev_name_get", (int)dv);

	if (!g || !name || !len)
		return INVALID_ARGS;
	if (rc)
		return rc;
	if (!g->name[0])
		return NOT_SUPPORTED;
	if (strlen(g->name) >= len)
		return INSUFFICIENT_SIZE;
	strcpy(name, g->name);
	return OK;
}
#endif
