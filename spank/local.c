/* local.c: srun (local) and sbatch/salloc (allocator) contexts. Everything a
 * user can get wrong is refused here, on the submit host, before a step
 * exists: errors in these hooks stop srun/sbatch with a non-zero exit. */
#include "config.h"
#include "plugin.h"
#include "hooks.h"

#include <stdlib.h>

static const char *local_getenv(void *ctx, const char *name)
{
	return getenv(name);
}

int rdzv_local_init_post_opt(spank_t sp)
{
	char err[RDZV_ERRLEN];

	if (rdzv.conf.env_fallback
	    && rdzv_opts_from_env(&rdzv.opts, local_getenv, NULL, err, sizeof(err)) < 0) {
		slurm_error(RDZV_TAG ": %s", err);
		return -1;
	}
	if (rdzv_profile_local(sp, err, sizeof(err)) < 0
	    || rdzv_bind_local(sp, err, sizeof(err)) < 0) {
		slurm_error(RDZV_TAG ": %s", err);
		return -1;
	}
	return 0;
}

/* srun only, after the step's allocation is known: a one-launcher-per-node
 * mode with more tasks than nodes must put two launchers on some node. */
int rdzv_local_user_init(spank_t sp)
{
	const struct rdzv_mode *mode = rdzv.opts.mode ? rdzv.opts.mode : rdzv.conf.mode;
	uint32_t nnodes = 0, ntasks = 0;

	if (!mode || !(mode->flags & RDZV_MODE_ONE_TASK_PER_NODE))
		return 0;
	if (spank_get_item(sp, S_JOB_NNODES, &nnodes) != ESPANK_SUCCESS
	    || spank_get_item(sp, S_JOB_TOTAL_TASK_COUNT, &ntasks) != ESPANK_SUCCESS)
		return 0; /* checked again on the nodes */
	if (ntasks > nnodes) {
		slurm_error(RDZV_TAG ": --rdzv=%s runs one launcher per node, but this step has "
		            "%u tasks on %u nodes (launchers on one node would collide): use "
		            "srun --ntasks-per-node=1", mode->name, ntasks, nnodes);
		return -1;
	}
	return 0;
}
