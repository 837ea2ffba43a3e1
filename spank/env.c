/* SPDX-License-Identifier: GPL-2.0-or-later */
/* env.c: reading the job's environment, shared by the glue files. */
#include "config.h"
#include "plugin.h"
#include "handover.h"
#include "util.h"

#include <stdlib.h>

int rdzv_job_getenv(spank_t sp, const char *name, char *buf, size_t len)
{
	spank_err_t rc = spank_getenv(sp, name, buf, (int)len);

	if (rc == ESPANK_SUCCESS)
		return 1;
	return rc == ESPANK_ENV_NOEXIST ? 0 : -1;
}

/* Node lists of large steps outgrow any fixed buffer (1 MB of uncompressed
 * names is 100,000 nodes): grow until the value fits, to 16 MiB. */
int rdzv_job_getenv_dup(spank_t sp, const char *name, char **out)
{
	size_t len;

	*out = NULL;
	for (len = 4096; len <= ((size_t)16 << 20); len *= 4) {
		char *buf = malloc(len);
		spank_err_t rc;

		if (!buf)
			return -1;
		rc = spank_getenv(sp, name, buf, (int)len);
		if (rc == ESPANK_SUCCESS) {
			*out = buf;
			return 1;
		}
		free(buf);
		if (rc == ESPANK_ENV_NOEXIST)
			return 0;
		if (rc != ESPANK_NOSPACE)
			return -1;
	}
	return -1;
}

/* ---- what srun hands the nodes (lib/step/handover.h) ---- */

static int step_get(void *ctx, const char *name, char **value)
{
	return rdzv_job_getenv_dup((spank_t)ctx, name, value);
}

static int step_set(void *ctx, const char *name, const char *value)
{
	return spank_setenv((spank_t)ctx, name, value, 1) == ESPANK_SUCCESS ? 0 : -1;
}

static void step_unset(void *ctx, const char *name)
{
	spank_unsetenv((spank_t)ctx, name);
}

int rdzv_step_take(spank_t sp, const char *name, const char *legacy, char **text, char *err,
                   size_t errlen)
{
	struct rdzv_ho_env env = { step_get, step_set, step_unset, sp };
	int rc = rdzv_handover_take(&env, name, text, err, errlen);

	if (!legacy)
		return rc;
	/* An srun of the plugin's earlier versions put the text under the
	 * legacy name, which reaches the nodes under --export=ALL only. */
	if (rc == 0 && rdzv_job_getenv_dup(sp, legacy, text) < 0) {
		spank_unsetenv(sp, legacy);
		return rdzv_err(err, errlen, "%s is unreadable", legacy);
	}
	spank_unsetenv(sp, legacy);
	return rc == 0 && *text ? 1 : rc;
}

void rdzv_step_handover_sweep(spank_t sp)
{
	struct rdzv_ho_env env = { step_get, step_set, step_unset, sp };
	static const char *const names[] = { RDZV_HO_PLAN, RDZV_HO_DOMAINS, RDZV_HO_REPORT,
		                             RDZV_HO_HANG_ASK, RDZV_HO_DOMAIN_ASK, RDZV_HO_SRUN,
		                             RDZV_HO_REFUSED };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		rdzv_handover_clear(&env, names[i]);
}

void rdzv_srun_handover_clear(void)
{
	static const char *const names[] = { RDZV_HO_PLAN, RDZV_HO_DOMAINS, RDZV_HO_REFUSED };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		rdzv_handover_clear(&rdzv_env_process, names[i]);
}
