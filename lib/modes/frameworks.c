/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/modes/: what each mode sets (torch, Megatron, launchers, frameworks,
 * containers), srun's verdict on Megatron's groups over the domains, and the
 * plugstack arguments that choose them. Uses lib/domains/, lib/step/,
 * lib/common/. */
/* frameworks.c: see frameworks.h. Each rule follows what DeepSpeed 0.19.5,
 * Lightning 2.x and JAX 0.11 were measured to read and do when run under
 * Slurm 24.11 (doc/modes.md says it per mode). */
#include "config.h"
#include "frameworks.h"
#include "fill.h"
#include "launcher.h"
#include "util.h"

#include <stdio.h>
#include <string.h>

#define ORIGIN "rdzv"

#define ID(name, ...) rdzv_envset_addfx(env, ORIGIN, RDZV_SET_ENFORCE, RDZV_ENV_IDENTITY, name, \
                                       err, errlen, __VA_ARGS__)
#define AT(name, ...) rdzv_envset_addfx(env, ORIGIN, RDZV_SET_DEFAULT, RDZV_ENV_ADDRESS, name, \
                                       err, errlen, __VA_ARGS__)

int rdzv_fill_lightning(const struct rdzv_step *s, const struct rdzv_task *t,
                        struct rdzv_envset *env, char *err, size_t errlen)
{
	if (ID("RANK", "%u", t->rank) < 0
	    || ID("LOCAL_RANK", "%u", t->local_rank) < 0
	    || ID("WORLD_SIZE", "%u", s->ntasks) < 0
	    || ID("NODE_RANK", "%u", s->node_rank) < 0
	    || AT("MASTER_ADDR", "%s", s->master_addr) < 0
	    || AT("MASTER_PORT", "%u", s->port) < 0
	    || rdzv_envset_add(env, "TORCHELASTIC_RUN_ID", NULL, RDZV_SET_UNSET, ORIGIN, err,
	                       errlen) < 0
	    || rdzv_fill_netif(s, env, err, errlen) < 0
	    || rdzv_fill_domain(s, t, env, err, errlen) < 0)
		return -1;
	return 0;
}

int rdzv_check_launcher(const char *mode, const struct rdzv_step *s, char *err, size_t errlen)
{
	return rdzv_launcher_check(mode, s->argc, s->argv, s->envp, s->ntasks, err, errlen);
}

int rdzv_check_torch(const struct rdzv_step *s, char *err, size_t errlen)
{
	return rdzv_check_launcher("torch", s, err, errlen);
}

/* On a node (the step's environment and this node's tasks are known). */
static int on_node(const struct rdzv_step *s)
{
	return s->local_ntasks > 0;
}

int rdzv_check_deepspeed(const struct rdzv_step *s, char *err, size_t errlen)
{
	const char *v;
	uint64_t lr;

	if (rdzv_check_launcher("deepspeed", s, err, errlen) < 0)
		return -1;
	if (!on_node(s) || !(v = rdzv_envp_get(s->envp, "OMPI_COMM_WORLD_LOCAL_RANK")))
		return 0;
	/* One exported value for every task: it equals LOCAL_RANK only for a
	 * node's single task 0. */
	if (s->local_ntasks == 1 && rdzv_parse_u64(v, 0, 0, &lr) == 0)
		return 0;
	snprintf(err, errlen, "--rdzv=deepspeed: OMPI_COMM_WORLD_LOCAL_RANK=%.16s is exported "
	         "(a leftover of mpirun?), but LOCAL_RANK is each task's index on its node "
	         "(0..%u here): DeepSpeed's engine asserts the two are equal and stops the run; "
	         "unset OMPI_COMM_WORLD_LOCAL_RANK before srun", v, s->local_ntasks - 1);
	return 1;
}

