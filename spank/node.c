/* SPDX-License-Identifier: GPL-2.0-or-later */
/* node.c: DCGM-exporter's job mapping (dcgm_job_map_dir=,
 * lib/admin/jobmap.h), in slurmstepd, as root:
 *   task_post_fork (the first task only)  the step's claim on its GPUs
 *   exit                                  the claim released
 * The job's epilog sweeps what a killed slurmstepd left: rdzv_node.so
 * (spank/node_script.c). Nothing here fails a step: a mapping that cannot
 * be written is said in slurmd's log. */
#include "config.h"
#include "plugin.h"
#include "hooks.h"

#include <string.h>
#include <unistd.h>

#include "jobmap.h"
#include "util.h"

static struct {
	int claimed;
	char dir[RDZV_PATH_MAX];
} node;

static const char *proc_root(void)
{
	return rdzv.conf.identity_root[0] ? rdzv.conf.identity_root : NULL;
}

/* The mapping directory of this node, checked: the admin's. */
static int map_dir(const char *name, char *out, size_t len)
{
	char err[RDZV_ERRLEN];

	if (rdzv_jobmap_dir(rdzv.conf.dcgm_job_map_dir, name, out, len, err, sizeof(err)) < 0) {
		slurm_error(RDZV_TAG ": dcgm job map: %s", err);
		return -1;
	}
	return 0;
}

void rdzv_node_task_post_fork(spank_t sp)
{
	char err[RDZV_ERRLEN];
	const int *gpus;
	size_t n;

	if (node.claimed || !rdzv.conf.dcgm_job_map_dir[0] || !rdzv.active)
		return;
	node.claimed = -1; /* tried: once per step */
	(void)sp;
	if ((n = rdzv_bind_step_gpus(&gpus)) == 0 || map_dir(rdzv.stepd_node, node.dir,
	                                                    sizeof(node.dir)) < 0)
		return;
	if (rdzv_jobmap_claim(node.dir, proc_root(), rdzv.step.slurm_job_id, rdzv.step.step_id, gpus,
	                      n, getpid(), rdzv_proc_starttime(proc_root(), getpid()), err,
	                      sizeof(err)) < 0) {
		slurm_error(RDZV_TAG ": dcgm job map: step %u.%u: %s", rdzv.step.slurm_job_id,
		            rdzv.step.step_id, err);
		return;
	}
	node.claimed = 1;
}

void rdzv_node_exit(void)
{
	char err[RDZV_ERRLEN];

	if (node.claimed == 1
	    && rdzv_jobmap_release(node.dir, proc_root(), rdzv.step.slurm_job_id, rdzv.step.step_id,
	                           err, sizeof(err)) < 0)
		slurm_error(RDZV_TAG ": dcgm job map: step %u.%u: %s", rdzv.step.slurm_job_id,
		            rdzv.step.step_id, err);
	memset(&node, 0, sizeof(node));
}
