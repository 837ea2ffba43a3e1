/* modes.c: the mode table and the variables each mode sets.
 *
 * torch: what torchrun (torch.distributed.run, PyTorch 1.13-2.x) exports to
 * each worker, so that a script cannot tell srun from torchrun: RANK,
 * LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK, GROUP_WORLD_SIZE,
 * ROLE_RANK, ROLE_WORLD_SIZE, ROLE_NAME, MASTER_ADDR, MASTER_PORT,
 * TORCHELASTIC_RESTART_COUNT, TORCHELASTIC_MAX_RESTARTS, TORCHELASTIC_RUN_ID
 * (see torch/distributed/elastic/agent/server/local_elastic_agent.py), plus
 * NODE_RANK (Megatron-LM, Lightning). Never TORCHELASTIC_USE_AGENT_STORE:
 * with it, ranks wait for a store that only a torchrun agent would host.
 *
 * torchrun: torchrun reads every flag from PET_<FLAG> (torch.distributed.run,
 * "env" defaults of its argparse actions), so one task per node running a
 * bare "torchrun train.py" gets its flags here. With the static rendezvous
 * the agent with node_rank 0 hosts the store, so PET_NODE_RANK is the task's
 * global rank and PET_MASTER_ADDR its node: true for every distribution. */
#include "config.h"
#include "modes.h"
#include "util.h"

#include <stdio.h>
#include <string.h>

#define ORIGIN "rdzv"

int rdzv_fill_torch(const struct rdzv_step *s, const struct rdzv_task *t,
                    struct rdzv_envset *env, char *err, size_t errlen)
{
	if (rdzv_envset_addf(env, ORIGIN, "RANK", err, errlen, "%u", t->rank) < 0
	    || rdzv_envset_addf(env, ORIGIN, "LOCAL_RANK", err, errlen, "%u", t->local_rank) < 0
	    || rdzv_envset_addf(env, ORIGIN, "WORLD_SIZE", err, errlen, "%u", s->ntasks) < 0
	    || rdzv_envset_addf(env, ORIGIN, "LOCAL_WORLD_SIZE", err, errlen, "%u", s->local_ntasks) < 0
	    || rdzv_envset_addf(env, ORIGIN, "GROUP_RANK", err, errlen, "%u", s->node_id) < 0
	    || rdzv_envset_addf(env, ORIGIN, "GROUP_WORLD_SIZE", err, errlen, "%u", s->nnodes) < 0
	    || rdzv_envset_addf(env, ORIGIN, "ROLE_RANK", err, errlen, "%u", t->rank) < 0
	    || rdzv_envset_addf(env, ORIGIN, "ROLE_WORLD_SIZE", err, errlen, "%u", s->ntasks) < 0
	    || rdzv_envset_addf(env, ORIGIN, "ROLE_NAME", err, errlen, "default") < 0
	    || rdzv_envset_addf(env, ORIGIN, "NODE_RANK", err, errlen, "%u", s->node_id) < 0
	    || rdzv_envset_addf(env, ORIGIN, "MASTER_ADDR", err, errlen, "%s", s->master_addr) < 0
	    || rdzv_envset_addf(env, ORIGIN, "MASTER_PORT", err, errlen, "%u", s->port) < 0
	    || rdzv_envset_addf(env, ORIGIN, "TORCHELASTIC_RUN_ID", err, errlen, "slurm-%u.%u",
	                        s->job_id, s->step_id) < 0
	    || rdzv_envset_addf(env, ORIGIN, "TORCHELASTIC_RESTART_COUNT", err, errlen, "0") < 0
	    || rdzv_envset_addf(env, ORIGIN, "TORCHELASTIC_MAX_RESTARTS", err, errlen, "0") < 0)
		return -1;
	return 0;
}

/* PET_NPROC_PER_NODE: the step's GPUs on the node; without GPUs, one worker
 * (torchrun's "auto" would start one per CPU, rarely what a CPU step wants). */
static int fill_torchrun(const struct rdzv_step *s, const struct rdzv_task *t,
                         struct rdzv_envset *env, char *err, size_t errlen)
{
	int nproc = s->gpus_on_node > 0 ? s->gpus_on_node : 1;

	if (rdzv_envset_addf(env, ORIGIN, "PET_NNODES", err, errlen, "%u", s->nnodes) < 0
	    || rdzv_envset_addf(env, ORIGIN, "PET_NODE_RANK", err, errlen, "%u", t->rank) < 0
	    || rdzv_envset_addf(env, ORIGIN, "PET_NPROC_PER_NODE", err, errlen, "%d", nproc) < 0
	    || rdzv_envset_addf(env, ORIGIN, "PET_MASTER_ADDR", err, errlen, "%s", s->master_addr) < 0
	    || rdzv_envset_addf(env, ORIGIN, "PET_MASTER_PORT", err, errlen, "%u", s->port) < 0
	    || rdzv_envset_addf(env, ORIGIN, "PET_RDZV_ID", err, errlen, "slurm-%u.%u",
	                        s->job_id, s->step_id) < 0)
		return -1;
	return 0;
}

static const struct rdzv_mode modes[] = {
	{ "off", "the plugin sets nothing", 0, NULL },
	{ "torch", "one task per rank, torch.distributed env:// variables", 0, rdzv_fill_torch },
	{ "torchrun", "one task per node running torchrun, PET_* variables",
	  RDZV_MODE_ONE_TASK_PER_NODE, fill_torchrun },
	{ NULL, NULL, 0, NULL },
};

const struct rdzv_mode *rdzv_modes(void)
{
	return modes;
}

const struct rdzv_mode *rdzv_mode_find(const char *name)
{
	const struct rdzv_mode *m;

	if (!name)
		return NULL;
	for (m = modes; m->name; m++)
		if (strcmp(m->name, name) == 0)
			return m;
	return NULL;
}

const char *rdzv_mode_names(void)
{
	static char names[256];
	const struct rdzv_mode *m;
	size_t used = 0;

	if (names[0])
		return names;
	for (m = modes; m->name; m++) {
		int n = snprintf(names + used, sizeof(names) - used, "%s%s",
		                 used ? ", " : "", m->name);
		if (n < 0 || (size_t)n >= sizeof(names) - used)
			break;
		used += (size_t)n;
	}
	return names;
}

int rdzv_mode_check_step(const struct rdzv_mode *mode, const struct rdzv_step *step,
                         char *err, size_t errlen)
{
	if ((mode->flags & RDZV_MODE_ONE_TASK_PER_NODE) && step->local_ntasks > 1)
		return rdzv_err(err, errlen,
		                "--rdzv=%s runs one launcher per node, but this node has %u tasks "
		                "(each would start its own workers and they would collide): "
		                "use srun --ntasks-per-node=1",
		                mode->name, step->local_ntasks);
	return 0;
}