/* "2", "gpu:2", "a100:2", "a100:2,v100:1" (summed): SLURM_GPUS_PER_NODE. */
static int gpus_per_node(const char *v, uint64_t *out)
{
	uint64_t sum = 0, n;
	const char *p = v;

	while (*p) {
		const char *end = strchr(p, ','), *num;
		size_t len = end ? (size_t)(end - p) : strlen(p);
		const char *colon = memchr(p, ':', len);

		num = colon ? colon + 1 : p;
		if (rdzv_parse_u64n(num, len - (size_t)(num - p), 0, 1u << 20, &n) < 0)
			return -1;
		sum += n;
		p += len + (end ? 1 : 0);
	}
	*out = sum;
	return sum > 0 ? 0 : -1;
}

int rdzv_check_lightning(const struct rdzv_step *s, char *err, size_t errlen)
{
	const char *tpn, *name, *gpn;
	uint64_t per_node = 0, gpus = 0;

	if (rdzv_check_launcher("lightning", s, err, errlen) < 0)
		return -1;
	tpn = rdzv_envp_get(s->envp, "SLURM_NTASKS_PER_NODE");
	if (s->envp && s->ntasks > 1 && !tpn) {
		if (s->nnodes > 0 && s->ntasks % s->nnodes == 0)
			return rdzv_err(err, errlen, "--rdzv=lightning: Lightning refuses a step of %u "
			                "tasks without --ntasks-per-node at start-up (its SLURM environment "
			                "raises RuntimeError: 'You set --ntasks=%u ... Use "
			                "--ntasks-per-node'): use srun -N%u --ntasks-per-node=%u",
			                s->ntasks, s->ntasks, s->nnodes, s->ntasks / s->nnodes);
		return rdzv_err(err, errlen, "--rdzv=lightning: Lightning refuses a step of %u tasks "
		                "without --ntasks-per-node at start-up (its SLURM environment raises "
		                "RuntimeError), and %u tasks do not divide evenly over %u nodes: give "
		                "every node the same count with --ntasks-per-node", s->ntasks,
		                s->ntasks, s->nnodes);
	}
	if (tpn && rdzv_parse_u64(tpn, 1, UINT32_MAX, &per_node) == 0) {
		if (on_node(s) && s->gpus_on_node > 0)
			gpus = (uint64_t)s->gpus_on_node;
		else if ((gpn = rdzv_envp_get(s->envp, "SLURM_GPUS_PER_NODE"))
		         && gpus_per_node(gpn, &gpus) < 0)
			gpus = 0;
		if (gpus > 0 && gpus != per_node)
			return rdzv_err(err, errlen, "--rdzv=lightning: %llu tasks per node "
			                "(--ntasks-per-node) but %llu GPUs per node: Lightning's devices "
			                "are the GPUs each task sees, and it refuses a task count per node "
			                "that differs (ValueError at start-up); use --ntasks-per-node=%llu, "
			                "one task per GPU", (unsigned long long)per_node,
			                (unsigned long long)gpus, (unsigned long long)gpus);
	}
	name = rdzv_envp_get(s->envp, "SLURM_JOB_NAME");
	if (on_node(s) && name && (strcmp(name, "bash") == 0 || strcmp(name, "interactive") == 0)) {
		snprintf(err, errlen, "--rdzv=lightning: the job is named '%s', which Lightning takes "
		         "for an interactive session: it then ignores its SLURM environment (no "
		         "ranks from Slurm, no auto-requeue); name the job: salloc/sbatch -J NAME", name);
		return 1;
	}
	return 0;
}

int rdzv_check_jax(const struct rdzv_step *s, char *err, size_t errlen)
{
	if (!on_node(s) || !rdzv_envp_get(s->envp, "OMPI_MCA_orte_hnp_uri"))
		return 0;
	snprintf(err, errlen, "--rdzv=jax: OMPI_MCA_orte_hnp_uri is exported (a leftover of "
	         "mpirun?): jax.distributed.initialize() then takes the job for an Open MPI one "
	         "before looking at Slurm, and fails on the missing OMPI_COMM_WORLD_* variables; "
	         "unset OMPI_MCA_orte_hnp_uri before srun");
	return 1;
}
