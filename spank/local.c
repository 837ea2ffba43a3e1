/* local.c: srun (local) and sbatch/salloc (allocator) contexts. Everything a
 * user can get wrong is refused here, on the submit host, before a step
 * exists: errors in these hooks stop srun/sbatch with a non-zero exit. */
#include "config.h"
#include "plugin.h"
#include "hooks.h"
#include "container_hooks.h" /* containers (issue 17) */

#include <stdlib.h>
#include <string.h>

extern char **environ;

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
	    || rdzv_bind_local(sp, err, sizeof(err)) < 0
	    || rdzv_container_local(sp, err, sizeof(err)) < 0) { /* containers (issue 17) */
		slurm_error(RDZV_TAG ": %s", err);
		return -1;
	}
	return 0;
}

/* The mode's whole-step check (Megatron's layout) with what srun knows:
 * the command line, task and node counts, and srun's environment, where
 * srun has already rewritten SLURM_TASKS_PER_NODE and SLURM_DISTRIBUTION
 * for this step (SLURM_STEP_TASKS_PER_NODE does not exist here yet). Tasks
 * per node and the GPU model are unknown: the nodes check those again. */
static int local_mode_check(spank_t sp, const struct rdzv_mode *mode, uint32_t nnodes,
                            uint32_t ntasks)
{
	struct rdzv_step st;
	char err[RDZV_ERRLEN];
	int rc;

	memset(&st, 0, sizeof(st));
	st.nnodes = nnodes;
	st.ntasks = ntasks;
	st.gpus_on_node = -1;
	/* srun's own array, used during this call only. */
	if (spank_get_item(sp, S_JOB_ARGV, &st.argc, &st.argv) != ESPANK_SUCCESS) {
		st.argc = 0;
		st.argv = NULL;
	}
	st.envp = environ;
	rc = rdzv_mode_check_step(mode, &st, err, sizeof(err));
	if (rc < 0) {
		slurm_error(RDZV_TAG ": %s", err);
		return -1;
	}
	if (rc > 0)
		slurm_spank_log(RDZV_TAG ": warning: %s", err);
	return 0;
}

/* srun only, after the step's allocation is known: a one-launcher-per-node
 * mode with more tasks than nodes must put two launchers on some node; a
 * mode with a whole-step check runs it before anything launches. */
int rdzv_local_user_init(spank_t sp)
{
	const struct rdzv_mode *mode = rdzv.opts.mode ? rdzv.opts.mode : rdzv.conf.mode;
	uint32_t nnodes = 0, ntasks = 0;

	if (!mode || (!(mode->flags & RDZV_MODE_ONE_TASK_PER_NODE) && !mode->check))
		return 0;
	if (spank_get_item(sp, S_JOB_NNODES, &nnodes) != ESPANK_SUCCESS
	    || spank_get_item(sp, S_JOB_TOTAL_TASK_COUNT, &ntasks) != ESPANK_SUCCESS)
		return 0; /* checked again on the nodes */
	if ((mode->flags & RDZV_MODE_ONE_TASK_PER_NODE) && ntasks > nnodes) {
		slurm_error(RDZV_TAG ": --rdzv=%s runs one launcher per node, but this step has "
		            "%u tasks on %u nodes (launchers on one node would collide): use "
		            "srun --ntasks-per-node=1", mode->name, ntasks, nnodes);
		return -1;
	}
	return local_mode_check(sp, mode, nnodes, ntasks);
}
