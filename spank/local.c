/* SPDX-License-Identifier: GPL-2.0-or-later */
/* local.c: what srun, sbatch and salloc check alike once the options are
 * read, and sbatch's and salloc's init_post_opt (srun's is srun.c's).
 * Everything a user can get wrong is refused here, on the submit host,
 * before a job or step exists: an error stops the command with a non-zero
 * exit. */
#include "config.h"
#include "plugin.h"
#include "hooks.h"
#include "container_hooks.h" /* containers */

#include <stdlib.h>

#include "handover.h"

static const char *local_getenv(void *ctx, const char *name)
{
	(void)ctx;
	return getenv(name);
}

int rdzv_local_opts(void)
{
	char err[RDZV_ERRLEN];

	if (rdzv.conf.env_fallback
	    && rdzv_opts_from_env(&rdzv.opts, local_getenv, NULL, err, sizeof(err)) < 0) {
		slurm_error(RDZV_TAG ": %s", err);
		return -1;
	}
	return 0;
}

int rdzv_local_checks(spank_t sp)
{
	char err[RDZV_ERRLEN];

	if (rdzv_profile_local(sp, err, sizeof(err)) < 0
	    || rdzv_bind_local(sp, err, sizeof(err)) < 0
	    || rdzv_container_local(sp, err, sizeof(err)) < 0) { /* containers */
		slurm_error(RDZV_TAG ": %s", err);
		return -1;
	}
	return 0;
}

int rdzv_local_init_post_opt(spank_t sp)
{
	if (rdzv_local_opts() < 0)
		return -1;
	/* srun marks its steps (handover.h); sbatch and salloc do not, and drop
	 * one a user exported, so that a batch script's srun without the plugin
	 * is not taken for one with it. */
	unsetenv(RDZV_HO_SRUN);
	return rdzv_local_checks(sp);
}
