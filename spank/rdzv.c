/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rdzv.c: the SPANK entry points. Each one routes to the file for its
 * context; nothing here decides anything.
 *
 *   srun (local):       init -> options -> init_post_opt -> local_user_init
 *                       -> exit, all in srun.c, which reads what srun
 *                       knows of the step once and runs the step's work in
 *                       order (rdzv_srun_user_init), undone in reverse at
 *                       exit
 *   sbatch/salloc:      init -> options -> init_post_opt
 *   slurmstepd (remote): init (root) -> options -> init_post_opt (root)
 *                       -> user_init (as the user, once per node)
 *                       -> per task: task_post_fork (root, in slurmstepd,
 *                          after every task of the node is forked)
 *                       -> per task: task_init (as the user, in the task)
 *                       -> per task: task_exit (root, in slurmstepd)
 *                       -> exit (root)
 *   srun also: init reads srun's command line once and whether a failed
 *   task stops the step, before srun reads SLURM_KILL_BAD_EXIT (failure.c);
 *   exit names the first failure.
 *   doc/privilege.md says what each hook reads and opens, as whom.
 *
 * plugstack arguments are parsed in every context, so a broken line fails
 * srun/sbatch on the submit host before anything reaches a compute node
 * (a failing init in slurmstepd of a batch step would drain the node). */
#include "config.h"
#include "plugin.h"
#include "hooks.h"

#include <stdio.h>
#include <string.h>

SPANK_PLUGIN(rdzv, 1);

#if HAVE_DECL_SLURM_SPANK_INIT_FAILURE_MODE
/* Slurm 25.05+ (spank(8)): should slurm_spank_init fail in slurmstepd anyway
 * (slurm_spank_init below returns 0 there for a bad line, on purpose), fail
 * the job, not the node. configure detects the declaration (older majors
 * lack it); tests/0095 checks it on 26.05. */
int slurm_spank_init_failure_mode = ESPANK_JOB_FAILURE;
#endif

struct rdzv_plugin rdzv;

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	char err[RDZV_ERRLEN];
	spank_context_t ctx = spank_context();

	if (ctx != S_CTX_LOCAL && ctx != S_CTX_REMOTE && ctx != S_CTX_ALLOCATOR)
		return 0;
	memset(&rdzv, 0, sizeof(rdzv));
	rdzv_conf_defaults(&rdzv.conf);
	rdzv_opts_init(&rdzv.opts);
	if (rdzv_conf_parse(ac, av, &rdzv.conf, err, sizeof(err)) < 0) {
		slurm_error(RDZV_TAG ": plugstack.conf: %s", err);
		/* srun, sbatch and salloc refuse a bad line before a job exists.
		 * A line only slurmstepd sees (edited after submission, or not
		 * the same on this node) must not fail init: a required plugin's
		 * failing init in a batch step drains the node ("batch job
		 * complete failure", tests/0090). Steps that asked for a mode get
		 * the message from each task instead (remote.c). */
		if (ctx != S_CTX_REMOTE)
			return -1;
		snprintf(rdzv.conf_error, sizeof(rdzv.conf_error), "plugstack.conf: %s", err);
		rdzv_conf_defaults(&rdzv.conf);
	}
	/* Before srun reads SLURM_KILL_BAD_EXIT and its command line: whether a
	 * failed rank stops the step must be in srun's environment by then. */
	if (ctx == S_CTX_LOCAL)
		rdzv_srun_init();
	return rdzv_options_register(sp);
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	switch (spank_context()) {
	case S_CTX_LOCAL:
		return rdzv_srun_init_post_opt(sp);
	case S_CTX_ALLOCATOR:
		return rdzv_local_init_post_opt(sp);
	case S_CTX_REMOTE:
		/* As root: the record's socket pair; binding's node model cache
		 * (neither fails the step). */
		rdzv_record_init_post_opt();
		return rdzv_bind_init_post_opt(sp);
	default:
		return 0;
	}
}

int slurm_spank_local_user_init(spank_t sp, int ac, char **av)
{
	if (spank_context() != S_CTX_LOCAL)
		return 0;
	return rdzv_srun_user_init(sp);
}

int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
	int rc;

	if (!spank_remote(sp))
		return 0;
	rc = rdzv_remote_user_init(sp);
	rdzv_failure_user_init(sp);
	rdzv_hang_user_init(sp);
	rdzv_record_user_init(sp); /* before the tasks fork */
	rdzv_step_handover_sweep(sp); /* what no feature of this step read */
	return rc;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	return spank_remote(sp) ? rdzv_remote_task_init(sp) : 0;
}

int slurm_spank_task_post_fork(spank_t sp, int ac, char **av)
{
	if (spank_remote(sp)) {
		rdzv_failure_task_post_fork(sp);
		rdzv_node_task_post_fork(sp);
	}
	return 0;
}

int slurm_spank_task_exit(spank_t sp, int ac, char **av)
{
	if (spank_remote(sp)) {
		rdzv_failure_task_exit(sp);
		rdzv_record_task_exit(sp);
	}
	return 0;
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	if (spank_context() == S_CTX_REMOTE) {
		rdzv_record_exit(sp); /* before the step's state is freed */
		rdzv_node_exit();
		rdzv_failure_remote_exit();
		rdzv_remote_exit();
	} else if (spank_context() == S_CTX_LOCAL) {
		rdzv_srun_exit();
	}
	return 0;
}
